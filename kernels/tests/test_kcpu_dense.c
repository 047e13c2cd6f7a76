/* GEMM, linear layer, DLRM dot interaction and DCN cross layer against double references;
 * backward passes against finite differences of the double forward. */
#include "fdiff.h"
#include "harness.h"
#include "kernels.h"

#include <string.h>

static double *to_double(const float *x, int64_t n)
{
    double *y = rt_talloc((size_t)n * sizeof *y);
    for (int64_t i = 0; i < n; i++)
        y[i] = x[i];
    return y;
}

static void test_gemm(rt_tctx *t, rt_trng *r, int64_t m, int64_t n, int64_t k, int ta, int tb)
{
    const int64_t lda = (ta ? m : k) + 3, ldb = (tb ? k : n) + 1, ldc = n + 2;
    float *a = rt_talloc((size_t)((ta ? k : m) * lda) * 4),
          *b = rt_talloc((size_t)((tb ? n : k) * ldb) * 4), *c = rt_talloc((size_t)(m * ldc) * 4);
    rt_tfill(r, a, (ta ? k : m) * lda, -1, 1);
    rt_tfill(r, b, (tb ? n : k) * ldb, -1, 1);
    rt_tfill(r, c, m * ldc, -1, 1);
    double *want = to_double(c, m * ldc);
    const float alpha = 0.75f, beta = -0.5f;
    for (int64_t i = 0; i < m; i++)
        for (int64_t j = 0; j < n; j++) {
            double s = 0;
            for (int64_t p = 0; p < k; p++)
                s += (double)(ta ? a[p * lda + i] : a[i * lda + p]) *
                     (tb ? b[j * ldb + p] : b[p * ldb + j]);
            want[i * ldc + j] = alpha * s + beta * want[i * ldc + j];
        }
    RT_TCHECK(t, rt_kcpu_gemm(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc) == RT_K_OK);
    RT_TCLOSE(t, "gemm", c, want, m * ldc, 1e-5, 1e-5);
    RT_TCHECK(t, rt_kcpu_gemm(ta, tb, m, n, k, alpha, a, 0, b, ldb, beta, c, ldc) == RT_K_EINVAL);
    free(a), free(b), free(c), free(want);
}

static double act_d(rt_kact act, double z)
{
    return act == RT_KACT_RELU ? (z > 0 ? z : 0) : act == RT_KACT_SIGMOID ? 1 / (1 + exp(-z)) : z;
}

