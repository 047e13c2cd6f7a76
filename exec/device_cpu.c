/* The CPU device backend: "device memory" is host memory and every kernel is its rt_kcpu_*
 * twin, run at once on the calling thread, so streams, sync and wait_mark have nothing to do. */
#define _POSIX_C_SOURCE 200809L

#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "device.h"

/* 64 bytes: one cache line, and enough for any SIMD load the kernels may vectorize to. */
#define RT_XCPU_ALIGN 64

typedef struct {
    double *marks; /* CLOCK_MONOTONIC seconds per slot */
    int max_marks;
} rt_xcpu;

/* The allocation header keeps the size, because release must update bytes_now and free() does
 * not tell it; it is a full alignment unit so the user pointer stays 64-byte aligned. */
typedef union {
    size_t bytes;
    unsigned char pad[RT_XCPU_ALIGN];
} rt_xcpu_hdr;

static double rt_xcpu_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int rt_xcpu_open(rt_xdev *d, int local_rank, int max_marks, rt_xmath math, FILE *err)
{
    (void)math; /* the reference GEMM is fp32 whatever the plan asks for */
    rt_xcpu *c = calloc(1, sizeof *c);
    int n = max_marks > 0 ? max_marks : 1;
    if (c) c->marks = calloc((size_t)n, sizeof *c->marks);
    if (!c || !c->marks) {
        if (c) free(c);
        if (err) fprintf(err, "cpu device: out of host memory for %d timing marks\n", n);
        return -1;
    }
    c->max_marks = n;
    d->impl = c;
    d->stream = RT_STREAM_COMPUTE;
    d->bytes_now = 0;
    d->bytes_peak = 0;
    d->local_rank = local_rank;
    return 0;
}

static void rt_xcpu_close(rt_xdev *d)
{
    rt_xcpu *c = d->impl;
    if (!c) return;
    free(c->marks);
    free(c);
    d->impl = NULL;
}

static void *rt_xcpu_alloc(rt_xdev *d, size_t bytes)
{
    size_t body = (bytes + RT_XCPU_ALIGN - 1) / RT_XCPU_ALIGN * RT_XCPU_ALIGN;
    if (body < bytes || body > SIZE_MAX - sizeof(rt_xcpu_hdr)) return NULL;
    rt_xcpu_hdr *h = aligned_alloc(RT_XCPU_ALIGN, sizeof *h + (body ? body : RT_XCPU_ALIGN));
    if (!h) return NULL;
    h->bytes = bytes;
    d->bytes_now += bytes;
    if (d->bytes_now > d->bytes_peak) d->bytes_peak = d->bytes_now;
    return h + 1;
}

static void rt_xcpu_release(rt_xdev *d, void *p)
{
    if (!p) return;
    rt_xcpu_hdr *h = (rt_xcpu_hdr *)p - 1;
    d->bytes_now -= h->bytes;
    free(h);
}

static int rt_xcpu_copy(rt_xdev *d, void *dst, const void *src, size_t bytes, rt_xcopy_dir dir)
{
    (void)d;
    (void)dir;
    if (bytes && (!dst || !src)) return -1;
    if (bytes && dst != src) memmove(dst, src, bytes);
    return 0;
}

static int rt_xcpu_zero(rt_xdev *d, void *p, size_t bytes)
{
    (void)d;
    if (bytes && !p) return -1;
    if (bytes) memset(p, 0, bytes);
    return 0;
}

static int rt_xcpu_copy2d(rt_xdev *d, void *dst, size_t dpitch, const void *src, size_t spitch,
                          size_t width, size_t height)
{
    (void)d;
    for (size_t r = 0; r < height; r++)
        memcpy((char *)dst + r * dpitch, (const char *)src + r * spitch, width);
    return 0;
}

static int rt_xcpu_sync(rt_xdev *d)
{
    (void)d;
    return 0;
}

static int rt_xcpu_mark(rt_xdev *d, int slot)
{
    rt_xcpu *c = d->impl;
    if (!c || slot < 0 || slot >= c->max_marks) return -1;
    c->marks[slot] = rt_xcpu_now();
    return 0;
}

