/* kernels/cpu/dot_interaction.c at 72e2f4a (before the row-tiled backward), renamed. */
#include <string.h>
#include "kernels.h"

static float dot(const float *a, const float *b, int64_t d)
{
    float s = 0.0f;
    for (int64_t j = 0; j < d; j++)
        s += a[j] * b[j];
    return s;
}

rt_kstatus old_fwd(const float *t, int64_t batch, int64_t nf, int64_t d,
                                    float *out)
{
    if (batch < 0 || nf < 2 || d <= 0 || (batch > 0 && (!t || !out))) return RT_K_EINVAL;
    const int64_t npairs = nf * (nf - 1) / 2;
    for (int64_t b = 0; b < batch; b++) {
        const float *tb = t + b * nf * d;
        float *ob = out + b * npairs;
        for (int64_t i = 1; i < nf; i++)
            for (int64_t j = 0; j < i; j++)
                *ob++ = dot(tb + i * d, tb + j * d, d);
    }
    return RT_K_OK;
}

rt_kstatus old_bwd(const float *t, const float *dout, int64_t batch, int64_t nf,
                                    int64_t d, float *dt)
{
    if (batch < 0 || nf < 2 || d <= 0 || (batch > 0 && (!t || !dout || !dt))) return RT_K_EINVAL;
    const int64_t npairs = nf * (nf - 1) / 2;
    memset(dt, 0, (size_t)(batch * nf * d) * sizeof *dt);
    for (int64_t b = 0; b < batch; b++) {
        const float *tb = t + b * nf * d;
        const float *g = dout + b * npairs;
        float *db = dt + b * nf * d;
        for (int64_t i = 1; i < nf; i++)
            for (int64_t j = 0; j < i; j++) {
                const float gp = *g++;
                for (int64_t e = 0; e < d; e++) {
                    db[i * d + e] += gp * tb[j * d + e];
                    db[j * d + e] += gp * tb[i * d + e];
                }
            }
    }
    return RT_K_OK;
}
