/* HSP's cross-group gradient sync (TurboGR, seed 002; plans/hsp.c): every rank sums the
 * gradients its group produced per touched row of its shard; then the ranks holding the same
 * shard in every group combine them, so each replica applies the gradient of the whole world
 * once per row and keeps the same optimizer state.
 *   sync: sparse  they AllGather their (row, gradient) pairs;
 *   sync: dense   they AllReduce a dense block over the union of the rows any group touched.
 *                 Agreeing on the union takes an AllGather of the row indices first (8 bytes a
 *                 row), which the graph does not price: the op's time includes it, its bytes
 *                 are not counted.
 * Message of one member: for every served entry, its distinct rows (id_bytes each) then their
 * summed gradients (width floats each): the graph's bytes, rows x (id_bytes + width x 4). */
#include <stdlib.h>
#include <string.h>

#include "emb_internal.h"

static int cmp_pair(const void *a, const void *b)
{
    const int64_t *x = a, *y = b;
    return (x[0] > y[0]) - (x[0] < y[0]);
}

/* Distinct rows of entry E (sorted) into UNIQ, and INV[j] = position of ID j's row. */
static int64_t host_unique(const int64_t *ids, int64_t n, int64_t *pairs, int64_t *uniq,
                           int64_t *inv)
{
    for (int64_t j = 0; j < n; j++)
        pairs[2 * j] = ids[j], pairs[2 * j + 1] = j;
    qsort(pairs, (size_t)n, 2 * sizeof(int64_t), cmp_pair);
    int64_t u = 0;
    for (int64_t j = 0; j < n; j++) {
        if (j == 0 || pairs[2 * j] != pairs[2 * (j - 1)]) uniq[u++] = pairs[2 * j];
        inv[pairs[2 * j + 1]] = u - 1;
    }
    return u;
}

/* Sums entry E's gradients per distinct row into sync_agg; writes the rows (host) to UNIQ. */
static int aggregate(rt_xexec *x, rt_xunit *xu, int e, int64_t *uniq, FILE *err)
{
    int64_t n = xu->own_n[e], w = xu->entries[e].width;
    int64_t *tmp = malloc(sizeof(int64_t) * (size_t)(3 * n + 1));
    if (!tmp) {
        fprintf(err, "exec: out of host memory aggregating %lld gradients\n", (long long)n);
        return -1;
    }
    int64_t u = host_unique(xu->own_host_ids[e], n, tmp, uniq, tmp + 2 * n);
    xu->sync_u[e] = u;
    rt_xdev *d = x->dev;
    int rc = rt_xemb_put(x, &xu->sync_inv, tmp + 2 * n, (size_t)n, err) ||
             rt_xemb_put(x, &xu->sync_bag, xu->own_host_bag[e], (size_t)n, err) ||
             rt_xbuf_reserve(d, &xu->sync_tmp, sizeof(float) * (size_t)(n * w), err) ||
             rt_xbuf_reserve(d, &xu->sync_agg, sizeof(float) * (size_t)(u * w), err);
    free(tmp);
    if (rc || d->ops->zero(d, xu->sync_agg.p, sizeof(float) * (size_t)(u * w))) return -1;
    int64_t bags = rt_xemb_per_row(xu, e) ? n : xu->boff[xu->G];
    /* Each ID's gradient is its bag's (pooled) or its own row (sequence). */
    if (d->ops->gather_rows(d, xu->own_grad[e].p, bags, w, xu->sync_bag.p, n, xu->sync_tmp.p) ||
        d->ops->scatter_add_rows(d, xu->sync_tmp.p, n, w, xu->sync_inv.p, u, xu->sync_agg.p))
        return -1;
    return 0;
}

/* This rank's message: per served entry, rows then gradients. */
static int build_message(rt_xexec *x, rt_xunit *xu, int op, size_t *mine, FILE *err)
{
    int E = xu->n_entries, ib = x->s->workload.id_bytes;
    size_t at = 0, bound = 0;
    /* Distinct rows never outnumber IDs: reserve once for the bound, fill entry by entry. */
    for (int e = 0; e < E; e++)
        if (xu->served[xu->k * E + e])
            bound += (size_t)xu->own_n[e] * (ib + sizeof(float) * (size_t)xu->entries[e].width);
    if (rt_xbuf_reserve(x->dev, &xu->sync_send, bound, err)) return -1;
    for (int e = 0; e < E; e++) {
        if (!xu->served[xu->k * E + e]) continue;
        if (rt_xemb_gather_grad(x, xu, e, err)) return -1;
        int64_t *uniq = malloc(sizeof(int64_t) * (size_t)(xu->own_n[e] + 1));
        if (!uniq || aggregate(x, xu, e, uniq, err)) {
            free(uniq);
            return -1;
        }
        int64_t u = xu->sync_u[e], w = xu->entries[e].width;
        size_t ids = (size_t)u * ib, vals = sizeof(float) * (size_t)(u * w);
        uint8_t *h = malloc(ids ? ids : 1);
        int rc = !h;
        for (int64_t j = 0; !rc && j < u; j++)
            rt_xemb_put_id(h + (size_t)j * ib, (uint64_t)uniq[j], ib);
        rc = rc ||
             (ids &&
              x->dev->ops->copy(x->dev, (uint8_t *)xu->sync_send.p + at, h, ids, RT_XCOPY_H2D)) ||
             (vals && x->dev->ops->copy(x->dev, (uint8_t *)xu->sync_send.p + at + ids,
                                        xu->sync_agg.p, vals, RT_XCOPY_D2D));
        free(h), free(uniq);
        if (rc) {
            fprintf(err, "exec: op %d: building the sync message failed\n", op);
            return -1;
        }
        at += ids + vals;
    }
    *mine = at;
    return 0;
}

