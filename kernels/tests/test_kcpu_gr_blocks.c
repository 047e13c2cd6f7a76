/* The kernels of the generative-recommender blocks (SiLU, elementwise product, layer norm, row
 * softmax, MMoE mix, FuXi's positional attention): forwards against double references, and
 * backwards against finite differences of the double forward, through the scalar
 * loss = sum(out * dout) with a random dout. */
#include "fdiff.h"
#include "harness.h"
#include "kernels.h"

#include <string.h>

static double silu(double x)
{
    return x / (1 + exp(-x));
}

/* What the double forward of one kernel needs: its shape, its random output gradient. */
typedef struct {
    int kind;
    int64_t n, rows, dim, nexp;
    const int64_t *off;
    int64_t nseq;
    rt_khstu_cfg c;
    const float *dout;
    double *out; /* when set: the forward's output is stored here too */
} ref_ctx;

enum { K_SILU, K_MUL, K_LN, K_SOFTMAX, K_MIX, K_RELPOS };

static double ref_forward(const double *p, const void *vctx)
{
    const ref_ctx *x = vctx;
    double loss = 0, *o = x->out;
    switch (x->kind) {
    case K_SILU:
        for (int64_t i = 0; i < x->n; i++) {
            const double y = silu(p[i]);
            if (o) o[i] = y;
            loss += y * x->dout[i];
        }
        break;
    case K_MUL:
        for (int64_t i = 0; i < x->n; i++) {
            const double y = p[i] * p[x->n + i];
            if (o) o[i] = y;
            loss += y * x->dout[i];
        }
        break;
    case K_LN:
        for (int64_t r = 0; r < x->rows; r++) {
            const double *xr = p + r * x->dim;
            double mu = 0, var = 0;
            for (int64_t e = 0; e < x->dim; e++)
                mu += xr[e];
            mu /= (double)x->dim;
            for (int64_t e = 0; e < x->dim; e++)
                var += (xr[e] - mu) * (xr[e] - mu);
            const double rs = 1 / sqrt(var / (double)x->dim + 1e-5);
            for (int64_t e = 0; e < x->dim; e++) {
                const double y = (xr[e] - mu) * rs;
                if (o) o[r * x->dim + e] = y;
                loss += y * x->dout[r * x->dim + e];
            }
        }
        break;
    case K_SOFTMAX:
        for (int64_t r = 0; r < x->rows; r++) {
            const double *xr = p + r * x->dim;
            double z = 0;
            for (int64_t e = 0; e < x->dim; e++)
                z += exp(xr[e]);
            for (int64_t e = 0; e < x->dim; e++) {
                const double y = exp(xr[e]) / z;
                if (o) o[r * x->dim + e] = y;
                loss += y * x->dout[r * x->dim + e];
            }
        }
        break;
    case K_MIX: {
        const double *ex = p, *g = p + x->nexp * x->rows * x->dim;
        for (int64_t r = 0; r < x->rows; r++)
            for (int64_t col = 0; col < x->dim; col++) {
                double y = 0;
                for (int64_t e = 0; e < x->nexp; e++)
                    y += g[r * x->nexp + e] * ex[(e * x->rows + r) * x->dim + col];
                if (o) o[r * x->dim + col] = y;
                loss += y * x->dout[r * x->dim + col];
            }
        break;
    }
    case K_RELPOS: {
        const int64_t H = x->c.heads, E = x->c.head_dim, S = H * E, N = x->n;
        const double *v = p, *rab = p + N * S;
        if (o) memset(o, 0, sizeof *o * (size_t)(N * S));
        for (int64_t s = 0; s < x->nseq; s++)
            for (int64_t h = 0; h < H; h++)
                for (int64_t i = x->off[s]; i < x->off[s + 1]; i++)
                    for (int64_t j = x->off[s]; j <= i; j++) {
                        const int64_t b = i - j < x->c.nbias - 1 ? i - j : x->c.nbias - 1;
                        const double a = silu(rab[h * x->c.nbias + b]) * x->c.inv_n;
                        for (int64_t e = 0; e < E; e++) {
                            const double y = a * v[j * S + h * E + e];
                            if (o) o[i * S + h * E + e] += y;
                            loss += y * x->dout[i * S + h * E + e];
                        }
                    }
        break;
    }
    }
    return loss;
}

/* Runs the float forward and backward of X's kernel on params P (np floats, nout outputs) and
 * compares them with the double reference. */
