#include "topology.h"

#include <libfyaml.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libfyaml.h>

#include "calib.h"
#include "cfg.h"

const char *const rt_scaleup_names[] = {"nvswitch", "mesh", "pcie", NULL};
const char *const rt_proto_names[] = {"ll", "ll128", "simple", NULL};
const char *const rt_ecmp_names[] = {"balanced", "hash", NULL};
const char *const rt_family_names[] = {"fat_tree", "rail_only", "torus", "dragonfly", NULL};
const char *const rt_topology_engine_sections[] = {"simgrid", NULL};

static const char *const top_keys[] = {"name",      "source",     "device",  "node",
                                       "scale_out", "collective", "simgrid", "calibration",
                                       "faults",    NULL};
static const char *const device_keys[] = {
    "name", "peak_flops", "hbm", "hbm_bw", "launch_overhead", "efficiency", NULL};
static const char *const eff_keys[] = {"flops", "hbm", NULL};
static const char *const node_keys[] = {
    "devices",      "scale_up", "scale_up_bw", "scale_up_latency", "nvls", "host_bw",
    "host_latency", "cores",    "cores_nodes", "core_slice",       NULL};
static const char *const net_keys[] = {"nics_per_node",
                                       "nic_bw",
                                       "nic_latency",
                                       "rail_optimized",
                                       "levels",
                                       "radix",
                                       "oversubscription",
                                       "switch_latency",
                                       "ecmp",
                                       "family",
                                       "dims",
                                       "groups",
                                       "group_routers",
                                       "global_links",
                                       "pod_leaves",
                                       "core_oversubscription",
                                       NULL};
static const char *const coll_keys[] = {"efficiency", "base_latency", "protocols", "p2p_channels",
                                        "channels",   "nvls",         NULL};
static const char *const nvls_keys[] = {"efficiency", "channels", "latency", NULL};
static const char *const proto_keys[] = {
    "bandwidth",       "ring", "tree", "threads", "thread_threshold", "tree_bandwidth",
    "tree_correction", NULL};
static const char *const proto_lat_keys[] = {"base", "nvlink", "pcie", "net", NULL};
static const char *const coll_eff_keys[] = {"intra", "inter", NULL};

/* Generous physical bounds: they catch unit mistakes (450Bps for 450GBps) without judging. */
#define BW_MAX 1e15
#define T_MAX 1.0

static int parse_device(struct rt_cfg *c, struct fy_node *d, rt_device_spec *dev, int req)
{
    int ok = 1;
    if (rt_cfg_check_keys(c, d, device_keys)) return -1;
    if (rt_cfg_get_str(c, d, "name", req, &dev->name) < 0) return -1;
    struct fy_node *pf = rt_cfg_get_map(c, d, "peak_flops", req, &ok);
    if (!ok) return -1;
    if (pf) {
        if (rt_cfg_check_keys(c, pf, rt_dtype_names)) return -1;
        for (int t = 0; t < RT_DT_COUNT; t++)
            if (rt_cfg_get_unit(c, pf, rt_dtype_names[t], 0, RT_UNIT_FLOPS, 1e6, 1e19,
                                &dev->peak_flops[t]) < 0)
                return -1;
    }
    if (rt_cfg_get_unit(c, d, "hbm", req, RT_UNIT_BYTES, 1e6, 1e15, &dev->hbm_bytes) < 0 ||
        rt_cfg_get_unit(c, d, "hbm_bw", req, RT_UNIT_BANDWIDTH, 1e6, BW_MAX, &dev->hbm_bw) < 0 ||
        rt_cfg_get_unit(c, d, "launch_overhead", req, RT_UNIT_TIME, 0, T_MAX,
                        &dev->launch_overhead) < 0)
        return -1;
    struct fy_node *eff = rt_cfg_get_map(c, d, "efficiency", req, &ok);
    if (!ok) return -1;
    if (eff && (rt_cfg_check_keys(c, eff, eff_keys) ||
                rt_cfg_get_double(c, eff, "flops", req, 1e-3, 1, &dev->eff_flops) < 0 ||
                rt_cfg_get_double(c, eff, "hbm", req, 1e-3, 1, &dev->eff_hbm) < 0))
        return -1;
    return 0;
}

