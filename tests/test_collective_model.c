/* Collective cost model, algorithm policy and `rectwin collective`: hand-computed values. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "collective_algo.h"
#include "collective_channels.h"
#include "collective_model.h"
#include "collective_policy.h"
#include "collective_terms.h"

#define MiB (1024.0 * 1024.0)
#define GiB (1024.0 * MiB)
/* Relative tolerance: the model and the hand formulas differ only by rounding order. */
#define assert_close(a, b) assert_true(fabs((a) - (b)) <= 1e-12 * fabs(b) + 1e-18)

/* An H100-like node with round numbers: B_up = 450e9 x 0.8 = 360e9 B/s per direction,
 * B_net = 50e9 x 8 NICs / 8 devices x 0.9 = 45e9 B/s, a_up = 1 us, a_net (same leaf) =
 * 2 us + 1 us = 3 us, base latency 5 us. Radix 64: 32 nodes per rail switch. */
static rt_topology topo(int nodes)
{
    rt_topology t = {0};
    t.node.devices = 8;
    t.node.scale_up = RT_SCALEUP_NVSWITCH;
    t.node.scale_up_bw = 450e9;
    t.node.scale_up_latency = 1e-6;
    t.node.nvls = 1;
    t.net.nics_per_node = 8;
    t.net.nic_bw = 50e9;
    t.net.nic_latency = 2e-6;
    t.net.rail_optimized = 1;
    t.net.levels = 1;
    t.net.radix = 64;
    t.net.oversubscription = 1.0;
    t.net.switch_latency = 1e-6;
    t.coll.eff_intra = 0.8;
    t.coll.eff_inter = 0.9;
    t.coll.base_latency = 5e-6;
    t.nodes = nodes;
    return t;
}

static double model(const rt_topology *t, rt_coll_kind kind, rt_coll_algo algo, rt_group g,
                    double bytes, const uint64_t *send, const uint64_t *recv)
{
    rt_coll_call c = {kind, algo, g, 0, bytes, send, recv};
    rt_coll_time out;
    const char *why = NULL;
    assert_int_equal(rt_coll_model_time(t, &c, &out, &why), 0);
    assert_close(out.total_s, out.latency_s + out.transfer_s);
    return out.total_s;
}

static void ring_allreduce_one_node(void **state)
{
    (void)state;
    rt_topology t = topo(1);
    double S = GiB;
    /* 2(n-1) = 14 steps of S/8 over NVLink, each paying one NVLink hop, plus base latency. */
    double expect = 2.0 * 7 / 8 * S / 360e9 + 14 * 1e-6 + 5e-6;
    assert_close(model(&t, RT_COLL_ALLREDUCE, RT_ALGO_RING, (rt_group){8, 1}, S, NULL, NULL),
                 expect);
    /* busbw = algbw x 2(n-1)/n recovers B_up minus the latency share. */
    double busbw = S / expect * rt_coll_busbw_factor(RT_COLL_ALLREDUCE, RT_ALGO_AUTO, 8);
    assert_true(busbw < 360e9 && busbw > 0.99 * 360e9);
}

static void ring_allgather_two_nodes(void **state)
{
    (void)state;
    rt_topology t = topo(2);
    double S = 16 * MiB, c = S / 16;
    /* 15 steps; per step NVLink carries 7/8 c, the NIC c/8 at 45e9: the NIC is slower. */
    double step = fmax(7.0 / 8 * c / 360e9, c / 8 / 45e9);
    double expect = 15 * step + 15 * 3e-6 + 5e-6;
    assert_close(model(&t, RT_COLL_ALLGATHER, RT_ALGO_RING, (rt_group){16, 1}, S, NULL, NULL),
                 expect);
}

static void tree_and_hierarchical(void **state)
{
    (void)state;
    rt_topology t = topo(4);
    double S = 256 * MiB;
    /* Hierarchical over 4 nodes: NVLink 2(g-1)/g S, NIC 2(m-1)/m S/g, overlapped. */
    double hier = fmax(2.0 * 7 / 8 * S / 360e9, 2.0 * 3 / 4 * (S / 8) / 45e9) + 2 * 7 * 1e-6 +
                  2 * 3 * 3e-6 + 5e-6;
    assert_close(
        model(&t, RT_COLL_ALLREDUCE, RT_ALGO_HIERARCHICAL, (rt_group){32, 1}, S, NULL, NULL), hier);
    /* Tree: 2S over NVLink and 2S over the node's 8 NICs; depth log2(4) = 2. */
    double s = MiB;
    double tree = fmax(2 * s / 360e9, 2 * s / (8 * 45e9)) + 2 * (7 * 1e-6 + 2 * 3e-6) + 5e-6;
    assert_close(model(&t, RT_COLL_ALLREDUCE, RT_ALGO_TREE, (rt_group){32, 1}, s, NULL, NULL),
                 tree);
}

