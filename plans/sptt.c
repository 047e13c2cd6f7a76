/* sptt: DMT's semantic-preserving tower transform (seed 004, section 3.1; DESIGN.md section 4).
 *
 * N = H hosts x G devices; towers of k hosts (hosts_per_tower), so T = H / k towers of
 * D = k x G consecutive ranks. Tower t's tables are sharded over its D devices. A rank's
 * local index is rank mod D and its peers are the ranks with the same local index; the peer
 * order sorts ranks by (rank mod D, rank div D). Forward:
 *   (a) global ID AlltoAll (world N) to the owners inside the towers;
 *   (b) lookup + pooling for the global batch (N x b samples);
 *   (c) peer permute of the lookup output from rank order into peer order;
 *   (d) intra-tower AlltoAll (world D): device i gets, for its T peers, every feature of the
 *       tower (row-wise pooled features: a ReduceScatter of full-width partial sums);
 *   (e) shuffle (features, peers) -> (peers, features);
 *   [tower module: compress the tower's pooled embeddings by R]
 *   (f) concurrent peer AlltoAlls (world T, stride D) among devices of equal local index.
 * The backward mirrors it: peer AlltoAll, [TM backward, TM AllReduce inside the tower],
 * shuffle, intra AlltoAll (AllGather for row-wise pooled), permute, sparse update at the owner:
 * the IDs are already there, so no second ID AlltoAll. */
#include <libfyaml.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cfg.h"
#include "exchange.h"
#include "partitioner.h"
#include "plan.h"
#include "plan_common.h"
#include "sharding.h"
#include "tower_module.h"

typedef enum { ASSIGN_AUTO, ASSIGN_STRIDED, ASSIGN_FILE } assign_kind;

/* One malloc block: the pipeline frees plan options with free(). */
typedef struct sptt_opts {
    int hosts_per_tower;
    int n_towers;
    rt_tm_spec tm;
    double tm_params; /* all towers' module parameters (synchronized inside towers only) */
    int n_features;
    int tower_of[];
} sptt_opts;

/* ---- configuration -------------------------------------------------------------------- */

/* ASSIGNMENT is relative to the scenario's directory, else to the current directory. */
static int read_assignment_file(const rt_scenario *s, const char *file, sptt_opts *o)
{
    char path[4096];
    const char *base = rt_cfg_path(s->plan.cfg), *slash = strrchr(base, '/');
    if (file[0] != '/' && slash)
        snprintf(path, sizeof path, "%.*s/%s", (int)(slash - base), base, file);
    else
        snprintf(path, sizeof path, "%s", file);
    if (access(path, R_OK)) snprintf(path, sizeof path, "%s", file);
    return rt_partition_read_assignment(path, &s->model, o->n_towers, o->tower_of,
                                        rt_cfg_err(s->plan.cfg));
}

static int parse_towers(const rt_scenario *s, struct fy_node *node, sptt_opts *o)
{
    rt_cfg *c = s->plan.cfg;
    static const char *const keys[] = {"assignment", "strategy", "max_min_factor",
                                       "dims",       "seed",     NULL};
    char *assignment = NULL;
    int strategy = RT_PART_COHERENT;
    double factor = 2;
    int64_t dims = 2, seed = 1;
    if (node && (rt_cfg_check_keys(c, node, keys) ||
                 rt_cfg_get_str(c, node, "assignment", 0, &assignment) < 0 ||
                 rt_cfg_get_enum(c, node, "strategy", 0, rt_part_strategy_names, &strategy) < 0 ||
                 rt_cfg_get_double(c, node, "max_min_factor", 0, 1, 1e6, &factor) < 0 ||
                 rt_cfg_get_int(c, node, "dims", 0, 1, 16, &dims) < 0 ||
                 rt_cfg_get_int(c, node, "seed", 0, 0, INT64_MAX, &seed) < 0)) {
        free(assignment);
        return -1;
    }
    assign_kind kind = ASSIGN_AUTO;
    if (assignment && !strcmp(assignment, "strided"))
        kind = ASSIGN_STRIDED;
    else if (assignment && strcmp(assignment, "auto"))
        kind = ASSIGN_FILE;
    int rc = 0, F = s->model.n_tables;
    if (kind == ASSIGN_FILE) {
        rc = read_assignment_file(s, assignment, o);
    } else if (kind == ASSIGN_STRIDED) {
        /* DMT's naive baseline (section 5.2.3): feature f to tower f mod T. */
        for (int f = 0; f < F; f++)
            o->tower_of[f] = f % o->n_towers;
    } else {
        double *a = malloc(sizeof(double) * (size_t)F * (size_t)F);
        rt_partition_opts po = {
            o->n_towers, (rt_part_strategy)strategy, factor, (int)dims, (uint64_t)seed, 0};
        rc = -1;
        if (a) {
            rt_partition_model_affinity(&s->model,
                                        s->workload.has_pooling ? &s->workload.pooling : NULL,
                                        s->workload.has_ids ? &s->workload.ids : NULL, a);
            rc = rt_partition(a, F, &po, o->tower_of, rt_cfg_err(c));
        }
        if (rc && node)
            rt_cfg_error(c, node, "tower partitioner failed for %d features into %d towers", F,
                         o->n_towers);
        free(a);
    }
    free(assignment);
    return rc;
}

