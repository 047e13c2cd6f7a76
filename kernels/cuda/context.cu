/* The CUDA context: stream, cuBLAS handle, workspace and device error flag. */
#include "internal.cuh"

#include <stdlib.h>

int rt_kcuda_device_count(void)
{
    int n = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess) {
        cudaGetLastError(); /* clear the sticky "no device" error */
        return 0;
    }
    return n;
}

rt_kstatus rt_kcuda_ctx_create(cudaStream_t stream, rt_kcuda_ctx **out)
{
    if (!out) return RT_K_EINVAL;
    *out = NULL;
    if (rt_kcuda_device_count() == 0) return RT_K_EDEVICE;
    rt_kcuda_ctx *c = (rt_kcuda_ctx *)calloc(1, sizeof *c);
    if (!c) return RT_K_ENOMEM;
    c->stream = stream;
    if (cublasCreate(&c->blas) != CUBLAS_STATUS_SUCCESS) {
        free(c);
        return RT_K_EDEVICE;
    }
    if (cublasSetStream(c->blas, stream) != CUBLAS_STATUS_SUCCESS ||
        cudaMalloc((void **)&c->err, sizeof(int)) != cudaSuccess ||
        cudaMemsetAsync(c->err, 0, sizeof(int), stream) != cudaSuccess) {
        rt_kcuda_ctx_free(c);
        return RT_K_EDEVICE;
    }
    *out = c;
    return RT_K_OK;
}

void rt_kcuda_ctx_free(rt_kcuda_ctx *c)
{
    if (!c) return;
    if (c->stream)
        cudaStreamSynchronize(c->stream);
    else
        cudaDeviceSynchronize();
    cudaFree(c->ws);
    cudaFree(c->err);
    if (c->blas) cublasDestroy(c->blas);
    free(c);
}

rt_kstatus rt_kcuda_ctx_set_math(rt_kcuda_ctx *c, rt_kcuda_math math)
{
    if (!c) return RT_K_EINVAL;
    cublasMath_t mode;
    switch (math) {
    case RT_KCUDA_MATH_TF32:
        mode = CUBLAS_TF32_TENSOR_OP_MATH;
        break;
    /* The fast 16-bit compute types are chosen per call (cublasGemmEx in dense.cu); the
     * handle's mode must then not add TF32 on top. */
    case RT_KCUDA_MATH_FP32:
    case RT_KCUDA_MATH_BF16:
    case RT_KCUDA_MATH_FP16:
        mode = CUBLAS_DEFAULT_MATH;
        break;
    default:
        return RT_K_EINVAL;
    }
    RT_CUBLAS_CHECK(cublasSetMathMode(c->blas, mode));
    c->math = math;
    return RT_K_OK;
}

cudaStream_t rt_kcuda_ctx_stream(const rt_kcuda_ctx *c)
{
    return c->stream;
}

rt_kstatus rt_kcuda_ctx_sync(rt_kcuda_ctx *c)
{
    if (!c) return RT_K_EINVAL;
    int flagged = 0;
    RT_CUDA_CHECK(
        cudaMemcpyAsync(&flagged, c->err, sizeof flagged, cudaMemcpyDeviceToHost, c->stream));
    RT_CUDA_CHECK(cudaStreamSynchronize(c->stream));
    RT_CUDA_CHECK(cudaGetLastError());
    if (flagged) RT_CUDA_CHECK(cudaMemsetAsync(c->err, 0, sizeof(int), c->stream));
    return (rt_kstatus)flagged;
}

rt_kstatus rt_kcuda_workspace(rt_kcuda_ctx *c, size_t bytes, void **ws)
{
    if (bytes > c->ws_bytes) {
        if (c->ws) RT_CUDA_CHECK(cudaFreeAsync(c->ws, c->stream));
        c->ws = NULL;
        c->ws_bytes = 0;
        const size_t grown = bytes + bytes / 2;
        RT_CUDA_CHECK(cudaMallocAsync(&c->ws, grown, c->stream));
        c->ws_bytes = grown;
    }
    *ws = c->ws;
    return RT_K_OK;
}

/* Offsets are device data: a malformed pair is flagged, not trusted. */
__global__ void check_offsets_kernel(const int64_t *offsets, int64_t nseg, int *err)
{
    const int64_t s = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (s == 0 && offsets[0] != 0) rt_kcuda_flag(err, RT_K_EINVAL);
    if (s < nseg && offsets[s + 1] < offsets[s]) rt_kcuda_flag(err, RT_K_EINVAL);
}

rt_kstatus rt_kcuda_check_offsets(const int64_t *offsets, int64_t nseg, rt_kcuda_ctx *c)
{
    check_offsets_kernel<<<rt_kcuda_blocks(nseg + 1, RT_KCUDA_THREADS), RT_KCUDA_THREADS, 0,
                           c->stream>>>(offsets, nseg, c->err);
    RT_CUDA_CHECK(cudaGetLastError());
    return RT_K_OK;
}

rt_kstatus rt_kcuda_jagged_total(const int64_t *offsets, int64_t nseg, int64_t *total,
                                 rt_kcuda_ctx *c)
{
    RT_CUDA_CHECK(
        cudaMemcpyAsync(total, offsets + nseg, sizeof *total, cudaMemcpyDeviceToHost, c->stream));
    RT_CUDA_CHECK(cudaStreamSynchronize(c->stream));
    if (*total < 0) return RT_K_EINVAL;
    return RT_K_OK;
}