static void nvls_allreduce(void **state)
{
    (void)state;
    rt_topology t = topo(1);
    double S = GiB;
    double expect = S / 360e9 + 2 * 1e-6 + 5e-6;
    assert_close(model(&t, RT_COLL_ALLREDUCE, RT_ALGO_NVLS, (rt_group){8, 1}, S, NULL, NULL),
                 expect);
    assert_true(expect <
                model(&t, RT_COLL_ALLREDUCE, RT_ALGO_RING, (rt_group){8, 1}, S, NULL, NULL));
}

/* NCCL's NVLS figures: bandwidth scale_up_bw x 0.85 x 15/16 = 358.59375e9 B/s instead of
 * 450e9 x 0.8, latency 25 us instead of the switch hops (this topology has no protocols, so
 * base_latency's 5 us is added as to every call). AllReduce of 1 GiB: S / 358.59375e9 +
 * 30 us; AllGather: 7/8 of S over it + 30 us. The simgrid flows carry 0.8 / (0.85 x 15/16)
 * wire bytes per byte. */
static void nvls_figures(void **state)
{
    (void)state;
    rt_topology t = topo(1);
    t.coll.has_nvls = 1;
    t.coll.nvls_efficiency = 0.85;
    t.coll.nvls_channels = 16;
    t.coll.nvls_latency = 25e-6;
    double S = GiB, bw = 450e9 * 0.85 * 15 / 16;
    assert_close(model(&t, RT_COLL_ALLREDUCE, RT_ALGO_NVLS, (rt_group){8, 1}, S, NULL, NULL),
                 S / bw + 30e-6);
    assert_close(model(&t, RT_COLL_ALLGATHER, RT_ALGO_NVLS, (rt_group){8, 1}, S, NULL, NULL),
                 7.0 / 8 * S / bw + 30e-6);
    rt_coll_call c = {RT_COLL_ALLREDUCE, RT_ALGO_NVLS, (rt_group){8, 1}, 0, S, NULL, NULL};
    rt_coll_time o;
    const char *why = NULL;
    assert_int_equal(rt_coll_model_time(&t, &c, &o, &why), 0);
    assert_close(o.wire, 0.8 / (0.85 * 15 / 16));
    /* The ring is untouched. */
    rt_topology plain = topo(1);
    assert_close(model(&t, RT_COLL_ALLREDUCE, RT_ALGO_RING, (rt_group){8, 1}, S, NULL, NULL),
                 model(&plain, RT_COLL_ALLREDUCE, RT_ALGO_RING, (rt_group){8, 1}, S, NULL, NULL));
}

/* topo(NODES) with NCCL-style protocols of round test numbers (not NCCL's; those are in
 * topologies/README.md): LL half bandwidth, LL128 0.9, Simple full; latencies in us. */
static rt_topology proto_topo(int nodes)
{
    rt_topology t = topo(nodes);
    t.coll.has_protocols = 1;
    t.coll.proto[RT_PROTO_LL] = (rt_proto_spec){.enabled = 1,
                                                .bandwidth = 0.5,
                                                .ring = {5e-6, 1e-6, 2e-6, 3e-6},
                                                .tree = {6e-6, 1e-6, 2e-6, 4e-6}};
    t.coll.proto[RT_PROTO_LL128] = (rt_proto_spec){.enabled = 1,
                                                   .bandwidth = 0.9,
                                                   .ring = {10e-6, 2e-6, 3e-6, 5e-6},
                                                   .tree = {12e-6, 2e-6, 3e-6, 6e-6}};
    t.coll.proto[RT_PROTO_SIMPLE] = (rt_proto_spec){.enabled = 1,
                                                    .bandwidth = 1.0,
                                                    .ring = {20e-6, 4e-6, 5e-6, 10e-6},
                                                    .tree = {22e-6, 4e-6, 5e-6, 12e-6}};
    t.coll.p2p_channels = 4;
    return t;
}

static rt_coll_time call_time(const rt_topology *t, rt_coll_kind kind, rt_coll_algo algo,
                              rt_group g, double bytes, const uint64_t *send, const uint64_t *recv)
{
    rt_coll_call c = {kind, algo, g, 0, bytes, send, recv};
    rt_coll_time out;
    const char *why = NULL;
    assert_int_equal(rt_coll_model_time(t, &c, &out, &why), 0);
    assert_close(out.total_s, out.latency_s + out.transfer_s);
    return out;
}

