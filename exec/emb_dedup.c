/* Deduplication and key hashing of an exchange (seed 000's two-stage dedup, seed 003's segment
 * unique and deferred (category, ID) hash). A unique op covers the features of one kernel unit
 * (a table, a merged table, or a whole fused group): with a key hash it sorts the group's
 * (category, ID) keys together, as FusedRec's fused unique does; without one it sorts each
 * feature's IDs. Either way every feature gets its distinct IDs and the inverse index. */
#include <stdlib.h>
#include <string.h>

#include "dedup.h"
#include "exec.h"

typedef struct rec {
    uint64_t k1, k2; /* sort key: (hash, segment) or (segment, value) */
    int64_t seg, pos;
} rec;

static int cmp_rec(const void *a, const void *b)
{
    const rec *x = a, *y = b;
    if (x->k1 != y->k1) return x->k1 < y->k1 ? -1 : 1;
    if (x->k2 != y->k2) return x->k2 < y->k2 ? -1 : 1;
    return (x->pos > y->pos) - (x->pos < y->pos);
}

void rt_xuniq_free(rt_xdev *d, rt_xuniq *u)
{
    free(u->uniq), free(u->inv);
    rt_xbuf_free(d, &u->uniq_dev), rt_xbuf_free(d, &u->inv_dev);
    memset(u, 0, sizeof *u);
}

/* The FusedRec key of value V of category CAT: equal values of different tables differ. */
static uint64_t fused_key(int cat, uint64_t v)
{
    return rt_dedup_hash(v ^ rt_dedup_hash(0x5bd1e995ULL + (uint64_t)cat));
}

int rt_xuniq_segments(rt_xdev *d, int nseg, const uint64_t *const *vals, const int64_t *n,
                      uint64_t *const *keys, rt_xuniq *const *out, FILE *err)
{
    int64_t total = 0;
    for (int s = 0; s < nseg; s++)
        total += n[s];
    rec *r = malloc(sizeof *r * (size_t)(total + 1));
    if (!r) goto oom;
    int64_t at = 0;
    for (int s = 0; s < nseg; s++)
        for (int64_t j = 0; j < n[s]; j++)
            r[at++] =
                keys ? (rec){keys[s][j], (uint64_t)s, s, j} : (rec){(uint64_t)s, vals[s][j], s, j};
    qsort(r, (size_t)total, sizeof *r, cmp_rec);
    for (int s = 0; s < nseg; s++) {
        rt_xuniq *u = out[s];
        free(u->uniq), free(u->inv);
        u->n = n[s], u->n_uniq = 0;
        u->uniq = malloc(sizeof(uint64_t) * (size_t)(n[s] + 1));
        u->inv = malloc(sizeof(int64_t) * (size_t)(n[s] + 1));
        if (!u->uniq || !u->inv) goto oom;
    }
    for (int64_t j = 0; j < total; j++) {
        rt_xuniq *u = out[r[j].seg];
        uint64_t v = vals[r[j].seg][r[j].pos];
        int fresh = j == 0 || r[j].k1 != r[j - 1].k1 || r[j].k2 != r[j - 1].k2;
        if (!fresh && vals[r[j - 1].seg][r[j - 1].pos] != v) {
            fprintf(err, "exec: two keys of the fused unique collide (hash of %llu)\n",
                    (unsigned long long)v);
            free(r);
            return -1;
        }
        if (fresh) u->uniq[u->n_uniq++] = v;
        u->inv[r[j].pos] = u->n_uniq - 1;
    }
    free(r);
    for (int s = 0; s < nseg; s++) {
        rt_xuniq *u = out[s];
        size_t ub = sizeof(int64_t) * (size_t)u->n_uniq, ib = sizeof(int64_t) * (size_t)u->n;
        if (rt_xbuf_reserve(d, &u->uniq_dev, ub, err) || rt_xbuf_reserve(d, &u->inv_dev, ib, err) ||
            (ub && d->ops->copy(d, u->uniq_dev.p, u->uniq, ub, RT_XCOPY_H2D)) ||
            (ib && d->ops->copy(d, u->inv_dev.p, u->inv, ib, RT_XCOPY_H2D)))
            return -1;
    }
    return 0;
oom:
    free(r);
    fprintf(err, "exec: out of host memory deduplicating %lld IDs\n", (long long)total);
    return -1;
}