/* Sizes every group's message needs, in order to reserve the send buffer once. */
static size_t message_bytes(const rt_xexec *x, const rt_xunit *xu, const int64_t *u)
{
    size_t at = 0;
    int E = xu->n_entries, ib = x->s->workload.id_bytes, s = 0;
    for (int e = 0; e < E; e++)
        if (xu->served[xu->k * E + e])
            at += (size_t)u[s++] * (ib + sizeof(float) * (size_t)xu->entries[e].width);
    return at;
}

/* Unpacks every group's pairs of entry E into sync_all_ids / sync_all_grads. */
static int unpack(rt_xexec *x, rt_xunit *xu, const uint8_t *h, const size_t *displ,
                  const int64_t *all, int n_served, int slot, int e, FILE *err)
{
    int M = xu->u->sync.size, ib = x->s->workload.id_bytes;
    int64_t w = xu->entries[e].width, total = 0;
    for (int m = 0; m < M; m++)
        total += all[m * n_served + slot];
    xu->sync_n[e] = total;
    int64_t *ids = malloc(sizeof(int64_t) * (size_t)(total + 1));
    if (!ids ||
        rt_xbuf_reserve(x->dev, &xu->sync_all_grads[e], sizeof(float) * (size_t)(total * w), err)) {
        free(ids);
        return -1;
    }
    int64_t at = 0;
    for (int m = 0; m < M; m++) {
        size_t off = displ[m];
        for (int s2 = 0, e2 = 0; s2 < slot; e2++)
            if (xu->served[xu->k * xu->n_entries + e2])
                off += (size_t)all[m * n_served + s2++] *
                       (ib + sizeof(float) * (size_t)xu->entries[e2].width);
        int64_t u = all[m * n_served + slot];
        for (int64_t j = 0; j < u; j++)
            ids[at + j] = (int64_t)rt_xemb_get_id(h + off + (size_t)j * ib, ib);
        size_t vals = sizeof(float) * (size_t)(u * w);
        if (vals && x->dev->ops->copy(x->dev, (float *)xu->sync_all_grads[e].p + at * w,
                                      (const uint8_t *)xu->sync_recv.p + off + (size_t)u * ib, vals,
                                      RT_XCOPY_D2D)) {
            free(ids);
            return -1;
        }
        at += u;
    }
    int rc = rt_xemb_put(x, &xu->sync_all_ids[e], ids, (size_t)total, err);
    free(ids);
    return rc;
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* Sorted distinct rows of V (N values) in place; returns how many. */
static int64_t sort_unique(int64_t *v, int64_t n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_i64);
    int64_t u = 0;
    for (int64_t j = 0; j < n; j++)
        if (j == 0 || v[j] != v[u - 1]) v[u++] = v[j];
    return u;
}

static int64_t position(const int64_t *v, int64_t n, int64_t key)
{
    int64_t lo = 0, hi = n - 1;
    while (lo <= hi) {
        int64_t mid = lo + (hi - lo) / 2;
        if (v[mid] == key) return mid;
        if (v[mid] < key)
            lo = mid + 1;
        else
            hi = mid - 1;
    }
    return -1;
}

/* Every group's touched rows of every served entry: their counts, then the rows themselves
 * (host, [member][entry][rows]). */
