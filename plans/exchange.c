#include "exchange.h"

#include <stdlib.h>
#include <string.h>


void rt_exchange_free(rt_exchange *x)
{
    free(x->n_ids), free(x->seq_back), free(x->row_bytes), free(x->upd_bytes);
    free(x->lens_to), free(x->pooled_out);
    x->n_ids = x->seq_back = x->lens_to = x->pooled_out = NULL;
    x->row_bytes = x->upd_bytes = NULL;
}

/* Adds the IDs of table F in FB, sent by rep R, to the traffic they cause. */
static void route_feature(rt_exchange *x, const rt_scenario *s, int f, const rt_feature_batch *fb, int r)
{
    const rt_shard_map *sm = x->shards;
    const rt_table *tb = &s->model.tables[f];
    long base = (long)r * x->G;
    double tbytes = (double)rt_dtype_bytes(s->plan.embedding_dtype);
    double cb = (double)rt_dtype_bytes(s->plan.comm_dtype);
    double state = rt_optimizer_state_floats(tb->optimizer, tb->dim) * 4.0 * 2; /* read + write */
    if (sm->kind == RT_SHARD_ROW) {
        double row = tb->dim * tbytes;
        double upd = tb->dim * (2 * tbytes + cb) + state;
        uint64_t back = tb->sequence ? (uint64_t)(tb->dim * cb) : 0;
        for (uint64_t i = 0; i < fb->n_ids; i++) {
            long q = base + (long)(fb->ids[i] / sm->block[f]);
            x->n_ids[q]++;
            x->row_bytes[q] += row;
            x->upd_bytes[q] += upd;
            x->seq_back[q] += back;
        }
        return;
    }
    /* Table-wise and column-wise: every ID of the feature goes to each shard's owner. */
    int width = tb->dim / sm->col_shards;
    double n = (double)fb->n_ids;
    for (int c = 0; c < sm->col_shards; c++) {
        long q = base + sm->owner[f * sm->col_shards + c];
        x->n_ids[q] += fb->n_ids;
        x->row_bytes[q] += n * width * tbytes;
        x->upd_bytes[q] += n * (width * (2 * tbytes + cb) + state / sm->col_shards);
        if (tb->sequence) x->seq_back[q] += fb->n_ids * (uint64_t)(width * cb);
    }
}

static void per_owner_constants(rt_exchange *x, const rt_scenario *s)
{
    uint64_t b = (uint64_t)s->workload.batch_per_rank;
    size_t cb = rt_dtype_bytes(s->plan.comm_dtype);
    for (int q = 0; q < x->G; q++)
        for (int i = 0; i < x->n_features; i++) {
            int f = x->features[i];
            int w = rt_shard_dim(x->shards, s, f, q);
            if (!w) continue;
            /* KJT lengths: one uint32 per sample for every feature shard q serves. */
            int shard_w = x->shards->kind == RT_SHARD_COLUMN ? s->model.tables[f].dim / x->shards->col_shards
                                                             : w;
            x->lens_to[q] += b * 4 * (uint64_t)(w / shard_w);
            if (!s->model.tables[f].sequence) x->pooled_out[q] += b * (uint64_t)w * cb;
        }
}

int rt_exchange_route(rt_exchange *x, const rt_scenario *s, const rt_workload *w, FILE *err)
{
    x->G = x->group.size;
    x->R = w->n_reps;
    size_t rg = (size_t)x->R * (size_t)x->G;
    x->n_ids = calloc(rg, sizeof(uint64_t));
    x->seq_back = calloc(rg, sizeof(uint64_t));
    x->row_bytes = calloc(rg, sizeof(double));
    x->upd_bytes = calloc(rg, sizeof(double));
    x->lens_to = calloc((size_t)x->G, sizeof(uint64_t));
    x->pooled_out = calloc((size_t)x->G, sizeof(uint64_t));
    if (!x->n_ids || !x->seq_back || !x->row_bytes || !x->upd_bytes || !x->lens_to || !x->pooled_out) {
        fprintf(err, "exchange: out of memory for %d x %d traffic matrices\n", x->R, x->G);
        rt_exchange_free(x);
        return -1;
    }
    per_owner_constants(x, s);
    for (int r = 0; r < x->R; r++)
        for (int i = 0; i < x->n_features; i++)
            route_feature(x, s, x->features[i], rt_workload_batch(w, r, x->features[i]), r);
    return 0;
}

/* Op names live as long as the graph: compose them into static storage per exchange tag. */
static const char *op_name(const rt_exchange *x, const char *base, char *buf, size_t n)
{
    if (!x->tag || !x->tag[0]) return base;
    snprintf(buf, n, "%s.%s", base, x->tag);
    return buf;
}

void rt_exchange_add_ids(rt_exchange *x, rt_graph *g, const rt_scenario *s, int after)
{
    (void)s;
    char b[96];
    x->bucketize = rt_graph_add_kernel(g, "emb.fwd.bucketize", RT_STREAM_COMPUTE, RT_K_BUCKETIZE, RT_DT_FP32,
                                       rt_graph_name(g, op_name(x, "bucketize_ids", b, sizeof b)),
                                       &after, after >= 0);
    x->ids_a2a = rt_graph_add_collective(g, "emb.fwd.ids_a2a", RT_STREAM_COMM, RT_COLL_ALLTOALLV, RT_ALGO_AUTO,
                                         x->group, rt_graph_name(g, op_name(x, "ids_alltoall", b, sizeof b)),
                                         &x->bucketize, 1);
}