/* The position of OP among the consecutive unique ops of its role: its kernel unit. */
static int kunit_of_op(const rt_graph *g, int op)
{
    int k = 0;
    while (op - k - 1 >= 0 && g->ops[op - k - 1].role == g->ops[op].role &&
           g->ops[op - k - 1].unit == g->ops[op].unit)
        k++;
    return k;
}

static int in_kunit(const rt_graph_unit *u, int i, int k)
{
    return u->n_kunits <= 0 || !u->kunit_of || u->kunit_of[i] == k;
}

/* Sender side (stage 1): per feature, distinct IDs, the bag offsets and the bag of each ID. */
static int unique_send(rt_xexec *x, rt_xunit *xu, int k, int op, FILE *err)
{
    const rt_graph_unit *u = xu->u;
    int F = u->n_features, nseg = 0, b = x->v.batch.batch;
    const uint64_t *vals[F ? F : 1];
    int64_t n[F ? F : 1];
    uint64_t *keys[F ? F : 1];
    rt_xuniq *out[F ? F : 1];
    double nk = 0, uk = 0;
    int hashed = u->key_hash == 1; /* TFRA hashed on the sender, before this unique */
    for (int i = 0; i < F; i++) {
        if (!in_kunit(u, i, k)) continue;
        const rt_feature_batch *fb = &x->v.batch.f[u->features[i]];
        vals[nseg] = fb->ids, n[nseg] = (int64_t)fb->n_ids;
        keys[nseg] = hashed ? xu->keys[i] : NULL, out[nseg] = &xu->s1[i];
        nseg++;
    }
    if (rt_xuniq_segments(x->dev, nseg, vals, n, hashed ? keys : NULL, out, err)) return -1;
    for (int i = 0; i < F; i++) {
        if (!in_kunit(u, i, k)) continue;
        const rt_feature_batch *fb = &x->v.batch.f[u->features[i]];
        int64_t *h = malloc(sizeof(int64_t) * (size_t)(fb->n_ids + (uint64_t)b + 2));
        if (!h) {
            fprintf(err, "exec: out of host memory\n");
            return -1;
        }
        int64_t *bag = h + b + 1;
        h[0] = 0;
        for (int s = 0; s < b; s++) {
            h[s + 1] = h[s] + fb->lengths[s];
            for (int64_t j = h[s]; j < h[s + 1]; j++)
                bag[j] = s;
        }
        size_t ob = sizeof(int64_t) * (size_t)(b + 1), bb = sizeof(int64_t) * fb->n_ids;
        int rc = rt_xbuf_reserve(x->dev, &xu->s1_offsets[i], ob, err) ||
                 rt_xbuf_reserve(x->dev, &xu->s1_bag[i], bb, err) ||
                 x->dev->ops->copy(x->dev, xu->s1_offsets[i].p, h, ob, RT_XCOPY_H2D) ||
                 (bb && x->dev->ops->copy(x->dev, xu->s1_bag[i].p, bag, bb, RT_XCOPY_H2D));
        free(h);
        if (rc) return -1;
        nk += (double)xu->s1[i].n, uk += (double)xu->s1[i].n_uniq;
    }
    rt_xexec_count(x, op, rt_dedup_unique_bytes(nk, uk, x->s->workload.id_bytes), 0);
    return 0;
}

