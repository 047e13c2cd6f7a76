/* The executors of an embedding exchange's ops (graph.h rt_graph_unit; plans/exchange.h says
 * what each op means). Message layouts follow the graph's byte accounting exactly:
 *   ID message to member q:   for every entry q serves, the batch's per-sample lengths (uint32),
 *                             then for every entry q serves, its IDs (workload.id_bytes each);
 *   embedding message to p:   for every entry this rank serves, p's pooled rows (batch x width)
 *                             or, for a sequence feature, one row per ID p sent;
 *   gradient message to q:    the mirror of the embedding message.
 * An entry is one (feature, column shard) of the unit. Index lists are built on the host from
 * the received messages and copied to the device; the lookups, recoveries and updates are the
 * kernels of kernels/. */
#include <stdlib.h>
#include <string.h>

#include "exec.h"

/* ---- helpers ---------------------------------------------------------------------------- */

static int fail(FILE *err, const rt_xexec *x, int op, const char *what)
{
    fprintf(err, "exec: rank %d, op %d '%s' (%s): %s\n", x->rank, op,
            x->g->ops[op].name ? x->g->ops[op].name : "?", x->g->phases[x->g->ops[op].phase], what);
    return -1;
}

static int kcheck(rt_kstatus st, FILE *err, const rt_xexec *x, int op, const char *kernel)
{
    if (st == RT_K_OK) return 0;
    char m[160];
    snprintf(m, sizeof m, "kernel %s failed: %s", kernel, rt_kstatus_str(st));
    return fail(err, x, op, m);
}

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
static void *host_view(rt_xexec *x, rt_xunit *xu, const void *dev, size_t n, FILE *err)
{
    if (x->dev->ops->host_memory) return (void *)dev;
    if (n > xu->host_ids_cap) {
        uint8_t *p = realloc(xu->host_ids, n);
        if (!p) {
            fprintf(err, "exec: out of host memory (%zu bytes)\n", n);
            return NULL;
        }
        xu->host_ids = p, xu->host_ids_cap = n;
    }
    if (n && x->dev->ops->copy(x->dev, xu->host_ids, dev, n, RT_XCOPY_D2H)) return NULL;
    return xu->host_ids;
}

static int put_ids(rt_xexec *x, rt_xbuf *b, const int64_t *h, size_t n, FILE *err)
{
    if (rt_xbuf_reserve(x->dev, b, n * sizeof(int64_t), err)) return -1;
    return n ? x->dev->ops->copy(x->dev, b->p, h, n * sizeof(int64_t), RT_XCOPY_H2D) : 0;
}

static void put_id(uint8_t *p, uint64_t id, int bytes)
{
    if (bytes == 4) {
        uint32_t v = (uint32_t)id;
        memcpy(p, &v, 4);
    } else {
        memcpy(p, &id, 8);
    }
}

static uint64_t get_id(const uint8_t *p, int bytes)
{
    if (bytes == 4) {
        uint32_t v;
        memcpy(&v, p, 4);
        return v;
    }
    uint64_t v;
    memcpy(&v, p, 8);
    return v;
}

static int row_owner(const rt_graph_unit *u, int table, uint64_t id)
{
    return (int)(id / u->block[table]);
}

static size_t entry_rows(const rt_xunit *xu, int e, int batch, int64_t n_ids)
{
    (void)xu;
    return xu->entries[e].sequence ? (size_t)n_ids : (size_t)batch;
}

/* ---- setup ------------------------------------------------------------------------------ */

static int unsupported(const rt_graph_unit *u, const rt_scenario *s, FILE *err)
{
    const char *why = u->dedup_send || u->dedup_owner       ? "plan.dedup other than none"
                      : u->key_hash || u->category_msg      ? "FusedRec's key hashing (fused plan)"
                      : u->hash_rows                        ? "hash-routed row-wise sharding"
                      : u->sync.size > 1 && !u->sync_sparse ? "hsp sync: dense"
                      : s->plan.comm_dtype != RT_DT_FP32    ? "plan.precision.comm other than fp32"
                                                            : NULL;
    if (!why) return 0;
    fprintf(err,
            "exec: %s is not executed by rectwin-exec yet; allowed: dedup none, comm fp32, hsp "
            "sync: sparse (rectwin sim predicts it)\n",
            why);
    return -1;
}

