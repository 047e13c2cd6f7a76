/* A cluster: device, node (scale-up), scale-out network, host link, efficiencies.
 * All values in base units: bytes, seconds, bytes/s, FLOP/s. Bandwidths are per direction. */
#ifndef RT_TOPOLOGY_H
#define RT_TOPOLOGY_H

#include "dtype.h"
#include "faults.h"

struct rt_cfg;
struct fy_node;
struct rt_calib;

typedef enum {
    RT_SCALEUP_NVSWITCH,
    RT_SCALEUP_MESH,
    RT_SCALEUP_PCIE,
    RT_SCALEUP_COUNT
} rt_scaleup_kind;

typedef struct rt_device_spec {
    char *name;
    double peak_flops[RT_DT_COUNT]; /* dense FLOP/s per dtype; 0 = unsupported */
    double hbm_bytes;
    double hbm_bw;
    double launch_overhead;
    double eff_flops; /* achieved fraction of peak_flops for GEMM-like kernels */
    double eff_hbm;   /* achieved fraction of hbm_bw for streaming kernels */
} rt_device_spec;

typedef struct rt_node_spec {
    int devices;
    rt_scaleup_kind scale_up;
    double scale_up_bw;      /* per device, per direction */
    double scale_up_latency; /* one hop device -> switch -> device */
    int nvls;                /* NVSwitch in-network reduction available */
    double host_bw;          /* PCIe per device, per direction */
    double host_latency;
    /* `cores`: host cores the node's devices compute on when they are CPU ranks (rectwin-exec's
     * cpu device); 0 when absent: every device computes on its own. CORES_CFG/CORES_AT locate
     * where it was given (the file or a scenario override), for engines that refuse it. */
    int cores;
    struct rt_cfg *cores_cfg;
    struct fy_node *cores_at;
    /* `cores_nodes`: consecutive nodes whose devices share one set of `cores` cores (several
     * nodes emulated on one machine, as rectwin-exec's scenarios of one device per node run on
     * the development machine); 1 when absent. Where it was given, for the check. */
    int cores_nodes;
    struct rt_cfg *cores_nodes_cfg;
    struct fy_node *cores_nodes_at;
    /* `core_slice`: how long the host's scheduler runs one of two CPU-bound tasks on a core
     * before the other (measured: experiments/measurements/cpu/stagger/slice_probe.c); with it
     * the simgrid engine shares a core in turns of this length rather than evenly at every
     * instant. 0 when absent. */
    double core_slice;
} rt_node_spec;

/* How a leaf spreads the flows that leave it over its spine ports (ECMP):
 *   balanced  every leaf-to-spine port carries an equal share (perfect ECMP; the default);
 *   hash      each flow takes one port chosen by a deterministic hash of its source and
 *             destination devices (a 5-tuple hash), so flows collide on ports as on real
 *             fabrics (sim/simgrid_platform.h). The analytic engine assumes balanced. */
typedef enum { RT_ECMP_BALANCED, RT_ECMP_HASH, RT_ECMP_COUNT } rt_ecmp;

/* The family of the scale-out fabric (`scale_out.family`, sim/fabric.h):
 *   fat_tree   leaves of radix/2 ports down and radix/2 up to a spine layer (the default);
 *   rail_only  Wang et al. 2023, "How to Build Low-cost Networks for Large Language Models
 *              (without Sacrificing Performance)", arXiv:2307.12169: one switch per rail, all
 *              its radix ports down, no spine; traffic between rails crosses NVLink to the
 *              device on the destination's rail (PXN). Needs rail_optimized and at most radix
 *              nodes.
 *   torus      a 2D or 3D torus of routers (`dims:`, product = nodes), one router per node
 *              (the node's leaf) holding all its NICs, links to the +/- neighbour in each
 *              dimension with wraparound carrying the node's NIC bandwidth / (2 x dims),
 *              dimension-order routing the shorter way round (sim/fabric_torus.c). Needs
 *              rail_optimized: false, nics_per_node >= 2 x dims, oversubscription 1, ecmp
 *              balanced; radix and levels are not read.
 *   dragonfly  Kim et al., "Technology-Driven, Highly-Scalable Dragonfly Topology", ISCA 2008:
 *              `groups` groups of `group_routers` routers, every two routers of a group joined
 *              by one local link, every two groups by `global_links` channels; nodes / (groups x
 *              group_routers) nodes per router (the leaf), every channel at one NIC's line rate
 *              (as a Slingshot Rosetta switch runs every port at 200 Gb/s), minimal routing
 *              local-global-local (sim/fabric_dragonfly.c). Needs rail_optimized: false,
 *              oversubscription 1, ecmp balanced; radix and levels are not read. */
