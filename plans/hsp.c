/* hsp: TurboGR's hierarchical sparse parallelism (seed 002, section 4.2.1; DESIGN.md
 * section 4). The N ranks form M = N / I groups of I consecutive ranks. Every group holds a
 * full replica of every table, sharded over its I ranks, so the embedding exchange
 * (plans/exchange.c) runs over the group {I, 1}: AlltoAll world I. Before the sparse update the
 * ranks holding the same shard, one per group ({M, I}), synchronize their gradients so every
 * replica applies the same aggregate gradient and keeps the same optimizer state:
 *   sync: dense   an AllReduce of the rows of the shard touched by any group (the union),
 *                 dim wide, in the comm dtype;
 *   sync: sparse  an AllGather of each group's touched rows as (index, value) pairs: the
 *                 output holds every group's rows x (id_bytes + width x comm bytes).
 * Touched rows are counted from the sampled IDs in exact mode; in statistical mode they are
 * the expected numbers of distinct rows among the draws of the ranks involved. The dense
 * model stays data parallel over all N ranks. Tables per rank grow by M against flat; the
 * memory pass (plans/memory.c) refuses a group size whose replica does not fit. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <libfyaml.h>

#include "cfg.h"
#include "exchange.h"
#include "plan.h"
#include "plan_common.h"

typedef enum { HSP_SYNC_DENSE, HSP_SYNC_SPARSE } hsp_sync;
static const char *const hsp_sync_names[] = {"dense", "sparse", NULL};

typedef struct hsp_opts {
    int group_size;
    hsp_sync sync;
    rt_fusion fusion;
} hsp_opts;

/* Rows and elements (row x width) of shard owner q touched by a set of IDs. */
typedef struct touched {
    double *rows;
    double *elems;
} touched;

