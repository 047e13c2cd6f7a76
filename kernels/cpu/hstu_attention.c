/* Jagged HSTU attention: pointwise SiLU instead of softmax, causal, relative position bias. */
#include "internal.h"

#include <math.h>

static bool cfg_ok(const rt_khstu_cfg *c)
{
    return c && c->heads > 0 && c->head_dim > 0 && c->nbias > 0;
}

static float dot(const float *a, const float *b, int64_t n)
{
    float s = 0.0f;
    for (int64_t e = 0; e < n; e++)
        s += a[e] * b[e];
    return s;
}

static float logit(const rt_khstu_cfg *c, const float *rab, int64_t h, int64_t dist,
                   const float *qi, const float *kj)
{
    const int64_t bucket = dist < c->nbias - 1 ? dist : c->nbias - 1;
    return c->alpha * dot(qi, kj, c->head_dim) + (rab ? rab[h * c->nbias + bucket] : 0.0f);
}

rt_kstatus rt_kcpu_hstu_attn_fwd(const float *q, const float *k, const float *v,
                                 const int64_t *offsets, int64_t nseq, const rt_khstu_cfg *c,
                                 const float *rab, float *out)
{
    int64_t total;
    if (!cfg_ok(c) || !rt_kcpu_offsets_ok(offsets, nseq, &total) ||
        (total > 0 && (!q || !k || !v || !out)))
        return RT_K_EINVAL;
    const int64_t hd = c->head_dim, stride = c->heads * hd;
    memset(out, 0, (size_t)(total * stride) * sizeof *out);
    for (int64_t s = 0; s < nseq; s++)
        for (int64_t h = 0; h < c->heads; h++)
            for (int64_t i = offsets[s]; i < offsets[s + 1]; i++) {
                const float *qi = q + i * stride + h * hd;
                float *oi = out + i * stride + h * hd;
                for (int64_t j = offsets[s]; j <= i; j++) {
                    const float x = logit(c, rab, h, i - j, qi, k + j * stride + h * hd);
                    const float a = x / (1.0f + expf(-x)) * c->inv_n;
                    const float *vj = v + j * stride + h * hd;
                    for (int64_t e = 0; e < hd; e++)
                        oi[e] += a * vj[e];
                }
            }
    return RT_K_OK;
}

rt_kstatus rt_kcpu_hstu_attn_bwd(const float *q, const float *k, const float *v,
                                 const int64_t *offsets, int64_t nseq, const rt_khstu_cfg *c,
                                 const float *rab, const float *dout, float *dq, float *dk,
                                 float *dv, float *drab)
{
    int64_t total;
    if (!cfg_ok(c) || !rt_kcpu_offsets_ok(offsets, nseq, &total) ||
        (total > 0 && (!q || !k || !v || !dout || !dq || !dk || !dv)))
        return RT_K_EINVAL;
    const int64_t hd = c->head_dim, stride = c->heads * hd;
    const size_t bytes = (size_t)(total * stride) * sizeof(float);
    memset(dq, 0, bytes);
    memset(dk, 0, bytes);
    memset(dv, 0, bytes);
    if (drab) memset(drab, 0, (size_t)(c->heads * c->nbias) * sizeof *drab);
    for (int64_t s = 0; s < nseq; s++)
        for (int64_t h = 0; h < c->heads; h++)
            for (int64_t i = offsets[s]; i < offsets[s + 1]; i++) {
                const float *qi = q + i * stride + h * hd, *doi = dout + i * stride + h * hd;
                float *dqi = dq + i * stride + h * hd;
                for (int64_t j = offsets[s]; j <= i; j++) {
                    const int64_t at = j * stride + h * hd;
                    const float x = logit(c, rab, h, i - j, qi, k + at);
                    const float sig = 1.0f / (1.0f + expf(-x));
                    const float a = x * sig * c->inv_n;
                    const float dx =
                        dot(doi, v + at, hd) * c->inv_n * sig * (1.0f + x * (1.0f - sig));
                    for (int64_t e = 0; e < hd; e++) {
                        dv[at + e] += a * doi[e];
                        dqi[e] += c->alpha * dx * k[at + e];
                        dk[at + e] += c->alpha * dx * qi[e];
                    }
                    if (drab) {
                        const int64_t dist = i - j;
                        drab[h * c->nbias + (dist < c->nbias - 1 ? dist : c->nbias - 1)] += dx;
                    }
                }
            }
    return RT_K_OK;
}