static int rt_xcpu_wait_mark(rt_xdev *d, int slot)
{
    rt_xcpu *c = d->impl;
    return (!c || slot < 0 || slot >= c->max_marks) ? -1 : 0;
}

static double rt_xcpu_mark_seconds(rt_xdev *d, int slot)
{
    rt_xcpu *c = d->impl;
    if (!c || slot < 0 || slot >= c->max_marks) return 0.0;
    return c->marks[slot] - c->marks[0];
}

/* The CPU model of /proc/cpuinfo (Linux), or "cpu" where there is none. */
static void rt_xcpu_describe(rt_xdev *d, char *name, size_t name_size, char *libs, size_t libs_size)
{
    (void)d;
    char model[256] = "cpu";
    FILE *f = fopen("/proc/cpuinfo", "r");
    char line[512];
    while (f && fgets(line, sizeof line, f)) {
        char *colon = strchr(line, ':');
        if (strncmp(line, "model name", 10) || !colon) continue;
        const char *v = colon + 1;
        while (*v == ' ' || *v == '\t')
            v++;
        snprintf(model, sizeof model, "%s", v);
        model[strcspn(model, "\n")] = '\0';
        break;
    }
    if (f) fclose(f);
    snprintf(name, name_size, "%s, %ld online cpus", model, sysconf(_SC_NPROCESSORS_ONLN));
    /* The GEMM library's thread count decides how many cores one rank's GEMM uses. */
    const char *th = getenv("OPENBLAS_NUM_THREADS"), *omp = getenv("OMP_NUM_THREADS");
    snprintf(libs, libs_size, "GEMM %s (OPENBLAS_NUM_THREADS=%s, OMP_NUM_THREADS=%s)",
             rt_kcpu_gemm_library(), th ? th : "unset", omp ? omp : "unset");
}

static void *rt_xcpu_native_stream(rt_xdev *d, rt_stream s)
{
    (void)d;
    (void)s;
    return NULL;
}

static rt_kstatus rt_xcpu_gather_pool(rt_xdev *d, const rt_ktable *t, const int64_t *ids,
                                      const int64_t *offsets, int64_t nbags, rt_kpool pool,
                                      float *out)
{
    (void)d;
    return rt_kcpu_gather_pool(t, ids, offsets, nbags, pool, out);
}

static rt_kstatus rt_xcpu_gather_segments(rt_xdev *d, const rt_kgather_seg *segs, int64_t nseg)
{
    (void)d;
    return rt_kcpu_gather_segments(segs, nseg);
}

static rt_kstatus rt_xcpu_sequence_lookup(rt_xdev *d, const rt_ktable *t, const int64_t *ids,
                                          int64_t n, float *out)
{
    (void)d;
    return rt_kcpu_sequence_lookup(t, ids, n, out);
}

static rt_kstatus rt_xcpu_gather_rows(rt_xdev *d, const float *src, int64_t src_rows, int64_t dim,
                                      const int64_t *idx, int64_t n, float *dst)
{
    (void)d;
    return rt_kcpu_gather_rows(src, src_rows, dim, idx, n, dst);
}

static rt_kstatus rt_xcpu_scatter_add_rows(rt_xdev *d, const float *src, int64_t n, int64_t dim,
                                           const int64_t *idx, int64_t dst_rows, float *dst)
{
    (void)d;
    return rt_kcpu_scatter_add_rows(src, n, dim, idx, dst_rows, dst);
}

static rt_kstatus rt_xcpu_sparse_update(rt_xdev *d, rt_ktable *t, rt_kopt_state st,
                                        const rt_kopt *opt, const int64_t *ids,
                                        const int64_t *offsets, int64_t nbags, rt_kpool pool,
                                        const float *grad_out)
{
    (void)d;
    return rt_kcpu_sparse_update(t, st, opt, ids, offsets, nbags, pool, grad_out);
}

static rt_kstatus rt_xcpu_linear_fwd(rt_xdev *d, const float *x, int64_t batch, int64_t in,
                                     int64_t out, const float *w, const float *bias, rt_kact act,
                                     float *y)
{
    (void)d;
    return rt_kcpu_linear_fwd(x, batch, in, out, w, bias, act, y);
}