static int build_entries(rt_xunit *xu, const rt_scenario *s)
{
    const rt_graph_unit *u = xu->u;
    int cs = u->sharding == RT_SHARD_COLUMN ? u->col_shards : 1;
    xu->n_entries = u->n_features * cs;
    xu->entries = calloc((size_t)xu->n_entries, sizeof *xu->entries);
    xu->served = calloc((size_t)xu->G * (size_t)xu->n_entries, sizeof(int));
    if (!xu->entries || !xu->served) return -1;
    for (int i = 0; i < u->n_features; i++)
        for (int c = 0; c < cs; c++) {
            int f = u->features[i], e = i * cs + c;
            const rt_table *tb = &s->model.tables[f];
            int w = tb->dim / cs;
            xu->entries[e] = (rt_xentry){i, c, f, w, c * w, tb->sequence};
            for (int q = 0; q < xu->G; q++)
                xu->served[q * xu->n_entries + e] =
                    u->sharding == RT_SHARD_ROW || u->owner[f * u->col_shards + c] == q;
        }
    return 0;
}

static int alloc_unit(rt_xunit *xu)
{
    size_t G = (size_t)xu->G, E = (size_t)xu->n_entries, F = (size_t)xu->u->n_features;
    xu->n_to = calloc(G * E, sizeof(int64_t));
    xu->n_from = calloc(G * E, sizeof(int64_t));
    xu->pos_to = calloc(G * F, sizeof(int64_t *));
    xu->pos_dev = calloc(G * F, sizeof(rt_xbuf));
    xu->ids_sc = calloc(G * 8, sizeof(size_t));
    xu->own_ids = calloc(E, sizeof(rt_xbuf));
    xu->own_offsets = calloc(E, sizeof(rt_xbuf));
    xu->own_out = calloc(E, sizeof(rt_xbuf));
    xu->own_grad = calloc(E, sizeof(rt_xbuf));
    xu->own_n = calloc(E, sizeof(int64_t));
    xu->shard_of = malloc(E * sizeof(int));
    xu->recv_at = calloc(G * E, sizeof(size_t));
    xu->send_at = calloc(G * E, sizeof(size_t));
    if (!xu->n_to || !xu->n_from || !xu->pos_to || !xu->pos_dev || !xu->ids_sc || !xu->own_ids ||
        !xu->own_offsets || !xu->own_out || !xu->own_grad || !xu->own_n || !xu->shard_of ||
        !xu->recv_at || !xu->send_at)
        return -1;
    if (xu->u->sync.size > 1) {
        xu->own_host_ids = calloc(E, sizeof(int64_t *));
        xu->own_host_bag = calloc(E, sizeof(int64_t *));
        xu->sync_all_ids = calloc(E, sizeof(rt_xbuf));
        xu->sync_all_grads = calloc(E, sizeof(rt_xbuf));
        xu->sync_u = calloc(E, sizeof(int64_t));
        xu->sync_n = calloc(E, sizeof(int64_t));
        if (!xu->own_host_ids || !xu->own_host_bag || !xu->sync_all_ids || !xu->sync_all_grads ||
            !xu->sync_u || !xu->sync_n)
            return -1;
    }
    xu->ids_sd = xu->ids_sc + G, xu->ids_rc = xu->ids_sc + 2 * G, xu->ids_rd = xu->ids_sc + 3 * G;
    xu->emb_sc = xu->ids_sc + 4 * G, xu->emb_sd = xu->ids_sc + 5 * G;
    xu->emb_rc = xu->ids_sc + 6 * G, xu->emb_rd = xu->ids_sc + 7 * G;
    return 0;
}

/* This rank's shards: the entries its group index serves. */
static int add_shards(rt_xexec *x, rt_xunit *xu, FILE *err)
{
    const rt_graph_unit *u = xu->u;
    for (int e = 0; e < xu->n_entries; e++) {
        xu->shard_of[e] = -1;
        if (!xu->served[xu->k * xu->n_entries + e]) continue;
        const rt_xentry *en = &xu->entries[e];
        uint64_t rows = x->s->model.tables[en->table].rows, row0 = 0;
        if (u->sharding == RT_SHARD_ROW) {
            uint64_t blk = u->block[en->table];
            row0 = blk * (uint64_t)xu->k;
            rows = row0 >= rows ? 0 : (rows - row0 < blk ? rows - row0 : blk);
        }
        xu->shard_of[e] = rt_xtables_add(&x->tables, x->dev, x->s, en->table, en->col0, en->width,
                                         row0, rows, err);
        if (xu->shard_of[e] < 0) return -1;
    }
    return 0;
}

