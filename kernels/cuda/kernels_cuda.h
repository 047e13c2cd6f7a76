/* The CUDA implementation of kernels.h. Every rt_kcuda_* function takes the same arguments
 * in the same order as its rt_kcpu_* twin, on device pointers, plus the context last. Calls
 * are asynchronous on the context's stream. Device-side argument errors (an ID outside its
 * table, bad offsets) cannot be returned by an asynchronous call: the kernel records them in
 * the context and rt_kcuda_ctx_sync reports them; the outputs are then unspecified. Scalars
 * produced on the device (unique counts, losses) are written to device pointers. */
#ifndef RT_KERNELS_CUDA_H
#define RT_KERNELS_CUDA_H

#include "kernels.h"

#include <cuda_runtime_api.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Stream, cuBLAS handle, a growable workspace and the device error flag. */
typedef struct rt_kcuda_ctx rt_kcuda_ctx;

/* RT_K_EDEVICE when there is no usable GPU. */
rt_kstatus rt_kcuda_ctx_create(cudaStream_t stream, rt_kcuda_ctx **out);
void rt_kcuda_ctx_free(rt_kcuda_ctx *c);
cudaStream_t rt_kcuda_ctx_stream(const rt_kcuda_ctx *c);
/* Waits for the stream; returns the first error a kernel flagged since the last sync, and
 * clears it. */
rt_kstatus rt_kcuda_ctx_sync(rt_kcuda_ctx *c);
/* Number of usable GPUs (0 when the driver or device is missing). */
int rt_kcuda_device_count(void);

/* GEMM math of the context (every rt_kcuda_gemm and the kernels built on it); data stays fp32
 * in every mode. FP32, the default: plain fp32. TF32: cuBLAS TF32 tensor-core math mode on the
 * context's handle. BF16 / FP16: cublasGemmEx with CUBLAS_COMPUTE_32F_FAST_16BF / _16F, which
 * lets cuBLAS round the inputs to bf16 / fp16 and accumulate in fp32. */
typedef enum {
    RT_KCUDA_MATH_FP32,
    RT_KCUDA_MATH_TF32,
    RT_KCUDA_MATH_BF16,
    RT_KCUDA_MATH_FP16
} rt_kcuda_math;
/* RT_K_EINVAL for an unknown mode, RT_K_EDEVICE when cuBLAS refuses the math mode. */
rt_kstatus rt_kcuda_ctx_set_math(rt_kcuda_ctx *c, rt_kcuda_math math);

/* embedding */
rt_kstatus rt_kcuda_gather_pool(const rt_ktable *t, const int64_t *ids, const int64_t *offsets,
                                int64_t nbags, rt_kpool pool, float *out, rt_kcuda_ctx *c);
rt_kstatus rt_kcuda_sequence_lookup(const rt_ktable *t, const int64_t *ids, int64_t n, float *out,
                                    rt_kcuda_ctx *c);
/* rt_kcpu_gather_segments on device pointers: one launch for up to 65535 segments (the
 * segment table goes to the device through the context's workspace). */
rt_kstatus rt_kcuda_gather_segments(const rt_kgather_seg *segs, int64_t nseg, rt_kcuda_ctx *c);
rt_kstatus rt_kcuda_gather_rows(const float *src, int64_t src_rows, int64_t dim, const int64_t *idx,
                                int64_t n, float *dst, rt_kcuda_ctx *c);
rt_kstatus rt_kcuda_scatter_add_rows(const float *src, int64_t n, int64_t dim, const int64_t *idx,
                                     int64_t dst_rows, float *dst, rt_kcuda_ctx *c);
rt_kstatus rt_kcuda_sparse_update(rt_ktable *t, rt_kopt_state st, const rt_kopt *opt,
                                  const int64_t *ids, const int64_t *offsets, int64_t nbags,
                                  rt_kpool pool, const float *grad_out, rt_kcuda_ctx *c);

/* dedup and routing; n_unique is a device int64 */
rt_kstatus rt_kcuda_unique(const int64_t *ids, int64_t n, int64_t *uniq, int64_t *inverse,
                           int64_t *n_unique, rt_kcuda_ctx *c);
rt_kstatus rt_kcuda_segment_unique(const int64_t *ids, const int64_t *offsets, int64_t nseg,
                                   int64_t *uniq, int64_t *uniq_offsets, int64_t *inverse,
                                   rt_kcuda_ctx *c);
rt_kstatus rt_kcuda_compose_index(const int64_t *outer, int64_t n, const int64_t *inner,
                                  int64_t inner_n, int64_t *out, rt_kcuda_ctx *c);
rt_kstatus rt_kcuda_recover(const float *recv, int64_t recv_rows, int64_t dim, const int64_t *i_s,
                            int64_t nu, const int64_t *i_u, int64_t n, float *out, rt_kcuda_ctx *c);
