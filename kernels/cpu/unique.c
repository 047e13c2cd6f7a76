/* Unique with inverse indices, FusedRec segment unique, and index composition. */
#include "internal.h"

#include <stdlib.h>

/* Sorts ids[0..n) with their positions and writes the runs of equal keys as unique values;
 * positions are global (base + local) and unique slots start at uniq_base. Returns the
 * number of distinct keys. */
static int64_t unique_sorted_runs(int64_t *keys, int64_t *pos, int64_t n, int64_t *tmp,
                                  int64_t *uniq, int64_t uniq_base, int64_t *inverse)
{
    rt_kcpu_sort_pairs(keys, pos, n, tmp, tmp + n);
    int64_t nu = 0;
    for (int64_t i = 0; i < n; i++) {
        if (i == 0 || keys[i] != keys[i - 1]) uniq[uniq_base + nu++] = keys[i];
        inverse[pos[i]] = uniq_base + nu - 1;
    }
    return nu;
}

rt_kstatus rt_kcpu_unique(const int64_t *ids, int64_t n, int64_t *uniq, int64_t *inverse,
                          int64_t *n_unique)
{
    if (n < 0 || !n_unique || (n > 0 && (!ids || !uniq || !inverse))) return RT_K_EINVAL;
    *n_unique = 0;
    if (n == 0) return RT_K_OK;
    int64_t *work = malloc((size_t)n * 4 * sizeof *work);
    if (!work) return RT_K_ENOMEM;
    int64_t *keys = work, *pos = work + n;
    memcpy(keys, ids, (size_t)n * sizeof *keys);
    for (int64_t i = 0; i < n; i++)
        pos[i] = i;
    *n_unique = unique_sorted_runs(keys, pos, n, work + 2 * n, uniq, 0, inverse);
    free(work);
    return RT_K_OK;
}

rt_kstatus rt_kcpu_segment_unique(const int64_t *ids, const int64_t *offsets, int64_t nseg,
                                  int64_t *uniq, int64_t *uniq_offsets, int64_t *inverse)
{
    int64_t n;
    if (!rt_kcpu_offsets_ok(offsets, nseg, &n) || !uniq_offsets ||
        (n > 0 && (!ids || !uniq || !inverse)))
        return RT_K_EINVAL;
    uniq_offsets[0] = 0;
    if (n == 0) {
        for (int64_t s = 0; s < nseg; s++)
            uniq_offsets[s + 1] = 0;
        return RT_K_OK;
    }
    int64_t *work = malloc((size_t)n * 4 * sizeof *work);
    if (!work) return RT_K_ENOMEM;
    for (int64_t s = 0; s < nseg; s++) {
        const int64_t lo = offsets[s], len = offsets[s + 1] - lo;
        int64_t *keys = work, *pos = work + len;
        memcpy(keys, ids + lo, (size_t)len * sizeof *keys);
        for (int64_t i = 0; i < len; i++)
            pos[i] = lo + i;
        const int64_t nu =
            unique_sorted_runs(keys, pos, len, work + 2 * len, uniq, uniq_offsets[s], inverse);
        uniq_offsets[s + 1] = uniq_offsets[s] + nu;
    }
    free(work);
    return RT_K_OK;
}

rt_kstatus rt_kcpu_compose_index(const int64_t *outer, int64_t n, const int64_t *inner,
                                 int64_t inner_n, int64_t *out)
{
    if (n < 0 || inner_n < 0 || (n > 0 && (!outer || !inner || !out))) return RT_K_EINVAL;
    if (!rt_kcpu_ids_in_range(outer, n, inner_n)) return RT_K_ERANGE;
    for (int64_t i = 0; i < n; i++)
        out[i] = inner[outer[i]];
    return RT_K_OK;
}

rt_kstatus rt_kcpu_recover(const float *recv, int64_t recv_rows, int64_t dim, const int64_t *i_s,
                           int64_t nu, const int64_t *i_u, int64_t n, float *out)
{
    if (dim <= 0 || recv_rows < 0 || nu < 0 || n < 0 || (n > 0 && (!recv || !i_s || !i_u || !out)))
        return RT_K_EINVAL;
    if (!rt_kcpu_ids_in_range(i_u, n, nu) || !rt_kcpu_ids_in_range(i_s, nu, recv_rows))
        return RT_K_ERANGE;
    for (int64_t i = 0; i < n; i++)
        memcpy(out + i * dim, recv + i_s[i_u[i]] * dim, (size_t)dim * sizeof *out);
    return RT_K_OK;
}
