#include "faults.h"

#include <libfyaml.h>
#include <stdint.h>

#include "cfg.h"
#include "json.h"

const char *const rt_fault_link_names[] = {"nvlink", "nic", "uplink", NULL};

/* The index keys of each link kind, in rt_fault's (a, b) order. */
static const char *const index_keys[RT_FAULT_LINK_COUNT][2] = {
    {"rank", NULL}, {"node", "nic"}, {"plane", "leaf"}};
static const char *const entry_keys[RT_FAULT_LINK_COUNT][7] = {
    {"link", "rank", "bandwidth", "background", NULL},
    {"link", "node", "nic", "bandwidth", "background", NULL},
    {"link", "plane", "leaf", "bandwidth", "background", "ports_down", NULL}};

static int parse_entry(struct rt_cfg *c, struct fy_node *e, rt_fault *f)
{
    if (fy_node_get_type(e) != FYNT_MAPPING) {
        rt_cfg_error(c, e,
                     "a fault is a mapping; allowed: {link: nvlink|nic|uplink, its indices, "
                     "bandwidth: (0,1], background: [0,1)}");
        return -1;
    }
    int link = 0;
    if (rt_cfg_get_enum(c, e, "link", 1, rt_fault_link_names, &link) < 0) return -1;
    f->link = (rt_fault_link)link;
    if (rt_cfg_check_keys(c, e, entry_keys[link])) return -1;
    int64_t v[2] = {0, 0};
    for (int i = 0; i < 2 && index_keys[link][i]; i++)
        if (rt_cfg_get_int(c, e, index_keys[link][i], 1, 0, 1 << 20, &v[i]) < 0) return -1;
    f->a = (int)v[0];
    f->b = (int)v[1];
    f->bandwidth = 1;
    f->background = 0;
    f->ports_down = 0;
    int64_t down = 0;
    if (link == RT_FAULT_UPLINK && rt_cfg_get_int(c, e, "ports_down", 0, 1, 1 << 20, &down) < 0)
        return -1;
    f->ports_down = (int)down;
    if (rt_cfg_get_double(c, e, "bandwidth", 0, 1e-6, 1, &f->bandwidth) < 0 ||
        rt_cfg_get_double(c, e, "background", 0, 0, 1 - 1e-6, &f->background) < 0)
        return -1;
    if (!fy_node_mapping_lookup_by_string(e, "bandwidth", FY_NT) &&
        !fy_node_mapping_lookup_by_string(e, "background", FY_NT) && f->ports_down == 0) {
        rt_cfg_error(c, e,
                     "a fault changes nothing without bandwidth, background or ports_down; "
                     "allowed: bandwidth in (0, 1] (fraction left), background in [0, 1) "
                     "(fraction taken by another tenant), ports_down >= 1 (uplink only)");
        return -1;
    }
    f->cfg = c;
    f->at = e;
    return 0;
}

int rt_faults_parse(struct rt_cfg *c, struct fy_node *seq, rt_faults *out)
{
    out->n = 0;
    int n = fy_node_sequence_item_count(seq);
    if (n > RT_FAULTS_MAX) {
        rt_cfg_error(c, seq, "%d faults; allowed: at most %d", n, RT_FAULTS_MAX);
        return -1;
    }
    void *iter = NULL;
    struct fy_node *e;
    while ((e = fy_node_sequence_iterate(seq, &iter)))
        if (parse_entry(c, e, &out->f[out->n++]) < 0) return -1;
    return 0;
}

double rt_faults_factor(const rt_faults *fs, rt_fault_link link, int a, int b, int ports)
{
    double x = 1;
    for (int i = 0; i < fs->n; i++)
        if (fs->f[i].link == link && fs->f[i].a == a &&
            (link == RT_FAULT_NVLINK || fs->f[i].b == b))
            x *= rt_fault_factor(&fs->f[i], ports);
    return x;
}

int rt_faults_check(const rt_faults *fs, int nodes, int devices, int nics, int planes, int leaves,
                    int ports)
{
    for (int i = 0; i < fs->n; i++) {
        const rt_fault *f = &fs->f[i];
        const char *ka = index_keys[f->link][0], *kb = index_keys[f->link][1];
        int max_a = f->link == RT_FAULT_NVLINK ? nodes * devices
                    : f->link == RT_FAULT_NIC  ? nodes
                                               : planes;
        int max_b = f->link == RT_FAULT_NIC ? nics : f->link == RT_FAULT_UPLINK ? leaves : 1;
        if (f->a >= max_a) {
            rt_cfg_error(f->cfg, f->at, "%s %s %d names no link of this cluster; allowed: %s 0..%d",
                         rt_fault_link_names[f->link], ka, f->a, ka, max_a - 1);
            return -1;
        }
        if (kb && f->b >= max_b) {
            rt_cfg_error(f->cfg, f->at, "%s %s %d names no link of this cluster; allowed: %s 0..%d",
                         rt_fault_link_names[f->link], kb, f->b, kb, max_b - 1);
            return -1;
        }
        if (f->ports_down >= ports) {
            rt_cfg_error(f->cfg, f->at,
                         "ports_down %d cuts leaf %d of plane %d off the spines; allowed: 1..%d "
                         "of its %d spine ports (radix / 2)",
                         f->ports_down, f->b, f->a, ports - 1, ports);
            return -1;
        }
    }
    return 0;
}

void rt_faults_json(struct rt_json *j, const rt_faults *fs, int ports, const char *how)
{
    if (fs->n == 0) return;
    rt_json_begin_object(j, "faults");
    rt_json_string(j, "model", how);
    rt_json_begin_array(j, "links");
    for (int i = 0; i < fs->n; i++) {
        const rt_fault *f = &fs->f[i];
        rt_json_begin_object(j, NULL);
        rt_json_string(j, "link", rt_fault_link_names[f->link]);
        rt_json_int(j, index_keys[f->link][0], f->a);
        if (index_keys[f->link][1]) rt_json_int(j, index_keys[f->link][1], f->b);
        rt_json_number(j, "bandwidth", f->bandwidth);
        rt_json_number(j, "background", f->background);
        if (f->link == RT_FAULT_UPLINK) rt_json_int(j, "ports_down", f->ports_down);
        rt_json_number(j, "factor", rt_fault_factor(f, ports));
        rt_json_end_object(j);
    }
    rt_json_end_array(j);
    rt_json_end_object(j);
}
