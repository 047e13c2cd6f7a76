/* Helpers shared by the CPU kernels; not part of the public interface. */
#ifndef RT_KCPU_INTERNAL_H
#define RT_KCPU_INTERNAL_H

#include "kernels.h"

#include <stdbool.h>
#include <string.h>

/* sums[c] = sum over rows r of m[r * cols + c]: a bias gradient. Accumulated row by row so the
 * inner loop runs along memory and vectorizes; a column-by-column loop is one chain of
 * dependent float adds per column, which with a branchy activation gradient made a linear
 * layer's backward 13x its GEMMs at 13 -> 512 on a Zen 4 guest
 * (experiments/measurements/cpu/linear-bwd/lbwd-old.log). Each column still adds its rows in
 * order 0, 1, ..., so the sums are the same floats. */
static inline void rt_kcpu_col_sums(const float *restrict m, int64_t rows, int64_t cols,
                                    float *restrict sums)
{
    for (int64_t c = 0; c < cols; c++)
        sums[c] = 0.0f;
    for (int64_t r = 0; r < rows; r++) {
        const float *restrict row = m + r * cols;
        for (int64_t c = 0; c < cols; c++)
            sums[c] += row[c];
    }
}

/* Reads row `row` of t into dst as fp32. */
static inline void rt_kcpu_row_load(const rt_ktable *t, int64_t row, float *dst)
{
    const int64_t d = t->dim;
    if (t->dtype == RT_KDT_FP32) {
        memcpy(dst, (const float *)t->data + row * d, (size_t)d * sizeof(float));
        return;
    }
    const uint16_t *src = (const uint16_t *)t->data + row * d;
    if (t->dtype == RT_KDT_FP16)
        for (int64_t j = 0; j < d; j++)
            dst[j] = rt_kf16_to_f32(src[j]);
    else
        for (int64_t j = 0; j < d; j++)
            dst[j] = rt_kbf16_to_f32(src[j]);
}

/* Writes fp32 values into row `row` of t, rounding to its storage type. */
static inline void rt_kcpu_row_store(rt_ktable *t, int64_t row, const float *src)
{
    const int64_t d = t->dim;
    if (t->dtype == RT_KDT_FP32) {
        memcpy((float *)t->data + row * d, src, (size_t)d * sizeof(float));
        return;
    }
    uint16_t *dst = (uint16_t *)t->data + row * d;
    if (t->dtype == RT_KDT_FP16)
        for (int64_t j = 0; j < d; j++)
            dst[j] = rt_kf32_to_f16(src[j]);
    else
        for (int64_t j = 0; j < d; j++)
            dst[j] = rt_kf32_to_bf16(src[j]);
}

/* The loops of rt_kcpu_gather_pool on validated inputs: out[b] = sum (or mean when mean) of the
 * rows of bag b; an empty bag gives zeros. */
void rt_kcpu_pool_bags(const rt_ktable *t, const int64_t *ids, const int64_t *offsets,
                       int64_t nbags, bool mean, float *out);

bool rt_kcpu_table_ok(const rt_ktable *t);
/* offsets[0] == 0, non-decreasing; *total = offsets[nseg]. */
bool rt_kcpu_offsets_ok(const int64_t *offsets, int64_t nseg, int64_t *total);
bool rt_kcpu_ids_in_range(const int64_t *ids, int64_t n, int64_t rows);

/* Stable LSD radix sort of (key, val) pairs by key as signed int64, ascending. tmp_keys and
 * tmp_vals hold n entries each. */
void rt_kcpu_sort_pairs(int64_t *keys, int64_t *vals, int64_t n, int64_t *tmp_keys,
                        int64_t *tmp_vals);

#endif
