/* Alpha-beta collective costs. Conventions used throughout:
 *   S      the nccl-tests size of the call (AllReduce buffer, AllGather output, ReduceScatter
 *          input), bytes per rank;
 *   n      group members, m nodes they span, g members per node (the smallest such count:
 *          that node has the fewest NICs to share the inter-node traffic);
 *   B_up   scale_up_bw x eff_intra: what one device moves per direction over NVLink/xGMI;
 *   B_net  nic_bw x nics_per_node / devices x eff_inter: one device's share of its node's
 *          NICs per direction, divided by max(1, f x oversubscription) where f is the share of
 *          the device's inter-node bytes that leave its leaf switch (the leaf's uplinks carry
 *          1/oversubscription of its downlink capacity, so only that share is slowed);
 *   a_up   scale_up_latency (device -> switch -> device);
 *   a_net  nic_latency + switches crossed x switch_latency: 1 switch under the same leaf,
 *          2 x levels + 1 (up to the top and back down) between leaves.
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
 *     (LL 0.5: 8 data bytes per 16-byte store; LL128 0.92: 120 of 128 bytes; Simple 1);
 * the intra hop is NVLink's unless the scale-up is PCIe. NVLS and hierarchical run Simple
 * (NCCL runs NVLS only with Simple): its ring base replaces base_latency. A direct AlltoAll
 * is NCCL's grouped point-to-point: Simple's base once, then per peer it exchanges bytes with
 * one Simple step of latency (intra or net hop), peers spread over p2p_channels channels that
 * each serve their peers in turn, so tiny per-peer messages at large scale cost latency, not
 * bandwidth. A one-rank collective costs nothing. */
#include "collective_model.h"

#include <math.h>

#include "calib.h"

int rt_coll_nodes_per_leaf(const rt_topology *t)
{
    /* A leaf has radix/2 ports down. Rail-optimized: NIC i of every node goes to rail switch
     * i, so a rail switch reaches radix/2 nodes. Otherwise each node uses nics_per_node of
     * the leaf's down ports. */
    int down = t->net.radix / 2;
    if (down < 1) return 1;
    if (t->net.rail_optimized) return down;
    int nics = t->net.nics_per_node > 0 ? t->net.nics_per_node : 1;
    return down / nics > 0 ? down / nics : 1;
}

void rt_coll_shape_of(const rt_topology *t, rt_group group, int rank, rt_coll_shape *out)
{
    int devices = t->node.devices > 0 ? t->node.devices : 1;
    int per_leaf = rt_coll_nodes_per_leaf(t);
    int base = rt_group_base(group, rank);
    /* Members form an arithmetic progression of ranks, so their nodes and leaves are
     * non-decreasing: counting runs counts distinct values. */
    int nodes = 0, leaves = 0, run = 0, min_run = group.size;
    int prev_node = -1, prev_leaf = -1;
    for (int k = 0; k < group.size; k++) {
        int node = (base + k * group.stride) / devices;
        if (node != prev_node) {
            if (run > 0 && run < min_run) min_run = run;
            nodes++;
            run = 0;
            prev_node = node;
            if (node / per_leaf != prev_leaf) {
                leaves++;
                prev_leaf = node / per_leaf;
            }
        }
        run++;
    }
    if (run > 0 && run < min_run) min_run = run;
    out->size = group.size;
    out->nodes = nodes;
    out->local = min_run > 0 ? min_run : 1;
    out->leaves = leaves;
    /* In a node-ordered ring only the hop out of the last node under each leaf leaves it. */
    out->leaf_cross = (leaves > 1 && nodes > 0) ? (double)leaves / nodes : 0.0;
}

static double bw_up(const rt_topology *t)
{
    return t->node.scale_up_bw * t->coll.eff_intra;
}

static double bw_net_raw(const rt_topology *t)
{
    return rt_topology_nic_bw_per_device(t) * t->coll.eff_inter;
}

