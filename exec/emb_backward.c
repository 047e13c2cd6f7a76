/* The backward of an embedding exchange: the gradient AlltoAll (the embedding messages' way
 * back) and the owner's fused sparse update, once per distinct row with stage-2 dedup. */
#include <stdlib.h>
#include <string.h>

#include "emb_internal.h"

/* Stage 1: the gradient of each distinct ID of feature I, summed over its occurrences. */
static int distinct_grads(rt_xexec *x, rt_xunit *xu, int i, int op, FILE *err)
{
    rt_xdev *d = x->dev;
    const rt_xuniq *u = &xu->s1[i];
    int t = xu->u->features[i], dim = x->s->model.tables[t].dim;
    const float *g = rt_xexec_emb_grad(x, t);
    if (!g) return rt_xemb_fail(err, x, op, "the dense net has no gradient for this feature");
    size_t gb = sizeof(float) * (size_t)(u->n_uniq * dim);
    if (rt_xbuf_reserve(d, &xu->s1_grad[i], gb, err) || d->ops->zero(d, xu->s1_grad[i].p, gb))
        return -1;
    if (!x->s->model.tables[t].sequence) { /* each ID carries its bag's gradient */
        if (rt_xbuf_reserve(d, &xu->tmp_b, sizeof(float) * (size_t)(u->n * dim), err)) return -1;
        if (rt_xemb_kcheck(d->ops->gather_rows(d, g, x->v.batch.batch, dim, xu->s1_bag[i].p, u->n,
                                               xu->tmp_b.p),
                           err, x, op, "gather_rows"))
            return -1;
        g = xu->tmp_b.p;
    }
    return rt_xemb_kcheck(
        d->ops->scatter_add_rows(d, g, u->n, dim, u->inv_dev.p, u->n_uniq, xu->s1_grad[i].p), err,
        x, op, "scatter_add_rows");
}

/* The gradient block this rank sends member Q for entry E, in fp32 into BASE (the message
 * layout in elements). */
static int pack_grad(rt_xexec *x, rt_xunit *xu, float *base, int e, int q, int op, FILE *err)
{
    int E = xu->n_entries, F = xu->u->n_features;
    const rt_xentry *en = &xu->entries[e];
    int dim = x->s->model.tables[en->table].dim;
    size_t rows = rt_xemb_rows(xu, e, x->v.batch.batch, xu->n_to[q * E + e]);
    const float *g = xu->u->dedup_send ? xu->s1_grad[en->i].p : rt_xexec_emb_grad(x, en->table);
    int64_t g_rows = xu->u->dedup_send ? xu->s1[en->i].n_uniq
                     : en->sequence    ? (int64_t)x->v.batch.f[en->table].n_ids
                                       : x->v.batch.batch;
    float *dst = base + xu->recv_at[q * E + e];
    rt_xdev *d = x->dev;
    if (!g) return rt_xemb_fail(err, x, op, "the dense net has no gradient for this feature");
    if (xu->u->sharding == RT_SHARD_ROW && rt_xemb_per_row(xu, e))
        return rt_xemb_kcheck(d->ops->gather_rows(d, g, g_rows, dim, xu->pos_dev[q * F + en->i].p,
                                                  (int64_t)rows, dst),
                              err, x, op, "gather_rows");
    return d->ops->copy2d(d, dst, (size_t)en->width * sizeof(float), g + en->col0,
                          (size_t)dim * sizeof(float), (size_t)en->width * sizeof(float), rows);
}

