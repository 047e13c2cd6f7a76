/* Jagged HSTU attention and the losses: hand-computed values, double references and finite
 * differences. */
#include "fdiff.h"
#include "harness.h"
#include "kernels.h"

#include <string.h>

static double silu(double x)
{
    return x / (1 + exp(-x));
}

/* HSTU: packed params q | k | v | rab, loss = sum(out * dout). */
typedef struct {
    const int64_t *off;
    int64_t nseq, total;
    rt_khstu_cfg c;
    const float *dout;
} hstu_ctx;

static double hstu_loss(const double *p, const void *vctx)
{
    const hstu_ctx *x = vctx;
    const int64_t H = x->c.heads, E = x->c.head_dim, S = H * E, N = x->total;
    const double *q = p, *k = q + N * S, *v = k + N * S, *rab = v + N * S;
    double loss = 0;
    for (int64_t s = 0; s < x->nseq; s++)
        for (int64_t h = 0; h < H; h++)
            for (int64_t i = x->off[s]; i < x->off[s + 1]; i++)
                for (int64_t j = x->off[s]; j <= i; j++) {
                    double dot = 0;
                    for (int64_t e = 0; e < E; e++)
                        dot += q[i * S + h * E + e] * k[j * S + h * E + e];
                    const int64_t bucket = i - j < x->c.nbias - 1 ? i - j : x->c.nbias - 1;
                    const double a =
                        silu(x->c.alpha * dot + rab[h * x->c.nbias + bucket]) * x->c.inv_n;
                    for (int64_t e = 0; e < E; e++)
                        loss += a * v[j * S + h * E + e] * x->dout[i * S + h * E + e];
                }
    return loss;
}

static void test_hstu_hand(rt_tctx *t)
{
    /* One sequence of two tokens, one head, dim 1: q = (1, 2), k = (3, -1), v = (5, 7). */
    const float q[] = {1, 2}, k[] = {3, -1}, v[] = {5, 7}, rab[] = {0.5f, -0.25f};
    const int64_t off[] = {0, 2};
    const rt_khstu_cfg c = {1, 1, 2, 0.5f, 0.5f};
    float out[2];
    RT_TCHECK(t, rt_kcpu_hstu_attn_fwd(q, k, v, off, 1, &c, rab, out) == RT_K_OK);
    /* out0 = silu(0.5*3 + 0.5)/2 * 5; out1 = silu(0.5*6 - 0.25)/2*5 + silu(-1 + 0.5)/2*7. */
    const double want[] = {silu(2.0) / 2 * 5, silu(2.75) / 2 * 5 + silu(-0.5) / 2 * 7};
    RT_TCLOSE(t, "hstu hand", out, want, 2, 1e-6, 1e-6);
}

static void test_hstu(rt_tctx *t, rt_trng *r, int64_t nseq, int64_t heads, int64_t hd,
                      int64_t nbias)
{
    int64_t *off = rt_talloc((size_t)(nseq + 1) * 8);
    const int64_t N = rt_toffsets(r, off, nseq, 6, 1), S = heads * hd;
    const int64_t np = 3 * N * S + heads * nbias;
    float *p = rt_talloc((size_t)np * 4), *dout = rt_talloc((size_t)(N * S) * 4),
          *out = rt_talloc((size_t)(N * S) * 4), *g = rt_talloc((size_t)np * 4);
    rt_tfill(r, p, np, -1, 1);
    rt_tfill(r, dout, N * S, -1, 1);
    const rt_khstu_cfg c = {heads, hd, nbias, 0.7f, 1.0f / 6.0f};
    const float *q = p, *k = q + N * S, *v = k + N * S, *rab = v + N * S;
    RT_TCHECK(t, rt_kcpu_hstu_attn_fwd(q, k, v, off, nseq, &c, rab, out) == RT_K_OK);
    double *pd = rt_talloc((size_t)np * 8), *gw = rt_talloc((size_t)np * 8),
           *ow = rt_talloc((size_t)(N * S + 1) * 8);
    for (int64_t i = 0; i < np; i++)
        pd[i] = p[i];
    for (int64_t i = 0; i < N * S; i++) {
        float *onehot = calloc((size_t)(N * S), 4);
        onehot[i] = 1;
        const hstu_ctx x1 = {off, nseq, N, c, onehot};
        ow[i] = hstu_loss(pd, &x1);
        free(onehot);
    }
    RT_TCLOSE(t, "hstu fwd", out, ow, N * S, 1e-5, 1e-5);
    RT_TCHECK(t, rt_kcpu_hstu_attn_bwd(q, k, v, off, nseq, &c, rab, dout, g, g + N * S,
                                       g + 2 * N * S, g + 3 * N * S) == RT_K_OK);
    const hstu_ctx x = {off, nseq, N, c, dout};
    rt_tfdiff(hstu_loss, pd, np, &x, gw);
    RT_TCLOSE(t, "hstu grads", g, gw, np, 1e-3, 1e-4);
    free(off), free(p), free(dout), free(out), free(g), free(pd), free(gw), free(ow);
}