/* B_net for traffic of which a share CROSS leaves the leaf. */
static double bw_net(const rt_topology *t, double cross)
{
    double slow = cross * t->net.oversubscription;
    return bw_net_raw(t) / (slow > 1.0 ? slow : 1.0);
}

static double lat_net(const rt_topology *t, int cross_leaf)
{
    int switches = cross_leaf ? 2 * t->net.levels + 1 : 1;
    return t->net.nic_latency + switches * t->net.switch_latency;
}

static int nvls_ok(const rt_topology *t)
{
    return t->node.nvls && t->node.scale_up == RT_SCALEUP_NVSWITCH;
}

/* The intra-node hop of latency set L: PCIe for a PCIe scale-up, NVLink otherwise. */
static double intra_hop(const rt_topology *t, const rt_proto_lat *l)
{
    return t->node.scale_up == RT_SCALEUP_PCIE ? l->pcie : l->nvlink;
}

/* Ring or tree under every enabled protocol; O's transfer_s holds the Simple (full bandwidth)
 * term on entry, the fastest protocol's figures on return. */
static void choose_protocol(const rt_topology *t, const rt_coll_shape *sh, rt_coll_kind kind,
                            rt_coll_algo algo, rt_coll_time *o)
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
                         ? s->tree.base + 2.0 * ((sh->local - 1) * intra_hop(t, &s->tree) +
                                                 depth * s->tree.net)
                         : s->ring.base + (steps - inter) * intra_hop(t, &s->ring) +
                               inter * s->ring.net;
        double tr = transfer / s->bandwidth;
        if (lat + tr < best) {
            best = lat + tr;
            o->latency_s = lat, o->transfer_s = tr, o->proto = p;
        }
    }
}

/* Simple's figures (or the first enabled protocol's when Simple is off). */
static const rt_proto_spec *simple_of(const rt_topology *t)
{
    for (int p = RT_PROTO_SIMPLE; p >= 0; p--)
        if (t->coll.proto[p].enabled) return &t->coll.proto[p];
    return &t->coll.proto[RT_PROTO_SIMPLE];
}

/* The per-peer term of a direct AlltoAll: each peer it exchanges bytes with costs one Simple
 * step of latency (NVLink or PCIe in the node, the network outside), spread over the
 * p2p channels. */
static double per_peer_latency(const rt_topology *t, const rt_coll_call *c)
{
    const rt_proto_spec *s = simple_of(t);
    int devices = t->node.devices > 0 ? t->node.devices : 1;
    int base = rt_group_base(c->group, c->rank), me = rt_group_index(c->group, c->rank);
    double sum = 0;
    for (int k = 0; k < c->group.size; k++) {
        if (k == me) continue;
        double sb = c->send ? (double)c->send[k] : c->bytes / c->group.size;
        double rb = c->recv ? (double)c->recv[k] : c->bytes / c->group.size;
        if (sb == 0 && rb == 0) continue;
        int node = (base + k * c->group.stride) / devices;
        sum += node == c->rank / devices ? intra_hop(t, &s->ring) : s->ring.net;
    }
    return sum / (t->coll.p2p_channels >= 1 ? t->coll.p2p_channels : 1);
}

int rt_coll_algo_check(const rt_topology *t, rt_coll_kind kind, rt_coll_algo algo,
                       const rt_coll_shape *shape, const char **why)
{
    int a2a = kind == RT_COLL_ALLTOALLV || kind == RT_COLL_SENDRECV;
    switch (algo) {
    case RT_ALGO_AUTO:
        *why = "algorithm not resolved (auto)";
        return -1;
    case RT_ALGO_DIRECT:
        if (a2a) return 0;
        *why = "direct implements only alltoallv and sendrecv";
        return -1;
    case RT_ALGO_RING:
        if (!a2a) return 0;
        break;
    case RT_ALGO_TREE:
    case RT_ALGO_HIERARCHICAL:
        if (kind == RT_COLL_ALLREDUCE) return 0;
        *why = algo == RT_ALGO_TREE ? "tree implements only allreduce"
                                    : "hierarchical implements only allreduce";
        return -1;
    case RT_ALGO_NVLS:
        if (a2a) break;
        if (!nvls_ok(t)) {
            *why = "nvls needs an NVSwitch node with nvls: true";
            return -1;
        }
        if (shape->nodes > 1) {
            *why = "nvls needs the whole group inside one node";
            return -1;
        }
        return 0;
    default:
        *why = "unknown algorithm";
        return -1;
    }
    *why = "alltoallv and sendrecv only run direct";
    return -1;
}