int rt_xemb_setup(rt_xexec *x, FILE *err)
{
    const rt_graph *g = x->g;
    x->units = calloc((size_t)(g->n_units ? g->n_units : 1), sizeof *x->units);
    if (!x->units) goto oom;
    for (int n = 0; n < g->n_units; n++) {
        rt_xunit *xu = &x->units[n];
        xu->u = &g->units[n];
        if (unsupported(xu->u, x->s, err)) return -1;
        xu->G = xu->u->group.size;
        xu->k = rt_group_index(xu->u->group, x->rank);
        if (build_entries(xu, x->s) || alloc_unit(xu)) goto oom;
        if (add_shards(x, xu, err)) return -1;
        if (!(xu->grp = rt_xexec_group(x, xu->u->group, err))) return -1;
        if (xu->u->sync.size > 1 && !(xu->sync_grp = rt_xexec_group(x, xu->u->sync, err)))
            return -1;
    }
    return 0;
oom:
    fprintf(err, "exec: out of host memory setting up the embedding exchanges\n");
    return -1;
}

void rt_xemb_free(rt_xexec *x)
{
    if (!x->units) return;
    for (int n = 0; n < x->g->n_units; n++) {
        rt_xunit *xu = &x->units[n];
        rt_xbuf *bufs[] = {&xu->ids_send,  &xu->ids_recv,  &xu->emb_send,  &xu->emb_recv,
                           &xu->grad_send, &xu->grad_recv, &xu->sync_send, &xu->sync_recv,
                           &xu->sync_inv,  &xu->sync_bag,  &xu->sync_tmp,  &xu->sync_agg};
        for (size_t b = 0; b < sizeof bufs / sizeof *bufs; b++)
            rt_xbuf_free(x->dev, bufs[b]);
        for (int e = 0; xu->own_ids && e < xu->n_entries; e++) {
            rt_xbuf_free(x->dev, &xu->own_ids[e]), rt_xbuf_free(x->dev, &xu->own_offsets[e]);
            rt_xbuf_free(x->dev, &xu->own_out[e]), rt_xbuf_free(x->dev, &xu->own_grad[e]);
            if (xu->sync_all_ids) rt_xbuf_free(x->dev, &xu->sync_all_ids[e]);
            if (xu->sync_all_grads) rt_xbuf_free(x->dev, &xu->sync_all_grads[e]);
            if (xu->own_host_ids) free(xu->own_host_ids[e]), free(xu->own_host_bag[e]);
        }
        for (int i = 0; xu->pos_to && i < xu->G * xu->u->n_features; i++) {
            free(xu->pos_to[i]);
            rt_xbuf_free(x->dev, &xu->pos_dev[i]);
        }
        free(xu->entries), free(xu->served), free(xu->n_to), free(xu->n_from), free(xu->pos_to);
        free(xu->pos_dev), free(xu->ids_sc), free(xu->own_ids), free(xu->own_offsets);
        free(xu->own_out), free(xu->own_grad), free(xu->own_n), free(xu->shard_of);
        free(xu->recv_at), free(xu->send_at), free(xu->host_ids), free(xu->host_scratch);
        free(xu->own_host_ids), free(xu->own_host_bag), free(xu->sync_all_ids);
        free(xu->sync_all_grads), free(xu->sync_u), free(xu->sync_n);
    }
    free(x->units);
    x->units = NULL;
}

/* ---- forward: route, ID AlltoAll ---------------------------------------------------------- */

/* Counts per (member, entry) of this rank's IDs, and the positions of row-wise sequence IDs. */
static int count_route(rt_xexec *x, rt_xunit *xu, FILE *err)
{
    const rt_graph_unit *u = xu->u;
    int G = xu->G, E = xu->n_entries, F = u->n_features;
    memset(xu->n_to, 0, sizeof(int64_t) * (size_t)G * (size_t)E);
    for (int e = 0; e < E; e++) {
        const rt_xentry *en = &xu->entries[e];
        const rt_feature_batch *fb = &x->batch.f[en->table];
        if (u->sharding != RT_SHARD_ROW) {
            for (int q = 0; q < G; q++)
                if (xu->served[q * E + e]) xu->n_to[q * E + e] = (int64_t)fb->n_ids;
            continue;
        }
        for (uint64_t j = 0; j < fb->n_ids; j++)
            xu->n_to[row_owner(u, en->table, fb->ids[j]) * E + e]++;
        if (!en->sequence) continue;
        for (int q = 0; q < G; q++) {
            int64_t **pos = &xu->pos_to[q * F + en->i];
            free(*pos);
            *pos = malloc(sizeof(int64_t) * (size_t)(xu->n_to[q * E + e] + 1));
            if (!*pos) {
                fprintf(err, "exec: out of host memory routing IDs\n");
                return -1;
            }
            int64_t m = 0;
            for (uint64_t j = 0; j < fb->n_ids; j++)
                if (row_owner(u, en->table, fb->ids[j]) == q) (*pos)[m++] = (int64_t)j;
            if (put_ids(x, &xu->pos_dev[q * F + en->i], *pos, (size_t)m, err)) return -1;
        }
    }
    return 0;
}

