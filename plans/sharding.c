#include "sharding.h"

#include <libfyaml.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cfg.h"
#include "workload.h"

typedef struct {
    double cost;
    int item;
} lpt_item;

static int by_cost_desc(const void *a, const void *b)
{
    const lpt_item *x = a, *y = b;
    if (x->cost != y->cost) return x->cost < y->cost ? 1 : -1;
    return x->item - y->item; /* deterministic ties */
}

static double table_cost(const rt_scenario *s, int t)
{
    const rt_table *tb = &s->model.tables[t];
    rt_len_spec seq = {.kind = RT_LEN_FIXED, .mean = s->model.seq_len};
    const rt_len_spec *len = tb->sequence
                                 ? (s->workload.has_seq_len ? &s->workload.seq_len : &seq)
                                 : (s->workload.has_pooling ? &s->workload.pooling : &tb->pooling);
    double ids = rt_len_mean(len);
    return (ids > 0 ? ids : 1) * tb->dim;
}

/* Row-wise sharding needs a row for every shard; the plan decides how many shards (the world,
 * an HSP group, a tower), so the check lives here rather than in the scenario. */
static int check_rows(const rt_scenario *s, int ranks, const int *features, int n)
{
    for (int i = 0; i < n; i++) {
        const rt_table *t = &s->model.tables[features ? features[i] : i];
        if (t->rows >= (uint64_t)ranks) continue;
        struct rt_cfg *c = s->plan.cfg;
        rt_cfg_error(c, fy_node_mapping_lookup_by_string(s->plan.node, "sharding", FY_NT),
                     "row_wise over %d ranks, but table '%s' has only %llu rows (more shards than "
                     "rows); allowed: table_wise or column_wise, or fewer ranks per shard group",
                     ranks, t->name, (unsigned long long)t->rows);
        return -1;
    }
    return 0;
}

int rt_shard_map_build(const rt_scenario *s, int ranks, const int *features, int n_features,
                       rt_shard_map *m)
{
    memset(m, 0, sizeof *m);
    int T = s->model.n_tables;
    m->kind = s->plan.sharding;
    m->ranks = ranks;
    m->n_tables = T;
    m->col_shards = 1;
    int n = features ? n_features : T;
    if (m->kind == RT_SHARD_ROW && check_rows(s, ranks, features, n)) return -1;
    m->load = calloc((size_t)ranks, sizeof(double));
    if (!m->load) {
        fprintf(rt_cfg_err(s->plan.cfg),
                "sharding: out of memory placing %d tables over %d ranks\n", n, ranks);
        return -1;
    }
    if (m->kind == RT_SHARD_ROW) {
        m->block = calloc((size_t)T, sizeof(uint64_t));
        if (!m->block) {
            fprintf(rt_cfg_err(s->plan.cfg), "sharding: out of memory\n");
            return -1;
        }
        for (int i = 0; i < n; i++) {
            int t = features ? features[i] : i;
            m->block[t] = (s->model.tables[t].rows + (uint64_t)ranks - 1) / (uint64_t)ranks;
            double c = table_cost(s, t) / ranks;
            for (int r = 0; r < ranks; r++)
                m->load[r] += c;
        }
        return 0;
    }
    if (m->kind == RT_SHARD_COLUMN) {
        int d0 = s->model.tables[0].dim;
        m->col_shards = s->plan.column_shards ? s->plan.column_shards : (d0 >= 64 ? d0 / 32 : 1);
    }
    int items = n * m->col_shards;
    lpt_item *it = malloc(sizeof *it * (size_t)(items ? items : 1));
    m->owner = malloc(sizeof(int) * (size_t)T * (size_t)m->col_shards);
    if (!it || !m->owner) {
        free(it);
        fprintf(rt_cfg_err(s->plan.cfg),
                "sharding: out of memory placing %d tables over %d ranks\n", n, ranks);
        return -1;
    }
    for (int i = 0; i < T * m->col_shards; i++)
        m->owner[i] = -1;
    for (int i = 0; i < items; i++) {
        int t = features ? features[i / m->col_shards] : i / m->col_shards;
        it[i] = (lpt_item){table_cost(s, t) / m->col_shards, t * m->col_shards + i % m->col_shards};
    }
    qsort(it, (size_t)items, sizeof *it, by_cost_desc);
    for (int i = 0; i < items; i++) {
        int best = 0;
        for (int r = 1; r < ranks; r++)
            if (m->load[r] < m->load[best]) best = r;
        m->owner[it[i].item] = best;
        m->load[best] += it[i].cost;
    }
    free(it);
    return 0;
}

void rt_shard_map_free(rt_shard_map *m)
{
    free(m->owner);
    free(m->block);
    free(m->load);
    memset(m, 0, sizeof *m);
}

int rt_shard_dim(const rt_shard_map *m, const rt_scenario *s, int t, int r)
{
    int dim = s->model.tables[t].dim;
    switch (m->kind) {
    case RT_SHARD_ROW:
        return m->block[t] && rt_shard_rows(m, s, t, r) ? dim : 0;
    case RT_SHARD_COLUMN: {
        int w = 0;
        for (int c = 0; c < m->col_shards; c++)
            if (m->owner[t * m->col_shards + c] == r) w += dim / m->col_shards;
        return w;
    }
    default:
        return m->owner[t] == r ? dim : 0;
    }
}

uint64_t rt_shard_rows(const rt_shard_map *m, const rt_scenario *s, int t, int r)
{
    uint64_t rows = s->model.tables[t].rows;
    if (m->kind != RT_SHARD_ROW) return rt_shard_dim(m, s, t, r) ? rows : 0;
    if (!m->block[t]) return 0;
    uint64_t lo = m->block[t] * (uint64_t)r;
    if (lo >= rows) return 0;
    uint64_t hi = lo + m->block[t];
    return (hi > rows ? rows : hi) - lo;
}
