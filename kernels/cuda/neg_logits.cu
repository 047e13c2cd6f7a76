/* Per-query negatives with logit sharing (kernels.h rt_kcpu_neg_logits) and the softmax
 * cross-entropy over their logits. Every output element is written by one thread in a fixed
 * order (a query's gradient over ascending negative rows, as the CPU loops), so a segmented
 * run equals an unsegmented one bit for bit on the device too. */
#include "internal.cuh"

enum { XENT_THREADS = 256, WARP = 32 };

__device__ static int64_t scorer(int64_t j, int64_t t, int64_t nq)
{
    return ((j - t) % nq + nq) % nq;
}

/* One warp per (row, t, m) dot product. */
__global__ void neg_dots(const float *q, int64_t nq, int64_t d, const float *neg, int64_t first,
                         int64_t rows, int64_t nneg, int64_t k, float *lg, int64_t ld, int64_t col)
{
    const int64_t w = ((int64_t)blockIdx.x * blockDim.x + threadIdx.x) / WARP;
    const int lane = threadIdx.x % WARP;
    if (w >= rows * k * nneg) return;
    const int64_t m = w % nneg, t = (w / nneg) % k, r = w / (nneg * k);
    const int64_t i = scorer(first + r, t, nq);
    const float *a = q + i * d, *b = neg + (r * nneg + m) * d;
    float s = 0.0f;
    for (int64_t e = lane; e < d; e += WARP)
        s += a[e] * b[e];
    for (int o = WARP / 2; o > 0; o /= 2)
        s += __shfl_down_sync(0xffffffffu, s, o);
    if (lane == 0) lg[i * ld + col + t * nneg + m] = s;
}

/* dneg[r, m, e] = sum over t of g(i_t, t, m) q[i_t, e]. */
__global__ void neg_dneg(const float *q, int64_t nq, int64_t d, int64_t first, int64_t rows,
                         int64_t nneg, int64_t k, const float *g, int64_t ld, int64_t col,
                         float *dneg)
{
    const int64_t x = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (x >= rows * nneg * d) return;
    const int64_t e = x % d, m = (x / d) % nneg, r = x / (d * nneg);
    float s = 0.0f;
    for (int64_t t = 0; t < k; t++) {
        const int64_t i = scorer(first + r, t, nq);
        s += g[i * ld + col + t * nneg + m] * q[i * d + e];
    }
    dneg[x] = s;
}

/* dq[i, e] += g(i, t, m) neg[j, m, e] over the segment's rows j = i + t (mod nq), ascending j,
 * t and m; the threads cover the rows + k - 1 queries the segment's rows are scored by. */
__global__ void neg_dq(int64_t nq, int64_t d, const float *neg, int64_t first, int64_t rows,
                       int64_t nneg, int64_t k, int64_t nquery, const float *g, int64_t ld,
                       int64_t col, float *dq)
{
    const int64_t x = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (x >= nquery * d) return;
    const int64_t e = x % d, i = scorer(first, k - 1 - x / d, nq);
    float acc = dq[i * d + e];
    for (int64_t r = 0; r < rows; r++)
        for (int64_t t = ((first + r - i) % nq + nq) % nq; t < k; t += nq)
            for (int64_t m = 0; m < nneg; m++)
                acc += g[i * ld + col + t * nneg + m] * neg[(r * nneg + m) * d + e];
    dq[i * d + e] = acc;
}

static int bad_args(const float *q, int64_t nq, int64_t d, const float *neg, int64_t first,
                    int64_t rows, int64_t nneg, int64_t k, const float *lg, int64_t ld, int64_t col,
                    rt_kcuda_ctx *c)
{
    return !c || nq <= 0 || d <= 0 || nneg < 1 || k < 1 || rows < 0 || first < 0 ||
           first + rows > nq || col < 0 || col + k * nneg > ld || !q || !lg || (rows && !neg);
}

rt_kstatus rt_kcuda_neg_logits(const float *q, int64_t nq, int64_t d, const float *neg,
                               int64_t first, int64_t rows, int64_t nneg, int64_t k, float *logits,
                               int64_t ld, int64_t col, rt_kcuda_ctx *c)
{
    if (bad_args(q, nq, d, neg, first, rows, nneg, k, logits, ld, col, c)) return RT_K_EINVAL;
    const int64_t n = rows * k * nneg * WARP;
    if (n == 0) return RT_K_OK;
    neg_dots<<<rt_kcuda_blocks(n, RT_KCUDA_THREADS), RT_KCUDA_THREADS, 0, c->stream>>>(
        q, nq, d, neg, first, rows, nneg, k, logits, ld, col);
    RT_CUDA_CHECK(cudaGetLastError());
    return RT_K_OK;
}

