/* The CUDA device backend: one GPU per process (local rank modulo the visible GPUs), one
 * non-blocking stream per rt_stream and one kernel context (own cuBLAS handle) per stream, so
 * compute, communication and copies overlap exactly as the op graph's streams allow. Every
 * CUDA call goes through RT_XCUDA_CHECK. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <cuda_runtime_api.h>

#include "device.h"
#include "kernels_cuda.h"

extern const rt_xdev_ops rt_xdev_cuda;

/* On failure: prints the call site, the call and CUDA's message on stderr, and returns -1
 * from the enclosing function. cudaGetLastError clears a non-sticky error (an out-of-memory
 * cudaMalloc) so the next kernel's launch check does not report it again. */
#define RT_XCUDA_CHECK(call)                                                                       \
    do {                                                                                           \
        const cudaError_t rt_xe_ = (call);                                                         \
        if (rt_xe_ != cudaSuccess) {                                                               \
            (void)cudaGetLastError();                                                              \
            fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call,                          \
                    cudaGetErrorString(rt_xe_));                                                   \
            return -1;                                                                             \
        }                                                                                          \
    } while (0)

/* Pointer -> size of every live allocation: open addressing with linear probing and
 * backward-shift deletion (no tombstones), kept at most half full. */
typedef struct {
    void *p; /* NULL: empty slot */
    size_t bytes;
} size_slot;

typedef struct {
    int gpu;
    cudaStream_t stream[RT_STREAM_COUNT];
    rt_kcuda_ctx *ctx[RT_STREAM_COUNT];
    cudaEvent_t *ev;
    int max_marks;
    size_slot *slots;
    size_t cap; /* power of two */
    size_t used;
} cuda_dev;

static size_t slot_of(const cuda_dev *x, const void *p)
{
    /* Allocations are at least 256-byte aligned: drop the constant low bits, then mix. */
    uint64_t h = (uint64_t)(uintptr_t)p >> 8;
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdULL;
    h ^= h >> 33;
    return (size_t)h & (x->cap - 1);
}

static int sizes_grow(cuda_dev *x)
{
    const size_t old_cap = x->cap, cap = old_cap ? old_cap * 2 : 64;
    size_slot *old = x->slots, *slots = calloc(cap, sizeof *slots);
    if (!slots) return -1;
    x->slots = slots;
    x->cap = cap;
    for (size_t i = 0; i < old_cap; i++) {
        if (!old[i].p) continue;
        size_t j = slot_of(x, old[i].p);
        while (slots[j].p)
            j = (j + 1) & (cap - 1);
        slots[j] = old[i];
    }
    free(old);
    return 0;
}

static int sizes_put(cuda_dev *x, void *p, size_t bytes)
{
    if (2 * (x->used + 1) > x->cap && sizes_grow(x)) return -1;
    size_t j = slot_of(x, p);
    while (x->slots[j].p)
        j = (j + 1) & (x->cap - 1);
    x->slots[j] = (size_slot){p, bytes};
    x->used++;
    return 0;
}

/* Removes P; returns 0 and its size, or -1 when P was not allocated here. */
static int sizes_take(cuda_dev *x, const void *p, size_t *bytes)
{
    if (!x->cap) return -1;
    const size_t mask = x->cap - 1;
    size_t j = slot_of(x, p);
    while (x->slots[j].p != p) {
        if (!x->slots[j].p) return -1;
        j = (j + 1) & mask;
    }
    *bytes = x->slots[j].bytes;
    x->slots[j].p = NULL;
    x->used--;
    /* Backward shift: pull later entries of the probe run into the hole when their home slot
     * is not in (hole, k], so lookups never stop at the hole early. */
    for (size_t hole = j, k = (j + 1) & mask; x->slots[k].p; k = (k + 1) & mask) {
        const size_t home = slot_of(x, x->slots[k].p);
        const int stays = hole <= k ? (hole < home && home <= k) : (hole < home || home <= k);
        if (stays) continue;
        x->slots[hole] = x->slots[k];
        x->slots[k].p = NULL;
        hole = k;
    }
    return 0;
}

static cuda_dev *dev_of(const rt_xdev *d)
{
    return (cuda_dev *)d->impl;
}

/* The current stream, or NULL with a message when d->stream is outside the enum (NULL must
 * not reach CUDA: it would mean the legacy default stream). */