/* Ring (NCCL's node-aware rings, one channel per device of the node). Each of the steps moves
 * a chunk c = S/n from every rank to its successor. Inside one node every hop is NVLink: a
 * step costs c/B_up. Across m nodes each ring leaves a node once; with g channels rotated
 * over the node's devices a device sends (g-1)/g x c over NVLink and c/g over its NIC per
 * step: max((g-1)/g x c / B_up, c/g / B_net). Steps are lock-step, so each also pays the
 * slowest hop's latency. AllReduce takes 2(n-1) steps, AllGather/ReduceScatter n-1. */
static void ring_time(const rt_topology *t, const rt_coll_shape *sh, double S, int steps,
                      rt_coll_time *o)
{
    double c = S / sh->size;
    double step_bw, step_lat;
    if (sh->nodes <= 1) {
        step_bw = c / bw_up(t);
        step_lat = t->node.scale_up_latency;
    } else {
        double g = sh->local;
        double intra = g > 1 ? (g - 1) / g * c / bw_up(t) : 0.0;
        double inter = c / g / bw_net(t, sh->leaf_cross);
        step_bw = fmax(intra, inter);
        step_lat = lat_net(t, sh->leaves > 1);
    }
    o->transfer_s = steps * step_bw;
    o->latency_s = steps * step_lat;
}

/* Tree AllReduce (NCCL: a chain inside each node, a double binary tree between nodes,
 * pipelined). Reduce goes up while broadcast comes down. In the chain a device forwards S up
 * and S down: 2S per direction over NVLink. Between nodes each tree carries S/2; a node is
 * interior (two children) in one tree and a leaf in the other, so per direction it moves
 * S up + S down = 2S, spread over its g devices' NICs. Latency: the chain twice and the tree
 * depth twice. */
static void tree_time(const rt_topology *t, const rt_coll_shape *sh, double S, rt_coll_time *o)
{
    double g = sh->local;
    int m = sh->nodes;
    double intra = g > 1 ? 2.0 * S / bw_up(t) : 0.0;
    double inter = m > 1 ? 2.0 * S / (g * bw_net(t, sh->leaf_cross)) : 0.0;
    o->transfer_s = fmax(intra, inter);
    double depth = m > 1 ? ceil(log2((double)m)) : 0.0;
    o->latency_s = 2.0 * ((g - 1) * t->node.scale_up_latency + depth * lat_net(t, sh->leaves > 1));
}

/* Hierarchical AllReduce: reduce-scatter inside the node (g ranks), AllReduce of the S/g
 * shard between nodes on each rail (ring of m), AllGather inside the node. Pipelined over
 * chunks like NCCL's NVLS-tree/CollNet, so NVLink and NIC phases overlap: NVLink carries
 * 2(g-1)/g x S per direction (RS out, AG out), the NIC 2(m-1)/m x S/g. Latency: ring steps
 * of both levels in sequence, 2(g-1) x a_up + 2(m-1) x a_net. */
static void hier_time(const rt_topology *t, const rt_coll_shape *sh, double S, rt_coll_time *o)
{
    double g = sh->local;
    double m = sh->nodes;
    double intra = 2.0 * (g - 1) / g * S / bw_up(t);
    double inter = m > 1 ? 2.0 * (m - 1) / m * (S / g) / bw_net(t, sh->leaf_cross) : 0.0;
    o->transfer_s = fmax(intra, inter);
    o->latency_s = 2.0 * (g - 1) * t->node.scale_up_latency +
                   (m > 1 ? 2.0 * (m - 1) * lat_net(t, sh->leaves > 1) : 0.0);
}