rt_kstatus rt_kcuda_neg_logits_bwd(const float *q, int64_t nq, int64_t d, const float *neg,
                                   int64_t first, int64_t rows, int64_t nneg, int64_t k,
                                   const float *dlogits, int64_t ld, int64_t col, float *dq,
                                   float *dneg, rt_kcuda_ctx *c)
{
    if (bad_args(q, nq, d, neg, first, rows, nneg, k, dlogits, ld, col, c) || !dq ||
        (rows && !dneg))
        return RT_K_EINVAL;
    if (rows == 0) return RT_K_OK;
    const int64_t nd = rows * nneg * d, nquery = rows + k - 1 < nq ? rows + k - 1 : nq;
    neg_dneg<<<rt_kcuda_blocks(nd, RT_KCUDA_THREADS), RT_KCUDA_THREADS, 0, c->stream>>>(
        q, nq, d, first, rows, nneg, k, dlogits, ld, col, dneg);
    neg_dq<<<rt_kcuda_blocks(nquery * d, RT_KCUDA_THREADS), RT_KCUDA_THREADS, 0, c->stream>>>(
        nq, d, neg, first, rows, nneg, k, nquery, dlogits, ld, col, dq);
    RT_CUDA_CHECK(cudaGetLastError());
    return RT_K_OK;
}

/* One block per row: the row's loss term, and the row turned into scale (softmax - onehot_0). */
__global__ void xent_rows(float *lg, int64_t cols, float scale, float *terms)
{
    __shared__ float red[XENT_THREADS];
    float *row = lg + (int64_t)blockIdx.x * cols;
    float mx = -INFINITY;
    for (int64_t c = threadIdx.x; c < cols; c += blockDim.x)
        mx = fmaxf(mx, row[c]);
    red[threadIdx.x] = mx;
    __syncthreads();
    for (int w = blockDim.x / 2; w > 0; w /= 2) {
        if ((int)threadIdx.x < w) red[threadIdx.x] = fmaxf(red[threadIdx.x], red[threadIdx.x + w]);
        __syncthreads();
    }
    mx = red[0];
    __syncthreads();
    float z = 0.0f;
    for (int64_t c = threadIdx.x; c < cols; c += blockDim.x)
        z += expf(row[c] - mx);
    red[threadIdx.x] = z;
    __syncthreads();
    for (int w = blockDim.x / 2; w > 0; w /= 2) {
        if ((int)threadIdx.x < w) red[threadIdx.x] += red[threadIdx.x + w];
        __syncthreads();
    }
    z = red[0];
    const float l0 = row[0];
    __syncthreads();
    for (int64_t c = threadIdx.x; c < cols; c += blockDim.x)
        row[c] = expf(row[c] - mx) / z * scale - (c == 0 ? scale : 0.0f);
    if (threadIdx.x == 0) terms[blockIdx.x] = mx + logf(z) - l0;
}

__global__ void mean_terms(const float *x, int64_t n, float *out)
{
    __shared__ double part[XENT_THREADS];
    double s = 0.0;
    for (int64_t i = threadIdx.x; i < n; i += blockDim.x)
        s += x[i];
    part[threadIdx.x] = s;
    __syncthreads();
    for (int w = blockDim.x / 2; w > 0; w /= 2) {
        if ((int)threadIdx.x < w) part[threadIdx.x] += part[threadIdx.x + w];
        __syncthreads();
    }
    if (threadIdx.x == 0) *out = (float)(part[0] / (double)n);
}

rt_kstatus rt_kcuda_softmax_xent(float *logits, int64_t rows, int64_t cols, float scale,
                                 float *loss, rt_kcuda_ctx *c)
{
    if (!c || rows <= 0 || cols < 1 || !logits || !loss || rows > 2147483647) return RT_K_EINVAL;
    void *ws;
    RT_K_TRY(rt_kcuda_workspace(c, (size_t)rows * sizeof(float), &ws));
    xent_rows<<<(unsigned)rows, XENT_THREADS, 0, c->stream>>>(logits, cols, scale, (float *)ws);
    mean_terms<<<1, XENT_THREADS, 0, c->stream>>>((const float *)ws, rows, loss);
    RT_CUDA_CHECK(cudaGetLastError());
    return RT_K_OK;
}
