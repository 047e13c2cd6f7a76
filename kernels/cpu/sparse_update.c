/* Backward scatter of pooled-embedding gradients fused with a sparse optimizer update: the
 * gradients of one row are summed first, then the optimizer touches that row once. */
#include "internal.h"

#include <math.h>
#include <stdlib.h>

int64_t rt_kopt_state_len(rt_koptim kind, int which, int64_t rows, int64_t dim)
{
    switch (kind) {
    case RT_KOPT_SGD:
        return 0;
    case RT_KOPT_ADAGRAD:
        return which == 0 ? rows * dim : 0;
    case RT_KOPT_ROWWISE_ADAGRAD:
        return which == 0 ? rows : 0;
    case RT_KOPT_ADAM:
        return rows * dim;
    }
    return 0;
}

/* Applies one optimizer step with gradient g to the fp32 row w of table row `row`. */
static void apply_row(const rt_kopt *o, rt_kopt_state st, int64_t row, int64_t d, const float *g,
                      float *w)
{
    switch (o->kind) {
    case RT_KOPT_SGD:
        for (int64_t j = 0; j < d; j++)
            w[j] -= o->lr * g[j];
        break;
    case RT_KOPT_ADAGRAD: {
        float *acc = st.s0 + row * d;
        for (int64_t j = 0; j < d; j++) {
            acc[j] += g[j] * g[j];
            w[j] -= o->lr * g[j] / (sqrtf(acc[j]) + o->eps);
        }
        break;
    }
    case RT_KOPT_ROWWISE_ADAGRAD: {
        float sq = 0;
        for (int64_t j = 0; j < d; j++)
            sq += g[j] * g[j];
        st.s0[row] += sq / (float)d;
        const float scale = o->lr / (sqrtf(st.s0[row]) + o->eps);
        for (int64_t j = 0; j < d; j++)
            w[j] -= scale * g[j];
        break;
    }
    case RT_KOPT_ADAM: {
        float *m = st.s0 + row * d, *v = st.s1 + row * d;
        const float c1 = 1.0f - powf(o->beta1, (float)o->step);
        const float c2 = 1.0f - powf(o->beta2, (float)o->step);
        for (int64_t j = 0; j < d; j++) {
            m[j] = o->beta1 * m[j] + (1.0f - o->beta1) * g[j];
            v[j] = o->beta2 * v[j] + (1.0f - o->beta2) * g[j] * g[j];
            w[j] -= o->lr * (m[j] / c1) / (sqrtf(v[j] / c2) + o->eps);
        }
        break;
    }
    }
}

rt_kstatus rt_kcpu_sparse_update(rt_ktable *t, rt_kopt_state st, const rt_kopt *opt,
                                 const int64_t *ids, const int64_t *offsets, int64_t nbags,
                                 rt_kpool pool, const float *grad_out)
{
    int64_t n = nbags;
    if (!rt_kcpu_table_ok(t) || !rt_kopt_valid(opt, st) || nbags < 0 ||
        (offsets && !rt_kcpu_offsets_ok(offsets, nbags, &n)) || (n > 0 && (!ids || !grad_out)) ||
        (pool != RT_KPOOL_SUM && pool != RT_KPOOL_MEAN))
        return RT_K_EINVAL;
    if (!rt_kcpu_ids_in_range(ids, n, t->rows)) return RT_K_ERANGE;
    if (n == 0) return RT_K_OK;
    const int64_t d = t->dim;
    int64_t *keys = malloc((size_t)n * 4 * sizeof *keys);
    float *g = malloc((size_t)d * 2 * sizeof *g);
    if (!keys || !g) {
        free(keys);
        free(g);
        return RT_K_ENOMEM;
    }
    int64_t *bags = keys + n, *tmp_k = keys + 2 * n, *tmp_v = keys + 3 * n;
    float *w = g + d;
    memcpy(keys, ids, (size_t)n * sizeof *keys);
    for (int64_t b = 0; b < nbags; b++)
        for (int64_t i = offsets ? offsets[b] : b; i < (offsets ? offsets[b + 1] : b + 1); i++)
            bags[i] = b;
    rt_kcpu_sort_pairs(keys, bags, n, tmp_k, tmp_v);

    for (int64_t lo = 0; lo < n;) {
        int64_t hi = lo + 1;
        while (hi < n && keys[hi] == keys[lo])
            hi++;
        memset(g, 0, (size_t)d * sizeof *g);
        for (int64_t i = lo; i < hi; i++) {
            const int64_t b = bags[i];
            const int64_t len = offsets ? offsets[b + 1] - offsets[b] : 1;
            const float scale = pool == RT_KPOOL_MEAN ? 1.0f / (float)len : 1.0f;
            for (int64_t j = 0; j < d; j++)
                g[j] += scale * grad_out[b * d + j];
        }
        rt_kcpu_row_load(t, keys[lo], w);
        apply_row(opt, st, keys[lo], d, g, w);
        rt_kcpu_row_store(t, keys[lo], w);
        lo = hi;
    }
    free(keys);
    free(g);
    return RT_K_OK;
}
