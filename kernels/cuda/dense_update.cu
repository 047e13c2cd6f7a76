/* The dense optimizer step and axpy on the GPU: one elementwise pass each, grid-stride so any
 * n fits in the capped grid. Arguments are checked exactly as the CPU twins check them. */
#include "internal.cuh"

#include <math.h>

__global__ void axpy_kernel(int64_t n, float a, const float *x, float *y)
{
    const int64_t step = (int64_t)gridDim.x * blockDim.x;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += step)
        y[i] += a * x[i];
}

rt_kstatus rt_kcuda_axpy(int64_t n, float a, const float *x, float *y, rt_kcuda_ctx *c)
{
    if (!c || n < 0 || (n && (!x || !y))) return RT_K_EINVAL;
    if (n == 0) return RT_K_OK;
    axpy_kernel<<<rt_kcuda_blocks(n, RT_KCUDA_THREADS), RT_KCUDA_THREADS, 0, c->stream>>>(n, a, x,
                                                                                          y);
    RT_CUDA_CHECK(cudaGetLastError());
    return RT_K_OK;
}

__global__ void sgd_kernel(int64_t n, float lr, float scale, float *w, const float *g)
{
    const int64_t step = (int64_t)gridDim.x * blockDim.x;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += step)
        w[i] -= lr * (g[i] * scale);
}

/* c1, c2: the bias corrections, computed once on the host in double as the CPU twin does. */
__global__ void adam_kernel(int64_t n, rt_kadam o, float c1, float c2, float *w, const float *g,
                            float *m, float *v)
{
    const int64_t step = (int64_t)gridDim.x * blockDim.x;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += step) {
        const float gi = g[i] * o.grad_scale;
        const float mi = o.beta1 * m[i] + (1.0f - o.beta1) * gi;
        const float vi = o.beta2 * v[i] + (1.0f - o.beta2) * gi * gi;
        m[i] = mi;
        v[i] = vi;
        w[i] -= o.lr * (mi / c1) / (sqrtf(vi / c2) + o.eps);
    }
}

rt_kstatus rt_kcuda_adam(int64_t n, const rt_kadam *o, float *w, const float *g, float *m, float *v,
                         rt_kcuda_ctx *c)
{
    if (!c || !o || n < 0 || (n && (!w || !g))) return RT_K_EINVAL;
    if (o->kind == RT_KOPT_SGD) {
        if (n == 0) return RT_K_OK;
        sgd_kernel<<<rt_kcuda_blocks(n, RT_KCUDA_THREADS), RT_KCUDA_THREADS, 0, c->stream>>>(
            n, o->lr, o->grad_scale, w, g);
        RT_CUDA_CHECK(cudaGetLastError());
        return RT_K_OK;
    }
    if (o->kind != RT_KOPT_ADAM || o->step < 1 || o->beta1 < 0 || o->beta1 >= 1 || o->beta2 < 0 ||
        o->beta2 >= 1 || (n && (!m || !v)))
        return RT_K_EINVAL;
    if (n == 0) return RT_K_OK;
    const float c1 = (float)(1.0 - pow(o->beta1, (double)o->step));
    const float c2 = (float)(1.0 - pow(o->beta2, (double)o->step));
    adam_kernel<<<rt_kcuda_blocks(n, RT_KCUDA_THREADS), RT_KCUDA_THREADS, 0, c->stream>>>(
        n, *o, c1, c2, w, g, m, v);
    RT_CUDA_CHECK(cudaGetLastError());
    return RT_K_OK;
}
