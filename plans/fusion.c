#include "fusion.h"

#include <libfyaml.h>

#include "cfg.h"

static const char *const fusion_names[] = {"none", "sparse", NULL};

int rt_fusion_parse(const rt_scenario *s, rt_dedup_mode dedup, rt_fusion *out)
{
    rt_cfg *c = s->plan.cfg;
    struct fy_node *at = fy_node_mapping_lookup_by_string(s->plan.node, "fusion", FY_NT);
    int v = 0;
    *out = RT_FUSION_UNSET;
    if (!at) return 0;
    if (rt_cfg_get_enum(c, s->plan.node, "fusion", 0, fusion_names, &v) < 0) return -1;
    if (rt_dedup_stage2(dedup)) {
        rt_cfg_error(c, at,
                     "fusion %s with dedup %s: the owner's distinct-row gather is not built per "
                     "feature or fused; allowed: fusion with dedup none or comm",
                     fusion_names[v], rt_dedup_names[dedup]);
        return -1;
    }
    *out = v == 0 ? RT_FUSION_NONE : RT_FUSION_SPARSE;
    return 0;
}
