/* Memory-bound kernels as achieved bytes/s against bytes per launch, compute kernels that are
 * not GEMMs as FLOP/s against FLOPs per launch, and the fixed costs (dispatch per op, host work
 * per iteration), each through the device backend rectwin-exec uses (unique and sort: the host
 * routine exec's dedup ops run, rt_xuniq_segments).
 *
 * Bytes are counted the way the plans count them in the op graph (plans/exchange.c, dedup.h,
 * plan_common.c), so that a graph op's bytes divided by the curve's bytes/s is the op's time:
 *   gather_pool      ids x 8 + ids x dim x 4 (rows read) + bags x dim x 4 (written)
 *   sparse_<opt>     ids x 8 + ids x (dim x (2 x 4 + 4) + state floats x 4 x 2)
 *   unique, sort     n x (2 x 8 + 4) + distinct x 8
 *   elementwise      y += a x: 3 x 4 per element
 *   permute          n x 8 + 2 x n x dim x 4 (gather rows into another order)
 *   norm, softmax    2 x 4 per element (read, write)
 *   silu             2 x 4 per element forward, 3 x 4 backward
 *   dense_adam       7 x 4 per parameter (weight, grad, two moments read; three written)
 * Embedding tables are larger than most caches and IDs are uniform, the worst case for a
 * gather; skewed (Zipf) IDs of a real workload hit the cache more often. Every call of a gather
 * or a sparse update takes the next IDs of a pool that covers the table, as every training step
 * brings new IDs: repeating one call's IDs would time rows the previous repetition left in cache
 * (at DLRM's 128 IDs of dim 128, 4.3x faster for a gather and 4.9x for an SGD update:
 * experiments/measurements/cpu/cache-cold/gather-probe.log). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "calibrate.h"
#include "dedup.h"
#include "exec.h"

/* ---- the measured operations --------------------------------------------------------- */

typedef struct kargs {
    rt_ktable table;
    rt_kopt_state st;
    rt_kopt opt;
    int64_t *ids, *offsets; /* device */
    int64_t n, bags, dim;
    int64_t pool_n, at; /* gather, sparse update: ids holds pool_n IDs; the next call's start */
    float *out, *grad, *x, *y, *m, *v, *mean, *rstd, *rab, *drab;
    rt_khstu_cfg hc;
    int64_t nseq;
    uint64_t *vals, *keys; /* host, unique and sort */
    rt_xuniq uq;
} kargs;

static int kfail(rt_xcal *c, const char *what, rt_kstatus st)
{
    if (st == RT_K_OK) return 0;
    fprintf(stderr, "calibrate: rank %d: %s failed (%d)\n", c->rank, what, (int)st);
    return -1;
}

/* This call's IDs: the next N of the pool, from its start again when they would run past it. */
static const int64_t *next_ids(kargs *a)
{
    if (a->at + a->n > a->pool_n) a->at = 0;
    const int64_t *ids = a->ids + a->at;
    a->at += a->n;
    return ids;
}

static int k_gather(rt_xcal *c, void *p)
{
    kargs *a = p;
    return kfail(c, "gather_pool",
                 c->dev->ops->gather_pool(c->dev, &a->table, next_ids(a), a->offsets, a->bags,
                                          RT_KPOOL_SUM, a->out));
}

static int k_update(rt_xcal *c, void *p)
{
    kargs *a = p;
    a->opt.step++;
    return kfail(c, "sparse_update",
                 c->dev->ops->sparse_update(c->dev, &a->table, a->st, &a->opt, next_ids(a),
                                            a->offsets, a->bags, RT_KPOOL_SUM, a->grad));
}

static int k_axpy(rt_xcal *c, void *p)
{
    kargs *a = p;
    return kfail(c, "axpy", c->dev->ops->axpy(c->dev, a->n, 1e-3f, a->x, a->y));
}

static int k_permute(rt_xcal *c, void *p)
{
    kargs *a = p;
    return kfail(c, "gather_rows",
                 c->dev->ops->gather_rows(c->dev, a->x, a->n, a->dim, a->ids, a->n, a->y));
}

static int k_norm(rt_xcal *c, void *p)
{
    kargs *a = p;
    return kfail(
        c, "layernorm_fwd",
        c->dev->ops->layernorm_fwd(c->dev, a->x, a->n, a->dim, 1e-5f, a->y, a->mean, a->rstd));
}

