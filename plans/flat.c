/* flat: the TorchRec baseline (DESIGN.md section 4). Tables sharded over all N ranks;
 * forward: bucketize, ID AlltoAll, lookup + pool, embedding AlltoAll, layout recovery;
 * dense forward and backward per layer; backward: gradient AlltoAll, fused sparse update on
 * the owner, dense AllReduce (on the comm stream, overlapping the sparse backward), dense
 * optimizer step. Per-peer byte counts come from the sampled IDs. */
#include <stdlib.h>
#include <string.h>

#include "plan.h"
#include "plan_common.h"
#include "sharding.h"

/* What a representative rank sends to each peer p, from its own sampled IDs. Receives follow
 * by symmetry: rank q receives from p what p's representative sends to q. */
typedef struct flat_traffic {
    int N, R;
    uint64_t *n_ids;     /* [r * N + p] IDs routed to p */
    uint64_t *seq_back;  /* [r * N + p] sequence-embedding bytes p returns */
    double *row_bytes;   /* [r * N + p] table bytes p reads for them */
    double *upd_bytes;   /* [r * N + p] table + optimizer-state bytes p updates for them */
    uint64_t *lens_to;   /* [p] length bytes every sender sends to p */
    uint64_t *pooled_out;/* [p] pooled-embedding bytes p returns to every requester */
} flat_traffic;

static void traffic_free(flat_traffic *t)
{
    free(t->n_ids), free(t->seq_back), free(t->row_bytes), free(t->upd_bytes);
    free(t->lens_to), free(t->pooled_out);
}

static int traffic_alloc(flat_traffic *t, int R, int N)
{
    size_t rn = (size_t)R * (size_t)N;
    *t = (flat_traffic){.N = N, .R = R};
    t->n_ids = calloc(rn, sizeof(uint64_t));
    t->seq_back = calloc(rn, sizeof(uint64_t));
    t->row_bytes = calloc(rn, sizeof(double));
    t->upd_bytes = calloc(rn, sizeof(double));
    t->lens_to = calloc((size_t)N, sizeof(uint64_t));
    t->pooled_out = calloc((size_t)N, sizeof(uint64_t));
    return t->n_ids && t->seq_back && t->row_bytes && t->upd_bytes && t->lens_to && t->pooled_out ? 0 : -1;
}

/* Adds the IDs of feature F in FB, sent by rep R, to the traffic it causes. */
static void route_feature(const rt_scenario *s, const rt_shard_map *sm, int f,
                          const rt_feature_batch *fb, flat_traffic *t, int r)
{
    const rt_table *tb = &s->model.tables[f];
    long base = (long)r * t->N;
    double tbytes = (double)rt_dtype_bytes(s->plan.embedding_dtype);
    double cb = (double)rt_dtype_bytes(s->plan.comm_dtype);
    double state = rt_optimizer_state_floats(tb->optimizer, tb->dim) * 4.0 * 2; /* read + write */
    if (sm->kind == RT_SHARD_ROW) {
        double row = tb->dim * tbytes;
        double upd = tb->dim * (2 * tbytes + cb) + state;
        uint64_t back = tb->sequence ? (uint64_t)(tb->dim * cb) : 0;
        for (uint64_t i = 0; i < fb->n_ids; i++) {
            long p = base + (long)(fb->ids[i] / sm->block[f]);
            t->n_ids[p]++;
            t->row_bytes[p] += row;
            t->upd_bytes[p] += upd;
            t->seq_back[p] += back;
        }
        return;
    }
    /* Table-wise and column-wise: every ID of the feature goes to each shard's owner. */
    int width = tb->dim / sm->col_shards;
    double n = (double)fb->n_ids;
    for (int c = 0; c < sm->col_shards; c++) {
        long p = base + (sm->kind == RT_SHARD_COLUMN ? sm->owner[f * sm->col_shards + c] : sm->owner[f]);
        t->n_ids[p] += fb->n_ids;
        t->row_bytes[p] += n * width * tbytes;
        t->upd_bytes[p] += n * (width * (2 * tbytes + cb) + state / sm->col_shards);
        if (tb->sequence) t->seq_back[p] += fb->n_ids * (uint64_t)(width * cb);
    }
}

