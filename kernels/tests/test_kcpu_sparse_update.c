/* Fused scatter + sparse optimizer update against a double-precision reference that first
 * sums the gradient of every touched row, then applies the optimizer formula. */
#include "harness.h"
#include "kernels.h"

#include <string.h>

static void reference_update(const rt_kopt *o, int64_t rows, int64_t d, const int64_t *ids,
                             const int64_t *off, int64_t nbags, rt_kpool pool, const float *gout,
                             double *w, double *s0, double *s1)
{
    double *g = calloc((size_t)(rows * d), sizeof *g);
    char *touched = calloc((size_t)rows, 1);
    for (int64_t b = 0; b < nbags; b++) {
        const int64_t lo = off ? off[b] : b, hi = off ? off[b + 1] : b + 1;
        for (int64_t i = lo; i < hi; i++) {
            touched[ids[i]] = 1;
            for (int64_t j = 0; j < d; j++)
                g[ids[i] * d + j] += gout[b * d + j] / (pool == RT_KPOOL_MEAN ? hi - lo : 1);
        }
    }
    for (int64_t r = 0; r < rows; r++) {
        if (!touched[r]) continue;
        double *gr = g + r * d, *wr = w + r * d;
        double sq = 0;
        for (int64_t j = 0; j < d; j++)
            sq += gr[j] * gr[j];
        if (o->kind == RT_KOPT_ROWWISE_ADAGRAD) s0[r] += sq / (double)d;
        for (int64_t j = 0; j < d; j++) {
            const int64_t k = r * d + j;
            switch (o->kind) {
            case RT_KOPT_SGD:
                wr[j] -= o->lr * gr[j];
                break;
            case RT_KOPT_ADAGRAD:
                s0[k] += gr[j] * gr[j];
                wr[j] -= o->lr * gr[j] / (sqrt(s0[k]) + o->eps);
                break;
            case RT_KOPT_ROWWISE_ADAGRAD:
                wr[j] -= o->lr * gr[j] / (sqrt(s0[r]) + o->eps);
                break;
            case RT_KOPT_ADAM: {
                s0[k] = o->beta1 * s0[k] + (1 - o->beta1) * gr[j];
                s1[k] = o->beta2 * s1[k] + (1 - o->beta2) * gr[j] * gr[j];
                const double mh = s0[k] / (1 - pow(o->beta1, (double)o->step));
                const double vh = s1[k] / (1 - pow(o->beta2, (double)o->step));
                wr[j] -= o->lr * mh / (sqrt(vh) + o->eps);
                break;
            }
            }
        }
    }
    free(g);
    free(touched);
}

static void check(rt_tctx *t, rt_trng *r, rt_koptim kind, int64_t rows, int64_t d, int64_t nbags,
                  int sequence, rt_kpool pool, int steps)
{
    rt_kopt o = {kind, 0.05f, 1e-3f, 0.9f, 0.999f, 1};
    const int64_t n0 = rt_kopt_state_len(kind, 0, rows, d),
                  n1 = rt_kopt_state_len(kind, 1, rows, d);
    float *w = rt_talloc((size_t)(rows * d) * sizeof *w), *s0 = rt_talloc((size_t)n0 * 4),
          *s1 = rt_talloc((size_t)n1 * 4);
    double *ww = rt_talloc((size_t)(rows * d) * sizeof *ww), *ws0 = rt_talloc((size_t)n0 * 8),
           *ws1 = rt_talloc((size_t)n1 * 8);
    rt_tfill(r, w, rows * d, -1, 1);
    for (int64_t i = 0; i < rows * d; i++)
        ww[i] = w[i];
    for (int64_t i = 0; i < n0; i++)
        s0[i] = (float)(ws0[i] = 0.1);
    for (int64_t i = 0; i < n1; i++)
        s1[i] = (float)(ws1[i] = 0.01);
    int64_t *off = rt_talloc((size_t)(nbags + 1) * sizeof *off);
    const int64_t n = sequence ? nbags : rt_toffsets(r, off, nbags, 6, 1);
    int64_t *ids = rt_talloc((size_t)n * sizeof *ids);
    float *gout = rt_talloc((size_t)(nbags * d) * sizeof *gout);
    rt_ktable tb = {w, rows, d, RT_KDT_FP32};
    for (int s = 0; s < steps; s++, o.step++) {
        for (int64_t i = 0; i < n; i++)
            ids[i] = rt_tbelow(r, rows > 3 ? rows * 2 / 3 : rows); /* leave rows untouched */
        rt_tfill(r, gout, nbags * d, -1, 1);
        const rt_kstatus st = rt_kcpu_sparse_update(&tb, (rt_kopt_state){s0, s1}, &o, ids,
                                                    sequence ? NULL : off, nbags, pool, gout);
        RT_TCHECK(t, st == RT_K_OK);
        reference_update(&o, rows, d, ids, sequence ? NULL : off, nbags, pool, gout, ww, ws0, ws1);
    }
    RT_TCLOSE(t, "weights", w, ww, rows * d, 2e-4, 2e-5);
    RT_TCLOSE(t, "state0", s0, ws0, n0, 2e-4, 1e-6);
    RT_TCLOSE(t, "state1", s1, ws1, n1, 2e-4, 1e-7);
    free(w), free(s0), free(s1), free(ww), free(ws0), free(ws1), free(off), free(ids), free(gout);
}

