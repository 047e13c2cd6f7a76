/* Unfused HSTU attention (plan.attention unfused) against the fused kernel on random jagged
 * inputs: forward output and every gradient (dq, dk, dv, drab) within rtol 1e-5, atol 1e-6.
 * The passes keep the fused loop order, so only the compiler's contraction of the split
 * expressions may differ; the tolerance covers float rounding, not a different formula. */
#include "harness.h"
#include "kernels.h"

#include <string.h>

static void widen(const float *f, int64_t n, double *d)
{
    for (int64_t i = 0; i < n; i++)
        d[i] = f[i];
}

static void test_case(rt_tctx *t, rt_trng *r, int64_t nseq, int64_t max_len, int64_t heads,
                      int64_t hd, int64_t nbias, int with_rab)
{
    int64_t *off = rt_talloc((size_t)(nseq + 1) * 8);
    const int64_t N = rt_toffsets(r, off, nseq, max_len, 1), S = heads * hd, NS = N * S;
    const int64_t nr = heads * nbias;
    float *q = rt_talloc((size_t)(NS + 1) * 4), *k = rt_talloc((size_t)(NS + 1) * 4),
          *v = rt_talloc((size_t)(NS + 1) * 4), *dout = rt_talloc((size_t)(NS + 1) * 4),
          *rab = rt_talloc((size_t)nr * 4);
    rt_tfill(r, q, NS, -1, 1), rt_tfill(r, k, NS, -1, 1), rt_tfill(r, v, NS, -1, 1);
    rt_tfill(r, dout, NS, -1, 1), rt_tfill(r, rab, nr, -1, 1);
    const float *bias = with_rab ? rab : NULL;
    const rt_khstu_cfg c = {heads, hd, nbias, 0.6f, 1.0f / (float)nbias};
    /* fused reference: out, dq, dk, dv, drab */
    float *ref = rt_talloc((size_t)(4 * NS + nr + 1) * 4);
    RT_TCHECK(t, rt_kcpu_hstu_attn_fwd(q, k, v, off, nseq, &c, bias, ref) == RT_K_OK);
    RT_TCHECK(t, rt_kcpu_hstu_attn_bwd(q, k, v, off, nseq, &c, bias, dout, ref + NS, ref + 2 * NS,
                                       ref + 3 * NS, with_rab ? ref + 4 * NS : NULL) == RT_K_OK);
    int64_t np = -1;
    RT_TCHECK(t, rt_kcpu_attn_pairs(off, nseq, &c, &np) == RT_K_OK);
    int64_t want_np = 0;
    for (int64_t s = 0; s < nseq; s++)
        want_np += heads * (off[s + 1] - off[s]) * (off[s + 1] - off[s] + 1) / 2;
    RT_TCHECK(t, np == want_np);
    float *sc = rt_talloc((size_t)(np + 1) * 4), *a = rt_talloc((size_t)(np + 1) * 4),
          *da = rt_talloc((size_t)(np + 1) * 4), *got = rt_talloc((size_t)(4 * NS + nr + 1) * 4);
    RT_TCHECK(t, rt_kcpu_attn_scores(q, k, off, nseq, &c, bias, sc) == RT_K_OK);
    RT_TCHECK(t, rt_kcpu_attn_silu(sc, np, c.inv_n, a) == RT_K_OK);
    RT_TCHECK(t, rt_kcpu_attn_pv(a, v, off, nseq, &c, got) == RT_K_OK);
    RT_TCHECK(t, rt_kcpu_attn_pv_bwd(a, v, dout, off, nseq, &c, da, got + 3 * NS) == RT_K_OK);
    RT_TCHECK(t, rt_kcpu_attn_silu_bwd(sc, da, np, c.inv_n, da) == RT_K_OK);
    RT_TCHECK(t, rt_kcpu_attn_scores_bwd(q, k, da, off, nseq, &c, got + NS, got + 2 * NS,
                                         with_rab ? got + 4 * NS : NULL) == RT_K_OK);
    const int64_t n = 4 * NS + (with_rab ? nr : 0);
    double *want = rt_talloc((size_t)(n + 1) * 8);
    widen(ref, n, want);
    RT_TCLOSE(t, "unfused out", got, want, NS, 1e-5, 1e-6);
    RT_TCLOSE(t, "unfused dq", got + NS, want + NS, NS, 1e-5, 1e-6);
    RT_TCLOSE(t, "unfused dk", got + 2 * NS, want + 2 * NS, NS, 1e-5, 1e-6);
    RT_TCLOSE(t, "unfused dv", got + 3 * NS, want + 3 * NS, NS, 1e-5, 1e-6);
    if (with_rab) RT_TCLOSE(t, "unfused drab", got + 4 * NS, want + 4 * NS, nr, 1e-5, 1e-6);
    free(off), free(q), free(k), free(v), free(dout), free(rab), free(ref), free(sc), free(a);
    free(da), free(got), free(want);
}

