/* Direct AlltoAll(v) and sendrecv: every pair exchanges at once (NCCL's grouped
 * point-to-point). Notation in collective_terms.c. */
#include <math.h>

#include "collective_algo.h"
#include "collective_terms.h"

static int is_a2a(rt_coll_kind kind)
{
    return kind == RT_COLL_ALLTOALLV || kind == RT_COLL_SENDRECV;
}

static int direct_check(const rt_topology *t, rt_coll_kind kind, const rt_coll_shape *shape,
                        const char **why)
{
    (void)t, (void)shape;
    if (is_a2a(kind)) return 0;
    *why = "direct implements only alltoallv and sendrecv";
    return -1;
}

/* With protocols: Simple's base once, then per peer it exchanges bytes with one Simple step
 * of latency (NVLink or PCIe in the node, the network outside), peers spread over
 * p2p_channels channels that each serve their peers in turn, so tiny per-peer messages at
 * large scale cost latency, not bandwidth. */
static double per_peer_latency(const rt_topology *t, const rt_coll_call *c)
{
    const rt_proto_spec *s = rt_coll_proto_simple(t);
    int devices = t->node.devices > 0 ? t->node.devices : 1;
    int base = rt_group_base(c->group, c->rank), me = rt_group_index(c->group, c->rank);
    double sum = 0;
    for (int k = 0; k < c->group.size; k++) {
        if (k == me) continue;
        double sb = c->send ? (double)c->send[k] : c->bytes / c->group.size;
        double rb = c->recv ? (double)c->recv[k] : c->bytes / c->group.size;
        if (sb == 0 && rb == 0) continue;
        int node = (base + k * c->group.stride) / devices;
        sum += node == c->rank / devices ? rt_coll_intra_hop(t, &s->ring) : s->ring.net;
    }
    return sum / (t->coll.p2p_channels >= 1 ? t->coll.p2p_channels : 1);
}

/* Per rank, NVLink carries the bytes to and from peers on its node and the NIC those to and
 * from other nodes, concurrently; each link direction is a bottleneck:
 * max(max(intra send, recv)/B_up, max(inter send, recv)/B_net,
 * max(cross-leaf send, recv) x oversubscription / B_net, with pods max(cross-pod send, recv) x
 * oversubscription x core_oversubscription / B_net). The self block is a local copy and
 * costs nothing here. Latency: the farthest peer actually sent to or received from. Without
 * per-peer arrays the call is the nccl-tests alltoall: S/n to and from every member. */
static void direct_time(const rt_topology *t, const rt_coll_call *c, const rt_coll_shape *sh,
                        rt_coll_time *o)
{
    (void)sh;
    int devices = t->node.devices > 0 ? t->node.devices : 1;
    int per_leaf = rt_topology_nodes_per_leaf(t);
    int pod_leaves = t->net.family == RT_FAMILY_FAT_TREE ? t->net.pod_leaves : 0;
    rt_group gr = c->group;
    int base = rt_group_base(gr, c->rank);
    int me = rt_group_index(gr, c->rank);
    int my_node = c->rank / devices;
    double even = c->bytes / gr.size;
    double intra_s = 0, intra_r = 0, inter_s = 0, inter_r = 0, far_s = 0, far_r = 0, lat = 0;
    double pod_s = 0, pod_r = 0;
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
            lat = fmax(lat, rt_coll_lat_net(t, 0));
        } else {
            inter_s += s;
            inter_r += r;
            far_s += s;
            far_r += r;
            int cross_pod =
                pod_leaves > 0 && rt_topology_pod_of(t, node) != rt_topology_pod_of(t, my_node);
            if (cross_pod) pod_s += s, pod_r += r;
            lat = fmax(lat, rt_coll_lat_net(t, cross_pod ? 2 : 1));
        }
    }
    double up = fmax(intra_s, intra_r) / rt_coll_bw_up(t);
    double net = fmax(inter_s, inter_r) / rt_coll_bw_net_raw(t);
    double uplink = fmax(far_s, far_r) * t->net.oversubscription / rt_coll_bw_net_raw(t);
    double core = pod_leaves > 0 ? fmax(pod_s, pod_r) * t->net.oversubscription *
                                       t->net.core_oversubscription / rt_coll_bw_net_raw(t)
                                 : 0.0;
    o->transfer_s = fmax(fmax(up, core), fmax(net, uplink));
    o->latency_s = lat;
    if (t->coll.has_protocols) {
        o->proto = RT_PROTO_SIMPLE;
        o->latency_s = rt_coll_proto_simple(t)->ring.base + per_peer_latency(t, c);
    }
}

/* Every member sends its per-peer bytes to every other member. */
static int direct_traffic(const rt_sg_call *c, const rt_sg_blocks *b, rt_sg_flowset *f)
{
    (void)b;
    int n = c->group.size;
    for (int a = 0; a < n; a++) {
        const rt_op_cost *cost = c->cost(c->ctx, rt_sg_member(c, a));
        double even = cost->bytes / n;
        for (int k = 0; k < n; k++) {
            if (k == a) continue;
            double bytes = cost->send ? (double)cost->send[k] : even;
            if (rt_sg_flowset_add_pair(f, rt_sg_member(c, a), rt_sg_member(c, k), bytes) < 0)
                return -1;
        }
    }
    return 0;
}

static double direct_busbw(rt_coll_kind kind, int n)
{
    return kind == RT_COLL_SENDRECV ? 1.0 : (double)(n - 1) / n;
}

const rt_coll_algo_def rt_coll_algo_direct = {
    .id = RT_ALGO_DIRECT,
    .check = direct_check,
    .time = direct_time,
    .traffic = direct_traffic,
    .busbw_factor = direct_busbw,
};