/* Ring AllReduce on one 8-GPU node: 14 steps of S/8 at 360e9 B/s, x = 14 S / 8 / 360e9.
 *   LL    19 us + 2 x      (5 + 14 x 1)
 *   LL128 38 us + x / 0.9  (10 + 14 x 2)
 *   Simple 76 us + x       (20 + 14 x 4)
 * LL wins below about 4.4 MB, LL128 up to about 70 MB, Simple above. */
static void protocol_selection(void **state)
{
    (void)state;
    rt_topology t = proto_topo(1);
    const double sizes[] = {MiB, 16 * MiB, 256 * MiB};
    const int want[] = {RT_PROTO_LL, RT_PROTO_LL128, RT_PROTO_SIMPLE};
    const double lat[] = {19e-6, 38e-6, 76e-6}, bw[] = {0.5, 0.9, 1.0};
    for (int i = 0; i < 3; i++) {
        double x = 14 * sizes[i] / 8 / 360e9;
        rt_coll_time o =
            call_time(&t, RT_COLL_ALLREDUCE, RT_ALGO_RING, (rt_group){8, 1}, sizes[i], NULL, NULL);
        assert_int_equal(o.proto, want[i]);
        assert_close(o.latency_s, lat[i]);
        assert_close(o.transfer_s, x / bw[i]);
    }
    /* Tree over 4 nodes (1 MiB): 2 ((8 - 1) hops in the node + log2 4 = 2 network hops);
     * bandwidth term 2 S / (8 x 45e9); LL: 6 + 2 (7 + 8) = 36 us + 2 x term. */
    rt_topology four = proto_topo(4);
    double term = 2 * MiB / (8 * 45e9);
    rt_coll_time o =
        call_time(&four, RT_COLL_ALLREDUCE, RT_ALGO_TREE, (rt_group){32, 1}, MiB, NULL, NULL);
    assert_int_equal(o.proto, RT_PROTO_LL);
    assert_close(o.latency_s, 36e-6);
    assert_close(o.transfer_s, term / 0.5);
    /* Ring AllGather over 2 nodes: 15 steps, of which m - 1 = 1 crosses nodes; at 64 KiB LL
     * wins: 5 + 14 x 1 + 1 x 3 = 22 us. */
    rt_topology two = proto_topo(2);
    rt_coll_time ag =
        call_time(&two, RT_COLL_ALLGATHER, RT_ALGO_RING, (rt_group){16, 1}, 64 * 1024, NULL, NULL);
    assert_int_equal(ag.proto, RT_PROTO_LL);
    assert_close(ag.latency_s, 22e-6);
    /* A one-rank collective costs nothing. */
    rt_coll_time one =
        call_time(&t, RT_COLL_ALLREDUCE, RT_ALGO_RING, (rt_group){1, 1}, GiB, NULL, NULL);
    assert_true(one.total_s == 0);
}

/* proto_topo(NODES) with NCCL's channel tuning: 16 channels, threads x thread_threshold
 * 512 x 8 (LL), 640 x 8 (LL128), 512 x 64 (Simple), NCCL's figures (topologies/README.md). */
static rt_topology channel_topo(int nodes)
{
    rt_topology t = proto_topo(nodes);
    t.coll.channels = 16;
    const int threads[] = {512, 640, 512}, thr[] = {8, 8, 64};
    for (int p = 0; p < RT_PROTO_COUNT; p++)
        t.coll.proto[p].threads = threads[p], t.coll.proto[p].thread_threshold = thr[p];
    return t;
}

/* NCCL drops a channel while S < nc x threads x threshold (the ring's LL threshold x n):
 *   ring LL, 16 ranks: 512 x 8 x 16 = 65536 B per channel: 32 KiB -> 1, 256 KiB -> 4,
 *     15 x 65536 -> 15, one byte less -> 14, 1 MiB -> 16 (all);
 *   tree LL: 4096 B per channel: 32 KiB -> 8; tree LL128: 5120: 32 KiB -> 6 (30720 <= 32768);
 *   ring Simple: 32768: 256 KiB -> 8; nothing below 1 channel, nothing above 16. */
