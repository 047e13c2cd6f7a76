/* Software prefetch of embedding rows for the random-gather kernels (pooled and sequence
 * lookups). Internal to the CPU kernels. */
#ifndef RT_KCPU_ROW_PREFETCH_H
#define RT_KCPU_ROW_PREFETCH_H

#include <stddef.h>
#include <stdint.h>

/* About 8 KiB of rows in flight. Measured on the pooled gather at dims 64-256 fp32 (Zen 5, one
 * thread): 4 KiB was 10-20% slower, 16 KiB no faster. */
enum {
    RT_KCPU_PREFETCH_BYTES = 8192,
    RT_KCPU_PREFETCH_MIN_ROWS = 4,
    RT_KCPU_PREFETCH_MAX_ROWS = 64,
    RT_KCPU_LINE = 64
};

/* Prefetch helpers must be inlined early: out of line, GCC judges a function made only of loads
 * and prefetches pure and deletes its calls, since their result is unused. */
#define RT_KCPU_PREFETCH_HELPER static inline __attribute__((always_inline))

/* IDs to look ahead so that about RT_KCPU_PREFETCH_BYTES of rows are in flight. */
RT_KCPU_PREFETCH_HELPER int64_t rt_kcpu_rows_ahead(size_t row_bytes)
{
    const int64_t rows = (int64_t)(RT_KCPU_PREFETCH_BYTES / row_bytes);
    return rows < RT_KCPU_PREFETCH_MIN_ROWS   ? RT_KCPU_PREFETCH_MIN_ROWS
           : rows > RT_KCPU_PREFETCH_MAX_ROWS ? RT_KCPU_PREFETCH_MAX_ROWS
                                              : rows;
}

/* Requests the row's cache lines (all of them when rows are line-aligned, as in any table from
 * an aligned allocation). Unrolled on purpose: a loop with a branch per line cost the gather
 * about a fifth of its bandwidth at dim 64 fp32. */
RT_KCPU_PREFETCH_HELPER void rt_kcpu_prefetch_row(const char *row, size_t row_bytes)
{
    size_t off = 0;
    for (; off + 4 * RT_KCPU_LINE <= row_bytes; off += 4 * RT_KCPU_LINE) {
        __builtin_prefetch(row + off);
        __builtin_prefetch(row + off + RT_KCPU_LINE);
        __builtin_prefetch(row + off + 2 * RT_KCPU_LINE);
        __builtin_prefetch(row + off + 3 * RT_KCPU_LINE);
    }
    switch ((row_bytes - off + RT_KCPU_LINE - 1) / RT_KCPU_LINE) {
    case 3:
        __builtin_prefetch(row + off + 2 * RT_KCPU_LINE);
        /* fall through */
    case 2:
        __builtin_prefetch(row + off + RT_KCPU_LINE);
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
RT_KCPU_PREFETCH_HELPER void rt_kcpu_prefetch_later(const char *data, size_t row_bytes,
                                                    const int64_t *ids, int64_t i, int64_t ahead,
                                                    int64_t n)
{
    const int64_t k = i + ahead < n ? i + ahead : n - 1;
    rt_kcpu_prefetch_row(data + (size_t)ids[k] * row_bytes, row_bytes);
}

#endif
