/* The forward of an embedding exchange: route the IDs into per-owner messages, the ID (and
 * category) AlltoAll, the owner's lookup, the embedding AlltoAll and the recovery into the
 * dense net's per-feature layout. emb_internal.h gives the message layouts. */
#include <stdlib.h>
#include <string.h>

#include "emb_internal.h"

static int idb(const rt_xexec *x)
{
    return x->s->workload.id_bytes;
}

static int64_t *host_scratch(rt_xunit *xu, size_t n, FILE *err)
{
    if (n > xu->host_scratch_cap) {
        int64_t *p = realloc(xu->host_scratch, sizeof(int64_t) * n);
        if (!p) {
            fprintf(err, "exec: out of host memory (%zu index entries)\n", n);
            return NULL;
        }
        xu->host_scratch = p, xu->host_scratch_cap = n;
    }
    return xu->host_scratch;
}

/* Host bytes of a device buffer: the buffer itself when device memory is host memory. */
static const uint8_t *host_view(rt_xexec *x, rt_xunit *xu, const void *dev, size_t n, size_t at,
                                FILE *err)
{
    if (x->dev->ops->host_memory) return dev;
    if (at + n > xu->host_ids_cap) {
        uint8_t *p = realloc(xu->host_ids, at + n);
        if (!p) {
            fprintf(err, "exec: out of host memory (%zu bytes)\n", at + n);
            return NULL;
        }
        xu->host_ids = p, xu->host_ids_cap = at + n;
    }
    if (n && x->dev->ops->copy(x->dev, xu->host_ids + at, dev, n, RT_XCOPY_D2H)) return NULL;
    return xu->host_ids + at;
}

/* ---- route ------------------------------------------------------------------------------ */

/* Counts per (member, entry) of the IDs this rank sends and, where one row per ID comes back
 * from row-wise owners, the positions of those IDs in the sent list. */
static int count_route(rt_xexec *x, rt_xunit *xu, int feat, FILE *err)
{
    int G = xu->G, E = xu->n_entries, F = xu->u->n_features;
    if (feat <= 0) memset(xu->n_to, 0, sizeof(int64_t) * (size_t)G * (size_t)E);
    for (int e = 0; e < E; e++) {
        const rt_xentry *en = &xu->entries[e];
        if (feat >= 0 && en->i != feat) continue;
        int64_t n;
        const uint64_t *ids = rt_xemb_send_ids(x, xu, en->i, &n);
        if (xu->u->sharding != RT_SHARD_ROW) {
            for (int q = 0; q < G; q++)
                if (rt_xemb_served(xu, q, e)) xu->n_to[q * E + e] = n;
            continue;
        }
        for (int64_t j = 0; j < n; j++)
            xu->n_to[rt_xemb_row_owner(xu, en->table, ids[j]) * E + e]++;
        if (!rt_xemb_per_row(xu, e)) continue;
        for (int q = 0; q < G; q++) {
            int64_t **pos = &xu->pos_to[q * F + en->i], m = 0;
            free(*pos);
            if (!(*pos = malloc(sizeof(int64_t) * (size_t)(xu->n_to[q * E + e] + 1)))) {
                fprintf(err, "exec: out of host memory routing IDs\n");
                return -1;
            }
            for (int64_t j = 0; j < n; j++)
                if (rt_xemb_row_owner(xu, en->table, ids[j]) == q) (*pos)[m++] = j;
            if (rt_xemb_put(x, &xu->pos_dev[q * F + en->i], *pos, (size_t)m, err)) return -1;
        }
    }
    return 0;
}

/* The counts this rank sends member Q for every entry Q serves, at P. */
static uint8_t *write_counts(rt_xexec *x, rt_xunit *xu, int q, uint8_t *p)
{
    int E = xu->n_entries, b = x->v.batch.batch, rows = xu->u->sharding == RT_SHARD_ROW;
    for (int e = 0; e < E; e++) {
        if (!rt_xemb_served(xu, q, e)) continue;
        if (xu->u->dedup_send) {
            uint32_t n = (uint32_t)xu->n_to[q * E + e];
            memcpy(p, &n, 4), p += 4;
            continue;
        }
        const rt_feature_batch *fb = &x->v.batch.f[xu->entries[e].table];
        uint64_t at = 0;
        for (int s = 0; s < b; s++) {
            uint32_t n = 0;
            for (uint32_t j = 0; j < fb->lengths[s]; j++)
                n += !rows || rt_xemb_row_owner(xu, xu->entries[e].table, fb->ids[at + j]) == q;
            at += fb->lengths[s];
            memcpy(p, &n, 4), p += 4;
        }
    }
    return p;
}