static void channel_count(void **state)
{
    (void)state;
    rt_topology t = channel_topo(2);
    assert_int_equal(rt_coll_channels(&t, RT_ALGO_RING, RT_PROTO_LL, 16, 32768), 1);
    assert_int_equal(rt_coll_channels(&t, RT_ALGO_RING, RT_PROTO_LL, 16, 262144), 4);
    assert_int_equal(rt_coll_channels(&t, RT_ALGO_RING, RT_PROTO_LL, 16, 15 * 65536.0), 15);
    assert_int_equal(rt_coll_channels(&t, RT_ALGO_RING, RT_PROTO_LL, 16, 15 * 65536.0 - 1), 14);
    assert_int_equal(rt_coll_channels(&t, RT_ALGO_RING, RT_PROTO_LL, 16, MiB), 16);
    assert_int_equal(rt_coll_channels(&t, RT_ALGO_TREE, RT_PROTO_LL, 16, 32768), 8);
    assert_int_equal(rt_coll_channels(&t, RT_ALGO_TREE, RT_PROTO_LL128, 16, 32768), 6);
    assert_int_equal(rt_coll_channels(&t, RT_ALGO_RING, RT_PROTO_SIMPLE, 16, 262144), 8);
    assert_int_equal(rt_coll_channels(&t, RT_ALGO_RING, RT_PROTO_SIMPLE, 16, 8), 1);
    assert_int_equal(rt_coll_channels(&t, RT_ALGO_RING, RT_PROTO_SIMPLE, 16, GiB), 16);
    /* Without `channels:` there is no count and no ramp. */
    rt_topology none = proto_topo(2);
    assert_int_equal(rt_coll_channels(&none, RT_ALGO_RING, RT_PROTO_LL, 16, 32768), 0);
}

/* The bandwidth term on nc of 16 channels is the full one x 16 / nc, after the protocol
 * choice. Ring AllGather over 2 nodes at 64 KiB (LL, latency 22 us, protocol_selection):
 * c = S/16 = 4096 B; per step max(7/8 c / 360e9, c/8 / 45e9) = 4096 / 360e9 s; 15 steps,
 * LL's 0.5: x = 15 x 4096 / 360e9 / 0.5 = 341.33 ns; LL at 64 KiB over 16 ranks runs on
 * 65536 / 65536 = 1 channel: 16 x = 5.461 us. At 512 KiB: 8 channels, 2 x the full term.
 * Tree AllReduce over 4 nodes at 1 MiB (LL, 32 ranks: 4096 B per channel -> all 16): no
 * change. */
static void channel_ramp_time(void **state)
{
    (void)state;
    rt_topology two = proto_topo(2), ch = channel_topo(2);
    double x = 15 * 4096 / 360e9 / 0.5;
    rt_coll_time full =
        call_time(&two, RT_COLL_ALLGATHER, RT_ALGO_RING, (rt_group){16, 1}, 65536, NULL, NULL);
    rt_coll_time o =
        call_time(&ch, RT_COLL_ALLGATHER, RT_ALGO_RING, (rt_group){16, 1}, 65536, NULL, NULL);
    assert_int_equal(full.channels, 0);
    assert_close(full.transfer_s, x);
    assert_int_equal(o.proto, RT_PROTO_LL);
    assert_int_equal(o.channels, 1);
    assert_close(o.latency_s, 22e-6);
    assert_close(o.transfer_s, 16 * x);
    assert_close(o.wire, 16 / 0.5);
    assert_close(o.total_s, 22e-6 + 16 * x);
    rt_coll_time big =
        call_time(&ch, RT_COLL_ALLGATHER, RT_ALGO_RING, (rt_group){16, 1}, 8 * 65536, NULL, NULL);
    rt_coll_time bigfull =
        call_time(&two, RT_COLL_ALLGATHER, RT_ALGO_RING, (rt_group){16, 1}, 8 * 65536, NULL, NULL);
    assert_int_equal(big.proto, bigfull.proto);
    assert_int_equal(big.channels, big.proto == RT_PROTO_LL ? 8 : 16);
    assert_close(big.transfer_s, bigfull.transfer_s * 16 / big.channels);
    rt_topology four = proto_topo(4), four_ch = channel_topo(4);
    rt_coll_time tr =
        call_time(&four_ch, RT_COLL_ALLREDUCE, RT_ALGO_TREE, (rt_group){32, 1}, MiB, NULL, NULL);
    assert_int_equal(tr.channels, 16);
    assert_close(tr.total_s, call_time(&four, RT_COLL_ALLREDUCE, RT_ALGO_TREE, (rt_group){32, 1},
                                       MiB, NULL, NULL)
                                 .total_s);
    /* NVLS runs on its own channels whatever the size: no ramp. */
    rt_topology one = proto_topo(1), one_ch = channel_topo(1);
    rt_coll_time nv =
        call_time(&one_ch, RT_COLL_ALLREDUCE, RT_ALGO_NVLS, (rt_group){8, 1}, 65536, NULL, NULL);
    assert_int_equal(nv.channels, 0);
    assert_close(nv.total_s, call_time(&one, RT_COLL_ALLREDUCE, RT_ALGO_NVLS, (rt_group){8, 1},
                                       65536, NULL, NULL)
                                 .total_s);
}