static int k_softmax(rt_xcal *c, void *p)
{
    kargs *a = p;
    return kfail(c, "softmax_fwd", c->dev->ops->softmax_fwd(c->dev, a->x, a->n, a->dim, a->y));
}

static int k_silu(rt_xcal *c, void *p)
{
    kargs *a = p;
    return kfail(c, "silu_fwd", c->dev->ops->silu_fwd(c->dev, a->x, a->n, a->y));
}

static int k_silu_bwd(rt_xcal *c, void *p)
{
    kargs *a = p;
    return kfail(c, "silu_bwd", c->dev->ops->silu_bwd(c->dev, a->x, a->m, a->n, a->y));
}

static int k_adam(rt_xcal *c, void *p)
{
    kargs *a = p;
    rt_kadam o = {RT_KOPT_ADAM, 1e-6f, 0.9f, 0.999f, 1e-8f, 1.0f, ++a->opt.step};
    return kfail(c, "adam", c->dev->ops->adam(c->dev, a->n, &o, a->y, a->x, a->m, a->v));
}

static int k_attn_fwd(rt_xcal *c, void *p)
{
    kargs *a = p;
    size_t T = (size_t)(a->n * a->hc.heads * a->hc.head_dim);
    return kfail(c, "hstu_attn_fwd",
                 c->dev->ops->hstu_attn_fwd(c->dev, a->x, a->x + T, a->x + 2 * T, a->offsets,
                                            a->nseq, &a->hc, a->rab, a->y));
}

static int k_attn_bwd(rt_xcal *c, void *p)
{
    kargs *a = p;
    size_t T = (size_t)(a->n * a->hc.heads * a->hc.head_dim);
    return kfail(c, "hstu_attn_bwd",
                 c->dev->ops->hstu_attn_bwd(c->dev, a->x, a->x + T, a->x + 2 * T, a->offsets,
                                            a->nseq, &a->hc, a->rab, a->x + 3 * T, a->y, a->y + T,
                                            a->y + 2 * T, a->drab));
}

static int k_dot_fwd(rt_xcal *c, void *p)
{
    kargs *a = p;
    return kfail(c, "dot_interact_fwd",
                 c->dev->ops->dot_interact_fwd(c->dev, a->x, a->bags, a->n, a->dim, a->y));
}

static int k_dot_bwd(rt_xcal *c, void *p)
{
    kargs *a = p;
    return kfail(c, "dot_interact_bwd",
                 c->dev->ops->dot_interact_bwd(c->dev, a->x, a->out, a->bags, a->n, a->dim, a->y));
}

static int k_ssm(rt_xcal *c, void *p)
{
    kargs *a = p;
    size_t qd = (size_t)(a->n * a->dim);
    return kfail(c, "sampled_softmax",
                 c->dev->ops->sampled_softmax(c->dev, a->x, a->x + qd, a->x + 2 * qd, NULL, a->n,
                                              a->bags, a->dim, 1.0f, a->out, a->y, a->y + qd,
                                              a->y + 2 * qd));
}

static int k_unique(rt_xcal *c, void *p)
{
    kargs *a = p;
    const uint64_t *vals = a->vals;
    rt_xuniq *u = &a->uq;
    return rt_xuniq_segments(c->dev, 1, &vals, &a->n, a->keys ? &a->keys : NULL, &u, stderr);
}

/* What the runner does for an op beyond its work: a timing mark on each side of the call
 * (slot 3 is free: the harness uses 1 and 2), here around a one-element kernel. */
static int k_empty(rt_xcal *c, void *p)
{
    kargs *a = p;
    rt_xdev *d = c->dev;
    if (d->ops->mark(d, 3)) return -1;
    int rc = kfail(c, "axpy of one element", d->ops->axpy(d, 1, 0.0f, a->x, a->y));
    return d->ops->mark(d, 3) || rc ? -1 : 0;
}

/* ---- sweeps --------------------------------------------------------------------------- */

/* Launch sizes: every power of 4 from LO to HI bytes (or FLOPs). */
static int sizes(double lo, double hi, double *v, int cap)
{
    int n = 0;
    for (double s = lo; s <= hi * 1.0001 && n < cap; s *= 4)
        v[n++] = s;
    return n;
}