static void write_ids(rt_xexec *x, rt_xunit *xu, int q, uint8_t *p)
{
    int E = xu->n_entries, ib = idb(x), rows = xu->u->sharding == RT_SHARD_ROW;
    for (int e = 0; e < E; e++) {
        if (!rt_xemb_served(xu, q, e)) continue;
        int64_t n;
        const uint64_t *ids = rt_xemb_send_ids(x, xu, xu->entries[e].i, &n);
        for (int64_t j = 0; j < n; j++)
            if (!rows || rt_xemb_row_owner(xu, xu->entries[e].table, ids[j]) == q)
                rt_xemb_put_id(p, ids[j], ib), p += ib;
    }
}

/* Bytes of the counts section of a message to member Q from a sender whose batch is B. */
static size_t counts_bytes(const rt_xunit *xu, int q, int64_t b)
{
    size_t n = 0;
    for (int e = 0; e < xu->n_entries; e++)
        n += rt_xemb_served(xu, q, e) ? (size_t)rt_xemb_counts(xu, (int)b) * 4 : 0;
    return n;
}

/* Writes a message into device buffer B through a host buffer where device memory is not
 * host memory. */
static int fill_message(rt_xexec *x, rt_xbuf *b, size_t total, int counts_only, rt_xunit *xu,
                        const size_t *displ, FILE *err)
{
    if (rt_xbuf_reserve(x->dev, b, total, err)) return -1;
    uint8_t *h = x->dev->ops->host_memory ? b->p : malloc(total ? total : 1);
    if (!h) {
        fprintf(err, "exec: out of host memory building %zu bytes of messages\n", total);
        return -1;
    }
    for (int q = 0; q < xu->G; q++) {
        uint8_t *p = h + displ[q];
        if (counts_only || !xu->u->category_msg) p = write_counts(x, xu, q, p);
        if (!counts_only) write_ids(x, xu, q, p);
    }
    int rc = 0;
    if (!x->dev->ops->host_memory) {
        rc = total ? x->dev->ops->copy(x->dev, b->p, h, total, RT_XCOPY_H2D) : 0;
        free(h);
    }
    return rc;
}

/* Every member's batch: the scenario's, or with sequence balancing each rank's own (a size,
 * like the splits: metadata the graph does not price). */
static int member_batches(rt_xexec *x, rt_xunit *xu, int op, FILE *err)
{
    int64_t b = x->v.batch.batch;
    if (x->s->plan.balance == RT_BALANCE_NONE) {
        for (int q = 0; q < xu->G; q++)
            xu->bsz[q] = b;
    } else if (x->comm->ops->allgather_meta(x->comm, xu->grp, &b, 1, xu->bsz)) {
        return rt_xemb_fail(err, x, op, "exchanging batch sizes failed");
    }
    xu->boff[0] = 0;
    for (int q = 0; q < xu->G; q++)
        xu->boff[q + 1] = xu->boff[q] + xu->bsz[q];
    return 0;
}

/* One op per unit, or with plan.fusion none one per feature (its index in `layer`, in order):
 * each routes its own feature's IDs; the last one, having every feature's counts, writes the
 * messages (their layout needs all of them). */
int rt_xemb_route(rt_xexec *x, rt_xunit *xu, int op, FILE *err)
{
    int G = xu->G, E = xu->n_entries, ib = idb(x), cat = xu->u->category_msg;
    int feat = x->g->ops[op].layer;
    if (feat <= 0) {
        xu->parsed = 0;
        if (member_batches(x, xu, op, err)) return -1;
    }
    if (count_route(x, xu, feat, err)) return -1;
    double sent = 0;
    for (int q = 0; q < G; q++)
        for (int e = 0; e < E; e++)
            if (feat < 0 || xu->entries[e].i == feat) sent += (double)xu->n_to[q * E + e];
    /* The graph's bucketize reads each ID and writes it with its permutation index. */
    rt_xexec_count(x, op, sent * (2 * ib + 4), 0);
    if (feat >= 0 && feat != xu->u->n_features - 1) return 0;
    size_t total = 0, ctotal = 0;
    for (int q = 0; q < G; q++) {
        size_t ids = 0, counts = counts_bytes(xu, q, x->v.batch.batch);
        for (int e = 0; e < E; e++)
            ids += (size_t)xu->n_to[q * E + e] * (size_t)ib;
        xu->ids_sc[q] = ids + (cat ? 0 : counts), xu->ids_sd[q] = total, total += xu->ids_sc[q];
        xu->cat_sc[q] = cat ? counts : 0, xu->cat_sd[q] = ctotal, ctotal += xu->cat_sc[q];
    }
    if (fill_message(x, &xu->ids_send, total, 0, xu, xu->ids_sd, err)) return -1;
    if (cat && fill_message(x, &xu->cat_send, ctotal, 1, xu, xu->cat_sd, err)) return -1;
    return 0;
}