/* Writes this rank's message to member Q at P: lengths of every served entry, then the IDs. */
static void write_ids_message(rt_xexec *x, rt_xunit *xu, int q, uint8_t *p)
{
    const rt_graph_unit *u = xu->u;
    int E = xu->n_entries, b = x->batch.batch, ib = idb(x), rows = u->sharding == RT_SHARD_ROW;
    for (int e = 0; e < E; e++) {
        if (!xu->served[q * E + e]) continue;
        const rt_feature_batch *fb = &x->batch.f[xu->entries[e].table];
        uint32_t *lens = (uint32_t *)(void *)p;
        uint64_t at = 0;
        for (int s = 0; s < b; s++) {
            uint32_t n = 0;
            for (uint32_t j = 0; j < fb->lengths[s]; j++)
                n += !rows || row_owner(u, xu->entries[e].table, fb->ids[at + j]) == q;
            at += fb->lengths[s];
            memcpy(lens + s, &n, sizeof n);
        }
        p += (size_t)b * 4;
    }
    for (int e = 0; e < E; e++) {
        if (!xu->served[q * E + e]) continue;
        const rt_feature_batch *fb = &x->batch.f[xu->entries[e].table];
        for (uint64_t j = 0; j < fb->n_ids; j++)
            if (!rows || row_owner(u, xu->entries[e].table, fb->ids[j]) == q)
                put_id(p, fb->ids[j], ib), p += ib;
    }
}

static int run_route(rt_xexec *x, rt_xunit *xu, int op, FILE *err)
{
    int G = xu->G, E = xu->n_entries, b = x->batch.batch, ib = idb(x);
    if (count_route(x, xu, err)) return -1;
    size_t total = 0;
    double sent_ids = 0;
    for (int q = 0; q < G; q++) {
        size_t n = 0;
        for (int e = 0; e < E; e++)
            if (xu->served[q * E + e])
                n += (size_t)b * 4 + (size_t)xu->n_to[q * E + e] * (size_t)ib,
                    sent_ids += (double)xu->n_to[q * E + e];
        xu->ids_sc[q] = n, xu->ids_sd[q] = total, total += n;
    }
    if (rt_xbuf_reserve(x->dev, &xu->ids_send, total, err)) return -1;
    uint8_t *h = x->dev->ops->host_memory ? xu->ids_send.p : malloc(total ? total : 1);
    if (!h) return fail(err, x, op, "out of host memory building ID messages");
    for (int q = 0; q < G; q++)
        write_ids_message(x, xu, q, h + xu->ids_sd[q]);
    int rc = 0;
    if (!x->dev->ops->host_memory) {
        rc = total ? x->dev->ops->copy(x->dev, xu->ids_send.p, h, total, RT_XCOPY_H2D) : 0;
        free(h);
    }
    /* The graph's bucketize reads each ID and writes it with its permutation index. */
    rt_xexec_count(x, op, sent_ids * (2 * ib + 4), 0);
    return rc;
}

static int run_ids_a2a(rt_xexec *x, rt_xunit *xu, int op, FILE *err)
{
    int G = xu->G;
    int64_t *sc = host_scratch(xu, 2 * (size_t)G, err), *rc = sc + G;
    if (!sc) return -1;
    for (int q = 0; q < G; q++)
        sc[q] = (int64_t)xu->ids_sc[q];
    /* The splits: every owner must know how many bytes each sender's message has. */
    if (x->comm->ops->alltoall_meta(x->comm, xu->grp, sc, rc))
        return fail(err, x, op, "exchanging message sizes failed");
    size_t total = 0;
    for (int q = 0; q < G; q++)
        xu->ids_rc[q] = (size_t)rc[q], xu->ids_rd[q] = total, total += (size_t)rc[q];
    if (rt_xbuf_reserve(x->dev, &xu->ids_recv, total, err)) return -1;
    if (x->comm->ops->alltoallv(x->comm, xu->grp, xu->ids_send.p, xu->ids_sc, xu->ids_sd,
                                xu->ids_recv.p, xu->ids_rc, xu->ids_rd))
        return fail(err, x, op, "AlltoAllv failed");
    rt_xexec_count_peers(x, op, xu->ids_sc, xu->ids_rc, G);
    return 0;
}

/* ---- forward: lookup, embedding AlltoAll, recovery ---------------------------------------- */

/* Parses the received ID messages into per-entry index lists (local rows, bags over all
 * members) and n_from; returns 0 or -1. */