/* Writes one curve: points whose amount did not grow (rounding of small launches) are
 * dropped, so the x values stay strictly increasing. */
static void emit(rt_xcal *c, const char *kernel, int dim, int pooling, const double *x,
                 const double *t, int n)
{
    if (!c->out) return;
    int rate = !strcmp(kernel, "attention") || !strcmp(kernel, "attention_bwd") ||
               !strcmp(kernel, "interaction") || !strcmp(kernel, "interaction_bwd") ||
               !strcmp(kernel, "sampled_softmax");
    double xs[64], ys[64];
    int m = 0;
    for (int i = 0; i < n && m < 64; i++) {
        if (!(t[i] > 0) || (m && !(x[i] > xs[m - 1]))) continue;
        xs[m] = x[i];
        ys[m++] = x[i] / t[i];
    }
    fprintf(c->out, "        - kernel: %s\n", kernel);
    if (dim) fprintf(c->out, "          dim: %d\n", dim);
    if (pooling) fprintf(c->out, "          pooling: %d\n", pooling);
    rt_xcal_list(c, 10, rate ? "flops" : "bytes", xs, m);
    rt_xcal_list(c, 10, rate ? "rate" : "bw", ys, m);
}

static int upload_ids(rt_xcal *c, int64_t *dev, int64_t n, int64_t rows, uint32_t seed)
{
    int64_t *h = malloc(sizeof *h * (size_t)(n ? n : 1));
    if (!h) return -1;
    uint64_t s = 0x2545f4914f6cdd1dULL ^ seed ^ ((uint64_t)c->rank << 32);
    for (int64_t i = 0; i < n; i++) {
        s ^= s << 13, s ^= s >> 7, s ^= s << 17;
        h[i] = (int64_t)(s % (uint64_t)rows);
    }
    int rc = c->dev->ops->copy(c->dev, dev, h, sizeof *h * (size_t)n, RT_XCOPY_H2D);
    free(h);
    return rc;
}

static int upload_offsets(rt_xcal *c, int64_t *dev, int64_t bags, int64_t per)
{
    int64_t *h = malloc(sizeof *h * (size_t)(bags + 1));
    if (!h) return -1;
    for (int64_t b = 0; b <= bags; b++)
        h[b] = b * per;
    int rc = c->dev->ops->copy(c->dev, dev, h, sizeof *h * (size_t)(bags + 1), RT_XCOPY_H2D);
    free(h);
    return rc;
}

/* Table of TABLE_BYTES, rows of DIM; a launch of B bytes looks up B / per_id IDs. */
typedef struct sweep_cfg {
    double table_bytes, lo, hi;
    const int *dims;
    int n_dims;
    const int *poolings;
    int n_poolings;
} sweep_cfg;

static void release_all(rt_xcal *c, void **p, int n)
{
    for (int i = 0; i < n; i++)
        if (p[i]) c->dev->ops->release(c->dev, p[i]);
}

