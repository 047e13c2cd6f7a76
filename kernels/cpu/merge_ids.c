/* Table-index bit encoding for merged tables (MTGRBoost automatic table merging). */
#include "internal.h"

int rt_kmerge_bits(int64_t ntables)
{
    int k = 0;
    while (k < 62 && (INT64_C(1) << k) < ntables + 1)
        k++;
    return k;
}

rt_kstatus rt_kmerge_encode(const int64_t *ids, int64_t n, int64_t table, int bits, int64_t *out)
{
    if (bits < 1 || bits > 62 || n < 0 || (n > 0 && (!ids || !out))) return RT_K_EINVAL;
    const int64_t id_limit = INT64_C(1) << (63 - bits);
    if (table < 0 || table >= (INT64_C(1) << bits)) return RT_K_ERANGE;
    for (int64_t i = 0; i < n; i++)
        if (ids[i] < 0 || ids[i] >= id_limit) return RT_K_ERANGE;
    for (int64_t i = 0; i < n; i++)
        out[i] = (int64_t)(((uint64_t)table << (63 - bits)) | (uint64_t)ids[i]);
    return RT_K_OK;
}
