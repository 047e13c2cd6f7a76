/* Jagged <-> padded dense conversions on the device. */
#include "internal.cuh"

__global__ void to_dense(const float *values, const int64_t *offsets, int64_t nseg, int64_t d,
                         int64_t max_len, float pad, float *dense)
{
    const int64_t e = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (e >= nseg * max_len * d) return;
    const int64_t s = e / (max_len * d), i = (e / d) % max_len, k = e % d;
    const int64_t at = offsets[s] + i;
    dense[e] = at < offsets[s + 1] ? values[at * d + k] : pad;
}

__global__ void to_jagged(const float *dense, const int64_t *offsets, int64_t nseg, int64_t total,
                          int64_t d, int64_t max_len, float *values)
{
    const int64_t e = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (e >= total * d) return;
    const int64_t t = e / d, s = rt_kcuda_segment_of(offsets, nseg, t), i = t - offsets[s];
    values[e] = i < max_len ? dense[(s * max_len + i) * d + e % d] : 0.0f;
}

rt_kstatus rt_kcuda_jagged_to_dense(const float *values, const int64_t *offsets, int64_t nseg,
                                    int64_t d, int64_t max_len, float pad, float *dense,
                                    rt_kcuda_ctx *c)
{
    if (!c || d <= 0 || max_len < 0 || nseg < 0 || !offsets || (nseg * max_len > 0 && !dense))
        return RT_K_EINVAL;
    if (nseg * max_len == 0) return RT_K_OK;
    RT_K_TRY(rt_kcuda_check_offsets(offsets, nseg, c));
    to_dense<<<rt_kcuda_blocks(nseg * max_len * d, RT_KCUDA_THREADS), RT_KCUDA_THREADS, 0,
               c->stream>>>(values, offsets, nseg, d, max_len, pad, dense);
    RT_CUDA_CHECK(cudaGetLastError());
    return RT_K_OK;
}

rt_kstatus rt_kcuda_dense_to_jagged(const float *dense, const int64_t *offsets, int64_t nseg,
                                    int64_t d, int64_t max_len, float *values, rt_kcuda_ctx *c)
{
    if (!c || d <= 0 || max_len < 0 || nseg < 0 || !offsets) return RT_K_EINVAL;
    int64_t total = 0;
    if (nseg > 0) {
        RT_K_TRY(rt_kcuda_check_offsets(offsets, nseg, c));
        RT_K_TRY(rt_kcuda_jagged_total(offsets, nseg, &total, c));
    }
    if (total == 0) return RT_K_OK;
    if (!values || (max_len > 0 && !dense)) return RT_K_EINVAL;
    to_jagged<<<rt_kcuda_blocks(total * d, RT_KCUDA_THREADS), RT_KCUDA_THREADS, 0, c->stream>>>(
        dense, offsets, nseg, total, d, max_len, values);
    RT_CUDA_CHECK(cudaGetLastError());
    return RT_K_OK;
}