/* ---- the ID and category AlltoAlls --------------------------------------------------------- */

int rt_xemb_ids_a2a(rt_xexec *x, rt_xunit *xu, int op, FILE *err)
{
    int G = xu->G;
    int64_t *sc = host_scratch(xu, 2 * (size_t)G, err), *rc;
    if (!sc) return -1;
    rc = sc + G;
    for (int q = 0; q < G; q++)
        sc[q] = (int64_t)xu->ids_sc[q];
    /* The splits: every owner must know how many bytes each sender's message has. */
    if (x->comm->ops->alltoall_meta(x->comm, xu->grp, sc, rc))
        return rt_xemb_fail(err, x, op, "exchanging message sizes failed");
    size_t total = 0;
    for (int q = 0; q < G; q++)
        xu->ids_rc[q] = (size_t)rc[q], xu->ids_rd[q] = total, total += (size_t)rc[q];
    if (rt_xbuf_reserve(x->dev, &xu->ids_recv, total, err)) return -1;
    if (x->comm->ops->alltoallv(x->comm, xu->grp, xu->ids_send.p, xu->ids_sc, xu->ids_sd,
                                xu->ids_recv.p, xu->ids_rc, xu->ids_rd))
        return rt_xemb_fail(err, x, op, "AlltoAllv failed");
    rt_xexec_count_peers(x, op, xu->ids_sc, xu->ids_rc, G);
    return 0;
}

int rt_xemb_cat_a2a(rt_xexec *x, rt_xunit *xu, int op, FILE *err)
{
    /* A sender's counts section for this rank follows from its batch: known here. */
    size_t total = 0;
    for (int q = 0; q < xu->G; q++) {
        xu->cat_rc[q] = counts_bytes(xu, xu->k, xu->bsz[q]), xu->cat_rd[q] = total;
        total += xu->cat_rc[q];
    }
    if (rt_xbuf_reserve(x->dev, &xu->cat_recv, total, err)) return -1;
    if (x->comm->ops->alltoallv(x->comm, xu->grp, xu->cat_send.p, xu->cat_sc, xu->cat_sd,
                                xu->cat_recv.p, xu->cat_rc, xu->cat_rd))
        return rt_xemb_fail(err, x, op, "AlltoAllv failed");
    rt_xexec_count_peers(x, op, xu->cat_sc, xu->cat_rc, xu->G);
    return 0;
}

/* ---- the owner's view of the ID messages ---------------------------------------------------- */

typedef struct message {
    const uint8_t *counts, *ids; /* host views */
} message;

/* Where member P's counts and IDs start in the received messages. */
static message message_of(const rt_xunit *xu, const uint8_t *ids, const uint8_t *cats, int p,
                          size_t counts)
{
    if (xu->u->category_msg) return (message){cats + xu->cat_rd[p], ids + xu->ids_rd[p]};
    return (message){ids + xu->ids_rd[p], ids + xu->ids_rd[p] + counts};
}

static uint32_t count_at(const uint8_t *p, int64_t k)
{
    uint32_t v;
    memcpy(&v, p + 4 * k, 4);
    return v;
}

/* Local row of a received ID in this rank's shard of entry E, or -1. */
static int64_t local_row(const rt_xunit *xu, const rt_xshard *sh, int e, uint64_t id)
{
    if (xu->hrows && xu->hrows[e]) {
        int64_t lo = 0, hi = xu->hrows_n[e] - 1;
        while (lo <= hi) {
            int64_t mid = lo + (hi - lo) / 2;
            if (xu->hrows[e][mid] == id) return mid;
            if (xu->hrows[e][mid] < id)
                lo = mid + 1;
            else
                hi = mid - 1;
        }
        return -1;
    }
    return id < sh->row0 || id - sh->row0 >= sh->rows ? -1 : (int64_t)(id - sh->row0);
}

/* Served entry E over every member's IDs: host local rows and the bag of each ID (kept for
 * dedup and HSP), device rows and bag offsets. */