static int parse_tower_module(rt_cfg *c, struct fy_node *node, rt_tm_spec *tm)
{
    static const char *const keys[] = {"kind", "compression", "layers", "rank", NULL};
    static const char *const kinds[] = {"linear", "crossnet", NULL};
    int kind = 0;
    int64_t layers = 1, rank = 0;
    tm->compression = 1;
    if (rt_cfg_check_keys(c, node, keys) || rt_cfg_get_enum(c, node, "kind", 1, kinds, &kind) ||
        rt_cfg_get_double(c, node, "compression", 0, 1, 1e6, &tm->compression) < 0 ||
        rt_cfg_get_int(c, node, "layers", 0, 1, 64, &layers) < 0 ||
        rt_cfg_get_int(c, node, "rank", 0, 0, 1 << 20, &rank) < 0)
        return -1;
    tm->kind = kind ? RT_TM_CROSSNET : RT_TM_LINEAR;
    tm->cross_layers = (int)layers;
    tm->cross_rank = (int)rank;
    return 0;
}

static int sptt_configure(const rt_scenario *s, void **opts)
{
    rt_cfg *c = s->plan.cfg;
    struct fy_node *node = s->plan.node;
    int F = s->model.n_tables, ok = 1, H = s->topology.nodes;
    sptt_opts *o = calloc(1, sizeof *o + sizeof(int) * (size_t)F);
    *opts = o;
    if (!o) return -1;
    int64_t k = 1;
    if (rt_cfg_get_int(c, node, "hosts_per_tower", 0, 1, H, &k) < 0) return -1;
    if (H % k) {
        rt_cfg_error(c, fy_node_mapping_lookup_by_string(node, "hosts_per_tower", FY_NT),
                     "%d nodes do not split into towers of %d hosts; allowed: a divisor of %d", H,
                     (int)k, H);
        return -1;
    }
    o->hosts_per_tower = (int)k;
    o->n_towers = H / (int)k;
    o->n_features = F;
    if (o->n_towers > F) {
        rt_cfg_error(c, node,
                     "%d towers (%d nodes / hosts_per_tower %d) but the model has %d features; "
                     "every tower needs one: set plan.hosts_per_tower >= %d",
                     o->n_towers, H, (int)k, F, (H + F - 1) / F);
        return -1;
    }
    /* The tower transform prices a lookup's elements from its bytes in one storage dtype. */
    for (int t = 1; t < F; t++)
        if (rt_scenario_table_dtype(s, t) != rt_scenario_table_dtype(s, 0)) {
            rt_cfg_error(c, node,
                         "sptt prices one embedding dtype, but table '%s' is %s and '%s' %s; "
                         "allowed: tables of one dtype, or plan.precision.embedding",
                         s->model.tables[t].name, rt_dtype_name(rt_scenario_table_dtype(s, t)),
                         s->model.tables[0].name, rt_dtype_name(rt_scenario_table_dtype(s, 0)));
            return -1;
        }
    struct fy_node *towers = rt_cfg_get_map(c, node, "towers", 0, &ok);
    if (!ok || parse_towers(s, towers, o)) return -1;
    struct fy_node *tm = rt_cfg_get_map(c, node, "tower_module", 0, &ok);
    if (!ok || (tm && parse_tower_module(c, tm, &o->tm))) return -1;
    return 0;
}

/* A tower module is part of the model (DMT is a modeling technique): its FLOPs and
 * parameters, and the smaller input of the global interaction, belong in the model's costs
 * that `plan` prints and MFU counts. rt_tm_apply recomputes the costs from scratch. */
