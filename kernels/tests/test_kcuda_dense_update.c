/* GPU dense optimizer kernels (axpy, Adam, SGD) against the CPU reference on random inputs,
 * over several consecutive steps so the optimizer state is exercised too; and the context's
 * GEMM math modes (rt_kcuda_ctx_set_math) against the fp32 CPU GEMM within each mode's
 * rounding bound. Exits 77 without a GPU. */
#include "cuda_harness.h"

#define D(x) cudaFree((void *)(x))

static float *random_host(rt_trng *r, int64_t n, float lo, float hi)
{
    float *x = rt_talloc((size_t)n * 4 + 4);
    rt_tfill(r, x, n, lo, hi);
    return x;
}

static void check_axpy(rt_tctx *t, rt_kcuda_ctx *c, rt_trng *r, int64_t n)
{
    float *x = random_host(r, n, -2, 2), *y = random_host(r, n, -2, 2);
    float *d_x = rt_tdev(x, (size_t)n * 4), *d_y = rt_tdev(y, (size_t)n * 4);
    const float a = rt_tuniform(r, -3, 3);
    RT_TCHECK(t, rt_kcpu_axpy(n, a, x, y) == RT_K_OK);
    RT_TCHECK(t, rt_kcuda_axpy(n, a, d_x, d_y, c) == RT_K_OK);
    RT_TCHECK(t, rt_kcuda_ctx_sync(c) == RT_K_OK);
    RT_TCLOSE_DEV(t, "gpu axpy", d_y, y, n, 1e-6, 1e-6);
    free(x), free(y), D(d_x), D(d_y);
}

/* fp32 -> fp16/bf16 -> fp32 on the GPU equals the CPU conversion bit for bit. */
static void check_convert(rt_tctx *t, rt_kcuda_ctx *c, rt_trng *r, int64_t n)
{
    float *x = random_host(r, n, -300, 300), *back = rt_talloc((size_t)n * 4 + 4);
    float *want = rt_talloc((size_t)n * 4 + 4);
    uint16_t *h = rt_talloc((size_t)n * 2 + 2);
    float *d_x = rt_tdev(x, (size_t)n * 4), *d_back = rt_tdev(back, (size_t)n * 4);
    void *d_h = rt_tdev(h, (size_t)n * 2);
    const rt_kdtype half[] = {RT_KDT_FP16, RT_KDT_BF16};
    for (int k = 0; k < 2; k++) {
        RT_TCHECK(t, rt_kcpu_convert(x, RT_KDT_FP32, n, half[k], h) == RT_K_OK);
        RT_TCHECK(t, rt_kcpu_convert(h, half[k], n, RT_KDT_FP32, want) == RT_K_OK);
        RT_TCHECK(t, rt_kcuda_convert(d_x, RT_KDT_FP32, n, half[k], d_h, c) == RT_K_OK);
        RT_TCHECK(t, rt_kcuda_convert(d_h, half[k], n, RT_KDT_FP32, d_back, c) == RT_K_OK);
        RT_TCHECK(t, rt_kcuda_ctx_sync(c) == RT_K_OK);
        RT_TCLOSE_DEV(t, "gpu convert", d_back, want, n, 0, 0);
    }
    free(x), free(back), free(want), free(h), D(d_x), D(d_back), D(d_h);
}