rt_kstatus rt_kcuda_bucketize(const int64_t *ids, const int64_t *offsets, int64_t nseg,
                              const int32_t *seg_rank, rt_kbucket_fn fn, int32_t nranks,
                              int64_t *out_ids, int64_t *pos, int64_t *rank_offsets,
                              int64_t *rank_seg_counts, rt_kcuda_ctx *c);
rt_kstatus rt_kcuda_block_transpose(const void *in, size_t row_bytes, int64_t a, int64_t b,
                                    const int64_t *sizes, void *out, rt_kcuda_ctx *c);

/* dynamic hash table on the device: keys, rows and values live in GPU memory */
typedef struct rt_kcuda_hash rt_kcuda_hash;
rt_kstatus rt_kcuda_hash_create(const rt_khash_cfg *cfg, rt_kcuda_ctx *c, rt_kcuda_hash **out);
void rt_kcuda_hash_free(rt_kcuda_hash *h);
int64_t rt_kcuda_hash_size(const rt_kcuda_hash *h);
int64_t rt_kcuda_hash_slots(const rt_kcuda_hash *h);
int64_t rt_kcuda_hash_chunks(const rt_kcuda_hash *h);
rt_kstatus rt_kcuda_hash_find(rt_kcuda_hash *h, const int64_t *keys, int64_t n, int64_t *rows,
                              rt_kcuda_ctx *c);
/* Synchronizes to learn how many keys were new (*n_new, host, may be NULL). */
rt_kstatus rt_kcuda_hash_find_or_insert(rt_kcuda_hash *h, const int64_t *keys, int64_t n,
                                        int64_t *rows, int64_t *n_new, rt_kcuda_ctx *c);
rt_kstatus rt_kcuda_hash_gather(rt_kcuda_hash *h, const int64_t *keys, int64_t n, float *out,
                                rt_kcuda_ctx *c);

/* dense */
rt_kstatus rt_kcuda_gemm(int trans_a, int trans_b, int64_t m, int64_t n, int64_t k, float alpha,
                         const float *a, int64_t lda, const float *b, int64_t ldb, float beta,
                         float *cm, int64_t ldc, rt_kcuda_ctx *c);
rt_kstatus rt_kcuda_linear_fwd(const float *x, int64_t batch, int64_t in, int64_t out,
                               const float *w, const float *bias, rt_kact act, float *y,
                               rt_kcuda_ctx *c);
rt_kstatus rt_kcuda_linear_bwd(const float *x, const float *y, const float *dy, int64_t batch,
                               int64_t in, int64_t out, const float *w, rt_kact act, float *dx,
                               float *dw, float *db, rt_kcuda_ctx *c);
rt_kstatus rt_kcuda_dot_interact_fwd(const float *t, int64_t batch, int64_t nf, int64_t d,
                                     float *out, rt_kcuda_ctx *c);
rt_kstatus rt_kcuda_dot_interact_bwd(const float *t, const float *dout, int64_t batch, int64_t nf,
                                     int64_t d, float *dt, rt_kcuda_ctx *c);
rt_kstatus rt_kcuda_dcn_cross_fwd(const float *x0, const float *xl, int64_t batch, int64_t d,
                                  int64_t r, const float *u, const float *v, const float *bias,
                                  float *p, float *q, float *y, rt_kcuda_ctx *c);
rt_kstatus rt_kcuda_dcn_cross_bwd(const float *x0, const float *xl, const float *p, const float *q,
                                  const float *dy, int64_t batch, int64_t d, int64_t r,
                                  const float *u, const float *v, float *dx0, float *dxl, float *du,
                                  float *dv, float *dbias, rt_kcuda_ctx *c);
rt_kstatus rt_kcuda_jagged_to_dense(const float *values, const int64_t *offsets, int64_t nseg,
                                    int64_t d, int64_t max_len, float pad, float *dense,
                                    rt_kcuda_ctx *c);
rt_kstatus rt_kcuda_dense_to_jagged(const float *dense, const int64_t *offsets, int64_t nseg,
                                    int64_t d, int64_t max_len, float *values, rt_kcuda_ctx *c);
rt_kstatus rt_kcuda_hstu_attn_fwd(const float *q, const float *k, const float *v,
                                  const int64_t *offsets, int64_t nseq, const rt_khstu_cfg *cfg,
                                  const float *rab, float *out, rt_kcuda_ctx *c);
rt_kstatus rt_kcuda_hstu_attn_bwd(const float *q, const float *k, const float *v,
                                  const int64_t *offsets, int64_t nseq, const rt_khstu_cfg *cfg,
                                  const float *rab, const float *dout, float *dq, float *dk,
                                  float *dv, float *drab, rt_kcuda_ctx *c);
