/* fp16 and bf16 storage conversions, bit-exact round-to-nearest-even. */
#include "kernels.h"

#include <string.h>

static uint32_t f32_bits(float x)
{
    uint32_t u;
    memcpy(&u, &x, sizeof u);
    return u;
}

static float bits_f32(uint32_t u)
{
    float x;
    memcpy(&x, &u, sizeof x);
    return x;
}

uint16_t rt_kf32_to_f16(float x)
{
    const uint32_t u = f32_bits(x);
    const uint16_t sign = (uint16_t)((u >> 16) & 0x8000u);
    const uint32_t exp = (u >> 23) & 0xffu;
    uint32_t man = u & 0x7fffffu;
    if (exp == 0xff) /* keep NaN a NaN by forcing a mantissa bit */
        return (uint16_t)(sign | 0x7c00u | (man ? 0x200u | (man >> 13) : 0u));
    const int32_t e = (int32_t)exp - 127 + 15;
    if (e >= 31) return (uint16_t)(sign | 0x7c00u);
    if (e <= 0) {
        if (e < -10) return sign;
        man |= 0x800000u;
        const uint32_t shift = (uint32_t)(14 - e);
        uint32_t half = man >> shift;
        const uint32_t rem = man & ((1u << shift) - 1u);
        const uint32_t mid = 1u << (shift - 1u);
        if (rem > mid || (rem == mid && (half & 1u))) half++;
        return (uint16_t)(sign | half);
    }
    uint32_t half = ((uint32_t)e << 10) | (man >> 13);
    const uint32_t rem = man & 0x1fffu;
    if (rem > 0x1000u || (rem == 0x1000u && (half & 1u)))
        half++; /* a carry into the exponent rounds up correctly, up to infinity */
    return (uint16_t)(sign | half);
}

float rt_kf16_to_f32(uint16_t h)
{
    const uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
    const uint32_t exp = (h >> 10) & 0x1fu;
    uint32_t man = h & 0x3ffu;
    if (exp == 0x1f) return bits_f32(sign | 0x7f800000u | (man << 13));
    if (exp == 0) {
        if (man == 0) return bits_f32(sign);
        int32_t e = -14;
        while (!(man & 0x400u)) {
            man <<= 1;
            e--;
        }
        man &= 0x3ffu;
        return bits_f32(sign | ((uint32_t)(e + 127) << 23) | (man << 13));
    }
    return bits_f32(sign | ((exp - 15 + 127) << 23) | (man << 13));
}

uint16_t rt_kf32_to_bf16(float x)
{
    const uint32_t u = f32_bits(x);
    if ((u & 0x7f800000u) == 0x7f800000u && (u & 0x7fffffu)) return (uint16_t)((u >> 16) | 0x40u);
    const uint32_t rounding = 0x7fffu + ((u >> 16) & 1u);
    return (uint16_t)((u + rounding) >> 16);
}

float rt_kbf16_to_f32(uint16_t b)
{
    return bits_f32((uint32_t)b << 16);
}

static float load_elem(const void *p, rt_kdtype dt, int64_t i)
{
    if (dt == RT_KDT_FP32) return ((const float *)p)[i];
    uint16_t h = ((const uint16_t *)p)[i];
    return dt == RT_KDT_FP16 ? rt_kf16_to_f32(h) : rt_kbf16_to_f32(h);
}

rt_kstatus rt_kcpu_convert(const void *in, rt_kdtype from, int64_t n, rt_kdtype to, void *out)
{
    if (n < 0 || (n && (!in || !out)) || from > RT_KDT_BF16 || to > RT_KDT_BF16)
        return RT_K_EINVAL;
    for (int64_t i = 0; i < n; i++) {
        float x = load_elem(in, from, i);
        if (to == RT_KDT_FP32)
            ((float *)out)[i] = x;
        else
            ((uint16_t *)out)[i] = to == RT_KDT_FP16 ? rt_kf32_to_f16(x) : rt_kf32_to_bf16(x);
    }
    return RT_K_OK;
}