static cudaStream_t cur_stream(const rt_xdev *d)
{
    if ((unsigned)d->stream < RT_STREAM_COUNT) return dev_of(d)->stream[d->stream];
    fprintf(stderr, "cuda device: current stream %d is not a stream\n", (int)d->stream);
    return NULL;
}

/* The kernel context of the current stream; NULL (the kernels then return RT_K_EINVAL) for a
 * stream outside the enum. */
static rt_kcuda_ctx *ctx_of(const rt_xdev *d)
{
    if ((unsigned)d->stream >= RT_STREAM_COUNT) return NULL;
    return dev_of(d)->ctx[d->stream];
}

static rt_kcuda_math kcuda_math(rt_xmath m)
{
    switch (m) {
    case RT_XMATH_TF32:
        return RT_KCUDA_MATH_TF32;
    case RT_XMATH_BF16:
        return RT_KCUDA_MATH_BF16;
    case RT_XMATH_FP16:
        return RT_KCUDA_MATH_FP16;
    case RT_XMATH_FP32:
        break;
    }
    return RT_KCUDA_MATH_FP32;
}

/* Releases everything open() may have created, in dependency order: contexts sync and free
 * their stream's work before the streams go. Stops at the first CUDA error (the device is
 * then unusable anyway); host memory is freed by the caller regardless. */
static int teardown(cuda_dev *x, rt_xdev *d)
{
    for (int s = 0; s < RT_STREAM_COUNT; s++) {
        rt_kcuda_ctx_free(x->ctx[s]);
        x->ctx[s] = NULL;
    }
    for (size_t i = 0; i < x->cap; i++)
        if (x->slots[i].p) {
            void *p = x->slots[i].p;
            x->slots[i].p = NULL;
            d->bytes_now -= x->slots[i].bytes;
            RT_XCUDA_CHECK(cudaFree(p));
        }
    x->used = 0;
    for (int i = 0; x->ev && i < x->max_marks; i++)
        if (x->ev[i]) {
            cudaEvent_t e = x->ev[i];
            x->ev[i] = NULL;
            RT_XCUDA_CHECK(cudaEventDestroy(e));
        }
    for (int s = 0; s < RT_STREAM_COUNT; s++)
        if (x->stream[s]) {
            cudaStream_t st = x->stream[s];
            x->stream[s] = NULL;
            RT_XCUDA_CHECK(cudaStreamDestroy(st));
        }
    return 0;
}

static void cuda_close(rt_xdev *d)
{
    cuda_dev *x = dev_of(d);
    if (!x) return;
    if (teardown(x, d))
        fprintf(stderr, "cuda device: GPU %d was not released cleanly (see above)\n", x->gpu);
    free(x->ev);
    free(x->slots);
    free(x);
    d->impl = NULL;
}

static int setup(cuda_dev *x, rt_xmath math)
{
    RT_XCUDA_CHECK(cudaSetDevice(x->gpu));
    for (int s = 0; s < RT_STREAM_COUNT; s++) {
        RT_XCUDA_CHECK(cudaStreamCreateWithFlags(&x->stream[s], cudaStreamNonBlocking));
        const rt_kstatus st = rt_kcuda_ctx_create(x->stream[s], &x->ctx[s]);
        if (st == RT_K_OK) {
            const rt_kstatus ms = rt_kcuda_ctx_set_math(x->ctx[s], kcuda_math(math));
            if (ms == RT_K_OK) continue;
            fprintf(stderr, "cuda device: setting the GEMM math mode: %s\n", rt_kstatus_str(ms));
            return -1;
        }
        fprintf(stderr, "cuda device: kernel context for stream %d: %s\n", s, rt_kstatus_str(st));
        return -1;
    }
    for (int i = 0; i < x->max_marks; i++)
        RT_XCUDA_CHECK(cudaEventCreateWithFlags(&x->ev[i], cudaEventDefault));
    return 0;
}