static void per_owner_constants(const rt_scenario *s, const rt_shard_map *sm, flat_traffic *t)
{
    uint64_t b = (uint64_t)s->workload.batch_per_rank;
    size_t cb = rt_dtype_bytes(s->plan.comm_dtype);
    for (int p = 0; p < t->N; p++)
        for (int f = 0; f < s->model.n_tables; f++) {
            int w = rt_shard_dim(sm, s, f, p);
            if (!w) continue;
            /* KJT lengths: one uint32 per sample for every feature shard p serves. */
            int shards = sm->kind == RT_SHARD_COLUMN ? w / (s->model.tables[f].dim / sm->col_shards) : 1;
            t->lens_to[p] += b * 4 * (uint64_t)shards;
            if (!s->model.tables[f].sequence) t->pooled_out[p] += b * (uint64_t)w * cb;
        }
}

typedef struct flat_ops {
    int bucketize, ids_a2a, lookup, out_a2a, unpermute, grad_a2a, update;
    rt_dense_ops dense;
} flat_ops;

static void add_ops(rt_graph *g, const rt_scenario *s, flat_ops *o)
{
    rt_group world = {g->world, 1};
    o->bucketize = rt_graph_add_kernel(g, "emb.fwd.bucketize", RT_STREAM_COMPUTE, RT_K_BUCKETIZE,
                                       RT_DT_FP32, "bucketize_ids", NULL, 0);
    o->ids_a2a = rt_graph_add_collective(g, "emb.fwd.ids_a2a", RT_STREAM_COMM, RT_COLL_ALLTOALLV,
                                         RT_ALGO_AUTO, world, "ids_alltoall", &o->bucketize, 1);
    o->lookup = rt_graph_add_kernel(g, "emb.fwd.lookup", RT_STREAM_COMPUTE, RT_K_LOOKUP,
                                    s->plan.embedding_dtype, "embedding_lookup", &o->ids_a2a, 1);
    o->out_a2a = rt_graph_add_collective(g, "emb.fwd.out_a2a", RT_STREAM_COMM, RT_COLL_ALLTOALLV,
                                         RT_ALGO_AUTO, world, "embedding_alltoall", &o->lookup, 1);
    o->unpermute = rt_graph_add_kernel(g, "emb.fwd.unpermute", RT_STREAM_COMPUTE, RT_K_UNPERMUTE,
                                       RT_DT_FP32, "embedding_recovery", &o->out_a2a, 1);
    rt_plan_add_dense(g, s, o->unpermute, world, &o->dense);
    o->grad_a2a = rt_graph_add_collective(g, "emb.bwd.grad_a2a", RT_STREAM_COMM, RT_COLL_ALLTOALLV,
                                          RT_ALGO_AUTO, world, "gradient_alltoall",
                                          &o->dense.last_bwd, 1);
    o->update = rt_graph_add_kernel(g, "emb.bwd.update", RT_STREAM_COMPUTE, RT_K_SPARSE_UPDATE,
                                    s->plan.embedding_dtype, "sparse_update", &o->grad_a2a, 1);
}

