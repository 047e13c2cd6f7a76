/* Stable LSD radix sort of (int64 key, int64 value) pairs, 8 bits per pass. Passes in which
 * every key has the same byte are skipped, so small ID ranges cost few passes. */
#include "internal.h"

static uint64_t sortable(int64_t k)
{
    return (uint64_t)k ^ (UINT64_C(1) << 63);
}

void rt_kcpu_sort_pairs(int64_t *keys, int64_t *vals, int64_t n, int64_t *tmp_keys,
                        int64_t *tmp_vals)
{
    if (n < 2) return;
    int64_t count[8][256];
    memset(count, 0, sizeof count);
    for (int64_t i = 0; i < n; i++) {
        const uint64_t k = sortable(keys[i]);
        for (int p = 0; p < 8; p++)
            count[p][(k >> (8 * p)) & 0xff]++;
    }
    int64_t *src_k = keys, *src_v = vals, *dst_k = tmp_keys, *dst_v = tmp_vals;
    for (int p = 0; p < 8; p++) {
        const uint64_t first = (sortable(src_k[0]) >> (8 * p)) & 0xff;
        if (count[p][first] == n) continue;
        int64_t start[256];
        int64_t sum = 0;
        for (int b = 0; b < 256; b++) {
            start[b] = sum;
            sum += count[p][b];
        }
        for (int64_t i = 0; i < n; i++) {
            const int64_t at = start[(sortable(src_k[i]) >> (8 * p)) & 0xff]++;
            dst_k[at] = src_k[i];
            dst_v[at] = src_v[i];
        }
        int64_t *t = src_k;
        src_k = dst_k;
        dst_k = t;
        t = src_v;
        src_v = dst_v;
        dst_v = t;
    }
    if (src_k != keys) {
        memcpy(keys, src_k, (size_t)n * sizeof *keys);
        memcpy(vals, src_v, (size_t)n * sizeof *vals);
    }
}