/* gather_pool and sparse updates (every optimizer) at one (dim, pooling). */
static int embedding_family(rt_xcal *c, const sweep_cfg *s, int dim, int pooling)
{
    double sz[32];
    int ns = sizes(s->lo, s->hi, sz, 32);
    const double per_id_g = 8 + dim * 4.0 + dim * 4.0 / pooling;
    int64_t rows = (int64_t)(s->table_bytes / (dim * 4.0));
    int64_t max_ids = (int64_t)(s->hi / per_id_g) + pooling;
    int64_t max_bags = max_ids / pooling + 1;
    /* As many uniform IDs as the table has rows: a call's rows come back only after the
     * whole table's bytes went through the cache. */
    int64_t pool_n = rows > 2 * max_ids ? rows : 2 * max_ids;
    kargs a = {.table = {NULL, rows, dim, RT_KDT_FP32}, .dim = dim, .pool_n = pool_n};
    a.table.data = rt_xcal_alloc(c, (size_t)rows * (size_t)dim * 4, 0);
    a.ids = rt_xcal_alloc(c, sizeof(int64_t) * (size_t)pool_n, 1);
    a.offsets = rt_xcal_alloc(c, sizeof(int64_t) * (size_t)(max_bags + 1), 1);
    a.out = rt_xcal_alloc(c, sizeof(float) * (size_t)(max_bags * dim), 1);
    a.grad = rt_xcal_alloc(c, sizeof(float) * (size_t)(max_bags * dim), 0);
    a.st.s0 = rt_xcal_alloc(c, sizeof(float) * (size_t)rows * (size_t)dim, 1);
    a.st.s1 = rt_xcal_alloc(c, sizeof(float) * (size_t)rows * (size_t)dim, 1);
    void *bufs[] = {a.table.data, a.ids, a.offsets, a.out, a.grad, a.st.s0, a.st.s1};
    int rc = a.table.data && a.ids && a.offsets && a.out && a.grad && a.st.s0 && a.st.s1 ? 0 : -1;
    if (!rc)
        rc = upload_ids(c, a.ids, pool_n, rows, (uint32_t)dim) ||
             upload_offsets(c, a.offsets, max_bags, pooling);
    double x[32] = {0}, t[32] = {0};
    for (int i = 0; i < ns && !rc; i++) {
        a.n = (int64_t)(sz[i] / per_id_g);
        a.bags = a.n / pooling > 0 ? a.n / pooling : 1;
        a.n = a.bags * pooling;
        x[i] = a.n * 8.0 + a.n * dim * 4.0 + a.bags * dim * 4.0;
        rc = rt_xcal_time_kernel(c, k_gather, &a, &t[i]);
    }
    if (!rc) emit(c, "gather_pool", dim, pooling, x, t, ns);
    static const struct {
        const char *name;
        rt_koptim kind;
        int state; /* floats per row */
    } opts[] = {{"sparse_sgd", RT_KOPT_SGD, 0},
                {"sparse_adagrad", RT_KOPT_ADAGRAD, -1},
                {"sparse_rowwise_adagrad", RT_KOPT_ROWWISE_ADAGRAD, 1},
                {"sparse_adam", RT_KOPT_ADAM, -2}};
    for (int o = 0; o < 4 && !rc; o++) {
        double state = opts[o].state >= 0 ? opts[o].state : -opts[o].state * (double)dim;
        double per_id = 8 + dim * (2 * 4.0 + 4) + state * 4 * 2;
        a.opt = (rt_kopt){opts[o].kind, 1e-4f, 1e-8f, 0.9f, 0.999f, 0};
        for (int i = 0; i < ns && !rc; i++) {
            a.n = (int64_t)(sz[i] / per_id);
            a.bags = a.n / pooling > 0 ? a.n / pooling : 1;
            a.n = a.bags * pooling;
            if (a.n > max_ids) a.bags = max_ids / pooling, a.n = a.bags * pooling;
            x[i] = a.n * per_id;
            rc = rt_xcal_time_kernel(c, k_update, &a, &t[i]);
        }
        if (!rc) emit(c, opts[o].name, dim, pooling, x, t, ns);
    }
    release_all(c, bufs, 7);
    return rc;
}

/* Floats by which the streams y, m and v start past x, y and m. Buffers of one power-of-two size
 * come back from mmap a page apart modulo that size, and on the AMD Zen 4 guest dense Adam's
 * four streams then ran at 2.9-4.5 GB/s, against 6.6-6.8 one cache line apart
 * (experiments/measurements/cpu/zen4-2026-11-23/calibration/adam-layout.log; the L1 way
 * predictor's hashed tags are the likely cause, not proven). exec's buffers have the model's
 * sizes, so their distances are no such power. */
enum { STREAM_SKEW = 16 };

/* A stream kernel over N elements of X (and Y, M, V): elementwise, permute, norm, softmax,
 * dense Adam. */
