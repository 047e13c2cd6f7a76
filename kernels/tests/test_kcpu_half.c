/* fp16 / bf16 conversions: hand-checked bit patterns, ties to even, and exact round trips. */
#include "harness.h"
#include "kernels.h"

#include <string.h>

static float from_bits(uint32_t u)
{
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

static void test_f16_known_values(rt_tctx *t)
{
    RT_TCHECK(t, rt_kf32_to_f16(1.0f) == 0x3c00);
    RT_TCHECK(t, rt_kf32_to_f16(-2.0f) == 0xc000);
    RT_TCHECK(t, rt_kf32_to_f16(65504.0f) == 0x7bff);
    RT_TCHECK(t, rt_kf32_to_f16(65520.0f) == 0x7c00);      /* halfway to 2^16 rounds to infinity */
    RT_TCHECK(t, rt_kf32_to_f16(5.9604645e-8f) == 0x0001); /* 2^-24, smallest subnormal */
    RT_TCHECK(t, rt_kf32_to_f16(2.9802322e-8f) == 0x0000); /* 2^-25 ties to even zero */
    RT_TCHECK(t, rt_kf32_to_f16(0.1f) == 0x2e66);
    RT_TCHECK(t, rt_kf32_to_f16(1.0f + 1.0f / 2048.0f) == 0x3c00); /* tie, even stays */
    RT_TCHECK(t, rt_kf32_to_f16(1.0f + 3.0f / 2048.0f) == 0x3c02); /* tie, odd rounds up */
    RT_TCHECK(t, rt_kf16_to_f32(0x3555) == 0.333251953125f);
    RT_TCHECK(t, rt_kf16_to_f32(0x0001) == 5.9604645e-8f);
    RT_TCHECK(t, isinf(rt_kf16_to_f32(0xfc00)) && rt_kf16_to_f32(0xfc00) < 0);
    RT_TCHECK(t, isnan(rt_kf16_to_f32(rt_kf32_to_f16(from_bits(0x7fc00001u)))));
}

static void test_bf16_known_values(rt_tctx *t)
{
    RT_TCHECK(t, rt_kf32_to_bf16(1.0f) == 0x3f80);
    RT_TCHECK(t, rt_kf32_to_bf16(1.0f + 1.0f / 256.0f) == 0x3f80); /* tie to even */
    RT_TCHECK(t, rt_kf32_to_bf16(1.0f + 3.0f / 256.0f) == 0x3f82);
    RT_TCHECK(t, rt_kf32_to_bf16(-3.0f) == 0xc040);
    RT_TCHECK(t, rt_kbf16_to_f32(0x4049) == 3.140625f);
    RT_TCHECK(t, isnan(rt_kbf16_to_f32(rt_kf32_to_bf16(from_bits(0x7f800001u)))));
    RT_TCHECK(t, isinf(rt_kbf16_to_f32(rt_kf32_to_bf16(3.4e38f))));
}

static void test_round_trips(rt_tctx *t)
{
    int bad16 = 0, bad_bf = 0;
    for (uint32_t h = 0; h < 65536; h++) {
        const float f = rt_kf16_to_f32((uint16_t)h);
        if (!isnan(f) && rt_kf32_to_f16(f) != h) bad16++;
        const float b = rt_kbf16_to_f32((uint16_t)h);
        if (!isnan(b) && rt_kf32_to_bf16(b) != h) bad_bf++;
    }
    RT_TCHECK(t, bad16 == 0);
    RT_TCHECK(t, bad_bf == 0);
    /* Rounding error of random normal values is at most half an ulp. */
    rt_trng r = {1};
    int over = 0;
    for (int i = 0; i < 100000; i++) {
        const float x = rt_tuniform(&r, -1000.0f, 1000.0f);
        if (fabsf(x) < 1e-3f) continue;
        const double e16 = fabs((double)rt_kf16_to_f32(rt_kf32_to_f16(x)) - x) / fabs(x);
        const double ebf = fabs((double)rt_kbf16_to_f32(rt_kf32_to_bf16(x)) - x) / fabs(x);
        if (e16 > 1.0 / 2048.0 || ebf > 1.0 / 256.0) over++;
    }
    RT_TCHECK(t, over == 0);
}

/* The array conversion agrees with the scalar one element by element, both ways. */
static void test_convert(rt_tctx *t)
{
    rt_trng r = {7};
    enum { N = 1000 };
    float x[N], back[N];
    uint16_t h[N];
    rt_tfill(&r, x, N, -300.0f, 300.0f);
    const rt_kdtype half[] = {RT_KDT_FP16, RT_KDT_BF16};
    for (int k = 0; k < 2; k++) {
        RT_TCHECK(t, rt_kcpu_convert(x, RT_KDT_FP32, N, half[k], h) == RT_K_OK);
        RT_TCHECK(t, rt_kcpu_convert(h, half[k], N, RT_KDT_FP32, back) == RT_K_OK);
        int bad = 0;
        for (int i = 0; i < N; i++) {
            uint16_t want = k ? rt_kf32_to_bf16(x[i]) : rt_kf32_to_f16(x[i]);
            float wback = k ? rt_kbf16_to_f32(want) : rt_kf16_to_f32(want);
            bad += h[i] != want || back[i] != wback;
        }
        RT_TCHECK(t, bad == 0);
    }
    RT_TCHECK(t, rt_kcpu_convert(x, RT_KDT_FP32, N, RT_KDT_FP32, back) == RT_K_OK);
    RT_TCHECK(t, memcmp(x, back, sizeof x) == 0);
    RT_TCHECK(t, rt_kcpu_convert(NULL, RT_KDT_FP32, 4, RT_KDT_FP16, h) == RT_K_EINVAL);
    RT_TCHECK(t, rt_kcpu_convert(x, (rt_kdtype)7, 4, RT_KDT_FP16, h) == RT_K_EINVAL);
}

int main(void)
{
    rt_tctx t = {0};
    test_convert(&t);
    test_f16_known_values(&t);
    test_bf16_known_values(&t);
    test_round_trips(&t);
    return rt_treport(&t, "test_kcpu_half");
}
