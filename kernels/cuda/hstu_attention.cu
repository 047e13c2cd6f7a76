/* Jagged HSTU attention on the device: one warp per (token, head); each lane holds up to
 * MAX_PER_LANE elements of the head dimension, and the q.k dot products are warp reductions.
 * The backward recomputes the logits: one pass per query token for dq and the bias gradient,
 * one per key token for dk and dv, so no thread ever writes another's output except the
 * small relative-bias table (atomics). */
#include "internal.cuh"

enum { MAX_PER_LANE = 8 }; /* head_dim <= 256 */

struct hstu_shape {
    int64_t heads, hd, nbias, nseq, total;
    float alpha, inv_n;
};

static __device__ float warp_sum(float x)
{
    for (int off = 16; off > 0; off /= 2)
        x += __shfl_xor_sync(0xffffffffu, x, off);
    return x;
}

/* alpha q_i . k_j + rab for the lane's slice of q_i (already in registers). */
static __device__ float logit(const hstu_shape &s, const float *qreg, const float *k,
                              const float *rab, int64_t i, int64_t j, int64_t h, int lane)
{
    const float *kj = k + (j * s.heads + h) * s.hd;
    float part = 0.0f;
    for (int m = 0; m < MAX_PER_LANE; m++) {
        const int64_t e = lane + 32 * m;
        if (e < s.hd) part += qreg[m] * kj[e];
    }
    const int64_t dist = i - j < s.nbias - 1 ? i - j : s.nbias - 1;
    return s.alpha * warp_sum(part) + (rab ? rab[h * s.nbias + dist] : 0.0f);
}

static __device__ void load_slice(const float *x, const hstu_shape &s, int64_t t, int64_t h,
                                  int lane, float *reg)
{
    for (int m = 0; m < MAX_PER_LANE; m++) {
        const int64_t e = lane + 32 * m;
        reg[m] = e < s.hd ? x[(t * s.heads + h) * s.hd + e] : 0.0f;
    }
}

static __device__ float slice_dot(const float *reg, const float *x, const hstu_shape &s, int64_t t,
                                  int64_t h, int lane)
{
    float part = 0.0f;
    for (int m = 0; m < MAX_PER_LANE; m++) {
        const int64_t e = lane + 32 * m;
        if (e < s.hd) part += reg[m] * x[(t * s.heads + h) * s.hd + e];
    }
    return warp_sum(part);
}

__global__ void hstu_fwd(const float *q, const float *k, const float *v, const int64_t *offsets,
                         hstu_shape s, const float *rab, float *out)
{
    const int64_t w = ((int64_t)blockIdx.x * blockDim.x + threadIdx.x) / 32;
    const int lane = threadIdx.x % 32;
    if (w >= s.total * s.heads) return;
    const int64_t i = w / s.heads, h = w % s.heads;
    const int64_t lo = offsets[rt_kcuda_segment_of(offsets, s.nseq, i)];
    float qreg[MAX_PER_LANE], acc[MAX_PER_LANE] = {0};
    load_slice(q, s, i, h, lane, qreg);
    for (int64_t j = lo; j <= i; j++) {
        const float x = logit(s, qreg, k, rab, i, j, h, lane);
        const float a = x / (1.0f + expf(-x)) * s.inv_n;
        for (int m = 0; m < MAX_PER_LANE; m++) {
            const int64_t e = lane + 32 * m;
            if (e < s.hd) acc[m] += a * v[(j * s.heads + h) * s.hd + e];
        }
    }
    for (int m = 0; m < MAX_PER_LANE; m++) {
        const int64_t e = lane + 32 * m;
        if (e < s.hd) out[(i * s.heads + h) * s.hd + e] = acc[m];
    }
}

/* d loss / d logit for the pair (i, j), from the logit and dO_i . v_j. */
static __device__ float dlogit(const hstu_shape &s, float x, float dov)
{
    const float sig = 1.0f / (1.0f + expf(-x));
    return dov * s.inv_n * sig * (1.0f + x * (1.0f - sig));
}

__global__ void hstu_bwd_query(const float *q, const float *k, const float *v,
                               const int64_t *offsets, hstu_shape s, const float *rab,
                               const float *dout, float *dq, float *drab)
{
    const int64_t w = ((int64_t)blockIdx.x * blockDim.x + threadIdx.x) / 32;
    const int lane = threadIdx.x % 32;
    if (w >= s.total * s.heads) return;
    const int64_t i = w / s.heads, h = w % s.heads;
    const int64_t lo = offsets[rt_kcuda_segment_of(offsets, s.nseq, i)];
    float qreg[MAX_PER_LANE], doreg[MAX_PER_LANE], acc[MAX_PER_LANE] = {0};
    load_slice(q, s, i, h, lane, qreg);
    load_slice(dout, s, i, h, lane, doreg);
    for (int64_t j = lo; j <= i; j++) {
        const float x = logit(s, qreg, k, rab, i, j, h, lane);
        const float ds = dlogit(s, x, slice_dot(doreg, v, s, j, h, lane));
        for (int m = 0; m < MAX_PER_LANE; m++) {
            const int64_t e = lane + 32 * m;
            if (e < s.hd) acc[m] += s.alpha * ds * k[(j * s.heads + h) * s.hd + e];
        }
        if (drab && lane == 0)
            atomicAdd(&drab[h * s.nbias + (i - j < s.nbias - 1 ? i - j : s.nbias - 1)], ds);
    }
    for (int m = 0; m < MAX_PER_LANE; m++) {
        const int64_t e = lane + 32 * m;
        if (e < s.hd) dq[(i * s.heads + h) * s.hd + e] = acc[m];
    }
}