static int parse_node(struct rt_cfg *c, struct fy_node *n, rt_node_spec *node, int req)
{
    int64_t devices = node->devices, cores = node->cores;
    int64_t cores_nodes = node->cores_nodes > 0 ? node->cores_nodes : 1;
    int kind = node->scale_up;
    if (rt_cfg_check_keys(c, n, node_keys) ||
        rt_cfg_get_int(c, n, "devices", req, 1, 4096, &devices) < 0 ||
        rt_cfg_get_enum(c, n, "scale_up", req, rt_scaleup_names, &kind) < 0 ||
        rt_cfg_get_unit(c, n, "scale_up_bw", req, RT_UNIT_BANDWIDTH, 1e6, BW_MAX,
                        &node->scale_up_bw) < 0 ||
        rt_cfg_get_unit(c, n, "scale_up_latency", req, RT_UNIT_TIME, 0, T_MAX,
                        &node->scale_up_latency) < 0 ||
        rt_cfg_get_bool(c, n, "nvls", 0, &node->nvls) < 0 ||
        rt_cfg_get_unit(c, n, "host_bw", req, RT_UNIT_BANDWIDTH, 1e6, BW_MAX, &node->host_bw) < 0 ||
        rt_cfg_get_unit(c, n, "host_latency", req, RT_UNIT_TIME, 0, T_MAX, &node->host_latency) <
            0 ||
        rt_cfg_get_unit(c, n, "core_slice", 0, RT_UNIT_TIME, 0, 1, &node->core_slice) < 0)
        return -1;
    int has_cores = rt_cfg_get_int(c, n, "cores", 0, 1, 1 << 20, &cores);
    if (has_cores < 0) return -1;
    if (has_cores == 0) {
        node->cores_cfg = c;
        node->cores_at = fy_node_mapping_lookup_by_string(n, "cores", FY_NT);
    }
    int has_span = rt_cfg_get_int(c, n, "cores_nodes", 0, 1, 1 << 20, &cores_nodes);
    if (has_span < 0) return -1;
    if (has_span == 0) {
        node->cores_nodes_cfg = c;
        node->cores_nodes_at = fy_node_mapping_lookup_by_string(n, "cores_nodes", FY_NT);
    }
    node->cores_nodes = (int)cores_nodes;
    node->cores = (int)cores;
    node->devices = (int)devices;
    node->scale_up = (rt_scaleup_kind)kind;
    return 0;
}

/* `dims: [x, y]` or `[x, y, z]`, each >= 2 routers; read only by family torus. */
static int parse_dims(struct rt_cfg *c, struct fy_node *n, rt_scale_out *net)
{
    int64_t *v = NULL;
    int count = 0, r = rt_cfg_get_int_list(c, n, "dims", 0, 2, 1 << 20, &v, &count);
    if (r < 0) return -1;
    if (r > 0) return 0;
    struct fy_node *at = fy_node_mapping_lookup_by_string(n, "dims", FY_NT);
    if (count < 2 || count > RT_TORUS_MAX_DIMS) {
        free(v);
        rt_cfg_error(c, at,
                     "dims has %d entries; allowed: 2 or 3 router counts ([x, y] or "
                     "[x, y, z]) of a torus",
                     count);
        return -1;
    }
    for (int i = 0; i < count; i++)
        net->dims[i] = (int)v[i];
    free(v);
    net->n_dims = count;
    net->dims_cfg = c, net->dims_at = at;
    return 0;
}

/* `pod_leaves:` and `core_oversubscription:` (a three-tier fat_tree, sim/fabric_fat_tree.c):
 * absent, pod_leaves 0 and core_oversubscription 1, the two-tier fat-tree. */
static int parse_pods(struct rt_cfg *c, struct fy_node *n, rt_scale_out *net)
{
    int64_t pods = net->pod_leaves;
    if (!(net->core_oversubscription >= 1)) net->core_oversubscription = 1;
    if (rt_cfg_get_int(c, n, "pod_leaves", 0, 0, 4096, &pods) < 0 ||
        rt_cfg_get_double(c, n, "core_oversubscription", 0, 1, 64, &net->core_oversubscription) < 0)
        return -1;
    net->pod_leaves = (int)pods;
    struct fy_node *at = fy_node_mapping_lookup_by_string(n, "pod_leaves", FY_NT);
    if (at) net->pods_cfg = c, net->pods_at = at;
    at = fy_node_mapping_lookup_by_string(n, "core_oversubscription", FY_NT);
    if (at) net->core_os_cfg = c, net->core_os_at = at;
    return 0;
}

