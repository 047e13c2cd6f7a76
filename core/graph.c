#include "graph.h"

#include <stdlib.h>
#include <string.h>

const char *const rt_stream_names[] = {"compute", "comm", "copy", "sync_comm", NULL};
const char *const rt_kernel_kind_names[] = {
    "bucketize", "unique", "lookup",        "unpermute",    "peer_permute", "shuffle", "dense_fwd",
    "dense_bwd", "loss",   "sparse_update", "dense_update", "h2d",          "hash",    NULL};
const char *const rt_coll_kind_names[] = {"alltoallv", "allreduce", "reduce_scatter",
                                          "allgather", "sendrecv",  NULL};
const char *const rt_coll_algo_names[] = {"auto",         "direct", "ring", "tree",
                                          "hierarchical", "nvls",   NULL};
/* One row per group of roles (clang-format would put one name per line). */
/* clang-format off */
const char *const rt_role_names[] = {
    "none",      "key_hash",        "unique_send",   "route",     "ids_a2a",
    "cat_a2a",   "unique_owner",    "lookup",        "out_a2a",   "recover",
    "grad_a2a",  "grad_sync",       "sparse_update", "dense_fwd", "loss",
    "dense_bwd", "dense_allreduce", "dense_update",
    "peer_permute", "intra_a2a", "intra_rs", "shuffle", "peer_a2a", "peer_grad_a2a",
    "shuffle_bwd", "intra_grad_a2a", "intra_ag", "permute_bwd",
    "input_h2d",
    "tm_fwd", "tm_bwd", "tm_allreduce", "tm_update",
    "seq_pad", "seq_unpad",
    "hash_probe", "hash_fetch", "hash_writeback", "hash_evict",
    "neg_offload", "neg_fetch",
    NULL};
/* clang-format on */
_Static_assert(sizeof rt_role_names / sizeof *rt_role_names == RT_ROLE_COUNT + 1,
               "rt_role_names must name every rt_role");

/* Per-peer arrays are many and small and live as long as the graph: one arena. */
typedef struct rt_graph_chunk {
    struct rt_graph_chunk *next;
    size_t used, cap;
    uint64_t data[];
} rt_graph_chunk;

enum { RT_CHUNK_WORDS = 1 << 16 };

static void *grow(void *p, int *cap, int need, size_t elem)
{
    if (need <= *cap) return p;
    int nc = *cap ? *cap : 16;
    while (nc < need)
        nc *= 2;
    void *q = realloc(p, (size_t)nc * elem);
    if (!q) abort(); /* out of memory is not a user error we can report better */
    *cap = nc;
    return q;
}

rt_graph *rt_graph_new(int world, int n_reps, const int *rep_rank, const double *rep_weight)
{
    rt_graph *g = calloc(1, sizeof *g);
    if (!g) return NULL;
    g->world = world;
    g->n_reps = n_reps;
    g->rep_rank = malloc(sizeof(int) * (size_t)n_reps);
    g->rep_weight = malloc(sizeof(double) * (size_t)n_reps);
    g->peak_hbm_bytes = calloc((size_t)n_reps, sizeof(double));
    if (!g->rep_rank || !g->rep_weight || !g->peak_hbm_bytes) {
        rt_graph_free(g);
        return NULL;
    }
    for (int i = 0; i < n_reps; i++) {
        g->rep_rank[i] = rep_rank ? rep_rank[i] : i;
        g->rep_weight[i] = rep_weight ? rep_weight[i] : 1.0;
    }
    return g;
}

void rt_graph_free(rt_graph *g)
{
    if (!g) return;
    for (int i = 0; i < g->n_phases; i++)
        free(g->phases[i]);
    free(g->phases);
    for (int i = 0; i < g->n_names; i++)
        free(g->names[i]);
    free(g->names);
    free(g->ops);
    free(g->deps);
    free(g->costs);
    free(g->rep_rank);
    free(g->rep_weight);
    free(g->peak_hbm_bytes);
    for (int i = 0; i < g->n_units; i++) {
        free(g->units[i].features), free(g->units[i].owner), free(g->units[i].block);
        free(g->units[i].kunit_of), free(g->units[i].tower_of);
    }
    free(g->units);
    rt_graph_chunk *c = g->chunks;
    while (c) {
        rt_graph_chunk *n = c->next;
        free(c);
        c = n;
    }
    free(g);
}

int rt_graph_phase(rt_graph *g, const char *name)
{
    for (int i = 0; i < g->n_phases; i++)
        if (strcmp(g->phases[i], name) == 0) return i;
    g->phases = grow(g->phases, &g->cap_phases, g->n_phases + 1, sizeof(char *));
    g->phases[g->n_phases] = strdup(name);
    if (!g->phases[g->n_phases]) abort();
    return g->n_phases++;
}

const char *rt_graph_name(rt_graph *g, const char *name)
{
    g->names = grow(g->names, &g->cap_names, g->n_names + 1, sizeof(char *));
    g->names[g->n_names] = strdup(name);
    if (!g->names[g->n_names]) abort();
    return g->names[g->n_names++];
}

