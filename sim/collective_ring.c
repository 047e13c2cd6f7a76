/* Ring AllReduce, AllGather and ReduceScatter (NCCL's node-aware rings, one channel per
 * device of the node). Notation in collective_terms.c. */
#include <math.h>

#include "collective_algo.h"
#include "collective_channels.h"
#include "collective_terms.h"

static int ring_check(const rt_topology *t, rt_coll_kind kind, const rt_coll_shape *shape,
                      const char **why)
{
    (void)t, (void)shape;
    if (kind != RT_COLL_ALLTOALLV && kind != RT_COLL_SENDRECV) return 0;
    *why = "alltoallv and sendrecv only run direct";
    return -1;
}

/* Each of the steps moves a chunk c = S/n from every rank to its successor. Inside one node
 * every hop is NVLink: a step costs c/B_up. Across m nodes each ring leaves a node once;
 * with g channels rotated over the node's devices a device sends (g-1)/g x c over NVLink and
 * c/g over its NIC per step: max((g-1)/g x c / B_up, c/g / B_net). Steps are lock-step, so
 * each also pays the slowest hop's latency. AllReduce takes 2(n-1) steps,
 * AllGather/ReduceScatter n-1. */
static void ring_time(const rt_topology *t, const rt_coll_call *call, const rt_coll_shape *sh,
                      rt_coll_time *o)
{
    int steps = (call->kind == RT_COLL_ALLREDUCE ? 2 : 1) * (sh->size - 1);
    double c = call->bytes / sh->size;
    double step_bw, step_lat;
    if (sh->nodes <= 1) {
        step_bw = c / rt_coll_bw_up(t);
        step_lat = t->node.scale_up_latency;
    } else {
        double g = sh->local;
        double intra = g > 1 ? (g - 1) / g * c / rt_coll_bw_up(t) : 0.0;
        double inter = c / g / rt_coll_bw_net(t, sh);
        step_bw = fmax(intra, inter);
        step_lat = rt_coll_lat_net(t, rt_coll_farthest(sh));
    }
    o->transfer_s = steps * step_bw;
    o->latency_s = steps * step_lat;
    if (t->coll.has_protocols)
        rt_coll_proto_fastest(t, sh, call->kind, RT_ALGO_RING, call->bytes, o);
    /* With `channels:`, a small call runs on fewer channels (collective_channels.c). */
    rt_coll_channel_ramp(t, call, sh->size, RT_ALGO_RING, o);
}

/* Steps of the ring: 2(n-1) for AllReduce, n-1 for AllGather and ReduceScatter. */
static int ring_steps(const rt_sg_call *c)
{
    return (c->kind == RT_COLL_ALLREDUCE ? 2 : 1) * (c->group.size - 1);
}

/* Step-wise: the buffer in C chunks, each through every step in order, pipelined as a
 * wavefront: in round r every chunk c with 0 <= r - c < steps takes its step r - c, so there
 * are steps + C - 1 rounds, each ending before the next starts. */
static int ring_rounds(const rt_sg_call *c)
{
    return ring_steps(c) + (c->chunks > 1 ? c->chunks : 1) - 1;
}

/* The share of S a member sends in round R of the step-wise ring: chunk-steps active in the
 * round, each S / (n C). */
static double round_share(const rt_sg_call *c, int r)
{
    int chunks = c->chunks > 1 ? c->chunks : 1, steps = ring_steps(c);
    int first = r - steps + 1 > 0 ? r - steps + 1 : 0, last = r < chunks - 1 ? r : chunks - 1;
    return (last >= first ? last - first + 1 : 0) / ((double)c->group.size * chunks);
}

/* One channel per member of a node (one channel inside a single node). Channel ch enters
 * every node at its member ch and leaves from member ch - 1, so the channels spread the
 * inter-node hops over the node's devices (and NICs). Each member sends FACTOR x S /
 * channels to its successor in every channel, FACTOR = 2(n-1)/n for AllReduce, (n-1)/n
 * otherwise (all steps at once), or the round's share (step-wise). A hop between nodes leaves
 * through the sender's own NIC and stays on its rail (NCCL builds rings that way, without PXN): it
 * is sent to the device of the next node with the sender's local index, and the last step into the
 * successor is not charged. */
static int ring_traffic(const rt_sg_call *c, const rt_sg_blocks *b, rt_sg_flowset *f)
{
    int n = c->group.size, G = c->t->node.devices;
    double factor = c->round < 0 ? (c->kind == RT_COLL_ALLREDUCE ? 2.0 : 1.0) * (n - 1) / n
                                 : round_share(c, c->round);
    int channels = 1;
    if (b->m > 1) {
        channels = rt_sg_block_len(b, 0);
        for (int i = 1; i < b->m; i++)
            if (rt_sg_block_len(b, i) < channels) channels = rt_sg_block_len(b, i);
    }
    for (int ch = 0; ch < channels; ch++)
        for (int i = 0; i < b->m; i++) {
            int len = rt_sg_block_len(b, i);
            for (int s = 0; s < len; s++) {
                int from = rt_sg_member(c, b->first[i] + (ch + s) % len);
                int to;
                if (s + 1 < len)
                    to = rt_sg_member(c, b->first[i] + (ch + s + 1) % len);
                else {
                    int nb = (i + 1) % b->m;
                    to = rt_sg_member(c, b->first[nb] + ch % rt_sg_block_len(b, nb));
                }
                double bytes = factor * rt_sg_size_of(c, from) / channels;
                int dev = to / G != from / G ? to / G * G + from % G : to;
                if (rt_sg_flowset_add_pair_to(f, from, dev, to, ch, bytes) < 0) return -1;
            }
        }
    return 0;
}

static double ring_busbw(rt_coll_kind kind, int n)
{
    return (kind == RT_COLL_ALLREDUCE ? 2.0 : 1.0) * (n - 1) / n;
}

const rt_coll_algo_def rt_coll_algo_ring = {
    .id = RT_ALGO_RING,
    .check = ring_check,
    .time = ring_time,
    .traffic = ring_traffic,
    .rounds = ring_rounds,
    .busbw_factor = ring_busbw,
};