static rt_kstatus rt_xcpu_linear_bwd(rt_xdev *d, const float *x, const float *y, const float *dy,
                                     int64_t batch, int64_t in, int64_t out, const float *w,
                                     rt_kact act, float *dx, float *dw, float *db)
{
    (void)d;
    return rt_kcpu_linear_bwd(x, y, dy, batch, in, out, w, act, dx, dw, db);
}

static rt_kstatus rt_xcpu_dot_fwd(rt_xdev *d, const float *t, int64_t batch, int64_t nf, int64_t dd,
                                  float *out)
{
    (void)d;
    return rt_kcpu_dot_interact_fwd(t, batch, nf, dd, out);
}

static rt_kstatus rt_xcpu_dot_bwd(rt_xdev *d, const float *t, const float *dout, int64_t batch,
                                  int64_t nf, int64_t dd, float *dt)
{
    (void)d;
    return rt_kcpu_dot_interact_bwd(t, dout, batch, nf, dd, dt);
}

static rt_kstatus rt_xcpu_dcn_fwd(rt_xdev *d, const float *x0, const float *xl, int64_t batch,
                                  int64_t dd, int64_t r, const float *u, const float *v,
                                  const float *bias, float *p, float *q, float *y)
{
    (void)d;
    return rt_kcpu_dcn_cross_fwd(x0, xl, batch, dd, r, u, v, bias, p, q, y);
}

static rt_kstatus rt_xcpu_dcn_bwd(rt_xdev *d, const float *x0, const float *xl, const float *p,
                                  const float *q, const float *dy, int64_t batch, int64_t dd,
                                  int64_t r, const float *u, const float *v, float *dx0, float *dxl,
                                  float *du, float *dv, float *dbias)
{
    (void)d;
    return rt_kcpu_dcn_cross_bwd(x0, xl, p, q, dy, batch, dd, r, u, v, dx0, dxl, du, dv, dbias);
}

static rt_kstatus rt_xcpu_hstu_fwd(rt_xdev *d, const float *q, const float *k, const float *v,
                                   const int64_t *offsets, int64_t nseq, const rt_khstu_cfg *c,
                                   const float *rab, float *out)
{
    (void)d;
    return rt_kcpu_hstu_attn_fwd(q, k, v, offsets, nseq, c, rab, out);
}

/* Each pass is its own kernel call, so the score buffers make their round trips. */
static rt_kstatus rt_xcpu_attn_unfused_fwd(rt_xdev *d, const float *q, const float *k,
                                           const float *v, const int64_t *offsets, int64_t nseq,
                                           const rt_khstu_cfg *c, const float *rab, float *s,
                                           float *p, float *out)
{
    (void)d;
    int64_t n;
    rt_kstatus st = rt_kcpu_attn_pairs(offsets, nseq, c, &n);
    if (st == RT_K_OK) st = rt_kcpu_attn_scores(q, k, offsets, nseq, c, rab, s);
    if (st == RT_K_OK) st = rt_kcpu_attn_silu(s, n, c->inv_n, p);
    if (st == RT_K_OK) st = rt_kcpu_attn_pv(p, v, offsets, nseq, c, out);
    return st;
}

static rt_kstatus rt_xcpu_attn_unfused_bwd(rt_xdev *d, const float *q, const float *k,
                                           const float *v, const int64_t *offsets, int64_t nseq,
                                           const rt_khstu_cfg *c, const float *s, const float *p,
                                           const float *dout, float *ds, float *dq, float *dk,
                                           float *dv, float *drab)
{
    (void)d;
    int64_t n;
    rt_kstatus st = rt_kcpu_attn_pairs(offsets, nseq, c, &n);
    if (st == RT_K_OK) st = rt_kcpu_attn_pv_bwd(p, v, dout, offsets, nseq, c, ds, dv);
    if (st == RT_K_OK) st = rt_kcpu_attn_silu_bwd(s, ds, n, c->inv_n, ds);
    if (st == RT_K_OK) st = rt_kcpu_attn_scores_bwd(q, k, ds, offsets, nseq, c, dq, dk, drab);
    return st;
}