static int entry_indices(rt_xexec *x, rt_xunit *xu, const message *m, int e, int op, FILE *err)
{
    int G = xu->G, E = xu->n_entries, ib = idb(x);
    rt_xshard *sh = &x->tables.shards[xu->shard_of[e]];
    int64_t n = 0;
    for (int p = 0; p < G; p++)
        n += xu->n_from[p * E + e];
    xu->own_n[e] = n;
    free(xu->own_host_ids[e]), free(xu->own_host_bag[e]);
    int64_t *ids = xu->own_host_ids[e] = malloc(sizeof(int64_t) * (size_t)(n + 1));
    int64_t *bag = xu->own_host_bag[e] = malloc(sizeof(int64_t) * (size_t)(n + 1));
    int64_t *offs = host_scratch(xu, (size_t)xu->boff[G] + 1, err);
    if (!ids || !bag || !offs) return rt_xemb_fail(err, x, op, "out of host memory");
    int64_t at = 0;
    offs[0] = 0;
    for (int p = 0; p < G; p++) {
        int slot = 0;
        size_t before = 0;
        for (int e2 = 0; e2 < e; e2++)
            if (rt_xemb_served(xu, xu->k, e2)) slot++, before += (size_t)xu->n_from[p * E + e2];
        const uint8_t *idp = m[p].ids + before * (size_t)ib;
        for (int64_t j = 0; j < xu->n_from[p * E + e]; j++) {
            uint64_t id = rt_xemb_get_id(idp + (size_t)j * ib, ib);
            ids[at + j] = sh->dyn ? (int64_t)id : local_row(xu, sh, e, id);
            if (ids[at + j] < 0) return rt_xemb_fail(err, x, op, "an ID of another shard arrived");
        }
        int64_t b = xu->bsz[p], L = rt_xemb_counts(xu, (int)b), o = xu->boff[p];
        for (int64_t s = 0; !xu->u->dedup_send && s < b; s++) {
            offs[o + s + 1] = offs[o + s] + count_at(m[p].counts, (int64_t)slot * L + s);
            for (int64_t j = offs[o + s]; j < offs[o + s + 1]; j++)
                bag[j] = o + s;
        }
        at += xu->n_from[p * E + e];
    }
    if (rt_xemb_per_row(xu, e))
        for (int64_t j = 0; j < n; j++)
            bag[j] = j;
    /* A dynamic shard's keys become rows of its working set. */
    if (sh->dyn && rt_xdyn_probe(sh, x->s, ids, n, err))
        return rt_xemb_fail(err, x, op, "hash table probe");
    if (rt_xemb_put(x, &xu->own_ids[e], ids, (size_t)n, err)) return -1;
    if (!rt_xemb_per_row(xu, e) &&
        rt_xemb_put(x, &xu->own_offsets[e], offs, (size_t)xu->boff[G] + 1, err))
        return -1;
    return 0;
}

int rt_xemb_parse(rt_xexec *x, rt_xunit *xu, int op, FILE *err)
{
    if (xu->parsed) return 0;
    int G = xu->G, E = xu->n_entries;
    size_t ids_total = rt_xemb_total(xu->ids_rc, G), cat_total = rt_xemb_total(xu->cat_rc, G);
    const uint8_t *ids = host_view(x, xu, xu->ids_recv.p, ids_total, 0, err);
    const uint8_t *cats = !ids || !xu->u->category_msg
                              ? NULL
                              : host_view(x, xu, xu->cat_recv.p, cat_total, ids_total, err);
    /* The second view may have moved the host copy that the first points into. */
    if (ids && !x->dev->ops->host_memory) ids = xu->host_ids;
    message *m = malloc(sizeof *m * (size_t)G);
    if (!ids || (xu->u->category_msg && !cats) || !m) {
        free(m);
        return rt_xemb_fail(err, x, op, "reading the received IDs failed");
    }
    for (int p = 0; p < G; p++) {
        size_t counts = counts_bytes(xu, xu->k, xu->bsz[p]);
        int L = rt_xemb_counts(xu, (int)xu->bsz[p]);
        m[p] = message_of(xu, ids, cats, p, counts);
        if (!xu->u->category_msg && xu->ids_rc[p] < counts) {
            free(m);
            return rt_xemb_fail(err, x, op, "a short ID message arrived");
        }
        for (int e = 0, slot = 0; e < E; e++) {
            if (!rt_xemb_served(xu, xu->k, e)) continue;
            int64_t n = 0;
            for (int s = 0; s < L; s++)
                n += count_at(m[p].counts, (int64_t)slot * L + s);
            xu->n_from[p * E + e] = n;
            slot++;
        }
    }
    int rc = 0;
    for (int e = 0; e < E && !rc; e++)
        if (rt_xemb_served(xu, xu->k, e)) rc = entry_indices(x, xu, m, e, op, err);
    free(m);
    xu->parsed = !rc;
    return rc;
}

