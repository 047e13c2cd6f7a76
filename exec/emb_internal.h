/* Shared by the embedding exchange's executors (emb_setup.c, emb_forward.c, emb_backward.c,
 * emb_dedup.c, emb_sync.c): small helpers over an exchange unit's state. Message layouts:
 *   ID message to member q:   for every entry q serves, its counts (uint32: the batch's
 *                             per-sample lengths, or with stage-1 dedup one count), then for
 *                             every entry q serves, its IDs (workload.id_bytes each); with
 *                             TFRA-fused the counts travel in their own message instead;
 *   embedding message to p:   for every entry this rank serves, p's pooled rows (batch x width)
 *                             or one row per ID p sent (sequence features, stage-1 dedup);
 *   gradient message to q:    the mirror of the embedding message.
 * These are the bytes the graph counts (plans/exchange.c), so a run can check them op by op. */
#ifndef RT_XEMB_INTERNAL_H
#define RT_XEMB_INTERNAL_H

#include <string.h>

#include "dedup.h"
#include "emb_dynamic.h"
#include "exec.h"
#include "fusion.h"

static inline int rt_xemb_fail(FILE *err, const rt_xexec *x, int op, const char *what)
{
    fprintf(err, "exec: rank %d, op %d '%s' (%s): %s\n", x->rank, op,
            x->g->ops[op].name ? x->g->ops[op].name : "?", x->g->phases[x->g->ops[op].phase], what);
    return -1;
}

static inline int rt_xemb_kcheck(rt_kstatus st, FILE *err, const rt_xexec *x, int op,
                                 const char *kernel)
{
    if (st == RT_K_OK) return 0;
    char m[160];
    snprintf(m, sizeof m, "kernel %s failed: %s", kernel, rt_kstatus_str(st));
    return rt_xemb_fail(err, x, op, m);
}

/* Row-wise owner of an ID: its row block, or FusedRec's hash(ID) mod group size. */
static inline int rt_xemb_row_owner(const rt_xunit *xu, int table, uint64_t id)
{
    if (xu->u->hash_rows) return (int)(rt_dedup_hash(id) % (uint64_t)xu->G);
    int base = xu->u->tower_size ? xu->u->tower_of[table] * xu->u->tower_size : 0;
    return base + (int)(id / xu->u->block[table]);
}

/* One returned row per sent ID (a sequence feature, or any feature under stage-1 dedup, whose
 * pooling moves to the sender) rather than one pooled row per sample. */
static inline int rt_xemb_per_row(const rt_xunit *xu, int e)
{
    return xu->entries[e].sequence || xu->u->dedup_send;
}

static inline size_t rt_xemb_rows(const rt_xunit *xu, int e, int batch, int64_t n_ids)
{
    return rt_xemb_per_row(xu, e) ? (size_t)n_ids : (size_t)batch;
}

/* uint32 counts per served entry in an ID message. */
static inline int rt_xemb_counts(const rt_xunit *xu, int batch)
{
    return xu->u->dedup_send ? 1 : batch;
}

static inline int rt_xemb_served(const rt_xunit *xu, int q, int e)
{
    return xu->served[q * xu->n_entries + e];
}

/* The embedding and gradient messages travel in the plan's comm precision. */
static inline size_t rt_xemb_cb(const rt_xexec *x)
{
    return rt_dtype_bytes(x->s->plan.comm_dtype);
}

static inline rt_kdtype rt_xemb_ck(const rt_xexec *x)
{
    rt_dtype d = x->s->plan.comm_dtype;
    return d == RT_DT_FP16 ? RT_KDT_FP16 : d == RT_DT_BF16 ? RT_KDT_BF16 : RT_KDT_FP32;
}