static int sptt_adjust_model(rt_scenario *s, void *opts, FILE *err)
{
    sptt_opts *o = opts;
    if (o->tm.kind == RT_TM_NONE) return 0;
    if (rt_tm_apply(&s->model, &o->tm, o->tower_of, o->n_towers, NULL, &o->tm_params, err)) {
        rt_cfg_error(s->plan.cfg,
                     rt_cfg_get_map(s->plan.cfg, s->plan.node, "tower_module", 0, &(int){1}),
                     "tower module does not fit the model");
        return -1;
    }
    return 0;
}

/* ---- traffic --------------------------------------------------------------------------- */

typedef struct sptt {
    const sptt_opts *o;
    int N, D, T, R, rowwise, has_pooled, has_seq;
    rt_shard_map *maps; /* [T]: tower t's placement over its D devices */
    rt_tm_cost *tm;     /* [T] */
    /* [r * N + q]: what rep r's batch sends to rank q, and what q reads/updates/returns. */
    uint64_t *n_ids, *seq_back;
    double *row_bytes, *upd_bytes;
    uint64_t *lens_to, *pooled_out; /* [q]: per requester, as in plans/exchange.c */
    uint64_t *seq_tower;            /* [r * T + t]: sequence-embedding bytes of tower t for rep r */
    double *peer_bytes;             /* [t]: pooled bytes per sample tower t sends to a peer */
    double *tower_pooled;           /* [t]: uncompressed pooled bytes per sample of tower t */
} sptt;

static void sptt_free(sptt *x)
{
    for (int t = 0; x->maps && t < x->T; t++)
        rt_shard_map_free(&x->maps[t]);
    free(x->maps), free(x->tm), free(x->n_ids), free(x->seq_back), free(x->row_bytes);
    free(x->upd_bytes), free(x->lens_to), free(x->pooled_out), free(x->seq_tower);
    free(x->peer_bytes), free(x->tower_pooled);
}

static int place_towers(sptt *x, const rt_scenario *s, FILE *err)
{
    int F = s->model.n_tables;
    int *feat = malloc(sizeof(int) * (size_t)F);
    if (!feat) return -1;
    int rc = 0;
    for (int t = 0; t < x->T && !rc; t++) {
        int n = 0;
        for (int f = 0; f < F; f++)
            if (x->o->tower_of[f] == t) feat[n++] = f;
        rc = rt_shard_map_build(s, x->D, feat, n, &x->maps[t]);
        if (!rc) rc = rt_tm_cost_of(&x->o->tm, &s->model, feat, n, &x->tm[t], err);
    }
    free(feat);
    return rc;
}

/* Rep R's IDs of table F go to their owners inside F's tower. */
static void route_feature(sptt *x, const rt_scenario *s, int f, const rt_feature_batch *fb, int r)
{
    int t = x->o->tower_of[f];
    const rt_shard_map *sm = &x->maps[t];
    const rt_table *tb = &s->model.tables[f];
    long base = (long)r * x->N + (long)t * x->D;
    double eb = (double)rt_dtype_bytes(rt_scenario_table_dtype(s, 0));
    double cb = (double)rt_dtype_bytes(s->plan.comm_dtype);
    double state = rt_optimizer_state_floats(tb->optimizer, tb->dim) * 4.0 * 2; /* read + write */
    if (tb->sequence) x->seq_tower[(long)r * x->T + t] += fb->n_ids * (uint64_t)(tb->dim * cb);
    if (sm->kind == RT_SHARD_ROW) {
        for (uint64_t i = 0; i < fb->n_ids; i++) {
            long q = base + (long)(fb->ids[i] / sm->block[f]);
            x->n_ids[q]++;
            x->row_bytes[q] += tb->dim * eb;
            x->upd_bytes[q] += tb->dim * (2 * eb + cb) + state;
            if (tb->sequence) x->seq_back[q] += (uint64_t)(tb->dim * cb);
        }
        return;
    }
    int width = tb->dim / sm->col_shards;
    double n = (double)fb->n_ids;
    for (int c = 0; c < sm->col_shards; c++) {
        long q = base + sm->owner[f * sm->col_shards + c];
        x->n_ids[q] += fb->n_ids;
        x->row_bytes[q] += n * width * eb;
        x->upd_bytes[q] += n * (width * (2 * eb + cb) + state / sm->col_shards);
        if (tb->sequence) x->seq_back[q] += fb->n_ids * (uint64_t)(width * cb);
    }
}

