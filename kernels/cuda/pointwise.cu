/* The elementwise and row-wise kernels of the generative-recommender blocks on the device
 * (kernels.h: SiLU, elementwise product, layer norm, row softmax, MMoE mix). Elementwise ones
 * are grid-stride loops; row-wise ones give each row one warp, whose lanes stride over the row
 * and combine with shuffles, so rows of any width fit and no shared memory is needed.
 * Arguments are checked exactly as the CPU twins check them. */
#include "internal.cuh"

static __device__ float gr_warp_sum(float x)
{
    for (int off = 16; off > 0; off /= 2)
        x += __shfl_xor_sync(0xffffffffu, x, off);
    return x;
}

static __device__ float gr_warp_max(float x)
{
    for (int off = 16; off > 0; off /= 2)
        x = fmaxf(x, __shfl_xor_sync(0xffffffffu, x, off));
    return x;
}

static __device__ float gr_sigmoid(float x)
{
    return 1.0f / (1.0f + expf(-x));
}

static bool elems_ok(int64_t n, const void *a, const void *b, const void *c)
{
    return n >= 0 && (n == 0 || (a && b && c));
}

/* One warp per row: blocks of RT_KCUDA_THREADS threads hold RT_KCUDA_THREADS / 32 rows. */
static unsigned warp_blocks(int64_t rows)
{
    return rt_kcuda_blocks(rows * 32, RT_KCUDA_THREADS);
}

__global__ void gr_silu_fwd(const float *x, int64_t n, float *y)
{
    const int64_t step = (int64_t)gridDim.x * blockDim.x;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += step) {
        const float xi = x[i];
        y[i] = xi * gr_sigmoid(xi);
    }
}

__global__ void gr_silu_bwd(const float *x, const float *dy, int64_t n, float *dx)
{
    const int64_t step = (int64_t)gridDim.x * blockDim.x;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += step) {
        const float xi = x[i], s = gr_sigmoid(xi);
        dx[i] = dy[i] * s * (1.0f + xi * (1.0f - s));
    }
}

__global__ void gr_mul_fwd(const float *a, const float *b, int64_t n, float *y)
{
    const int64_t step = (int64_t)gridDim.x * blockDim.x;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += step)
        y[i] = a[i] * b[i];
}

__global__ void gr_mul_bwd(const float *a, const float *b, const float *dy, int64_t n, float *da,
                           float *db)
{
    const int64_t step = (int64_t)gridDim.x * blockDim.x;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += step) {
        const float g = dy[i], ai = a[i], bi = b[i]; /* an output may be an input */
        da[i] = g * bi;
        db[i] = g * ai;
    }
}

rt_kstatus rt_kcuda_silu_fwd(const float *x, int64_t n, float *y, rt_kcuda_ctx *c)
{
    if (!c || !elems_ok(n, x, y, y)) return RT_K_EINVAL;
    if (n == 0) return RT_K_OK;
    gr_silu_fwd<<<rt_kcuda_blocks(n, RT_KCUDA_THREADS), RT_KCUDA_THREADS, 0, c->stream>>>(x, n, y);
    RT_CUDA_CHECK(cudaGetLastError());
    return RT_K_OK;
}

rt_kstatus rt_kcuda_silu_bwd(const float *x, const float *dy, int64_t n, float *dx, rt_kcuda_ctx *c)
{
    if (!c || !elems_ok(n, x, dy, dx)) return RT_K_EINVAL;
    if (n == 0) return RT_K_OK;
    gr_silu_bwd<<<rt_kcuda_blocks(n, RT_KCUDA_THREADS), RT_KCUDA_THREADS, 0, c->stream>>>(x, dy, n,
                                                                                          dx);
    RT_CUDA_CHECK(cudaGetLastError());
    return RT_K_OK;
}

rt_kstatus rt_kcuda_mul_fwd(const float *a, const float *b, int64_t n, float *y, rt_kcuda_ctx *c)
{
    if (!c || !elems_ok(n, a, b, y)) return RT_K_EINVAL;
    if (n == 0) return RT_K_OK;
    gr_mul_fwd<<<rt_kcuda_blocks(n, RT_KCUDA_THREADS), RT_KCUDA_THREADS, 0, c->stream>>>(a, b, n,
                                                                                         y);
    RT_CUDA_CHECK(cudaGetLastError());
    return RT_K_OK;
}

rt_kstatus rt_kcuda_mul_bwd(const float *a, const float *b, const float *dy, int64_t n, float *da,
                            float *db, rt_kcuda_ctx *c)
{
    if (!c || !elems_ok(n, a, b, dy) || !elems_ok(n, da, db, da)) return RT_K_EINVAL;
    if (n == 0) return RT_K_OK;
    gr_mul_bwd<<<rt_kcuda_blocks(n, RT_KCUDA_THREADS), RT_KCUDA_THREADS, 0, c->stream>>>(a, b, dy,
                                                                                         n, da, db);
    RT_CUDA_CHECK(cudaGetLastError());
    return RT_K_OK;
}

