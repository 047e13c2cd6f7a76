/* Per-query negatives with logit sharing: Q = 3 queries, K = 2 negatives each, k = 2, D = 4,
 * against a double-precision reference written from seed 002's loss (query i scores its own
 * negatives and those of query i + 1 mod 3), gradients against central differences, and the
 * segmented calls against one call, bitwise. */
#include "harness.h"
#include "kernels.h"

#include <math.h>
#include <string.h>

enum { Q = 3, K = 2, XK = 2, D = 4, L = 1 + XK * K };

/* Mean over queries of -log softmax_0 of [q.p, q.n(i, .), q.n(i+1, .)]. */
static double ref_loss(const float *q, const float *p, const float *n)
{
    double total = 0;
    for (int i = 0; i < Q; i++) {
        double z[L];
        z[0] = 0;
        for (int e = 0; e < D; e++)
            z[0] += (double)q[i * D + e] * p[i * D + e];
        for (int t = 0; t < XK; t++)
            for (int m = 0; m < K; m++) {
                const float *nv = n + (((i + t) % Q) * K + m) * D;
                double s = 0;
                for (int e = 0; e < D; e++)
                    s += (double)q[i * D + e] * nv[e];
                z[1 + t * K + m] = s;
            }
        double mx = z[0], sum = 0;
        for (int c = 1; c < L; c++)
            mx = fmax(mx, z[c]);
        for (int c = 0; c < L; c++)
            sum += exp(z[c] - mx);
        total += mx + log(sum) - z[0];
    }
    return total / Q;
}

/* The kernels' loss and gradients over segments [0, split) and [split, Q). */
static float run(const float *q, const float *p, const float *n, int split, float *dq, float *dp,
                 float *dn)
{
    float lg[Q * L], loss = NAN;
    int ok = rt_kcpu_neg_logits(q, Q, D, p, 0, Q, 1, 1, lg, L, 0) == RT_K_OK;
    ok &= rt_kcpu_neg_logits(q, Q, D, n, 0, split, K, XK, lg, L, 1) == RT_K_OK;
    ok &= rt_kcpu_neg_logits(q, Q, D, n + split * K * D, split, Q - split, K, XK, lg, L, 1) ==
          RT_K_OK;
    ok &= rt_kcpu_softmax_xent(lg, Q, L, 1.0f / Q, &loss) == RT_K_OK;
    memset(dq, 0, sizeof(float) * Q * D);
    ok &= rt_kcpu_neg_logits_bwd(q, Q, D, p, 0, Q, 1, 1, lg, L, 0, dq, dp) == RT_K_OK;
    ok &= rt_kcpu_neg_logits_bwd(q, Q, D, n, 0, split, K, XK, lg, L, 1, dq, dn) == RT_K_OK;
    ok &= rt_kcpu_neg_logits_bwd(q, Q, D, n + split * K * D, split, Q - split, K, XK, lg, L, 1, dq,
                                 dn + split * K * D) == RT_K_OK;
    return ok ? loss : NAN;
}

static void test_uniform_logits(rt_tctx *t)
{
    /* Zero queries: all 1 + k K = 5 logits are 0, so the loss is log 5 exactly as computed. */
    float q[Q * D] = {0}, p[Q * D], n[Q * K * D], dq[Q * D], dp[Q * D], dn[Q * K * D];
    rt_trng r = {7};
    rt_tfill(&r, p, Q * D, -1, 1);
    rt_tfill(&r, n, Q * K * D, -1, 1);
    float loss = run(q, p, n, 1, dq, dp, dn);
    RT_TCHECK(t, fabs(loss - log(5.0)) < 1e-6);
}

static void test_against_reference(rt_tctx *t)
{
    float q[Q * D], p[Q * D], n[Q * K * D];
    rt_trng r = {11};
    rt_tfill(&r, q, Q * D, -1, 1);
    rt_tfill(&r, p, Q * D, -1, 1);
    rt_tfill(&r, n, Q * K * D, -1, 1);
    float dq[Q * D], dp[Q * D], dn[Q * K * D], dq1[Q * D], dp1[Q * D], dn1[Q * K * D];
    float loss = run(q, p, n, Q, dq, dp, dn);
    RT_TCHECK(t, fabs(loss - ref_loss(q, p, n)) < 1e-6);
    /* Segments change where the negatives come from, not one bit of the result. */
    for (int split = 0; split < Q; split++) {
        float l1 = run(q, p, n, split, dq1, dp1, dn1);
        RT_TCHECK(t, memcmp(&l1, &loss, sizeof l1) == 0 && !memcmp(dq1, dq, sizeof dq) &&
                         !memcmp(dp1, dp, sizeof dp) && !memcmp(dn1, dn, sizeof dn));
    }
    /* Gradients: central differences of the reference, step 1e-3. */
    float *vars[3] = {q, p, n}, *grads[3] = {dq, dp, dn};
    int sizes[3] = {Q * D, Q * D, Q * K * D}, bad = 0;
    for (int v = 0; v < 3; v++)
        for (int i = 0; i < sizes[v]; i++) {
            float keep = vars[v][i];
            vars[v][i] = keep + 1e-3f;
            double up = ref_loss(q, p, n);
            vars[v][i] = keep - 1e-3f;
            double down = ref_loss(q, p, n);
            vars[v][i] = keep;
            bad += fabs((up - down) / 2e-3 - grads[v][i]) > 1e-4;
        }
    RT_TCHECK(t, bad == 0);
}

static void test_bad_args(rt_tctx *t)
{
    float x[Q * L] = {0}, lg[Q * L];
    RT_TCHECK(t, rt_kcpu_neg_logits(x, Q, D, x, 2, 2, K, XK, lg, L, 1) == RT_K_EINVAL);
    RT_TCHECK(t, rt_kcpu_neg_logits(x, Q, D, x, 0, 1, K, XK, lg, L - 1, 1) == RT_K_EINVAL);
    RT_TCHECK(t, rt_kcpu_softmax_xent(lg, 0, L, 1.0f, x) == RT_K_EINVAL);
}

int main(void)
{
    rt_tctx t = {0};
    test_uniform_logits(&t);
    test_against_reference(&t);
    test_bad_args(&t);
    return rt_treport(&t, "test_kcpu_neg_logits");
}