static int cuda_open(rt_xdev *d, int local_rank, int max_marks, rt_xmath math, FILE *err)
{
    d->impl = NULL;
    int count = 0;
    const cudaError_t ce = cudaGetDeviceCount(&count);
    if (ce != cudaSuccess) {
        (void)cudaGetLastError();
        fprintf(err, "cuda device: no usable GPU: cudaGetDeviceCount: %s\n",
                cudaGetErrorString(ce));
        return -1;
    }
    if (count <= 0) {
        const char *vis = getenv("CUDA_VISIBLE_DEVICES");
        fprintf(err, "cuda device: no usable GPU: the driver sees 0 devices%s%s%s\n",
                vis ? " (CUDA_VISIBLE_DEVICES=" : "", vis ? vis : "", vis ? ")" : "");
        return -1;
    }
    if (local_rank < 0) {
        fprintf(err, "cuda device: bad local rank %d\n", local_rank);
        return -1;
    }
    if (max_marks < 1) max_marks = 1; /* mark 0 is every mark's origin */
    cuda_dev *x = calloc(1, sizeof *x);
    if (!x || !(x->ev = calloc((size_t)max_marks, sizeof *x->ev))) {
        free(x);
        fprintf(err, "cuda device: out of host memory\n");
        return -1;
    }
    x->gpu = local_rank % count;
    x->max_marks = max_marks;
    d->ops = &rt_xdev_cuda;
    d->impl = x;
    d->stream = RT_STREAM_COMPUTE;
    d->bytes_now = d->bytes_peak = 0;
    d->local_rank = local_rank;
    if (setup(x, math)) {
        fprintf(err, "cuda device: setting up GPU %d of %d for local rank %d failed (see above)\n",
                x->gpu, count, local_rank);
        cuda_close(d);
        return -1;
    }
    return 0;
}

static int malloc_checked(void **p, size_t bytes)
{
    RT_XCUDA_CHECK(cudaMalloc(p, bytes));
    return 0;
}

static int free_checked(void *p)
{
    RT_XCUDA_CHECK(cudaFree(p));
    return 0;
}

static void *cuda_alloc(rt_xdev *d, size_t bytes)
{
    cuda_dev *x = dev_of(d);
    void *p = NULL;
    /* One byte at least: a successful allocation is never NULL, so NULL only means failure. */
    if (malloc_checked(&p, bytes ? bytes : 1)) return NULL;
    if (sizes_put(x, p, bytes)) {
        (void)free_checked(p); /* host out of memory: give the GPU memory back, report NULL */
        return NULL;
    }
    d->bytes_now += bytes;
    if (d->bytes_now > d->bytes_peak) d->bytes_peak = d->bytes_now;
    return p;
}

static void cuda_release(rt_xdev *d, void *p)
{
    if (!p) return;
    size_t bytes = 0;
    if (sizes_take(dev_of(d), p, &bytes)) {
        fprintf(stderr, "cuda device: release of %p, which this device did not allocate\n", p);
        return;
    }
    d->bytes_now -= bytes;
    /* cudaFree waits for the device, so work still using P finishes first. */
    (void)free_checked(p);
}

static int cuda_copy(rt_xdev *d, void *dst, const void *src, size_t bytes, rt_xcopy_dir dir)
{
    if (!bytes) return 0;
    if (dir != RT_XCOPY_H2D && dir != RT_XCOPY_D2H && dir != RT_XCOPY_D2D) return -1;
    const enum cudaMemcpyKind kind = dir == RT_XCOPY_H2D   ? cudaMemcpyHostToDevice
                                     : dir == RT_XCOPY_D2H ? cudaMemcpyDeviceToHost
                                                           : cudaMemcpyDeviceToDevice;
    cudaStream_t st = cur_stream(d);
    if (!st) return -1;
    RT_XCUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, kind, st));
    /* The host reads DST right after return; into pinned memory the copy would not wait. */
    if (dir == RT_XCOPY_D2H) RT_XCUDA_CHECK(cudaStreamSynchronize(st));
    return 0;
}

static int cuda_zero(rt_xdev *d, void *p, size_t bytes)
{
    cudaStream_t st = cur_stream(d);
    if (!st) return -1;
    if (!bytes) return 0;
    RT_XCUDA_CHECK(cudaMemsetAsync(p, 0, bytes, st));
    return 0;
}

static int cuda_copy2d(rt_xdev *d, void *dst, size_t dpitch, const void *src, size_t spitch,
                       size_t width, size_t height)
{
    cudaStream_t st = cur_stream(d);
    if (!st) return -1;
    if (!width || !height) return 0;
    RT_XCUDA_CHECK(
        cudaMemcpy2DAsync(dst, dpitch, src, spitch, width, height, cudaMemcpyDeviceToDevice, st));
    return 0;
}

