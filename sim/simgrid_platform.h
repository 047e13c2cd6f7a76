/* A SimGrid platform generated from a topology and a node count (DESIGN.md section 6).
 *
 * Hosts: one per device ("gpu-R", R = rank), one NVSwitch endpoint per node ("nvs-H"), one
 * CPU per node ("cpu-H") and one endpoint per leaf switch ("leaf-P-L", plane P, leaf L); with
 * node.cores, one-core hosts "core-H-K" (core K of the set of shared cores that starts at node
 * H), which compute and have no routes.
 * Every link is SPLITDUPLEX (independent UP and DOWN directions):
 *   nvlink-R     device R <-> its node's NVSwitch (UP: device to switch); the scale-up
 *                crossbar is these links alone, so any two devices of a node meet only
 *                their own two links;
 *   nic-H-K      NIC K of node H <-> its leaf (UP: towards the leaf);
 *   uplink-P-L   (scale_out.ecmp: balanced, the default) everything leaf L of plane P sends
 *                to or receives from the spines, with (radix/2 ports x NIC bandwidth) /
 *                oversubscription; the spine layer is non-blocking (ECMP is taken as
 *                perfectly balanced);
 *   uplink-P-L-S (ecmp: hash) port S of leaf L to spine S of plane P (a 2-level folded Clos:
 *                spine S joins port S of every leaf of its plane), radix/2 / oversubscription
 *                ports at NIC bandwidth each; spines are hosts "spine-P-S". A flow between
 *                leaves takes one spine, by a hash of its devices (rt_fabric_ecmp_port in
 *                sim/fabric_fat_tree.c), so flows collide on ports; a failed port (faults:
 *                ports_down) is left out of every route and flows rehash over the others;
 *   pod-uplink-P-Q (scale_out.pod_leaves, three tiers) everything pod Q of plane P sends to or
 *                receives from the core ("core-P", the core layer of the plane as one
 *                non-blocking host), pod_leaves x radix/2 x NIC bandwidth / (oversubscription
 *                x core_oversubscription); the leaves' uplink-P-L then reach their pod's
 *                spines (a leaf pair of one pod is one segment, as without pods) and a route
 *                across pods is leaf -> core-P over uplink UP and pod-uplink UP, then core-P
 *                -> leaf over pod-uplink DOWN and uplink DOWN;
 *   pcie-R       device R <-> its node's CPU (UP: device to host).
 * The uplinks, spines and leaf-to-leaf segments belong to the fabric family (sim/fabric.h:
 * fat_tree as above, rail_only with one switch per rail and none of them, torus with one
 * router per node (its leaf) and "torus-N-D" from router N to its + neighbour in dimension D,
 * dragonfly with routers as leaves joined by "local-G-R-S" and "global-I-J-R").
 * A plane is one rail when the fabric is rail-optimized (NIC K of every node on plane K),
 * else the single fat-tree every NIC joins. Bandwidths are the datasheet figures times the
 * topology's collective efficiencies (what collectives achieve), latencies are split so that
 * a path adds up to the topology's one-way figures.
 *
 * A route between two devices of different nodes goes the way NCCL's PXN sends it on a
 * rail-optimized fabric: over NVLink to the source node's device with the destination's local
 * index, then on that rail. Routes are built from segments: a segment is a (source host,
 * destination host) pair with its one or two directed links (leaf to leaf when balanced; leaf
 * to spine and spine to leaf under ecmp: hash; leaf to core and core to leaf across pods);
 * segments are also the unit the SimGrid engine
 * aggregates flows onto (links mode: under ecmp: hash, per leaf-to-spine port direction). */
#ifndef RT_SIMGRID_PLATFORM_H
#define RT_SIMGRID_PLATFORM_H

#include <stdio.h>

#include "topology.h"

/* Segments, and directed links, on the longest device-to-device route: a fat-tree route has at
 * most 6 of each, a dragonfly route 7; a torus route 4 + its hops (sim/fabric_torus.c refuses a
 * torus whose diameter exceeds RT_PLATFORM_MAX_PATH - 4). */
enum { RT_PLATFORM_MAX_PATH = 16, RT_PLATFORM_MAX_LINKS = 16 };

typedef enum { RT_DIR_UP, RT_DIR_DOWN } rt_link_dir;