static int stream_family(rt_xcal *c, const sweep_cfg *s)
{
    double sz[32], x[32] = {0}, t[32] = {0};
    int ns = sizes(s->lo, s->hi, sz, 32);
    size_t cap = (size_t)(s->hi / 4) + 64;
    kargs a = {0};
    a.x = rt_xcal_alloc(c, cap * 4, 0);
    a.y = rt_xcal_alloc(c, (cap + STREAM_SKEW) * 4, 0);
    a.m = rt_xcal_alloc(c, (cap + 2 * STREAM_SKEW) * 4, 1);
    a.v = rt_xcal_alloc(c, (cap + 3 * STREAM_SKEW) * 4, 1);
    a.mean = rt_xcal_alloc(c, cap * 4, 1);
    a.rstd = rt_xcal_alloc(c, cap * 4, 1);
    a.ids = rt_xcal_alloc(c, cap * 8, 1);
    void *bufs[] = {a.x, a.y, a.m, a.v, a.mean, a.rstd, a.ids};
    int rc = a.x && a.y && a.m && a.v && a.mean && a.rstd && a.ids ? 0 : -1;
    if (!rc) {
        a.y += STREAM_SKEW;
        a.m += 2 * STREAM_SKEW;
        a.v += 3 * STREAM_SKEW;
    }
    static const struct {
        const char *name;
        rt_xcal_fn fn;
        double per; /* bytes per element (per row of dim for permute) */
        int dim;
    } fam[] = {{"elementwise", k_axpy, 12, 0}, {"permute", k_permute, 8 + 2 * 64 * 4.0, 64},
               {"norm", k_norm, 8, 128},       {"softmax", k_softmax, 8, 16},
               {"dense_adam", k_adam, 28, 0},  {"silu", k_silu, 8, 0},
               {"silu_bwd", k_silu_bwd, 12, 0}};
    for (int f = 0; f < (int)(sizeof fam / sizeof fam[0]) && !rc; f++) {
        a.dim = fam[f].dim;
        a.opt.step = 0;
        for (int i = 0; i < ns && !rc; i++) {
            int64_t elems = (int64_t)(sz[i] / fam[f].per);
            if (elems < 1) elems = 1;
            /* norm and softmax run over rows of dim elements */
            a.n =
                fam[f].fn == k_norm || fam[f].fn == k_softmax ? (elems + a.dim - 1) / a.dim : elems;
            if (fam[f].fn == k_permute && upload_ids(c, a.ids, a.n, a.n, 7)) rc = -1;
            x[i] = fam[f].fn == k_norm || fam[f].fn == k_softmax ? a.n * a.dim * fam[f].per
                                                                 : a.n * fam[f].per;
            if (!rc) rc = rt_xcal_time_kernel(c, fam[f].fn, &a, &t[i]);
        }
        if (!rc) emit(c, fam[f].name, 0, 0, x, t, ns);
    }
    release_all(c, bufs, 7);
    return rc;
}

/* Host unique (and the keyed sort of FusedRec's fused unique) of N keys, half distinct. */
static int unique_family(rt_xcal *c, const sweep_cfg *s)
{
    double sz[32], x[32] = {0}, t[32] = {0};
    int ns = sizes(s->lo, s->hi / 4, sz, 32);
    int64_t cap = (int64_t)(s->hi / 4 / 20) + 16;
    kargs a = {0};
    a.vals = malloc(sizeof(uint64_t) * (size_t)cap);
    a.keys = malloc(sizeof(uint64_t) * (size_t)cap);
    int rc = a.vals && a.keys ? 0 : -1;
    uint64_t *keys = a.keys;
    for (int sort = 0; sort < 2 && !rc; sort++) {
        a.keys = sort ? keys : NULL;
        for (int i = 0; i < ns && !rc; i++) {
            a.n = (int64_t)(sz[i] / 20) > 1 ? (int64_t)(sz[i] / 20) : 2;
            uint64_t st = 88172645463325252ULL ^ (uint64_t)i;
            for (int64_t j = 0; j < a.n; j++) {
                st ^= st << 13, st ^= st >> 7, st ^= st << 17;
                a.vals[j] = st % (uint64_t)(a.n / 2 + 1);
                keys[j] = rt_dedup_hash(a.vals[j]);
            }
            rc = rt_xcal_time_kernel(c, k_unique, &a, &t[i]);
            x[i] = rt_dedup_unique_bytes((double)a.n, (double)a.uq.n_uniq, 8);
        }
        if (!rc) emit(c, sort ? "sort" : "unique", 0, 0, x, t, ns);
    }
    rt_xuniq_free(c->dev, &a.uq);
    free(a.vals);
    free(keys);
    return rc;
}