static int cuda_sync(rt_xdev *d)
{
    cuda_dev *x = dev_of(d);
    for (int s = 0; s < RT_STREAM_COUNT; s++)
        RT_XCUDA_CHECK(cudaStreamSynchronize(x->stream[s]));
    int rc = 0;
    for (int s = 0; s < RT_STREAM_COUNT; s++) {
        const rt_kstatus st = rt_kcuda_ctx_sync(x->ctx[s]);
        if (st == RT_K_OK) continue;
        fprintf(stderr, "cuda device: a kernel on stream %s failed: %s\n", rt_stream_names[s],
                rt_kstatus_str(st));
        rc = -1;
    }
    return rc;
}

static int mark_ok(const rt_xdev *d, int slot)
{
    if (slot >= 0 && slot < dev_of(d)->max_marks) return 1;
    fprintf(stderr, "cuda device: timing mark %d outside 0..%d\n", slot, dev_of(d)->max_marks - 1);
    return 0;
}

static int cuda_mark(rt_xdev *d, int slot)
{
    cudaStream_t st = cur_stream(d);
    if (!st || !mark_ok(d, slot)) return -1;
    RT_XCUDA_CHECK(cudaEventRecord(dev_of(d)->ev[slot], st));
    return 0;
}

static int cuda_wait_mark(rt_xdev *d, int slot)
{
    cudaStream_t st = cur_stream(d);
    if (!st || !mark_ok(d, slot)) return -1;
    RT_XCUDA_CHECK(cudaStreamWaitEvent(st, dev_of(d)->ev[slot], 0));
    return 0;
}

static int elapsed_ms(rt_xdev *d, int slot, float *ms)
{
    RT_XCUDA_CHECK(cudaEventElapsedTime(ms, dev_of(d)->ev[0], dev_of(d)->ev[slot]));
    return 0;
}

/* -1 on error (a mark never recorded, or not yet complete: call sync first). */
static double cuda_mark_seconds(rt_xdev *d, int slot)
{
    float ms = 0;
    if (!mark_ok(d, slot) || elapsed_ms(d, slot, &ms)) return -1.0;
    return (double)ms / 1e3;
}

static void *cuda_native_stream(rt_xdev *d, rt_stream s)
{
    if ((unsigned)s >= RT_STREAM_COUNT) return NULL;
    return (void *)dev_of(d)->stream[s];
}

/* Kernels: the rt_kcuda_* twin on the current stream's context. */

static rt_kstatus k_gather_pool(rt_xdev *d, const rt_ktable *t, const int64_t *ids,
                                const int64_t *offsets, int64_t nbags, rt_kpool pool, float *out)
{
    return rt_kcuda_gather_pool(t, ids, offsets, nbags, pool, out, ctx_of(d));
}

static rt_kstatus k_gather_segments(rt_xdev *d, const rt_kgather_seg *segs, int64_t nseg)
{
    return rt_kcuda_gather_segments(segs, nseg, ctx_of(d));
}

static rt_kstatus k_sequence_lookup(rt_xdev *d, const rt_ktable *t, const int64_t *ids, int64_t n,
                                    float *out)
{
    return rt_kcuda_sequence_lookup(t, ids, n, out, ctx_of(d));
}

static rt_kstatus k_gather_rows(rt_xdev *d, const float *src, int64_t src_rows, int64_t dim,
                                const int64_t *idx, int64_t n, float *dst)
{
    return rt_kcuda_gather_rows(src, src_rows, dim, idx, n, dst, ctx_of(d));
}

static rt_kstatus k_scatter_add_rows(rt_xdev *d, const float *src, int64_t n, int64_t dim,
                                     const int64_t *idx, int64_t dst_rows, float *dst)
{
    return rt_kcuda_scatter_add_rows(src, n, dim, idx, dst_rows, dst, ctx_of(d));
}

static rt_kstatus k_sparse_update(rt_xdev *d, rt_ktable *t, rt_kopt_state st, const rt_kopt *opt,
                                  const int64_t *ids, const int64_t *offsets, int64_t nbags,
                                  rt_kpool pool, const float *grad_out)
{
    return rt_kcuda_sparse_update(t, st, opt, ids, offsets, nbags, pool, grad_out, ctx_of(d));
}