static int parse_net(struct rt_cfg *c, struct fy_node *n, rt_scale_out *net, int req)
{
    int64_t nics = net->nics_per_node, levels = net->levels, radix = net->radix;
    int ecmp = net->ecmp, family = net->family;
    if (rt_cfg_check_keys(c, n, net_keys) ||
        rt_cfg_get_int(c, n, "nics_per_node", req, 1, 1024, &nics) < 0 ||
        rt_cfg_get_unit(c, n, "nic_bw", req, RT_UNIT_BANDWIDTH, 1e6, BW_MAX, &net->nic_bw) < 0 ||
        rt_cfg_get_unit(c, n, "nic_latency", req, RT_UNIT_TIME, 0, T_MAX, &net->nic_latency) < 0 ||
        rt_cfg_get_bool(c, n, "rail_optimized", req, &net->rail_optimized) < 0 ||
        rt_cfg_get_int(c, n, "levels", req, 1, 4, &levels) < 0 ||
        rt_cfg_get_int(c, n, "radix", req, 2, 4096, &radix) < 0 ||
        rt_cfg_get_double(c, n, "oversubscription", req, 1, 64, &net->oversubscription) < 0 ||
        rt_cfg_get_unit(c, n, "switch_latency", req, RT_UNIT_TIME, 0, T_MAX, &net->switch_latency) <
            0 ||
        rt_cfg_get_enum(c, n, "ecmp", 0, rt_ecmp_names, &ecmp) < 0 ||
        rt_cfg_get_enum(c, n, "family", 0, rt_family_names, &family) < 0)
        return -1;
    net->ecmp = (rt_ecmp)ecmp;
    net->family = (rt_fabric_family)family;
    struct fy_node *at = fy_node_mapping_lookup_by_string(n, "family", FY_NT);
    if (at) net->family_cfg = c, net->family_at = at;
    if (parse_dims(c, n, net) < 0) return -1;
    int64_t groups = net->groups, routers = net->group_routers, global = net->global_links;
    if (rt_cfg_get_int(c, n, "groups", 0, 1, 1 << 16, &groups) < 0 ||
        rt_cfg_get_int(c, n, "group_routers", 0, 1, 1 << 12, &routers) < 0 ||
        rt_cfg_get_int(c, n, "global_links", 0, 1, 1 << 16, &global) < 0)
        return -1;
    net->groups = (int)groups, net->group_routers = (int)routers, net->global_links = (int)global;
    static const char *const df_keys[] = {"groups", "group_routers", "global_links"};
    for (int i = 0; i < 3 && !net->groups_at; i++)
        if ((at = fy_node_mapping_lookup_by_string(n, df_keys[i], FY_NT)))
            net->groups_cfg = c, net->groups_at = at;
    if (parse_pods(c, n, net) < 0) return -1;
    net->nics_per_node = (int)nics;
    net->levels = (int)levels;
    net->radix = (int)radix;
    return 0;
}

static int parse_proto_lat(struct rt_cfg *c, struct fy_node *map, const char *key, rt_proto_lat *l)
{
    int ok = 1;
    struct fy_node *n = rt_cfg_get_map(c, map, key, 1, &ok);
    if (!n || rt_cfg_check_keys(c, n, proto_lat_keys)) return -1;
    const char *const *k = proto_lat_keys;
    double *v[] = {&l->base, &l->nvlink, &l->pcie, &l->net};
    for (int i = 0; k[i]; i++)
        if (rt_cfg_get_unit(c, n, k[i], 1, RT_UNIT_TIME, 0, T_MAX, v[i]) < 0) return -1;
    return 0;
}