static void test_linear(rt_tctx *t, rt_trng *r, int64_t batch, int64_t in, int64_t out, rt_kact act)
{
    float *x = rt_talloc((size_t)(batch * in) * 4), *w = rt_talloc((size_t)(out * in) * 4),
          *bias = rt_talloc((size_t)out * 4), *y = rt_talloc((size_t)(batch * out) * 4),
          *dy = rt_talloc((size_t)(batch * out) * 4), *dx = rt_talloc((size_t)(batch * in) * 4),
          *dw = rt_talloc((size_t)(out * in) * 4), *db = rt_talloc((size_t)out * 4);
    rt_tfill(r, x, batch * in, -1, 1);
    rt_tfill(r, w, out * in, -1, 1);
    rt_tfill(r, bias, out, -1, 1);
    rt_tfill(r, dy, batch * out, -1, 1);
    double *yw = rt_talloc((size_t)(batch * out) * 8), *dz = rt_talloc((size_t)(batch * out) * 8),
           *dxw = calloc((size_t)(batch * in) + 1, 8), *dww = calloc((size_t)(out * in) + 1, 8),
           *dbw = calloc((size_t)out + 1, 8);
    for (int64_t b = 0; b < batch; b++)
        for (int64_t o = 0; o < out; o++) {
            double z = bias[o];
            for (int64_t i = 0; i < in; i++)
                z += (double)x[b * in + i] * w[o * in + i];
            const double yv = act_d(act, z);
            yw[b * out + o] = yv;
            const double g = dy[b * out + o];
            dz[b * out + o] = act == RT_KACT_RELU      ? (z > 0 ? g : 0)
                              : act == RT_KACT_SIGMOID ? g * yv * (1 - yv)
                                                       : g;
        }
    for (int64_t b = 0; b < batch; b++)
        for (int64_t o = 0; o < out; o++) {
            dbw[o] += dz[b * out + o];
            for (int64_t i = 0; i < in; i++) {
                dww[o * in + i] += dz[b * out + o] * x[b * in + i];
                dxw[b * in + i] += dz[b * out + o] * w[o * in + i];
            }
        }
    RT_TCHECK(t, rt_kcpu_linear_fwd(x, batch, in, out, w, bias, act, y) == RT_K_OK);
    RT_TCLOSE(t, "linear y", y, yw, batch * out, 1e-5, 1e-5);
    RT_TCHECK(t, rt_kcpu_linear_bwd(x, y, dy, batch, in, out, w, act, dx, dw, db) == RT_K_OK);
    RT_TCLOSE(t, "linear dx", dx, dxw, batch * in, 1e-4, 1e-5);
    RT_TCLOSE(t, "linear dw", dw, dww, out * in, 1e-4, 1e-5);
    RT_TCLOSE(t, "linear db", db, dbw, out, 1e-4, 1e-5);
    /* db sums each column of dz in row order 0, 1, ...: bit for bit the floats of a
     * column-by-column loop, the order the CUDA kernel's column_sums adds in */
    for (int64_t o = 0; o < out; o++) {
        float s = 0.0f;
        for (int64_t b = 0; b < batch; b++) {
            const float yv = y[b * out + o], g = dy[b * out + o];
            s += act == RT_KACT_RELU      ? (yv > 0.0f ? g : 0.0f)
                 : act == RT_KACT_SIGMOID ? g * yv * (1.0f - yv)
                                          : g;
        }
        RT_TCHECK(t, memcmp(&s, &db[o], sizeof s) == 0);
    }
    free(x), free(w), free(bias), free(y), free(dy), free(dx), free(dw), free(db);
    free(yw), free(dz), free(dxw), free(dww), free(dbw);
}

static void test_dot(rt_tctx *t, rt_trng *r, int64_t batch, int64_t nf, int64_t d)
{
    const int64_t np = nf * (nf - 1) / 2;
    float *x = rt_talloc((size_t)(batch * nf * d) * 4), *out = rt_talloc((size_t)(batch * np) * 4),
          *dout = rt_talloc((size_t)(batch * np) * 4),
          *dx = rt_talloc((size_t)(batch * nf * d) * 4);
    rt_tfill(r, x, batch * nf * d, -1, 1);
    rt_tfill(r, dout, batch * np, -1, 1);
    double *want = rt_talloc((size_t)(batch * np) * 8),
           *dwant = calloc((size_t)(batch * nf * d), 8);
    for (int64_t b = 0; b < batch; b++) {
        int64_t p = 0;
        for (int64_t i = 1; i < nf; i++)
            for (int64_t j = 0; j < i; j++, p++) {
                double s = 0;
                for (int64_t e = 0; e < d; e++)
                    s += (double)x[(b * nf + i) * d + e] * x[(b * nf + j) * d + e];
                want[b * np + p] = s;
                for (int64_t e = 0; e < d; e++) {
                    dwant[(b * nf + i) * d + e] += dout[b * np + p] * x[(b * nf + j) * d + e];
                    dwant[(b * nf + j) * d + e] += dout[b * np + p] * x[(b * nf + i) * d + e];
                }
            }
    }
    RT_TCHECK(t, rt_kcpu_dot_interact_fwd(x, batch, nf, d, out) == RT_K_OK);
    RT_TCLOSE(t, "dot fwd", out, want, batch * np, 1e-5, 1e-5);
    RT_TCHECK(t, rt_kcpu_dot_interact_bwd(x, dout, batch, nf, d, dx) == RT_K_OK);
    RT_TCLOSE(t, "dot bwd", dx, dwant, batch * nf * d, 1e-5, 1e-5);
    /* Each gradient row adds its pair terms in the order of the other vector's index: bit for
     * bit the floats of adding every pair's term into both of its rows, pairs in output order. */
    float *dpair = calloc((size_t)(batch * nf * d), 4);
    for (int64_t b = 0, p = 0; b < batch; b++)
        for (int64_t i = 1; i < nf; i++)
            for (int64_t j = 0; j < i; j++, p++)
                for (int64_t e = 0; e < d; e++) {
                    dpair[(b * nf + i) * d + e] += dout[p] * x[(b * nf + j) * d + e];
                    dpair[(b * nf + j) * d + e] += dout[p] * x[(b * nf + i) * d + e];
                }
    RT_TCHECK(t, memcmp(dpair, dx, (size_t)(batch * nf * d) * 4) == 0);
    free(x), free(out), free(dout), free(dx), free(want), free(dwant), free(dpair);
}

