/* Unfused jagged HSTU attention (plan.attention unfused): the fused kernel's math split into
 * separate passes that materialize each sample's causal score matrix per head in memory, so
 * exec measures the HBM round trips models/layer_ops.c prices. Each pass keeps the fused
 * kernel's loop order (sample, head, i, j ascending), so the sums are taken in the same order.
 *
 * Score layout: sample s, head h, rows i >= j of the sample's L tokens, packed lower-triangular:
 * base(s) + h * L (L + 1) / 2 + i (i + 1) / 2 + j, base(s) = heads * sum over earlier samples of
 * L (L + 1) / 2 (rt_kcpu_attn_pairs). */
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

static int64_t tri(int64_t len)
{
    return len * (len + 1) / 2;
}

static int64_t bucket(const rt_khstu_cfg *c, int64_t dist)
{
    return dist < c->nbias - 1 ? dist : c->nbias - 1;
}

rt_kstatus rt_kcpu_attn_pairs(const int64_t *offsets, int64_t nseq, const rt_khstu_cfg *c,
                              int64_t *n)
{
    int64_t total;
    if (!cfg_ok(c) || !n || !rt_kcpu_offsets_ok(offsets, nseq, &total)) return RT_K_EINVAL;
    int64_t p = 0;
    for (int64_t s = 0; s < nseq; s++)
        p += tri(offsets[s + 1] - offsets[s]);
    *n = p * c->heads;
    return RT_K_OK;
}

rt_kstatus rt_kcpu_attn_scores(const float *q, const float *k, const int64_t *offsets, int64_t nseq,
                               const rt_khstu_cfg *c, const float *rab, float *s)
{
    int64_t total;
    if (!cfg_ok(c) || !rt_kcpu_offsets_ok(offsets, nseq, &total) || (total > 0 && (!q || !k || !s)))
        return RT_K_EINVAL;
    const int64_t hd = c->head_dim, stride = c->heads * hd;
    float *o = s;
    for (int64_t b = 0; b < nseq; b++)
        for (int64_t h = 0; h < c->heads; h++)
            for (int64_t i = offsets[b]; i < offsets[b + 1]; i++)
                for (int64_t j = offsets[b]; j <= i; j++)
                    *o++ = c->alpha * dot(q + i * stride + h * hd, k + j * stride + h * hd, hd) +
                           (rab ? rab[h * c->nbias + bucket(c, i - j)] : 0.0f);
    return RT_K_OK;
}

rt_kstatus rt_kcpu_attn_silu(const float *s, int64_t n, float inv_n, float *a)
{
    if (n < 0 || (n > 0 && (!s || !a))) return RT_K_EINVAL;
    for (int64_t e = 0; e < n; e++)
        a[e] = s[e] / (1.0f + expf(-s[e])) * inv_n;
    return RT_K_OK;
}

rt_kstatus rt_kcpu_attn_pv(const float *a, const float *v, const int64_t *offsets, int64_t nseq,
                           const rt_khstu_cfg *c, float *out)
{
    int64_t total;
    if (!cfg_ok(c) || !rt_kcpu_offsets_ok(offsets, nseq, &total) ||
        (total > 0 && (!a || !v || !out)))
        return RT_K_EINVAL;
    const int64_t hd = c->head_dim, stride = c->heads * hd;
    memset(out, 0, (size_t)(total * stride) * sizeof *out);
    const float *p = a;
    for (int64_t b = 0; b < nseq; b++)
        for (int64_t h = 0; h < c->heads; h++)
            for (int64_t i = offsets[b]; i < offsets[b + 1]; i++) {
                float *oi = out + i * stride + h * hd;
                for (int64_t j = offsets[b]; j <= i; j++) {
                    const float w = *p++, *vj = v + j * stride + h * hd;
                    for (int64_t e = 0; e < hd; e++)
                        oi[e] += w * vj[e];
                }
            }
    return RT_K_OK;
}

rt_kstatus rt_kcpu_attn_pv_bwd(const float *a, const float *v, const float *dout,
                               const int64_t *offsets, int64_t nseq, const rt_khstu_cfg *c,
                               float *da, float *dv)
{
    int64_t total;
    if (!cfg_ok(c) || !rt_kcpu_offsets_ok(offsets, nseq, &total) ||
        (total > 0 && (!a || !v || !dout || !da || !dv)))
        return RT_K_EINVAL;
    const int64_t hd = c->head_dim, stride = c->heads * hd;
    memset(dv, 0, (size_t)(total * stride) * sizeof *dv);
    int64_t p = 0;
    for (int64_t b = 0; b < nseq; b++)
        for (int64_t h = 0; h < c->heads; h++)
            for (int64_t i = offsets[b]; i < offsets[b + 1]; i++) {
                const float *doi = dout + i * stride + h * hd;
                for (int64_t j = offsets[b]; j <= i; j++, p++) {
                    const int64_t at = j * stride + h * hd;
                    da[p] = dot(doi, v + at, hd);
                    for (int64_t e = 0; e < hd; e++)
                        dv[at + e] += a[p] * doi[e];
                }
            }
    return RT_K_OK;
}