int rt_xemb_grad_a2a(rt_xexec *x, rt_xunit *xu, int op, FILE *err)
{
    int G = xu->G, E = xu->n_entries;
    if (rt_xbuf_reserve(x->dev, &xu->grad_send, rt_xemb_total(xu->emb_rc, G), err) ||
        rt_xbuf_reserve(x->dev, &xu->grad_recv, rt_xemb_total(xu->emb_sc, G), err))
        return -1;
    for (int i = 0; xu->u->dedup_send && i < xu->u->n_features; i++)
        if (distinct_grads(x, xu, i, op, err)) return -1;
    /* Packed in fp32, then converted as a whole when the comm precision is lower. */
    size_t elems = rt_xemb_total(xu->emb_rc, G) / rt_xemb_cb(x);
    float *base = xu->grad_send.p;
    if (rt_xemb_ck(x) != RT_KDT_FP32) {
        if (rt_xbuf_reserve(x->dev, &xu->msg32, elems * sizeof(float), err)) return -1;
        base = xu->msg32.p;
    }
    for (int q = 0; q < G; q++)
        for (int e = 0; e < E; e++)
            if (rt_xemb_served(xu, q, e) && pack_grad(x, xu, base, e, q, op, err)) return -1;
    if (base != xu->grad_send.p && rt_xemb_to_msg(x, xu->grad_send.p, 0, base, elems)) return -1;
    /* Our receive layout of the embeddings is our send layout of their gradients. */
    if (x->comm->ops->alltoallv(x->comm, xu->grp, xu->grad_send.p, xu->emb_rc, xu->emb_rd,
                                xu->grad_recv.p, xu->emb_sc, xu->emb_sd))
        return rt_xemb_fail(err, x, op, "AlltoAllv failed");
    rt_xexec_count_peers(x, op, xu->emb_rc, xu->emb_sc, G);
    return 0;
}

int rt_xemb_gather_grad(rt_xexec *x, rt_xunit *xu, int e, FILE *err)
{
    int G = xu->G, E = xu->n_entries;
    size_t w = (size_t)xu->entries[e].width;
    size_t rows = rt_xemb_per_row(xu, e) ? (size_t)xu->own_n[e] : (size_t)xu->boff[G];
    if (rt_xbuf_reserve(x->dev, &xu->own_grad[e], rows * w * sizeof(float), err)) return -1;
    size_t at = 0;
    for (int p = 0; p < G; p++) {
        size_t n = rt_xemb_rows(xu, e, (int)xu->bsz[p], xu->n_from[p * E + e]) * w;
        if (rt_xemb_from_msg(x, xu->grad_recv.p, xu->send_at[p * E + e],
                             (float *)xu->own_grad[e].p + at, n))
            return -1;
        at += n;
    }
    return 0;
}

/* Stage 2: entry E's gradients summed per distinct row into tmp_a. */
static int distinct_row_grads(rt_xexec *x, rt_xunit *xu, int e, int op, FILE *err)
{
    rt_xdev *d = x->dev;
    const rt_xuniq *u = &xu->s2[e];
    int64_t w = xu->entries[e].width, n = xu->own_n[e];
    const float *g = xu->own_grad[e].p;
    size_t ab = sizeof(float) * (size_t)(u->n_uniq * w);
    if (rt_xbuf_reserve(d, &xu->tmp_a, ab, err) || d->ops->zero(d, xu->tmp_a.p, ab)) return -1;
    if (!rt_xemb_per_row(xu, e)) { /* each ID carries its bag's gradient */
        if (rt_xemb_put(x, &xu->s2_bag, xu->own_host_bag[e], (size_t)n, err) ||
            rt_xbuf_reserve(d, &xu->tmp_b, sizeof(float) * (size_t)(n * w), err))
            return -1;
        if (rt_xemb_kcheck(
                d->ops->gather_rows(d, g, xu->boff[xu->G], w, xu->s2_bag.p, n, xu->tmp_b.p), err, x,
                op, "gather_rows"))
            return -1;
        g = xu->tmp_b.p;
    }
    return rt_xemb_kcheck(
        d->ops->scatter_add_rows(d, g, n, w, u->inv_dev.p, u->n_uniq, xu->tmp_a.p), err, x, op,
        "scatter_add_rows");
}

