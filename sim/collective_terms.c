/* Alpha-beta terms. Conventions used by every algorithm file:
 *   S      the nccl-tests size of the call (AllReduce buffer, AllGather output, ReduceScatter
 *          input), bytes per rank;
 *   n      group members, m nodes they span, g members per node (the smallest such count:
 *          that node has the fewest NICs to share the inter-node traffic);
 *   B_up   scale_up_bw x eff_intra: what one device moves per direction over NVLink/xGMI;
 *   B_net  nic_bw x nics_per_node / devices x eff_inter: one device's share of its node's
 *          NICs per direction, divided by max(1, f x oversubscription) where f is the share of
 *          the device's inter-node bytes that leave its leaf switch (the leaf's uplinks carry
 *          1/oversubscription of its downlink capacity, so only that share is slowed), and
 *          with pods (scale_out.pod_leaves) by max(that, f_pod x oversubscription x
 *          core_oversubscription), f_pod the share that leaves the pod (a pod's uplink carries
 *          1/(oversubscription x core_oversubscription) of its leaves' downlinks); both shares
 *          assume full leaves and pods loaded alike, as the per-device share does;
 *   a_up   scale_up_latency (device -> switch -> device);
 *   a_net  nic_latency + switches crossed x switch_latency, as the fabric family counts them
 *          (sim/fabric.h, the same count the platform's latencies add up to): fat_tree 1
 *          under the same leaf, 2 x levels + 1 (up to the top and back down) between leaves,
 *          with pods 3 between leaves of one pod and 5 between pods;
 *          rail_only 1 (one switch per rail).
 * Bandwidths are per direction; a rank's concurrent flows share its links. NVLink and NIC
 * are separate resources, so their terms overlap (max) when an algorithm pipelines them.
 * A mesh scale-up is treated like a switch: libraries stripe channels over all its links.
 * No per-message software cost is modeled beyond base_latency once per call.
 *
 * With the topology's `protocols:` (NCCL's tuning model, NVIDIA/nccl src/graph/tuning.cc: the
 * facts and formulas, not its code), ring and tree run every enabled protocol and take the
 * fastest, as NCCL's ncclTopoGetAlgoTime comparison does:
 *   ring latency = base + (steps - inter steps) x intra hop + inter steps x net hop, steps =
 *     2(n-1) for AllReduce, n-1 for AllGather/ReduceScatter, inter steps 2(m-1) or m-1;
 *   tree latency = base + 2 ((g-1) x intra hop + floor(log2 m) x net hop);
 *   transfer = the algorithm's bandwidth term / the protocol's bandwidth fraction
 *     (LL 0.5: 8 data bytes per 16-byte store; LL128 0.92: 120 of 128 bytes; Simple 1; a tree
 *     takes the protocol's tree_bandwidth and, for an AllReduce, its tree_correction factor
 *     of the size when the topology gives them: NCCL's tree figures, topologies/README.md);
 * the intra hop is NVLink's unless the scale-up is PCIe. NVLS and hierarchical run Simple
 * (NCCL runs NVLS only with Simple): its ring base replaces base_latency (for NVLS, the
 * topology's `collective.nvls` latency when it has one, collective_nvls.c). */
#include "collective_terms.h"

#include "fabric.h"

#include <math.h>

double rt_coll_bw_up(const rt_topology *t)
{
    return t->node.scale_up_bw * t->coll.eff_intra;
}

double rt_coll_bw_net_raw(const rt_topology *t)
{
    return rt_topology_nic_bw_per_device(t) * t->coll.eff_inter;
}

double rt_coll_bw_net(const rt_topology *t, const rt_coll_shape *sh)
{
    double slow = sh->leaf_cross * t->net.oversubscription;
    double core = sh->pod_cross * t->net.oversubscription * t->net.core_oversubscription;
    if (core > slow) slow = core;
    return rt_coll_bw_net_raw(t) / (slow > 1.0 ? slow : 1.0);
}

double rt_coll_lat_net(const rt_topology *t, int cross_leaf)
{
    int switches = rt_fabric_of(t)->switches(t, cross_leaf);
    return t->net.nic_latency + switches * t->net.switch_latency;
}

double rt_coll_intra_hop(const rt_topology *t, const rt_proto_lat *l)
{
    return t->node.scale_up == RT_SCALEUP_PCIE ? l->pcie : l->nvlink;
}

const rt_proto_spec *rt_coll_proto_simple(const rt_topology *t)
{
    for (int p = RT_PROTO_SIMPLE; p >= 0; p--)
        if (t->coll.proto[p].enabled) return &t->coll.proto[p];
    return &t->coll.proto[RT_PROTO_SIMPLE];
}

double rt_coll_proto_bandwidth(const rt_proto_spec *s, rt_coll_algo algo, rt_coll_kind kind,
                               double bytes)
{
    if (algo != RT_ALGO_TREE) return s->bandwidth;
    double bw = s->tree_bandwidth > 0 ? s->tree_bandwidth : s->bandwidth;
    /* NCCL's index: log2i(nBytes >> 6), the floor of log2 of the size in 64-byte units. */
    if (kind == RT_COLL_ALLREDUCE && bytes >= 64) {
        int i = (int)floor(log2(floor(bytes / 64)));
        if (i < s->n_tree_correction) bw *= s->tree_correction[i];
    }
    return bw;
}

void rt_coll_proto_fastest(const rt_topology *t, const rt_coll_shape *sh, rt_coll_kind kind,
                           rt_coll_algo algo, double bytes, rt_coll_time *o)
{
    double transfer = o->transfer_s, best = INFINITY;
    int n = sh->size, m = sh->nodes, ar = kind == RT_COLL_ALLREDUCE;
    double steps = ar ? 2.0 * (n - 1) : n - 1.0;
    double inter = m > 1 ? (ar ? 2.0 * (m - 1) : m - 1.0) : 0.0;
    double depth = m > 1 ? floor(log2((double)m)) : 0.0;
    for (int p = 0; p < RT_PROTO_COUNT; p++) {
        const rt_proto_spec *s = &t->coll.proto[p];
        if (!s->enabled) continue;
        double lat = algo == RT_ALGO_TREE
                         ? s->tree.base + 2.0 * ((sh->local - 1) * rt_coll_intra_hop(t, &s->tree) +
                                                 depth * s->tree.net)
                         : s->ring.base + (steps - inter) * rt_coll_intra_hop(t, &s->ring) +
                               inter * s->ring.net;
        double bw = rt_coll_proto_bandwidth(s, algo, kind, bytes), tr = transfer / bw;
        if (lat + tr < best) {
            best = lat + tr;
            o->latency_s = lat, o->transfer_s = tr, o->proto = p, o->wire = 1 / bw;
        }
    }
}