static int add_op(rt_graph *g, const rt_op *proto, const int *deps, int n_deps)
{
    int old_cap = g->cap_ops;
    g->ops = grow(g->ops, &g->cap_ops, g->n_ops + 1, sizeof(rt_op));
    if (g->cap_ops != old_cap) {
        rt_op_cost *c = realloc(g->costs, sizeof(rt_op_cost) * (size_t)g->cap_ops * g->n_reps);
        if (!c) abort();
        g->costs = c;
    }
    g->deps = grow(g->deps, &g->cap_deps, g->n_deps + n_deps, sizeof(int));
    int id = g->n_ops++;
    g->ops[id] = *proto;
    g->ops[id].n_deps = n_deps;
    g->ops[id].deps_at = g->n_deps;
    for (int i = 0; i < n_deps; i++) {
        /* Deps must point backwards: engines rely on ops being in topological order. */
        if (deps[i] < 0 || deps[i] >= id) abort();
        g->deps[g->n_deps++] = deps[i];
    }
    memset(&g->costs[(long)id * g->n_reps], 0, sizeof(rt_op_cost) * (size_t)g->n_reps);
    return id;
}

int rt_graph_add_kernel(rt_graph *g, const char *phase, rt_stream stream, rt_kernel_kind kind,
                        rt_dtype dtype, const char *name, const int *deps, int n_deps)
{
    rt_op op = {.type = RT_OP_KERNEL,
                .stream = stream,
                .phase = rt_graph_phase(g, phase),
                .name = name,
                .dtype = dtype,
                .kernel = kind,
                .group = {1, 1},
                .unit = -1,
                .layer = -1};
    return add_op(g, &op, deps, n_deps);
}

int rt_graph_add_collective(rt_graph *g, const char *phase, rt_stream stream, rt_coll_kind kind,
                            rt_coll_algo algo, rt_group group, const char *name, const int *deps,
                            int n_deps)
{
    rt_op op = {.type = RT_OP_COLLECTIVE,
                .stream = stream,
                .phase = rt_graph_phase(g, phase),
                .name = name,
                .dtype = RT_DT_FP32,
                .coll = kind,
                .algo = algo,
                .group = group,
                .unit = -1,
                .layer = -1};
    return add_op(g, &op, deps, n_deps);
}

rt_piece *rt_graph_pieces(rt_graph *g, int n)
{
    /* Pieces live in the same arena as the per-peer arrays, in whole 8-byte words. */
    size_t words = (sizeof(rt_piece) * (size_t)n + sizeof(uint64_t) - 1) / sizeof(uint64_t);
    _Static_assert(_Alignof(rt_piece) <= _Alignof(uint64_t), "pieces fit the word arena");
    return (rt_piece *)rt_graph_peer_bytes(g, (int)words);
}

uint64_t *rt_graph_peer_bytes(rt_graph *g, int n)
{
    rt_graph_chunk *c = g->chunks;
    if (!c || c->used + (size_t)n > c->cap) {
        size_t cap = (size_t)n > RT_CHUNK_WORDS ? (size_t)n : RT_CHUNK_WORDS;
        rt_graph_chunk *nc = malloc(sizeof *nc + cap * sizeof(uint64_t));
        if (!nc) abort();
        nc->next = c;
        nc->used = 0;
        nc->cap = cap;
        g->chunks = c = nc;
    }
    uint64_t *p = c->data + c->used;
    c->used += (size_t)n;
    memset(p, 0, sizeof(uint64_t) * (size_t)n);
    return p;
}

void rt_graph_set_role(rt_graph *g, int op, rt_role role, int unit, int layer)
{
    g->ops[op].role = role;
    g->ops[op].unit = unit;
    g->ops[op].layer = layer;
}

static void *dup_array(const void *src, size_t n, size_t elem)
{
    if (!src) return NULL;
    void *p = malloc(elem * (n ? n : 1));
    if (!p) abort();
    memcpy(p, src, elem * n);
    return p;
}

int rt_graph_add_unit(rt_graph *g, const rt_graph_unit *u)
{
    rt_graph_unit *v = realloc(g->units, sizeof *v * (size_t)(g->n_units + 1));
    if (!v) abort();
    g->units = v;
    rt_graph_unit *c = &v[g->n_units];
    *c = *u;
    c->features = dup_array(u->features, (size_t)u->n_features, sizeof(int));
    c->owner = dup_array(u->owner, (size_t)u->n_tables * (size_t)u->col_shards, sizeof(int));
    c->block = dup_array(u->block, (size_t)u->n_tables, sizeof(uint64_t));
    c->kunit_of = dup_array(u->kunit_of, u->kunit_of ? (size_t)u->n_features : 0, sizeof(int));
    c->tower_of = dup_array(u->tower_of, u->tower_of ? (size_t)u->n_tables : 0, sizeof(int));
    return g->n_units++;
}

void rt_graph_copy_cost(rt_graph *to, int op_to, const rt_graph *from, int op_from, int r)
{
    const rt_op_cost *c = rt_graph_cost(from, op_from, r);
    rt_op_cost *d = rt_graph_cost(to, op_to, r);
    d->flops = c->flops, d->bytes = c->bytes, d->recv_bytes = c->recv_bytes;
    int n = from->ops[op_from].group.size;
    if (c->send)
        d->send = memcpy(rt_graph_peer_bytes(to, n), c->send, sizeof(uint64_t) * (size_t)n);
    if (c->recv)
        d->recv = memcpy(rt_graph_peer_bytes(to, n), c->recv, sizeof(uint64_t) * (size_t)n);
    if (c->n_pieces) {
        d->pieces = memcpy(rt_graph_pieces(to, c->n_pieces), c->pieces,
                           sizeof(rt_piece) * (size_t)c->n_pieces);
        d->n_pieces = c->n_pieces;
    }
}