/* DCN: packed params x0 | xl | u | v | bias, loss = sum(y * dy). */
typedef struct {
    int64_t b, d, r;
    const float *dy;
} dcn_ctx;

static double dcn_loss(const double *p, const void *vctx)
{
    const dcn_ctx *c = vctx;
    const int64_t B = c->b, D = c->d, R = c->r;
    const double *x0 = p, *xl = x0 + B * D, *u = xl + B * D, *v = u + D * R, *bias = v + D * R;
    double loss = 0;
    for (int64_t b = 0; b < B; b++) {
        double pr[8] = {0};
        for (int64_t k = 0; k < R; k++)
            for (int64_t j = 0; j < D; j++)
                pr[k] += xl[b * D + j] * v[j * R + k];
        for (int64_t j = 0; j < D; j++) {
            double q = bias[j];
            for (int64_t k = 0; k < R; k++)
                q += pr[k] * u[j * R + k];
            loss += (x0[b * D + j] * q + xl[b * D + j]) * c->dy[b * D + j];
        }
    }
    return loss;
}

static void test_dcn(rt_tctx *t, rt_trng *r, int64_t B, int64_t D, int64_t R)
{
    const int64_t np = 2 * B * D + 2 * D * R + D;
    float *pf = rt_talloc((size_t)np * 4), *dy = rt_talloc((size_t)(B * D) * 4);
    rt_tfill(r, pf, np, -1, 1);
    rt_tfill(r, dy, B * D, -1, 1);
    float *x0 = pf, *xl = x0 + B * D, *u = xl + B * D, *v = u + D * R, *bias = v + D * R;
    float *P = rt_talloc((size_t)(B * R) * 4), *Q = rt_talloc((size_t)(B * D) * 4),
          *y = rt_talloc((size_t)(B * D) * 4), *grad = rt_talloc((size_t)np * 4);
    RT_TCHECK(t, rt_kcpu_dcn_cross_fwd(x0, xl, B, D, R, u, v, bias, P, Q, y) == RT_K_OK);
    double *pd = to_double(pf, np), *gw = rt_talloc((size_t)np * 8);
    const dcn_ctx c = {B, D, R, dy};
    double *yd = rt_talloc((size_t)(B * D) * 8);
    for (int64_t i = 0; i < B * D; i++) { /* y through the loss with a one-hot dy */
        float *onehot = calloc((size_t)(B * D), 4);
        onehot[i] = 1;
        const dcn_ctx ci = {B, D, R, onehot};
        yd[i] = dcn_loss(pd, &ci);
        free(onehot);
    }
    RT_TCLOSE(t, "dcn y", y, yd, B * D, 1e-5, 1e-5);
    float *g = grad;
    RT_TCHECK(t,
              rt_kcpu_dcn_cross_bwd(x0, xl, P, Q, dy, B, D, R, u, v, g, g + B * D, g + 2 * B * D,
                                    g + 2 * B * D + D * R, g + 2 * B * D + 2 * D * R) == RT_K_OK);
    rt_tfdiff(dcn_loss, pd, np, &c, gw);
    RT_TCLOSE(t, "dcn grads", grad, gw, np, 1e-3, 1e-4);
    free(pf), free(dy), free(P), free(Q), free(y), free(grad), free(pd), free(gw), free(yd);
}