/* Owner side (stage 2): per served entry, the distinct local rows of every member's IDs. */
static int unique_owner(rt_xexec *x, rt_xunit *xu, int k, int op, FILE *err)
{
    const rt_graph_unit *u = xu->u;
    int E = xu->n_entries, nseg = 0;
    const uint64_t *vals[E ? E : 1];
    int64_t n[E ? E : 1];
    uint64_t *keys[E ? E : 1];
    rt_xuniq *out[E ? E : 1];
    int hashed = u->key_hash == 2; /* FusedRec hashed on the owner, before this unique */
    if (rt_xemb_parse(x, xu, op, err)) return -1;
    for (int e = 0; e < E; e++) {
        if (!xu->served[xu->k * E + e] || !in_kunit(u, xu->entries[e].i, k)) continue;
        vals[nseg] = (const uint64_t *)xu->own_host_ids[e], n[nseg] = xu->own_n[e];
        keys[nseg] = hashed ? xu->keys[e] : NULL, out[nseg] = &xu->s2[e];
        nseg++;
    }
    if (rt_xuniq_segments(x->dev, nseg, vals, n, hashed ? keys : NULL, out, err)) return -1;
    /* The graph counts a feature's distinct keys once however many column shards it has. */
    double nk = 0, uk = 0;
    for (int e = 0; e < E; e++) {
        if (!xu->served[xu->k * E + e] || !in_kunit(u, xu->entries[e].i, k)) continue;
        nk += (double)xu->own_n[e];
        int first = 1;
        for (int e2 = 0; e2 < e; e2++)
            first &= !(xu->served[xu->k * E + e2] && xu->entries[e2].i == xu->entries[e].i);
        if (first) uk += (double)xu->s2[e].n_uniq;
    }
    rt_xexec_count(x, op, rt_dedup_unique_bytes(nk, uk, x->s->workload.id_bytes), 0);
    return 0;
}

int rt_xemb_unique(rt_xexec *x, rt_xunit *xu, int op, FILE *err)
{
    int k = kunit_of_op(x->g, op);
    return x->g->ops[op].role == RT_ROLE_UNIQUE_SEND ? unique_send(x, xu, k, op, err)
                                                     : unique_owner(x, xu, k, op, err);
}

static int set_keys(rt_xunit *xu, int slot, const uint64_t *v, int64_t n, int cat, FILE *err)
{
    free(xu->keys[slot]);
    if (!(xu->keys[slot] = malloc(sizeof(uint64_t) * (size_t)(n + 1)))) {
        fprintf(err, "exec: out of host memory hashing keys\n");
        return -1;
    }
    for (int64_t j = 0; j < n; j++)
        xu->keys[slot][j] = fused_key(cat, v[j]);
    return 0;
}

int rt_xemb_key_hash(rt_xexec *x, rt_xunit *xu, int op, FILE *err)
{
    const rt_graph_unit *u = xu->u;
    double n = 0;
    if (u->key_hash == 1) { /* TFRA: on the sender, over the raw IDs */
        for (int i = 0; i < u->n_features; i++) {
            const rt_feature_batch *fb = &x->v.batch.f[u->features[i]];
            if (set_keys(xu, i, fb->ids, (int64_t)fb->n_ids, u->features[i], err)) return -1;
            n += (double)fb->n_ids;
        }
    } else { /* FusedRec: deferred to the owner, over what arrived */
        if (rt_xemb_parse(x, xu, op, err)) return -1;
        for (int e = 0; e < xu->n_entries; e++) {
            if (!xu->served[xu->k * xu->n_entries + e]) continue;
            const rt_xshard *sh = &x->tables.shards[xu->shard_of[e]];
            int64_t m = xu->own_n[e];
            uint64_t *g = malloc(sizeof(uint64_t) * (size_t)(m + 1));
            if (!g) {
                fprintf(err, "exec: out of host memory hashing keys\n");
                return -1;
            }
            for (int64_t j = 0; j < m; j++)
                g[j] = rt_xshard_global_row(sh, (uint64_t)xu->own_host_ids[e][j]);
            int rc = set_keys(xu, e, g, m, xu->entries[e].table, err);
            free(g);
            if (rc) return -1;
            n += (double)m;
        }
    }
    /* Each ID read and its 8-byte key written. */
    rt_xexec_count(x, op, n * (x->s->workload.id_bytes + 8), 0);
    return 0;
}
