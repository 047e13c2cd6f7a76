/* FuXi-alpha's positional (and temporal) attention channel: the HSTU attention whose weights
 * depend only on the distance i - j, so it has no q.k product: per head and token pair a
 * learned bias passes through SiLU and scales v_j. */
#include "internal.h"

#include <math.h>

static bool cfg_ok(const rt_khstu_cfg *c)
{
    return c && c->heads > 0 && c->head_dim > 0 && c->nbias > 0;
}

static int64_t bucket(const rt_khstu_cfg *c, int64_t dist)
{
    return dist < c->nbias - 1 ? dist : c->nbias - 1;
}

rt_kstatus rt_kcpu_relpos_attn_fwd(const float *v, const int64_t *offsets, int64_t nseq,
                                   const rt_khstu_cfg *c, const float *rab, float *out)
{
    int64_t total;
    if (!cfg_ok(c) || !rab || !rt_kcpu_offsets_ok(offsets, nseq, &total) ||
        (total > 0 && (!v || !out)))
        return RT_K_EINVAL;
    const int64_t hd = c->head_dim, stride = c->heads * hd;
    memset(out, 0, (size_t)(total * stride) * sizeof *out);
    for (int64_t s = 0; s < nseq; s++)
        for (int64_t h = 0; h < c->heads; h++)
            for (int64_t i = offsets[s]; i < offsets[s + 1]; i++) {
                float *oi = out + i * stride + h * hd;
                for (int64_t j = offsets[s]; j <= i; j++) {
                    const float x = rab[h * c->nbias + bucket(c, i - j)];
                    const float a = x / (1.0f + expf(-x)) * c->inv_n;
                    const float *vj = v + j * stride + h * hd;
                    for (int64_t e = 0; e < hd; e++)
                        oi[e] += a * vj[e];
                }
            }
    return RT_K_OK;
}

rt_kstatus rt_kcpu_relpos_attn_bwd(const float *v, const int64_t *offsets, int64_t nseq,
                                   const rt_khstu_cfg *c, const float *rab, const float *dout,
                                   float *dv, float *drab)
{
    int64_t total;
    if (!cfg_ok(c) || !rab || !rt_kcpu_offsets_ok(offsets, nseq, &total) ||
        (total > 0 && (!v || !dout || !dv)))
        return RT_K_EINVAL;
    const int64_t hd = c->head_dim, stride = c->heads * hd;
    memset(dv, 0, (size_t)(total * stride) * sizeof *dv);
    if (drab) memset(drab, 0, (size_t)(c->heads * c->nbias) * sizeof *drab);
    for (int64_t s = 0; s < nseq; s++)
        for (int64_t h = 0; h < c->heads; h++)
            for (int64_t i = offsets[s]; i < offsets[s + 1]; i++) {
                const float *doi = dout + i * stride + h * hd;
                for (int64_t j = offsets[s]; j <= i; j++) {
                    const int64_t b = h * c->nbias + bucket(c, i - j);
                    const float x = rab[b], sig = 1.0f / (1.0f + expf(-x));
                    const float a = x * sig * c->inv_n;
                    const float *vj = v + j * stride + h * hd;
                    float *dvj = dv + j * stride + h * hd, dov = 0.0f;
                    for (int64_t e = 0; e < hd; e++) {
                        dvj[e] += a * doi[e];
                        dov += doi[e] * vj[e];
                    }
                    if (drab) drab[b] += dov * c->inv_n * sig * (1.0f + x * (1.0f - sig));
                }
            }
    return RT_K_OK;
}
