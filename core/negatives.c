#include "negatives.h"

#include <libfyaml.h>

#include "cfg.h"
#include "model.h"

static const char *const neg_keys[] = {"offload", "segment", "dtype", "expansion", NULL};
static const char *const neg_dtype_names[] = {"dense", "fp16", NULL};

rt_neg_cfg rt_neg_cfg_default(void)
{
    return (rt_neg_cfg){.segment = 100, .expansion = 1};
}

int rt_neg_cfg_parse(rt_cfg *c, struct fy_node *plan, const rt_model *m, rt_neg_cfg *out)
{
    int ok = 1;
    struct fy_node *map = rt_cfg_get_map(c, plan, "negatives", 0, &ok);
    if (!ok) return -1;
    if (!map) return 0;
    if (m->negatives <= 0) {
        rt_cfg_error(c, map,
                     "model '%s' samples no negatives (negatives: 0); allowed: the negatives map "
                     "with a sampled-softmax model",
                     m->name ? m->name : "?");
        return -1;
    }
    int64_t seg = out->segment, k = out->expansion;
    int fp16 = out->fp16;
    if (rt_cfg_check_keys(c, map, neg_keys) ||
        rt_cfg_get_bool(c, map, "offload", 0, &out->offload) < 0 ||
        rt_cfg_get_int(c, map, "segment", 0, 1, 1 << 24, &seg) < 0 ||
        rt_cfg_get_enum(c, map, "dtype", 0, neg_dtype_names, &fp16) < 0 ||
        rt_cfg_get_int(c, map, "expansion", 0, 1, 64, &k) < 0)
        return -1;
    out->segment = (int)seg, out->expansion = (int)k, out->fp16 = fp16;
    out->per_query = 1;
    return 0;
}