/* ---- dynamic tables ------------------------------------------------------------------------ */

/* Whether served entry E is a dynamic shard whose PART (keys or values) lives in host memory
 * (RT_OFFLOAD_NONE: in HBM). */
static int dyn_part(const rt_xexec *x, const rt_xunit *xu, int e, rt_offload part)
{
    if (!rt_xemb_served(xu, xu->k, e)) return 0;
    const rt_table *tb = &x->s->model.tables[xu->entries[e].table];
    if (!tb->dynamic) return 0;
    if (part == RT_OFFLOAD_NONE) return tb->hash.offload != RT_OFFLOAD_KEYS;
    return tb->hash.offload == part;
}

/* The probe op in HBM (a hash kernel) or in host memory (a host-link op, priced as the IDs
 * and rows crossing it): the probe of every received key happens when the ID messages are
 * parsed; the host-memory one then copies its rows to the device again, and each brings the
 * working set of its shards whose values are in HBM. */
int rt_xemb_probe(rt_xexec *x, rt_xunit *xu, int op, FILE *err)
{
    if (rt_xemb_parse(x, xu, op, err)) return -1;
    int host = x->g->ops[op].kernel == RT_K_H2D;
    for (int e = 0; e < xu->n_entries; e++) {
        if (!dyn_part(x, xu, e, host ? RT_OFFLOAD_KEYS : RT_OFFLOAD_NONE)) continue;
        if (host && rt_xemb_put(x, &xu->own_ids[e], xu->own_host_ids[e], (size_t)xu->own_n[e], err))
            return -1;
        rt_xshard *sh = &x->tables.shards[xu->shard_of[e]];
        if (!dyn_part(x, xu, e, RT_OFFLOAD_VALUES) && rt_xdyn_fetch(sh, x->dev, err))
            return rt_xemb_fail(err, x, op, "hash table fetch");
    }
    return 0;
}

/* Fetch, write-back (values in host memory) and eviction of the unit's dynamic shards. */
int rt_xemb_hash_op(rt_xexec *x, rt_xunit *xu, int op, FILE *err)
{
    rt_role role = x->g->ops[op].role;
    for (int e = 0; e < xu->n_entries; e++) {
        if (!dyn_part(x, xu, e, RT_OFFLOAD_NONE) && !dyn_part(x, xu, e, RT_OFFLOAD_KEYS)) continue;
        rt_xshard *sh = &x->tables.shards[xu->shard_of[e]];
        int values_host = dyn_part(x, xu, e, RT_OFFLOAD_VALUES);
        if (role == RT_ROLE_HASH_FETCH && values_host && rt_xdyn_fetch(sh, x->dev, err))
            return rt_xemb_fail(err, x, op, "hash table fetch");
        if (role == RT_ROLE_HASH_WRITEBACK && values_host) rt_xdyn_write_back(sh);
        if (role == RT_ROLE_HASH_EVICT && rt_xdyn_evict(sh, x->s, err))
            return rt_xemb_fail(err, x, op, "hash table eviction");
    }
    return 0;
}

/* ---- lookup ------------------------------------------------------------------------------- */

void rt_xemb_layout(rt_xexec *x, rt_xunit *xu)
{
    int G = xu->G, E = xu->n_entries, b = x->v.batch.batch;
    size_t st = 0, rt = 0;
    for (int p = 0; p < G; p++) {
        size_t sn = 0, rn = 0;
        for (int e = 0; e < E; e++) {
            size_t w = (size_t)xu->entries[e].width;
            if (rt_xemb_served(xu, xu->k, e)) { /* p's own batch of pooled rows */
                xu->send_at[p * E + e] = st + sn;
                sn += rt_xemb_rows(xu, e, (int)xu->bsz[p], xu->n_from[p * E + e]) * w;
            }
            if (rt_xemb_served(xu, p, e)) {
                xu->recv_at[p * E + e] = rt + rn;
                rn += rt_xemb_rows(xu, e, b, xu->n_to[p * E + e]) * w;
            }
        }
        size_t cb = rt_xemb_cb(x);
        xu->emb_sc[p] = sn * cb, xu->emb_sd[p] = st * cb;
        xu->emb_rc[p] = rn * cb, xu->emb_rd[p] = rt * cb;
        st += sn, rt += rn;
    }
}