/* loss is a device float */
rt_kstatus rt_kcuda_bce_logits(const float *logits, const float *labels, int64_t n, float *loss,
                               float *dlogits, rt_kcuda_ctx *c);
rt_kstatus rt_kcuda_sampled_softmax(const float *q, const float *pos, const float *neg,
                                    const float *logq, int64_t batch, int64_t nneg, int64_t d,
                                    float temperature, float *loss, float *dq, float *dpos,
                                    float *dneg, rt_kcuda_ctx *c);

/* Per-query negatives (kernels.h rt_kcpu_neg_logits, rt_kcpu_softmax_xent). */
rt_kstatus rt_kcuda_neg_logits(const float *q, int64_t nq, int64_t d, const float *neg,
                               int64_t first, int64_t rows, int64_t nneg, int64_t k, float *logits,
                               int64_t ld, int64_t col, rt_kcuda_ctx *c);
rt_kstatus rt_kcuda_neg_logits_bwd(const float *q, int64_t nq, int64_t d, const float *neg,
                                   int64_t first, int64_t rows, int64_t nneg, int64_t k,
                                   const float *dlogits, int64_t ld, int64_t col, float *dq,
                                   float *dneg, rt_kcuda_ctx *c);
rt_kstatus rt_kcuda_softmax_xent(float *logits, int64_t rows, int64_t cols, float scale,
                                 float *loss, rt_kcuda_ctx *c);

/* dense optimizer (kernels.h rt_kcpu_axpy, rt_kcpu_adam); opt is a host pointer */
rt_kstatus rt_kcuda_axpy(int64_t n, float a, const float *x, float *y, rt_kcuda_ctx *c);
rt_kstatus rt_kcuda_adam(int64_t n, const rt_kadam *opt, float *w, const float *g, float *m,
                         float *v, rt_kcuda_ctx *c);

/* Storage-type conversion (kernels.h rt_kcpu_convert). */
rt_kstatus rt_kcuda_convert(const void *in, rt_kdtype from, int64_t n, rt_kdtype to, void *out,
                            rt_kcuda_ctx *c);

/* Device copy used as the bandwidth reference of the benchmarks. */
rt_kstatus rt_kcuda_copy(const float *src, int64_t n, float *dst, rt_kcuda_ctx *c);

/* generative-recommender blocks (kernels.h: silu, mul, layernorm, softmax, mix, relpos_attn) */
rt_kstatus rt_kcuda_silu_fwd(const float *x, int64_t n, float *y, rt_kcuda_ctx *c);
rt_kstatus rt_kcuda_silu_bwd(const float *x, const float *dy, int64_t n, float *dx,
                             rt_kcuda_ctx *c);
rt_kstatus rt_kcuda_mul_fwd(const float *a, const float *b, int64_t n, float *y, rt_kcuda_ctx *c);
rt_kstatus rt_kcuda_mul_bwd(const float *a, const float *b, const float *dy, int64_t n, float *da,
                            float *db, rt_kcuda_ctx *c);
rt_kstatus rt_kcuda_layernorm_fwd(const float *x, int64_t rows, int64_t dim, float eps, float *y,
                                  float *mean, float *rstd, rt_kcuda_ctx *c);
rt_kstatus rt_kcuda_layernorm_bwd(const float *x, const float *dy, int64_t rows, int64_t dim,
                                  const float *mean, const float *rstd, float *dx, rt_kcuda_ctx *c);
rt_kstatus rt_kcuda_softmax_fwd(const float *x, int64_t rows, int64_t dim, float *y,
                                rt_kcuda_ctx *c);
rt_kstatus rt_kcuda_softmax_bwd(const float *y, const float *dy, int64_t rows, int64_t dim,
                                float *dx, rt_kcuda_ctx *c);
rt_kstatus rt_kcuda_mix_fwd(const float *x, const float *g, int64_t rows, int64_t nexp, int64_t dim,
                            float *y, rt_kcuda_ctx *c);
rt_kstatus rt_kcuda_mix_bwd(const float *x, const float *g, const float *dy, int64_t rows,
                            int64_t nexp, int64_t dim, float *dx, float *dg, rt_kcuda_ctx *c);
rt_kstatus rt_kcuda_relpos_attn_fwd(const float *v, const int64_t *offsets, int64_t nseq,
                                    const rt_khstu_cfg *cfg, const float *rab, float *out,
                                    rt_kcuda_ctx *c);
rt_kstatus rt_kcuda_relpos_attn_bwd(const float *v, const int64_t *offsets, int64_t nseq,
                                    const rt_khstu_cfg *cfg, const float *rab, const float *dout,
                                    float *dv, float *drab, rt_kcuda_ctx *c);

#ifdef __cplusplus
}
#endif

#endif