void rt_exchange_add_embeddings(rt_exchange *x, rt_graph *g, const rt_scenario *s)
{
    char b[96];
    x->lookup = rt_graph_add_kernel(g, "emb.fwd.lookup", RT_STREAM_COMPUTE, RT_K_LOOKUP, s->plan.embedding_dtype,
                                    rt_graph_name(g, op_name(x, "embedding_lookup", b, sizeof b)), &x->ids_a2a, 1);
    x->out_a2a = rt_graph_add_collective(g, "emb.fwd.out_a2a", RT_STREAM_COMM, RT_COLL_ALLTOALLV, RT_ALGO_AUTO,
                                         x->group, rt_graph_name(g, op_name(x, "embedding_alltoall", b, sizeof b)),
                                         &x->lookup, 1);
    x->unpermute = rt_graph_add_kernel(g, "emb.fwd.unpermute", RT_STREAM_COMPUTE, RT_K_UNPERMUTE, RT_DT_FP32,
                                       rt_graph_name(g, op_name(x, "embedding_recovery", b, sizeof b)),
                                       &x->out_a2a, 1);
}

void rt_exchange_add_backward(rt_exchange *x, rt_graph *g, const rt_scenario *s, int after)
{
    char b[96];
    x->grad_a2a = rt_graph_add_collective(g, "emb.bwd.grad_a2a", RT_STREAM_COMM, RT_COLL_ALLTOALLV, RT_ALGO_AUTO,
                                          x->group, rt_graph_name(g, op_name(x, "gradient_alltoall", b, sizeof b)),
                                          &after, 1);
    x->update = rt_graph_add_kernel(g, "emb.bwd.update", RT_STREAM_COMPUTE, RT_K_SPARSE_UPDATE,
                                    s->plan.embedding_dtype, rt_graph_name(g, op_name(x, "sparse_update", b, sizeof b)),
                                    &x->grad_a2a, 1);
}

void rt_exchange_fill(const rt_exchange *x, rt_graph *g, const rt_scenario *s, const rt_workload *w, int r)
{
    int G = x->G, rank = w->rep_rank[r];
    int k = rt_group_index(x->group, rank); /* this rank's index in its group */
    int idb = s->workload.id_bytes;
    long mine = (long)r * G;
    rt_op_cost *ids = rt_graph_cost(g, x->ids_a2a, r), *out = rt_graph_cost(g, x->out_a2a, r);
    rt_op_cost *grad = rt_graph_cost(g, x->grad_a2a, r);
    ids->send = rt_graph_peer_bytes(g, G), ids->recv = rt_graph_peer_bytes(g, G);
    out->send = rt_graph_peer_bytes(g, G), out->recv = rt_graph_peer_bytes(g, G);
    double in_ids = 0, rows = 0, upd = 0, sent_ids = 0;
    for (int q = 0; q < G; q++) {
        /* Member q receives what its own representative sends to index k. */
        long from = (long)rt_exchange_rep_of(w, rt_group_member(x->group, rank, q)) * G + k;
        ids->send[q] = x->n_ids[mine + q] * (uint64_t)idb + x->lens_to[q];
        ids->recv[q] = x->n_ids[from] * (uint64_t)idb + x->lens_to[k];
        out->send[q] = x->pooled_out[k] + x->seq_back[from];
        out->recv[q] = x->pooled_out[q] + x->seq_back[mine + q];
        in_ids += (double)x->n_ids[from];
        rows += x->row_bytes[from];
        upd += x->upd_bytes[from];
        sent_ids += (double)x->n_ids[mine + q];
        ids->bytes += (double)ids->send[q], ids->recv_bytes += (double)ids->recv[q];
        out->bytes += (double)out->send[q], out->recv_bytes += (double)out->recv[q];
    }
    /* The gradient AlltoAll mirrors the embedding AlltoAll. */
    grad->send = out->recv, grad->recv = out->send;
    grad->bytes = out->recv_bytes, grad->recv_bytes = out->bytes;

    double eb = (double)rt_dtype_bytes(s->plan.embedding_dtype);
    /* Bucketize reads each ID and writes it with its permutation index. */
    rt_graph_cost(g, x->bucketize, r)->bytes = sent_ids * (idb + idb + 4);
    rt_op_cost *lk = rt_graph_cost(g, x->lookup, r);
    lk->bytes = in_ids * idb + rows + out->bytes;
    lk->flops = rows / eb; /* one add per pooled element */
    rt_graph_cost(g, x->unpermute, r)->bytes = 2 * out->recv_bytes;
    rt_op_cost *up = rt_graph_cost(g, x->update, r);
    up->bytes = in_ids * idb + upd;
    up->flops = 4 * rows / eb;
}

double rt_exchange_memory(const rt_exchange *x, const rt_graph *g, const rt_scenario *s, int r, int rank)
{
    int k = rt_group_index(x->group, rank);
    double bytes = 0;
    for (int i = 0; i < x->n_features; i++) {
        int f = x->features[i];
        const rt_table *tb = &s->model.tables[f];
        double rows = (double)rt_shard_rows(x->shards, s, f, k);
        int width = rt_shard_dim(x->shards, s, f, k);
        int state = rt_optimizer_state_floats(tb->optimizer, width);
        bytes += rows * (width * (double)rt_dtype_bytes(s->plan.embedding_dtype) + state * 4.0);
    }
    const rt_op_cost *ids = rt_graph_cost(g, x->ids_a2a, r), *out = rt_graph_cost(g, x->out_a2a, r);
    /* AlltoAll buffers live for the iteration: IDs sent and received, embeddings and their
     * gradients sent and received. */
    return bytes + ids->bytes + ids->recv_bytes + 2 * (out->bytes + out->recv_bytes);
}