/* N fp32 elements from SRC into a message at element AT of BASE, in the comm precision. */
static inline int rt_xemb_to_msg(rt_xexec *x, void *base, size_t at, const float *src, size_t n)
{
    if (!n) return 0;
    char *dst = (char *)base + at * rt_xemb_cb(x);
    if (rt_xemb_ck(x) == RT_KDT_FP32)
        return x->dev->ops->copy(x->dev, dst, src, n * sizeof(float), RT_XCOPY_D2D);
    return x->dev->ops->convert(x->dev, src, RT_KDT_FP32, (int64_t)n, rt_xemb_ck(x), dst) ? -1 : 0;
}

/* N elements of a message at element AT of BASE into fp32 DST. */
static inline int rt_xemb_from_msg(rt_xexec *x, const void *base, size_t at, float *dst, size_t n)
{
    if (!n) return 0;
    const char *src = (const char *)base + at * rt_xemb_cb(x);
    if (rt_xemb_ck(x) == RT_KDT_FP32)
        return x->dev->ops->copy(x->dev, dst, src, n * sizeof(float), RT_XCOPY_D2D);
    return x->dev->ops->convert(x->dev, src, rt_xemb_ck(x), (int64_t)n, RT_KDT_FP32, dst) ? -1 : 0;
}

static inline size_t rt_xemb_total(const size_t *count, int n)
{
    size_t t = 0;
    for (int k = 0; k < n; k++)
        t += count[k];
    return t;
}

/* The IDs of feature I this rank sends: all of them, or the distinct ones under stage 1. */
static inline const uint64_t *rt_xemb_send_ids(const rt_xexec *x, const rt_xunit *xu, int i,
                                               int64_t *n)
{
    if (xu->u->dedup_send) {
        *n = xu->s1[i].n_uniq;
        return xu->s1[i].uniq;
    }
    const rt_feature_batch *fb = &x->v.batch.f[xu->u->features[i]];
    *n = (int64_t)fb->n_ids;
    return fb->ids;
}

/* An ID in a message: workload.id_bytes wide (4 or 8), unaligned. */
static inline void rt_xemb_put_id(uint8_t *p, uint64_t id, int bytes)
{
    uint32_t v = (uint32_t)id;
    if (bytes == 4)
        memcpy(p, &v, 4);
    else
        memcpy(p, &id, 8);
}

static inline uint64_t rt_xemb_get_id(const uint8_t *p, int bytes)
{
    uint32_t v;
    uint64_t v8;
    if (bytes == 4) return memcpy(&v, p, 4), v;
    return memcpy(&v8, p, 8), v8;
}

/* Uploads N int64 of host H into B. */
int rt_xemb_put(rt_xexec *x, rt_xbuf *b, const int64_t *h, size_t n, FILE *err);

/* The executors of the forward and backward roles. */
int rt_xemb_route(rt_xexec *x, rt_xunit *xu, int op, FILE *err);
int rt_xemb_ids_a2a(rt_xexec *x, rt_xunit *xu, int op, FILE *err);
int rt_xemb_cat_a2a(rt_xexec *x, rt_xunit *xu, int op, FILE *err);
int rt_xemb_lookup(rt_xexec *x, rt_xunit *xu, int op, FILE *err);
/* plan.fusion sparse (emb_fusion.c): every served entry's rows in one gather launch, written
 * into the embedding message in place (through one fp32 image and one conversion when the
 * comm precision is lower). */
int rt_xemb_lookup_fused(rt_xexec *x, rt_xunit *xu, int op, FILE *err);
/* Dynamic tables (emb_dynamic.h): the probe op, and the fetch, write-back and eviction ops. */
int rt_xemb_probe(rt_xexec *x, rt_xunit *xu, int op, FILE *err);
int rt_xemb_hash_op(rt_xexec *x, rt_xunit *xu, int op, FILE *err);
int rt_xemb_out_a2a(rt_xexec *x, rt_xunit *xu, int op, FILE *err);
int rt_xemb_recover(rt_xexec *x, rt_xunit *xu, int op, FILE *err);
int rt_xemb_grad_a2a(rt_xexec *x, rt_xunit *xu, int op, FILE *err);
int rt_xemb_update(rt_xexec *x, rt_xunit *xu, int op, FILE *err);

#endif
