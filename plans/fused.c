/* fused: FusedRec (seed 003, section 3). Features with equal spec (dim, optimizer, initializer)
 * form K groups; each group is one embedding exchange over the world (plans/exchange.c), so
 * there are K ID AlltoAlls and K embedding AlltoAlls instead of one per feature. Per group:
 * segment unique (one kernel for the whole group, stage 1 of the dedup), rankwise sort by
 * hash(ID) (the routing kernel, phase emb.fwd.sort), ID AlltoAll; on the owner the deferred
 * (category, ID) hash, the global unique (stage 2), lookup and the local recovery gather;
 * embedding AlltoAll; recovery through I_s and I_u on the requester. The backward mirrors it.
 *
 * Options: `grouping: spec_groups | per_feature | all` (per_feature is the TFRA baseline: one
 * round per feature); `variant: fused | tfra_fused` (TFRA-fused hashes on the sender and sends
 * the category counts in one more AlltoAll per group); `dedup` (default two_stage, as the
 * paper) and `merge` (plans/merge.h: merged tables need no category hash, the encoded ID
 * already keeps tables apart; with per_feature a merged table is one round). */
#include <stdlib.h>
#include <string.h>

#include "cfg.h"
#include "dedup.h"
#include "exchange.h"
#include "merge.h"
#include "plan.h"
#include "plan_common.h"

typedef enum { GROUP_SPEC, GROUP_PER_FEATURE, GROUP_ALL, GROUP_COUNT } fused_grouping;
typedef enum { VARIANT_FUSED, VARIANT_TFRA_FUSED, VARIANT_COUNT } fused_variant;

static const char *const grouping_names[] = {"spec_groups", "per_feature", "all", NULL};
static const char *const variant_names[] = {"fused", "tfra_fused", NULL};

typedef struct fused_opts {
    int grouping, variant;
    rt_dedup_mode dedup;
    int merge;
    rt_fusion fusion;
} fused_opts;

/* The exchanges of one build and what they borrow. */
typedef struct fused_groups {
    int k;
    int *group_of; /* [table] */
    int *members;  /* tables ordered by group */
    int *first;    /* [k + 1]: group g is members[first[g] .. first[g + 1]) */
    char (*tags)[32];
    rt_exchange *x;
} fused_groups;

static int same_spec(const rt_table *a, const rt_table *b)
{
    return a->dim == b->dim && a->optimizer == b->optimizer &&
           !strcmp(a->initializer ? a->initializer : "", b->initializer ? b->initializer : "");
}

/* Group id of every table, in order of first appearance. */
static int assign_groups(const rt_scenario *s, const fused_opts *o, const rt_merge_map *mm,
                         int *group_of)
{
    const rt_table *t = s->model.tables;
    int k = 0;
    for (int f = 0; f < s->model.n_tables; f++) {
        int g = -1;
        for (int e = 0; e < f && g < 0; e++) {
            int together = o->grouping == GROUP_ALL ||
                           (o->grouping == GROUP_SPEC && same_spec(&t[e], &t[f])) ||
                           (o->grouping == GROUP_PER_FEATURE && mm->unit_of[e] == mm->unit_of[f]);
            if (together) g = group_of[e];
        }
        group_of[f] = g >= 0 ? g : k++;
    }
    return k;
}

static void groups_free(fused_groups *gr)
{
    for (int g = 0; gr->x && g < gr->k; g++)
        rt_exchange_free(&gr->x[g]);
    free(gr->group_of), free(gr->members), free(gr->first), free(gr->tags), free(gr->x);
    memset(gr, 0, sizeof *gr);
}

static int groups_build(const rt_scenario *s, const fused_opts *o, const rt_merge_map *mm,
                        rt_group world, const rt_shard_map *sm, fused_groups *gr)
{
    int F = s->model.n_tables;
    gr->group_of = malloc(sizeof(int) * (size_t)F);
    gr->members = malloc(sizeof(int) * (size_t)F);
    gr->first = calloc((size_t)F + 1, sizeof(int));
    if (!gr->group_of || !gr->members || !gr->first) return -1;
    gr->k = assign_groups(s, o, mm, gr->group_of);
    gr->tags = calloc((size_t)gr->k, sizeof *gr->tags);
    gr->x = calloc((size_t)gr->k, sizeof *gr->x);
    if (!gr->tags || !gr->x) return -1;
    for (int f = 0; f < F; f++)
        gr->first[gr->group_of[f] + 1]++;
    for (int g = 0; g < gr->k; g++)
        gr->first[g + 1] += gr->first[g];
    int *fill = malloc(sizeof(int) * (size_t)gr->k);
    if (!fill) return -1;
    memcpy(fill, gr->first, sizeof(int) * (size_t)gr->k);
    for (int f = 0; f < F; f++)
        gr->members[fill[gr->group_of[f]]++] = f;
    free(fill);
    for (int g = 0; g < gr->k; g++) {
        int n = gr->first[g + 1] - gr->first[g];
        const int *feat = gr->members + gr->first[g];
        /* A (category, ID) key is needed when the group mixes tables that are not one merged
         * table: raw IDs of different tables would collide. */
        int mixed = 0;
        for (int i = 1; i < n; i++)
            mixed |= mm->unit_of[feat[i]] != mm->unit_of[feat[0]];
        snprintf(gr->tags[g], sizeof gr->tags[g], "g%d", g);
        gr->x[g] = (rt_exchange){
            .tag = gr->tags[g],
            .n_features = n,
            .features = feat,
            .group = world,
            .shards = sm,
            .dedup = o->dedup,
            .fusion = o->fusion,
            .key_hash = !mixed                             ? RT_KEY_HASH_NONE
                        : o->variant == VARIANT_TFRA_FUSED ? RT_KEY_HASH_SENDER
                                                           : RT_KEY_HASH_RECEIVER,
            .category_msg = mixed && o->variant == VARIANT_TFRA_FUSED,
            .hash_rows = 1,
            .sort_phase = "emb.fwd.sort",
        };
    }
    return 0;
}