/* A protocol's `tree_correction`: factors in (0, 1] for sizes 64 B x 2^i, i = 0, 1, ... */
static int parse_tree_correction(struct rt_cfg *c, struct fy_node *m, rt_proto_spec *s)
{
    double *v = NULL;
    int n = 0;
    int r = rt_cfg_get_double_list(c, m, "tree_correction", 0, 1e-3, 1, &v, &n);
    if (r < 0) return -1;
    if (r == 0 && (n < 1 || n > RT_TREE_CORRECTION_MAX)) {
        free(v);
        rt_cfg_error(c, m, "tree_correction has %d factors; allowed: 1 to %d", n,
                     RT_TREE_CORRECTION_MAX);
        return -1;
    }
    if (r == 0) {
        for (int i = 0; i < n; i++)
            s->tree_correction[i] = v[i];
        s->n_tree_correction = n;
    }
    free(v);
    return 0;
}

/* `protocols:`: a mapping of ll, ll128, simple (any subset; an absent one is not used). */
static int parse_protocols(struct rt_cfg *c, struct fy_node *n, rt_coll_tuning *coll)
{
    if (rt_cfg_check_keys(c, n, rt_proto_names)) return -1;
    int any = 0;
    for (int p = 0; p < RT_PROTO_COUNT; p++) {
        int ok = 1;
        struct fy_node *m = rt_cfg_get_map(c, n, rt_proto_names[p], 0, &ok);
        if (!ok) return -1;
        rt_proto_spec *s = &coll->proto[p];
        s->enabled = m != NULL;
        if (!m) continue;
        if (rt_cfg_check_keys(c, m, proto_keys) ||
            rt_cfg_get_double(c, m, "bandwidth", 1, 1e-3, 1, &s->bandwidth) < 0 ||
            parse_proto_lat(c, m, "ring", &s->ring) || parse_proto_lat(c, m, "tree", &s->tree))
            return -1;
        /* NCCL's most threads per channel are at most NCCL_MAX_NTHREADS = 640 (device.h). */
        int64_t threads = s->threads, thr = s->thread_threshold;
        if (rt_cfg_get_int(c, m, "threads", 0, 32, 640, &threads) < 0 ||
            rt_cfg_get_int(c, m, "thread_threshold", 0, 1, 1 << 20, &thr) < 0)
            return -1;
        s->threads = (int)threads, s->thread_threshold = (int)thr;
        if (rt_cfg_get_double(c, m, "tree_bandwidth", 0, 1e-3, 1, &s->tree_bandwidth) < 0 ||
            parse_tree_correction(c, m, s) < 0)
            return -1;
        any = 1;
    }
    if (!any) {
        rt_cfg_error(c, n, "no protocol; allowed: one or more of ll, ll128, simple");
        return -1;
    }
    coll->has_protocols = 1;
    return 0;
}

/* `channels:` (NCCL's MAXCHANNELS is 64, device.h) and the per-protocol threads and
 * thread_threshold it needs: all of them or none, each enabled protocol with both. */
static int parse_channels(struct rt_cfg *c, struct fy_node *n, rt_coll_tuning *coll)
{
    int64_t ch = coll->channels;
    if (rt_cfg_get_int(c, n, "channels", 0, 1, 64, &ch) < 0) return -1;
    coll->channels = (int)ch;
    int with = 0, without = 0;
    for (int p = 0; p < RT_PROTO_COUNT; p++) {
        const rt_proto_spec *s = &coll->proto[p];
        if (!s->enabled) continue;
        if (s->threads > 0 && s->thread_threshold > 0)
            with++;
        else if (s->threads > 0 || s->thread_threshold > 0)
            with++, without++;
        else
            without++;
    }
    if (coll->channels > 0 && (!coll->has_protocols || without > 0)) {
        rt_cfg_error(c, n,
                     "channels needs protocols: with threads and thread_threshold in every "
                     "protocol; allowed: all three or none");
        return -1;
    }
    if (coll->channels == 0 && with > 0) {
        rt_cfg_error(c, n,
                     "threads and thread_threshold do nothing without channels; allowed: all "
                     "three or none");
        return -1;
    }
    return 0;
}

