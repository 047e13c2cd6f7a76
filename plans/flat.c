/* flat: the TorchRec baseline (DESIGN.md section 4). One embedding exchange of every table
 * over all N ranks (plans/exchange.c), the dense forward and backward per layer, the dense
 * AllReduce over the world on the comm stream, overlapping the sparse backward.
 * Options (seed 000): `dedup` adds the unique kernels, one per table, or one per merged table
 * with `merge: true`; flat's lookup is already one batched kernel, so merging changes only
 * how many unique kernels run. */
#include <stdlib.h>

#include "dedup.h"
#include "exchange.h"
#include "merge.h"
#include "plan.h"
#include "plan_common.h"

typedef struct flat_opts {
    rt_dedup_mode dedup;
    int merge;
    rt_fusion fusion;
} flat_opts;

static rt_graph *flat_build(const rt_scenario *s, const void *opts, const rt_workload *w, FILE *err)
{
    const flat_opts *o = opts;
    rt_group world = {w->world, 1};
    rt_shard_map sm = {0};
    rt_merge_map mm = {0};
    rt_exchange x = {.tag = "",
                     .n_features = s->model.n_tables,
                     .group = world,
                     .shards = &sm,
                     .dedup = o->dedup,
                     .fusion = o->fusion};
    rt_graph *g = NULL;
    int *all = malloc(sizeof(int) * (size_t)s->model.n_tables);
    if (!all) {
        fprintf(err, "flat: out of memory placing %d tables\n", s->model.n_tables);
        goto out;
    }
    if (rt_shard_map_build(s, w->world, NULL, 0, &sm)) goto out;
    for (int f = 0; f < s->model.n_tables; f++)
        all[f] = f;
    x.features = all;
    if (o->dedup != RT_DEDUP_NONE || o->merge) {
        if (rt_merge_build(s, all, s->model.n_tables, o->merge, &mm, err)) goto out;
        x.n_units = mm.n_units;
        x.unit_of = mm.unit_of;
    }
    if (rt_exchange_route(&x, s, w, err)) goto out;
    g = rt_graph_new(w->world, w->n_reps, w->rep_rank, w->rep_weight);
    if (!g) goto out;
    rt_dense_ops d;
    rt_exchange_add_ids(&x, g, s, -1);
    rt_exchange_add_embeddings(&x, g, s);
    rt_plan_add_dense(g, s, &x.unpermute, 1, world, &d);
    rt_exchange_add_backward(&x, g, s, d.last_bwd);
    for (int r = 0; r < w->n_reps; r++) {
        rt_exchange_fill(&x, g, s, w, r);
        rt_plan_fill_dense(g, s, w, &d, r);
        g->peak_hbm_bytes[r] =
            rt_exchange_memory(&x, g, s, r, w->rep_rank[r]) + rt_plan_dense_memory(s, w, r);
    }
    rt_plan_set_model_flops(g, s, w);
out:
    rt_exchange_free(&x);
    rt_merge_free(&mm);
    rt_shard_map_free(&sm);
    free(all);
    return g;
}

static int flat_configure(const rt_scenario *s, void **opts)
{
    flat_opts *o = calloc(1, sizeof *o);
    if (!o) return -1;
    if (rt_dedup_parse(s, RT_DEDUP_NONE, &o->dedup) || rt_merge_parse(s, &o->merge) ||
        rt_fusion_parse(s, o->dedup, &o->fusion)) {
        free(o);
        return -1;
    }
    *opts = o;
    return 0;
}

static const char *const flat_keys[] = {"dedup", "merge", "fusion", NULL};

const rt_plan rt_plan_flat = {
    .name = "flat",
    .description = "TorchRec baseline: tables sharded over all ranks, world-size AlltoAlls",
    .option_keys = flat_keys,
    .configure = flat_configure,
    .build = flat_build,
};
