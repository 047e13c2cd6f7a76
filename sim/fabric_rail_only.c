/* family rail_only (Wang et al. 2023, arXiv:2307.12169): each rail is one switch domain, the
 * rail switch (the platform's leaf-P-0) with all radix ports down and no spine. Two nodes
 * always meet under their rail switch: one switch between NICs, no leaf crossing, no uplinks.
 * Traffic between rails is forwarded over NVLink to the device on the destination's rail
 * (PXN, sim/simgrid_platform.c), which is how a rail-only network carries it. */
#include "fabric.h"

static const char *layout(rt_platform *p, const rt_topology *t)
{
    if (!t->net.rail_optimized)
        return "scale_out.family rail_only needs rail_optimized: true (one switch per rail)";
    if (p->leaves > 1)
        return "scale_out.family rail_only: more nodes than one rail switch serves (radix); "
               "allowed: nodes <= radix, or family fat_tree";
    p->ports = p->up_ports = 0;
    p->ecmp_hash = 0;
    p->n_up_hosts = p->n_up_links = p->n_cross = 0;
    return NULL;
}

static void set_links(rt_platform *p, const rt_topology *t)
{
    (void)p, (void)t; /* no links above the rail switches */
}

static void comment(const rt_platform *p, FILE *f)
{
    (void)p;
    fputs("<!-- scale_out.family rail_only: leaf-P-0 is rail P's switch, no spine; traffic "
          "between rails crosses NVLink first (PXN). -->\n",
          f);
}

static int switches(const rt_topology *t, int cross_leaf)
{
    (void)t, (void)cross_leaf;
    return 1;
}

const rt_fabric rt_fabric_rail_only = {
    .family = RT_FAMILY_RAIL_ONLY,
    .layout = layout,
    .set_links = set_links,
    .comment = comment,
    .switches = switches,
};