/* Entry E's rows for every member's IDs into OUT: straight from the shard, or with stage 2
 * each distinct row read once and expanded through the inverse. */
static rt_kstatus lookup_rows(rt_xexec *x, rt_xunit *xu, int e, float *out, FILE *err)
{
    rt_xdev *d = x->dev;
    const rt_xshard *sh = &x->tables.shards[xu->shard_of[e]];
    int64_t n = xu->own_n[e], bags = xu->boff[xu->G], w = sh->width;
    int pr = rt_xemb_per_row(xu, e);
    if (sh->rows == 0) /* a row-wise shard past the table's end: empty bags, zero rows */
        return d->ops->zero(d, out, sizeof(float) * (size_t)((pr ? n : bags) * w)) ? RT_K_EDEVICE
                                                                                   : RT_K_OK;
    if (!xu->u->dedup_owner)
        return pr ? d->ops->sequence_lookup(d, &sh->t, xu->own_ids[e].p, n, out)
                  : d->ops->gather_pool(d, &sh->t, xu->own_ids[e].p, xu->own_offsets[e].p, bags,
                                        RT_KPOOL_SUM, out);
    const rt_xuniq *u = &xu->s2[e];
    if (rt_xbuf_reserve(d, &xu->tmp_a, sizeof(float) * (size_t)(u->n_uniq * w), err))
        return RT_K_ENOMEM;
    rt_kstatus st = d->ops->sequence_lookup(d, &sh->t, u->uniq_dev.p, u->n_uniq, xu->tmp_a.p);
    if (st != RT_K_OK) return st;
    rt_ktable distinct = {xu->tmp_a.p, u->n_uniq, w, RT_KDT_FP32};
    return pr ? d->ops->gather_rows(d, xu->tmp_a.p, u->n_uniq, w, u->inv_dev.p, n, out)
              : d->ops->gather_pool(d, &distinct, u->inv_dev.p, xu->own_offsets[e].p, bags,
                                    RT_KPOOL_SUM, out);
}

static int lookup_entry(rt_xexec *x, rt_xunit *xu, int e, int op, FILE *err)
{
    int G = xu->G, E = xu->n_entries;
    size_t w = (size_t)xu->entries[e].width;
    size_t rows = rt_xemb_per_row(xu, e) ? (size_t)xu->own_n[e] : (size_t)xu->boff[G];
    if (rt_xbuf_reserve(x->dev, &xu->own_out[e], rows * w * sizeof(float), err)) return -1;
    float *out = xu->own_out[e].p;
    if (rt_xemb_kcheck(lookup_rows(x, xu, e, out, err), err, x, op, "lookup")) return -1;
    size_t from = 0; /* each member's rows go into its message */
    for (int p = 0; p < G; p++) {
        size_t n = rt_xemb_rows(xu, e, (int)xu->bsz[p], xu->n_from[p * E + e]) * w;
        if (rt_xemb_to_msg(x, xu->emb_send.p, xu->send_at[p * E + e], out + from, n)) return -1;
        from += n;
    }
    return 0;
}

/* The graph's lookup bytes: IDs read, rows read (each distinct row once with stage 2, its
 * keys and the 4-byte inverse too), the messages written. */
static double lookup_bytes(const rt_xexec *x, const rt_xunit *xu)
{
    int E = xu->n_entries;
    double in = 0, rows = 0, keys = 0;
    for (int e = 0; e < E; e++) {
        if (!rt_xemb_served(xu, xu->k, e)) continue;
        double eb = (double)rt_dtype_bytes(rt_scenario_table_dtype(x->s, xu->entries[e].table));
        double r = xu->u->dedup_owner ? (double)xu->s2[e].n_uniq : (double)xu->own_n[e];
        in += (double)xu->own_n[e], rows += r * xu->entries[e].width * eb;
        int first = 1; /* a feature's distinct keys count once over its column shards */
        for (int e2 = 0; e2 < e; e2++)
            first &= !(rt_xemb_served(xu, xu->k, e2) && xu->entries[e2].i == xu->entries[e].i);
        if (first) keys += r;
    }
    double out = (double)rt_xemb_total(xu->emb_sc, xu->G);
    if (xu->u->dedup_owner) return keys * idb(x) + 4 * in + rows + out;
    return in * idb(x) + rows + out;
}