static int64_t *gather_rows(rt_xexec *x, rt_xunit *xu, int64_t **mine, int n_served, int64_t *all,
                            FILE *err)
{
    int E = xu->n_entries, M = xu->u->sync.size;
    int64_t *u = all + M * n_served, total_mine = 0, total = 0;
    for (int e = 0, s = 0; e < E; e++)
        if (xu->served[xu->k * E + e]) total_mine += u[s++] = xu->sync_u[e];
    if (x->comm->ops->allgather_meta(x->comm, xu->sync_grp, u, n_served, all)) return NULL;
    size_t *cnt = malloc(sizeof(size_t) * 2 * (size_t)M);
    int64_t *send = malloc(sizeof(int64_t) * (size_t)(total_mine + 1));
    for (int64_t m = 0; m < M * n_served; m++)
        total += all[m];
    int64_t *recv = malloc(sizeof(int64_t) * (size_t)(total + 1));
    if (!cnt || !send || !recv) goto fail;
    for (int e = 0, s = 0, at = 0; e < E; e++)
        if (xu->served[xu->k * E + e])
            memcpy(send + at, mine[e], sizeof(int64_t) * (size_t)u[s]), at += (int)u[s++];
    for (int m = 0, at = 0; m < M; m++) {
        int64_t n = 0;
        for (int s = 0; s < n_served; s++)
            n += all[m * n_served + s];
        cnt[m] = (size_t)n * sizeof(int64_t), cnt[M + m] = (size_t)at * sizeof(int64_t);
        at += (int)n;
    }
    /* Through device buffers, as every collective of the comm backends. */
    rt_xdev *d = x->dev;
    size_t sb = sizeof(int64_t) * (size_t)total_mine, rb = sizeof(int64_t) * (size_t)total;
    if (!rt_xbuf_reserve(d, &xu->sync_inv, sb + 8, err) &&
        !rt_xbuf_reserve(d, &xu->sync_bag, rb + 8, err) &&
        !(sb && d->ops->copy(d, xu->sync_inv.p, send, sb, RT_XCOPY_H2D)) &&
        !x->comm->ops->allgatherv(x->comm, xu->sync_grp, xu->sync_inv.p, xu->sync_bag.p, cnt,
                                  cnt + M) &&
        !(rb && d->ops->copy(d, recv, xu->sync_bag.p, rb, RT_XCOPY_D2H))) {
        free(cnt), free(send);
        return recv;
    }
fail:
    fprintf(err, "exec: rank %d: gathering the touched rows failed\n", x->rank);
    free(cnt), free(send), free(recv);
    return NULL;
}

/* The union of entry E's rows over every group (sorted), uploaded as its update rows; the
 * positions of this rank's rows in it (device, in sync_tmp's place: returned in POS). */
static int union_rows(rt_xexec *x, rt_xunit *xu, int e, const int64_t *rows, const int64_t *all,
                      int n_served, int slot, const int64_t *mine, rt_xbuf *pos, FILE *err)
{
    int M = xu->u->sync.size;
    int64_t n = 0, at = 0;
    for (int m = 0; m < M; m++)
        n += all[m * n_served + slot];
    int64_t *v = malloc(sizeof(int64_t) * (size_t)(n + 1));
    int64_t *p = malloc(sizeof(int64_t) * (size_t)(xu->sync_u[e] + 1));
    if (!v || !p) {
        free(v), free(p);
        fprintf(err, "exec: out of host memory building the union of touched rows\n");
        return -1;
    }
    for (int m = 0; m < M; m++) { /* member m's rows of this entry sit after its earlier ones */
        int64_t off = 0;
        for (int mm = 0; mm < m; mm++)
            for (int s = 0; s < n_served; s++)
                off += all[mm * n_served + s];
        for (int s = 0; s < slot; s++)
            off += all[m * n_served + s];
        memcpy(v + at, rows + off, sizeof(int64_t) * (size_t)all[m * n_served + slot]);
        at += all[m * n_served + slot];
    }
    n = sort_unique(v, n);
    for (int64_t j = 0; j < xu->sync_u[e]; j++)
        p[j] = position(v, n, mine[j]);
    xu->sync_n[e] = n;
    int rc = rt_xemb_put(x, &xu->sync_all_ids[e], v, (size_t)n, err) ||
             rt_xemb_put(x, pos, p, (size_t)xu->sync_u[e], err);
    free(v), free(p);
    return rc;
}