/* NCCL's tree figures: tree_bandwidth replaces a protocol's factor for trees, and
 * tree_correction[i] scales a tree AllReduce of S in [64 x 2^i, 64 x 2^(i+1)) B. */
static void tree_factors(void **state)
{
    (void)state;
    rt_proto_spec s = {.enabled = 1, .bandwidth = 0.5, .tree_bandwidth = 0.25};
    for (int i = 0; i < 15; i++)
        s.tree_correction[i] = 1.0 - i / 100.0;
    s.n_tree_correction = 15;
    assert_close(rt_coll_proto_bandwidth(&s, RT_ALGO_RING, RT_COLL_ALLREDUCE, MiB), 0.5);
    assert_close(rt_coll_proto_bandwidth(&s, RT_ALGO_TREE, RT_COLL_ALLREDUCE, 63), 0.25);
    assert_close(rt_coll_proto_bandwidth(&s, RT_ALGO_TREE, RT_COLL_ALLREDUCE, 64), 0.25);
    assert_close(rt_coll_proto_bandwidth(&s, RT_ALGO_TREE, RT_COLL_ALLREDUCE, 127), 0.25);
    assert_close(rt_coll_proto_bandwidth(&s, RT_ALGO_TREE, RT_COLL_ALLREDUCE, 128), 0.25 * 0.99);
    /* 1 MiB = 64 x 2^14: the last entry; 2 MiB is past the table. */
    assert_close(rt_coll_proto_bandwidth(&s, RT_ALGO_TREE, RT_COLL_ALLREDUCE, MiB), 0.25 * 0.86);
    assert_close(rt_coll_proto_bandwidth(&s, RT_ALGO_TREE, RT_COLL_ALLREDUCE, 2 * MiB - 1),
                 0.25 * 0.86);
    assert_close(rt_coll_proto_bandwidth(&s, RT_ALGO_TREE, RT_COLL_ALLREDUCE, 2 * MiB), 0.25);
    s.tree_bandwidth = 0;
    assert_close(rt_coll_proto_bandwidth(&s, RT_ALGO_TREE, RT_COLL_ALLREDUCE, 2 * MiB), 0.5);

    /* Tree AllReduce over 4 nodes at 1 MiB (protocol_selection: LL, 36 us + term / 0.5 with
     * term = 2 S / (8 x 45e9) = 5.825 us, 47.65 us). With tree factors LL 0.25, LL128 0.8,
     * Simple 0.9 and a correction of 0.5 at 1 MiB for LL and LL128:
     *   LL     36 us + term / 0.125 = 82.6 us
     *   LL128  12 + 2 (7 x 2 + 2 x 6) = 64 us + term / 0.4 = 78.56 us   <- fastest
     *   Simple 22 + 2 (7 x 4 + 2 x 12) = 126 us + term / 0.9 */
    rt_topology t = proto_topo(4);
    double term = 2 * MiB / (8 * 45e9);
    const double tb[] = {0.25, 0.8, 0.9};
    for (int p = 0; p < RT_PROTO_COUNT; p++) {
        t.coll.proto[p].tree_bandwidth = tb[p];
        if (p == RT_PROTO_SIMPLE) continue;
        for (int i = 0; i < 15; i++)
            t.coll.proto[p].tree_correction[i] = i == 14 ? 0.5 : 1.0;
        t.coll.proto[p].n_tree_correction = 15;
    }
    rt_coll_time o =
        call_time(&t, RT_COLL_ALLREDUCE, RT_ALGO_TREE, (rt_group){32, 1}, MiB, NULL, NULL);
    assert_int_equal(o.proto, RT_PROTO_LL128);
    assert_close(o.latency_s, 64e-6);
    assert_close(o.transfer_s, term / 0.4);
    assert_close(o.wire, 1 / 0.4);
    /* The ring keeps its protocol factors. */
    rt_topology plain = proto_topo(4);
    assert_close(
        call_time(&t, RT_COLL_ALLREDUCE, RT_ALGO_RING, (rt_group){32, 1}, MiB, NULL, NULL).total_s,
        call_time(&plain, RT_COLL_ALLREDUCE, RT_ALGO_RING, (rt_group){32, 1}, MiB, NULL, NULL)
            .total_s);
}

static uint64_t *uniform(int n, uint64_t per_peer);

/* AlltoAll over 16 ranks on 2 nodes: from rank 0, 7 peers in the node (Simple NVLink hop 4 us)
 * and 8 outside (network hop 10 us), over 4 p2p channels: (7 x 4 + 8 x 10) / 4 = 27 us, plus
 * Simple's base 20 us. A peer it exchanges nothing with costs nothing. */