/* plan.fusion none: feature I's entries only, plus their fp32 staging round trip. */
static double feature_bytes(const rt_xexec *x, const rt_xunit *xu, int i)
{
    double b = 0;
    for (int e = 0; e < xu->n_entries; e++) {
        if (!rt_xemb_served(xu, xu->k, e) || xu->entries[e].i != i) continue;
        double w = xu->entries[e].width, out = 0;
        double eb = (double)rt_dtype_bytes(rt_scenario_table_dtype(x->s, xu->entries[e].table));
        for (int p = 0; p < xu->G; p++)
            out += (double)rt_xemb_rows(xu, e, (int)xu->bsz[p], xu->n_from[p * xu->n_entries + e]);
        b += (double)xu->own_n[e] * (idb(x) + w * eb) + out * w * (double)rt_xemb_cb(x) +
             rt_fusion_round_trip(out * w);
    }
    return b;
}

/* One op per unit, or with plan.fusion none one per feature (its index in `layer`): the first
 * decodes the ID messages and lays out the embedding message for all of them. */
int rt_xemb_lookup(rt_xexec *x, rt_xunit *xu, int op, FILE *err)
{
    int feat = x->g->ops[op].layer;
    if (feat <= 0) {
        if (rt_xemb_parse(x, xu, op, err)) return -1;
        rt_xemb_layout(x, xu);
        if (rt_xbuf_reserve(x->dev, &xu->emb_send, rt_xemb_total(xu->emb_sc, xu->G), err))
            return -1;
    }
    if (xu->u->fusion == RT_FUSION_SPARSE) return rt_xemb_lookup_fused(x, xu, op, err);
    for (int e = 0; e < xu->n_entries; e++)
        if (rt_xemb_served(xu, xu->k, e) && (feat < 0 || xu->entries[e].i == feat) &&
            lookup_entry(x, xu, e, op, err))
            return -1;
    rt_xexec_count(x, op, feat < 0 ? lookup_bytes(x, xu) : feature_bytes(x, xu, feat), 0);
    return 0;
}

int rt_xemb_out_a2a(rt_xexec *x, rt_xunit *xu, int op, FILE *err)
{
    if (rt_xbuf_reserve(x->dev, &xu->emb_recv, rt_xemb_total(xu->emb_rc, xu->G), err)) return -1;
    if (x->comm->ops->alltoallv(x->comm, xu->grp, xu->emb_send.p, xu->emb_sc, xu->emb_sd,
                                xu->emb_recv.p, xu->emb_rc, xu->emb_rd))
        return rt_xemb_fail(err, x, op, "AlltoAllv failed");
    rt_xexec_count_peers(x, op, xu->emb_sc, xu->emb_rc, xu->G);
    return 0;
}

/* ---- recovery ------------------------------------------------------------------------------ */

/* The rows member blocks returned for feature entry E into DST (ROWS x dim): column shards side
 * by side, row-wise owners' blocks summed (pooled) or scattered back to their IDs' positions. */
static int assemble(rt_xexec *x, rt_xunit *xu, int e, float *dst, size_t rows, int op, FILE *err)
{
    int G = xu->G, E = xu->n_entries, F = xu->u->n_features;
    const rt_xentry *en = &xu->entries[e];
    int dim = x->s->model.tables[en->table].dim;
    const float *recv = xu->recv32;
    rt_xdev *d = x->dev;
    if (xu->u->sharding == RT_SHARD_ROW && xu->u->tower_size) {
        /* SPTT: the tower's ReduceScatter already summed the owners' partial sums. */
        int first = xu->u->tower_of[en->table] * xu->u->tower_size;
        return d->ops->copy2d(d, dst, (size_t)dim * sizeof(float),
                              recv + xu->recv_at[first * E + e], (size_t)dim * sizeof(float),
                              (size_t)dim * sizeof(float), rows);
    }
    if (xu->u->sharding == RT_SHARD_ROW) {
        if (d->ops->zero(d, dst, rows * (size_t)dim * sizeof(float))) return -1;
        for (int q = 0; q < G; q++) {
            const float *src = recv + xu->recv_at[q * E + e];
            int pr = rt_xemb_per_row(xu, e);
            rt_kstatus st =
                pr ? d->ops->scatter_add_rows(d, src, xu->n_to[q * E + e], dim,
                                              xu->pos_dev[q * F + en->i].p, (int64_t)rows, dst)
                   : d->ops->axpy(d, (int64_t)rows * dim, 1.0f, src, dst);
            if (rt_xemb_kcheck(st, err, x, op, pr ? "scatter_add_rows" : "axpy")) return -1;
        }
        return 0;
    }
    for (int q = 0; q < G; q++)
        if (rt_xemb_served(xu, q, e) &&
            d->ops->copy2d(d, dst + en->col0, (size_t)dim * sizeof(float),
                           recv + xu->recv_at[q * E + e], (size_t)en->width * sizeof(float),
                           (size_t)en->width * sizeof(float), rows))
            return -1;
    return 0;
}

