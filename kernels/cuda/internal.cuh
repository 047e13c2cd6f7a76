/* Shared pieces of the CUDA kernels: the context layout, workspace, error flag, and device
 * helpers. Not part of the public interface. */
#ifndef RT_KCUDA_INTERNAL_CUH
#define RT_KCUDA_INTERNAL_CUH

#include "check.h"
#include "kernels_cuda.h"

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <stdint.h>

struct rt_kcuda_ctx {
    cudaStream_t stream;
    cublasHandle_t blas;
    void *ws;
    size_t ws_bytes;
    int *err;           /* device: first rt_kstatus a kernel flagged, 0 when none */
    rt_kcuda_math math; /* how rt_kcuda_gemm calls cuBLAS (rt_kcuda_ctx_set_math) */
};

enum { RT_KCUDA_THREADS = 256 };

/* A workspace of at least bytes, valid until the next call on this context; stream-ordered,
 * so kernels of earlier calls still using the old one are not disturbed. */
rt_kstatus rt_kcuda_workspace(rt_kcuda_ctx *c, size_t bytes, void **ws);

static inline unsigned rt_kcuda_blocks(int64_t work, int per_block)
{
    const int64_t b = (work + per_block - 1) / per_block;
    return (unsigned)(b < 1 ? 1 : (b > 2147483647 ? 2147483647 : b));
}

/* Records the first device-side error. */
static __device__ inline void rt_kcuda_flag(int *err, rt_kstatus s)
{
    atomicCAS(err, 0, (int)s);
}

static __device__ inline float rt_kcuda_load(const void *data, rt_kdtype dt, int64_t i)
{
    if (dt == RT_KDT_FP32) return ((const float *)data)[i];
    if (dt == RT_KDT_FP16) return __half2float(((const __half *)data)[i]);
    return __bfloat162float(((const __nv_bfloat16 *)data)[i]);
}

static __device__ inline void rt_kcuda_store(void *data, rt_kdtype dt, int64_t i, float x)
{
    if (dt == RT_KDT_FP32)
        ((float *)data)[i] = x;
    else if (dt == RT_KDT_FP16)
        ((__half *)data)[i] = __float2half_rn(x);
    else
        ((__nv_bfloat16 *)data)[i] = __float2bfloat16_rn(x);
}

/* Segment of element i: the last s with offsets[s] <= i (offsets has nseg + 1 entries). */
static __device__ inline int64_t rt_kcuda_segment_of(const int64_t *offsets, int64_t nseg,
                                                     int64_t i)
{
    int64_t lo = 0, hi = nseg - 1;
    while (lo < hi) {
        const int64_t mid = (lo + hi + 1) / 2;
        if (offsets[mid] <= i)
            lo = mid;
        else
            hi = mid - 1;
    }
    return lo;
}

/* Bits needed to represent values in [0, n). */
static inline int rt_kcuda_bits(int64_t n)
{
    int b = 1;
    while (b < 63 && (INT64_C(1) << b) < n)
        b++;
    return b;
}

/* CUB wrappers (sort.cu) in CUB's two-call style: with temp == NULL they only store the
 * temporary bytes they need in *temp_bytes. All run on the context's stream. */
/* Stable ascending sort of (key, value) pairs by the low end_bit bits of the key (64: the
 * whole key, as signed). */
rt_kstatus rt_kcuda_sort_pairs(void *temp, size_t *temp_bytes, const int64_t *keys_in,
                               int64_t *keys_out, const int64_t *vals_in, int64_t *vals_out,
                               int64_t n, int end_bit, rt_kcuda_ctx *c);
/* Runs of equal keys in sorted keys: run_keys[r], run_counts[r], *num_runs (device). */
rt_kstatus rt_kcuda_run_length(void *temp, size_t *temp_bytes, const int64_t *keys, int64_t n,
                               int64_t *run_keys, int64_t *run_counts, int64_t *num_runs,
                               rt_kcuda_ctx *c);
rt_kstatus rt_kcuda_exclusive_sum(void *temp, size_t *temp_bytes, const int64_t *in, int64_t *out,
                                  int64_t n, rt_kcuda_ctx *c);

/* Scratch carved from one allocation: each piece is 256-byte aligned. */
typedef struct {
    char *base;
    size_t used;
} rt_kcuda_arena;

static inline void *rt_kcuda_take(rt_kcuda_arena *a, size_t bytes)
{
    void *p = a->base + a->used;
    a->used += (bytes + 255) & ~(size_t)255;
    return p;
}

static inline size_t rt_kcuda_round(size_t bytes)
{
    return (bytes + 255) & ~(size_t)255;
}

/* offsets[nseg] copied to the host: the element count of a jagged batch whose offsets live
 * on the device. Synchronizes the stream. */
rt_kstatus rt_kcuda_jagged_total(const int64_t *offsets, int64_t nseg, int64_t *total,
                                 rt_kcuda_ctx *c);

/* Flags offsets that do not start at 0 or decrease (asynchronous). */
rt_kstatus rt_kcuda_check_offsets(const int64_t *offsets, int64_t nseg, rt_kcuda_ctx *c);

#endif
