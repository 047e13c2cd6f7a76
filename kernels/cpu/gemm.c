/* Row-major single-precision GEMM: CBLAS when available, otherwise a cache-blocked loop. */
#include "internal.h"

#ifdef RT_HAVE_CBLAS
#include <cblas.h>
#endif

#ifndef RT_HAVE_CBLAS
enum { BLOCK = 64 };

static float elem(const float *x, int64_t ld, int trans, int64_t r, int64_t c)
{
    return trans ? x[c * ld + r] : x[r * ld + c];
}

static void blocked_gemm(int ta, int tb, int64_t m, int64_t n, int64_t k, float alpha,
                         const float *a, int64_t lda, const float *b, int64_t ldb, float *c,
                         int64_t ldc)
{
    for (int64_t i0 = 0; i0 < m; i0 += BLOCK)
        for (int64_t p0 = 0; p0 < k; p0 += BLOCK)
            for (int64_t j0 = 0; j0 < n; j0 += BLOCK) {
                const int64_t i1 = i0 + BLOCK < m ? i0 + BLOCK : m;
                const int64_t p1 = p0 + BLOCK < k ? p0 + BLOCK : k;
                const int64_t j1 = j0 + BLOCK < n ? j0 + BLOCK : n;
                for (int64_t i = i0; i < i1; i++)
                    for (int64_t p = p0; p < p1; p++) {
                        const float aip = alpha * elem(a, lda, ta, i, p);
                        float *ci = c + i * ldc;
                        for (int64_t j = j0; j < j1; j++)
                            ci[j] += aip * elem(b, ldb, tb, p, j);
                    }
            }
}
#endif

const char *rt_kcpu_gemm_library(void)
{
#ifdef RT_HAVE_CBLAS
    return "CBLAS " RT_CBLAS_NAME;
#else
    return "built-in blocked loop";
#endif
}

rt_kstatus rt_kcpu_gemm(int trans_a, int trans_b, int64_t m, int64_t n, int64_t k, float alpha,
                        const float *a, int64_t lda, const float *b, int64_t ldb, float beta,
                        float *c, int64_t ldc)
{
    if (m < 0 || n < 0 || k < 0 || ldc < (n > 1 ? n : 1) ||
        lda < ((trans_a ? m : k) > 1 ? (trans_a ? m : k) : 1) ||
        ldb < ((trans_b ? k : n) > 1 ? (trans_b ? k : n) : 1) || (m * n > 0 && !c) ||
        (m * n * k > 0 && (!a || !b)))
        return RT_K_EINVAL;
    /* CBLAS takes int sizes. */
    if (m > INT32_MAX || n > INT32_MAX || k > INT32_MAX || lda > INT32_MAX || ldb > INT32_MAX ||
        ldc > INT32_MAX)
        return RT_K_EINVAL;
    if (m == 0 || n == 0) return RT_K_OK;
#ifdef RT_HAVE_CBLAS
    if (k > 0) {
        cblas_sgemm(CblasRowMajor, trans_a ? CblasTrans : CblasNoTrans,
                    trans_b ? CblasTrans : CblasNoTrans, (int)m, (int)n, (int)k, alpha, a, (int)lda,
                    b, (int)ldb, beta, c, (int)ldc);
        return RT_K_OK;
    }
#endif
    for (int64_t i = 0; i < m; i++)
        for (int64_t j = 0; j < n; j++)
            c[i * ldc + j] = beta == 0.0f ? 0.0f : beta * c[i * ldc + j];
#ifndef RT_HAVE_CBLAS
    blocked_gemm(trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, c, ldc);
#endif
    return RT_K_OK;
}