static int u64_cmp(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

/* Credits one distinct row ID of table F to the shard owners that hold it. */
static void credit_row(const rt_shard_map *sm, const rt_scenario *s, int f, uint64_t id,
                       double times, touched *t)
{
    int dim = s->model.tables[f].dim;
    if (sm->kind == RT_SHARD_ROW) {
        int q = (int)(id / sm->block[f]);
        t->rows[q] += times, t->elems[q] += times * dim;
        return;
    }
    for (int c = 0; c < sm->col_shards; c++) {
        int q = sm->owner[f * sm->col_shards + c];
        t->rows[q] += times, t->elems[q] += times * dim / sm->col_shards;
    }
}

/* Exact: distinct IDs of feature F over ranks [lo, hi). */
static int credit_sampled(const rt_shard_map *sm, const rt_scenario *s, const rt_workload *w, int f,
                          int lo, int hi, touched *t)
{
    uint64_t n = 0;
    for (int r = lo; r < hi; r++)
        n += rt_workload_batch(w, r, f)->n_ids;
    uint64_t *ids = malloc(sizeof(uint64_t) * (size_t)(n ? n : 1));
    if (!ids) return -1;
    uint64_t k = 0;
    for (int r = lo; r < hi; r++) {
        const rt_feature_batch *fb = rt_workload_batch(w, r, f);
        memcpy(ids + k, fb->ids, sizeof(uint64_t) * fb->n_ids);
        k += fb->n_ids;
    }
    qsort(ids, (size_t)n, sizeof *ids, u64_cmp);
    for (uint64_t i = 0; i < n; i++)
        if (i == 0 || ids[i] != ids[i - 1]) credit_row(sm, s, f, ids[i], 1, t);
    free(ids);
    return 0;
}

/* 1 - (1 - p)^n without cancellation. */
static double hit(double p, double n)
{
    return -expm1(n * log1p(-p));
}

enum { ZIPF_EXACT_ROWS = 1 << 16, ZIPF_TAIL_STEPS = 512 };

/* Expected distinct rows in [lo, hi) among N draws of table F's ID distribution. Zipf: the
 * first 2^16 ranks summed term by term, the tail by the midpoint rule on log-spaced steps. */
static double expected_distinct(const rt_scenario *s, int f, double n, uint64_t lo, uint64_t hi)
{
    const rt_table *tb = &s->model.tables[f];
    const rt_id_spec *ids = s->workload.has_ids ? &s->workload.ids : &tb->ids;
    double rows = (double)tb->rows;
    if (ids->kind != RT_DIST_ZIPF) return (double)(hi - lo) * hit(1.0 / rows, n);
    double a = ids->alpha, norm = 0;
    uint64_t head = tb->rows < ZIPF_EXACT_ROWS ? tb->rows : ZIPF_EXACT_ROWS;
    for (uint64_t i = 1; i <= head; i++)
        norm += pow((double)i, -a);
    if (tb->rows > head) {
        double x0 = head + 0.5, x1 = rows + 0.5;
        norm += fabs(a - 1) < 1e-12 ? log(x1 / x0) : (pow(x1, 1 - a) - pow(x0, 1 - a)) / (1 - a);
    }
    double e = 0;
    for (uint64_t i = lo; i < hi && i < head; i++)
        e += hit(pow((double)(i + 1), -a) / norm, n);
    if (hi <= head) return e;
    double x0 = (double)(lo > head ? lo : head), x1 = (double)hi,
           step = pow(x1 / x0, 1.0 / ZIPF_TAIL_STEPS);
    for (double x = x0; x < x1; x *= step) {
        double next = fmin(x * step, x1), mid = sqrt(x * next) + 1;
        e += (next - x) * hit(pow(mid, -a) / norm, n);
    }
    return e;
}

/* Statistical: expected distinct rows of feature F among the draws of RANKS ranks. */
static void credit_expected(const rt_shard_map *sm, const rt_scenario *s, const rt_workload *w,
                            int f, int ranks, touched *t)
{
    double per_rank = 0;
    for (int r = 0; r < w->n_reps; r++)
        per_rank += (double)rt_workload_batch(w, r, f)->n_ids;
    double n = per_rank / w->n_reps * ranks, dim = s->model.tables[f].dim;
    if (sm->kind == RT_SHARD_ROW) {
        for (int q = 0; q < sm->ranks; q++) {
            uint64_t lo = sm->block[f] * (uint64_t)q, rows = s->model.tables[f].rows;
            if (lo >= rows) continue;
            uint64_t hi = lo + sm->block[f] > rows ? rows : lo + sm->block[f];
            double d = expected_distinct(s, f, n, lo, hi);
            t->rows[q] += d, t->elems[q] += d * dim;
        }
        return;
    }
    double d = expected_distinct(s, f, n, 0, s->model.tables[f].rows);
    for (int c = 0; c < sm->col_shards; c++) {
        int q = sm->owner[f * sm->col_shards + c];
        t->rows[q] += d, t->elems[q] += d * dim / sm->col_shards;
    }
}

/* What each shard owner synchronizes: the union over all groups (dense) or the sum of every
 * group's own touched rows (sparse). */
static int count_touched(const hsp_opts *o, const rt_shard_map *sm, const rt_scenario *s,
                         const rt_workload *w, touched *t)
{
    int N = w->world, I = o->group_size, M = N / I;
    for (int f = 0; f < s->model.n_tables; f++) {
        if (!w->exact) {
            touched one = {calloc((size_t)I, sizeof(double)), calloc((size_t)I, sizeof(double))};
            if (!one.rows || !one.elems) {
                free(one.rows), free(one.elems);
                return -1;
            }
            credit_expected(sm, s, w, f, o->sync == HSP_SYNC_DENSE ? N : I, &one);
            double times = o->sync == HSP_SYNC_DENSE ? 1 : M; /* groups are alike in expectation */
            for (int q = 0; q < I; q++)
                t->rows[q] += times * one.rows[q], t->elems[q] += times * one.elems[q];
            free(one.rows), free(one.elems);
            continue;
        }
        if (o->sync == HSP_SYNC_DENSE) {
            if (credit_sampled(sm, s, w, f, 0, N, t)) return -1;
        } else {
            for (int j = 0; j < M; j++)
                if (credit_sampled(sm, s, w, f, j * I, (j + 1) * I, t)) return -1;
        }
    }
    return 0;
}

/* Gradient AlltoAll inside the group, the cross-group sync (when there are groups to sync),
 * then the update: exchange.c's backward with the sync in between. */
static void add_backward(rt_exchange *x, rt_graph *g, const rt_scenario *s, int after, int M, int I,
                         rt_coll_kind sync_kind, int *sync)
{
    x->grad_a2a = rt_graph_add_collective(g, "emb.bwd.grad_a2a", RT_STREAM_COMM, RT_COLL_ALLTOALLV,
                                          RT_ALGO_AUTO, x->group, "gradient_alltoall", &after, 1);
    int last = x->grad_a2a;
    *sync = -1;
    if (M > 1) {
        rt_group across = {M, I};
        *sync = last =
            rt_graph_add_collective(g, "emb.bwd.cross_group_sync", RT_STREAM_COMM, sync_kind,
                                    RT_ALGO_AUTO, across, "cross_group_gradient_sync", &last, 1);
    }
    x->update = rt_graph_add_kernel(g, "emb.bwd.update", RT_STREAM_COMPUTE, RT_K_SPARSE_UPDATE,
                                    s->plan.embedding_dtype, "sparse_update", &last, 1);
    rt_graph_set_role(g, x->grad_a2a, RT_ROLE_GRAD_A2A, x->unit, -1);
    rt_graph_set_role(g, x->update, RT_ROLE_SPARSE_UPDATE, x->unit, -1);
    rt_exchange_add_dynamic_bwd(x, g, s);
    if (*sync >= 0) {
        rt_graph_set_role(g, *sync, RT_ROLE_GRAD_SYNC, x->unit, -1);
        g->units[x->unit].sync = (rt_group){M, I};
        g->units[x->unit].sync_sparse = sync_kind == RT_COLL_ALLGATHER;
    }
}

static void fill_sync(rt_graph *g, int op, const hsp_opts *o, const touched *t,
                      const rt_scenario *s, const rt_workload *w, int r)
{
    int k = w->rep_rank[r] % o->group_size;
    double cb = (double)rt_dtype_bytes(s->plan.comm_dtype);
    rt_op_cost *c = rt_graph_cost(g, op, r);
    c->bytes = t->elems[k] * cb;
    if (o->sync == HSP_SYNC_SPARSE) c->bytes += t->rows[k] * s->workload.id_bytes;
}

static rt_graph *hsp_build(const rt_scenario *s, const void *opts, const rt_workload *w, FILE *err)
{
    const hsp_opts *o = opts;
    int N = w->world, I = o->group_size, M = N / I, T = s->model.n_tables;
    rt_group world = {N, 1}, group = {I, 1};
    rt_shard_map sm = {0};
    rt_exchange x = {
        .tag = "", .n_features = T, .group = group, .shards = &sm, .fusion = o->fusion};
    touched t = {calloc((size_t)I, sizeof(double)), calloc((size_t)I, sizeof(double))};
    rt_graph *g = NULL;
    int *all = malloc(sizeof(int) * (size_t)(T ? T : 1));
    if (!all || !t.rows || !t.elems) {
        fprintf(err, "hsp: out of memory placing %d tables over groups of %d\n", T, I);
        goto out;
    }
    if (rt_shard_map_build(s, I, NULL, 0, &sm)) goto out;
    if (count_touched(o, &sm, s, w, &t)) {
        fprintf(err, "hsp: out of memory counting touched rows\n");
        goto out;
    }
    for (int f = 0; f < T; f++)
        all[f] = f;
    x.features = all;
    if (rt_exchange_route(&x, s, w, err)) goto out;
    g = rt_graph_new(N, w->n_reps, w->rep_rank, w->rep_weight);
    if (!g) goto out;
    rt_dense_ops d;
    int sync;
    rt_exchange_add_ids(&x, g, s, -1);
    rt_exchange_add_embeddings(&x, g, s);
    rt_plan_add_dense(g, s, &x.unpermute, 1, world, &d);
    add_backward(&x, g, s, d.last_bwd, M, I,
                 o->sync == HSP_SYNC_SPARSE ? RT_COLL_ALLGATHER : RT_COLL_ALLREDUCE, &sync);
    for (int r = 0; r < w->n_reps; r++) {
        rt_exchange_fill(&x, g, s, w, r);
        rt_plan_fill_dense(g, s, w, &d, r);
        if (sync >= 0) fill_sync(g, sync, o, &t, s, w, r);
        double sync_buf = sync >= 0 ? rt_graph_cost(g, sync, r)->bytes : 0;
        g->peak_hbm_bytes[r] = rt_exchange_memory(&x, g, s, r, w->rep_rank[r]) +
                               rt_plan_dense_memory(s, w, r) + sync_buf;
    }
    rt_plan_set_model_flops(g, s, w);
out:
    rt_exchange_free(&x);
    rt_shard_map_free(&sm);
    free(all), free(t.rows), free(t.elems);
    return g;
}

static int hsp_configure(const rt_scenario *s, void **opts)
{
    rt_cfg *c = s->plan.cfg;
    struct fy_node *node = s->plan.node;
    int N = rt_scenario_ranks(s), G = s->topology.node.devices, sync = HSP_SYNC_DENSE;
    int64_t I = G;
    if (rt_cfg_get_int(c, node, "group_size", 0, 1, 1 << 24, &I) < 0 ||
        rt_cfg_get_enum(c, node, "sync", 0, hsp_sync_names, &sync) < 0)
        return -1;
    struct fy_node *at = fy_node_mapping_lookup_by_string(node, "group_size", FY_NT);
    if (I > N || N % I) {
        rt_cfg_error(c, at ? at : node,
                     "group size %lld does not divide the %d ranks; allowed: a divisor of %d",
                     (long long)I, N, N);
        return -1;
    }
    if (I % G && G % I) {
        rt_cfg_error(
            c, at ? at : node,
            "group size %lld is neither a multiple nor a divisor of the %d devices per node "
            "(TurboGR groups whole nodes or equal parts of one); allowed: a multiple or divisor of "
            "%d",
            (long long)I, G, G);
        return -1;
    }
    rt_fusion fusion;
    if (rt_fusion_parse(s, RT_DEDUP_NONE, &fusion)) return -1;
    hsp_opts *o = malloc(sizeof *o);
    if (!o) return -1;
    o->fusion = fusion;
    o->group_size = (int)I;
    o->sync = (hsp_sync)sync;
    *opts = o;
    return 0;
}

static const char *const hsp_keys[] = {"group_size", "sync", "fusion", NULL};

const rt_plan rt_plan_hsp = {
    .name = "hsp",
    .description = "TurboGR hierarchical sparse parallelism: a table replica per group of I ranks, "
                   "AlltoAll world I, cross-group gradient sync before the update",
    .option_keys = hsp_keys,
    .configure = hsp_configure,
    .build = hsp_build,
};