/* STEPS consecutive updates from STEP0 on, with fresh gradients each time. */
static void check_adam(rt_tctx *t, rt_kcuda_ctx *c, rt_trng *r, int64_t n, rt_koptim kind,
                       int64_t step0, int steps)
{
    float *w = random_host(r, n, -1, 1), *m = random_host(r, n, -0.1f, 0.1f),
          *v = random_host(r, n, 0, 0.01f);
    float *d_w = rt_tdev(w, (size_t)n * 4), *d_m = rt_tdev(m, (size_t)n * 4),
          *d_v = rt_tdev(v, (size_t)n * 4);
    rt_kadam o = {kind, 0.01f, 0.9f, 0.999f, 1e-8f, 0.5f, step0};
    for (int s = 0; s < steps; s++, o.step++) {
        float *g = random_host(r, n, -1, 1), *d_g = rt_tdev(g, (size_t)n * 4);
        const int sgd = kind == RT_KOPT_SGD;
        /* SGD must not touch m and v: pass NULL, as the header allows. */
        RT_TCHECK(t, rt_kcpu_adam(n, &o, w, g, sgd ? NULL : m, sgd ? NULL : v) == RT_K_OK);
        RT_TCHECK(t,
                  rt_kcuda_adam(n, &o, d_w, d_g, sgd ? NULL : d_m, sgd ? NULL : d_v, c) == RT_K_OK);
        RT_TCHECK(t, rt_kcuda_ctx_sync(c) == RT_K_OK);
        free(g), D(d_g);
    }
    /* Contraction to FMA on the GPU moves the last bits; the state compounds it over steps. */
    RT_TCLOSE_DEV(t, kind == RT_KOPT_SGD ? "gpu sgd w" : "gpu adam w", d_w, w, n, 1e-5, 1e-6);
    RT_TCLOSE_DEV(t, "gpu adam m", d_m, m, n, 1e-5, 1e-7);
    RT_TCLOSE_DEV(t, "gpu adam v", d_v, v, n, 1e-5, 1e-9);
    free(w), free(m), free(v), D(d_w), D(d_m), D(d_v);
}

/* Arguments the CPU twin rejects are rejected on the GPU too, before any launch. */
static void check_invalid(rt_tctx *t, rt_kcuda_ctx *c)
{
    float h[4] = {0}, *d = rt_tdev(NULL, 16);
    const rt_kadam ok = {RT_KOPT_ADAM, 0.01f, 0.9f, 0.999f, 1e-8f, 1.0f, 1};
    rt_kadam bad[4] = {ok, ok, ok, ok};
    bad[0].step = 0;
    bad[1].beta1 = 1.0f;
    bad[2].beta2 = -0.5f;
    bad[3].kind = RT_KOPT_ADAGRAD;
    for (int i = 0; i < 4; i++) {
        RT_TCHECK(t, rt_kcpu_adam(4, &bad[i], h, h, h, h) == RT_K_EINVAL);
        RT_TCHECK(t, rt_kcuda_adam(4, &bad[i], d, d, d, d, c) == RT_K_EINVAL);
    }
    RT_TCHECK(t, rt_kcuda_adam(4, &ok, d, d, NULL, d, c) == RT_K_EINVAL);
    RT_TCHECK(t, rt_kcuda_adam(4, NULL, d, d, d, d, c) == RT_K_EINVAL);
    RT_TCHECK(t, rt_kcuda_adam(-1, &ok, d, d, d, d, c) == RT_K_EINVAL);
    RT_TCHECK(t, rt_kcuda_adam(4, &ok, d, d, d, d, NULL) == RT_K_EINVAL);
    RT_TCHECK(t, rt_kcuda_axpy(4, 1.0f, NULL, d, c) == RT_K_EINVAL);
    RT_TCHECK(t, rt_kcuda_axpy(-1, 1.0f, d, d, c) == RT_K_EINVAL);
    RT_TCHECK(t, rt_kcuda_axpy(0, 1.0f, NULL, NULL, c) == RT_K_OK);
    RT_TCHECK(t, rt_kcuda_adam(0, &ok, NULL, NULL, NULL, NULL, c) == RT_K_OK);
    RT_TCHECK(t, rt_kcuda_ctx_set_math(c, (rt_kcuda_math)17) == RT_K_EINVAL);
    RT_TCHECK(t, rt_kcuda_ctx_set_math(NULL, RT_KCUDA_MATH_FP32) == RT_K_EINVAL);
    RT_TCHECK(t, rt_kcuda_ctx_sync(c) == RT_K_OK);
    D(d);
}

/* C = 0.5 A B^T + 2 C under MATH. With |a|, |b| <= 1 and inputs rounded or truncated to a
 * format of machine epsilon EPS, each product is off by at most 2 EPS, so
 * |error| <= 0.5 k 2 EPS plus the fp32 accumulation: loose, but a wrong operand or transpose
 * is off by far more. */
