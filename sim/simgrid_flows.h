/* The flows of one collective call, before they are handed to SimGrid.
 *
 * Traffic is added as (source device, destination device, bytes) or directly on an NVSwitch
 * port (NVLS). Two granularities:
 *   pairs: one flow per device pair on its full route (exact flow-level sharing);
 *   links: every pair's bytes are added onto the route's segments (simgrid_platform.h:
 *          a device's NVLink up or down, a NIC up or down, a leaf-to-leaf crossing) and one
 *          flow runs per used segment. The flow count drops from world^2 to about 4 x world
 *          plus planes x leaves^2, and a flow is alone on its link unless other calls overlap
 *          it. What is lost: max-min coupling between the links of one pair's route.
 * The error of links against pairs is measured in experiments/validation/aggregation.md. */
#ifndef RT_SIMGRID_FLOWS_H
#define RT_SIMGRID_FLOWS_H

#include "simgrid_platform.h"

typedef struct rt_sg_flow {
    int src_host, dst_host;
    int sender, receiver; /* pairs mode: the ranks that send and (logically) receive; else -1 */
    int lane;             /* independent sequence of steps (a ring's channel), 0 by default */
    double bytes;
    double latency;
    int n_links;
    int links[RT_PLATFORM_MAX_LINKS]; /* directed links */
} rt_sg_flow;

typedef struct rt_sg_flowset {
    const rt_platform *p;
    int pairs;         /* 1: one flow per device pair; 0: one per segment */
    double wire;       /* bytes on the wire per byte added (a protocol's framing), 1 by default */
    double *seg_bytes; /* links mode: [segment] */
    int *touched;      /* links mode: segments with bytes, in first-touch order */
    int n_touched;
    rt_sg_flow *flows; /* the flow list (built by rt_sg_flowset_finish in links mode) */
    int n_flows, cap_flows;
} rt_sg_flowset;

int rt_sg_flowset_init(rt_sg_flowset *f, const rt_platform *p, int pairs);
void rt_sg_flowset_free(rt_sg_flowset *f);
/* Empties the set for the next call (keeps the memory). */
void rt_sg_flowset_clear(rt_sg_flowset *f);

/* Adds BYTES from device SRC to device DST. Returns 0 or -1 (out of memory). */
int rt_sg_flowset_add_pair(rt_sg_flowset *f, int src, int dst, double bytes);
/* The same, routed to DST for RECEIVER (a ring's hop between nodes lands on the rail's device
 * and reaches its successor over NVLink uncharged) on LANE (a ring's channel): step-wise
 * dependencies follow (receiver, lane). */
int rt_sg_flowset_add_pair_to(rt_sg_flowset *f, int src, int dst, int receiver, int lane,
                              double bytes);
/* Adds BYTES on platform segment SEG (NVLS ports, PCIe). */
int rt_sg_flowset_add_segment(rt_sg_flowset *f, int seg, double bytes);

/* Builds f->flows (links mode: one per touched segment). Returns 0 or -1. */
int rt_sg_flowset_finish(rt_sg_flowset *f);

#endif