static int update_entry(rt_xexec *x, rt_xunit *xu, int e, int op, FILE *err)
{
    rt_xshard *sh = &x->tables.shards[xu->shard_of[e]];
    if (sh->rows == 0) return 0; /* a row-wise shard past the table's end: no ID reaches it */
    rt_kopt opt = rt_xtables_opt(x->s, xu->entries[e].table, x->iteration + 1);
    rt_xdev *d = x->dev;
    rt_kstatus st;
    if (xu->u->sync.size > 1) { /* HSP: the synchronized (row, gradient) pairs of every group */
        st = d->ops->sparse_update(d, &sh->t, sh->st, &opt, xu->sync_all_ids[e].p, NULL,
                                   xu->sync_n[e], RT_KPOOL_SUM, xu->sync_all_grads[e].p);
    } else if (xu->u->dedup_owner) {
        if (distinct_row_grads(x, xu, e, op, err)) return -1;
        st = d->ops->sparse_update(d, &sh->t, sh->st, &opt, xu->s2[e].uniq_dev.p, NULL,
                                   xu->s2[e].n_uniq, RT_KPOOL_SUM, xu->tmp_a.p);
    } else {
        int pr = rt_xemb_per_row(xu, e);
        st = d->ops->sparse_update(
            d, &sh->t, sh->st, &opt, xu->own_ids[e].p, pr ? NULL : xu->own_offsets[e].p,
            pr ? xu->own_n[e] : xu->boff[xu->G], RT_KPOOL_SUM, xu->own_grad[e].p);
    }
    if (rt_xemb_kcheck(st, err, x, op, "sparse_update")) return -1;
    /* A dynamic shard's updated working set goes back into its hash rows, here unless the
     * values live in host memory (then the write-back op does it). */
    if (sh->dyn && x->s->model.tables[sh->table].hash.offload != RT_OFFLOAD_VALUES)
        rt_xdyn_write_back(sh);
    return 0;
}

/* The graph's update bytes for entry E (plans/exchange.c): per ID its key, the gradient read,
 * and the row and optimizer state read and written, once per distinct row with stage 2. */
static double update_bytes(const rt_xexec *x, const rt_xunit *xu, int e, int first_of_feature)
{
    const rt_xentry *en = &xu->entries[e];
    const rt_table *tb = &x->s->model.tables[en->table];
    double eb = (double)rt_dtype_bytes(rt_scenario_table_dtype(x->s, en->table));
    double cb = (double)rt_xemb_cb(x);
    int cs = xu->u->sharding == RT_SHARD_COLUMN ? xu->u->col_shards : 1;
    double state = rt_optimizer_state_floats(tb->optimizer, tb->dim) * 4.0 * 2 / cs;
    double n = (double)xu->own_n[e], idb = x->s->workload.id_bytes;
    if (!xu->u->dedup_owner) return n * (idb + en->width * (2 * eb + cb) + state);
    double u = (double)xu->s2[e].n_uniq;
    return (first_of_feature ? u * idb : 0) + 4 * n + n * en->width * cb +
           u * (en->width * 2 * eb + state);
}

int rt_xemb_update(rt_xexec *x, rt_xunit *xu, int op, FILE *err)
{
    int E = xu->n_entries;
    double bytes = 0;
    for (int e = 0; e < E; e++) {
        if (!rt_xemb_served(xu, xu->k, e)) continue;
        if (xu->u->sync.size <= 1 && rt_xemb_gather_grad(x, xu, e, err)) return -1;
        if (update_entry(x, xu, e, op, err)) return -1;
        int first = 1;
        for (int e2 = 0; e2 < e; e2++)
            first &= !(rt_xemb_served(xu, xu->k, e2) && xu->entries[e2].i == xu->entries[e].i);
        bytes += update_bytes(x, xu, e, first);
    }
    rt_xexec_count(x, op, bytes, 0);
    return 0;
}