static rt_kstatus rt_xcpu_relpos_unfused_fwd(rt_xdev *d, const float *v, const int64_t *offsets,
                                             int64_t nseq, const rt_khstu_cfg *c, const float *rab,
                                             float *p, float *out)
{
    (void)d;
    rt_kstatus st = rt_kcpu_relpos_weights(offsets, nseq, c, rab, p);
    if (st == RT_K_OK) st = rt_kcpu_attn_pv(p, v, offsets, nseq, c, out);
    return st;
}

static rt_kstatus rt_xcpu_relpos_unfused_bwd(rt_xdev *d, const float *v, const int64_t *offsets,
                                             int64_t nseq, const rt_khstu_cfg *c, const float *rab,
                                             const float *p, const float *dout, float *da,
                                             float *dv, float *drab)
{
    (void)d;
    rt_kstatus st = rt_kcpu_attn_pv_bwd(p, v, dout, offsets, nseq, c, da, dv);
    if (st == RT_K_OK) st = rt_kcpu_relpos_bias_bwd(da, offsets, nseq, c, rab, drab);
    return st;
}

static rt_kstatus rt_xcpu_hstu_bwd(rt_xdev *d, const float *q, const float *k, const float *v,
                                   const int64_t *offsets, int64_t nseq, const rt_khstu_cfg *c,
                                   const float *rab, const float *dout, float *dq, float *dk,
                                   float *dv, float *drab)
{
    (void)d;
    return rt_kcpu_hstu_attn_bwd(q, k, v, offsets, nseq, c, rab, dout, dq, dk, dv, drab);
}

static rt_kstatus rt_xcpu_bce(rt_xdev *d, const float *logits, const float *labels, int64_t n,
                              float *loss, float *dlogits)
{
    (void)d;
    return rt_kcpu_bce_logits(logits, labels, n, loss, dlogits);
}

static rt_kstatus rt_xcpu_softmax(rt_xdev *d, const float *q, const float *pos, const float *neg,
                                  const float *logq, int64_t batch, int64_t nneg, int64_t dd,
                                  float temperature, float *loss, float *dq, float *dpos,
                                  float *dneg)
{
    (void)d;
    return rt_kcpu_sampled_softmax(q, pos, neg, logq, batch, nneg, dd, temperature, loss, dq, dpos,
                                   dneg);
}

static rt_kstatus rt_xcpu_neg_logits(rt_xdev *d, const float *q, int64_t nq, int64_t dd,
                                     const float *neg, int64_t first, int64_t rows, int64_t nneg,
                                     int64_t k, float *logits, int64_t ld, int64_t col)
{
    (void)d;
    return rt_kcpu_neg_logits(q, nq, dd, neg, first, rows, nneg, k, logits, ld, col);
}

static rt_kstatus rt_xcpu_neg_logits_bwd(rt_xdev *d, const float *q, int64_t nq, int64_t dd,
                                         const float *neg, int64_t first, int64_t rows,
                                         int64_t nneg, int64_t k, const float *dlogits, int64_t ld,
                                         int64_t col, float *dq, float *dneg)
{
    (void)d;
    return rt_kcpu_neg_logits_bwd(q, nq, dd, neg, first, rows, nneg, k, dlogits, ld, col, dq, dneg);
}

static rt_kstatus rt_xcpu_softmax_xent(rt_xdev *d, float *logits, int64_t rows, int64_t cols,
                                       float scale, float *loss)
{
    (void)d;
    return rt_kcpu_softmax_xent(logits, rows, cols, scale, loss);
}

static rt_kstatus rt_xcpu_convert(rt_xdev *d, const void *in, rt_kdtype from, int64_t n,
                                  rt_kdtype to, void *out)
{
    (void)d;
    return rt_kcpu_convert(in, from, n, to, out);
}

static rt_kstatus rt_xcpu_axpy(rt_xdev *d, int64_t n, float a, const float *x, float *y)
{
    (void)d;
    return rt_kcpu_axpy(n, a, x, y);
}