typedef enum {
    RT_FAMILY_FAT_TREE,
    RT_FAMILY_RAIL_ONLY,
    RT_FAMILY_TORUS,
    RT_FAMILY_DRAGONFLY,
    RT_FAMILY_COUNT
} rt_fabric_family;
enum { RT_TORUS_MAX_DIMS = 3 };

typedef struct rt_scale_out {
    int nics_per_node;
    double nic_bw;           /* per NIC, per direction */
    double nic_latency;      /* NIC + wire, one way */
    int rail_optimized;      /* NIC i of every node on rail switch i */
    int levels;              /* fat-tree levels above the leaf (1 = leaf + spine) */
    int radix;               /* switch ports */
    double oversubscription; /* >= 1: downlink/uplink ratio at the leaf */
    double switch_latency;
    rt_ecmp ecmp;              /* `ecmp:`, balanced when absent */
    rt_fabric_family family;   /* `family:`, fat_tree when absent */
    struct rt_cfg *family_cfg; /* where `family:` was written (NULL: not written) */
    struct fy_node *family_at;
    int dims[RT_TORUS_MAX_DIMS]; /* `dims:` (family torus): routers per dimension */
    int n_dims;                  /* 0: not written */
    struct rt_cfg *dims_cfg;     /* where `dims:` was written (NULL: not written) */
    struct fy_node *dims_at;
    int groups, group_routers, global_links; /* family dragonfly (0: not written) */
    struct rt_cfg *groups_cfg;               /* where the first of them was written */
    struct fy_node *groups_at;
    /* Family fat_tree, three tiers (sim/fabric_fat_tree.c): `pod_leaves:` leaves per pod (0,
     * absent: two tiers, everything above the leaf one non-blocking spine layer), and
     * `core_oversubscription:` (>= 1, 1 when absent) the ratio of a pod's spine-to-core links:
     * a pod's uplink to the core carries pod_leaves x radix/2 x nic_bw / (oversubscription x
     * core_oversubscription). Needs levels 2 and ecmp balanced. */
    int pod_leaves;
    double core_oversubscription;
    struct rt_cfg *pods_cfg, *core_os_cfg; /* where they were written (NULL: not written) */
    struct fy_node *pods_at, *core_os_at;
} rt_scale_out;

/* NCCL's protocols: LL (8-byte flag+data stores, lowest latency, half the bandwidth), LL128
 * (128-byte lines, 120 bytes of payload), Simple (chunked, full bandwidth, highest latency). */
typedef enum { RT_PROTO_LL, RT_PROTO_LL128, RT_PROTO_SIMPLE, RT_PROTO_COUNT } rt_proto;

/* Latencies of one algorithm under one protocol, as NCCL's tuning model has them: a base per
 * call and a latency per step over NVLink, PCIe or the network. */
typedef struct rt_proto_lat {
    double base, nvlink, pcie, net;
} rt_proto_lat;

enum { RT_TREE_CORRECTION_MAX = 32 };

typedef struct rt_proto_spec {
    int enabled;
    double bandwidth; /* fraction of the algorithm's bus bandwidth the protocol achieves */
    rt_proto_lat ring, tree;
    /* NCCL's channel tuning (with rt_coll_tuning.channels, else 0): the protocol's most threads
     * per channel and its bytes per thread below which a ring or tree call drops a channel
     * (sim/collective_channels.c). */
    int threads, thread_threshold;
    /* The tree's fraction of its bandwidth term (0: `bandwidth`), and NCCL's size correction of
     * a tree AllReduce: tree_correction[i] for sizes in [64 B x 2^i, 64 B x 2^(i+1)), i below
     * n_tree_correction (none: 1). */
    double tree_bandwidth;
    double tree_correction[RT_TREE_CORRECTION_MAX];
    int n_tree_correction;
} rt_proto_spec;

typedef struct rt_coll_tuning {
    double eff_intra;    /* achieved fraction of scale-up bandwidth by collectives */
    double eff_inter;    /* achieved fraction of NIC bandwidth by collectives */
    double base_latency; /* software launch latency of one collective */
    /* Optional `protocols:` (NCCL's tuning figures): ring and tree then take the fastest
     * protocol for their size and group, their latencies per step and per hop replace
     * base_latency and the hop latencies above, and an AlltoAll pays a latency per peer over
     * p2p_channels channels. Without it, none of this applies. */
    int has_protocols;
    rt_proto_spec proto[RT_PROTO_COUNT];
    double p2p_channels;
    /* Optional `channels:` (needs `protocols:` with threads and thread_threshold): the channels
     * NCCL builds for collectives; a ring or tree call of S bytes runs on fewer of them when S is
     * small, at that share of its bandwidth. 0: every call at the full bandwidth. */
    int channels;
    /* Optional `nvls:` (NCCL's NVLS figures): the nvls algorithm's bandwidth is scale_up_bw x
     * efficiency x (channels - 1) / channels instead of scale_up_bw x eff_intra, its latency
     * `latency` instead of Simple's ring base and the switch hops. has_nvls 0: none of this. */
    int has_nvls;
    double nvls_efficiency, nvls_latency;
    int nvls_channels;
} rt_coll_tuning;