static void fill_sparse(rt_graph *g, const rt_scenario *s, const rt_workload *w,
                        const flat_traffic *t, const flat_ops *o, int r)
{
    int N = t->N, rank = w->rep_rank[r];
    int idb = s->workload.id_bytes;
    long mine = (long)r * N;
    rt_op_cost *ids = rt_graph_cost(g, o->ids_a2a, r), *out = rt_graph_cost(g, o->out_a2a, r);
    rt_op_cost *grad = rt_graph_cost(g, o->grad_a2a, r);
    ids->send = rt_graph_peer_bytes(g, N), ids->recv = rt_graph_peer_bytes(g, N);
    out->send = rt_graph_peer_bytes(g, N), out->recv = rt_graph_peer_bytes(g, N);
    double in_ids = 0, rows = 0, upd = 0, sent_ids = 0;
    for (int p = 0; p < N; p++) {
        /* The representative standing for peer p (p itself in exact mode). */
        long from = (long)(w->exact ? p : (int)((long)p * w->n_reps / N)) * N + rank;
        ids->send[p] = t->n_ids[mine + p] * (uint64_t)idb + t->lens_to[p];
        ids->recv[p] = t->n_ids[from] * (uint64_t)idb + t->lens_to[rank];
        out->send[p] = t->pooled_out[rank] + t->seq_back[from];
        out->recv[p] = t->pooled_out[p] + t->seq_back[mine + p];
        in_ids += (double)t->n_ids[from];
        rows += t->row_bytes[from];
        upd += t->upd_bytes[from];
        sent_ids += (double)t->n_ids[mine + p];
        ids->bytes += (double)ids->send[p], ids->recv_bytes += (double)ids->recv[p];
        out->bytes += (double)out->send[p], out->recv_bytes += (double)out->recv[p];
    }
    /* The gradient AlltoAll mirrors the embedding AlltoAll. */
    grad->send = out->recv, grad->recv = out->send;
    grad->bytes = out->recv_bytes, grad->recv_bytes = out->bytes;

    /* Bucketize reads each ID and writes it with its permutation index. */
    rt_graph_cost(g, o->bucketize, r)->bytes = sent_ids * (idb + idb + 4);
    rt_op_cost *lk = rt_graph_cost(g, o->lookup, r);
    lk->bytes = in_ids * idb + rows + out->bytes;
    lk->flops = rows / (double)rt_dtype_bytes(s->plan.embedding_dtype); /* one add per element */
    rt_graph_cost(g, o->unpermute, r)->bytes = 2 * out->recv_bytes;
    rt_op_cost *up = rt_graph_cost(g, o->update, r);
    up->bytes = in_ids * idb + upd;
    up->flops = 4 * rows / (double)rt_dtype_bytes(s->plan.embedding_dtype);
}

static double sparse_memory(const rt_scenario *s, const rt_shard_map *sm, int rank, const rt_op_cost *out,
                            const rt_op_cost *ids)
{
    double bytes = 0;
    for (int f = 0; f < s->model.n_tables; f++) {
        const rt_table *tb = &s->model.tables[f];
        double rows = (double)rt_shard_rows(sm, s, f, rank);
        int width = rt_shard_dim(sm, s, f, rank);
        int state = rt_optimizer_state_floats(tb->optimizer, width);
        bytes += rows * (width * (double)rt_dtype_bytes(s->plan.embedding_dtype) + state * 4.0);
    }
    /* AlltoAll buffers live for the iteration: sends and receives of IDs and embeddings,
     * and the gradients of the same size. */
    return bytes + ids->bytes + ids->recv_bytes + 2 * (out->bytes + out->recv_bytes);
}

static rt_graph *flat_build(const rt_scenario *s, const void *opts, const rt_workload *w, FILE *err)
{
    (void)opts;
    int N = w->world, R = w->n_reps;
    rt_shard_map sm = {0};
    flat_traffic t = {0};
    rt_graph *g = NULL;
    if (rt_shard_map_build(s, N, &sm) || traffic_alloc(&t, R, N)) {
        fprintf(err, "flat: out of memory for %d x %d traffic matrices\n", R, N);
        goto out;
    }
    per_owner_constants(s, &sm, &t);
    for (int r = 0; r < R; r++)
        for (int f = 0; f < w->n_features; f++) route_feature(s, &sm, f, rt_workload_batch(w, r, f), &t, r);
    g = rt_graph_new(N, R, w->rep_rank, w->rep_weight);
    if (!g) goto out;
    flat_ops o;
    add_ops(g, s, &o);
    for (int r = 0; r < R; r++) {
        fill_sparse(g, s, w, &t, &o, r);
        rt_plan_fill_dense(g, s, w, &o.dense, r);
        g->peak_hbm_bytes[r] = sparse_memory(s, &sm, w->rep_rank[r], rt_graph_cost(g, o.out_a2a, r),
                                             rt_graph_cost(g, o.ids_a2a, r)) +
                               rt_plan_dense_memory(s, w, r);
    }
    rt_plan_set_model_flops(g, s, w);
out:
    traffic_free(&t);
    rt_shard_map_free(&sm);
    return g;
}

static int flat_configure(const rt_scenario *s, void **opts)
{
    (void)s;
    *opts = NULL;
    return 0;
}

static const char *const flat_keys[] = {NULL};

const rt_plan rt_plan_flat = {
    .name = "flat",
    .description = "TorchRec baseline: tables sharded over all ranks, world-size AlltoAlls",
    .option_keys = flat_keys,
    .configure = flat_configure,
    .build = flat_build,
};
