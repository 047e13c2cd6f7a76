/* The dense optimizer step and a plain axpy: flat fp32 buffers, one pass each. */
#include <math.h>

#include "kernels.h"

rt_kstatus rt_kcpu_axpy(int64_t n, float a, const float *x, float *y)
{
    if (n < 0 || (n && (!x || !y))) return RT_K_EINVAL;
    for (int64_t i = 0; i < n; i++)
        y[i] += a * x[i];
    return RT_K_OK;
}

rt_kstatus rt_kcpu_adam(int64_t n, const rt_kadam *o, float *w, const float *g, float *m, float *v)
{
    if (!o || n < 0 || (n && (!w || !g))) return RT_K_EINVAL;
    if (o->kind == RT_KOPT_SGD) {
        for (int64_t i = 0; i < n; i++)
            w[i] -= o->lr * (g[i] * o->grad_scale);
        return RT_K_OK;
    }
    if (o->kind != RT_KOPT_ADAM || o->step < 1 || o->beta1 < 0 || o->beta1 >= 1 || o->beta2 < 0 ||
        o->beta2 >= 1 || (n && (!m || !v)))
        return RT_K_EINVAL;
    /* Bias corrections in double: pow(beta, step) underflows gracefully for long runs. */
    float c1 = (float)(1.0 - pow(o->beta1, (double)o->step));
    float c2 = (float)(1.0 - pow(o->beta2, (double)o->step));
    for (int64_t i = 0; i < n; i++) {
        float gi = g[i] * o->grad_scale;
        m[i] = o->beta1 * m[i] + (1 - o->beta1) * gi;
        v[i] = o->beta2 * v[i] + (1 - o->beta2) * gi * gi;
        w[i] -= o->lr * (m[i] / c1) / (sqrtf(v[i] / c2) + o->eps);
    }
    return RT_K_OK;
}
