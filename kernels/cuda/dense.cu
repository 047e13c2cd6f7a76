/* Dense kernels: row-major GEMM on cuBLAS, the linear layer, DLRM dot interaction and the
 * DCN low-rank cross layer. */
#include "internal.cuh"

#include <limits.h>

__global__ void scale_matrix(float *c, int64_t m, int64_t n, int64_t ldc, float beta)
{
    const int64_t e = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (e >= m * n) return;
    float *x = c + (e / n) * ldc + e % n;
    *x = beta == 0.0f ? 0.0f : beta * *x;
}

rt_kstatus rt_kcuda_gemm(int trans_a, int trans_b, int64_t m, int64_t n, int64_t k, float alpha,
                         const float *a, int64_t lda, const float *b, int64_t ldb, float beta,
                         float *cm, int64_t ldc, rt_kcuda_ctx *c)
{
    const int64_t a_cols = trans_a ? m : k, b_cols = trans_b ? k : n;
    if (!c || m < 0 || n < 0 || k < 0 || ldc < (n > 1 ? n : 1) || lda < (a_cols > 1 ? a_cols : 1) ||
        ldb < (b_cols > 1 ? b_cols : 1) || (m * n > 0 && !cm) || (m * n * k > 0 && (!a || !b)) ||
        m > INT_MAX || n > INT_MAX || k > INT_MAX || lda > INT_MAX || ldb > INT_MAX ||
        ldc > INT_MAX)
        return RT_K_EINVAL;
    if (m == 0 || n == 0) return RT_K_OK;
    if (k == 0) {
        scale_matrix<<<rt_kcuda_blocks(m * n, RT_KCUDA_THREADS), RT_KCUDA_THREADS, 0, c->stream>>>(
            cm, m, n, ldc, beta);
        RT_CUDA_CHECK(cudaGetLastError());
        return RT_K_OK;
    }
    /* Row-major C = op(A) op(B) is column-major C^T = op(B)^T op(A)^T. */
    const cublasOperation_t op_b = trans_b ? CUBLAS_OP_T : CUBLAS_OP_N,
                            op_a = trans_a ? CUBLAS_OP_T : CUBLAS_OP_N;
    if (c->math == RT_KCUDA_MATH_BF16 || c->math == RT_KCUDA_MATH_FP16) {
        /* fp32 storage, 16-bit tensor-core inputs, fp32 accumulation. */
        const cublasComputeType_t ct = c->math == RT_KCUDA_MATH_BF16 ? CUBLAS_COMPUTE_32F_FAST_16BF
                                                                     : CUBLAS_COMPUTE_32F_FAST_16F;
        RT_CUBLAS_CHECK(cublasGemmEx(c->blas, op_b, op_a, (int)n, (int)m, (int)k, &alpha, b,
                                     CUDA_R_32F, (int)ldb, a, CUDA_R_32F, (int)lda, &beta, cm,
                                     CUDA_R_32F, (int)ldc, ct, CUBLAS_GEMM_DEFAULT));
        return RT_K_OK;
    }
    RT_CUBLAS_CHECK(cublasSgemm(c->blas, op_b, op_a, (int)n, (int)m, (int)k, &alpha, b, (int)ldb, a,
                                (int)lda, &beta, cm, (int)ldc));
    return RT_K_OK;
}

__global__ void bias_act(float *y, int64_t batch, int64_t out, const float *bias, rt_kact act)
{
    const int64_t e = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (e >= batch * out) return;
    const float z = y[e] + (bias ? bias[e % out] : 0.0f);
    y[e] = act == RT_KACT_RELU      ? fmaxf(z, 0.0f)
           : act == RT_KACT_SIGMOID ? 1.0f / (1.0f + expf(-z))
                                    : z;
}

static bool act_ok(rt_kact act)
{
    return act == RT_KACT_NONE || act == RT_KACT_RELU || act == RT_KACT_SIGMOID;
}

rt_kstatus rt_kcuda_linear_fwd(const float *x, int64_t batch, int64_t in, int64_t out,
                               const float *w, const float *bias, rt_kact act, float *y,
                               rt_kcuda_ctx *c)
{
    if (!c || batch < 0 || in <= 0 || out <= 0 || !act_ok(act) || !w || (batch > 0 && (!x || !y)))
        return RT_K_EINVAL;
    if (batch == 0) return RT_K_OK;
    RT_K_TRY(rt_kcuda_gemm(0, 1, batch, out, in, 1.0f, x, in, w, in, 0.0f, y, out, c));
    bias_act<<<rt_kcuda_blocks(batch * out, RT_KCUDA_THREADS), RT_KCUDA_THREADS, 0, c->stream>>>(
        y, batch, out, bias, act);
    RT_CUDA_CHECK(cudaGetLastError());
    return RT_K_OK;
}