static void per_owner_constants(sptt *x, const rt_scenario *s)
{
    uint64_t b = (uint64_t)s->workload.batch_per_rank;
    double cb = (double)rt_dtype_bytes(s->plan.comm_dtype);
    for (int q = 0; q < x->N; q++) {
        int t = q / x->D;
        const rt_shard_map *sm = &x->maps[t];
        for (int f = 0; f < s->model.n_tables; f++) {
            if (x->o->tower_of[f] != t) continue;
            int w = rt_shard_dim(sm, s, f, q % x->D);
            if (!w) continue;
            int shard_w = sm->kind == RT_SHARD_COLUMN ? s->model.tables[f].dim / sm->col_shards : w;
            x->lens_to[q] += b * 4 * (uint64_t)(w / shard_w);
            if (!s->model.tables[f].sequence) x->pooled_out[q] += b * (uint64_t)w * (uint64_t)cb;
        }
    }
    for (int f = 0; f < s->model.n_tables; f++)
        if (!s->model.tables[f].sequence)
            x->tower_pooled[x->o->tower_of[f]] += s->model.tables[f].dim * cb;
    for (int t = 0; t < x->T; t++)
        x->peer_bytes[t] = x->o->tm.kind != RT_TM_NONE && x->tm[t].in_features
                               ? (double)x->tm[t].out_vectors * x->tm[t].out_width * cb
                               : x->tower_pooled[t];
}

static int sptt_route(sptt *x, const rt_scenario *s, const rt_workload *w, FILE *err)
{
    size_t rn = (size_t)x->R * (size_t)x->N;
    x->maps = calloc((size_t)x->T, sizeof *x->maps);
    x->tm = calloc((size_t)x->T, sizeof *x->tm);
    x->n_ids = calloc(rn, sizeof(uint64_t)), x->seq_back = calloc(rn, sizeof(uint64_t));
    x->row_bytes = calloc(rn, sizeof(double)), x->upd_bytes = calloc(rn, sizeof(double));
    x->lens_to = calloc((size_t)x->N, sizeof(uint64_t)),
    x->pooled_out = calloc((size_t)x->N, sizeof(uint64_t));
    x->seq_tower = calloc((size_t)x->R * (size_t)x->T, sizeof(uint64_t));
    x->peer_bytes = calloc((size_t)x->T, sizeof(double)),
    x->tower_pooled = calloc((size_t)x->T, sizeof(double));
    if (!x->maps || !x->tm || !x->n_ids || !x->seq_back || !x->row_bytes || !x->upd_bytes ||
        !x->lens_to || !x->pooled_out || !x->seq_tower || !x->peer_bytes || !x->tower_pooled ||
        place_towers(x, s, err)) {
        fprintf(err, "sptt: out of memory for %d x %d traffic matrices\n", x->R, x->N);
        return -1;
    }
    per_owner_constants(x, s);
    for (int r = 0; r < x->R; r++)
        for (int f = 0; f < s->model.n_tables; f++)
            route_feature(x, s, f, rt_workload_batch(w, r, f), r);
    return 0;
}

/* ---- graph ----------------------------------------------------------------------------- */

typedef struct sptt_ops {
    int bucketize, ids_a2a, lookup, permute, intra_a2a, intra_rs, shuffle, tm_fwd, peer_a2a,
        unpermute;
    int peer_grad, tm_bwd, shuffle_bwd, intra_grad, intra_ag, permute_bwd, update, tm_allreduce,
        tm_update;
} sptt_ops;

static int kernel(rt_graph *g, const char *phase, rt_kernel_kind k, rt_dtype dt, const char *name,
                  int dep)
{
    return rt_graph_add_kernel(g, phase, RT_STREAM_COMPUTE, k, dt, name, &dep, dep >= 0);
}

static int coll(rt_graph *g, const char *phase, rt_coll_kind k, rt_group gr, const char *name,
                const int *deps, int n)
{
    return rt_graph_add_collective(g, phase, RT_STREAM_COMM, k, RT_ALGO_AUTO, gr, name, deps, n);
}

