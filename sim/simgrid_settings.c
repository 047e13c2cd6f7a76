#include "simgrid_settings.h"

#include <string.h>

#include "cfg.h"

const char *const rt_sg_model_names[] = {"CM02", "LV08", NULL};
const char *const rt_sg_flows_names[] = {"auto", "pairs", "links", NULL};
const char *const rt_sg_steps_names[] = {"bulk", "steps", NULL};

static const char *const sg_keys[] = {
    "model", "tcp_gamma",      "crosstraffic", "weight_s",         "bandwidth_factor",
    "flows", "pair_max_ranks", "links_top",    "collective_steps", "chunks",
    NULL};

void rt_simgrid_settings_default(rt_simgrid_settings *sg)
{
    *sg = (rt_simgrid_settings){.model = RT_SG_CM02,
                                .tcp_gamma = 1e12,
                                .crosstraffic = 0,
                                .weight_s = 0,
                                .bandwidth_factor = 1,
                                .flows = RT_SG_FLOWS_AUTO,
                                .pair_max_ranks = 64,
                                .links_top = 50,
                                .collective_steps = RT_SG_STEPS_BULK,
                                .chunks = 1};
}

/* Every key is optional: the section itself is. */
static int parse(rt_cfg *c, struct fy_node *n, rt_simgrid_settings *sg)
{
    int model = sg->model, flows = sg->flows, steps = sg->collective_steps;
    int64_t pair_max = sg->pair_max_ranks, top = sg->links_top, chunks = sg->chunks;
    if (rt_cfg_check_keys(c, n, sg_keys) ||
        rt_cfg_get_enum(c, n, "model", 0, rt_sg_model_names, &model) < 0 ||
        rt_cfg_get_unit(c, n, "tcp_gamma", 0, RT_UNIT_BYTES, 1, 1e18, &sg->tcp_gamma) < 0 ||
        rt_cfg_get_bool(c, n, "crosstraffic", 0, &sg->crosstraffic) < 0 ||
        rt_cfg_get_double(c, n, "weight_s", 0, 0, 1e12, &sg->weight_s) < 0 ||
        rt_cfg_get_double(c, n, "bandwidth_factor", 0, 1e-3, 1, &sg->bandwidth_factor) < 0 ||
        rt_cfg_get_enum(c, n, "flows", 0, rt_sg_flows_names, &flows) < 0 ||
        rt_cfg_get_int(c, n, "pair_max_ranks", 0, 1, 256, &pair_max) < 0 ||
        rt_cfg_get_int(c, n, "links_top", 0, 1, 1000000, &top) < 0 ||
        rt_cfg_get_enum(c, n, "collective_steps", 0, rt_sg_steps_names, &steps) < 0 ||
        rt_cfg_get_int(c, n, "chunks", 0, 1, 1024, &chunks) < 0)
        return -1;
    sg->collective_steps = (rt_sg_steps)steps;
    sg->chunks = (int)chunks;
    sg->model = (rt_sg_model)model;
    sg->flows = (rt_sg_flows)flows;
    sg->pair_max_ranks = (int)pair_max;
    sg->links_top = (int)top;
    return 0;
}

int rt_simgrid_settings_load(const rt_topology *t, rt_simgrid_settings *sg)
{
    rt_simgrid_settings_default(sg);
    for (int i = 0; i < t->n_sections; i++)
        if (!strcmp(t->sections[i].name, "simgrid") &&
            parse(t->sections[i].cfg, t->sections[i].map, sg) < 0)
            return -1;
    return 0;
}