static void test_jagged(rt_tctx *t, rt_trng *r, int64_t nseg, int64_t d, int64_t max_len)
{
    int64_t *off = rt_talloc((size_t)(nseg + 1) * 8);
    const int64_t n = rt_toffsets(r, off, nseg, max_len + 3, 1);
    float *vals = rt_talloc((size_t)(n * d) * 4),
          *dense = rt_talloc((size_t)(nseg * max_len * d) * 4),
          *back = rt_talloc((size_t)(n * d) * 4);
    rt_tfill(r, vals, n * d, -1, 1);
    double *want = rt_talloc((size_t)(nseg * max_len * d) * 8),
           *bwant = rt_talloc((size_t)(n * d) * 8);
    for (int64_t s = 0; s < nseg; s++)
        for (int64_t i = 0; i < max_len; i++)
            for (int64_t e = 0; e < d; e++)
                want[(s * max_len + i) * d + e] =
                    off[s] + i < off[s + 1] ? vals[(off[s] + i) * d + e] : -7.0;
    for (int64_t s = 0; s < nseg; s++)
        for (int64_t i = off[s]; i < off[s + 1]; i++)
            for (int64_t e = 0; e < d; e++)
                bwant[i * d + e] = i - off[s] < max_len ? vals[i * d + e] : 0.0;
    RT_TCHECK(t, rt_kcpu_jagged_to_dense(vals, off, nseg, d, max_len, -7.0f, dense) == RT_K_OK);
    RT_TCLOSE(t, "jagged_to_dense", dense, want, nseg * max_len * d, 0, 0);
    RT_TCHECK(t, rt_kcpu_dense_to_jagged(dense, off, nseg, d, max_len, back) == RT_K_OK);
    RT_TCLOSE(t, "dense_to_jagged", back, bwant, n * d, 0, 0);
    free(off), free(vals), free(dense), free(back), free(want), free(bwant);
}

int main(void)
{
    rt_tctx t = {0};
    rt_trng r = {31337};
    const int64_t g[][3] = {{1, 1, 1}, {3, 5, 7}, {65, 33, 17}, {2, 130, 1}, {0, 4, 4}, {4, 4, 0}};
    for (size_t i = 0; i < sizeof g / sizeof g[0]; i++)
        for (int ta = 0; ta < 2; ta++)
            for (int tb = 0; tb < 2; tb++)
                test_gemm(&t, &r, g[i][0], g[i][1], g[i][2], ta, tb);
    const rt_kact acts[] = {RT_KACT_NONE, RT_KACT_RELU, RT_KACT_SIGMOID};
    for (int a = 0; a < 3; a++) {
        test_linear(&t, &r, 1, 1, 1, acts[a]);
        test_linear(&t, &r, 7, 13, 5, acts[a]);
        test_linear(&t, &r, 64, 100, 33, acts[a]);
    }
    test_dot(&t, &r, 1, 2, 1);
    test_dot(&t, &r, 5, 27, 16);
    test_dot(&t, &r, 3, 9, 33);
    test_dot(&t, &r, 2, 4, 70);
    test_dcn(&t, &r, 1, 1, 1);
    test_dcn(&t, &r, 3, 7, 2);
    test_dcn(&t, &r, 5, 13, 4);
    test_jagged(&t, &r, 1, 1, 1);
    test_jagged(&t, &r, 9, 5, 4);
    test_jagged(&t, &r, 30, 3, 0);
    return rt_treport(&t, "test_kcpu_dense");
}
