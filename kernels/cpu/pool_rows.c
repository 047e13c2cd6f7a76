/* The bag-pooling loops behind rt_kcpu_gather_pool.
 *
 * A pooled lookup is a random gather: each row is a few cache lines nobody will read again, so
 * its speed is set by how many row reads are in flight, not by arithmetic. Two things raise that
 * number. Rows are prefetched a fixed number of bytes ahead in ID order, across bag boundaries
 * (row_prefetch.h). And the loop around the loads is kept small: every pending load holds a
 * load-queue entry, so a row costs one 32-byte load per 8 values and its bag sum stays in
 * registers rather than making a load and a store per value through memory. That needs 256-bit
 * vectors, which only the AVX2 loop below has (GCC vector extensions in a function built for
 * AVX2, chosen at run time); the portable loop is what other CPUs and other dims run. Both add
 * a bag's rows in ID order, so they give bitwise the same sums. */
#include "internal.h"
#include "row_prefetch.h"

/* rt_kdtype_bytes lives in another file; this one folds to a constant in the typed loops. */
static inline size_t elem_bytes(rt_kdtype dt)
{
    return dt == RT_KDT_FP32 ? 4 : 2;
}

/* ---- portable loop -------------------------------------------------------------------- */

static void add_f32(const float *restrict src, float *restrict acc, int64_t d)
{
    for (int64_t j = 0; j < d; j++)
        acc[j] += src[j];
}

static void add_bf16(const uint16_t *restrict src, float *restrict acc, int64_t d)
{
    for (int64_t j = 0; j < d; j++) {
        const uint32_t bits = (uint32_t)src[j] << 16;
        float x;
        memcpy(&x, &bits, sizeof x);
        acc[j] += x;
    }
}

/* fp16 -> fp32 by integer and float operations only, so it vectorizes: exponent and mantissa
 * shifted into place and scaled by 2^112 are exact for normal and subnormal halves; for
 * infinities and NaNs a mask selects the all-ones exponent instead. */
static void add_f16(const uint16_t *restrict src, float *restrict acc, int64_t d)
{
    for (int64_t j = 0; j < d; j++) {
        const uint32_t h = src[j], em = h & 0x7fffu, shifted = em << 13;
        const uint32_t special = 0u - (uint32_t)(em >= 0x7c00u);
        float x;
        memcpy(&x, &shifted, sizeof x);
        x *= 0x1p112f;
        uint32_t bits;
        memcpy(&bits, &x, sizeof bits);
        bits = (bits & ~special) | ((shifted | 0x7f800000u) & special) | (h & 0x8000u) << 16;
        memcpy(&x, &bits, sizeof x);
        acc[j] += x;
    }
}

static void pool_portable(const rt_ktable *t, const int64_t *ids, const int64_t *offsets,
                          int64_t nbags, bool mean, float *out)
{
    const int64_t d = t->dim, n = offsets[nbags];
    const size_t row_bytes = (size_t)d * elem_bytes(t->dtype);
    const int64_t ahead = rt_kcpu_rows_ahead(row_bytes);
    const char *data = t->data;
    for (int64_t b = 0; b < nbags; b++) {
        const int64_t lo = offsets[b], hi = offsets[b + 1];
        float *acc = out + b * d;
        memset(acc, 0, (size_t)d * sizeof *acc);
        for (int64_t i = lo; i < hi; i++) {
            rt_kcpu_prefetch_later(data, row_bytes, ids, i, ahead, n);
            const void *row = data + (size_t)ids[i] * row_bytes;
            if (t->dtype == RT_KDT_FP32)
                add_f32(row, acc, d);
            else if (t->dtype == RT_KDT_FP16)
                add_f16(row, acc, d);
            else
                add_bf16(row, acc, d);
        }
        if (mean && hi > lo) {
            const float inv = 1.0f / (float)(hi - lo);
            for (int64_t j = 0; j < d; j++)
                acc[j] *= inv;
        }
    }
}

