#include "neg_samples.h"

#include <stdlib.h>
#include <string.h>

struct rt_xneg {
    rt_xdev *d;
    rt_neg_cfg c;
    rt_kdtype stored;
    size_t eb;
    int64_t max_q, K, D, S, k;
    uint64_t seed;
    int64_t nq;
    int64_t *h_real, *h_idx, *d_idx;
    void *ten;    /* resident: max_q x K x D stored elements */
    void *seg[2]; /* offloaded: the two device segments */
    void *host;   /* offloaded: max_q x K x D stored elements */
    float *f32;   /* one segment in fp32: the gather's and the logits' view of a narrow tensor */
    float *dneg;  /* one segment's negative gradients */
    float *logits;
    int prefetched;
    rt_xneg_bytes bytes;
};

static int fail(FILE *err, const char *what)
{
    if (err) fprintf(err, "negatives: %s\n", what);
    return -1;
}

static void *dev_alloc(rt_xneg *g, int64_t count, size_t size)
{
    size_t bytes = (size_t)(count > 0 ? count : 1) * size;
    g->bytes.device_held += (double)bytes;
    return g->d->ops->alloc(g->d, bytes);
}

void rt_xneg_free(rt_xneg *g)
{
    if (!g) return;
    void *dev[] = {g->d_idx, g->ten, g->seg[0], g->seg[1], g->f32, g->dneg, g->logits};
    for (size_t i = 0; i < sizeof dev / sizeof *dev; i++)
        if (dev[i]) g->d->ops->release(g->d, dev[i]);
    free(g->host);
    free(g->h_real);
    free(g->h_idx);
    free(g);
}

static int alloc_all(rt_xneg *g)
{
    int64_t seg = g->S * g->K * g->D, all = g->max_q * g->K * g->D;
    int ok = (g->h_real = malloc(sizeof(int64_t) * (size_t)(g->max_q + 1))) &&
             (g->h_idx = malloc(sizeof(int64_t) * (size_t)(g->max_q * g->K + 1))) &&
             (g->d_idx = dev_alloc(g, g->max_q * g->K, sizeof(int64_t))) &&
             (g->dneg = dev_alloc(g, seg, sizeof(float))) &&
             (g->logits = dev_alloc(g, g->max_q * (1 + g->k * g->K), sizeof(float)));
    if (ok && g->eb != sizeof(float)) ok = (g->f32 = dev_alloc(g, seg, sizeof(float))) != NULL;
    if (ok && g->c.offload) {
        ok = (g->seg[0] = dev_alloc(g, seg, g->eb)) && (g->seg[1] = dev_alloc(g, seg, g->eb)) &&
             (g->host = malloc(g->eb * (size_t)(all > 0 ? all : 1)));
        g->bytes.host_held = (double)(g->eb * (size_t)all);
    } else if (ok) {
        ok = (g->ten = dev_alloc(g, all, g->eb)) != NULL;
    }
    return ok ? 0 : -1;
}

rt_xneg *rt_xneg_new(rt_xdev *d, const rt_neg_cfg *c, rt_kdtype stored, int64_t max_q, int64_t nneg,
                     int64_t dim, uint64_t seed, FILE *err)
{
    if (!d->ops->neg_logits || !d->ops->neg_logits_bwd || !d->ops->softmax_xent) {
        fail(err, "the per-query negatives' kernels are not implemented on this device; "
                  "allowed: plan.negatives on the cpu device, or no plan.negatives map");
        return NULL;
    }
    rt_xneg *g = calloc(1, sizeof *g);
    if (!g) {
        fail(err, "out of host memory");
        return NULL;
    }
    *g = (rt_xneg){.d = d, .c = *c, .stored = stored, .eb = rt_kdtype_bytes(stored)};
    g->max_q = max_q > 0 ? max_q : 1, g->K = nneg, g->D = dim, g->k = c->expansion;
    g->S = c->segment < g->max_q ? c->segment : g->max_q, g->seed = seed;
    if (alloc_all(g)) {
        fail(err, "out of memory for the per-query negatives");
        rt_xneg_free(g);
        return NULL;
    }
    return g;
}