rt_kstatus rt_kcpu_attn_silu_bwd(const float *s, const float *da, int64_t n, float inv_n, float *ds)
{
    if (n < 0 || (n > 0 && (!s || !da || !ds))) return RT_K_EINVAL;
    for (int64_t e = 0; e < n; e++) {
        const float sig = 1.0f / (1.0f + expf(-s[e]));
        ds[e] = da[e] * inv_n * sig * (1.0f + s[e] * (1.0f - sig));
    }
    return RT_K_OK;
}

rt_kstatus rt_kcpu_attn_scores_bwd(const float *q, const float *k, const float *ds,
                                   const int64_t *offsets, int64_t nseq, const rt_khstu_cfg *c,
                                   float *dq, float *dk, float *drab)
{
    int64_t total;
    if (!cfg_ok(c) || !rt_kcpu_offsets_ok(offsets, nseq, &total) ||
        (total > 0 && (!q || !k || !ds || !dq || !dk)))
        return RT_K_EINVAL;
    const int64_t hd = c->head_dim, stride = c->heads * hd;
    const size_t bytes = (size_t)(total * stride) * sizeof(float);
    memset(dq, 0, bytes);
    memset(dk, 0, bytes);
    if (drab) memset(drab, 0, (size_t)(c->heads * c->nbias) * sizeof *drab);
    const float *p = ds;
    for (int64_t b = 0; b < nseq; b++)
        for (int64_t h = 0; h < c->heads; h++)
            for (int64_t i = offsets[b]; i < offsets[b + 1]; i++) {
                const float *qi = q + i * stride + h * hd;
                float *dqi = dq + i * stride + h * hd;
                for (int64_t j = offsets[b]; j <= i; j++) {
                    const int64_t at = j * stride + h * hd;
                    const float dx = *p++;
                    for (int64_t e = 0; e < hd; e++) {
                        dqi[e] += c->alpha * dx * k[at + e];
                        dk[at + e] += c->alpha * dx * qi[e];
                    }
                    if (drab) drab[h * c->nbias + bucket(c, i - j)] += dx;
                }
            }
    return RT_K_OK;
}

/* FuXi's position and time channels (relpos_attn_*) unfused: their weights depend on i - j
 * alone, so the forward writes P = silu(rab) inv_n straight from the bias (no scores pass)
 * and pv reads it; the backward's pv_bwd writes dA, which relpos_bias_bwd reduces into drab. */
rt_kstatus rt_kcpu_relpos_weights(const int64_t *offsets, int64_t nseq, const rt_khstu_cfg *c,
                                  const float *rab, float *p)
{
    int64_t total;
    if (!cfg_ok(c) || !rab || !rt_kcpu_offsets_ok(offsets, nseq, &total) || (total > 0 && !p))
        return RT_K_EINVAL;
    float *o = p;
    for (int64_t b = 0; b < nseq; b++)
        for (int64_t h = 0; h < c->heads; h++)
            for (int64_t i = offsets[b]; i < offsets[b + 1]; i++)
                for (int64_t j = offsets[b]; j <= i; j++) {
                    const float x = rab[h * c->nbias + bucket(c, i - j)];
                    *o++ = x / (1.0f + expf(-x)) * c->inv_n;
                }
    return RT_K_OK;
}

rt_kstatus rt_kcpu_relpos_bias_bwd(const float *da, const int64_t *offsets, int64_t nseq,
                                   const rt_khstu_cfg *c, const float *rab, float *drab)
{
    int64_t total;
    if (!cfg_ok(c) || !rab || !drab || !rt_kcpu_offsets_ok(offsets, nseq, &total) ||
        (total > 0 && !da))
        return RT_K_EINVAL;
    memset(drab, 0, (size_t)(c->heads * c->nbias) * sizeof *drab);
    const float *p = da;
    for (int64_t b = 0; b < nseq; b++)
        for (int64_t h = 0; h < c->heads; h++)
            for (int64_t i = offsets[b]; i < offsets[b + 1]; i++)
                for (int64_t j = offsets[b]; j <= i; j++) {
                    const int64_t at = h * c->nbias + bucket(c, i - j);
                    const float x = rab[at], sig = 1.0f / (1.0f + expf(-x));
                    drab[at] += *p++ * c->inv_n * sig * (1.0f + x * (1.0f - sig));
                }
    return RT_K_OK;
}