static int parse_coll(struct rt_cfg *c, struct fy_node *n, rt_coll_tuning *coll, int req)
{
    int ok = 1;
    if (rt_cfg_check_keys(c, n, coll_keys)) return -1;
    struct fy_node *eff = rt_cfg_get_map(c, n, "efficiency", req, &ok);
    if (!ok) return -1;
    if (eff && (rt_cfg_check_keys(c, eff, coll_eff_keys) ||
                rt_cfg_get_double(c, eff, "intra", req, 1e-3, 1, &coll->eff_intra) < 0 ||
                rt_cfg_get_double(c, eff, "inter", req, 1e-3, 1, &coll->eff_inter) < 0))
        return -1;
    struct fy_node *pr = rt_cfg_get_map(c, n, "protocols", 0, &ok);
    if (!ok || (pr && parse_protocols(c, pr, coll))) return -1;
    if (!coll->p2p_channels) coll->p2p_channels = 1;
    if (rt_cfg_get_double(c, n, "p2p_channels", 0, 1, 1024, &coll->p2p_channels) < 0) return -1;
    if (parse_channels(c, n, coll) < 0) return -1;
    struct fy_node *nv = rt_cfg_get_map(c, n, "nvls", 0, &ok);
    if (!ok) return -1;
    if (nv) {
        /* NCCL's NVLS channels: at least 2 (tuning.cc skips NVLS below), at most MAXCHANNELS. */
        int64_t ch = coll->nvls_channels;
        if (rt_cfg_check_keys(c, nv, nvls_keys) ||
            rt_cfg_get_double(c, nv, "efficiency", 1, 1e-3, 1, &coll->nvls_efficiency) < 0 ||
            rt_cfg_get_int(c, nv, "channels", 1, 2, 64, &ch) < 0 ||
            rt_cfg_get_unit(c, nv, "latency", 1, RT_UNIT_TIME, 0, T_MAX, &coll->nvls_latency) < 0)
            return -1;
        coll->nvls_channels = (int)ch;
        coll->has_nvls = 1;
    }
    return rt_cfg_get_unit(c, n, "base_latency", req, RT_UNIT_TIME, 0, T_MAX, &coll->base_latency) <
                   0
               ? -1
               : 0;
}

/* Keeps the engine sections of MAP for their engines (rt_topo_section). */
static int keep_engine_sections(struct rt_cfg *c, struct fy_node *map, rt_topology *t)
{
    for (int i = 0; rt_topology_engine_sections[i]; i++) {
        int ok = 1;
        const char *name = rt_topology_engine_sections[i];
        struct fy_node *n = rt_cfg_get_map(c, map, name, 0, &ok);
        if (!ok) return -1;
        if (!n) continue;
        if (t->n_sections == RT_TOPO_SECTIONS_MAX) {
            rt_cfg_error(c, n,
                         "more than %d engine sections; allowed: one per file and a few "
                         "overrides",
                         RT_TOPO_SECTIONS_MAX);
            return -1;
        }
        t->sections[t->n_sections++] = (rt_topo_section){name, c, n};
    }
    return 0;
}

int rt_topology_parse(struct rt_cfg *c, struct fy_node *map, rt_topology *t, int partial)
{
    int req = !partial, ok = 1;
    if (!partial) t->n_sections = 0;
    if (rt_cfg_check_keys(c, map, top_keys)) return -1;
    if (rt_cfg_get_str(c, map, "name", req, &t->name) < 0) return -1;
    if (rt_cfg_get_str(c, map, "source", req, &t->source) < 0) return -1;
    struct fy_node *d = rt_cfg_get_map(c, map, "device", req, &ok);
    if (!ok || (d && parse_device(c, d, &t->device, req))) return -1;
    struct fy_node *n = rt_cfg_get_map(c, map, "node", req, &ok);
    if (!ok || (n && parse_node(c, n, &t->node, req))) return -1;
    struct fy_node *s = rt_cfg_get_map(c, map, "scale_out", req, &ok);
    if (!ok || (s && parse_net(c, s, &t->net, req))) return -1;
    struct fy_node *k = rt_cfg_get_map(c, map, "collective", req, &ok);
    if (!ok || (k && parse_coll(c, k, &t->coll, req))) return -1;
    if (keep_engine_sections(c, map, t)) return -1;
    struct fy_node *faults = rt_cfg_get_seq(c, map, "faults", 0, &ok);
    if (!ok || (faults && rt_faults_parse(c, faults, &t->faults))) return -1;
    /* Optional in a full parse too; an override replaces the file's tables as a whole. */
    struct fy_node *cal = rt_cfg_get_map(c, map, "calibration", 0, &ok);
    if (!ok) return -1;
    if (cal) {
        rt_calib *parsed = rt_calib_parse(c, cal);
        if (!parsed) return -1;
        rt_calib_free(t->calib);
        t->calib = parsed;
    }
    if (!partial && t->device.peak_flops[RT_DT_FP32] <= 0) {
        rt_cfg_error(c, d, "peak_flops.fp32 is required (the fallback for every dtype)");
        return -1;
    }
    return 0;
}