/* NVLS (NVSwitch multicast + in-switch reduction, one node). AllReduce: each device pushes
 * its other-rank slices for reduction ((g-1)/g x S out), pulls its reduced slice (S/g in),
 * multicasts it (S/g out) and receives the others ((g-1)/g x S in): S per direction, versus
 * 2(g-1)/g x S for a ring. AllGather/ReduceScatter: (g-1)/g x S in one direction. Latency:
 * one switch round trip per phase. */
static void nvls_time(const rt_topology *t, const rt_coll_shape *sh, rt_coll_kind kind, double S,
                      rt_coll_time *o)
{
    double g = sh->size;
    if (kind == RT_COLL_ALLREDUCE) {
        o->transfer_s = S / bw_up(t);
        o->latency_s = 2.0 * t->node.scale_up_latency;
    } else {
        o->transfer_s = (g - 1) / g * S / bw_up(t);
        o->latency_s = t->node.scale_up_latency;
    }
}

/* Direct AlltoAll(v): every pair exchanges at once. Per rank, NVLink carries the bytes to and
 * from peers on its node and the NIC those to and from other nodes, concurrently; each link
 * direction is a bottleneck: max(max(intra send, recv)/B_up, max(inter send, recv)/B_net,
 * max(cross-leaf send, recv) x oversubscription / B_net). The self block is a local copy and
 * costs nothing here. Latency: the farthest peer actually sent to or received from. Without
 * per-peer arrays the call is the nccl-tests alltoall: S/n to and from every member. */
static void direct_time(const rt_topology *t, const rt_coll_call *c, rt_coll_time *o)
{
    int devices = t->node.devices > 0 ? t->node.devices : 1;
    int per_leaf = rt_coll_nodes_per_leaf(t);
    rt_group gr = c->group;
    int base = rt_group_base(gr, c->rank);
    int me = rt_group_index(gr, c->rank);
    int my_node = c->rank / devices;
    double even = c->bytes / gr.size;
    double intra_s = 0, intra_r = 0, inter_s = 0, inter_r = 0, far_s = 0, far_r = 0, lat = 0;
    for (int k = 0; k < gr.size; k++) {
        if (k == me) continue;
        double s = c->send ? (double)c->send[k] : even;
        double r = c->recv ? (double)c->recv[k] : even;
        if (s == 0 && r == 0) continue;
        int node = (base + k * gr.stride) / devices;
        if (node == my_node) {
            intra_s += s;
            intra_r += r;
            lat = fmax(lat, t->node.scale_up_latency);
        } else if (node / per_leaf == my_node / per_leaf) {
            inter_s += s;
            inter_r += r;
            lat = fmax(lat, lat_net(t, 0));
        } else {
            inter_s += s;
            inter_r += r;
            far_s += s;
            far_r += r;
            lat = fmax(lat, lat_net(t, 1));
        }
    }
    double up = fmax(intra_s, intra_r) / bw_up(t);
    double net = fmax(inter_s, inter_r) / bw_net_raw(t);
    double uplink = fmax(far_s, far_r) * t->net.oversubscription / bw_net_raw(t);
    o->transfer_s = fmax(up, fmax(net, uplink));
    o->latency_s = lat;
}

/* The measured time of C from the topology's calibration (the run of the topology's rank
 * count, the curve of the group size or log-linear between measured sizes), or -1 when none
 * covers it. An AlltoAll(v) is looked up at the larger of its send and receive totals: the
 * curve was measured with even blocks, so a rank's busiest direction stands for its size. */
