/* FuXi-alpha's positional attention channel on the device (kernels.h
 * rt_kcpu_relpos_attn_fwd): the HSTU attention layout (one warp per (token, head), each lane
 * holding up to MAX_PER_LANE elements of the head dimension) without the q.k product. The
 * backward runs one pass per key token for dv (no write conflicts) and one per query token for
 * the bias gradient, which sums runs of equal buckets locally before one atomic per run. */
#include "internal.cuh"

enum { MAX_PER_LANE = 8 }; /* head_dim <= 256 */

struct relpos_shape {
    int64_t heads, hd, nbias, nseq, total;
    float inv_n;
};

static __device__ float warp_sum(float x)
{
    for (int off = 16; off > 0; off /= 2)
        x += __shfl_xor_sync(0xffffffffu, x, off);
    return x;
}

static __device__ int64_t bucket(const relpos_shape &s, int64_t dist)
{
    return dist < s.nbias - 1 ? dist : s.nbias - 1;
}

/* silu(x) * inv_n: the weight of one pair. */
static __device__ float weight(const relpos_shape &s, float x)
{
    return x / (1.0f + expf(-x)) * s.inv_n;
}

__global__ void relpos_fwd(const float *v, const int64_t *offsets, relpos_shape s, const float *rab,
                           float *out)
{
    const int64_t w = ((int64_t)blockIdx.x * blockDim.x + threadIdx.x) / 32;
    const int lane = threadIdx.x % 32;
    if (w >= s.total * s.heads) return;
    const int64_t i = w / s.heads, h = w % s.heads;
    const int64_t lo = offsets[rt_kcuda_segment_of(offsets, s.nseq, i)];
    float acc[MAX_PER_LANE] = {0};
    for (int64_t j = lo; j <= i; j++) {
        const float a = weight(s, rab[h * s.nbias + bucket(s, i - j)]);
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

/* dv_j = sum over later tokens i of the sequence of w(i - j) dout_i. */
__global__ void relpos_bwd_value(const int64_t *offsets, relpos_shape s, const float *rab,
                                 const float *dout, float *dv)
{
    const int64_t w = ((int64_t)blockIdx.x * blockDim.x + threadIdx.x) / 32;
    const int lane = threadIdx.x % 32;
    if (w >= s.total * s.heads) return;
    const int64_t j = w / s.heads, h = w % s.heads;
    const int64_t hi = offsets[rt_kcuda_segment_of(offsets, s.nseq, j) + 1];
    float acc[MAX_PER_LANE] = {0};
    for (int64_t i = j; i < hi; i++) {
        const float a = weight(s, rab[h * s.nbias + bucket(s, i - j)]);
        for (int m = 0; m < MAX_PER_LANE; m++) {
            const int64_t e = lane + 32 * m;
            if (e < s.hd) acc[m] += a * dout[(i * s.heads + h) * s.hd + e];
        }
    }
    for (int m = 0; m < MAX_PER_LANE; m++) {
        const int64_t e = lane + 32 * m;
        if (e < s.hd) dv[(j * s.heads + h) * s.hd + e] = acc[m];
    }
}

/* Raw sums S[h][b] of dout_i . v_j over the pairs of bucket b; drab is S times the derivative
 * of the weight, applied afterwards by relpos_bias_grad. j runs from the sequence start, so
 * the clamped last bucket comes first as one run. */
__global__ void relpos_bwd_bias(const float *v, const int64_t *offsets, relpos_shape s,
                                const float *dout, float *sums)
{
    const int64_t w = ((int64_t)blockIdx.x * blockDim.x + threadIdx.x) / 32;
    const int lane = threadIdx.x % 32;
    if (w >= s.total * s.heads) return;
    const int64_t i = w / s.heads, h = w % s.heads;
    const int64_t lo = offsets[rt_kcuda_segment_of(offsets, s.nseq, i)];
    float doreg[MAX_PER_LANE];
    for (int m = 0; m < MAX_PER_LANE; m++) {
        const int64_t e = lane + 32 * m;
        doreg[m] = e < s.hd ? dout[(i * s.heads + h) * s.hd + e] : 0.0f;
    }
    int64_t run_bucket = -1;
    float run = 0.0f;
    for (int64_t j = lo; j <= i; j++) {
        float part = 0.0f;
        for (int m = 0; m < MAX_PER_LANE; m++) {
            const int64_t e = lane + 32 * m;
            if (e < s.hd) part += doreg[m] * v[(j * s.heads + h) * s.hd + e];
        }
        const float dov = warp_sum(part);
        const int64_t b = bucket(s, i - j);
        if (b != run_bucket) {
            if (run_bucket >= 0 && lane == 0) atomicAdd(&sums[h * s.nbias + run_bucket], run);
            run_bucket = b;
            run = 0.0f;
        }
        run += dov;
    }
    if (run_bucket >= 0 && lane == 0) atomicAdd(&sums[h * s.nbias + run_bucket], run);
}

__global__ void relpos_bias_grad(const float *rab, int64_t n, float inv_n, float *drab)
{
    const int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    const float x = rab[i], sig = 1.0f / (1.0f + expf(-x));
    drab[i] *= inv_n * sig * (1.0f + x * (1.0f - sig));
}

static rt_kstatus prepare(const int64_t *offsets, int64_t nseq, const rt_khstu_cfg *cfg,
                          const float *rab, relpos_shape *s, rt_kcuda_ctx *c)
{
    if (!c || !cfg || cfg->heads <= 0 || cfg->head_dim <= 0 || cfg->head_dim > 32 * MAX_PER_LANE ||
        cfg->nbias <= 0 || nseq < 0 || !offsets || !rab)
        return RT_K_EINVAL;
    *s = relpos_shape{cfg->heads, cfg->head_dim, cfg->nbias, nseq, 0, cfg->inv_n};
    if (nseq > 0) {
        RT_K_TRY(rt_kcuda_check_offsets(offsets, nseq, c));
        RT_K_TRY(rt_kcuda_jagged_total(offsets, nseq, &s->total, c));
    }
    return RT_K_OK;
}

rt_kstatus rt_kcuda_relpos_attn_fwd(const float *v, const int64_t *offsets, int64_t nseq,
                                    const rt_khstu_cfg *cfg, const float *rab, float *out,
                                    rt_kcuda_ctx *c)
{
    relpos_shape s;
    RT_K_TRY(prepare(offsets, nseq, cfg, rab, &s, c));
    if (s.total == 0) return RT_K_OK;
    if (!v || !out) return RT_K_EINVAL;
    relpos_fwd<<<rt_kcuda_blocks(s.total * s.heads * 32, RT_KCUDA_THREADS), RT_KCUDA_THREADS, 0,
                 c->stream>>>(v, offsets, s, rab, out);
    RT_CUDA_CHECK(cudaGetLastError());
    return RT_K_OK;
}

rt_kstatus rt_kcuda_relpos_attn_bwd(const float *v, const int64_t *offsets, int64_t nseq,
                                    const rt_khstu_cfg *cfg, const float *rab, const float *dout,
                                    float *dv, float *drab, rt_kcuda_ctx *c)
{
    relpos_shape s;
    RT_K_TRY(prepare(offsets, nseq, cfg, rab, &s, c));
    const int64_t nb = s.heads * s.nbias;
    if (drab) RT_CUDA_CHECK(cudaMemsetAsync(drab, 0, (size_t)nb * sizeof(float), c->stream));
    if (s.total == 0) return RT_K_OK;
    if (!v || !dout || !dv) return RT_K_EINVAL;
    const unsigned blocks = rt_kcuda_blocks(s.total * s.heads * 32, RT_KCUDA_THREADS);
    relpos_bwd_value<<<blocks, RT_KCUDA_THREADS, 0, c->stream>>>(offsets, s, rab, dout, dv);
    if (drab) {
        relpos_bwd_bias<<<blocks, RT_KCUDA_THREADS, 0, c->stream>>>(v, offsets, s, dout, drab);
        relpos_bias_grad<<<rt_kcuda_blocks(nb, RT_KCUDA_THREADS), RT_KCUDA_THREADS, 0, c->stream>>>(
            rab, nb, s.inv_n, drab);
    }
    RT_CUDA_CHECK(cudaGetLastError());
    return RT_K_OK;
}