static void alltoall_per_peer_term(void **state)
{
    (void)state;
    rt_topology t = proto_topo(2);
    uint64_t *a = uniform(16, 1024);
    rt_coll_time o =
        call_time(&t, RT_COLL_ALLTOALLV, RT_ALGO_DIRECT, (rt_group){16, 1}, 16 * 1024, a, a);
    assert_int_equal(o.proto, RT_PROTO_SIMPLE);
    assert_close(o.latency_s, 47e-6);
    /* tiny per-peer messages: the latency dominates the bandwidth term */
    assert_true(o.latency_s > 100 * o.transfer_s);
    for (int k = 0; k < 16; k++)
        a[k] = k == 3 || k == 12 ? 1024 : 0; /* one peer in the node, one outside */
    o = call_time(&t, RT_COLL_ALLTOALLV, RT_ALGO_DIRECT, (rt_group){16, 1}, 2048, a, a);
    assert_close(o.latency_s, 20e-6 + (4e-6 + 10e-6) / 4);
    free(a);
    /* Growing the group at a fixed per-rank total shrinks the per-peer messages and grows the
     * per-peer term: the falloff real NCCL AlltoAlls show at scale. */
    rt_topology big = proto_topo(64);
    double t16 =
        call_time(&t, RT_COLL_ALLTOALLV, RT_ALGO_DIRECT, (rt_group){16, 1}, MiB, NULL, NULL)
            .total_s;
    double t512 =
        call_time(&big, RT_COLL_ALLTOALLV, RT_ALGO_DIRECT, (rt_group){512, 1}, MiB, NULL, NULL)
            .total_s;
    assert_close(t512 - t16, (7 * 4e-6 + 504 * 10e-6) / 4 - 27e-6 +
                                 (MiB / 512 * 504 / 45e9 - MiB / 16 * 8 / 45e9));
}

static uint64_t *uniform(int n, uint64_t per_peer)
{
    uint64_t *a = malloc(sizeof(uint64_t) * (size_t)n);
    assert_non_null(a);
    for (int i = 0; i < n; i++)
        a[i] = per_peer;
    return a;
}

static void alltoallv_intra_vs_inter(void **state)
{
    (void)state;
    double p = MiB;
    uint64_t *a = uniform(16, (uint64_t)p);
    rt_topology one = topo(1), two = topo(2);
    /* One node: 7 peers over NVLink, one hop. */
    double intra = 7 * p / 360e9 + 1e-6 + 5e-6;
    assert_close(model(&one, RT_COLL_ALLTOALLV, RT_ALGO_DIRECT, (rt_group){8, 1}, 8 * p, a, a),
                 intra);
    /* Two nodes: 7 peers on NVLink and 8 on the NIC run concurrently; the NIC dominates. */
    double inter = fmax(7 * p / 360e9, 8 * p / 45e9) + 3e-6 + 5e-6;
    assert_close(model(&two, RT_COLL_ALLTOALLV, RT_ALGO_DIRECT, (rt_group){16, 1}, 16 * p, a, a),
                 inter);
    /* Without arrays the call is nccl-tests' alltoall: S/n per peer, the same time. */
    assert_close(
        model(&two, RT_COLL_ALLTOALLV, RT_ALGO_DIRECT, (rt_group){16, 1}, 16 * p, NULL, NULL),
        inter);
    free(a);
}

static void alltoall_oversubscription(void **state)
{
    (void)state;
    double p = MiB;
    uint64_t *a = uniform(32, (uint64_t)p);
    rt_topology t = topo(4);
    t.net.radix = 4; /* 2 nodes per rail switch: nodes 2, 3 are under another leaf */
    /* Rank 0: 7 NVLink peers, 8 peers under its leaf, 16 beyond: latency 2 us + 3 switches. */
    double lat = 2e-6 + 3e-6 + 5e-6;
    double flat = fmax(7 * p / 360e9, 24 * p / 45e9) + lat;
    assert_close(model(&t, RT_COLL_ALLTOALLV, RT_ALGO_DIRECT, (rt_group){32, 1}, 32 * p, a, a),
                 flat);
    t.net.oversubscription = 2.0;
    /* The 16 cross-leaf blocks share uplinks of half the capacity: 32 p / 45e9 > 24 p / 45e9. */
    double over = 16 * p * 2 / 45e9 + lat;
    double got = model(&t, RT_COLL_ALLTOALLV, RT_ALGO_DIRECT, (rt_group){32, 1}, 32 * p, a, a);
    assert_close(got, over);
    assert_true(got > flat);
    /* Three nodes: node 2 is alone under the second leaf, so all 16 of its inter-node blocks
     * cross the uplinks (32 p / 45e9) while rank 0 sends only 8 of its 16 across. */
    t.nodes = 3;
    rt_coll_time o0, o16;
    const char *why;
    rt_coll_call c0 = {RT_COLL_ALLTOALLV, RT_ALGO_DIRECT, {24, 1}, 0, 24 * p, a, a};
    rt_coll_call c16 = c0;
    c16.rank = 16;
    assert_int_equal(rt_coll_model_time(&t, &c0, &o0, &why), 0);
    assert_int_equal(rt_coll_model_time(&t, &c16, &o16, &why), 0);
    assert_close(o0.transfer_s, 16 * p / 45e9);
    assert_close(o16.transfer_s, 32 * p / 45e9);
    free(a);
}

