/* Fabric families: the scale-out network above the leaves, one file per family behind one
 * small table (`scale_out.family`, core/topology.h). sim/simgrid_platform.c builds what every
 * family shares (devices, NVSwitch, CPU, NICs, leaf or rail switches, NVLink, NIC and PCIe
 * links, PXN routes to the leaf) and asks the family for the rest: its switch hosts above the
 * leaves, its links there, the route between two leaves as segments, and, for the analytic
 * engine (sim/collective_terms.c), the switches a NIC-to-NIC path crosses, so that both engines
 * read one description. Adding a family = one file sim/fabric_<family>.c, its entry in
 * rt_fabrics[] (sim/fabric.c) and its name in core/topology.h.
 *
 * Indices a family sees are local to its ranges: its hosts follow the leaves, its duplex links
 * follow the NIC links, its segments ("cross" segments) follow the NIC segments
 * (rt_fabric_host0, rt_fabric_link0, rt_fabric_seg0 give the global offsets). A family with
 * nothing above its leaves (n_up_hosts, n_up_links and n_cross 0, every route inside one leaf)
 * leaves route, segment, segment_used, host_name and link_name NULL. */
#ifndef RT_FABRIC_H
#define RT_FABRIC_H

#include <stdint.h>
#include <stdio.h>

#include "simgrid_platform.h"

typedef struct rt_fabric {
    rt_fabric_family family;
    /* Sets p->ports, up_ports, ecmp_hash, n_up_hosts, n_up_links, n_cross (p->planes, leaves,
     * nodes_per_leaf and a zeroed p->down are set) and any state; NULL or why it cannot. */
    const char *(*layout)(rt_platform *p, const rt_topology *t);
    /* Bandwidth and latency of its links (p->bw[rt_fabric_link0(p) + i]). */
    void (*set_links)(rt_platform *p, const rt_topology *t);
    /* Appends the segments (global ids) from leaf FROM to leaf TO of PLANE for a flow from
     * device SRC to device DST; returns how many (at most RT_PLATFORM_MAX_PATH - 4, the
     * NVLink and NIC segments of the route included; each segment has at most 2 links). */
    int (*route)(const rt_platform *p, int plane, int from, int to, int src, int dst, int *segs);
    /* Cross segment SEG (local): its global hosts and directed links, as rt_platform_segment. */
    int (*segment)(const rt_platform *p, int seg, int *src, int *dst, int *links);
    /* 1 when some route may use cross segment SEG (the XML writes only those). */
    int (*segment_used)(const rt_platform *p, int seg);
    void (*host_name)(const rt_platform *p, int host, char *buf, size_t size);
    void (*link_name)(const rt_platform *p, int link, char *buf, size_t size);
    /* An XML comment on how the family routes (NULL: none). */
    void (*comment)(const rt_platform *p, FILE *f);
    /* Analytic engine: switches between two NICs under one leaf (CROSS_LEAF 0) or under
     * different leaves (1). The platform's latencies add up to the same count (torus: on the
     * farthest pair; nearer pairs cross fewer). */
    int (*switches)(const rt_topology *t, int cross_leaf);
} rt_fabric;

extern const rt_fabric rt_fabric_fat_tree;
extern const rt_fabric rt_fabric_rail_only;
extern const rt_fabric rt_fabric_torus;
extern const rt_fabric rt_fabric_dragonfly;

/* The family of T. */
const rt_fabric *rt_fabric_of(const rt_topology *t);

static inline int rt_fabric_host0(const rt_platform *p)
{
    return p->world + 2 * p->nodes + p->planes * p->leaves;
}
static inline int rt_fabric_link0(const rt_platform *p)
{
    return p->world + p->nodes * p->nics;
}
static inline int rt_fabric_seg0(const rt_platform *p)
{
    return 2 * p->world + 2 * p->nodes * p->nics;
}

/* fat_tree under scale_out.ecmp: hash (sim/fabric_fat_tree.c). The ECMP hash of a flow from
 * device SRC to device DST, FLOW its index among the pair's connections: 32-bit FNV-1a over
 * the three values' 12 bytes, least significant first, then MurmurHash3's fmix32 finalizer
 * (h ^= h >> 16; h *= 0x85ebca6b; h ^= h >> 13; h *= 0xc2b2ae35; h ^= h >> 16). */
uint32_t rt_fabric_ecmp_hash(int src, int dst, int flow);
/* The spine port a flow from device SRC to DST takes from leaf FROM to leaf TO of PLANE:
 * lo + hash(SRC, DST, 0) mod (ports - lo), lo the larger count of failed ports of the two
 * leaves (a leaf's failed ports are its first ones, so the ports above lo are up at both).
 * A device pair is one connection in the engine (a ring's channels are distinct pairs, an
 * AlltoAll sends once per peer) and SimGrid's routing holds one route per host pair: the
 * flow index is 0. */
int rt_fabric_ecmp_port(const rt_platform *p, int plane, int from, int to, int src, int dst);
/* Spine S of plane PLANE, a host under ecmp: hash (so that a leaf-to-spine hop is a route). */
static inline int rt_fabric_spine(const rt_platform *p, int plane, int s)
{
    return rt_fabric_host0(p) + plane * p->ports + s;
}

#endif