static void check(rt_tctx *t, const char *label, ref_ctx *x, float *p, int64_t np, int64_t nout)
{
    float *out = rt_talloc((size_t)nout * 4 + 4), *g = rt_talloc((size_t)np * 4 + 4),
          *st = rt_talloc((size_t)(2 * x->rows + 2) * 4), *dout = rt_talloc((size_t)nout * 4 + 4);
    rt_trng r = {(uint64_t)np * 7 + (uint64_t)x->kind};
    rt_tfill(&r, dout, nout, -1, 1);
    x->dout = dout;
    rt_kstatus fs = RT_K_EINVAL, bs = RT_K_EINVAL;
    switch (x->kind) {
    case K_SILU:
        fs = rt_kcpu_silu_fwd(p, x->n, out);
        bs = rt_kcpu_silu_bwd(p, dout, x->n, g);
        break;
    case K_MUL:
        fs = rt_kcpu_mul_fwd(p, p + x->n, x->n, out);
        bs = rt_kcpu_mul_bwd(p, p + x->n, dout, x->n, g, g + x->n);
        break;
    case K_LN:
        fs = rt_kcpu_layernorm_fwd(p, x->rows, x->dim, 1e-5f, out, st, st + x->rows);
        bs = rt_kcpu_layernorm_bwd(p, dout, x->rows, x->dim, st, st + x->rows, g);
        break;
    case K_SOFTMAX:
        fs = rt_kcpu_softmax_fwd(p, x->rows, x->dim, out);
        bs = rt_kcpu_softmax_bwd(out, dout, x->rows, x->dim, g);
        break;
    case K_MIX: {
        const int64_t nx = x->nexp * x->rows * x->dim;
        fs = rt_kcpu_mix_fwd(p, p + nx, x->rows, x->nexp, x->dim, out);
        bs = rt_kcpu_mix_bwd(p, p + nx, dout, x->rows, x->nexp, x->dim, g, g + nx);
        break;
    }
    case K_RELPOS: {
        const int64_t nv = x->n * x->c.heads * x->c.head_dim;
        fs = rt_kcpu_relpos_attn_fwd(p, x->off, x->nseq, &x->c, p + nv, out);
        bs = rt_kcpu_relpos_attn_bwd(p, x->off, x->nseq, &x->c, p + nv, dout, g, g + nv);
        break;
    }
    }
    RT_TCHECK(t, fs == RT_K_OK);
    RT_TCHECK(t, bs == RT_K_OK);
    double *pd = rt_talloc((size_t)np * 8 + 8), *gw = rt_talloc((size_t)np * 8 + 8),
           *ow = rt_talloc((size_t)nout * 8 + 8);
    for (int64_t i = 0; i < np; i++)
        pd[i] = p[i];
    x->out = ow;
    ref_forward(pd, x);
    x->out = NULL;
    char msg[96];
    snprintf(msg, sizeof msg, "%s forward", label);
    RT_TCLOSE(t, msg, out, ow, nout, 1e-5, 1e-5);
    rt_tfdiff(ref_forward, pd, np, x, gw);
    snprintf(msg, sizeof msg, "%s gradients", label);
    RT_TCLOSE(t, msg, g, gw, np, 1e-3, 1e-4);
    free(out), free(g), free(st), free(dout), free(pd), free(gw), free(ow);
}

static float *params(rt_trng *r, int64_t n, float lo, float hi)
{
    float *p = rt_talloc((size_t)n * 4 + 4);
    rt_tfill(r, p, n, lo, hi);
    return p;
}

static void test_elementwise(rt_tctx *t, rt_trng *r, int64_t n)
{
    ref_ctx x = {.kind = K_SILU, .n = n};
    float *p = params(r, 2 * n, -4, 4);
    check(t, "silu", &x, p, n, n);
    x.kind = K_MUL;
    check(t, "mul", &x, p, 2 * n, n);
    /* In place: the backward of the product may overwrite its output gradient. */
    float *dy = params(r, n, -1, 1), *db = rt_talloc((size_t)n * 4 + 4);
    double *want = rt_talloc((size_t)n * 8 + 8);
    for (int64_t i = 0; i < n; i++)
        want[i] = (double)dy[i] * p[n + i];
    RT_TCHECK(t, rt_kcpu_mul_bwd(p, p + n, dy, n, dy, db) == RT_K_OK);
    RT_TCLOSE(t, "mul in place", dy, want, n, 1e-6, 1e-7);
    free(p), free(dy), free(db), free(want);
}