static void add_forward(const sptt *x, rt_graph *g, const rt_scenario *s, sptt_ops *op)
{
    rt_group world = {x->N, 1}, tower = {x->D, 1}, peers = {x->T, x->D};
    rt_dtype ed = s->plan.embedding_dtype;
    op->bucketize = kernel(g, "emb.fwd.bucketize", RT_K_BUCKETIZE, RT_DT_FP32, "bucketize_ids", -1);
    op->ids_a2a = coll(g, "emb.fwd.global_ids_a2a", RT_COLL_ALLTOALLV, world, "global_ids_alltoall",
                       &op->bucketize, 1);
    op->lookup =
        kernel(g, "emb.fwd.lookup", RT_K_LOOKUP, ed, "embedding_lookup_global_batch", op->ids_a2a);
    op->permute = kernel(g, "emb.fwd.peer_permute", RT_K_PEER_PERMUTE, RT_DT_FP32, "peer_permute",
                         op->lookup);
    int intra[2], n = 0;
    op->intra_a2a = op->intra_rs = -1;
    if (!x->rowwise || x->has_seq)
        intra[n++] = op->intra_a2a = coll(g, "emb.fwd.intra_a2a", RT_COLL_ALLTOALLV, tower,
                                          "intra_tower_alltoall", &op->permute, 1);
    if (x->rowwise && x->has_pooled)
        intra[n++] = op->intra_rs = coll(g, "emb.fwd.intra_reduce_scatter", RT_COLL_REDUCE_SCATTER,
                                         tower, "intra_tower_reduce_scatter", &op->permute, 1);
    op->shuffle = rt_graph_add_kernel(g, "emb.fwd.shuffle", RT_STREAM_COMPUTE, RT_K_SHUFFLE,
                                      RT_DT_FP32, "shuffle_features_peers", intra, n);
    int prev = op->shuffle;
    op->tm_fwd = -1;
    if (x->o->tm.kind != RT_TM_NONE)
        prev = op->tm_fwd =
            kernel(g, "dense.tm_fwd", RT_K_DENSE_FWD, s->plan.dense_dtype, "tower_module", prev);
    op->peer_a2a = coll(g, "emb.fwd.peer_a2a", RT_COLL_ALLTOALLV, peers, "peer_alltoall", &prev, 1);
    op->unpermute = kernel(g, "emb.fwd.unpermute", RT_K_UNPERMUTE, RT_DT_FP32, "embedding_recovery",
                           op->peer_a2a);
}

static void add_backward(const sptt *x, rt_graph *g, const rt_scenario *s, int after, sptt_ops *op)
{
    rt_group tower = {x->D, 1}, peers = {x->T, x->D};
    op->peer_grad =
        coll(g, "emb.bwd.peer_a2a", RT_COLL_ALLTOALLV, peers, "peer_gradient_alltoall", &after, 1);
    int prev = op->peer_grad;
    op->tm_bwd = op->tm_allreduce = op->tm_update = -1;
    if (x->o->tm.kind != RT_TM_NONE)
        prev = op->tm_bwd =
            kernel(g, "dense.tm_bwd", RT_K_DENSE_BWD, s->plan.dense_dtype, "tower_module", prev);
    op->shuffle_bwd =
        kernel(g, "emb.bwd.shuffle", RT_K_SHUFFLE, RT_DT_FP32, "shuffle_peers_features", prev);
    int intra[2], n = 0;
    op->intra_grad = op->intra_ag = -1;
    if (op->intra_a2a >= 0)
        intra[n++] = op->intra_grad = coll(g, "emb.bwd.intra_a2a", RT_COLL_ALLTOALLV, tower,
                                           "intra_tower_gradient_alltoall", &op->shuffle_bwd, 1);
    if (op->intra_rs >= 0)
        intra[n++] = op->intra_ag = coll(g, "emb.bwd.intra_allgather", RT_COLL_ALLGATHER, tower,
                                         "intra_tower_gradient_allgather", &op->shuffle_bwd, 1);
    op->permute_bwd =
        rt_graph_add_kernel(g, "emb.bwd.peer_permute", RT_STREAM_COMPUTE, RT_K_PEER_PERMUTE,
                            RT_DT_FP32, "peer_unpermute", intra, n);
    op->update = kernel(g, "emb.bwd.update", RT_K_SPARSE_UPDATE, s->plan.embedding_dtype,
                        "sparse_update", op->permute_bwd);
    /* Queued after the embedding gradients so the in-order comm stream does not hold them. */
    if (op->tm_bwd >= 0) {
        op->tm_allreduce = coll(g, "dense.tm_allreduce", RT_COLL_ALLREDUCE, tower,
                                "tower_module_grad_allreduce", &op->tm_bwd, 1);
        op->tm_update = kernel(g, "dense.tm_update", RT_K_DENSE_UPDATE, RT_DT_FP32,
                               "tower_module_optimizer", op->tm_allreduce);
    }
}