static int parse_ids(rt_xexec *x, rt_xunit *xu, int op, FILE *err)
{
    int G = xu->G, E = xu->n_entries, b = x->batch.batch;
    size_t total = 0;
    for (int q = 0; q < G; q++)
        total += xu->ids_rc[q];
    const uint8_t *h = host_view(x, xu, xu->ids_recv.p, total, err);
    if (!h) return -1;
    int n_served = 0;
    for (int e = 0; e < E; e++)
        n_served += xu->served[xu->k * E + e];
    for (int p = 0; p < G; p++) {
        const uint8_t *m = h + xu->ids_rd[p];
        size_t need = (size_t)n_served * (size_t)b * 4;
        if (xu->ids_rc[p] < need) return fail(err, x, op, "short ID message");
        int slot = 0;
        for (int e = 0; e < E; e++) {
            if (!xu->served[xu->k * E + e]) continue;
            const uint32_t *lens = (const uint32_t *)(const void *)(m + (size_t)slot * b * 4);
            int64_t n = 0;
            for (int s = 0; s < b; s++) {
                uint32_t l;
                memcpy(&l, lens + s, sizeof l);
                n += l;
            }
            xu->n_from[p * E + e] = n;
            slot++;
        }
    }
    return 0;
}

/* HSP keeps the host IDs and the bag of each ID for the cross-group sync. */
static int keep_host(rt_xunit *xu, int e, const int64_t *ids, const int64_t *offs, int64_t n,
                     int sequence, int64_t nbags, FILE *err)
{
    free(xu->own_host_ids[e]), free(xu->own_host_bag[e]);
    xu->own_host_ids[e] = malloc(sizeof(int64_t) * (size_t)(n + 1));
    xu->own_host_bag[e] = malloc(sizeof(int64_t) * (size_t)(n + 1));
    if (!xu->own_host_ids[e] || !xu->own_host_bag[e]) {
        fprintf(err, "exec: out of host memory keeping %lld IDs\n", (long long)n);
        return -1;
    }
    memcpy(xu->own_host_ids[e], ids, sizeof(int64_t) * (size_t)n);
    for (int64_t j = 0, bag = 0; j < n; j++) {
        if (sequence) {
            xu->own_host_bag[e][j] = j;
            continue;
        }
        while (bag + 1 < nbags && offs[bag + 1] <= j)
            bag++;
        xu->own_host_bag[e][j] = bag;
    }
    return 0;
}

/* Builds the device index list and bag offsets of served entry E over every member's IDs. */
static int entry_indices(rt_xexec *x, rt_xunit *xu, int e, int op, FILE *err)
{
    int G = xu->G, E = xu->n_entries, b = x->batch.batch, ib = idb(x);
    const rt_xentry *en = &xu->entries[e];
    const rt_xshard *sh = &x->tables.shards[xu->shard_of[e]];
    int64_t n = 0;
    for (int p = 0; p < G; p++)
        n += xu->n_from[p * E + e];
    xu->own_n[e] = n;
    int64_t *ids = host_scratch(xu, (size_t)n + (size_t)G * b + 1, err);
    if (!ids) return -1;
    int64_t *offs = ids + n;
    const uint8_t *h = x->dev->ops->host_memory ? xu->ids_recv.p : xu->host_ids;
    int64_t at = 0;
    offs[0] = 0;
    for (int p = 0; p < G; p++) {
        const uint8_t *m = h + xu->ids_rd[p];
        int slot = 0, n_served = 0;
        size_t id_at = 0;
        for (int e2 = 0; e2 < E; e2++) {
            if (!xu->served[xu->k * E + e2]) continue;
            if (e2 < e) slot++, id_at += (size_t)xu->n_from[p * E + e2];
            n_served++;
        }
        const uint32_t *lens = (const uint32_t *)(const void *)(m + (size_t)slot * b * 4);
        const uint8_t *idp = m + (size_t)n_served * b * 4 + id_at * (size_t)ib;
        for (int64_t j = 0; j < xu->n_from[p * E + e]; j++) {
            uint64_t id = get_id(idp + (size_t)j * ib, ib);
            if (id < sh->row0 || id - sh->row0 >= sh->rows)
                return fail(err, x, op, "an ID outside this rank's shard arrived");
            ids[at + j] = (int64_t)(id - sh->row0);
        }
        for (int s = 0; s < b; s++) {
            uint32_t l;
            memcpy(&l, lens + s, sizeof l);
            offs[p * b + s + 1] = offs[p * b + s] + l;
        }
        at += xu->n_from[p * E + e];
    }
    if (xu->own_host_ids && keep_host(xu, e, ids, offs, n, en->sequence, (int64_t)G * b, err))
        return -1;
    if (put_ids(x, &xu->own_ids[e], ids, (size_t)n, err)) return -1;
    if (!en->sequence && put_ids(x, &xu->own_offsets[e], offs, (size_t)G * b + 1, err)) return -1;
    return 0;
}

