/* The bag-pooling loops behind rt_kcpu_gather_pool.
 *
 * A pooled lookup is a random gather: each row is a few cache lines nobody will read again, so
 * its speed is set by how many row reads are in flight, not by arithmetic. Two things raise that
 * number. Rows are prefetched a fixed number of bytes ahead in ID order, across bag boundaries.
 * And the loop around the loads is kept small: every pending load holds a load-queue entry, so
 * a row costs one 32-byte load per 8 values and its bag sum stays in registers rather than
 * making a load and a store per value through memory. The second needs 256-bit vectors, which
 * only the AVX2 loop below has; the portable loop is what other CPUs and odd dims run. */
#include "internal.h"

/* About 8 KiB of rows in flight: enough to cover memory latency at one core's bandwidth, few
 * enough that prefetched rows are still in L1/L2 when the loop reaches them. */
enum { PREFETCH_BYTES = 8192, PREFETCH_MIN_ROWS = 4, PREFETCH_MAX_ROWS = 64, LINE = 64 };

/* rt_kdtype_bytes lives in another file; this one folds to a constant in the typed loops. */
static inline size_t elem_bytes(rt_kdtype dt)
{
    return dt == RT_KDT_FP32 ? 4 : 2;
}

static int64_t rows_ahead(size_t row_bytes)
{
    const int64_t rows = (int64_t)(PREFETCH_BYTES / row_bytes);
    return rows < PREFETCH_MIN_ROWS   ? PREFETCH_MIN_ROWS
           : rows > PREFETCH_MAX_ROWS ? PREFETCH_MAX_ROWS
                                      : rows;
}

/* Requests the row's cache lines (all of them when rows are line-aligned, as in any table from
 * an aligned allocation). Unrolled and branch-light on purpose: with one branch per line, or a
 * branch per ID around it, the gather lost 10-20% of its bandwidth at dim 64 fp32. */
/* Prefetch helpers must be inlined early: out of line, GCC judges a function made only of loads
 * and prefetches pure and deletes its calls, since their result is unused. */
#define PREFETCH_HELPER static inline __attribute__((always_inline))

PREFETCH_HELPER void prefetch_row(const char *row, size_t row_bytes)
{
    size_t off = 0;
    for (; off + 4 * LINE <= row_bytes; off += 4 * LINE) {
        __builtin_prefetch(row + off);
        __builtin_prefetch(row + off + LINE);
        __builtin_prefetch(row + off + 2 * LINE);
        __builtin_prefetch(row + off + 3 * LINE);
    }
    switch ((row_bytes - off + LINE - 1) / LINE) {
    case 3:
        __builtin_prefetch(row + off + 2 * LINE);
        /* fall through */
    case 2:
        __builtin_prefetch(row + off + LINE);
        /* fall through */
    case 1:
        __builtin_prefetch(row + off);
        break;
    default:
        break;
    }
}

/* Prefetches the row of ID i + ahead, or of the last ID near the end: a redundant request is
 * cheaper than a branch in the loop. */
PREFETCH_HELPER void prefetch_later(const char *data, size_t row_bytes, const int64_t *ids,
                                    int64_t i, int64_t ahead, int64_t n)
{
    const int64_t k = i + ahead < n ? i + ahead : n - 1;
    prefetch_row(data + (size_t)ids[k] * row_bytes, row_bytes);
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
    const int64_t ahead = rows_ahead(row_bytes);
    const char *data = t->data;
    for (int64_t b = 0; b < nbags; b++) {
        const int64_t lo = offsets[b], hi = offsets[b + 1];
        float *acc = out + b * d;
        memset(acc, 0, (size_t)d * sizeof *acc);
        for (int64_t i = lo; i < hi; i++) {
            prefetch_later(data, row_bytes, ids, i, ahead, n);
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

#if defined(__GNUC__) && (defined(__x86_64__) || defined(__i386__))
#define HAVE_AVX2_LOOP 1
#define AVX2 __attribute__((target("avx2")))
#define INLINE_AVX2 static inline __attribute__((always_inline, target("avx2")))

/* GCC vector types; aligned(2/4) makes loads and stores of them unaligned ones. */
typedef float f32x8 __attribute__((vector_size(32), aligned(4)));
typedef uint32_t u32x8 __attribute__((vector_size(32), aligned(4)));
typedef uint16_t u16x8 __attribute__((vector_size(16), aligned(2)));

/* The bit trick of add_f16 on eight values at once. */
INLINE_AVX2 f32x8 f16x8_to_f32(u32x8 h)
{
    const u32x8 em = h & 0x7fffu, shifted = em << 13;
    const u32x8 special = (u32x8)(em >= 0x7c00u);
    const u32x8 scaled = (u32x8)((f32x8)shifted * 0x1p112f);
    return (f32x8)((scaled & ~special) | ((shifted | 0x7f800000u) & special) | (h & 0x8000u) << 16);
}

INLINE_AVX2 f32x8 load8(const char *p, rt_kdtype dt)
{
    if (dt == RT_KDT_FP32) return *(const f32x8 *)p;
    const u32x8 w = __builtin_convertvector(*(const u16x8 *)p, u32x8);
    return dt == RT_KDT_BF16 ? (f32x8)(w << 16) : f16x8_to_f32(w);
}

/* out[0 .. 8k) = scale * sum of the values at byte offset col of rows ids[lo .. lo + len); the
 * k accumulators stay in registers for the whole bag. The first tile of a row also prefetches. */
INLINE_AVX2 void pool_tile(const char *data, size_t row_bytes, size_t col, const int64_t *ids,
                           int64_t lo, int64_t len, int64_t ahead, int64_t n, bool prefetch,
                           rt_kdtype dt, int k, float scale, float *out)
{
    const size_t step = 8 * elem_bytes(dt);
    f32x8 acc[8] = {0};
    for (int64_t i = lo; i < lo + len; i++) {
        if (prefetch) prefetch_later(data, row_bytes, ids, i, ahead, n);
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
    const int64_t ahead = rows_ahead(row_bytes);
    const char *data = t->data;
    for (int64_t b = 0; b < nbags; b++) {
        const int64_t lo = offsets[b], len = offsets[b + 1] - lo;
        const float scale = mean && len > 0 ? 1.0f / (float)len : 1.0f;
        float *o = out + b * d;
        int64_t c = 0;
        for (; c + 64 <= d; c += 64)
            pool_tile(data, row_bytes, (size_t)c * eb, ids, lo, len, ahead, n, c == 0, dt, 8, scale,
                      o + c);
        if ((d - c) & 32) {
            pool_tile(data, row_bytes, (size_t)c * eb, ids, lo, len, ahead, n, c == 0, dt, 4, scale,
                      o + c);
            c += 32;
        }
        if ((d - c) & 16) {
            pool_tile(data, row_bytes, (size_t)c * eb, ids, lo, len, ahead, n, c == 0, dt, 2, scale,
                      o + c);
            c += 16;
        }
        if ((d - c) & 8)
            pool_tile(data, row_bytes, (size_t)c * eb, ids, lo, len, ahead, n, c == 0, dt, 1, scale,
                      o + c);
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
    if (t->dim % 8 == 0 && __builtin_cpu_supports("avx2")) {
        pool_avx2(t, ids, offsets, nbags, mean, out);
        return;
    }
#endif
    pool_portable(t, ids, offsets, nbags, mean, out);
}