/* Jagged causal attention at HEAD_DIM (8 heads): NSEQ sequences of length L, L doubling. */
static int attention_family(rt_xcal *c, int head_dim, int max_len)
{
    const int heads = 8, nseq = 8;
    double x[32] = {0}, xb[32] = {0}, t[32] = {0}, tb[32] = {0};
    int nl = 0;
    size_t T = (size_t)nseq * (size_t)max_len * heads * head_dim;
    kargs a = {.hc = {heads, head_dim, 64, (float)(1.0 / sqrt(head_dim)), 1.0f / 64}};
    a.nseq = nseq;
    a.x = rt_xcal_alloc(c, T * 4 * 4, 0);
    a.y = rt_xcal_alloc(c, T * 3 * 4, 1);
    a.offsets = rt_xcal_alloc(c, sizeof(int64_t) * (nseq + 1), 1);
    /* HSTU's relative attention bias and its gradient, as exec's blocks pass them */
    a.rab = rt_xcal_alloc(c, sizeof(float) * heads * 64, 0);
    a.drab = rt_xcal_alloc(c, sizeof(float) * heads * 64, 1);
    void *bufs[] = {a.x, a.y, a.offsets, a.rab, a.drab};
    int rc = a.x && a.y && a.offsets && a.rab && a.drab ? 0 : -1;
    for (int L = 8; L <= max_len && !rc; L *= 2, nl++) {
        a.n = (int64_t)nseq * L;
        rc = upload_offsets(c, a.offsets, nseq, L);
        /* FLOPs from the math (models/layer_ops.c counts them the same way): forward q k^T and
         * the weighted sum of v over the L(L+1)/2 causal pairs; backward recomputes the
         * scores and forms dv, the score gradient, dq and dk. */
        double pairs = nseq * L * (L + 1) / 2.0;
        x[nl] = 2 * pairs * heads * (2.0 * head_dim);
        xb[nl] = 2 * pairs * heads * (5.0 * head_dim);
        if (!rc) rc = rt_xcal_time_kernel(c, k_attn_fwd, &a, &t[nl]);
        if (!rc) rc = rt_xcal_time_kernel(c, k_attn_bwd, &a, &tb[nl]);
    }
    if (!rc) emit(c, "attention", head_dim, 0, x, t, nl);
    if (!rc) emit(c, "attention_bwd", head_dim, 0, xb, tb, nl);
    release_all(c, bufs, 5);
    return rc;
}

/* DLRM dot interaction of NF vectors of DIM, batch quadrupling. */
static int interaction_family(rt_xcal *c, int nf, int dim, int max_batch)
{
    double x[32] = {0}, xb[32] = {0}, t[32] = {0}, tb[32] = {0};
    int nb = 0;
    size_t in = (size_t)max_batch * nf * dim, pairs = (size_t)max_batch * nf * (nf - 1) / 2;
    kargs a = {.n = nf, .dim = dim};
    a.x = rt_xcal_alloc(c, in * 4, 0);
    a.y = rt_xcal_alloc(c, (in > pairs ? in : pairs) * 4, 1);
    a.out = rt_xcal_alloc(c, pairs * 4, 0);
    void *bufs[] = {a.x, a.y, a.out};
    int rc = a.x && a.y && a.out ? 0 : -1;
    for (int b = 1; b <= max_batch && !rc; b *= 4, nb++) {
        a.bags = b;
        /* the kernel computes the nf(nf-1)/2 pairs: 2 d FLOPs each; backward twice that */
        x[nb] = (double)b * nf * (nf - 1) * dim;
        xb[nb] = 2 * x[nb];
        rc = rt_xcal_time_kernel(c, k_dot_fwd, &a, &t[nb]);
        if (!rc) rc = rt_xcal_time_kernel(c, k_dot_bwd, &a, &tb[nb]);
    }
    if (!rc) emit(c, "interaction", dim, 0, x, t, nb);
    if (!rc) emit(c, "interaction_bwd", dim, 0, xb, tb, nb);
    release_all(c, bufs, 3);
    return rc;
}

/* Sampled softmax of Q queries against their positives and NEG shared negatives of DIM, Q
 * quadrupling: logits and the gradients of queries and candidates, 3 x 2 Q (NEG + 1) DIM. */
