/* Embedding gather with pooling, sequence lookup, and row gather / scatter-add. */
#include "internal.h"
#include "row_prefetch.h"

#include <stdlib.h>

rt_kstatus rt_kcpu_gather_pool(const rt_ktable *t, const int64_t *ids, const int64_t *offsets,
                               int64_t nbags, rt_kpool pool, float *out)
{
    int64_t n;
    if (!rt_kcpu_table_ok(t) || !rt_kcpu_offsets_ok(offsets, nbags, &n) || (n > 0 && !ids) ||
        (nbags > 0 && !out) || (pool != RT_KPOOL_SUM && pool != RT_KPOOL_MEAN))
        return RT_K_EINVAL;
    if (!rt_kcpu_ids_in_range(ids, n, t->rows)) return RT_K_ERANGE;
    rt_kcpu_pool_bags(t, ids, offsets, nbags, pool == RT_KPOOL_MEAN, out);
    return RT_K_OK;
}

rt_kstatus rt_kcpu_sequence_lookup(const rt_ktable *t, const int64_t *ids, int64_t n, float *out)
{
    if (!rt_kcpu_table_ok(t) || n < 0 || (n > 0 && (!ids || !out))) return RT_K_EINVAL;
    if (!rt_kcpu_ids_in_range(ids, n, t->rows)) return RT_K_ERANGE;
    const size_t row_bytes = (size_t)t->dim * rt_kdtype_bytes(t->dtype);
    const int64_t ahead = rt_kcpu_rows_ahead(row_bytes);
    for (int64_t i = 0; i < n; i++) {
        rt_kcpu_prefetch_later(t->data, row_bytes, ids, i, ahead, n);
        rt_kcpu_row_load(t, ids[i], out + i * t->dim);
    }
    return RT_K_OK;
}

static rt_kstatus segment_ok(const rt_kgather_seg *g)
{
    if (g->n == 0) return RT_K_OK;
    if (!rt_kcpu_table_ok(&g->t) || g->first < 0 || g->n < 0 || !g->out) return RT_K_EINVAL;
    const int64_t *o = g->offsets ? g->offsets + g->first : NULL;
    for (int64_t j = 0; o && j < g->n; j++)
        if (o[j] < 0 || o[j + 1] < o[j]) return RT_K_EINVAL;
    const int64_t lo = o ? o[0] : g->first, n = o ? o[g->n] - o[0] : g->n;
    if (n > 0 && !g->ids) return RT_K_EINVAL; /* an empty segment may have no IDs at all */
    return n == 0 || rt_kcpu_ids_in_range(g->ids + lo, n, g->t.rows) ? RT_K_OK : RT_K_ERANGE;
}

rt_kstatus rt_kcpu_gather_segments(const rt_kgather_seg *segs, int64_t nseg)
{
    if (nseg < 0 || (nseg > 0 && !segs)) return RT_K_EINVAL;
    for (int64_t s = 0; s < nseg; s++) {
        rt_kstatus st = segment_ok(&segs[s]);
        if (st != RT_K_OK) return st;
    }
    for (int64_t s = 0; s < nseg; s++) {
        const rt_kgather_seg *g = &segs[s];
        if (g->offsets)
            rt_kcpu_pool_bags(&g->t, g->ids, g->offsets + g->first, g->n, false, g->out);
        else
            for (int64_t j = 0; j < g->n; j++)
                rt_kcpu_row_load(&g->t, g->ids[g->first + j], g->out + j * g->t.dim);
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