static void shapes(void **state)
{
    (void)state;
    rt_topology t = topo(4);
    rt_coll_shape sh;
    rt_coll_shape_of(&t, (rt_group){4, 8}, 13, &sh); /* rail 5 of 4 nodes */
    assert_int_equal(sh.size, 4);
    assert_int_equal(sh.nodes, 4);
    assert_int_equal(sh.local, 1);
    assert_int_equal(sh.leaves, 1);
    rt_coll_shape_of(&t, (rt_group){12, 1}, 0, &sh); /* 8 on node 0, 4 on node 1 */
    assert_int_equal(sh.nodes, 2);
    assert_int_equal(sh.local, 4);
    t.net.radix = 2; /* one node per leaf */
    rt_coll_shape_of(&t, (rt_group){32, 1}, 0, &sh);
    assert_int_equal(sh.leaves, 4);
    assert_close(sh.leaf_cross, 1.0);
    t.net.rail_optimized = 0;
    t.net.radix = 64; /* 32 down ports / 8 NICs per node = 4 nodes per leaf */
    assert_int_equal(rt_topology_nodes_per_leaf(&t), 4);
}

static rt_coll_algo choose(const rt_topology *t, rt_coll_kind kind, rt_coll_algo forced, rt_group g,
                           double bytes)
{
    rt_coll_policy p;
    rt_coll_policy_default(&p);
    rt_coll_shape sh;
    rt_coll_shape_of(t, g, 0, &sh);
    return rt_coll_policy_choose(&p, t, kind, forced, &sh, bytes);
}

static void policy(void **state)
{
    (void)state;
    rt_topology one = topo(1), four = topo(4);
    rt_group node = {8, 1}, world = {32, 1}, rail = {4, 8};
    assert_int_equal(choose(&one, RT_COLL_ALLREDUCE, RT_ALGO_AUTO, node, GiB), RT_ALGO_NVLS);
    assert_int_equal(choose(&one, RT_COLL_ALLREDUCE, RT_ALGO_AUTO, node, 1024), RT_ALGO_RING);
    one.node.nvls = 0;
    assert_int_equal(choose(&one, RT_COLL_ALLREDUCE, RT_ALGO_AUTO, node, GiB), RT_ALGO_RING);
    assert_int_equal(choose(&four, RT_COLL_ALLREDUCE, RT_ALGO_AUTO, world, MiB), RT_ALGO_TREE);
    assert_int_equal(choose(&four, RT_COLL_ALLREDUCE, RT_ALGO_AUTO, world, GiB),
                     RT_ALGO_HIERARCHICAL);
    assert_int_equal(choose(&four, RT_COLL_ALLREDUCE, RT_ALGO_AUTO, rail, GiB), RT_ALGO_RING);
    assert_int_equal(choose(&four, RT_COLL_ALLTOALLV, RT_ALGO_AUTO, world, GiB), RT_ALGO_DIRECT);
    assert_int_equal(choose(&four, RT_COLL_ALLGATHER, RT_ALGO_AUTO, world, GiB), RT_ALGO_RING);
    assert_int_equal(choose(&four, RT_COLL_ALLREDUCE, RT_ALGO_RING, world, GiB), RT_ALGO_RING);
}

static void unsupported(void **state)
{
    (void)state;
    rt_topology t = topo(2);
    rt_coll_time out;
    const char *why = NULL;
    rt_coll_call c = {RT_COLL_ALLGATHER, RT_ALGO_TREE, {16, 1}, 0, MiB, NULL, NULL};
    assert_int_equal(rt_coll_model_time(&t, &c, &out, &why), -1);
    assert_non_null(why);
    c = (rt_coll_call){RT_COLL_ALLREDUCE, RT_ALGO_NVLS, {16, 1}, 0, MiB, NULL, NULL};
    assert_int_equal(rt_coll_model_time(&t, &c, &out, &why), -1);
    c = (rt_coll_call){RT_COLL_ALLTOALLV, RT_ALGO_RING, {16, 1}, 0, MiB, NULL, NULL};
    assert_int_equal(rt_coll_model_time(&t, &c, &out, &why), -1);
    t.coll.eff_inter = 0; /* a zero bandwidth is reported, not turned into infinity */
    c = (rt_coll_call){RT_COLL_ALLREDUCE, RT_ALGO_RING, {16, 1}, 0, MiB, NULL, NULL};
    assert_int_equal(rt_coll_model_time(&t, &c, &out, &why), -1);
}