static void peer_arrays(rt_graph *g, rt_op_cost *c, int n)
{
    c->send = rt_graph_peer_bytes(g, n), c->recv = rt_graph_peer_bytes(g, n);
}

static void sum_peers(rt_op_cost *c, int n)
{
    c->bytes = c->recv_bytes = 0;
    for (int q = 0; q < n; q++)
        c->bytes += (double)c->send[q], c->recv_bytes += (double)c->recv[q];
}

static void mirror(rt_op_cost *bwd, const rt_op_cost *fwd)
{
    bwd->send = fwd->recv, bwd->recv = fwd->send;
    bwd->bytes = fwd->recv_bytes, bwd->recv_bytes = fwd->bytes;
}

/* Fills every op's cost on rep R; returns the rank's AlltoAll buffer bytes (for memory). */
static double fill(const sptt *x, rt_graph *g, const rt_scenario *s, const rt_workload *w,
                   const sptt_ops *op, int r)
{
    int N = x->N, D = x->D, T = x->T, p = w->rep_rank[r], t = p / D, j = p % D;
    uint64_t idb = (uint64_t)s->workload.id_bytes, b = (uint64_t)s->workload.batch_per_rank;
    double eb = (double)rt_dtype_bytes(rt_scenario_table_dtype(s, 0)),
           db = (double)rt_dtype_bytes(s->plan.dense_dtype);
    long mine = (long)r * N;
    /* (a) */
    rt_op_cost *ids = rt_graph_cost(g, op->ids_a2a, r);
    peer_arrays(g, ids, N);
    double in_ids = 0, rows = 0, upd = 0, sent = 0, seq_out = 0;
    for (int q = 0; q < N; q++) {
        long from = (long)rt_exchange_rep_of(w, q) * N + p;
        ids->send[q] = x->n_ids[mine + q] * idb + x->lens_to[q];
        ids->recv[q] = x->n_ids[from] * idb + x->lens_to[p];
        in_ids += (double)x->n_ids[from], rows += x->row_bytes[from], upd += x->upd_bytes[from];
        sent += (double)x->n_ids[mine + q], seq_out += (double)x->seq_back[from];
    }
    sum_peers(ids, N);
    rt_graph_cost(g, op->bucketize, r)->bytes = sent * (double)(2 * idb + 4);
    /* (b), (c): the owner pools for all N requesters. */
    double out_b = (double)N * (double)x->pooled_out[p] + seq_out;
    rt_op_cost *lk = rt_graph_cost(g, op->lookup, r);
    lk->bytes = in_ids * (double)idb + rows + out_b;
    lk->flops = rows / eb;
    rt_graph_cost(g, op->permute, r)->bytes = 2 * out_b;
    /* (d): to tower member i go the embeddings of the T requesters whose local index is i. */
    double held = 0, bufs = ids->bytes + ids->recv_bytes + 2 * out_b;
    if (op->intra_a2a >= 0) {
        rt_op_cost *ia = rt_graph_cost(g, op->intra_a2a, r);
        peer_arrays(g, ia, D);
        for (int i = 0; i < D; i++) {
            int m = t * D + i;
            uint64_t pooled_to = x->rowwise ? 0 : x->pooled_out[p] * (uint64_t)T;
            uint64_t pooled_from = x->rowwise ? 0 : x->pooled_out[m] * (uint64_t)T;
            ia->send[i] = pooled_to, ia->recv[i] = pooled_from;
            for (int u = 0; u < T; u++) {
                ia->send[i] += x->seq_back[(long)rt_exchange_rep_of(w, u * D + i) * N + p];
                ia->recv[i] += x->seq_back[(long)rt_exchange_rep_of(w, u * D + j) * N + m];
            }
        }
        sum_peers(ia, D);
        mirror(rt_graph_cost(g, op->intra_grad, r), ia);
        held += ia->recv_bytes;
        bufs += 2 * (ia->bytes + ia->recv_bytes);
    }
    if (op->intra_rs >= 0) {
        /* Full-width partial sums of every pooled feature of the tower for all N requesters. */
        double in = (double)N * (double)b * x->tower_pooled[t];
        rt_graph_cost(g, op->intra_rs, r)->bytes = in;
        rt_graph_cost(g, op->intra_ag, r)->bytes = in;
        held += in / D;
        bufs += 2 * (in + in / D);
    }
    /* (e) and the tower module on the T x b samples of this device's peers. */
    rt_graph_cost(g, op->shuffle, r)->bytes = 2 * held;
    rt_graph_cost(g, op->shuffle_bwd, r)->bytes = 2 * held;
    double tm_n = (double)T * (double)b;
    if (op->tm_fwd >= 0) {
        const rt_tm_cost *tm = &x->tm[t];
        rt_graph_cost(g, op->tm_fwd, r)->flops = tm_n * tm->fwd_flops;
        rt_graph_cost(g, op->tm_fwd, r)->bytes = tm_n * tm->fwd_elems * db + tm->params * db;
        rt_graph_cost(g, op->tm_bwd, r)->flops = 2 * tm_n * tm->fwd_flops;
        rt_graph_cost(g, op->tm_bwd, r)->bytes =
            2 * tm_n * tm->fwd_elems * db + 2 * tm->params * db;
        rt_graph_cost(g, op->tm_allreduce, r)->bytes = tm->params * 4;
        rt_graph_cost(g, op->tm_update, r)->bytes = tm->params * 4 * 7;
        rt_graph_cost(g, op->tm_update, r)->flops = tm->params * 10;
        bufs += tm_n * tm->act_elems * db;
    }
    /* (f): to peer u (tower u, same local index) this tower's b x features x dim / R. */
    rt_op_cost *pa = rt_graph_cost(g, op->peer_a2a, r);
    peer_arrays(g, pa, T);
    for (int u = 0; u < T; u++) {
        pa->send[u] = (uint64_t)((double)b * x->peer_bytes[t]) +
                      x->seq_tower[(long)rt_exchange_rep_of(w, u * D + j) * T + t];
        pa->recv[u] = (uint64_t)((double)b * x->peer_bytes[u]) + x->seq_tower[(long)r * T + u];
    }
    sum_peers(pa, T);
    mirror(rt_graph_cost(g, op->peer_grad, r), pa);
    rt_graph_cost(g, op->unpermute, r)->bytes = 2 * pa->recv_bytes;
    rt_graph_cost(g, op->permute_bwd, r)->bytes = 2 * out_b;
    rt_op_cost *up = rt_graph_cost(g, op->update, r);
    up->bytes = in_ids * (double)idb + upd;
    up->flops = 4 * rows / eb;
    return bufs + 2 * (pa->bytes + pa->recv_bytes);
}

