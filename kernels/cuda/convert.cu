/* Storage-type conversion on the GPU: one elementwise pass, grid-stride, with the rounding of
 * rt_kcuda_store (round to nearest even), which the CPU twin matches bit for bit. */
#include "internal.cuh"

__global__ void convert_kernel(const void *in, rt_kdtype from, int64_t n, rt_kdtype to, void *out)
{
    const int64_t step = (int64_t)gridDim.x * blockDim.x;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += step)
        rt_kcuda_store(out, to, i, rt_kcuda_load(in, from, i));
}

rt_kstatus rt_kcuda_convert(const void *in, rt_kdtype from, int64_t n, rt_kdtype to, void *out,
                            rt_kcuda_ctx *c)
{
    if (!c || n < 0 || (n && (!in || !out)) || from > RT_KDT_BF16 || to > RT_KDT_BF16)
        return RT_K_EINVAL;
    if (n == 0) return RT_K_OK;
    convert_kernel<<<rt_kcuda_blocks(n, RT_KCUDA_THREADS), RT_KCUDA_THREADS, 0, c->stream>>>(
        in, from, n, to, out);
    RT_CUDA_CHECK(cudaGetLastError());
    return RT_K_OK;
}