static rt_graph *fused_build(const rt_scenario *s, const void *opts, const rt_workload *w,
                             FILE *err)
{
    const fused_opts *o = opts;
    rt_group world = {w->world, 1};
    rt_shard_map sm = {0};
    rt_merge_map mm = {0};
    fused_groups gr = {0};
    rt_graph *g = NULL;
    int F = s->model.n_tables;
    int *all = malloc(sizeof(int) * (size_t)F), *deps = NULL;
    if (!all) {
        fprintf(err, "fused: out of memory placing %d tables\n", F);
        goto out;
    }
    if (rt_shard_map_build(s, w->world, NULL, 0, &sm)) goto out;
    for (int f = 0; f < F; f++)
        all[f] = f;
    if (rt_merge_build(s, all, F, o->merge, &mm, err)) goto out;
    if (groups_build(s, o, &mm, world, &sm, &gr)) {
        fprintf(err, "fused: out of memory grouping %d tables\n", F);
        goto out;
    }
    for (int k = 0; k < gr.k; k++)
        if (rt_exchange_route(&gr.x[k], s, w, err)) goto out;
    deps = malloc(sizeof(int) * (size_t)gr.k);
    g = rt_graph_new(w->world, w->n_reps, w->rep_rank, w->rep_weight);
    if (!deps || !g) {
        fprintf(err, "fused: out of memory for the graph of %d groups\n", gr.k);
        rt_graph_free(g), g = NULL;
        goto out;
    }
    /* The comm stream is in order: every group's ID AlltoAll first, so the lookups of early
     * groups overlap the ID traffic of later ones. */
    for (int k = 0; k < gr.k; k++)
        rt_exchange_add_ids(&gr.x[k], g, s, -1);
    for (int k = 0; k < gr.k; k++) {
        rt_exchange_add_embeddings(&gr.x[k], g, s);
        deps[k] = gr.x[k].unpermute;
    }
    rt_dense_ops d;
    rt_plan_add_dense(g, s, deps, gr.k, world, &d);
    for (int k = 0; k < gr.k; k++)
        rt_exchange_add_backward(&gr.x[k], g, s, d.last_bwd);
    for (int r = 0; r < w->n_reps; r++) {
        double mem = rt_plan_dense_memory(s, w, r);
        for (int k = 0; k < gr.k; k++) {
            rt_exchange_fill(&gr.x[k], g, s, w, r);
            mem += rt_exchange_memory(&gr.x[k], g, s, r, w->rep_rank[r]);
        }
        rt_plan_fill_dense(g, s, w, &d, r);
        g->peak_hbm_bytes[r] = mem;
    }
    rt_plan_set_model_flops(g, s, w);
out:
    groups_free(&gr);
    rt_merge_free(&mm);
    rt_shard_map_free(&sm);
    free(all), free(deps);
    return g;
}

static int fused_configure(const rt_scenario *s, void **opts)
{
    fused_opts *o = calloc(1, sizeof *o);
    if (!o) return -1;
    o->grouping = GROUP_SPEC;
    o->variant = VARIANT_FUSED;
    rt_cfg *c = s->plan.cfg;
    if (rt_cfg_get_enum(c, s->plan.node, "grouping", 0, grouping_names, &o->grouping) < 0 ||
        rt_cfg_get_enum(c, s->plan.node, "variant", 0, variant_names, &o->variant) < 0 ||
        rt_dedup_parse(s, RT_DEDUP_TWO_STAGE, &o->dedup) || rt_merge_parse(s, &o->merge) ||
        rt_fusion_parse(s, o->dedup, &o->fusion)) {
        free(o);
        return -1;
    }
    *opts = o;
    return 0;
}

static const char *const fused_keys[] = {"grouping", "variant", "dedup", "merge", "fusion", NULL};

const rt_plan rt_plan_fused = {
    .name = "fused",
    .description = "FusedRec: one ID and one embedding AlltoAll per spec group, segment unique, "
                   "deferred hashing",
    .option_keys = fused_keys,
    .configure = fused_configure,
    .build = fused_build,
};