/* Two passes over the row (mean, then the centred sum of squares), as the CPU twin does, so
 * large offsets do not cancel. */
__global__ void gr_layernorm_fwd(const float *x, int64_t rows, int64_t dim, float eps, float *y,
                                 float *mean, float *rstd)
{
    const int64_t r = ((int64_t)blockIdx.x * blockDim.x + threadIdx.x) / 32;
    const int lane = threadIdx.x % 32;
    if (r >= rows) return;
    const float *xr = x + r * dim;
    float s = 0.0f;
    for (int64_t e = lane; e < dim; e += 32)
        s += xr[e];
    const float m = gr_warp_sum(s) / (float)dim;
    float s2 = 0.0f;
    for (int64_t e = lane; e < dim; e += 32)
        s2 += (xr[e] - m) * (xr[e] - m);
    const float rs = rsqrtf(gr_warp_sum(s2) / (float)dim + eps);
    for (int64_t e = lane; e < dim; e += 32)
        y[r * dim + e] = (xr[e] - m) * rs;
    if (lane == 0) {
        mean[r] = m;
        rstd[r] = rs;
    }
}

__global__ void gr_layernorm_bwd(const float *x, const float *dy, int64_t rows, int64_t dim,
                                 const float *mean, const float *rstd, float *dx)
{
    const int64_t r = ((int64_t)blockIdx.x * blockDim.x + threadIdx.x) / 32;
    const int lane = threadIdx.x % 32;
    if (r >= rows) return;
    const float *xr = x + r * dim, *gr = dy + r * dim, m = mean[r], rs = rstd[r];
    float sg = 0.0f, sgx = 0.0f;
    for (int64_t e = lane; e < dim; e += 32) {
        sg += gr[e];
        sgx += gr[e] * (xr[e] - m) * rs;
    }
    const float mg = gr_warp_sum(sg) / (float)dim, mgx = gr_warp_sum(sgx) / (float)dim;
    for (int64_t e = lane; e < dim; e += 32)
        dx[r * dim + e] = rs * (gr[e] - mg - (xr[e] - m) * rs * mgx);
}

rt_kstatus rt_kcuda_layernorm_fwd(const float *x, int64_t rows, int64_t dim, float eps, float *y,
                                  float *mean, float *rstd, rt_kcuda_ctx *c)
{
    if (!c || rows < 0 || dim <= 0 || !(eps > 0.0f) || (rows > 0 && (!x || !y || !mean || !rstd)))
        return RT_K_EINVAL;
    if (rows == 0) return RT_K_OK;
    gr_layernorm_fwd<<<warp_blocks(rows), RT_KCUDA_THREADS, 0, c->stream>>>(x, rows, dim, eps, y,
                                                                            mean, rstd);
    RT_CUDA_CHECK(cudaGetLastError());
    return RT_K_OK;
}

rt_kstatus rt_kcuda_layernorm_bwd(const float *x, const float *dy, int64_t rows, int64_t dim,
                                  const float *mean, const float *rstd, float *dx, rt_kcuda_ctx *c)
{
    if (!c || rows < 0 || dim <= 0 || (rows > 0 && (!x || !dy || !mean || !rstd || !dx)))
        return RT_K_EINVAL;
    if (rows == 0) return RT_K_OK;
    gr_layernorm_bwd<<<warp_blocks(rows), RT_KCUDA_THREADS, 0, c->stream>>>(x, dy, rows, dim, mean,
                                                                            rstd, dx);
    RT_CUDA_CHECK(cudaGetLastError());
    return RT_K_OK;
}

__global__ void gr_softmax_fwd(const float *x, int64_t rows, int64_t dim, float *y)
{
    const int64_t r = ((int64_t)blockIdx.x * blockDim.x + threadIdx.x) / 32;
    const int lane = threadIdx.x % 32;
    if (r >= rows) return;
    const float *xr = x + r * dim;
    float mx = -INFINITY;
    for (int64_t e = lane; e < dim; e += 32)
        mx = fmaxf(mx, xr[e]);
    mx = gr_warp_max(mx);
    float z = 0.0f;
    for (int64_t e = lane; e < dim; e += 32)
        z += expf(xr[e] - mx);
    z = gr_warp_sum(z);
    for (int64_t e = lane; e < dim; e += 32)
        y[r * dim + e] = expf(xr[e] - mx) / z;
}

__global__ void gr_softmax_bwd(const float *y, const float *dy, int64_t rows, int64_t dim,
                               float *dx)
{
    const int64_t r = ((int64_t)blockIdx.x * blockDim.x + threadIdx.x) / 32;
    const int lane = threadIdx.x % 32;
    if (r >= rows) return;
    const float *yr = y + r * dim, *gr = dy + r * dim;
    float s = 0.0f;
    for (int64_t e = lane; e < dim; e += 32)
        s += yr[e] * gr[e];
    s = gr_warp_sum(s);
    for (int64_t e = lane; e < dim; e += 32)
        dx[r * dim + e] = yr[e] * (gr[e] - s);
}