/* Message layout offsets (in floats) of every (member, served entry) block of the embedding
 * messages, on both sides; fills emb_sc/sd (owner -> member) and emb_rc/rd (member -> us). */
static void emb_layout(rt_xexec *x, rt_xunit *xu)
{
    int G = xu->G, E = xu->n_entries, b = x->batch.batch;
    size_t st = 0, rt = 0;
    for (int p = 0; p < G; p++) {
        size_t sn = 0, rn = 0;
        for (int e = 0; e < E; e++) {
            size_t w = (size_t)xu->entries[e].width;
            if (xu->served[xu->k * E + e]) {
                xu->send_at[p * E + e] = st + sn;
                sn += entry_rows(xu, e, b, xu->n_from[p * E + e]) * w;
            }
            if (xu->served[p * E + e]) {
                xu->recv_at[p * E + e] = rt + rn;
                rn += entry_rows(xu, e, b, xu->n_to[p * E + e]) * w;
            }
        }
        xu->emb_sc[p] = sn * sizeof(float), xu->emb_sd[p] = st * sizeof(float);
        xu->emb_rc[p] = rn * sizeof(float), xu->emb_rd[p] = rt * sizeof(float);
        st += sn, rt += rn;
    }
}

static size_t total_of(const size_t *count, int n)
{
    size_t t = 0;
    for (int k = 0; k < n; k++)
        t += count[k];
    return t;
}

static int lookup_entry(rt_xexec *x, rt_xunit *xu, int e, int op, FILE *err)
{
    int G = xu->G, E = xu->n_entries, b = x->batch.batch;
    const rt_xentry *en = &xu->entries[e];
    const rt_xshard *sh = &x->tables.shards[xu->shard_of[e]];
    size_t w = (size_t)en->width, rows = en->sequence ? (size_t)xu->own_n[e] : (size_t)G * b;
    if (rt_xbuf_reserve(x->dev, &xu->own_out[e], rows * w * sizeof(float), err)) return -1;
    float *out = xu->own_out[e].p;
    rt_kstatus st =
        en->sequence
            ? x->dev->ops->sequence_lookup(x->dev, &sh->t, xu->own_ids[e].p, xu->own_n[e], out)
            : x->dev->ops->gather_pool(x->dev, &sh->t, xu->own_ids[e].p, xu->own_offsets[e].p,
                                       (int64_t)G * b, RT_KPOOL_SUM, out);
    if (kcheck(st, err, x, op, en->sequence ? "sequence_lookup" : "gather_pool")) return -1;
    /* Each member's rows go into its message. */
    size_t from = 0;
    for (int p = 0; p < G; p++) {
        size_t n = entry_rows(xu, e, b, xu->n_from[p * E + e]) * w;
        float *dst = (float *)xu->emb_send.p + xu->send_at[p * E + e];
        if (n && x->dev->ops->copy(x->dev, dst, out + from, n * sizeof(float), RT_XCOPY_D2D))
            return -1;
        from += n;
    }
    return 0;
}

static int run_lookup(rt_xexec *x, rt_xunit *xu, int op, FILE *err)
{
    int E = xu->n_entries;
    if (parse_ids(x, xu, op, err)) return -1;
    emb_layout(x, xu);
    if (rt_xbuf_reserve(x->dev, &xu->emb_send, total_of(xu->emb_sc, xu->G), err)) return -1;
    double eb =
        (double)rt_kdtype_bytes(x->tables.shards ? x->tables.shards[0].t.dtype : RT_KDT_FP32);
    double in_ids = 0, rows = 0;
    for (int e = 0; e < E; e++) {
        if (!xu->served[xu->k * E + e]) continue;
        if (entry_indices(x, xu, e, op, err) || lookup_entry(x, xu, e, op, err)) return -1;
        in_ids += (double)xu->own_n[e];
        rows += (double)xu->own_n[e] * xu->entries[e].width * eb;
    }
    /* The graph's lookup: IDs read, table rows read, the messages written. */
    rt_xexec_count(x, op, in_ids * idb(x) + rows + (double)total_of(xu->emb_sc, xu->G), 0);
    return 0;
}

static int run_out_a2a(rt_xexec *x, rt_xunit *xu, int op, FILE *err)
{
    if (rt_xbuf_reserve(x->dev, &xu->emb_recv, total_of(xu->emb_rc, xu->G), err)) return -1;
    if (x->comm->ops->alltoallv(x->comm, xu->grp, xu->emb_send.p, xu->emb_sc, xu->emb_sd,
                                xu->emb_recv.p, xu->emb_rc, xu->emb_rd))
        return fail(err, x, op, "AlltoAllv failed");
    rt_xexec_count_peers(x, op, xu->emb_sc, xu->emb_rc, xu->G);
    return 0;
}