static rt_kstatus rt_xcpu_adam(rt_xdev *d, int64_t n, const rt_kadam *opt, float *w, const float *g,
                               float *m, float *v)
{
    (void)d;
    return rt_kcpu_adam(n, opt, w, g, m, v);
}

static rt_kstatus rt_xcpu_silu_fwd(rt_xdev *d, const float *x, int64_t n, float *y)
{
    (void)d;
    return rt_kcpu_silu_fwd(x, n, y);
}

static rt_kstatus rt_xcpu_silu_bwd(rt_xdev *d, const float *x, const float *dy, int64_t n,
                                   float *dx)
{
    (void)d;
    return rt_kcpu_silu_bwd(x, dy, n, dx);
}

static rt_kstatus rt_xcpu_mul_fwd(rt_xdev *d, const float *a, const float *b, int64_t n, float *y)
{
    (void)d;
    return rt_kcpu_mul_fwd(a, b, n, y);
}

static rt_kstatus rt_xcpu_mul_bwd(rt_xdev *d, const float *a, const float *b, const float *dy,
                                  int64_t n, float *da, float *db)
{
    (void)d;
    return rt_kcpu_mul_bwd(a, b, dy, n, da, db);
}

static rt_kstatus rt_xcpu_layernorm_fwd(rt_xdev *d, const float *x, int64_t rows, int64_t dim,
                                        float eps, float *y, float *mean, float *rstd)
{
    (void)d;
    return rt_kcpu_layernorm_fwd(x, rows, dim, eps, y, mean, rstd);
}

static rt_kstatus rt_xcpu_layernorm_bwd(rt_xdev *d, const float *x, const float *dy, int64_t rows,
                                        int64_t dim, const float *mean, const float *rstd,
                                        float *dx)
{
    (void)d;
    return rt_kcpu_layernorm_bwd(x, dy, rows, dim, mean, rstd, dx);
}

static rt_kstatus rt_xcpu_softmax_fwd(rt_xdev *d, const float *x, int64_t rows, int64_t dim,
                                      float *y)
{
    (void)d;
    return rt_kcpu_softmax_fwd(x, rows, dim, y);
}

static rt_kstatus rt_xcpu_softmax_bwd(rt_xdev *d, const float *y, const float *dy, int64_t rows,
                                      int64_t dim, float *dx)
{
    (void)d;
    return rt_kcpu_softmax_bwd(y, dy, rows, dim, dx);
}

static rt_kstatus rt_xcpu_mix_fwd(rt_xdev *d, const float *x, const float *g, int64_t rows,
                                  int64_t nexp, int64_t dim, float *y)
{
    (void)d;
    return rt_kcpu_mix_fwd(x, g, rows, nexp, dim, y);
}

static rt_kstatus rt_xcpu_mix_bwd(rt_xdev *d, const float *x, const float *g, const float *dy,
                                  int64_t rows, int64_t nexp, int64_t dim, float *dx, float *dg)
{
    (void)d;
    return rt_kcpu_mix_bwd(x, g, dy, rows, nexp, dim, dx, dg);
}

static rt_kstatus rt_xcpu_relpos_fwd(rt_xdev *d, const float *v, const int64_t *offsets,
                                     int64_t nseq, const rt_khstu_cfg *c, const float *rab,
                                     float *out)
{
    (void)d;
    return rt_kcpu_relpos_attn_fwd(v, offsets, nseq, c, rab, out);
}

static rt_kstatus rt_xcpu_relpos_bwd(rt_xdev *d, const float *v, const int64_t *offsets,
                                     int64_t nseq, const rt_khstu_cfg *c, const float *rab,
                                     const float *dout, float *dv, float *drab)
{
    (void)d;
    return rt_kcpu_relpos_attn_bwd(v, offsets, nseq, c, rab, dout, dv, drab);
}

/* sysfs's largest cache of cpu0 (the L3 where there is one): glibc's sysconf answers 0 for
 * caches that CPUID does not describe, as in some virtual machines. */