int rt_topology_nodes_per_leaf(const rt_topology *t)
{
    if (t->net.family == RT_FAMILY_RAIL_ONLY) return t->net.radix;
    if (t->net.family == RT_FAMILY_TORUS) return 1; /* one router per node */
    if (t->net.family == RT_FAMILY_DRAGONFLY) {     /* nodes / routers per router */
        long long routers = (long long)t->net.groups * t->net.group_routers;
        return routers > 0 && t->nodes >= routers ? (int)(t->nodes / routers) : 1;
    }
    int down = t->net.radix / 2;
    if (down < 1) return 1;
    if (t->net.rail_optimized) return down;
    int nics = t->net.nics_per_node > 0 ? t->net.nics_per_node : 1;
    return down / nics > 0 ? down / nics : 1;
}

/* Reports WHAT at `family:` when it was written, else on stderr (a topology built in code). */
static int family_error(const rt_topology *t, const char *what)
{
    if (t->net.family_cfg)
        rt_cfg_error(t->net.family_cfg, t->net.family_at, "%s", what);
    else
        fprintf(stderr, "scale_out.family: %s\n", what);
    return -1;
}

/* Reports WHAT at `dims:` when it was written, else at `family:`. */
static int dims_error(const rt_topology *t, const char *what)
{
    if (t->net.dims_cfg) {
        rt_cfg_error(t->net.dims_cfg, t->net.dims_at, "%s", what);
        return -1;
    }
    return family_error(t, what);
}

static int check_torus(const rt_topology *t)
{
    char what[256];
    if (t->net.n_dims < 2)
        return family_error(t, "torus needs dims: [x, y] or [x, y, z] (routers per dimension, "
                               "product = nodes)");
    long long prod = 1;
    for (int i = 0; i < t->net.n_dims; i++)
        prod *= t->net.dims[i];
    if (prod != t->nodes) {
        snprintf(what, sizeof what,
                 "torus dims multiply to %lld routers but the cluster has %d nodes (one router "
                 "per node); allowed: dims whose product is the node count",
                 prod, t->nodes);
        return dims_error(t, what);
    }
    if (t->net.rail_optimized)
        return family_error(t, "torus has one router per node holding all its NICs: "
                               "rail_optimized must be false; allowed: rail_optimized: false");
    if (t->net.nics_per_node < 2 * t->net.n_dims) {
        snprintf(what, sizeof what,
                 "torus: a link carries the node's NIC bandwidth / (2 x %d dimensions), less "
                 "than one of its %d NICs; allowed: nics_per_node >= %d, or fewer dims",
                 t->net.n_dims, t->net.nics_per_node, 2 * t->net.n_dims);
        return dims_error(t, what);
    }
    if (t->net.ecmp == RT_ECMP_HASH)
        return family_error(t, "torus routes by dimension order: ecmp: hash has no spine port "
                               "to choose; allowed: ecmp: balanced (or absent)");
    if (t->net.oversubscription != 1)
        return family_error(t, "torus has no leaf uplinks to oversubscribe; allowed: "
                               "oversubscription: 1");
    for (int i = 0; i < t->faults.n; i++)
        if (t->faults.f[i].link == RT_FAULT_UPLINK)
            return family_error(t, "torus has no uplinks: a `faults:` uplink entry names no "
                                   "link; allowed: nvlink and nic faults");
    return 0;
}

/* Reports WHAT at the first dragonfly key written, else at `family:`. */
static int groups_error(const rt_topology *t, const char *what)
{
    if (t->net.groups_cfg) {
        rt_cfg_error(t->net.groups_cfg, t->net.groups_at, "%s", what);
        return -1;
    }
    return family_error(t, what);
}