/* Hand-computed: row 1 appears twice in bag 0 (mean pooling, length 3) and once in bag 1. */
static void test_hand_sgd(rt_tctx *t)
{
    float w[3 * 2] = {0, 0, 1, 1, 2, 2};
    rt_ktable tb = {w, 3, 2, RT_KDT_FP32};
    const int64_t ids[] = {1, 1, 2, 1};
    const int64_t off[] = {0, 3, 4};
    const float g[] = {3, 6, 1, 1};
    const rt_kopt o = {RT_KOPT_SGD, 0.5f, 0, 0, 0, 1};
    RT_TCHECK(t, rt_kcpu_sparse_update(&tb, (rt_kopt_state){0}, &o, ids, off, 2, RT_KPOOL_MEAN,
                                       g) == RT_K_OK);
    /* row 1 gradient = 2 * (3,6)/3 + (1,1) = (3,5); row 2 = (1,2). */
    const double want[] = {0, 0, 1 - 1.5, 1 - 2.5, 2 - 0.5, 2 - 1.0};
    RT_TCLOSE(t, "hand sgd", w, want, 6, 0, 1e-7);
    /* Adam's first step moves each touched weight by lr * g / (|g| + eps) ~ lr. */
    float m[6] = {0}, v[6] = {0};
    const rt_kopt adam = {RT_KOPT_ADAM, 0.1f, 0, 0.9f, 0.99f, 1};
    RT_TCHECK(t, rt_kcpu_sparse_update(&tb, (rt_kopt_state){m, v}, &adam, ids, off, 2,
                                       RT_KPOOL_MEAN, g) == RT_K_OK);
    const double want2[] = {0, 0, -0.6, -1.6, 1.4, 0.9};
    RT_TCLOSE(t, "hand adam", w, want2, 6, 1e-6, 1e-6);
    const int64_t bad[] = {1, 3, 2, 1};
    RT_TCHECK(t, rt_kcpu_sparse_update(&tb, (rt_kopt_state){m, v}, &adam, bad, off, 2,
                                       RT_KPOOL_MEAN, g) == RT_K_ERANGE);
    RT_TCHECK(t, fabsf(w[2] - -0.6f) < 1e-6f);
    RT_TCHECK(t, rt_kcpu_sparse_update(&tb, (rt_kopt_state){NULL, v}, &adam, ids, off, 2,
                                       RT_KPOOL_MEAN, g) == RT_K_EINVAL);
}

static void test_half_table(rt_tctx *t, rt_trng *r, rt_kdtype dt)
{
    const int64_t rows = 11, d = 9, n = 20;
    uint16_t w[11 * 9];
    double ref[11 * 9];
    for (int64_t i = 0; i < rows * d; i++) {
        const float x = rt_tuniform(r, -1, 1);
        w[i] = dt == RT_KDT_FP16 ? rt_kf32_to_f16(x) : rt_kf32_to_bf16(x);
        ref[i] = dt == RT_KDT_FP16 ? rt_kf16_to_f32(w[i]) : rt_kbf16_to_f32(w[i]);
    }
    int64_t ids[20];
    float g[20 * 9];
    for (int64_t i = 0; i < n; i++)
        ids[i] = rt_tbelow(r, rows);
    rt_tfill(r, g, n * d, -1, 1);
    const rt_kopt o = {RT_KOPT_SGD, 0.1f, 0, 0, 0, 1};
    rt_ktable tb = {w, rows, d, dt};
    RT_TCHECK(t, rt_kcpu_sparse_update(&tb, (rt_kopt_state){0}, &o, ids, NULL, n, RT_KPOOL_SUM,
                                       g) == RT_K_OK);
    reference_update(&o, rows, d, ids, NULL, n, RT_KPOOL_SUM, g, ref, NULL, NULL);
    float got[11 * 9];
    for (int64_t i = 0; i < rows * d; i++)
        got[i] = dt == RT_KDT_FP16 ? rt_kf16_to_f32(w[i]) : rt_kbf16_to_f32(w[i]);
    RT_TCLOSE(t, "half table sgd", got, ref, rows * d, dt == RT_KDT_FP16 ? 1e-3 : 8e-3, 1e-3);
}

int main(void)
{
    rt_tctx t = {0};
    rt_trng r = {7};
    test_hand_sgd(&t);
    const rt_koptim kinds[] = {RT_KOPT_SGD, RT_KOPT_ADAGRAD, RT_KOPT_ROWWISE_ADAGRAD, RT_KOPT_ADAM};
    const int64_t shapes[][3] = {{1, 1, 3}, {5, 3, 1}, {17, 8, 40}, {300, 64, 129}, {50, 33, 0}};
    for (int k = 0; k < 4; k++)
        for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
            check(&t, &r, kinds[k], shapes[s][0], shapes[s][1], shapes[s][2], 0, RT_KPOOL_SUM, 3);
            check(&t, &r, kinds[k], shapes[s][0], shapes[s][1], shapes[s][2], 0, RT_KPOOL_MEAN, 2);
            check(&t, &r, kinds[k], shapes[s][0], shapes[s][1], shapes[s][2], 1, RT_KPOOL_SUM, 2);
        }
    test_half_table(&t, &r, RT_KDT_FP16);
    test_half_table(&t, &r, RT_KDT_BF16);
    return rt_treport(&t, "test_kcpu_sparse_update");
}