static rt_kstatus k_linear_fwd(rt_xdev *d, const float *x, int64_t batch, int64_t in, int64_t out,
                               const float *w, const float *bias, rt_kact act, float *y)
{
    return rt_kcuda_linear_fwd(x, batch, in, out, w, bias, act, y, ctx_of(d));
}

static rt_kstatus k_linear_bwd(rt_xdev *d, const float *x, const float *y, const float *dy,
                               int64_t batch, int64_t in, int64_t out, const float *w, rt_kact act,
                               float *dx, float *dw, float *db)
{
    return rt_kcuda_linear_bwd(x, y, dy, batch, in, out, w, act, dx, dw, db, ctx_of(d));
}

static rt_kstatus k_dot_interact_fwd(rt_xdev *d, const float *t, int64_t batch, int64_t nf,
                                     int64_t dd, float *out)
{
    return rt_kcuda_dot_interact_fwd(t, batch, nf, dd, out, ctx_of(d));
}

static rt_kstatus k_dot_interact_bwd(rt_xdev *d, const float *t, const float *dout, int64_t batch,
                                     int64_t nf, int64_t dd, float *dt)
{
    return rt_kcuda_dot_interact_bwd(t, dout, batch, nf, dd, dt, ctx_of(d));
}

static rt_kstatus k_dcn_cross_fwd(rt_xdev *d, const float *x0, const float *xl, int64_t batch,
                                  int64_t dd, int64_t r, const float *u, const float *v,
                                  const float *bias, float *p, float *q, float *y)
{
    return rt_kcuda_dcn_cross_fwd(x0, xl, batch, dd, r, u, v, bias, p, q, y, ctx_of(d));
}

static rt_kstatus k_dcn_cross_bwd(rt_xdev *d, const float *x0, const float *xl, const float *p,
                                  const float *q, const float *dy, int64_t batch, int64_t dd,
                                  int64_t r, const float *u, const float *v, float *dx0, float *dxl,
                                  float *du, float *dv, float *dbias)
{
    return rt_kcuda_dcn_cross_bwd(x0, xl, p, q, dy, batch, dd, r, u, v, dx0, dxl, du, dv, dbias,
                                  ctx_of(d));
}

static rt_kstatus k_hstu_attn_fwd(rt_xdev *d, const float *q, const float *k, const float *v,
                                  const int64_t *offsets, int64_t nseq, const rt_khstu_cfg *c,
                                  const float *rab, float *out)
{
    return rt_kcuda_hstu_attn_fwd(q, k, v, offsets, nseq, c, rab, out, ctx_of(d));
}

static rt_kstatus k_hstu_attn_bwd(rt_xdev *d, const float *q, const float *k, const float *v,
                                  const int64_t *offsets, int64_t nseq, const rt_khstu_cfg *c,
                                  const float *rab, const float *dout, float *dq, float *dk,
                                  float *dv, float *drab)
{
    return rt_kcuda_hstu_attn_bwd(q, k, v, offsets, nseq, c, rab, dout, dq, dk, dv, drab,
                                  ctx_of(d));
}

static rt_kstatus k_bce_logits(rt_xdev *d, const float *logits, const float *labels, int64_t n,
                               float *loss, float *dlogits)
{
    return rt_kcuda_bce_logits(logits, labels, n, loss, dlogits, ctx_of(d));
}

static rt_kstatus k_sampled_softmax(rt_xdev *d, const float *q, const float *pos, const float *neg,
                                    const float *logq, int64_t batch, int64_t nneg, int64_t dd,
                                    float temperature, float *loss, float *dq, float *dpos,
                                    float *dneg)
{
    return rt_kcuda_sampled_softmax(q, pos, neg, logq, batch, nneg, dd, temperature, loss, dq, dpos,
                                    dneg, ctx_of(d));
}

static rt_kstatus k_neg_logits(rt_xdev *d, const float *q, int64_t nq, int64_t dd, const float *neg,
                               int64_t first, int64_t rows, int64_t nneg, int64_t k, float *logits,
                               int64_t ld, int64_t col)
{
    return rt_kcuda_neg_logits(q, nq, dd, neg, first, rows, nneg, k, logits, ld, col, ctx_of(d));
}