static int check_dragonfly(const rt_topology *t)
{
    char what[256];
    const rt_scale_out *n = &t->net;
    if (n->groups < 1 || n->group_routers < 1 || n->global_links < 1)
        return family_error(t, "dragonfly needs groups, group_routers and global_links (each "
                               ">= 1)");
    long long routers = (long long)n->groups * n->group_routers;
    if (t->nodes % routers != 0) {
        snprintf(what, sizeof what,
                 "dragonfly: %d nodes do not fill %d groups x %d routers evenly; allowed: a "
                 "node count that is a multiple of groups x group_routers (%lld)",
                 t->nodes, n->groups, n->group_routers, routers);
        return groups_error(t, what);
    }
    if (n->rail_optimized)
        return family_error(t, "dragonfly attaches all NICs of a node to one router: "
                               "rail_optimized must be false; allowed: rail_optimized: false");
    if (n->ecmp == RT_ECMP_HASH)
        return family_error(t, "dragonfly routes minimally: ecmp: hash has no spine port to "
                               "choose; allowed: ecmp: balanced (or absent)");
    if (n->oversubscription != 1)
        return family_error(t, "dragonfly has no leaf uplinks to oversubscribe; allowed: "
                               "oversubscription: 1");
    for (int i = 0; i < t->faults.n; i++)
        if (t->faults.f[i].link == RT_FAULT_UPLINK)
            return family_error(t, "dragonfly has no uplinks: a `faults:` uplink entry names no "
                                   "link; allowed: nvlink and nic faults");
    return 0;
}

/* Reports WHAT at `pod_leaves:` when it was written, else on stderr. */
static int pods_error(const rt_topology *t, const char *what)
{
    if (t->net.pods_cfg)
        rt_cfg_error(t->net.pods_cfg, t->net.pods_at, "%s", what);
    else
        fprintf(stderr, "scale_out.pod_leaves: %s\n", what);
    return -1;
}

int rt_topology_pods(const rt_topology *t)
{
    if (t->net.pod_leaves < 1) return 1;
    int npl = rt_topology_nodes_per_leaf(t), leaves = (t->nodes + npl - 1) / npl;
    return (leaves + t->net.pod_leaves - 1) / t->net.pod_leaves;
}

/* Pods: fat_tree, balanced ECMP, levels 2 (the pod's spines and the core above the leaf), at
 * most radix/2 leaves per pod and radix pods; core_oversubscription only with pods. */
static int check_pods(const rt_topology *t)
{
    char what[320];
    if (t->net.pod_leaves < 1) {
        if (!(t->net.core_oversubscription > 1)) return 0;
        const char *what = "core_oversubscription is the ratio at the pods' spine-to-core links "
                           "and is read only with pod_leaves; allowed: pod_leaves >= 1, or no "
                           "core_oversubscription";
        if (t->net.core_os_cfg)
            rt_cfg_error(t->net.core_os_cfg, t->net.core_os_at, "%s", what);
        else
            fprintf(stderr, "scale_out.core_oversubscription: %s\n", what);
        return -1;
    }
    if (t->net.family != RT_FAMILY_FAT_TREE)
        return pods_error(t, "pods are tiers of a fat-tree; allowed: family: fat_tree (or "
                             "absent), or no pod_leaves");
    if (t->net.ecmp == RT_ECMP_HASH)
        return pods_error(t, "pods route over aggregated spine and core links (balanced ECMP); "
                             "ecmp: hash is not modeled with pods; allowed: ecmp: balanced (or "
                             "absent), or no pod_leaves");
    if (t->net.levels != 2) {
        snprintf(what, sizeof what,
                 "with pods the tiers above the leaf are the pod's spines and the core, so "
                 "levels must be 2 (got %d; latency comes from the tier a route crosses: 3 "
                 "switches inside a pod, 5 across pods); allowed: levels: 2, or no pod_leaves",
                 t->net.levels);
        return pods_error(t, what);
    }
    int half = rt_topology_spine_ports(t);
    if (t->net.pod_leaves > half) {
        snprintf(what, sizeof what,
                 "pod_leaves %d: a pod spine of radix %d ports has radix/2 = %d ports down, one "
                 "per leaf of its pod; allowed: 1 <= pod_leaves <= %d",
                 t->net.pod_leaves, t->net.radix, half, half);
        return pods_error(t, what);
    }
    int pods = rt_topology_pods(t);
    if (pods > t->net.radix) {
        snprintf(what, sizeof what,
                 "%d nodes make %d pods, more than a core switch of radix %d joins (one port "
                 "per pod); allowed: at most %d pods (more pod_leaves, fewer nodes)",
                 t->nodes, pods, t->net.radix, t->net.radix);
        return pods_error(t, what);
    }
    return 0;
}