static double table_memory(const sptt *x, const rt_scenario *s, int p)
{
    int t = p / x->D;
    double bytes = 0;
    for (int f = 0; f < s->model.n_tables; f++) {
        if (x->o->tower_of[f] != t) continue;
        double rows = (double)rt_shard_rows(&x->maps[t], s, f, p % x->D);
        int width = rt_shard_dim(&x->maps[t], s, f, p % x->D);
        int state = rt_optimizer_state_floats(s->model.tables[f].optimizer, width);
        bytes +=
            rows * (width * (double)rt_dtype_bytes(rt_scenario_table_dtype(s, 0)) + state * 4.0);
    }
    return bytes + (x->o->tm.kind != RT_TM_NONE ? x->tm[t].params * 4 * 4 : 0);
}

/* Records the exchange for the executor: one unit over the world whose owners are world ranks
 * inside each feature's tower, the tower module's spec, and the role of every op. */
static void record_unit(const sptt *x, rt_graph *g, const rt_scenario *s, const sptt_ops *op)
{
    int F = s->model.n_tables, cs = x->maps[0].col_shards > 0 ? x->maps[0].col_shards : 1;
    int *feat = malloc(sizeof(int) * (size_t)F), *owner = malloc(sizeof(int) * (size_t)F * cs);
    uint64_t *block = calloc((size_t)F, sizeof(uint64_t));
    if (!feat || !owner || !block) abort(); /* as rt_graph_add_* do on out of memory */
    for (int f = 0; f < F; f++) {
        const rt_shard_map *sm = &x->maps[x->o->tower_of[f]];
        feat[f] = f;
        if (sm->block) block[f] = sm->block[f];
        for (int c = 0; c < cs; c++) {
            int local = sm->owner ? sm->owner[f * cs + c] : -1;
            owner[f * cs + c] = local < 0 ? -1 : x->o->tower_of[f] * x->D + local;
        }
    }
    rt_graph_unit u = {.n_features = F,
                       .features = feat,
                       .group = {x->N, 1},
                       .sharding = (int)s->plan.sharding,
                       .col_shards = cs,
                       .n_tables = F,
                       .owner = owner,
                       .block = block,
                       .sync = {1, 1},
                       .tower_size = x->D,
                       .tower_of = (int *)x->o->tower_of,
                       .tm_kind = (int)x->o->tm.kind,
                       .tm_compression = x->o->tm.compression,
                       .tm_cross_layers = x->o->tm.cross_layers,
                       .tm_cross_rank = x->o->tm.cross_rank};
    int unit = rt_graph_add_unit(g, &u);
    free(feat), free(owner), free(block);
    const struct {
        int op;
        rt_role role;
    } roles[] = {{op->bucketize, RT_ROLE_ROUTE},         {op->ids_a2a, RT_ROLE_IDS_A2A},
                 {op->lookup, RT_ROLE_LOOKUP},           {op->permute, RT_ROLE_PEER_PERMUTE},
                 {op->intra_a2a, RT_ROLE_INTRA_A2A},     {op->intra_rs, RT_ROLE_INTRA_RS},
                 {op->shuffle, RT_ROLE_SHUFFLE},         {op->peer_a2a, RT_ROLE_PEER_A2A},
                 {op->unpermute, RT_ROLE_RECOVER},       {op->peer_grad, RT_ROLE_PEER_GRAD_A2A},
                 {op->shuffle_bwd, RT_ROLE_SHUFFLE_BWD}, {op->intra_grad, RT_ROLE_INTRA_GRAD_A2A},
                 {op->intra_ag, RT_ROLE_INTRA_AG},       {op->permute_bwd, RT_ROLE_PERMUTE_BWD},
                 {op->update, RT_ROLE_SPARSE_UPDATE},    {op->tm_fwd, RT_ROLE_TM_FWD},
                 {op->tm_bwd, RT_ROLE_TM_BWD},           {op->tm_allreduce, RT_ROLE_TM_ALLREDUCE},
                 {op->tm_update, RT_ROLE_TM_UPDATE}};
    for (size_t k = 0; k < sizeof roles / sizeof *roles; k++)
        if (roles[k].op >= 0) rt_graph_set_role(g, roles[k].op, roles[k].role, unit, -1);
}