static double calibrated_time(const rt_topology *t, const rt_coll_call *c)
{
    static const rt_calib_coll map[RT_COLL_COUNT] = {RT_CC_ALLTOALL, RT_CC_ALLREDUCE,
                                                     RT_CC_REDUCE_SCATTER, RT_CC_ALLGATHER,
                                                     RT_CC_SENDRECV};
    if (!t->calib || (unsigned)c->kind >= RT_COLL_COUNT) return -1;
    double bytes = c->bytes;
    if (c->send || c->recv) {
        double s = 0, r = 0;
        for (int k = 0; k < c->group.size; k++) {
            s += c->send ? (double)c->send[k] : 0;
            r += c->recv ? (double)c->recv[k] : 0;
        }
        bytes = fmax(s, r);
    }
    const rt_calib_run *run = rt_calib_run_for(t->calib, rt_topology_ranks(t));
    return rt_calib_coll_time(run, map[c->kind], c->group.size, bytes);
}

int rt_coll_model_time(const rt_topology *t, const rt_coll_call *c, rt_coll_time *o,
                       const char **why)
{
    if (c->group.size < 1 || c->group.stride < 1) {
        *why = "group size and stride must be >= 1";
        return -1;
    }
    if (!(c->bytes >= 0) || !isfinite(c->bytes)) {
        *why = "collective size must be a finite number >= 0";
        return -1;
    }
    rt_coll_shape sh;
    rt_coll_shape_of(t, c->group, c->rank, &sh);
    if (rt_coll_algo_check(t, c->kind, c->algo, &sh, why) < 0) return -1;
    o->latency_s = o->transfer_s = 0;
    o->proto = -1;
    if (t->calib) {
        /* A one-rank collective moves nothing and calls no peer. */
        double measured = sh.size > 1 ? calibrated_time(t, c) : 0.0;
        if (measured >= 0) {
            o->transfer_s = o->total_s = measured;
            return 0;
        }
    }
    if (sh.size > 1) {
        switch (c->algo) {
        case RT_ALGO_RING:
            ring_time(t, &sh, c->bytes, (c->kind == RT_COLL_ALLREDUCE ? 2 : 1) * (sh.size - 1), o);
            break;
        case RT_ALGO_TREE:
            tree_time(t, &sh, c->bytes, o);
            break;
        case RT_ALGO_HIERARCHICAL:
            hier_time(t, &sh, c->bytes, o);
            break;
        case RT_ALGO_NVLS:
            nvls_time(t, &sh, c->kind, c->bytes, o);
            break;
        default:
            direct_time(t, c, o);
            break;
        }
    }
    if (t->coll.has_protocols) {
        if (sh.size <= 1) {
            o->latency_s = o->transfer_s = o->total_s = 0;
            return 0;
        }
        if (c->algo == RT_ALGO_RING || c->algo == RT_ALGO_TREE) {
            choose_protocol(t, &sh, c->kind, c->algo, o);
        } else {
            o->proto = RT_PROTO_SIMPLE;
            o->latency_s = simple_of(t)->ring.base +
                           (c->algo == RT_ALGO_DIRECT ? per_peer_latency(t, c) : o->latency_s);
        }
        o->total_s = o->latency_s + o->transfer_s;
        if (!isfinite(o->total_s)) {
            *why = "a bandwidth this collective needs is zero in the topology";
            return -1;
        }
        return 0;
    }
    o->latency_s += t->coll.base_latency;
    o->total_s = o->latency_s + o->transfer_s;
    if (!isfinite(o->total_s)) {
        *why = "a bandwidth this collective needs is zero in the topology";
        return -1;
    }
    return 0;
}

double rt_coll_busbw_factor(rt_coll_kind kind, int n)
{
    if (n < 1) return 0.0;
    switch (kind) {
    case RT_COLL_ALLREDUCE:
        return 2.0 * (n - 1) / n;
    case RT_COLL_ALLGATHER:
    case RT_COLL_REDUCE_SCATTER:
    case RT_COLL_ALLTOALLV:
        return (double)(n - 1) / n;
    default:
        return 1.0;
    }
}