static void test_bce(rt_tctx *t, rt_trng *r)
{
    const float z[] = {0, 2, -100, 100}, y[] = {1, 0, 0, 1};
    float loss, dz[4];
    RT_TCHECK(t, rt_kcpu_bce_logits(z, y, 4, &loss, dz) == RT_K_OK);
    /* log 2, 2 + log(1 + e^-2), ~0, ~0: no overflow at |z| = 100. */
    const double lw = (log(2.0) + 2 + log1p(exp(-2.0))) / 4;
    RT_TCHECK(t, fabs(loss - lw) < 1e-6);
    const double dw[] = {-0.125, 1 / (1 + exp(-2.0)) / 4, 0, 0};
    RT_TCLOSE(t, "bce grad", dz, dw, 4, 1e-6, 1e-7);
    float big_z[100], big_y[100], big_d[100];
    double want_d[100], want_l = 0;
    rt_tfill(r, big_z, 100, -8, 8);
    for (int i = 0; i < 100; i++) {
        big_y[i] = (float)(rt_trand(r) & 1);
        const double p = 1 / (1 + exp(-(double)big_z[i]));
        want_l -= big_y[i] ? log(p) : log(1 - p);
        want_d[i] = (p - big_y[i]) / 100;
    }
    RT_TCHECK(t, rt_kcpu_bce_logits(big_z, big_y, 100, &loss, big_d) == RT_K_OK);
    RT_TCHECK(t, fabs(loss - want_l / 100) < 1e-5);
    RT_TCLOSE(t, "bce grads", big_d, want_d, 100, 1e-5, 1e-7);
    RT_TCHECK(t, rt_kcpu_bce_logits(z, y, 0, &loss, dz) == RT_K_EINVAL);
}

/* Sampled softmax: packed params q | pos | neg. */
typedef struct {
    int64_t b, k, d;
    float temp;
    const float *logq;
} ssm_ctx;

static double ssm_loss(const double *p, const void *vctx)
{
    const ssm_ctx *c = vctx;
    const double *q = p, *pos = q + c->b * c->d, *neg = pos + c->b * c->d;
    double total = 0;
    for (int64_t b = 0; b < c->b; b++) {
        double l0 = 0, z;
        for (int64_t e = 0; e < c->d; e++)
            l0 += q[b * c->d + e] * pos[b * c->d + e];
        l0 /= c->temp;
        z = exp(l0);
        for (int64_t k = 0; k < c->k; k++) {
            double lk = 0;
            for (int64_t e = 0; e < c->d; e++)
                lk += q[b * c->d + e] * neg[k * c->d + e];
            z += exp(lk / c->temp - (c->logq ? c->logq[k] : 0));
        }
        total += log(z) - l0;
    }
    return total / (double)c->b;
}

static void test_sampled_softmax(rt_tctx *t, rt_trng *r, int64_t B, int64_t K, int64_t D,
                                 int with_logq)
{
    const int64_t np = 2 * B * D + K * D;
    float *p = rt_talloc((size_t)np * 4), *g = rt_talloc((size_t)np * 4),
          *logq = rt_talloc((size_t)(K + 1) * 4);
    rt_tfill(r, p, np, -1, 1);
    rt_tfill(r, logq, K, -3, 0);
    float loss;
    const ssm_ctx c = {B, K, D, 0.5f, with_logq ? logq : NULL};
    RT_TCHECK(t, rt_kcpu_sampled_softmax(p, p + B * D, p + 2 * B * D, c.logq, B, K, D, c.temp,
                                         &loss, g, g + B * D, g + 2 * B * D) == RT_K_OK);
    double *pd = rt_talloc((size_t)np * 8), *gw = rt_talloc((size_t)np * 8);
    for (int64_t i = 0; i < np; i++)
        pd[i] = p[i];
    RT_TCHECK(t, fabs(loss - ssm_loss(pd, &c)) < 1e-5 * (1 + fabs(loss)));
    rt_tfdiff(ssm_loss, pd, np, &c, gw);
    RT_TCLOSE(t, "sampled softmax grads", g, gw, np, 1e-3, 1e-5);
    free(p), free(g), free(logq), free(pd), free(gw);
}

int main(void)
{
    rt_tctx t = {0};
    rt_trng r = {8};
    test_hstu_hand(&t);
    test_hstu(&t, &r, 1, 1, 1, 1);
    test_hstu(&t, &r, 4, 2, 3, 3);
    test_hstu(&t, &r, 3, 3, 5, 8);
    test_bce(&t, &r);
    test_sampled_softmax(&t, &r, 1, 0, 1, 0);
    test_sampled_softmax(&t, &r, 3, 5, 4, 0);
    test_sampled_softmax(&t, &r, 7, 13, 9, 1);
    return rt_treport(&t, "test_kcpu_attention_loss");
}
