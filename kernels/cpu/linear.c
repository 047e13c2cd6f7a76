/* Fully connected layer (one MLP layer) forward and backward through GEMM. */
#include "internal.h"

#include <math.h>
#include <stdlib.h>

static bool act_ok(rt_kact act)
{
    return act == RT_KACT_NONE || act == RT_KACT_RELU || act == RT_KACT_SIGMOID;
}

rt_kstatus rt_kcpu_linear_fwd(const float *x, int64_t batch, int64_t in, int64_t out,
                              const float *w, const float *bias, rt_kact act, float *y)
{
    if (batch < 0 || in <= 0 || out <= 0 || !act_ok(act) || !w || (batch > 0 && (!x || !y)))
        return RT_K_EINVAL;
    rt_kstatus st = rt_kcpu_gemm(0, 1, batch, out, in, 1.0f, x, in, w, in, 0.0f, y, out);
    if (st != RT_K_OK) return st;
    for (int64_t b = 0; b < batch; b++) {
        float *row = y + b * out;
        for (int64_t o = 0; o < out; o++) {
            const float z = row[o] + (bias ? bias[o] : 0.0f);
            row[o] = act == RT_KACT_RELU      ? (z > 0.0f ? z : 0.0f)
                     : act == RT_KACT_SIGMOID ? 1.0f / (1.0f + expf(-z))
                                              : z;
        }
    }
    return RT_K_OK;
}

rt_kstatus rt_kcpu_linear_bwd(const float *x, const float *y, const float *dy, int64_t batch,
                              int64_t in, int64_t out, const float *w, rt_kact act, float *dx,
                              float *dw, float *db)
{
    if (batch < 0 || in <= 0 || out <= 0 || !act_ok(act) || !w || !dw ||
        (batch > 0 && (!x || !y || !dy)))
        return RT_K_EINVAL;
    float *dz = malloc((size_t)(batch * out > 0 ? batch * out : 1) * sizeof *dz);
    if (!dz) return RT_K_ENOMEM;
    for (int64_t i = 0; i < batch * out; i++)
        dz[i] = act == RT_KACT_RELU      ? (y[i] > 0.0f ? dy[i] : 0.0f)
                : act == RT_KACT_SIGMOID ? dy[i] * y[i] * (1.0f - y[i])
                                         : dy[i];
    rt_kstatus st = rt_kcpu_gemm(1, 0, out, in, batch, 1.0f, dz, out, x, in, 0.0f, dw, in);
    if (st == RT_K_OK && dx)
        st = rt_kcpu_gemm(0, 0, batch, in, out, 1.0f, dz, out, w, in, 0.0f, dx, in);
    if (st == RT_K_OK && db)
        for (int64_t o = 0; o < out; o++) {
            float s = 0.0f;
            for (int64_t b = 0; b < batch; b++)
                s += dz[b * out + o];
            db[o] = s;
        }
    free(dz);
    return st;
}
