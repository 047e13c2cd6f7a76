/* SPTT peer permute and shuffle on the device: a transpose of a grid of variable-size
 * blocks. Block starts come from two exclusive scans (a-major source, b-major destination);
 * one thread block copies one grid block. */
#include "internal.cuh"

__global__ void transposed_sizes(const int64_t *sizes, int64_t a, int64_t b, int64_t *tsizes,
                                 int *err)
{
    const int64_t k = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (k >= a * b) return;
    const int64_t i = k / b, j = k % b;
    if (sizes[k] < 0) rt_kcuda_flag(err, RT_K_EINVAL);
    tsizes[j * a + i] = sizes[k] < 0 ? 0 : sizes[k];
}

__global__ void copy_blocks(const char *in, size_t row_bytes, int64_t a, int64_t b,
                            const int64_t *sizes, const int64_t *src_start,
                            const int64_t *dst_start, char *out)
{
    const int64_t k = blockIdx.x; /* source block (i, j), a-major */
    const int64_t i = k / b, j = k % b;
    if (sizes[k] <= 0) return;
    const size_t bytes = (size_t)sizes[k] * row_bytes;
    const char *src = in + (size_t)src_start[k] * row_bytes;
    char *dst = out + (size_t)dst_start[j * a + i] * row_bytes;
    if (row_bytes % 4 == 0 && (uintptr_t)in % 4 == 0 && (uintptr_t)out % 4 == 0) {
        for (size_t w = threadIdx.x; w < bytes / 4; w += blockDim.x)
            ((uint32_t *)dst)[w] = ((const uint32_t *)src)[w];
    } else {
        for (size_t w = threadIdx.x; w < bytes; w += blockDim.x)
            dst[w] = src[w];
    }
}

rt_kstatus rt_kcuda_block_transpose(const void *in, size_t row_bytes, int64_t a, int64_t b,
                                    const int64_t *sizes, void *out, rt_kcuda_ctx *c)
{
    if (!c || a < 0 || b < 0 || row_bytes == 0 || (a * b > 0 && (!sizes || !in || !out)) ||
        a * b > 2147483647)
        return RT_K_EINVAL;
    const int64_t nb = a * b;
    if (nb == 0) return RT_K_OK;
    size_t tmp = 0;
    RT_K_TRY(rt_kcuda_exclusive_sum(NULL, &tmp, NULL, NULL, nb, c));
    const size_t arr = rt_kcuda_round((size_t)nb * sizeof(int64_t));
    void *ws;
    RT_K_TRY(rt_kcuda_workspace(c, 3 * arr + rt_kcuda_round(tmp), &ws));
    rt_kcuda_arena ar = {(char *)ws, 0};
    int64_t *tsizes = (int64_t *)rt_kcuda_take(&ar, arr);
    int64_t *src_start = (int64_t *)rt_kcuda_take(&ar, arr);
    int64_t *dst_start = (int64_t *)rt_kcuda_take(&ar, arr);
    void *temp = rt_kcuda_take(&ar, tmp);
    transposed_sizes<<<rt_kcuda_blocks(nb, RT_KCUDA_THREADS), RT_KCUDA_THREADS, 0, c->stream>>>(
        sizes, a, b, tsizes, c->err);
    RT_K_TRY(rt_kcuda_exclusive_sum(temp, &tmp, sizes, src_start, nb, c));
    RT_K_TRY(rt_kcuda_exclusive_sum(temp, &tmp, tsizes, dst_start, nb, c));
    copy_blocks<<<(unsigned)nb, RT_KCUDA_THREADS, 0, c->stream>>>(
        (const char *)in, row_bytes, a, b, sizes, src_start, dst_start, (char *)out);
    RT_CUDA_CHECK(cudaGetLastError());
    return RT_K_OK;
}
