/* Losses on the device: BCE on logits and sampled softmax with shared negatives. Reductions
 * run in one block in a fixed order, so the loss is deterministic. */
#include "internal.cuh"

enum { REDUCE_THREADS = 1024 };

/* out[0] = scale * sum(x[0..n)), accumulated in double. */
__global__ void reduce_sum(const float *x, int64_t n, double scale, float *out)
{
    __shared__ double part[REDUCE_THREADS];
    double s = 0.0;
    for (int64_t i = threadIdx.x; i < n; i += blockDim.x)
        s += x[i];
    part[threadIdx.x] = s;
    __syncthreads();
    for (int w = blockDim.x / 2; w > 0; w /= 2) {
        if ((int)threadIdx.x < w) part[threadIdx.x] += part[threadIdx.x + w];
        __syncthreads();
    }
    if (threadIdx.x == 0) *out = (float)(part[0] * scale);
}

__global__ void bce_terms(const float *z, const float *y, int64_t n, float *terms, float *dz)
{
    const int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    terms[i] = fmaxf(z[i], 0.0f) - z[i] * y[i] + log1pf(expf(-fabsf(z[i])));
    dz[i] = (1.0f / (1.0f + expf(-z[i])) - y[i]) / (float)n;
}

rt_kstatus rt_kcuda_bce_logits(const float *logits, const float *labels, int64_t n, float *loss,
                               float *dlogits, rt_kcuda_ctx *c)
{
    if (!c || n <= 0 || !logits || !labels || !loss || !dlogits) return RT_K_EINVAL;
    void *ws;
    RT_K_TRY(rt_kcuda_workspace(c, (size_t)n * sizeof(float), &ws));
    bce_terms<<<rt_kcuda_blocks(n, RT_KCUDA_THREADS), RT_KCUDA_THREADS, 0, c->stream>>>(
        logits, labels, n, (float *)ws, dlogits);
    reduce_sum<<<1, REDUCE_THREADS, 0, c->stream>>>((const float *)ws, n, 1.0 / (double)n, loss);
    RT_CUDA_CHECK(cudaGetLastError());
    return RT_K_OK;
}

/* One block per batch row: finishes the logits, writes the row's loss term and turns the row
 * into d loss / d (q.x) (already divided by batch and temperature). */
__global__ void softmax_rows(const float *q, const float *pos, const float *logq, int64_t nneg,
                             int64_t d, int64_t batch, float inv_t, float *lg, float *terms)
{
    __shared__ float red[RT_KCUDA_THREADS];
    const int64_t b = blockIdx.x;
    float *row = lg + b * (nneg + 1);
    float s = 0.0f;
    for (int64_t e = threadIdx.x; e < d; e += blockDim.x)
        s += q[b * d + e] * pos[b * d + e];
    red[threadIdx.x] = s;
    __syncthreads();
    for (int w = blockDim.x / 2; w > 0; w /= 2) {
        if ((int)threadIdx.x < w) red[threadIdx.x] += red[threadIdx.x + w];
        __syncthreads();
    }
    if (threadIdx.x == 0) row[0] = red[0] * inv_t;
    __syncthreads();
    float mx = -INFINITY;
    for (int64_t k = 1 + threadIdx.x; k <= nneg; k += blockDim.x) {
        row[k] -= logq ? logq[k - 1] : 0.0f;
        mx = fmaxf(mx, row[k]);
    }
    __syncthreads();
    red[threadIdx.x] = threadIdx.x == 0 ? fmaxf(mx, row[0]) : mx;
    __syncthreads();
    for (int w = blockDim.x / 2; w > 0; w /= 2) {
        if ((int)threadIdx.x < w) red[threadIdx.x] = fmaxf(red[threadIdx.x], red[threadIdx.x + w]);
        __syncthreads();
    }
    mx = red[0];
    __syncthreads();
    float z = 0.0f;
    for (int64_t k = threadIdx.x; k <= nneg; k += blockDim.x)
        z += expf(row[k] - mx);
    red[threadIdx.x] = z;
    __syncthreads();
    for (int w = blockDim.x / 2; w > 0; w /= 2) {
        if ((int)threadIdx.x < w) red[threadIdx.x] += red[threadIdx.x + w];
        __syncthreads();
    }
    z = red[0];
    const float l0 = row[0];
    __syncthreads();
    for (int64_t k = threadIdx.x; k <= nneg; k += blockDim.x)
        row[k] =
            expf(row[k] - mx) / z * inv_t / (float)batch - (k == 0 ? inv_t / (float)batch : 0.0f);
    if (threadIdx.x == 0) terms[b] = mx + logf(z) - l0;
}

__global__ void pos_grads(const float *q, const float *pos, const float *lg, int64_t nneg,
                          int64_t batch, int64_t d, float *dq, float *dpos)
{
    const int64_t e = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (e >= batch * d) return;
    const float g0 = lg[(e / d) * (nneg + 1)];
    dq[e] = g0 * pos[e];
    dpos[e] = g0 * q[e];
}

rt_kstatus rt_kcuda_sampled_softmax(const float *q, const float *pos, const float *neg,
                                    const float *logq, int64_t batch, int64_t nneg, int64_t d,
                                    float temperature, float *loss, float *dq, float *dpos,
                                    float *dneg, rt_kcuda_ctx *c)
{
    if (!c || batch <= 0 || nneg < 0 || d <= 0 || !(temperature > 0.0f) || !q || !pos || !loss ||
        !dq || !dpos || (nneg > 0 && (!neg || !dneg)) || batch > 2147483647)
        return RT_K_EINVAL;
    const size_t lg_bytes = rt_kcuda_round((size_t)(batch * (nneg + 1)) * sizeof(float));
    void *ws;
    RT_K_TRY(rt_kcuda_workspace(c, lg_bytes + (size_t)batch * sizeof(float), &ws));
    float *lg = (float *)ws, *terms = (float *)((char *)ws + lg_bytes);
    const float inv_t = 1.0f / temperature;
    RT_K_TRY(rt_kcuda_gemm(0, 1, batch, nneg, d, inv_t, q, d, neg ? neg : q, d, 0.0f, lg + 1,
                           nneg + 1, c));
    softmax_rows<<<(unsigned)batch, RT_KCUDA_THREADS, 0, c->stream>>>(q, pos, logq, nneg, d, batch,
                                                                      inv_t, lg, terms);
    reduce_sum<<<1, REDUCE_THREADS, 0, c->stream>>>(terms, batch, 1.0 / (double)batch, loss);
    pos_grads<<<rt_kcuda_blocks(batch * d, RT_KCUDA_THREADS), RT_KCUDA_THREADS, 0, c->stream>>>(
        q, pos, lg, nneg, batch, d, dq, dpos);
    RT_CUDA_CHECK(cudaGetLastError());
    if (nneg > 0) {
        RT_K_TRY(
            rt_kcuda_gemm(0, 0, batch, d, nneg, 1.0f, lg + 1, nneg + 1, neg, d, 1.0f, dq, d, c));
        RT_K_TRY(
            rt_kcuda_gemm(1, 0, nneg, d, batch, 1.0f, lg + 1, nneg + 1, q, d, 0.0f, dneg, d, c));
    }
    return RT_K_OK;
}