/* Stage 1: the distinct rows come back; the sender pools its bags from them. */
static int recover_dedup(rt_xexec *x, rt_xunit *xu, int i, int op, FILE *err)
{
    rt_xdev *d = x->dev;
    const rt_xuniq *u = &xu->s1[i];
    int t = xu->u->features[i], dim = x->s->model.tables[t].dim;
    int cs = xu->u->sharding == RT_SHARD_COLUMN ? xu->u->col_shards : 1;
    rt_xbuf *rows = &xu->s1_rows[i];
    if (rt_xbuf_reserve(d, rows, sizeof(float) * (size_t)(u->n_uniq * dim), err)) return -1;
    for (int c = 0; c < cs; c++)
        if (assemble(x, xu, i * cs + c, rows->p, (size_t)u->n_uniq, op, err)) return -1;
    rt_ktable distinct = {rows->p, u->n_uniq, dim, RT_KDT_FP32};
    rt_kstatus st =
        x->s->model.tables[t].sequence
            ? d->ops->gather_rows(d, rows->p, u->n_uniq, dim, u->inv_dev.p, u->n, x->v.emb[t])
            : d->ops->gather_pool(d, &distinct, u->inv_dev.p, xu->s1_offsets[i].p, x->v.batch.batch,
                                  RT_KPOOL_SUM, x->v.emb[t]);
    return rt_xemb_kcheck(st, err, x, op, "recovery gather");
}

/* The graph's recovery bytes: read and write the messages; with stage 1, also the inverse
 * index and the pooled output (plans/exchange.c fill_sender). */
static double recover_bytes(const rt_xexec *x, const rt_xunit *xu)
{
    double recv = xu->u->tower_size ? (double)rt_xemb_total(xu->prc, xu->G / xu->u->tower_size)
                                    : (double)rt_xemb_total(xu->emb_rc, xu->G);
    if (!xu->u->dedup_send) return 2 * recv;
    double raw = 0, out = 0, sent = 0;
    for (int i = 0; i < xu->u->n_features; i++) {
        const rt_table *tb = &x->s->model.tables[xu->u->features[i]];
        raw += (double)xu->s1[i].n;
        out += (tb->sequence ? (double)xu->s1[i].n : x->v.batch.batch) * tb->dim *
               (double)rt_xemb_cb(x);
    }
    for (int k = 0; k < xu->G * xu->n_entries; k++)
        sent += (double)xu->n_to[k];
    return recv + 4 * raw + 4 * sent + out;
}

int rt_xemb_recover(rt_xexec *x, rt_xunit *xu, int op, FILE *err)
{
    /* The blocks in fp32: the received message itself, or its conversion. */
    size_t bytes = xu->u->tower_size ? rt_xemb_total(xu->prc, xu->G / xu->u->tower_size)
                                     : rt_xemb_total(xu->emb_rc, xu->G);
    size_t elems = bytes / rt_xemb_cb(x);
    xu->recv32 = xu->emb_recv.p;
    if (rt_xemb_ck(x) != RT_KDT_FP32) {
        if (rt_xbuf_reserve(x->dev, &xu->msg32, elems * sizeof(float), err) ||
            rt_xemb_from_msg(x, xu->emb_recv.p, 0, xu->msg32.p, elems))
            return -1;
        xu->recv32 = xu->msg32.p;
    }
    if (x->tm && xu->u->tower_size) {
        if (rt_xtm_assemble(x, xu, xu->recv32, op, err)) return -1;
    } else if (xu->u->dedup_send) {
        for (int i = 0; i < xu->u->n_features; i++)
            if (recover_dedup(x, xu, i, op, err)) return -1;
    } else {
        for (int e = 0; e < xu->n_entries; e++) {
            const rt_xentry *en = &xu->entries[e];
            size_t rows =
                en->sequence ? (size_t)x->v.batch.f[en->table].n_ids : (size_t)x->v.batch.batch;
            if (assemble(x, xu, e, x->v.emb[en->table], rows, op, err)) return -1;
        }
    }
    rt_xexec_count(x, op, recover_bytes(x, xu), 0);
    return 0;
}