int rt_xneg_offloads(const rt_xneg *g)
{
    return g->c.offload;
}

rt_xneg_bytes rt_xneg_stats(const rt_xneg *g)
{
    return g->bytes;
}

/* Position among the real tokens of negative J of query I: iteration-independent. */
static uint64_t draw(uint64_t seed, int64_t i, int64_t j)
{
    return rt_kmix64(rt_kmix64(seed ^ 0x6e656771ULL) ^
                     ((uint64_t)i * 0x9e3779b97f4a7c15ULL + (uint64_t)j));
}

int rt_xneg_sample(rt_xneg *g, const int64_t *h, const int64_t *valid, int batch, int64_t nq,
                   FILE *err)
{
    int64_t real = 0;
    for (int s = 0; s < batch; s++) {
        int64_t vl = valid ? valid[s] : h[s + 1] - h[s];
        for (int64_t j = 0; j < vl && real < g->max_q; j++)
            g->h_real[real++] = h[s] + j;
    }
    if (nq > g->max_q || (nq > 0 && real == 0))
        return fail(err, "more queries than the negatives were sized for");
    g->nq = nq;
    for (int64_t i = 0; i < nq; i++)
        for (int64_t j = 0; j < g->K; j++)
            g->h_idx[i * g->K + j] = g->h_real[draw(g->seed, i, j) % (uint64_t)real];
    size_t bytes = sizeof(int64_t) * (size_t)(nq * g->K);
    if (bytes && g->d->ops->copy(g->d, g->d_idx, g->h_idx, bytes, RT_XCOPY_H2D))
        return fail(err, "uploading the negatives' indices failed");
    return 0;
}

static int64_t seg_rows(const rt_xneg *g, int64_t s)
{
    int64_t left = g->nq - s * g->S;
    return left < g->S ? left : g->S;
}

static size_t seg_bytes(const rt_xneg *g, int64_t s)
{
    return g->eb * (size_t)(seg_rows(g, s) * g->K * g->D);
}

static int64_t n_segs(const rt_xneg *g)
{
    return (g->nq + g->S - 1) / g->S;
}

/* Where segment S is stored: in the tensor, or in the device segment BUF. */
static void *stored_at(const rt_xneg *g, int64_t s, int buf)
{
    if (g->c.offload) return g->seg[buf];
    return (char *)g->ten + g->eb * (size_t)(s * g->S * g->K * g->D);
}

int rt_xneg_gather(rt_xneg *g, const float *tok, int64_t tokens, FILE *err)
{
    const rt_xdev_ops *o = g->d->ops;
    g->bytes.offloaded = g->bytes.prefetched = g->bytes.fetched = 0;
    g->prefetched = 0;
    for (int64_t s = 0; s < n_segs(g); s++) {
        int64_t n = seg_rows(g, s) * g->K;
        void *dst = stored_at(g, s, 0);
        float *f = g->eb == sizeof(float) ? dst : g->f32;
        if (o->gather_rows(g->d, tok, tokens, g->D, g->d_idx + s * g->S * g->K, n, f) != RT_K_OK ||
            (f != dst && o->convert(g->d, f, RT_KDT_FP32, n * g->D, g->stored, dst) != RT_K_OK))
            return fail(err, "gathering the negatives failed");
        if (!g->c.offload) continue;
        char *host = (char *)g->host + g->eb * (size_t)(s * g->S * g->K * g->D);
        if (o->copy(g->d, host, dst, seg_bytes(g, s), RT_XCOPY_D2H))
            return fail(err, "offloading the negatives failed");
        g->bytes.offloaded += (double)seg_bytes(g, s);
    }
    return 0;
}

static int fetch(rt_xneg *g, int64_t s, double *count, FILE *err)
{
    if (!g->c.offload || s >= n_segs(g)) return 0;
    const char *host = (const char *)g->host + g->eb * (size_t)(s * g->S * g->K * g->D);
    if (g->d->ops->copy(g->d, g->seg[s % 2], host, seg_bytes(g, s), RT_XCOPY_H2D))
        return fail(err, "fetching a segment of the negatives failed");
    *count += (double)seg_bytes(g, s);
    return 0;
}

