#include "dynamic_table.h"

#include <libfyaml.h>

#include "cfg.h"

const char *const rt_evict_names[] = {"none", "lru", "lfu", NULL};
const char *const rt_offload_names[] = {"none", "keys", "values", NULL};

static const char *const hash_keys[] = {"load_factor", "chunk_rows", "eviction",
                                        "capacity",    "offload",    NULL};

rt_dyn_spec rt_dyn_spec_default(void)
{
    return (rt_dyn_spec){.load_factor = 0.75, .chunk_rows = 65536};
}

int rt_dyn_spec_parse(rt_cfg *c, struct fy_node *map, rt_dyn_spec *spec)
{
    if (rt_cfg_check_keys(c, map, hash_keys)) return -1;
    int ev = spec->eviction, off = spec->offload;
    int64_t chunk = spec->chunk_rows, cap = (int64_t)spec->capacity;
    if (rt_cfg_get_double(c, map, "load_factor", 0, 0.05, 0.95, &spec->load_factor) < 0 ||
        rt_cfg_get_int(c, map, "chunk_rows", 0, 1, INT64_C(1) << 30, &chunk) < 0 ||
        rt_cfg_get_enum(c, map, "eviction", 0, rt_evict_names, &ev) < 0 ||
        rt_cfg_get_int(c, map, "capacity", 0, 0, INT64_C(1) << 50, &cap) < 0 ||
        rt_cfg_get_enum(c, map, "offload", 0, rt_offload_names, &off) < 0)
        return -1;
    spec->chunk_rows = chunk;
    spec->eviction = (rt_evict)ev;
    spec->capacity = (uint64_t)cap;
    spec->offload = (rt_offload)off;
    if ((spec->eviction != RT_EVICT_NONE) != (spec->capacity > 0)) {
        struct fy_node *at = fy_node_mapping_lookup_by_string(map, "capacity", FY_NT);
        rt_cfg_error(c, at ? at : map,
                     "eviction %s with capacity %lld; allowed: eviction lru or lfu with a "
                     "capacity > 0 (keys kept per shard), or eviction none without one",
                     rt_evict_names[spec->eviction], (long long)cap);
        return -1;
    }
    return 0;
}