__global__ void hstu_bwd_key(const float *q, const float *k, const float *v, const int64_t *offsets,
                             hstu_shape s, const float *rab, const float *dout, float *dk,
                             float *dv)
{
    const int64_t w = ((int64_t)blockIdx.x * blockDim.x + threadIdx.x) / 32;
    const int lane = threadIdx.x % 32;
    if (w >= s.total * s.heads) return;
    const int64_t j = w / s.heads, h = w % s.heads;
    const int64_t hi = offsets[rt_kcuda_segment_of(offsets, s.nseq, j) + 1];
    float kreg[MAX_PER_LANE], vreg[MAX_PER_LANE], dk_acc[MAX_PER_LANE] = {0},
                                                  dv_acc[MAX_PER_LANE] = {0};
    load_slice(k, s, j, h, lane, kreg);
    load_slice(v, s, j, h, lane, vreg);
    for (int64_t i = j; i < hi; i++) {
        /* q_i . k_j with k_j in registers: the same reduction as logit() from the other side. */
        const int64_t dist = i - j < s.nbias - 1 ? i - j : s.nbias - 1;
        const float x =
            s.alpha * slice_dot(kreg, q, s, i, h, lane) + (rab ? rab[h * s.nbias + dist] : 0.0f);
        const float a = x / (1.0f + expf(-x)) * s.inv_n;
        const float ds = dlogit(s, x, slice_dot(vreg, dout, s, i, h, lane));
        for (int m = 0; m < MAX_PER_LANE; m++) {
            const int64_t e = lane + 32 * m;
            if (e < s.hd) {
                dv_acc[m] += a * dout[(i * s.heads + h) * s.hd + e];
                dk_acc[m] += s.alpha * ds * q[(i * s.heads + h) * s.hd + e];
            }
        }
    }
    for (int m = 0; m < MAX_PER_LANE; m++) {
        const int64_t e = lane + 32 * m;
        if (e < s.hd) {
            dk[(j * s.heads + h) * s.hd + e] = dk_acc[m];
            dv[(j * s.heads + h) * s.hd + e] = dv_acc[m];
        }
    }
}

static rt_kstatus prepare(const int64_t *offsets, int64_t nseq, const rt_khstu_cfg *cfg,
                          hstu_shape *s, rt_kcuda_ctx *c)
{
    if (!c || !cfg || cfg->heads <= 0 || cfg->head_dim <= 0 || cfg->head_dim > 32 * MAX_PER_LANE ||
        cfg->nbias <= 0 || nseq < 0 || !offsets)
        return RT_K_EINVAL;
    *s = hstu_shape{cfg->heads, cfg->head_dim, cfg->nbias, nseq, 0, cfg->alpha, cfg->inv_n};
    if (nseq > 0) {
        RT_K_TRY(rt_kcuda_check_offsets(offsets, nseq, c));
        RT_K_TRY(rt_kcuda_jagged_total(offsets, nseq, &s->total, c));
    }
    return RT_K_OK;
}

rt_kstatus rt_kcuda_hstu_attn_fwd(const float *q, const float *k, const float *v,
                                  const int64_t *offsets, int64_t nseq, const rt_khstu_cfg *cfg,
                                  const float *rab, float *out, rt_kcuda_ctx *c)
{
    hstu_shape s;
    RT_K_TRY(prepare(offsets, nseq, cfg, &s, c));
    if (s.total == 0) return RT_K_OK;
    if (!q || !k || !v || !out) return RT_K_EINVAL;
    hstu_fwd<<<rt_kcuda_blocks(s.total * s.heads * 32, RT_KCUDA_THREADS), RT_KCUDA_THREADS, 0,
               c->stream>>>(q, k, v, offsets, s, rab, out);
    RT_CUDA_CHECK(cudaGetLastError());
    return RT_K_OK;
}

rt_kstatus rt_kcuda_hstu_attn_bwd(const float *q, const float *k, const float *v,
                                  const int64_t *offsets, int64_t nseq, const rt_khstu_cfg *cfg,
                                  const float *rab, const float *dout, float *dq, float *dk,
                                  float *dv, float *drab, rt_kcuda_ctx *c)
{
    hstu_shape s;
    RT_K_TRY(prepare(offsets, nseq, cfg, &s, c));
    if (drab)
        RT_CUDA_CHECK(
            cudaMemsetAsync(drab, 0, (size_t)(s.heads * s.nbias) * sizeof(float), c->stream));
    if (s.total == 0) return RT_K_OK;
    if (!q || !k || !v || !dout || !dq || !dk || !dv) return RT_K_EINVAL;
    const unsigned blocks = rt_kcuda_blocks(s.total * s.heads * 32, RT_KCUDA_THREADS);
    hstu_bwd_query<<<blocks, RT_KCUDA_THREADS, 0, c->stream>>>(q, k, v, offsets, s, rab, dout, dq,
                                                               drab);
    hstu_bwd_key<<<blocks, RT_KCUDA_THREADS, 0, c->stream>>>(q, k, v, offsets, s, rab, dout, dk,
                                                             dv);
    RT_CUDA_CHECK(cudaGetLastError());
    return RT_K_OK;
}