rt_kstatus rt_kcuda_softmax_fwd(const float *x, int64_t rows, int64_t dim, float *y,
                                rt_kcuda_ctx *c)
{
    if (!c || rows < 0 || dim <= 0 || (rows > 0 && (!x || !y))) return RT_K_EINVAL;
    if (rows == 0) return RT_K_OK;
    gr_softmax_fwd<<<warp_blocks(rows), RT_KCUDA_THREADS, 0, c->stream>>>(x, rows, dim, y);
    RT_CUDA_CHECK(cudaGetLastError());
    return RT_K_OK;
}

rt_kstatus rt_kcuda_softmax_bwd(const float *y, const float *dy, int64_t rows, int64_t dim,
                                float *dx, rt_kcuda_ctx *c)
{
    if (!c || rows < 0 || dim <= 0 || (rows > 0 && (!y || !dy || !dx))) return RT_K_EINVAL;
    if (rows == 0) return RT_K_OK;
    gr_softmax_bwd<<<warp_blocks(rows), RT_KCUDA_THREADS, 0, c->stream>>>(y, dy, rows, dim, dx);
    RT_CUDA_CHECK(cudaGetLastError());
    return RT_K_OK;
}

/* One thread per output element (r, c): the expert loop is short (a handful of experts). */
__global__ void gr_mix_fwd(const float *x, const float *g, int64_t rows, int64_t nexp, int64_t dim,
                           float *y)
{
    const int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= rows * dim) return;
    const int64_t r = i / dim, col = i % dim;
    float s = 0.0f;
    for (int64_t e = 0; e < nexp; e++)
        s += g[r * nexp + e] * x[(e * rows + r) * dim + col];
    y[i] = s;
}

__global__ void gr_mix_dx(const float *g, const float *dy, int64_t rows, int64_t nexp, int64_t dim,
                          float *dx)
{
    const int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= nexp * rows * dim) return;
    const int64_t e = i / (rows * dim), r = (i / dim) % rows;
    dx[i] = g[r * nexp + e] * dy[r * dim + i % dim];
}

/* One warp per gate (r, e): dg = dy[r] . x[e][r]. */
__global__ void gr_mix_dg(const float *x, const float *dy, int64_t rows, int64_t nexp, int64_t dim,
                          float *dg)
{
    const int64_t w = ((int64_t)blockIdx.x * blockDim.x + threadIdx.x) / 32;
    const int lane = threadIdx.x % 32;
    if (w >= rows * nexp) return;
    const int64_t r = w / nexp, e = w % nexp;
    const float *xr = x + (e * rows + r) * dim, *gr = dy + r * dim;
    float s = 0.0f;
    for (int64_t col = lane; col < dim; col += 32)
        s += gr[col] * xr[col];
    s = gr_warp_sum(s);
    if (lane == 0) dg[w] = s;
}

rt_kstatus rt_kcuda_mix_fwd(const float *x, const float *g, int64_t rows, int64_t nexp, int64_t dim,
                            float *y, rt_kcuda_ctx *c)
{
    if (!c || rows < 0 || nexp <= 0 || dim <= 0 || (rows > 0 && (!x || !g || !y)))
        return RT_K_EINVAL;
    if (rows == 0) return RT_K_OK;
    gr_mix_fwd<<<rt_kcuda_blocks(rows * dim, RT_KCUDA_THREADS), RT_KCUDA_THREADS, 0, c->stream>>>(
        x, g, rows, nexp, dim, y);
    RT_CUDA_CHECK(cudaGetLastError());
    return RT_K_OK;
}

rt_kstatus rt_kcuda_mix_bwd(const float *x, const float *g, const float *dy, int64_t rows,
                            int64_t nexp, int64_t dim, float *dx, float *dg, rt_kcuda_ctx *c)
{
    if (!c || rows < 0 || nexp <= 0 || dim <= 0 || (rows > 0 && (!x || !g || !dy || !dx || !dg)))
        return RT_K_EINVAL;
    if (rows == 0) return RT_K_OK;
    gr_mix_dx<<<rt_kcuda_blocks(nexp * rows * dim, RT_KCUDA_THREADS), RT_KCUDA_THREADS, 0,
                c->stream>>>(g, dy, rows, nexp, dim, dx);
    gr_mix_dg<<<warp_blocks(rows * nexp), RT_KCUDA_THREADS, 0, c->stream>>>(x, dy, rows, nexp, dim,
                                                                            dg);
    RT_CUDA_CHECK(cudaGetLastError());
    return RT_K_OK;
}