__global__ void act_grad(const float *y, const float *dy, int64_t n, rt_kact act, float *dz)
{
    const int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    dz[i] = act == RT_KACT_RELU      ? (y[i] > 0.0f ? dy[i] : 0.0f)
            : act == RT_KACT_SIGMOID ? dy[i] * y[i] * (1.0f - y[i])
                                     : dy[i];
}

/* Column sums of a rows x cols matrix, one thread per column in a fixed order. */
__global__ void column_sums(const float *x, int64_t rows, int64_t cols, float *out)
{
    const int64_t j = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (j >= cols) return;
    float s = 0.0f;
    for (int64_t i = 0; i < rows; i++)
        s += x[i * cols + j];
    out[j] = s;
}

rt_kstatus rt_kcuda_linear_bwd(const float *x, const float *y, const float *dy, int64_t batch,
                               int64_t in, int64_t out, const float *w, rt_kact act, float *dx,
                               float *dw, float *db, rt_kcuda_ctx *c)
{
    if (!c || batch < 0 || in <= 0 || out <= 0 || !act_ok(act) || !w || !dw ||
        (batch > 0 && (!x || !y || !dy)))
        return RT_K_EINVAL;
    void *ws;
    RT_K_TRY(rt_kcuda_workspace(c, (size_t)(batch * out + 1) * sizeof(float), &ws));
    float *dz = (float *)ws;
    if (batch > 0)
        act_grad<<<rt_kcuda_blocks(batch * out, RT_KCUDA_THREADS), RT_KCUDA_THREADS, 0,
                   c->stream>>>(y, dy, batch * out, act, dz);
    RT_K_TRY(rt_kcuda_gemm(1, 0, out, in, batch, 1.0f, dz, out, x, in, 0.0f, dw, in, c));
    if (dx) RT_K_TRY(rt_kcuda_gemm(0, 0, batch, in, out, 1.0f, dz, out, w, in, 0.0f, dx, in, c));
    if (db)
        column_sums<<<rt_kcuda_blocks(out, RT_KCUDA_THREADS), RT_KCUDA_THREADS, 0, c->stream>>>(
            dz, batch, out, db);
    RT_CUDA_CHECK(cudaGetLastError());
    return RT_K_OK;
}

/* Pair p of the i-major lower triangle: p = i (i - 1) / 2 + j with i > j. */
static __device__ void pair_of(int64_t p, int64_t *i, int64_t *j)
{
    int64_t r = (int64_t)((1.0 + sqrt(1.0 + 8.0 * (double)p)) / 2.0);
    while (r * (r - 1) / 2 > p)
        r--;
    while ((r + 1) * r / 2 <= p)
        r++;
    *i = r;
    *j = p - r * (r - 1) / 2;
}

__global__ void dot_fwd(const float *t, int64_t batch, int64_t nf, int64_t d, float *out)
{
    const int64_t np = nf * (nf - 1) / 2;
    const int64_t e = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (e >= batch * np) return;
    const int64_t b = e / np;
    int64_t i, j;
    pair_of(e % np, &i, &j);
    const float *ti = t + (b * nf + i) * d, *tj = t + (b * nf + j) * d;
    float s = 0.0f;
    for (int64_t k = 0; k < d; k++)
        s += ti[k] * tj[k];
    out[e] = s;
}

__global__ void dot_bwd(const float *t, const float *dout, int64_t batch, int64_t nf, int64_t d,
                        float *dt)
{
    const int64_t e = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (e >= batch * nf * d) return;
    const int64_t b = e / (nf * d), i = (e / d) % nf, k = e % d;
    const int64_t np = nf * (nf - 1) / 2;
    float s = 0.0f;
    for (int64_t j = 0; j < nf; j++) {
        if (j == i) continue;
        const int64_t hi = i > j ? i : j, lo = i > j ? j : i;
        s += dout[b * np + hi * (hi - 1) / 2 + lo] * t[(b * nf + j) * d + k];
    }
    dt[e] = s;
}

rt_kstatus rt_kcuda_dot_interact_fwd(const float *t, int64_t batch, int64_t nf, int64_t d,
                                     float *out, rt_kcuda_ctx *c)
{
    if (!c || batch < 0 || nf < 2 || d <= 0 || (batch > 0 && (!t || !out))) return RT_K_EINVAL;
    if (batch == 0) return RT_K_OK;
    dot_fwd<<<rt_kcuda_blocks(batch * nf * (nf - 1) / 2, RT_KCUDA_THREADS), RT_KCUDA_THREADS, 0,
              c->stream>>>(t, batch, nf, d, out);
    RT_CUDA_CHECK(cudaGetLastError());
    return RT_K_OK;
}