static void check_math(rt_tctx *t, rt_kcuda_ctx *c, rt_trng *r, rt_kcuda_math math, double eps,
                       int64_t m, int64_t n, int64_t k)
{
    float *a = random_host(r, m * k, -1, 1), *b = random_host(r, n * k, -1, 1),
          *cm = random_host(r, m * n, -1, 1);
    float *d_a = rt_tdev(a, (size_t)(m * k) * 4), *d_b = rt_tdev(b, (size_t)(n * k) * 4),
          *d_c = rt_tdev(cm, (size_t)(m * n) * 4);
    RT_TCHECK(t, rt_kcuda_ctx_set_math(c, math) == RT_K_OK);
    RT_TCHECK(t, rt_kcpu_gemm(0, 1, m, n, k, 0.5f, a, k, b, k, 2.0f, cm, n) == RT_K_OK);
    RT_TCHECK(t, rt_kcuda_gemm(0, 1, m, n, k, 0.5f, d_a, k, d_b, k, 2.0f, d_c, n, c) == RT_K_OK);
    RT_TCHECK(t, rt_kcuda_ctx_sync(c) == RT_K_OK);
    char label[64];
    snprintf(label, sizeof label, "gpu gemm, math mode %d", (int)math);
    RT_TCLOSE_DEV(t, label, d_c, cm, m * n, 1e-5, 0.5 * (double)k * 2.0 * eps + 1e-4);
    RT_TCHECK(t, rt_kcuda_ctx_set_math(c, RT_KCUDA_MATH_FP32) == RT_K_OK);
    free(a), free(b), free(cm), D(d_a), D(d_b), D(d_c);
}

/* The linear layer goes through the same GEMM: a quick look in bf16 (k = 20 inputs). */
static void check_linear_bf16(rt_tctx *t, rt_kcuda_ctx *c, rt_trng *r)
{
    const int64_t B = 33, I = 20, O = 9;
    float *x = random_host(r, B * I, -1, 1), *w = random_host(r, O * I, -1, 1),
          *y = rt_talloc((size_t)(B * O) * 4);
    float *d_x = rt_tdev(x, (size_t)(B * I) * 4), *d_w = rt_tdev(w, (size_t)(O * I) * 4),
          *d_y = rt_tpoisoned((size_t)(B * O) * 4);
    RT_TCHECK(t, rt_kcuda_ctx_set_math(c, RT_KCUDA_MATH_BF16) == RT_K_OK);
    RT_TCHECK(t, rt_kcpu_linear_fwd(x, B, I, O, w, NULL, RT_KACT_NONE, y) == RT_K_OK);
    RT_TCHECK(t, rt_kcuda_linear_fwd(d_x, B, I, O, d_w, NULL, RT_KACT_NONE, d_y, c) == RT_K_OK);
    RT_TCHECK(t, rt_kcuda_ctx_sync(c) == RT_K_OK);
    RT_TCLOSE_DEV(t, "gpu linear bf16", d_y, y, B * O, 1e-5, (double)I * 2.0 * 0x1p-7 + 1e-4);
    RT_TCHECK(t, rt_kcuda_ctx_set_math(c, RT_KCUDA_MATH_FP32) == RT_K_OK);
    free(x), free(w), free(y), D(d_x), D(d_w), D(d_y);
}

int main(void)
{
    rt_tctx t = {0};
    rt_kcuda_ctx *c = rt_tgpu_or_skip("test_kcuda_dense_update");
    rt_trng r = {4242};
    const int64_t sizes[] = {0, 1, 7, 1000, 100003};
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        check_axpy(&t, c, &r, sizes[i]);
        check_convert(&t, c, &r, sizes[i]);
        check_adam(&t, c, &r, sizes[i], RT_KOPT_ADAM, 1, 3);
        check_adam(&t, c, &r, sizes[i], RT_KOPT_ADAM, 5000, 2);
        check_adam(&t, c, &r, sizes[i], RT_KOPT_SGD, 1, 2);
    }
    check_invalid(&t, c);
    check_math(&t, c, &r, RT_KCUDA_MATH_FP32, 0x1p-23, 65, 33, 130);
    check_math(&t, c, &r, RT_KCUDA_MATH_TF32, 0x1p-10, 65, 33, 130);
    check_math(&t, c, &r, RT_KCUDA_MATH_BF16, 0x1p-7, 65, 33, 130);
    check_math(&t, c, &r, RT_KCUDA_MATH_FP16, 0x1p-10, 128, 256, 64);
    check_linear_bf16(&t, c, &r);
    rt_kcuda_ctx_free(c);
    return rt_treport(&t, "test_kcuda_dense_update");
}
