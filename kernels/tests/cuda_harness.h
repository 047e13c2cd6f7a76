/* Helpers for the GPU-vs-CPU tests: skip (exit 77) without a GPU, device buffers from host
 * data, poisoned outputs (all bits set: NaN for floats, -1 for integers) so elements a kernel
 * forgot to write are caught, and float-vs-float comparison. */
#ifndef RT_KTEST_CUDA_HARNESS_H
#define RT_KTEST_CUDA_HARNESS_H

#include "harness.h"
#include "kernels_cuda.h"

#include <cuda_runtime_api.h>

/* Exits 77 (skipped) when no GPU is usable; otherwise returns a context on stream 0. */
static inline rt_kcuda_ctx *rt_tgpu_or_skip(const char *name)
{
    rt_kcuda_ctx *c = NULL;
    if (rt_kcuda_device_count() == 0 || rt_kcuda_ctx_create(0, &c) != RT_K_OK) {
        printf("%s: no usable GPU, skipped\n", name);
        exit(77);
    }
    return c;
}

static inline void *rt_tdev(const void *host, size_t bytes)
{
    void *d = NULL;
    if (cudaMalloc(&d, bytes ? bytes : 1) != cudaSuccess ||
        (host && bytes && cudaMemcpy(d, host, bytes, cudaMemcpyHostToDevice) != cudaSuccess)) {
        fprintf(stderr, "test: device allocation of %zu bytes failed\n", bytes);
        exit(2);
    }
    return d;
}

static inline void *rt_tpoisoned(size_t bytes)
{
    void *d = rt_tdev(NULL, bytes);
    if (bytes && cudaMemset(d, 0xff, bytes) != cudaSuccess) exit(2);
    return d;
}

/* Copies a device buffer back into fresh host memory (synchronous). */
static inline void *rt_thost(const void *dev, size_t bytes)
{
    void *h = rt_talloc(bytes);
    if (bytes && cudaMemcpy(h, dev, bytes, cudaMemcpyDeviceToHost) != cudaSuccess) {
        fprintf(stderr, "test: device copy failed\n");
        exit(2);
    }
    return h;
}

/* Compares the device floats against CPU results; NaN (poison) never matches. */
static inline int rt_tclose_dev_at(rt_tctx *t, const char *label, const float *dev,
                                   const float *cpu, int64_t n, double rtol, double atol,
                                   const char *file, int line)
{
    float *got = (float *)rt_thost(dev, (size_t)n * sizeof(float));
    double *want = (double *)rt_talloc((size_t)n * sizeof(double));
    for (int64_t i = 0; i < n; i++)
        want[i] = cpu[i];
    const int ok = rt_tclose_at(t, label, got, want, n, rtol, atol, file, line);
    free(got);
    free(want);
    return ok;
}

#define RT_TCLOSE_DEV(t, label, dev, cpu, n, rtol, atol)                                           \
    rt_tclose_dev_at((t), (label), (dev), (cpu), (n), (rtol), (atol), __FILE__, __LINE__)

/* Device int64 buffer equal to the host one. */
static inline int rt_tsame_i64(const int64_t *dev, const int64_t *host, int64_t n)
{
    int64_t *got = (int64_t *)rt_thost(dev, (size_t)n * sizeof(int64_t));
    int same = 1;
    for (int64_t i = 0; i < n; i++)
        same &= got[i] == host[i];
    free(got);
    return same;
}

#endif
