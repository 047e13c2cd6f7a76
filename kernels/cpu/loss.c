/* Training losses fused with their gradients: BCE on logits and sampled softmax. */
#include "internal.h"

#include <math.h>
#include <stdlib.h>

rt_kstatus rt_kcpu_bce_logits(const float *logits, const float *labels, int64_t n, float *loss,
                              float *dlogits)
{
    if (n <= 0 || !logits || !labels || !loss || !dlogits) return RT_K_EINVAL;
    double sum = 0.0;
    for (int64_t i = 0; i < n; i++) {
        const float z = logits[i], y = labels[i];
        /* max(z, 0) - z y + log(1 + exp(-|z|)) never overflows. */
        sum += (double)(fmaxf(z, 0.0f) - z * y + log1pf(expf(-fabsf(z))));
        dlogits[i] = (1.0f / (1.0f + expf(-z)) - y) / (float)n;
    }
    *loss = (float)(sum / (double)n);
    return RT_K_OK;
}

rt_kstatus rt_kcpu_sampled_softmax(const float *q, const float *pos, const float *neg,
                                   const float *logq, int64_t batch, int64_t nneg, int64_t d,
                                   float temperature, float *loss, float *dq, float *dpos,
                                   float *dneg)
{
    if (batch <= 0 || nneg < 0 || d <= 0 || !(temperature > 0.0f) || !q || !pos || !loss || !dq ||
        !dpos || (nneg > 0 && (!neg || !dneg)))
        return RT_K_EINVAL;
    float *lg = malloc((size_t)(batch * (nneg + 1)) * sizeof *lg);
    if (!lg) return RT_K_ENOMEM;
    const float inv_t = 1.0f / temperature;
    /* Columns 1..nneg of each row of lg hold q . neg_k, column 0 q . pos. */
    rt_kstatus st =
        rt_kcpu_gemm(0, 1, batch, nneg, d, inv_t, q, d, neg ? neg : q, d, 0.0f, lg + 1, nneg + 1);
    if (st != RT_K_OK) {
        free(lg);
        return st;
    }
    double total = 0.0;
    for (int64_t b = 0; b < batch; b++) {
        float *row = lg + b * (nneg + 1);
        float s = 0.0f;
        for (int64_t e = 0; e < d; e++)
            s += q[b * d + e] * pos[b * d + e];
        row[0] = s * inv_t;
        float mx = row[0];
        for (int64_t k = 1; k <= nneg; k++) {
            row[k] -= logq ? logq[k - 1] : 0.0f;
            mx = fmaxf(mx, row[k]);
        }
        double z = 0.0;
        for (int64_t k = 0; k <= nneg; k++)
            z += exp((double)(row[k] - mx));
        total += (double)mx + log(z) - (double)row[0];
        /* Row becomes d loss / d logit, already divided by the batch and the temperature. */
        for (int64_t k = 0; k <= nneg; k++)
            row[k] = (float)(exp((double)(row[k] - mx)) / z) * inv_t / (float)batch;
        row[0] -= inv_t / (float)batch;
    }
    *loss = (float)(total / (double)batch);
    for (int64_t b = 0; b < batch; b++)
        for (int64_t e = 0; e < d; e++) {
            dq[b * d + e] = lg[b * (nneg + 1)] * pos[b * d + e];
            dpos[b * d + e] = lg[b * (nneg + 1)] * q[b * d + e];
        }
    if (nneg > 0) {
        st = rt_kcpu_gemm(0, 0, batch, d, nneg, 1.0f, lg + 1, nneg + 1, neg, d, 1.0f, dq, d);
        if (st == RT_K_OK)
            st = rt_kcpu_gemm(1, 0, nneg, d, batch, 1.0f, lg + 1, nneg + 1, q, d, 0.0f, dneg, d);
    }
    free(lg);
    return st;
}