int rt_xneg_prefetch(rt_xneg *g, FILE *err)
{
    g->bytes.prefetched = 0;
    if (fetch(g, 0, &g->bytes.prefetched, err)) return -1;
    /* The graph lets the loss overlap the fetch, so no event orders the loss's stream after
     * this copy: it is complete before the op returns (a no-op on the cpu device). */
    if (g->d->ops->sync(g->d)) return fail(err, "fetching the first segment failed");
    g->prefetched = g->c.offload && g->nq > 0;
    return 0;
}

/* Segment S as fp32 for the kernels, the next one on its way into the other buffer. */
static const float *segment(rt_xneg *g, int64_t s, FILE *err)
{
    if (fetch(g, s + 1, &g->bytes.fetched, err)) return NULL;
    void *at = stored_at(g, s, (int)(s % 2));
    if (g->eb == sizeof(float)) return at;
    int64_t n = seg_rows(g, s) * g->K * g->D;
    if (g->d->ops->convert(g->d, at, g->stored, n, RT_KDT_FP32, g->f32) != RT_K_OK) {
        fail(err, "widening a segment of the negatives failed");
        return NULL;
    }
    return g->f32;
}

static int logits_fwd(rt_xneg *g, const float *q, const float *pos, int64_t ld, FILE *err)
{
    const rt_xdev_ops *o = g->d->ops;
    if (o->neg_logits(g->d, q, g->nq, g->D, pos, 0, g->nq, 1, 1, g->logits, ld, 0) != RT_K_OK)
        return fail(err, "positive logits failed");
    if (!g->prefetched && fetch(g, 0, &g->bytes.fetched, err)) return -1;
    for (int64_t s = 0; s < n_segs(g); s++) {
        const float *neg = segment(g, s, err);
        if (!neg || o->neg_logits(g->d, q, g->nq, g->D, neg, s * g->S, seg_rows(g, s), g->K, g->k,
                                  g->logits, ld, 1) != RT_K_OK)
            return fail(err, "negative logits failed");
    }
    return 0;
}

static int logits_bwd(rt_xneg *g, const float *q, const float *pos, int64_t ld, float *dq,
                      float *dpos, float *dtok, int64_t tokens, FILE *err)
{
    const rt_xdev_ops *o = g->d->ops;
    if (o->zero(g->d, dq, sizeof(float) * (size_t)(g->nq * g->D)) ||
        o->neg_logits_bwd(g->d, q, g->nq, g->D, pos, 0, g->nq, 1, 1, g->logits, ld, 0, dq, dpos) !=
            RT_K_OK)
        return fail(err, "positive logits' backward failed");
    if (fetch(g, 0, &g->bytes.fetched, err)) return -1;
    for (int64_t s = 0; s < n_segs(g); s++) {
        const float *neg = segment(g, s, err);
        int64_t rows = seg_rows(g, s);
        if (!neg ||
            o->neg_logits_bwd(g->d, q, g->nq, g->D, neg, s * g->S, rows, g->K, g->k, g->logits, ld,
                              1, dq, g->dneg) != RT_K_OK ||
            o->scatter_add_rows(g->d, g->dneg, rows * g->K, g->D, g->d_idx + s * g->S * g->K,
                                tokens, dtok) != RT_K_OK)
            return fail(err, "negative logits' backward failed");
    }
    return 0;
}

int rt_xneg_loss(rt_xneg *g, const float *q, const float *pos, float scale, float *loss, float *dq,
                 float *dpos, float *dtok, int64_t tokens, FILE *err)
{
    int64_t ld = 1 + g->k * g->K;
    g->bytes.fetched = 0;
    if (g->nq == 0) return 0;
    if (logits_fwd(g, q, pos, ld, err)) return -1;
    if (g->d->ops->softmax_xent(g->d, g->logits, g->nq, ld, scale, loss) != RT_K_OK)
        return fail(err, "softmax cross-entropy failed");
    g->prefetched = 0;
    return logits_bwd(g, q, pos, ld, dq, dpos, dtok, tokens, err);
}
