#include "merge.h"

#include <stdlib.h>
#include <string.h>

#include "cfg.h"

int rt_merge_bits(int m)
{
    int k = 0;
    while ((1L << k) < (long)m + 1)
        k++;
    return k;
}

int rt_merge_encode(int i, int k, uint64_t x, uint64_t *id)
{
    if (k < 0 || k > 62 || i < 0 || (uint64_t)i >= (1ull << k) || x >= (1ull << (63 - k)))
        return -1;
    *id = ((uint64_t)i << (63 - k)) | x;
    return 0;
}

int rt_merge_parse(const rt_scenario *s, int *merge)
{
    *merge = 0;
    return rt_cfg_get_bool(s->plan.cfg, s->plan.node, "merge", 0, merge) < 0 ? -1 : 0;
}

static int same_storage(const rt_table *a, const rt_table *b)
{
    return a->dim == b->dim && a->optimizer == b->optimizer && a->dtype == b->dtype;
}

void rt_merge_free(rt_merge_map *m)
{
    free(m->unit_of);
    free(m->slot);
    free(m->unit_size);
    memset(m, 0, sizeof *m);
}

int rt_merge_build(const rt_scenario *s, const int *features, int n, int merge, rt_merge_map *m,
                   FILE *err)
{
    memset(m, 0, sizeof *m);
    int *first = malloc(sizeof(int) * (size_t)(n ? n : 1)); /* [u]: its first table */
    m->unit_of = malloc(sizeof(int) * (size_t)(n ? n : 1));
    m->slot = malloc(sizeof(int) * (size_t)(n ? n : 1));
    m->unit_size = calloc((size_t)(n ? n : 1), sizeof(int));
    if (!first || !m->unit_of || !m->slot || !m->unit_size) {
        fprintf(err, "merge: out of memory for %d tables\n", n);
        free(first);
        rt_merge_free(m);
        return -1;
    }
    const rt_table *t = s->model.tables;
    for (int i = 0; i < n; i++) {
        int u = 0;
        while (merge && u < m->n_units && !same_storage(&t[features[first[u]]], &t[features[i]]))
            u++;
        if (!merge || u == m->n_units) first[m->n_units++] = i, u = m->n_units - 1;
        m->unit_of[i] = u;
        m->slot[i] = m->unit_size[u]++;
    }
    free(first);
    for (int i = 0; i < n; i++) {
        int k = rt_merge_bits(m->unit_size[m->unit_of[i]]);
        uint64_t id;
        const rt_table *tb = &t[features[i]];
        if (m->unit_size[m->unit_of[i]] > 1 && rt_merge_encode(m->slot[i], k, tb->rows - 1, &id)) {
            fprintf(err,
                    "merge: table '%s' has %llu rows; merged with %d others it may use only %d "
                    "bits of ID (at most 2^%d rows); set plan.merge=false\n",
                    tb->name, (unsigned long long)tb->rows, m->unit_size[m->unit_of[i]] - 1, 63 - k,
                    63 - k);
            rt_merge_free(m);
            return -1;
        }
    }
    return 0;
}