/* The embeddings of feature entry E (all of its rows) in the dense net's layout. */
static int recover_entry(rt_xexec *x, rt_xunit *xu, int e, int op, FILE *err)
{
    int G = xu->G, E = xu->n_entries, b = x->batch.batch, F = xu->u->n_features;
    const rt_xentry *en = &xu->entries[e];
    int dim = x->s->model.tables[en->table].dim;
    int64_t n = (int64_t)x->batch.f[en->table].n_ids;
    size_t rows = en->sequence ? (size_t)n : (size_t)b;
    float *dst = x->emb[en->table];
    const float *recv = xu->emb_recv.p;
    rt_xdev *d = x->dev;
    if (xu->u->sharding == RT_SHARD_ROW) {
        /* Every owner returns partial sums (pooled) or its own IDs' rows (sequence). */
        if (d->ops->zero(d, dst, rows * (size_t)dim * sizeof(float))) return -1;
        for (int q = 0; q < G; q++) {
            const float *src = recv + xu->recv_at[q * E + e];
            rt_kstatus st = en->sequence
                                ? d->ops->scatter_add_rows(d, src, xu->n_to[q * E + e], dim,
                                                           xu->pos_dev[q * F + en->i].p, n, dst)
                                : d->ops->axpy(d, (int64_t)rows * dim, 1.0f, src, dst);
            if (kcheck(st, err, x, op, en->sequence ? "scatter_add_rows" : "axpy")) return -1;
        }
        return 0;
    }
    for (int q = 0; q < G; q++) {
        if (!xu->served[q * E + e]) continue;
        const float *src = recv + xu->recv_at[q * E + e];
        if (d->ops->copy2d(d, dst + en->col0, (size_t)dim * sizeof(float), src,
                           (size_t)en->width * sizeof(float), (size_t)en->width * sizeof(float),
                           rows))
            return -1;
    }
    return 0;
}

static int run_recover(rt_xexec *x, rt_xunit *xu, int op, FILE *err)
{
    for (int e = 0; e < xu->n_entries; e++)
        if (recover_entry(x, xu, e, op, err)) return -1;
    rt_xexec_count(x, op, 2.0 * (double)total_of(xu->emb_rc, xu->G), 0);
    return 0;
}

/* ---- backward: gradient AlltoAll, cross-group sync, update ------------------------------- */

static int pack_grad(rt_xexec *x, rt_xunit *xu, int e, int q, int op, FILE *err)
{
    int E = xu->n_entries, b = x->batch.batch, F = xu->u->n_features;
    const rt_xentry *en = &xu->entries[e];
    int dim = x->s->model.tables[en->table].dim;
    size_t rows = entry_rows(xu, e, b, xu->n_to[q * E + e]);
    const float *g = rt_dnet_emb_grad(x->net, en->table);
    float *dst = (float *)xu->grad_send.p + xu->recv_at[q * E + e];
    rt_xdev *d = x->dev;
    if (!g) return fail(err, x, op, "the dense net has no gradient for this feature");
    if (xu->u->sharding == RT_SHARD_ROW && en->sequence)
        return kcheck(d->ops->gather_rows(d, g, (int64_t)x->batch.f[en->table].n_ids, dim,
                                          xu->pos_dev[q * F + en->i].p, (int64_t)rows, dst),
                      err, x, op, "gather_rows");
    return d->ops->copy2d(d, dst, (size_t)en->width * sizeof(float), g + en->col0,
                          (size_t)dim * sizeof(float), (size_t)en->width * sizeof(float), rows);
}

static int run_grad_a2a(rt_xexec *x, rt_xunit *xu, int op, FILE *err)
{
    int G = xu->G, E = xu->n_entries;
    /* Gradients travel the embedding messages' way back: our receive layout is our send. */
    if (rt_xbuf_reserve(x->dev, &xu->grad_send, total_of(xu->emb_rc, G), err) ||
        rt_xbuf_reserve(x->dev, &xu->grad_recv, total_of(xu->emb_sc, G), err))
        return -1;
    for (int q = 0; q < G; q++)
        for (int e = 0; e < E; e++)
            if (xu->served[q * E + e] && pack_grad(x, xu, e, q, op, err)) return -1;
    if (x->comm->ops->alltoallv(x->comm, xu->grp, xu->grad_send.p, xu->emb_rc, xu->emb_rd,
                                xu->grad_recv.p, xu->emb_sc, xu->emb_sd))
        return fail(err, x, op, "AlltoAllv failed");
    rt_xexec_count_peers(x, op, xu->emb_rc, xu->emb_sc, G);
    return 0;
}

