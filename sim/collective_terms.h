/* The cost terms the collective algorithms share (notation of collective_terms.c): link
 * bandwidths and hop latencies of the alpha-beta model, and NCCL's protocols. */
#ifndef RT_COLLECTIVE_TERMS_H
#define RT_COLLECTIVE_TERMS_H

#include "collective_model.h"

/* B_up: what one device moves per direction over the scale-up fabric. */
double rt_coll_bw_up(const rt_topology *t);
/* B_net without oversubscription: one device's share of its node's NICs per direction. */
double rt_coll_bw_net_raw(const rt_topology *t);
/* B_net for a group of shape SH: its shares leaf_cross leaving the leaf and pod_cross leaving
 * the pod are slowed by the uplinks they cross. */
double rt_coll_bw_net(const rt_topology *t, const rt_coll_shape *sh);
/* a_net: one network hop under one leaf (CROSS_LEAF 0), between leaves (1), between pods (2). */
double rt_coll_lat_net(const rt_topology *t, int cross_leaf);
/* The farthest hop of a group of shape SH, as rt_coll_lat_net's CROSS_LEAF. */
static inline int rt_coll_farthest(const rt_coll_shape *sh)
{
    return sh->pods > 1 ? 2 : sh->leaves > 1;
}

/* The intra-node hop of latency set L: PCIe for a PCIe scale-up, NVLink otherwise. */
double rt_coll_intra_hop(const rt_topology *t, const rt_proto_lat *l);
/* Simple's figures (or the first enabled protocol's when Simple is off). */
const rt_proto_spec *rt_coll_proto_simple(const rt_topology *t);
/* The fraction of its full bandwidth term that ALGO achieves under protocol S for a KIND call
 * of BYTES: the protocol's `bandwidth`, for a tree its `tree_bandwidth` and, for an AllReduce,
 * its `tree_correction` factor of the size. */
double rt_coll_proto_bandwidth(const rt_proto_spec *s, rt_coll_algo algo, rt_coll_kind kind,
                               double bytes);
/* Ring or tree (ALGO) under every enabled protocol for a call of BYTES; O's transfer_s holds the
 * Simple (full bandwidth) term on entry, the fastest protocol's latency, transfer, index and
 * wire factor (1 / its bandwidth fraction) on return. */
void rt_coll_proto_fastest(const rt_topology *t, const rt_coll_shape *sh, rt_coll_kind kind,
                           rt_coll_algo algo, double bytes, rt_coll_time *o);

#endif
