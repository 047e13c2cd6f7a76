/* Embedding gather with pooling, sequence lookup, and row gather / scatter-add. */
#include "internal.h"

#include <stdlib.h>

/* Rows are fetched this many IDs ahead so the random row reads overlap. */
enum { PREFETCH_AHEAD = 32 };

static void prefetch_row(const rt_ktable *t, int64_t row)
{
    const char *p =
        (const char *)t->data + (size_t)row * (size_t)t->dim * rt_kdtype_bytes(t->dtype);
    const size_t bytes = (size_t)t->dim * rt_kdtype_bytes(t->dtype);
    for (size_t off = 0; off < bytes; off += 64)
        __builtin_prefetch(p + off, 0, 0);
}

/* restrict lets the compiler vectorize the row loops; a row and the accumulator never overlap
 * (the output is a separate buffer). */
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

/* fp16 -> fp32 without branches: shifting exponent and mantissa into place and scaling by
 * 2^112 is exact for normal and subnormal halves; infinities and NaNs are set directly. */
static void add_f16(const uint16_t *restrict src, float *restrict acc, int64_t d)
{
    for (int64_t j = 0; j < d; j++) {
        const uint32_t h = src[j], em = h & 0x7fffu;
        uint32_t shifted = em << 13, bits;
        float x;
        memcpy(&x, &shifted, sizeof x);
        x *= 0x1p112f;
        memcpy(&bits, &x, sizeof bits);
        bits = em >= 0x7c00u ? (shifted | 0x7f800000u) : bits;
        bits |= (h & 0x8000u) << 16;
        memcpy(&x, &bits, sizeof x);
        acc[j] += x;
    }
}

static void accumulate_row(const rt_ktable *t, int64_t row, float *acc)
{
    const int64_t d = t->dim;
    if (t->dtype == RT_KDT_FP32) {
        add_f32((const float *)t->data + row * d, acc, d);
    } else if (t->dtype == RT_KDT_FP16) {
        add_f16((const uint16_t *)t->data + row * d, acc, d);
    } else {
        add_bf16((const uint16_t *)t->data + row * d, acc, d);
    }
}

rt_kstatus rt_kcpu_gather_pool(const rt_ktable *t, const int64_t *ids, const int64_t *offsets,
                               int64_t nbags, rt_kpool pool, float *out)
{
    int64_t n;
    if (!rt_kcpu_table_ok(t) || !rt_kcpu_offsets_ok(offsets, nbags, &n) || (n > 0 && !ids) ||
        (nbags > 0 && !out) || (pool != RT_KPOOL_SUM && pool != RT_KPOOL_MEAN))
        return RT_K_EINVAL;
    if (!rt_kcpu_ids_in_range(ids, n, t->rows)) return RT_K_ERANGE;
    const int64_t d = t->dim;
    for (int64_t b = 0; b < nbags; b++) {
        float *acc = out + b * d;
        memset(acc, 0, (size_t)d * sizeof *acc);
        for (int64_t i = offsets[b]; i < offsets[b + 1]; i++) {
            if (i + PREFETCH_AHEAD < n) prefetch_row(t, ids[i + PREFETCH_AHEAD]);
            accumulate_row(t, ids[i], acc);
        }
        const int64_t len = offsets[b + 1] - offsets[b];
        if (pool == RT_KPOOL_MEAN && len > 0) {
            const float inv = 1.0f / (float)len;
            for (int64_t j = 0; j < d; j++)
                acc[j] *= inv;
        }
    }
    return RT_K_OK;
}

rt_kstatus rt_kcpu_sequence_lookup(const rt_ktable *t, const int64_t *ids, int64_t n, float *out)
{
    if (!rt_kcpu_table_ok(t) || n < 0 || (n > 0 && (!ids || !out))) return RT_K_EINVAL;
    if (!rt_kcpu_ids_in_range(ids, n, t->rows)) return RT_K_ERANGE;
    for (int64_t i = 0; i < n; i++) {
        if (i + PREFETCH_AHEAD < n) prefetch_row(t, ids[i + PREFETCH_AHEAD]);
        rt_kcpu_row_load(t, ids[i], out + i * t->dim);
    }
    return RT_K_OK;
}

rt_kstatus rt_kcpu_gather_rows(const float *src, int64_t src_rows, int64_t dim, const int64_t *idx,
                               int64_t n, float *dst)
{
    if (dim <= 0 || n < 0 || src_rows < 0 || (n > 0 && (!src || !idx || !dst))) return RT_K_EINVAL;
    if (!rt_kcpu_ids_in_range(idx, n, src_rows)) return RT_K_ERANGE;
    for (int64_t i = 0; i < n; i++)
        memcpy(dst + i * dim, src + idx[i] * dim, (size_t)dim * sizeof *dst);
    return RT_K_OK;
}

rt_kstatus rt_kcpu_scatter_add_rows(const float *src, int64_t n, int64_t dim, const int64_t *idx,
                                    int64_t dst_rows, float *dst)
{
    if (dim <= 0 || n < 0 || dst_rows < 0 || (n > 0 && (!src || !idx || !dst))) return RT_K_EINVAL;
    if (!rt_kcpu_ids_in_range(idx, n, dst_rows)) return RT_K_ERANGE;
    for (int64_t i = 0; i < n; i++) {
        float *row = dst + idx[i] * dim;
        const float *g = src + i * dim;
        for (int64_t j = 0; j < dim; j++)
            row[j] += g[j];
    }
    return RT_K_OK;
}