/* A topology section that belongs to one engine (`simgrid:`, rt_topology_engine_sections):
 * core knows no engine's keys, so it keeps each occurrence, the topology file's first and the
 * scenario's overrides after it, for the engine to parse with rt_cfg's located getters. The
 * documents are owned by whoever loaded them (the scenario keeps them). */
enum { RT_TOPO_SECTIONS_MAX = 8 };
typedef struct rt_topo_section {
    const char *name;
    struct rt_cfg *cfg;
    struct fy_node *map;
} rt_topo_section;

typedef struct rt_topology {
    char *name;
    char *source;
    rt_device_spec device;
    rt_node_spec node;
    rt_scale_out net;
    rt_coll_tuning coll;
    rt_topo_section sections[RT_TOPO_SECTIONS_MAX]; /* engine sections, in parse order */
    int n_sections;
    /* The `calibration:` tables (core/calib.h), NULL without: then every cost is the scalar
     * model of the figures above. */
    struct rt_calib *calib;
    /* `faults:` (core/faults.h): links left with a fraction of their bandwidth. Both engines
     * read them; an override replaces the list. */
    rt_faults faults;
    int nodes; /* set from the scenario */
} rt_topology;

extern const char *const rt_scaleup_names[];
extern const char *const rt_proto_names[];
extern const char *const rt_ecmp_names[];
extern const char *const rt_family_names[];
/* Top-level keys that are engine sections (NULL-terminated). */
extern const char *const rt_topology_engine_sections[];

int rt_topology_parse(struct rt_cfg *cfg, struct fy_node *map, rt_topology *t, int partial);
void rt_topology_free(rt_topology *t);
/* Checks the `faults:` indices against the cluster once t->nodes is set, that the fabric
 * family can hold it (rail_only: rail_optimized, nodes <= radix, no uplink faults), and the
 * pods (fat_tree, ecmp balanced, levels 2, pod_leaves <= radix/2, pods <= radix): 0, or -1
 * after an error located at the entry, at `family:` or at `pod_leaves:`. */
int rt_topology_check_faults(const rt_topology *t);

/* Nodes whose devices share one set of `node.cores` cores (`node.cores_nodes`, at least 1). */
static inline int rt_topology_cores_nodes(const rt_topology *t)
{
    return t->node.cores_nodes > 1 ? t->node.cores_nodes : 1;
}

/* The core that local rank L of S ranks sharing N cores runs on: consecutive ranks in blocks
 * (ranks 0 and 1 of 4 on core 0 of 2), as rectwin-exec's cpu device pins them (exec/cpu_bind.c).
 * With S <= N, the first of the rank's N / S cores, which it has to itself. */
static inline int rt_core_block(int l, int s, int n)
{
    return (int)((long long)l * n / s);
}

static inline int rt_topology_ranks(const rt_topology *t)
{
    return t->nodes * t->node.devices;
}
/* Nodes under one leaf switch of a plane: a leaf has radix/2 ports down; rail-optimized, NIC i
 * of every node goes to rail switch i (one port per node), otherwise a node takes
 * nics_per_node ports. Under family rail_only the rail switch has no uplinks: all radix ports
 * go down. The one leaf/spine rule of both engines (collective costs, platform). */
int rt_topology_nodes_per_leaf(const rt_topology *t);
/* Spine ports of one leaf: radix / 2 (at least 1), what an uplink's bandwidth is made of. */
static inline int rt_topology_spine_ports(const rt_topology *t)
{
    return t->net.radix / 2 > 0 ? t->net.radix / 2 : 1;
}
/* The leaf (of any plane) node NODE sits under. */
static inline int rt_topology_leaf_of(const rt_topology *t, int node)
{
    return node / rt_topology_nodes_per_leaf(t);
}
/* Pods per plane (1 without pod_leaves): ceil(leaves / pod_leaves). */
int rt_topology_pods(const rt_topology *t);
/* The pod (of any plane) node NODE sits under; 0 without pod_leaves. */
static inline int rt_topology_pod_of(const rt_topology *t, int node)
{
    return t->net.pod_leaves > 0 ? rt_topology_leaf_of(t, node) / t->net.pod_leaves : 0;
}
/* Per-device share of the node's NIC bandwidth, per direction. */
static inline double rt_topology_nic_bw_per_device(const rt_topology *t)
{
    return t->net.nic_bw * t->net.nics_per_node / t->node.devices;
}

#endif