rt_kstatus rt_kcuda_dot_interact_bwd(const float *t, const float *dout, int64_t batch, int64_t nf,
                                     int64_t d, float *dt, rt_kcuda_ctx *c)
{
    if (!c || batch < 0 || nf < 2 || d <= 0 || (batch > 0 && (!t || !dout || !dt)))
        return RT_K_EINVAL;
    if (batch == 0) return RT_K_OK;
    dot_bwd<<<rt_kcuda_blocks(batch * nf * d, RT_KCUDA_THREADS), RT_KCUDA_THREADS, 0, c->stream>>>(
        t, dout, batch, nf, d, dt);
    RT_CUDA_CHECK(cudaGetLastError());
    return RT_K_OK;
}

__global__ void cross_out(const float *x0, const float *xl, const float *bias, int64_t batch,
                          int64_t d, float *q, float *y)
{
    const int64_t e = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (e >= batch * d) return;
    q[e] += bias[e % d];
    y[e] = x0[e] * q[e] + xl[e];
}

rt_kstatus rt_kcuda_dcn_cross_fwd(const float *x0, const float *xl, int64_t batch, int64_t d,
                                  int64_t r, const float *u, const float *v, const float *bias,
                                  float *p, float *q, float *y, rt_kcuda_ctx *c)
{
    if (!c || batch < 0 || d <= 0 || r <= 0 || !u || !v || !bias ||
        (batch > 0 && (!x0 || !xl || !p || !q || !y)))
        return RT_K_EINVAL;
    if (batch == 0) return RT_K_OK;
    RT_K_TRY(rt_kcuda_gemm(0, 0, batch, r, d, 1.0f, xl, d, v, r, 0.0f, p, r, c));
    RT_K_TRY(rt_kcuda_gemm(0, 1, batch, d, r, 1.0f, p, r, u, r, 0.0f, q, d, c));
    cross_out<<<rt_kcuda_blocks(batch * d, RT_KCUDA_THREADS), RT_KCUDA_THREADS, 0, c->stream>>>(
        x0, xl, bias, batch, d, q, y);
    RT_CUDA_CHECK(cudaGetLastError());
    return RT_K_OK;
}

__global__ void cross_grads(const float *x0, const float *q, const float *dy, int64_t n, float *dq,
                            float *dx0, float *dxl)
{
    const int64_t e = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (e >= n) return;
    dq[e] = dy[e] * x0[e];
    dx0[e] = dy[e] * q[e];
    dxl[e] = dy[e];
}

rt_kstatus rt_kcuda_dcn_cross_bwd(const float *x0, const float *xl, const float *p, const float *q,
                                  const float *dy, int64_t batch, int64_t d, int64_t r,
                                  const float *u, const float *v, float *dx0, float *dxl, float *du,
                                  float *dv, float *dbias, rt_kcuda_ctx *c)
{
    if (!c || batch < 0 || d <= 0 || r <= 0 || !u || !v || !du || !dv || !dbias ||
        (batch > 0 && (!x0 || !xl || !p || !q || !dy || !dx0 || !dxl)))
        return RT_K_EINVAL;
    const size_t bd = rt_kcuda_round((size_t)(batch * d + 1) * sizeof(float));
    void *ws;
    RT_K_TRY(rt_kcuda_workspace(c, bd + (size_t)(batch * r + 1) * sizeof(float), &ws));
    float *dq = (float *)ws, *dp = (float *)((char *)ws + bd);
    if (batch > 0)
        cross_grads<<<rt_kcuda_blocks(batch * d, RT_KCUDA_THREADS), RT_KCUDA_THREADS, 0,
                      c->stream>>>(x0, q, dy, batch * d, dq, dx0, dxl);
    column_sums<<<rt_kcuda_blocks(d, RT_KCUDA_THREADS), RT_KCUDA_THREADS, 0, c->stream>>>(dq, batch,
                                                                                          d, dbias);
    RT_K_TRY(rt_kcuda_gemm(1, 0, d, r, batch, 1.0f, dq, d, p, r, 0.0f, du, r, c));
    RT_K_TRY(rt_kcuda_gemm(0, 0, batch, r, d, 1.0f, dq, d, u, r, 0.0f, dp, r, c));
    RT_K_TRY(rt_kcuda_gemm(1, 0, d, r, batch, 1.0f, xl, d, dp, r, 0.0f, dv, r, c));
    RT_K_TRY(rt_kcuda_gemm(0, 1, batch, d, r, 1.0f, dp, r, v, r, 1.0f, dxl, d, c));
    RT_CUDA_CHECK(cudaGetLastError());
    return RT_K_OK;
}
