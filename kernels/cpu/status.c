/* Status strings, storage types and the argument checks every CPU kernel shares. */
#include "internal.h"

const char *rt_kstatus_str(rt_kstatus s)
{
    switch (s) {
    case RT_K_OK:
        return "ok";
    case RT_K_EINVAL:
        return "invalid argument (shape, NULL pointer or unsupported option)";
    case RT_K_ERANGE:
        return "ID or index out of range";
    case RT_K_ENOMEM:
        return "out of memory";
    case RT_K_EDEVICE:
        return "CUDA or cuBLAS error";
    }
    return "unknown status";
}

size_t rt_kdtype_bytes(rt_kdtype dt)
{
    return dt == RT_KDT_FP32 ? 4 : 2;
}

bool rt_kcpu_table_ok(const rt_ktable *t)
{
    return t && t->data && t->rows >= 0 && t->dim > 0 &&
           (t->dtype == RT_KDT_FP32 || t->dtype == RT_KDT_FP16 || t->dtype == RT_KDT_BF16);
}

bool rt_kcpu_offsets_ok(const int64_t *offsets, int64_t nseg, int64_t *total)
{
    if (nseg < 0 || !offsets || offsets[0] != 0) return false;
    for (int64_t s = 0; s < nseg; s++)
        if (offsets[s + 1] < offsets[s]) return false;
    *total = offsets[nseg];
    return true;
}

bool rt_kcpu_ids_in_range(const int64_t *ids, int64_t n, int64_t rows)
{
    for (int64_t i = 0; i < n; i++)
        if (ids[i] < 0 || ids[i] >= rows) return false;
    return true;
}