/* `node.cores_nodes` groups whole nodes and only shares `node.cores`. */
static int check_cores_nodes(const rt_topology *t)
{
    const rt_node_spec *n = &t->node;
    const char *what = NULL;
    char buf[200];
    if (n->cores_nodes > 1 && n->cores <= 0)
        what = "node.cores_nodes shares the node.cores cores, and there are none; allowed: set "
               "node.cores, or no cores_nodes";
    else if (n->cores_nodes > 1 && t->nodes % n->cores_nodes != 0) {
        snprintf(buf, sizeof buf,
                 "%d nodes do not split into groups of %d sharing cores; allowed: a divisor of %d",
                 t->nodes, n->cores_nodes, t->nodes);
        what = buf;
    }
    if (!what) return 0;
    if (n->cores_nodes_cfg && n->cores_nodes_at)
        rt_cfg_error(n->cores_nodes_cfg, n->cores_nodes_at, "%s", what);
    else
        fprintf(stderr, "topology node.cores_nodes: %s\n", what);
    return -1;
}

int rt_topology_check_faults(const rt_topology *t)
{
    if (check_cores_nodes(t) < 0) return -1;
    if (check_pods(t) < 0) return -1;
    if (t->net.family == RT_FAMILY_RAIL_ONLY) {
        char what[256];
        if (!t->net.rail_optimized)
            return family_error(t, "rail_only needs rail_optimized: true (one switch per rail); "
                                   "allowed: rail_optimized: true, or family: fat_tree");
        if (t->nodes > t->net.radix) {
            snprintf(what, sizeof what,
                     "rail_only: %d nodes exceed the %d one rail switch serves (radix, no "
                     "spine); allowed: nodes <= radix, or family: fat_tree",
                     t->nodes, t->net.radix);
            return family_error(t, what);
        }
        if (t->net.ecmp == RT_ECMP_HASH)
            return family_error(t, "rail_only has no spine: ecmp: hash has no port to choose; "
                                   "allowed: ecmp: balanced (or absent), or family: fat_tree");
        for (int i = 0; i < t->faults.n; i++)
            if (t->faults.f[i].link == RT_FAULT_UPLINK)
                return family_error(t, "rail_only has no uplinks: a `faults:` uplink entry names "
                                       "no link; allowed: nvlink and nic faults");
    }
    if (t->net.family == RT_FAMILY_TORUS && check_torus(t) < 0) return -1;
    if (t->net.family == RT_FAMILY_DRAGONFLY && check_dragonfly(t) < 0) return -1;
    if (t->net.family != RT_FAMILY_DRAGONFLY &&
        (t->net.groups || t->net.group_routers || t->net.global_links))
        return groups_error(t, "groups, group_routers and global_links are read only by family: "
                               "dragonfly; allowed: family: dragonfly, or none of them");
    if (t->net.family != RT_FAMILY_TORUS && t->net.n_dims > 0)
        return dims_error(t, "dims is read only by family: torus; allowed: family: torus, or no "
                             "dims");
    int npl = rt_topology_nodes_per_leaf(t);
    return rt_faults_check(&t->faults, t->nodes, t->node.devices, t->net.nics_per_node,
                           t->net.rail_optimized ? t->net.nics_per_node : 1,
                           (t->nodes + npl - 1) / npl, rt_topology_spine_ports(t));
}

void rt_topology_free(rt_topology *t)
{
    if (!t) return;
    free(t->name);
    free(t->source);
    free(t->device.name);
    rt_calib_free(t->calib);
    memset(t, 0, sizeof *t);
}
