/* Device backend vtable of rectwin-exec (in the style of nccl-tests' struct testColl): one
 * table of function pointers per backend, one file each (device_cpu.c, device_cuda.c), one
 * entry in device_registry.c. Every buffer an executor touches is a device buffer from
 * rt_xdev_alloc; the CPU backend's device memory is host memory.
 *
 * Kernels run on the device's current stream (rt_xdev_on), asynchronously on CUDA and at once
 * on CPU. They take the same arguments as their kernels/kernels.h twins. A kernel error is
 * returned by the call where the backend can see it, otherwise by the next rt_xdev_sync. */
#ifndef RT_XDEVICE_H
#define RT_XDEVICE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "graph.h"
#include "kernels.h"

typedef enum { RT_XCOPY_H2D, RT_XCOPY_D2H, RT_XCOPY_D2D } rt_xcopy_dir;

/* Dense matrix math precision of the GEMMs (the plan's dense precision). */
typedef enum { RT_XMATH_FP32, RT_XMATH_TF32, RT_XMATH_BF16, RT_XMATH_FP16 } rt_xmath;

typedef struct rt_xdev rt_xdev;

typedef struct rt_xdev_ops {
    const char *name;
    int host_memory; /* 1: device pointers are host pointers (MPI can use them directly) */
    int fp32_only;   /* 1: every rt_xmath runs the fp32 kernels (open ignores the math mode) */
    /* Opens the device of this process (LOCAL_RANK picks the GPU) with MAX_MARKS timing marks.
     * Returns 0, or -1 with the reason on ERR (no GPU, driver missing, ...). */
    int (*open)(rt_xdev *d, int local_rank, int max_marks, rt_xmath math, FILE *err);
    void (*close)(rt_xdev *d);
    void *(*alloc)(rt_xdev *d, size_t bytes); /* NULL when out of memory */
    void (*release)(rt_xdev *d, void *p);
    /* Copies on the current stream. D2H into pageable host memory completes before return. */
    int (*copy)(rt_xdev *d, void *dst, const void *src, size_t bytes, rt_xcopy_dir dir);
    int (*zero)(rt_xdev *d, void *p, size_t bytes);
    /* D2D copy of HEIGHT rows of WIDTH bytes between pitched layouts (cudaMemcpy2D). */
    int (*copy2d)(rt_xdev *d, void *dst, size_t dpitch, const void *src, size_t spitch,
                  size_t width, size_t height);
    /* Waits for everything queued on every stream; returns -1 on a device or kernel error. */
    int (*sync)(rt_xdev *d);
    /* Timing: mark SLOT records "now" on the current stream; after sync, mark_seconds(SLOT)
     * is its time in seconds since mark 0. wait_mark makes the current stream wait for SLOT. */
    int (*mark)(rt_xdev *d, int slot);
    int (*wait_mark)(rt_xdev *d, int slot);
    double (*mark_seconds)(rt_xdev *d, int slot);
    /* The native stream handle (cudaStream_t) of stream S, NULL on CPU. */
    void *(*native_stream)(rt_xdev *d, rt_stream s);
    /* What an opened device is, for calibration records: its name into NAME (CPU model and
     * cores, GPU name) and the libraries its kernels use into LIBS (GEMM library, CUDA
     * runtime and driver versions). */
    void (*describe)(rt_xdev *d, char *name, size_t name_size, char *libs, size_t libs_size);
    /* Bytes of the opened device's last-level cache (a CPU's L3 or L2, a GPU's L2), 0 when the
     * system does not say: calibration sizes its cache-cold buffers by it. */
    size_t (*cache_bytes)(rt_xdev *d);

    /* Kernels (kernels/kernels.h) on device pointers. */
    rt_kstatus (*gather_pool)(rt_xdev *d, const rt_ktable *t, const int64_t *ids,
                              const int64_t *offsets, int64_t nbags, rt_kpool pool, float *out);
    rt_kstatus (*sequence_lookup)(rt_xdev *d, const rt_ktable *t, const int64_t *ids, int64_t n,
                                  float *out);
    rt_kstatus (*gather_segments)(rt_xdev *d, const rt_kgather_seg *segs, int64_t nseg);
    rt_kstatus (*gather_rows)(rt_xdev *d, const float *src, int64_t src_rows, int64_t dim,
                              const int64_t *idx, int64_t n, float *dst);
    rt_kstatus (*scatter_add_rows)(rt_xdev *d, const float *src, int64_t n, int64_t dim,
                                   const int64_t *idx, int64_t dst_rows, float *dst);
    rt_kstatus (*sparse_update)(rt_xdev *d, rt_ktable *t, rt_kopt_state st, const rt_kopt *opt,
                                const int64_t *ids, const int64_t *offsets, int64_t nbags,
                                rt_kpool pool, const float *grad_out);
    rt_kstatus (*linear_fwd)(rt_xdev *d, const float *x, int64_t batch, int64_t in, int64_t out,
                             const float *w, const float *bias, rt_kact act, float *y);
    rt_kstatus (*linear_bwd)(rt_xdev *d, const float *x, const float *y, const float *dy,
                             int64_t batch, int64_t in, int64_t out, const float *w, rt_kact act,
                             float *dx, float *dw, float *db);
    rt_kstatus (*dot_interact_fwd)(rt_xdev *d, const float *t, int64_t batch, int64_t nf,
                                   int64_t dd, float *out);
    rt_kstatus (*dot_interact_bwd)(rt_xdev *d, const float *t, const float *dout, int64_t batch,
                                   int64_t nf, int64_t dd, float *dt);
    rt_kstatus (*dcn_cross_fwd)(rt_xdev *d, const float *x0, const float *xl, int64_t batch,
                                int64_t dd, int64_t r, const float *u, const float *v,
                                const float *bias, float *p, float *q, float *y);
    rt_kstatus (*dcn_cross_bwd)(rt_xdev *d, const float *x0, const float *xl, const float *p,
                                const float *q, const float *dy, int64_t batch, int64_t dd,
                                int64_t r, const float *u, const float *v, float *dx0, float *dxl,
                                float *du, float *dv, float *dbias);
    rt_kstatus (*hstu_attn_fwd)(rt_xdev *d, const float *q, const float *k, const float *v,
                                const int64_t *offsets, int64_t nseq, const rt_khstu_cfg *c,
                                const float *rab, float *out);
    rt_kstatus (*hstu_attn_bwd)(rt_xdev *d, const float *q, const float *k, const float *v,
                                const int64_t *offsets, int64_t nseq, const rt_khstu_cfg *c,
                                const float *rab, const float *dout, float *dq, float *dk,
                                float *dv, float *drab);
    /* plan.attention unfused: the same attention as hstu_attn_* through separate kernels over
     * the materialized causal scores. The forward writes S (scores) and P (SiLU output), each
     * rt_kcpu_attn_pairs floats, which the backward reads; DS is backward scratch of that size.
     * NULL on a device without the separate kernels (exec refuses the plan there). */
    rt_kstatus (*attn_unfused_fwd)(rt_xdev *d, const float *q, const float *k, const float *v,
                                   const int64_t *offsets, int64_t nseq, const rt_khstu_cfg *c,
                                   const float *rab, float *s, float *p, float *out);
    rt_kstatus (*attn_unfused_bwd)(rt_xdev *d, const float *q, const float *k, const float *v,
                                   const int64_t *offsets, int64_t nseq, const rt_khstu_cfg *c,
                                   const float *s, const float *p, const float *dout, float *ds,
                                   float *dq, float *dk, float *dv, float *drab);
    /* FuXi's position and time channels unfused: the forward writes P (the SiLU of the bias
     * per causal pair, rt_kcpu_attn_pairs floats), the backward reads it with DA as scratch. */
    rt_kstatus (*relpos_unfused_fwd)(rt_xdev *d, const float *v, const int64_t *offsets,
                                     int64_t nseq, const rt_khstu_cfg *c, const float *rab,
                                     float *p, float *out);
    rt_kstatus (*relpos_unfused_bwd)(rt_xdev *d, const float *v, const int64_t *offsets,
                                     int64_t nseq, const rt_khstu_cfg *c, const float *rab,
                                     const float *p, const float *dout, float *da, float *dv,
                                     float *drab);
    /* loss is a device float */
    rt_kstatus (*bce_logits)(rt_xdev *d, const float *logits, const float *labels, int64_t n,
                             float *loss, float *dlogits);
    rt_kstatus (*sampled_softmax)(rt_xdev *d, const float *q, const float *pos, const float *neg,
                                  const float *logq, int64_t batch, int64_t nneg, int64_t dd,
                                  float temperature, float *loss, float *dq, float *dpos,
                                  float *dneg);
    /* Per-query negatives (kernels.h rt_kcpu_neg_logits): NULL where the backend has none,
     * and exec then refuses plan.negatives. */
    rt_kstatus (*neg_logits)(rt_xdev *d, const float *q, int64_t nq, int64_t dd, const float *neg,
                             int64_t first, int64_t rows, int64_t nneg, int64_t k, float *logits,
                             int64_t ld, int64_t col);
    rt_kstatus (*neg_logits_bwd)(rt_xdev *d, const float *q, int64_t nq, int64_t dd,
                                 const float *neg, int64_t first, int64_t rows, int64_t nneg,
                                 int64_t k, const float *dlogits, int64_t ld, int64_t col,
                                 float *dq, float *dneg);
    rt_kstatus (*softmax_xent)(rt_xdev *d, float *logits, int64_t rows, int64_t cols, float scale,
                               float *loss);
    /* y += a * x (fp32), and the dense Adam step (kernels.h rt_kcpu_adam). */
    rt_kstatus (*axpy)(rt_xdev *d, int64_t n, float a, const float *x, float *y);
    /* Storage-type conversion (kernels.h rt_kcpu_convert): messages in the comm precision. */
    rt_kstatus (*convert)(rt_xdev *d, const void *in, rt_kdtype from, int64_t n, rt_kdtype to,
                          void *out);
    rt_kstatus (*adam)(rt_xdev *d, int64_t n, const rt_kadam *opt, float *w, const float *g,
                       float *m, float *v);
    /* The generative-recommender blocks (kernels.h: HSTU, FuXi and MMoE pieces). */
    rt_kstatus (*silu_fwd)(rt_xdev *d, const float *x, int64_t n, float *y);
    rt_kstatus (*silu_bwd)(rt_xdev *d, const float *x, const float *dy, int64_t n, float *dx);
    rt_kstatus (*mul_fwd)(rt_xdev *d, const float *a, const float *b, int64_t n, float *y);
    rt_kstatus (*mul_bwd)(rt_xdev *d, const float *a, const float *b, const float *dy, int64_t n,
                          float *da, float *db);
    rt_kstatus (*layernorm_fwd)(rt_xdev *d, const float *x, int64_t rows, int64_t dim, float eps,
                                float *y, float *mean, float *rstd);
    rt_kstatus (*layernorm_bwd)(rt_xdev *d, const float *x, const float *dy, int64_t rows,
                                int64_t dim, const float *mean, const float *rstd, float *dx);
    rt_kstatus (*softmax_fwd)(rt_xdev *d, const float *x, int64_t rows, int64_t dim, float *y);
    rt_kstatus (*softmax_bwd)(rt_xdev *d, const float *y, const float *dy, int64_t rows,
                              int64_t dim, float *dx);
    rt_kstatus (*mix_fwd)(rt_xdev *d, const float *x, const float *g, int64_t rows, int64_t nexp,
                          int64_t dim, float *y);
    rt_kstatus (*mix_bwd)(rt_xdev *d, const float *x, const float *g, const float *dy, int64_t rows,
                          int64_t nexp, int64_t dim, float *dx, float *dg);
    rt_kstatus (*relpos_attn_fwd)(rt_xdev *d, const float *v, const int64_t *offsets, int64_t nseq,
                                  const rt_khstu_cfg *c, const float *rab, float *out);
    rt_kstatus (*relpos_attn_bwd)(rt_xdev *d, const float *v, const int64_t *offsets, int64_t nseq,
                                  const rt_khstu_cfg *c, const float *rab, const float *dout,
                                  float *dv, float *drab);
} rt_xdev_ops;

struct rt_xdev {
    const rt_xdev_ops *ops;
    void *impl;       /* backend state */
    rt_stream stream; /* current stream: where kernels, copies and marks go */
    size_t bytes_now; /* device bytes allocated through alloc, now and at peak */
    size_t bytes_peak;
    int local_rank;
};

/* NULL-terminated registry; rt_xdev_find returns NULL for an unknown or unbuilt backend. */
extern const rt_xdev_ops *const rt_xdev_backends[];
const rt_xdev_ops *rt_xdev_find(const char *name);

static inline void rt_xdev_on(rt_xdev *d, rt_stream s)
{
    d->stream = s;
}

#endif
