/* DCN-v2 cross layer with a low-rank weight u v^T. */
#include "internal.h"

#include <stdlib.h>

rt_kstatus rt_kcpu_dcn_cross_fwd(const float *x0, const float *xl, int64_t batch, int64_t d,
                                 int64_t r, const float *u, const float *v, const float *bias,
                                 float *p, float *q, float *y)
{
    if (batch < 0 || d <= 0 || r <= 0 || !u || !v || !bias ||
        (batch > 0 && (!x0 || !xl || !p || !q || !y)))
        return RT_K_EINVAL;
    rt_kstatus st = rt_kcpu_gemm(0, 0, batch, r, d, 1.0f, xl, d, v, r, 0.0f, p, r);
    if (st == RT_K_OK) st = rt_kcpu_gemm(0, 1, batch, d, r, 1.0f, p, r, u, r, 0.0f, q, d);
    if (st != RT_K_OK) return st;
    for (int64_t b = 0; b < batch; b++)
        for (int64_t j = 0; j < d; j++) {
            const int64_t i = b * d + j;
            q[i] += bias[j];
            y[i] = x0[i] * q[i] + xl[i];
        }
    return RT_K_OK;
}

rt_kstatus rt_kcpu_dcn_cross_bwd(const float *x0, const float *xl, const float *p, const float *q,
                                 const float *dy, int64_t batch, int64_t d, int64_t r,
                                 const float *u, const float *v, float *dx0, float *dxl, float *du,
                                 float *dv, float *dbias)
{
    if (batch < 0 || d <= 0 || r <= 0 || !u || !v || !du || !dv || !dbias ||
        (batch > 0 && (!x0 || !xl || !p || !q || !dy || !dx0 || !dxl)))
        return RT_K_EINVAL;
    const size_t bd = (size_t)(batch * d), br = (size_t)(batch * r);
    float *dq = malloc((bd + br + 1) * sizeof *dq);
    if (!dq) return RT_K_ENOMEM;
    float *dp = dq + bd;
    for (size_t i = 0; i < bd; i++) {
        dq[i] = dy[i] * x0[i];
        dx0[i] = dy[i] * q[i];
    }
    rt_kcpu_col_sums(dq, batch, d, dbias);
    rt_kstatus st = rt_kcpu_gemm(1, 0, d, r, batch, 1.0f, dq, d, p, r, 0.0f, du, r);
    if (st == RT_K_OK) st = rt_kcpu_gemm(0, 0, batch, r, d, 1.0f, dq, d, u, r, 0.0f, dp, r);
    if (st == RT_K_OK) st = rt_kcpu_gemm(1, 0, d, r, batch, 1.0f, xl, d, dp, r, 0.0f, dv, r);
    if (st == RT_K_OK) {
        memcpy(dxl, dy, bd * sizeof *dxl);
        st = rt_kcpu_gemm(0, 1, batch, d, r, 1.0f, dp, r, v, r, 1.0f, dxl, d);
    }
    free(dq);
    return st;
}