/* Served entry E's gradient rows from every member, contiguous in bag order. */
int rt_xemb_gather_grad(rt_xexec *x, rt_xunit *xu, int e, FILE *err)
{
    int G = xu->G, E = xu->n_entries, b = x->batch.batch;
    size_t w = (size_t)xu->entries[e].width;
    size_t rows = xu->entries[e].sequence ? (size_t)xu->own_n[e] : (size_t)G * b;
    if (rt_xbuf_reserve(x->dev, &xu->own_grad[e], rows * w * sizeof(float), err)) return -1;
    size_t at = 0;
    for (int p = 0; p < G; p++) {
        size_t n = entry_rows(xu, e, b, xu->n_from[p * E + e]) * w;
        const float *src = (const float *)xu->grad_recv.p + xu->send_at[p * E + e];
        if (n && x->dev->ops->copy(x->dev, (float *)xu->own_grad[e].p + at, src, n * sizeof(float),
                                   RT_XCOPY_D2D))
            return -1;
        at += n;
    }
    return 0;
}

/* Bytes the graph's update moves per ID of entry E: table row read and written, the gradient
 * read, and the optimizer state read and written. */
static double update_bytes_per_id(const rt_xexec *x, const rt_xunit *xu, int e)
{
    const rt_xentry *en = &xu->entries[e];
    const rt_table *tb = &x->s->model.tables[en->table];
    double eb = (double)rt_dtype_bytes(x->s->plan.embedding_dtype), cb = 4;
    int cs = xu->u->sharding == RT_SHARD_COLUMN ? xu->u->col_shards : 1;
    double state = rt_optimizer_state_floats(tb->optimizer, tb->dim) * 4.0 * 2;
    return en->width * (2 * eb + cb) + state / cs;
}

static int update_entry(rt_xexec *x, rt_xunit *xu, int e, int op, FILE *err)
{
    const rt_xentry *en = &xu->entries[e];
    rt_xshard *sh = &x->tables.shards[xu->shard_of[e]];
    rt_kopt opt = rt_xtables_opt(x->s, en->table, x->iteration + 1);
    int G = xu->G, b = x->batch.batch;
    rt_kstatus st;
    if (xu->u->sync.size > 1) /* HSP: the synchronized (row, gradient) pairs of every group */
        st = x->dev->ops->sparse_update(x->dev, &sh->t, sh->st, &opt, xu->sync_all_ids[e].p, NULL,
                                        xu->sync_n[e], RT_KPOOL_SUM, xu->sync_all_grads[e].p);
    else
        st = x->dev->ops->sparse_update(x->dev, &sh->t, sh->st, &opt, xu->own_ids[e].p,
                                        en->sequence ? NULL : xu->own_offsets[e].p,
                                        en->sequence ? xu->own_n[e] : (int64_t)G * b, RT_KPOOL_SUM,
                                        xu->own_grad[e].p);
    return kcheck(st, err, x, op, "sparse_update");
}

static int run_update(rt_xexec *x, rt_xunit *xu, int op, FILE *err)
{
    int E = xu->n_entries;
    double bytes = 0;
    for (int e = 0; e < E; e++) {
        if (!xu->served[xu->k * E + e]) continue;
        if (xu->u->sync.size <= 1 && rt_xemb_gather_grad(x, xu, e, err)) return -1;
        if (update_entry(x, xu, e, op, err)) return -1;
        bytes += (double)xu->own_n[e] * (idb(x) + update_bytes_per_id(x, xu, e));
    }
    rt_xexec_count(x, op, bytes, 0);
    return 0;
}

int rt_xemb_run(rt_xexec *x, int op, FILE *err)
{
    const rt_op *o = &x->g->ops[op];
    rt_xunit *xu = &x->units[o->unit];
    switch (o->role) {
    case RT_ROLE_ROUTE:
        return run_route(x, xu, op, err);
    case RT_ROLE_IDS_A2A:
        return run_ids_a2a(x, xu, op, err);
    case RT_ROLE_LOOKUP:
        return run_lookup(x, xu, op, err);
    case RT_ROLE_OUT_A2A:
        return run_out_a2a(x, xu, op, err);
    case RT_ROLE_RECOVER:
        return run_recover(x, xu, op, err);
    case RT_ROLE_GRAD_A2A:
        return run_grad_a2a(x, xu, op, err);
    case RT_ROLE_GRAD_SYNC:
        return rt_xemb_sync(x, xu, op, err);
    case RT_ROLE_SPARSE_UPDATE:
        return run_update(x, xu, op, err);
    default:
        return fail(err, x, op, "this role is not an embedding exchange op");
    }
}