/* ---- AVX2 loop ------------------------------------------------------------------------ */

/* GCC only: __builtin_shuffle has another name in clang. */
#if defined(__GNUC__) && !defined(__clang__) && (defined(__x86_64__) || defined(__i386__))
#define HAVE_AVX2_LOOP 1
#define AVX2 __attribute__((target("avx2,f16c")))
#define INLINE_AVX2 static inline __attribute__((always_inline, target("avx2,f16c")))

/* GCC vector types; aligned(2/4) makes loads and stores of them unaligned ones. */
typedef float f32x8 __attribute__((vector_size(32), aligned(4)));
typedef uint32_t u32x8 __attribute__((vector_size(32), aligned(4)));
typedef uint16_t u16x8 __attribute__((vector_size(16), aligned(2)));
typedef short i16x8 __attribute__((vector_size(16), aligned(2)));
typedef int32_t i32x8 __attribute__((vector_size(32)));

INLINE_AVX2 f32x8 load8(const char *p, rt_kdtype dt)
{
    if (dt == RT_KDT_FP32) return *(const f32x8 *)p;
    if (dt == RT_KDT_FP16) return __builtin_ia32_vcvtph2ps256(*(const i16x8 *)p);
    return (f32x8)(__builtin_convertvector(*(const u16x8 *)p, u32x8) << 16);
}

/* Prefetches this tile's bytes of the row `ahead` IDs later (of the last ID near the end). Every
 * tile prefetches its own columns, so bytes is a constant and the loop unrolls into bare
 * prefetches. Prefetching whole rows with a runtime-length loop in the first tile instead was
 * measured 10% slower at dim 64 fp32 and 25% slower at dim 128. */
INLINE_AVX2 void prefetch_tile(const char *data, size_t row_bytes, size_t col, const int64_t *ids,
                               int64_t i, int64_t ahead, int64_t n, size_t bytes)
{
    const int64_t k = i + ahead < n ? i + ahead : n - 1;
    const char *p = data + (size_t)ids[k] * row_bytes + col;
    for (size_t off = 0; off < bytes; off += RT_KCPU_LINE)
        __builtin_prefetch(p + off);
}

/* The bf16 tiles of even k: a 32-byte load holds 16 values whose even ones become floats
 * by a shift and odd ones by a mask, one operation each, where widening 8 values costs two. The
 * sums are kept split into even and odd values and interleaved once per bag. */
INLINE_AVX2 void pool_tile_bf16(const char *data, size_t row_bytes, size_t col, const int64_t *ids,
                                int64_t lo, int64_t len, int64_t ahead, int64_t n, int k,
                                float scale, float *out)
{
    f32x8 even[4] = {0}, odd[4] = {0};
    for (int64_t i = lo; i < lo + len; i++) {
        prefetch_tile(data, row_bytes, col, ids, i, ahead, n, (size_t)k * 16);
        const char *row = data + (size_t)ids[i] * row_bytes + col;
        for (int q = 0; q < k / 2; q++) {
            u32x8 w; /* memcpy: the row holds uint16_t, which a u32x8 may not alias */
            memcpy(&w, row + 32 * q, sizeof w);
            even[q] += (f32x8)(w << 16);
            odd[q] += (f32x8)(w & 0xffff0000u);
        }
    }
    const i32x8 first = {0, 8, 1, 9, 2, 10, 3, 11}, second = {4, 12, 5, 13, 6, 14, 7, 15};
    for (int q = 0; q < k / 2; q++) {
        ((f32x8 *)out)[2 * q] = __builtin_shuffle(even[q], odd[q], first) * scale;
        ((f32x8 *)out)[2 * q + 1] = __builtin_shuffle(even[q], odd[q], second) * scale;
    }
}

/* out[0 .. 8k) = scale * sum of the values at byte offset col of rows ids[lo .. lo + len); the
 * k accumulators stay in registers for the whole bag. */