static rt_graph *sptt_build(const rt_scenario *s, const void *opts, const rt_workload *w, FILE *err)
{
    const sptt_opts *o = opts;
    sptt x = {.o = o, .N = w->world, .T = o->n_towers, .R = w->n_reps};
    x.D = x.N / x.T;
    x.rowwise = s->plan.sharding == RT_SHARD_ROW;
    for (int f = 0; f < s->model.n_tables; f++) {
        x.has_seq |= s->model.tables[f].sequence;
        x.has_pooled |= !s->model.tables[f].sequence;
    }
    rt_graph *g = NULL;
    if (sptt_route(&x, s, w, err)) goto out;
    g = rt_graph_new(w->world, w->n_reps, w->rep_rank, w->rep_weight);
    if (!g) goto out;
    sptt_ops op;
    rt_dense_ops d;
    add_forward(&x, g, s, &op);
    rt_plan_add_dense(g, s, &op.unpermute, 1, (rt_group){x.N, 1}, &d);
    add_backward(&x, g, s, d.last_bwd, &op);
    record_unit(&x, g, s, &op);
    double world_params = s->model.dense_params + s->model.aux_params - o->tm_params;
    for (int r = 0; r < w->n_reps; r++) {
        double bufs = fill(&x, g, s, w, &op, r);
        rt_plan_fill_dense(g, s, w, &d, r);
        /* Tower-module gradients are reduced inside the tower, not over the world. */
        rt_graph_cost(g, d.allreduce, r)->bytes = world_params * 4;
        rt_graph_cost(g, d.update, r)->bytes = world_params * 4 * 7;
        rt_graph_cost(g, d.update, r)->flops = world_params * 10;
        g->peak_hbm_bytes[r] =
            table_memory(&x, s, w->rep_rank[r]) + bufs + rt_plan_dense_memory(s, w, r);
    }
    rt_plan_set_model_flops(g, s, w);
out:
    sptt_free(&x);
    return g;
}

static const char *const sptt_keys[] = {"hosts_per_tower", "towers", "tower_module", NULL};

const rt_plan rt_plan_sptt = {
    .name = "sptt",
    .description =
        "DMT tower transform: towers of hosts, intra-tower and peer AlltoAlls, tower modules",
    .option_keys = sptt_keys,
    .configure = sptt_configure,
    .adjust_model = sptt_adjust_model,
    .build = sptt_build,
};