static rt_kstatus k_neg_logits_bwd(rt_xdev *d, const float *q, int64_t nq, int64_t dd,
                                   const float *neg, int64_t first, int64_t rows, int64_t nneg,
                                   int64_t k, const float *dlogits, int64_t ld, int64_t col,
                                   float *dq, float *dneg)
{
    return rt_kcuda_neg_logits_bwd(q, nq, dd, neg, first, rows, nneg, k, dlogits, ld, col, dq, dneg,
                                   ctx_of(d));
}

static rt_kstatus k_softmax_xent(rt_xdev *d, float *logits, int64_t rows, int64_t cols, float scale,
                                 float *loss)
{
    return rt_kcuda_softmax_xent(logits, rows, cols, scale, loss, ctx_of(d));
}

static rt_kstatus k_convert(rt_xdev *d, const void *in, rt_kdtype from, int64_t n, rt_kdtype to,
                            void *out)
{
    return rt_kcuda_convert(in, from, n, to, out, ctx_of(d));
}

static rt_kstatus k_axpy(rt_xdev *d, int64_t n, float a, const float *x, float *y)
{
    return rt_kcuda_axpy(n, a, x, y, ctx_of(d));
}

static rt_kstatus k_adam(rt_xdev *d, int64_t n, const rt_kadam *opt, float *w, const float *g,
                         float *m, float *v)
{
    return rt_kcuda_adam(n, opt, w, g, m, v, ctx_of(d));
}

static rt_kstatus k_silu_fwd(rt_xdev *d, const float *x, int64_t n, float *y)
{
    return rt_kcuda_silu_fwd(x, n, y, ctx_of(d));
}

static rt_kstatus k_silu_bwd(rt_xdev *d, const float *x, const float *dy, int64_t n, float *dx)
{
    return rt_kcuda_silu_bwd(x, dy, n, dx, ctx_of(d));
}

static rt_kstatus k_mul_fwd(rt_xdev *d, const float *a, const float *b, int64_t n, float *y)
{
    return rt_kcuda_mul_fwd(a, b, n, y, ctx_of(d));
}

static rt_kstatus k_mul_bwd(rt_xdev *d, const float *a, const float *b, const float *dy, int64_t n,
                            float *da, float *db)
{
    return rt_kcuda_mul_bwd(a, b, dy, n, da, db, ctx_of(d));
}

static rt_kstatus k_layernorm_fwd(rt_xdev *d, const float *x, int64_t rows, int64_t dim, float eps,
                                  float *y, float *mean, float *rstd)
{
    return rt_kcuda_layernorm_fwd(x, rows, dim, eps, y, mean, rstd, ctx_of(d));
}

static rt_kstatus k_layernorm_bwd(rt_xdev *d, const float *x, const float *dy, int64_t rows,
                                  int64_t dim, const float *mean, const float *rstd, float *dx)
{
    return rt_kcuda_layernorm_bwd(x, dy, rows, dim, mean, rstd, dx, ctx_of(d));
}

static rt_kstatus k_softmax_fwd(rt_xdev *d, const float *x, int64_t rows, int64_t dim, float *y)
{
    return rt_kcuda_softmax_fwd(x, rows, dim, y, ctx_of(d));
}

static rt_kstatus k_softmax_bwd(rt_xdev *d, const float *y, const float *dy, int64_t rows,
                                int64_t dim, float *dx)
{
    return rt_kcuda_softmax_bwd(y, dy, rows, dim, dx, ctx_of(d));
}

static rt_kstatus k_mix_fwd(rt_xdev *d, const float *x, const float *g, int64_t rows, int64_t nexp,
                            int64_t dim, float *y)
{
    return rt_kcuda_mix_fwd(x, g, rows, nexp, dim, y, ctx_of(d));
}

static rt_kstatus k_mix_bwd(rt_xdev *d, const float *x, const float *g, const float *dy,
                            int64_t rows, int64_t nexp, int64_t dim, float *dx, float *dg)
{
    return rt_kcuda_mix_bwd(x, g, dy, rows, nexp, dim, dx, dg, ctx_of(d));
}

static rt_kstatus k_relpos_attn_fwd(rt_xdev *d, const float *v, const int64_t *offsets,
                                    int64_t nseq, const rt_khstu_cfg *c, const float *rab,
                                    float *out)
{
    return rt_kcuda_relpos_attn_fwd(v, offsets, nseq, c, rab, out, ctx_of(d));
}