static void busbw_factors(void **state)
{
    (void)state;
    assert_close(rt_coll_busbw_factor(RT_COLL_ALLREDUCE, RT_ALGO_AUTO, 8), 1.75);
    assert_close(rt_coll_busbw_factor(RT_COLL_ALLGATHER, RT_ALGO_AUTO, 8), 0.875);
    assert_close(rt_coll_busbw_factor(RT_COLL_REDUCE_SCATTER, RT_ALGO_AUTO, 4), 0.75);
    assert_close(rt_coll_busbw_factor(RT_COLL_ALLTOALLV, RT_ALGO_AUTO, 16), 15.0 / 16);
}

/* The algorithm table: one entry per algorithm name but auto, each found by its id, each with
 * every function; NVLS reports AllReduce busbw as nccl-tests does (2(n-1)/n), like the ring. */
static void algorithm_table(void **state)
{
    (void)state;
    int entries = 0;
    for (int i = 0; rt_coll_algos[i]; i++, entries++) {
        const rt_coll_algo_def *a = rt_coll_algos[i];
        assert_ptr_equal(rt_coll_algo_get(a->id), a);
        assert_true(a->check && a->time && a->traffic && a->busbw_factor);
    }
    assert_int_equal(entries, RT_ALGO_COUNT - 1);
    assert_null(rt_coll_algo_get(RT_ALGO_AUTO));
    assert_close(rt_coll_busbw_factor(RT_COLL_ALLREDUCE, RT_ALGO_NVLS, 8), 1.75);
    assert_close(rt_coll_busbw_factor(RT_COLL_SENDRECV, RT_ALGO_DIRECT, 8), 1.0);
}

/* Runs the real rectwin binary with ARGS; returns its exit status. */
static int cli(const char *args)
{
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "%s/cli/rectwin collective %s >/dev/null 2>&1", RT_BINARY_DIR, args);
    int st = system(cmd);
    assert_true(WIFEXITED(st));
    return WEXITSTATUS(st);
}

static void cli_exit_codes(void **state)
{
    (void)state;
    if (access(RT_BINARY_DIR "/cli/rectwin", X_OK) != 0) skip();
    const char *t = "--topology " RT_SOURCE_DIR "/topologies/dgx-h100.yaml --nodes 2 ";
    char a[512];
#define RUN(extra) (snprintf(a, sizeof a, "%s%s", t, extra), cli(a))
    assert_int_equal(RUN("--op allreduce --bytes 1GiB --json"), 0);
    assert_int_equal(RUN("--op=alltoall --bytes=64MiB --algo direct"), 0);
    assert_int_equal(cli("--help"), 0);
    assert_int_equal(RUN("--op broadcast --bytes 1GiB"), 2);
    assert_int_equal(RUN("--op allreduce --bytes 1GiBs"), 2);
    assert_int_equal(RUN("--op allreduce --bytes 1GiB --algo fast"), 2);
    assert_int_equal(RUN("--op allreduce --bytes 1GiB --engine nope"), 2);
    assert_int_equal(RUN("--op allreduce --bytes 1GiB --frobnicate 1"), 2);
    assert_int_equal(RUN("--op allreduce"), 2); /* --bytes missing */
    assert_int_equal(cli("--nodes 0 --op allreduce --bytes 1"), 2);
    /* A valid option but an impossible combination: an error from the model, status 1. */
    assert_int_equal(RUN("--op allgather --bytes 1MiB --algo tree"), 1);
#undef RUN
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(ring_allreduce_one_node),
        cmocka_unit_test(ring_allgather_two_nodes),
        cmocka_unit_test(tree_and_hierarchical),
        cmocka_unit_test(nvls_allreduce),
        cmocka_unit_test(nvls_figures),
        cmocka_unit_test(alltoallv_intra_vs_inter),
        cmocka_unit_test(protocol_selection),
        cmocka_unit_test(channel_count),
        cmocka_unit_test(channel_ramp_time),
        cmocka_unit_test(tree_factors),
        cmocka_unit_test(alltoall_per_peer_term),
        cmocka_unit_test(alltoall_oversubscription),
        cmocka_unit_test(shapes),
        cmocka_unit_test(policy),
        cmocka_unit_test(unsupported),
        cmocka_unit_test(busbw_factors),
        cmocka_unit_test(algorithm_table),
        cmocka_unit_test(cli_exit_codes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
