#include <libfyaml.h>
#include <stdlib.h>
#include <string.h>

#include "cfg.h"
#include "plan.h"

extern const rt_plan rt_plan_flat;
extern const rt_plan rt_plan_fused;
extern const rt_plan rt_plan_sptt;
extern const rt_plan rt_plan_hsp;

const rt_plan *const rt_plans[] = {&rt_plan_flat, &rt_plan_fused, &rt_plan_sptt, &rt_plan_hsp,
                                   NULL};

const rt_plan *rt_plan_find(const char *name)
{
    for (int i = 0; rt_plans[i]; i++)
        if (strcmp(rt_plans[i]->name, name) == 0) return rt_plans[i];
    return NULL;
}

static const char *const common_keys[] = {
    "name",    "sharding",     "column_shards", "precision",  "dense_allreduce", "overlap",
    "balance", "token_target", "memory",        "grad_accum", "negatives",       "attention",
    NULL};

int rt_plan_configure(const rt_scenario *s, const rt_plan **plan, void **opts)
{
    rt_cfg *c = s->plan.cfg;
    struct fy_node *node = s->plan.node;
    const rt_plan *p = rt_plan_find(s->plan.name);
    if (!p) {
        FILE *e = rt_cfg_err(c);
        rt_cfg_error(c, fy_node_mapping_lookup_by_string(node, "name", FY_NT), "unknown plan '%s'",
                     s->plan.name);
        fprintf(e, "  allowed plans:");
        for (int i = 0; rt_plans[i]; i++)
            fprintf(e, " %s", rt_plans[i]->name);
        fputc('\n', e);
        return -1;
    }
    const char *allowed[64];
    int n = 0;
    for (int i = 0; common_keys[i]; i++)
        allowed[n++] = common_keys[i];
    for (int i = 0; p->option_keys[i] && n < 63; i++)
        allowed[n++] = p->option_keys[i];
    allowed[n] = NULL;
    if (rt_cfg_check_keys(c, node, allowed)) return -1;
    *plan = p;
    return p->configure(s, opts);
}