static rt_kstatus k_relpos_attn_bwd(rt_xdev *d, const float *v, const int64_t *offsets,
                                    int64_t nseq, const rt_khstu_cfg *c, const float *rab,
                                    const float *dout, float *dv, float *drab)
{
    return rt_kcuda_relpos_attn_bwd(v, offsets, nseq, c, rab, dout, dv, drab, ctx_of(d));
}

static void cuda_describe(rt_xdev *d, char *name, size_t name_size, char *libs, size_t libs_size)
{
    cuda_dev *x = d->impl;
    struct cudaDeviceProp p;
    if (!x || cudaGetDeviceProperties(&p, x->gpu) != cudaSuccess)
        snprintf(name, name_size, "cuda device (unknown)");
    else
        snprintf(name, name_size, "%s (sm_%d%d, %.1f GiB)", p.name, p.major, p.minor,
                 (double)p.totalGlobalMem / (1 << 30));
    int rt = 0, drv = 0;
    if (cudaRuntimeGetVersion(&rt) != cudaSuccess) rt = 0;
    if (cudaDriverGetVersion(&drv) != cudaSuccess) drv = 0;
    snprintf(libs, libs_size, "CUDA runtime %d.%d, driver %d.%d, cuBLAS", rt / 1000, rt % 1000 / 10,
             drv / 1000, drv % 1000 / 10);
}

static int cuda_l2_bytes(const cuda_dev *x, int *l2)
{
    RT_XCUDA_CHECK(cudaDeviceGetAttribute(l2, cudaDevAttrL2CacheSize, x->gpu));
    return 0;
}

static size_t cuda_cache_bytes(rt_xdev *d)
{
    const cuda_dev *x = d->impl;
    int l2 = 0;
    if (!x || cuda_l2_bytes(x, &l2) || l2 <= 0) return 0;
    return (size_t)l2;
}

const rt_xdev_ops rt_xdev_cuda = {
    .name = "cuda",
    .host_memory = 0,
    .open = cuda_open,
    .close = cuda_close,
    .alloc = cuda_alloc,
    .release = cuda_release,
    .copy = cuda_copy,
    .zero = cuda_zero,
    .copy2d = cuda_copy2d,
    .sync = cuda_sync,
    .mark = cuda_mark,
    .wait_mark = cuda_wait_mark,
    .mark_seconds = cuda_mark_seconds,
    .native_stream = cuda_native_stream,
    .describe = cuda_describe,
    .cache_bytes = cuda_cache_bytes,
    .gather_pool = k_gather_pool,
    .sequence_lookup = k_sequence_lookup,
    .gather_segments = k_gather_segments,
    .gather_rows = k_gather_rows,
    .scatter_add_rows = k_scatter_add_rows,
    .sparse_update = k_sparse_update,
    .linear_fwd = k_linear_fwd,
    .linear_bwd = k_linear_bwd,
    .dot_interact_fwd = k_dot_interact_fwd,
    .dot_interact_bwd = k_dot_interact_bwd,
    .dcn_cross_fwd = k_dcn_cross_fwd,
    .dcn_cross_bwd = k_dcn_cross_bwd,
    .hstu_attn_fwd = k_hstu_attn_fwd,
    .hstu_attn_bwd = k_hstu_attn_bwd,
    .bce_logits = k_bce_logits,
    .sampled_softmax = k_sampled_softmax,
    .axpy = k_axpy,
    .convert = k_convert,
    .neg_logits = k_neg_logits,
    .neg_logits_bwd = k_neg_logits_bwd,
    .softmax_xent = k_softmax_xent,
    .adam = k_adam,
    .silu_fwd = k_silu_fwd,
    .silu_bwd = k_silu_bwd,
    .mul_fwd = k_mul_fwd,
    .mul_bwd = k_mul_bwd,
    .layernorm_fwd = k_layernorm_fwd,
    .layernorm_bwd = k_layernorm_bwd,
    .softmax_fwd = k_softmax_fwd,
    .softmax_bwd = k_softmax_bwd,
    .mix_fwd = k_mix_fwd,
    .mix_bwd = k_mix_bwd,
    .relpos_attn_fwd = k_relpos_attn_fwd,
    .relpos_attn_bwd = k_relpos_attn_bwd,
};