typedef struct rt_platform {
    int nodes, devices, world;
    int nics;           /* per node */
    int planes;         /* rail-optimized: nics; else 1 */
    int nodes_per_leaf; /* nodes under one leaf of a plane */
    int leaves;         /* leaves per plane */
    int ecmp_hash;      /* scale_out.ecmp: hash (one uplink per spine port) */
    int ports;          /* spine ports of a leaf: radix / 2, under ecmp: hash divided by
                           oversubscription (the spines of a plane) */
    int up_ports;       /* uplinks per leaf: ports under ecmp: hash, else 1 */
    int *down;          /* [plane x leaves + leaf] failed ports (ports 0..down-1), hash only */
    int pod_leaves;     /* fat_tree with pods: leaves per pod (0: two tiers) */
    int pods;           /* pods per plane (1 without pods) */
    const struct rt_fabric *fabric; /* scale_out.family (sim/fabric.h) */
    int dims[3], n_dims;            /* family state: torus routers per dimension (n_dims of them);
                                       dragonfly groups, group_routers, global_links (n_dims 0) */
    int n_up_hosts, n_up_links;     /* the family's switches and links above the leaves */
    int n_cross;                    /* its segments (leaf-crossing routes are made of them) */
    int n_hosts;
    int n_links; /* duplex links; directed link id = 2 x duplex + rt_link_dir */
    int n_segments;
    double *bw;       /* [duplex link] bytes/s per direction */
    double *lat;      /* [duplex link] seconds */
    double gpu_speed; /* FLOP/s written on device hosts (kernels are timed by the engine) */
    int cores;        /* node.cores: one-core hosts "core-N-K" per set of shared cores (0: none) */
    int cores_span;   /* node.cores_nodes: nodes on one set; N above is the set's first node */
} rt_platform;

/* The largest platform XML rectwin writes (rt_platform_xml_bytes): SimGrid keeps several times
 * the file in memory while parsing, so beyond this a run would exhaust a workstation. */
#define RT_PLATFORM_MAX_XML_BYTES (1024.0 * 1024 * 1024)

/* Returns NULL with *why set on a topology the generator cannot build (or out of memory). */
rt_platform *rt_platform_new(const rt_topology *t, int nodes, const char **why);
void rt_platform_free(rt_platform *p);

/* Host indices. */
static inline int rt_platform_gpu(const rt_platform *p, int rank)
{
    (void)p;
    return rank;
}
static inline int rt_platform_nvs(const rt_platform *p, int node)
{
    return p->world + node;
}
static inline int rt_platform_cpu(const rt_platform *p, int node)
{
    return p->world + p->nodes + node;
}
static inline int rt_platform_leaf(const rt_platform *p, int plane, int leaf)
{
    return p->world + 2 * p->nodes + plane * p->leaves + leaf;
}

/* Writes the name of core K of the set of shared cores that node NODE computes on into BUF
 * ("core-0-1"; sim/simgrid_cores.c runs CPU ranks' kernels on them). */
void rt_platform_core_name(const rt_platform *p, int node, int core, char *buf, size_t size);

/* Writes host or duplex-link name into BUF ("gpu-3", "nic-1-0"). */
void rt_platform_host_name(const rt_platform *p, int host, char *buf, size_t size);
void rt_platform_link_name(const rt_platform *p, int link, char *buf, size_t size);

/* Segment SEG: its hosts and its directed links (returns how many, 1 or 2). */
int rt_platform_segment(const rt_platform *p, int seg, int *src_host, int *dst_host, int *links);

/* The segments of the route from device SRC to device DST (ranks), in path order; returns
 * how many (0 when SRC == DST). */
int rt_platform_path(const rt_platform *p, int src, int dst, int *segs);

/* Segments for host traffic of device RANK: to the host (D2H) and from it (H2D). */
int rt_platform_pcie_segment(const rt_platform *p, int rank, int to_host);

/* One-way latency of a segment: the sum of its links' latencies. */
double rt_platform_segment_latency(const rt_platform *p, int seg);

/* The size in bytes of what rt_platform_write_xml writes, from the element counts and the
 * written size of a sample of each kind of element (within 5 %, tests/test_simgrid_engine.c),
 * in milliseconds at any size: a platform too large to use is refused before it is written. */
double rt_platform_xml_bytes(const rt_platform *p, int pair_routes);

/* Refuses (-1, message on ERR naming WHO) a platform whose XML would exceed
 * RT_PLATFORM_MAX_XML_BYTES or the free space of the file system holding DIR. */
int rt_platform_check_size(const rt_platform *p, int pair_routes, const char *dir, const char *who,
                           FILE *err);

/* Writes the platform as SimGrid 4.1 XML, with its links' latencies: what the simgrid engine
 * simulates. Routes: every segment, plus every device pair when PAIR_ROUTES (world^2 routes:
 * keep it for small platforms). Returns 0, or -1 on a write error. */
int rt_platform_write_xml(const rt_platform *p, const rt_topology *t, int pair_routes, FILE *f);

#endif
