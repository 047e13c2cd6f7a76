/* Conversions between jagged (total x d) and padded dense (nseg x max_len x d) layouts. */
#include "internal.h"

static bool shape_ok(const int64_t *offsets, int64_t nseg, int64_t d, int64_t max_len,
                     int64_t *total)
{
    return d > 0 && max_len >= 0 && rt_kcpu_offsets_ok(offsets, nseg, total);
}

rt_kstatus rt_kcpu_jagged_to_dense(const float *values, const int64_t *offsets, int64_t nseg,
                                   int64_t d, int64_t max_len, float pad, float *dense)
{
    int64_t total;
    if (!shape_ok(offsets, nseg, d, max_len, &total) || (total > 0 && !values) ||
        (nseg * max_len > 0 && !dense))
        return RT_K_EINVAL;
    for (int64_t s = 0; s < nseg; s++) {
        const int64_t len = offsets[s + 1] - offsets[s];
        const int64_t keep = len < max_len ? len : max_len;
        float *dst = dense + s * max_len * d;
        memcpy(dst, values + offsets[s] * d, (size_t)(keep * d) * sizeof *dst);
        for (int64_t i = keep * d; i < max_len * d; i++)
            dst[i] = pad;
    }
    return RT_K_OK;
}

rt_kstatus rt_kcpu_dense_to_jagged(const float *dense, const int64_t *offsets, int64_t nseg,
                                   int64_t d, int64_t max_len, float *values)
{
    int64_t total;
    if (!shape_ok(offsets, nseg, d, max_len, &total) || (total > 0 && !values) ||
        (nseg * max_len > 0 && !dense))
        return RT_K_EINVAL;
    for (int64_t s = 0; s < nseg; s++) {
        const int64_t len = offsets[s + 1] - offsets[s];
        const int64_t keep = len < max_len ? len : max_len;
        float *dst = values + offsets[s] * d;
        memcpy(dst, dense + s * max_len * d, (size_t)(keep * d) * sizeof *dst);
        memset(dst + keep * d, 0, (size_t)((len - keep) * d) * sizeof *dst);
    }
    return RT_K_OK;
}