static int sync_dense(rt_xexec *x, rt_xunit *xu, int op, FILE *err)
{
    int E = xu->n_entries, M = xu->u->sync.size, n_served = 0, rc = -1;
    for (int e = 0; e < E; e++)
        n_served += xu->served[xu->k * E + e];
    int64_t **mine = calloc((size_t)(E > 0 ? E : 1), sizeof(int64_t *));
    /* Every member's counts, then this rank's own: (M + 1) x n_served. */
    int64_t *all = calloc((size_t)(M + 1) * (size_t)n_served + 1, sizeof(int64_t));
    int64_t *rows = NULL;
    rt_xbuf pos = {0};
    size_t floats = 0;
    if (!mine || !all) goto out;
    for (int e = 0; e < E; e++) { /* each entry's summed gradients wait in own_out[e] */
        if (!xu->served[xu->k * E + e]) continue;
        size_t w = (size_t)xu->entries[e].width;
        if (rt_xemb_gather_grad(x, xu, e, err) ||
            !(mine[e] = malloc(sizeof(int64_t) * (size_t)(xu->own_n[e] + 1))) ||
            aggregate(x, xu, e, mine[e], err) ||
            rt_xbuf_reserve(x->dev, &xu->own_out[e], sizeof(float) * (size_t)xu->sync_u[e] * w,
                            err) ||
            (xu->sync_u[e] &&
             x->dev->ops->copy(x->dev, xu->own_out[e].p, xu->sync_agg.p,
                               sizeof(float) * (size_t)xu->sync_u[e] * w, RT_XCOPY_D2D)))
            goto out;
    }
    if (!(rows = gather_rows(x, xu, mine, n_served, all, err))) goto out;
    for (int e = 0, s = 0; e < E; e++) {
        if (!xu->served[xu->k * E + e]) continue;
        int64_t w = xu->entries[e].width;
        if (union_rows(x, xu, e, rows, all, n_served, s++, mine[e], &pos, err)) goto out;
        size_t bytes = sizeof(float) * (size_t)(xu->sync_n[e] * w);
        rt_xbuf *g = &xu->sync_all_grads[e];
        if (rt_xbuf_reserve(x->dev, g, bytes, err) || x->dev->ops->zero(x->dev, g->p, bytes) ||
            x->dev->ops->scatter_add_rows(x->dev, xu->own_out[e].p, xu->sync_u[e], w, pos.p,
                                          xu->sync_n[e], g->p))
            goto out;
        /* One AllReduce per entry keeps every entry's block in its own buffer. */
        if (x->comm->ops->allreduce_f32(x->comm, xu->sync_grp, g->p, (size_t)(xu->sync_n[e] * w))) {
            fprintf(err, "exec: rank %d, op %d: the cross-group AllReduce failed\n", x->rank, op);
            goto out;
        }
        floats += (size_t)(xu->sync_n[e] * w);
    }
    rt_xexec_count(x, op, (double)floats * sizeof(float), 0);
    rc = 0;
out:
    for (int e = 0; mine && e < E; e++)
        free(mine[e]);
    free(mine), free(all), free(rows);
    rt_xbuf_free(x->dev, &pos);
    return rc;
}

int rt_xemb_sync(rt_xexec *x, rt_xunit *xu, int op, FILE *err)
{
    if (!xu->u->sync_sparse) return sync_dense(x, xu, op, err);
    int E = xu->n_entries, M = xu->u->sync.size, n_served = 0;
    for (int e = 0; e < E; e++)
        n_served += xu->served[xu->k * E + e];
    int64_t *all = malloc(sizeof(int64_t) * (size_t)(M * n_served + n_served + 1));
    size_t *cnt = malloc(sizeof(size_t) * 2 * (size_t)M);
    int rc = -1;
    if (!all || !cnt) goto out;
    size_t mine = 0;
    if (build_message(x, xu, op, &mine, err)) goto out;
    int64_t *u = all + M * n_served;
    for (int e = 0, s = 0; e < E; e++)
        if (xu->served[xu->k * E + e]) u[s++] = xu->sync_u[e];
    if (message_bytes(x, xu, u) != mine) goto out;
    if (x->comm->ops->allgather_meta(x->comm, xu->sync_grp, u, n_served, all)) goto out;
    size_t *displ = cnt + M, total = 0;
    for (int m = 0; m < M; m++) {
        cnt[m] = message_bytes(x, xu, all + m * n_served), displ[m] = total;
        total += cnt[m];
    }
    if (rt_xbuf_reserve(x->dev, &xu->sync_recv, total, err)) goto out;
    if (x->comm->ops->allgatherv(x->comm, xu->sync_grp, xu->sync_send.p, xu->sync_recv.p, cnt,
                                 displ)) {
        fprintf(err, "exec: rank %d, op %d: the cross-group AllGather failed\n", x->rank, op);
        goto out;
    }
    const uint8_t *h = xu->sync_recv.p;
    uint8_t *hcopy = NULL;
    if (!x->dev->ops->host_memory) {
        if (!(hcopy = malloc(total ? total : 1)) ||
            (total && x->dev->ops->copy(x->dev, hcopy, xu->sync_recv.p, total, RT_XCOPY_D2H))) {
            free(hcopy);
            goto out;
        }
        h = hcopy;
    }
    rc = 0;
    for (int e = 0, s = 0; e < E && !rc; e++)
        if (xu->served[xu->k * E + e]) rc = unpack(x, xu, h, displ, all, n_served, s++, e, err);
    free(hcopy);
    /* An AllGather's size as nccl-tests counts it: the output. */
    rt_xexec_count(x, op, (double)total, 0);
out:
    free(all), free(cnt);
    return rc;
}