static void test_rows(rt_tctx *t, rt_trng *r, int64_t rows, int64_t dim)
{
    ref_ctx x = {.kind = K_LN, .rows = rows, .dim = dim};
    /* An offset of 3: the norm must centre the rows itself. */
    float *p = params(r, rows * dim, 2, 4);
    check(t, "layernorm", &x, p, rows * dim, rows * dim);
    x.kind = K_SOFTMAX;
    check(t, "softmax", &x, p, rows * dim, rows * dim);
    free(p);
}

static void test_mix(rt_tctx *t, rt_trng *r, int64_t rows, int64_t nexp, int64_t dim)
{
    ref_ctx x = {.kind = K_MIX, .rows = rows, .dim = dim, .nexp = nexp};
    const int64_t np = nexp * rows * dim + rows * nexp;
    float *p = params(r, np, -1, 1);
    check(t, "mix", &x, p, np, rows * dim);
    free(p);
}

static void test_relpos(rt_tctx *t, rt_trng *r, int64_t nseq, int64_t heads, int64_t hd,
                        int64_t nbias)
{
    int64_t *off = rt_talloc((size_t)(nseq + 1) * 8);
    const int64_t N = rt_toffsets(r, off, nseq, 7, 1), S = heads * hd;
    ref_ctx x = {.kind = K_RELPOS, .n = N, .off = off, .nseq = nseq};
    x.c = (rt_khstu_cfg){heads, hd, nbias, 0.0f, 1.0f / 7.0f};
    const int64_t np = N * S + heads * nbias;
    float *p = params(r, np, -2, 2);
    check(t, "relpos attention", &x, p, np, N * S);
    free(p), free(off);
}

static void test_invalid(rt_tctx *t)
{
    float f[4] = {0};
    const int64_t off[] = {0, 2}, bad_off[] = {0, 3, 2};
    const rt_khstu_cfg c = {1, 2, 2, 0.0f, 1.0f}, no_heads = {0, 2, 2, 0.0f, 1.0f};
    RT_TCHECK(t, rt_kcpu_silu_fwd(NULL, 4, f) == RT_K_EINVAL);
    RT_TCHECK(t, rt_kcpu_silu_fwd(NULL, 0, NULL) == RT_K_OK);
    RT_TCHECK(t, rt_kcpu_mul_bwd(f, f, f, -1, f, f) == RT_K_EINVAL);
    RT_TCHECK(t, rt_kcpu_layernorm_fwd(f, 2, 2, 0.0f, f, f, f) == RT_K_EINVAL);
    RT_TCHECK(t, rt_kcpu_layernorm_fwd(f, 2, 0, 1e-5f, f, f, f) == RT_K_EINVAL);
    RT_TCHECK(t, rt_kcpu_layernorm_bwd(f, f, 1, 2, NULL, f, f) == RT_K_EINVAL);
    RT_TCHECK(t, rt_kcpu_softmax_fwd(f, 1, 0, f) == RT_K_EINVAL);
    RT_TCHECK(t, rt_kcpu_mix_fwd(f, f, 1, 0, 1, f) == RT_K_EINVAL);
    RT_TCHECK(t, rt_kcpu_mix_bwd(f, f, f, 1, 1, 1, f, NULL) == RT_K_EINVAL);
    RT_TCHECK(t, rt_kcpu_relpos_attn_fwd(f, off, 1, &c, NULL, f) == RT_K_EINVAL);
    RT_TCHECK(t, rt_kcpu_relpos_attn_fwd(f, off, 1, &no_heads, f, f) == RT_K_EINVAL);
    RT_TCHECK(t, rt_kcpu_relpos_attn_fwd(f, bad_off, 2, &c, f, f) == RT_K_EINVAL);
    RT_TCHECK(t, rt_kcpu_relpos_attn_bwd(f, off, 1, &c, f, f, NULL, NULL) == RT_K_EINVAL);
}

int main(void)
{
    rt_tctx t = {0};
    rt_trng r = {2025};
    test_elementwise(&t, &r, 1);
    test_elementwise(&t, &r, 37);
    test_rows(&t, &r, 1, 1);
    test_rows(&t, &r, 5, 7);
    test_rows(&t, &r, 3, 40);
    test_mix(&t, &r, 1, 1, 1);
    test_mix(&t, &r, 6, 3, 5);
    test_relpos(&t, &r, 1, 1, 1, 1);
    test_relpos(&t, &r, 4, 2, 3, 3);
    test_relpos(&t, &r, 5, 3, 4, 9);
    test_invalid(&t);
    return rt_treport(&t, "test_kcpu_gr_blocks");
}