/* FuXi's position channel: relpos_weights, attn_pv, attn_pv_bwd, relpos_bias_bwd against
 * relpos_attn_fwd/bwd, same tolerance. */
static void test_relpos(rt_tctx *t, rt_trng *r, int64_t nseq, int64_t max_len, int64_t heads,
                        int64_t hd, int64_t nbias)
{
    int64_t *off = rt_talloc((size_t)(nseq + 1) * 8);
    const int64_t N = rt_toffsets(r, off, nseq, max_len, 1), NS = N * heads * hd;
    const int64_t nr = heads * nbias;
    float *v = rt_talloc((size_t)(NS + 1) * 4), *dout = rt_talloc((size_t)(NS + 1) * 4),
          *rab = rt_talloc((size_t)nr * 4), *ref = rt_talloc((size_t)(2 * NS + nr) * 4),
          *got = rt_talloc((size_t)(2 * NS + nr) * 4);
    rt_tfill(r, v, NS, -1, 1), rt_tfill(r, dout, NS, -1, 1), rt_tfill(r, rab, nr, -2, 2);
    const rt_khstu_cfg c = {heads, hd, nbias, 0.0f, 1.0f / (float)nbias};
    RT_TCHECK(t, rt_kcpu_relpos_attn_fwd(v, off, nseq, &c, rab, ref) == RT_K_OK);
    RT_TCHECK(t, rt_kcpu_relpos_attn_bwd(v, off, nseq, &c, rab, dout, ref + NS, ref + 2 * NS) ==
                     RT_K_OK);
    int64_t np;
    RT_TCHECK(t, rt_kcpu_attn_pairs(off, nseq, &c, &np) == RT_K_OK);
    float *p = rt_talloc((size_t)(np + 1) * 4), *da = rt_talloc((size_t)(np + 1) * 4);
    RT_TCHECK(t, rt_kcpu_relpos_weights(off, nseq, &c, rab, p) == RT_K_OK);
    RT_TCHECK(t, rt_kcpu_attn_pv(p, v, off, nseq, &c, got) == RT_K_OK);
    RT_TCHECK(t, rt_kcpu_attn_pv_bwd(p, v, dout, off, nseq, &c, da, got + NS) == RT_K_OK);
    RT_TCHECK(t, rt_kcpu_relpos_bias_bwd(da, off, nseq, &c, rab, got + 2 * NS) == RT_K_OK);
    double *want = rt_talloc((size_t)(2 * NS + nr) * 8);
    widen(ref, 2 * NS + nr, want);
    RT_TCLOSE(t, "relpos out", got, want, NS, 1e-5, 1e-6);
    RT_TCLOSE(t, "relpos dv", got + NS, want + NS, NS, 1e-5, 1e-6);
    RT_TCLOSE(t, "relpos drab", got + 2 * NS, want + 2 * NS, nr, 1e-5, 1e-6);
    free(off), free(v), free(dout), free(rab), free(ref), free(got), free(p), free(da), free(want);
}

static void test_errors(rt_tctx *t)
{
    const int64_t bad[] = {0, 2, 1};
    const rt_khstu_cfg c = {1, 1, 1, 1.0f, 1.0f};
    int64_t n;
    float x[4];
    RT_TCHECK(t, rt_kcpu_attn_pairs(bad, 2, &c, &n) == RT_K_EINVAL);
    RT_TCHECK(t, rt_kcpu_attn_scores(x, x, bad, 2, &c, NULL, x) == RT_K_EINVAL);
    RT_TCHECK(t, rt_kcpu_attn_silu(x, -1, 1.0f, x) == RT_K_EINVAL);
}

int main(void)
{
    rt_tctx t = {0};
    rt_trng r = {13};
    test_case(&t, &r, 1, 1, 1, 1, 1, 1);
    test_case(&t, &r, 5, 9, 2, 4, 4, 1);
    test_case(&t, &r, 7, 17, 3, 8, 32, 1);
    test_case(&t, &r, 4, 12, 2, 6, 5, 0);
    test_relpos(&t, &r, 5, 9, 2, 4, 4);
    test_relpos(&t, &r, 6, 17, 3, 8, 32);
    test_errors(&t);
    return rt_treport(&t, "test_kcpu_attention_unfused");
}
