#include "fabric.h"

/* Indexed by rt_fabric_family. */
static const rt_fabric *const rt_fabrics[RT_FAMILY_COUNT] = {
    [RT_FAMILY_FAT_TREE] = &rt_fabric_fat_tree,
    [RT_FAMILY_RAIL_ONLY] = &rt_fabric_rail_only,
    [RT_FAMILY_TORUS] = &rt_fabric_torus,
    [RT_FAMILY_DRAGONFLY] = &rt_fabric_dragonfly,
};

const rt_fabric *rt_fabric_of(const rt_topology *t)
{
    return rt_fabrics[t->net.family];
}