static int ssm_family(rt_xcal *c, int neg, int dim, int max_q)
{
    double x[32] = {0}, t[32] = {0};
    int nq = 0;
    size_t big = (size_t)(max_q > neg ? max_q : neg) * dim;
    kargs a = {.bags = neg, .dim = dim};
    a.x = rt_xcal_alloc(c, 3 * big * 4, 0);
    a.y = rt_xcal_alloc(c, 3 * big * 4, 1);
    a.out = rt_xcal_alloc(c, 64, 1);
    void *bufs[] = {a.x, a.y, a.out};
    int rc = a.x && a.y && a.out ? 0 : -1;
    for (int q = 1; q <= max_q && !rc; q *= 4, nq++) {
        a.n = q;
        x[nq] = 3 * 2.0 * q * (neg + 1) * dim;
        rc = rt_xcal_time_kernel(c, k_ssm, &a, &t[nq]);
    }
    if (!rc) emit(c, "sampled_softmax", dim, 0, x, t, nq);
    release_all(c, bufs, 3);
    return rc;
}

int rt_xcal_kernels(rt_xcal *c)
{
    static const int dims_full[] = {16, 64, 128}, pool_full[] = {1, 8, 32};
    static const int dims_quick[] = {64}, pool_quick[] = {8};
    sweep_cfg s =
        c->o.quick
            ? (sweep_cfg){8.0 * (1 << 20), 4096, 1 << 20, dims_quick, 1, pool_quick, 1}
            : (sweep_cfg){256.0 * (1 << 20), 4096, 64.0 * (1 << 20), dims_full, 3, pool_full, 3};
    /* Tables of twice the last-level cache, so the pool's rows cannot all stay in it. */
    double floor_bytes = s.table_bytes;
    s.table_bytes = (double)rt_xcal_cold_bytes(c, (size_t)floor_bytes, "the embedding tables");
    if (c->out)
        fprintf(
            c->out,
            "      kernels:\n        # gather_pool and sparse_*: every call on new uniform "
            "IDs of tables of %.0f MiB (the larger of twice the last-level cache and %.0f MiB)\n",
            s.table_bytes / (1 << 20), floor_bytes / (1 << 20));
    int rc = 0;
    for (int i = 0; i < s.n_dims && !rc; i++)
        for (int j = 0; j < s.n_poolings && !rc; j++)
            rc = embedding_family(c, &s, s.dims[i], s.poolings[j]);
    if (c->log) fprintf(c->log, "calibrate: embedding kernels done\n");
    if (!rc) rc = stream_family(c, &s);
    if (!rc) rc = unique_family(c, &s);
    if (c->log) fprintf(c->log, "calibrate: stream kernels, unique and sort done\n");
    static const int hd_full[] = {16, 64}, hd_quick[] = {16};
    for (int i = 0; i < (c->o.quick ? 1 : 2) && !rc; i++)
        rc = attention_family(c, (c->o.quick ? hd_quick : hd_full)[i], c->o.quick ? 64 : 1024);
    if (!rc) rc = interaction_family(c, 27, 128, c->o.quick ? 64 : 4096);
    if (!rc) rc = ssm_family(c, 128, 128, c->o.quick ? 64 : 4096);
    if (c->log) fprintf(c->log, "calibrate: attention and interaction done\n");
    return rc;
}

/* Dispatch: a one-element kernel between two marks, what every op pays beyond its work. Host
 * per iteration: the runner's window frame (its origin mark and the final device sync) around
 * no op at all. */
static int k_frame(rt_xcal *c, void *p)
{
    (void)p;
    return c->dev->ops->mark(c->dev, 0) || c->dev->ops->sync(c->dev) ? -1 : 0;
}

int rt_xcal_overheads(rt_xcal *c)
{
    kargs a = {0};
    a.x = rt_xcal_alloc(c, 64, 0);
    a.y = rt_xcal_alloc(c, 64, 0);
    void *bufs[] = {a.x, a.y};
    double dispatch = 0, frame = 0;
    int rc = a.x && a.y ? 0 : -1;
    if (!rc) rc = rt_xcal_time_kernel(c, k_empty, &a, &dispatch);
    if (!rc) rc = rt_xcal_time_kernel(c, k_frame, &a, &frame);
    if (!rc && c->out)
        fprintf(c->out, "      dispatch: %.4fus\n      host_per_iteration: %.4fus\n",
                dispatch * 1e6, frame * 1e6);
    release_all(c, bufs, 2);
    return rc;
}