INLINE_AVX2 void pool_tile(const char *data, size_t row_bytes, size_t col, const int64_t *ids,
                           int64_t lo, int64_t len, int64_t ahead, int64_t n, rt_kdtype dt, int k,
                           float scale, float *out)
{
    if (dt == RT_KDT_BF16 && k % 2 == 0) {
        pool_tile_bf16(data, row_bytes, col, ids, lo, len, ahead, n, k, scale, out);
        return;
    }
    const size_t step = 8 * elem_bytes(dt);
    f32x8 acc[8] = {0};
    for (int64_t i = lo; i < lo + len; i++) {
        prefetch_tile(data, row_bytes, col, ids, i, ahead, n, (size_t)k * step);
        const char *p = data + (size_t)ids[i] * row_bytes + col;
        for (int q = 0; q < k; q++)
            acc[q] += load8(p + (size_t)q * step, dt);
    }
    for (int q = 0; q < k; q++)
        ((f32x8 *)out)[q] = acc[q] * scale;
}

/* Needs dim % 8 == 0. The row is cut into tiles of 64 values, then one each of 32, 16 and 8 as
 * the rest needs. */
INLINE_AVX2 void pool_avx2_dtype(const rt_ktable *t, const int64_t *ids, const int64_t *offsets,
                                 int64_t nbags, bool mean, rt_kdtype dt, float *out)
{
    const int64_t d = t->dim, n = offsets[nbags];
    const size_t eb = elem_bytes(dt), row_bytes = (size_t)d * eb;
    const int64_t ahead = rt_kcpu_rows_ahead(row_bytes);
    const char *data = t->data;
    for (int64_t b = 0; b < nbags; b++) {
        const int64_t lo = offsets[b], len = offsets[b + 1] - lo;
        const float scale = mean && len > 0 ? 1.0f / (float)len : 1.0f;
        float *o = out + b * d;
        int64_t c = 0;
        for (; c + 64 <= d; c += 64)
            pool_tile(data, row_bytes, (size_t)c * eb, ids, lo, len, ahead, n, dt, 8, scale, o + c);
        if ((d - c) & 32) {
            pool_tile(data, row_bytes, (size_t)c * eb, ids, lo, len, ahead, n, dt, 4, scale, o + c);
            c += 32;
        }
        if ((d - c) & 16) {
            pool_tile(data, row_bytes, (size_t)c * eb, ids, lo, len, ahead, n, dt, 2, scale, o + c);
            c += 16;
        }
        if ((d - c) & 8)
            pool_tile(data, row_bytes, (size_t)c * eb, ids, lo, len, ahead, n, dt, 1, scale, o + c);
    }
}

/* One copy per storage type, so the type test leaves the inner loops. */
AVX2 static void pool_avx2(const rt_ktable *t, const int64_t *ids, const int64_t *offsets,
                           int64_t nbags, bool mean, float *out)
{
    if (t->dtype == RT_KDT_FP32)
        pool_avx2_dtype(t, ids, offsets, nbags, mean, RT_KDT_FP32, out);
    else if (t->dtype == RT_KDT_FP16)
        pool_avx2_dtype(t, ids, offsets, nbags, mean, RT_KDT_FP16, out);
    else
        pool_avx2_dtype(t, ids, offsets, nbags, mean, RT_KDT_BF16, out);
}
#endif

void rt_kcpu_pool_bags(const rt_ktable *t, const int64_t *ids, const int64_t *offsets,
                       int64_t nbags, bool mean, float *out)
{
#ifdef HAVE_AVX2_LOOP
    if (t->dim % 8 == 0 && __builtin_cpu_supports("avx2") && __builtin_cpu_supports("f16c")) {
        pool_avx2(t, ids, offsets, nbags, mean, out);
        return;
    }
#endif
    pool_portable(t, ids, offsets, nbags, mean, out);
}