static size_t rt_xcpu_cache_bytes(rt_xdev *d)
{
    (void)d;
    size_t best = 0;
    for (int i = 0; i < 8; i++) {
        char path[96];
        snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu0/cache/index%d/size", i);
        FILE *f = fopen(path, "r");
        if (!f) continue;
        unsigned long v = 0;
        char unit = 0;
        int n = fscanf(f, "%lu%c", &v, &unit);
        fclose(f);
        size_t b = (size_t)v * (n == 2 && unit == 'K' ? 1024 : n == 2 && unit == 'M' ? 1 << 20 : 1);
        if (n >= 1 && b > best) best = b;
    }
    long l3 = sysconf(_SC_LEVEL3_CACHE_SIZE);
    if (l3 > 0 && (size_t)l3 > best) best = (size_t)l3;
    return best;
}

const rt_xdev_ops rt_xdev_cpu = {
    .name = "cpu",
    .host_memory = 1,
    .fp32_only = 1,
    .open = rt_xcpu_open,
    .close = rt_xcpu_close,
    .alloc = rt_xcpu_alloc,
    .release = rt_xcpu_release,
    .copy = rt_xcpu_copy,
    .zero = rt_xcpu_zero,
    .sync = rt_xcpu_sync,
    .mark = rt_xcpu_mark,
    .wait_mark = rt_xcpu_wait_mark,
    .mark_seconds = rt_xcpu_mark_seconds,
    .native_stream = rt_xcpu_native_stream,
    .describe = rt_xcpu_describe,
    .cache_bytes = rt_xcpu_cache_bytes,
    .gather_pool = rt_xcpu_gather_pool,
    .sequence_lookup = rt_xcpu_sequence_lookup,
    .gather_segments = rt_xcpu_gather_segments,
    .gather_rows = rt_xcpu_gather_rows,
    .scatter_add_rows = rt_xcpu_scatter_add_rows,
    .sparse_update = rt_xcpu_sparse_update,
    .linear_fwd = rt_xcpu_linear_fwd,
    .linear_bwd = rt_xcpu_linear_bwd,
    .dot_interact_fwd = rt_xcpu_dot_fwd,
    .dot_interact_bwd = rt_xcpu_dot_bwd,
    .dcn_cross_fwd = rt_xcpu_dcn_fwd,
    .dcn_cross_bwd = rt_xcpu_dcn_bwd,
    .hstu_attn_fwd = rt_xcpu_hstu_fwd,
    .attn_unfused_fwd = rt_xcpu_attn_unfused_fwd,
    .attn_unfused_bwd = rt_xcpu_attn_unfused_bwd,
    .relpos_unfused_fwd = rt_xcpu_relpos_unfused_fwd,
    .relpos_unfused_bwd = rt_xcpu_relpos_unfused_bwd,
    .hstu_attn_bwd = rt_xcpu_hstu_bwd,
    .bce_logits = rt_xcpu_bce,
    .sampled_softmax = rt_xcpu_softmax,
    .copy2d = rt_xcpu_copy2d,
    .axpy = rt_xcpu_axpy,
    .convert = rt_xcpu_convert,
    .neg_logits = rt_xcpu_neg_logits,
    .neg_logits_bwd = rt_xcpu_neg_logits_bwd,
    .softmax_xent = rt_xcpu_softmax_xent,
    .adam = rt_xcpu_adam,
    .silu_fwd = rt_xcpu_silu_fwd,
    .silu_bwd = rt_xcpu_silu_bwd,
    .mul_fwd = rt_xcpu_mul_fwd,
    .mul_bwd = rt_xcpu_mul_bwd,
    .layernorm_fwd = rt_xcpu_layernorm_fwd,
    .layernorm_bwd = rt_xcpu_layernorm_bwd,
    .softmax_fwd = rt_xcpu_softmax_fwd,
    .softmax_bwd = rt_xcpu_softmax_bwd,
    .mix_fwd = rt_xcpu_mix_fwd,
    .mix_bwd = rt_xcpu_mix_bwd,
    .relpos_attn_fwd = rt_xcpu_relpos_fwd,
    .relpos_attn_bwd = rt_xcpu_relpos_bwd,
};
