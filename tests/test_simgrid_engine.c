/* SimGrid engine: the generated platform (counts and routes written out by hand), agreement
 * with the analytic engine on uncongested cases, the slowdown of an oversubscribed fabric
 * against hand-computed bottlenecks, and flow aggregation against one flow per pair.
 * Kept small: every simulation runs in a child process, also under ASan. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "engines.h"
#include "sim_fixture.h"
#include "simgrid.h"
#include "simgrid_platform.h"

#define MiB (1024.0 * 1024.0)

extern const rt_engine rt_engine_simgrid;
extern const rt_engine rt_engine_analytic;

static void assert_rel(double got, double want, double tol)
{
    if (!(fabs(got - want) <= tol * fabs(want))) {
        print_error("got %.9g, want %.9g (tolerance %.3g)\n", got, want, tol);
        fail();
    }
}

/* NODES nodes of DEVICES devices: NVLink 100e9 B/s per direction, one 25e9 B/s NIC per
 * device on its rail, RADIX-port leaves (radix/2 nodes per rail leaf), efficiencies 1,
 * sub-microsecond latencies so that bandwidth terms dominate. */
static void fill_topology(rt_topology *t, int nodes, int devices, int radix, double oversub)
{
    memset(t, 0, sizeof *t);
    t->name = "test";
    t->device.peak_flops[RT_DT_FP32] = 1e12;
    t->device.hbm_bw = 1e12;
    t->device.eff_flops = 1;
    t->device.eff_hbm = 1;
    t->device.launch_overhead = 1e-6;
    t->node.devices = devices;
    t->node.scale_up = RT_SCALEUP_NVSWITCH;
    t->node.scale_up_bw = 100e9;
    t->node.scale_up_latency = 1e-7;
    t->node.nvls = 1;
    t->node.host_bw = 50e9;
    t->node.host_latency = 1e-6;
    t->net.nics_per_node = devices;
    t->net.nic_bw = 25e9;
    t->net.nic_latency = 2e-7;
    t->net.rail_optimized = 1;
    t->net.levels = 1;
    t->net.radix = radix;
    t->net.oversubscription = oversub;
    t->net.switch_latency = 1e-7;
    t->coll.eff_intra = 1;
    t->coll.eff_inter = 1;
    t->coll.base_latency = 1e-6;
    t->nodes = nodes;
}

/* One collective over the whole world, every rank a representative; alltoall: S/n to every
 * member (nccl-tests' alltoall of size S). */
static rt_graph *one_collective(int world, rt_coll_kind kind, rt_coll_algo algo, double S)
{
    int *reps = malloc(sizeof(int) * (size_t)world);
    double *w = malloc(sizeof(double) * (size_t)world);
    assert_non_null(reps);
    assert_non_null(w);
    for (int r = 0; r < world; r++)
        reps[r] = r, w[r] = 1;
    rt_graph *g = rt_graph_new(world, world, reps, w);
    free(reps);
    free(w);
    assert_non_null(g);
    rt_group all = {world, 1};
    int op =
        rt_graph_add_collective(g, "collective", RT_STREAM_COMM, kind, algo, all, "c", NULL, 0);
    for (int r = 0; r < world; r++) {
        rt_op_cost *c = rt_graph_cost(g, op, r);
        c->bytes = S;
        if (kind != RT_COLL_ALLTOALLV) continue;
        c->send = rt_graph_peer_bytes(g, world);
        c->recv = rt_graph_peer_bytes(g, world);
        for (int k = 0; k < world; k++)
            c->send[k] = c->recv[k] = (uint64_t)(S / world);
        c->recv_bytes = c->bytes;
    }
    return g;
}

/* Duration of op 0 on rank 0 with ENGINE, or with the simgrid engine under SG when given. */
static double run_with(const rt_engine *engine, const rt_simgrid_settings *sg, const rt_topology *t,
                       const rt_graph *g)
{
    rt_scenario s;
    memset(&s, 0, sizeof s);
    s.name = "test";
    s.topology = *t;
    rt_result *r = rt_result_new(g, sg ? "simgrid" : engine->name);
    assert_non_null(r);
    assert_int_equal(sg ? rt_simgrid_run(&s, g, sg, r, stderr) : engine->run(&s, g, r, stderr), 0);
    double d = r->end[0] - r->start[0];
    rt_result_free(r);
    return d;
}

static double run_time(const rt_engine *engine, const rt_topology *t, const rt_graph *g)
{
    return run_with(engine, NULL, t, g);
}

static double both(const rt_topology *t, rt_coll_kind kind, rt_coll_algo algo, double S,
                   double *analytic)
{
    rt_graph *g = one_collective(rt_topology_ranks(t), kind, algo, S);
    *analytic = run_time(&rt_engine_analytic, t, g);
    double sg = run_time(&rt_engine_simgrid, t, g);
    rt_graph_free(g);
    return sg;
}

static void link_is(const rt_platform *p, int directed, const char *name, rt_link_dir dir)
{
    char buf[64];
    rt_platform_link_name(p, directed / 2, buf, sizeof buf);
    assert_string_equal(buf, name);
    assert_int_equal(directed % 2, dir);
}

/* 4 nodes x 4 devices, radix 4: 2 nodes per rail leaf, 2 leaves on each of 4 planes.
 * Hosts: 16 gpu + 4 nvs + 4 cpu + 4 x 2 leaf = 32. Duplex links: 16 nvlink + 16 nic +
 * 8 uplink + 16 pcie = 56. */
static void test_platform_counts_and_routes(void **state)
{
    (void)state;
    rt_topology t;
    fill_topology(&t, 4, 4, 4, 1);
    const char *why = NULL;
    rt_platform *p = rt_platform_new(&t, 4, &why);
    assert_non_null(p);
    assert_int_equal(p->n_hosts, 32);
    assert_int_equal(p->n_links, 56);
    assert_int_equal(p->planes, 4);
    assert_int_equal(p->leaves, 2);
    assert_rel(p->bw[0], 100e9, 1e-12);     /* nvlink-0 */
    assert_rel(p->bw[16], 25e9, 1e-12);     /* nic-0-0 */
    assert_rel(p->bw[32], 2 * 25e9, 1e-12); /* uplink-0-0: 2 ports down */

    /* gpu-1 (node 0) -> gpu-6 (node 1, local 2), same leaf: PXN over gpu-2, rail 2. */
    int segs[RT_PLATFORM_MAX_PATH], links[2], hs, hd;
    assert_int_equal(rt_platform_path(p, 1, 6, segs), 4);
    int want[4][2] = {{1, 0}, {2, 1}, {16 + 0 * 4 + 2, 0}, {16 + 1 * 4 + 2, 1}};
    const char *names[4] = {"nvlink-1", "nvlink-2", "nic-0-2", "nic-1-2"};
    for (int i = 0; i < 4; i++) {
        assert_int_equal(rt_platform_segment(p, segs[i], &hs, &hd, links), 1);
        link_is(p, links[0], names[i], (rt_link_dir)want[i][1]);
        assert_int_equal(links[0] / 2, want[i][0]);
    }
    /* gpu-0 -> gpu-12 (node 3, leaf 1), same local index: no NVLink; crosses leaves. */
    assert_int_equal(rt_platform_path(p, 0, 12, segs), 3);
    assert_int_equal(rt_platform_segment(p, segs[1], &hs, &hd, links), 2);
    link_is(p, links[0], "uplink-0-0", RT_DIR_UP);
    link_is(p, links[1], "uplink-0-1", RT_DIR_DOWN);
    assert_int_equal(hs, rt_platform_leaf(p, 0, 0));
    assert_int_equal(hd, rt_platform_leaf(p, 0, 1));
    /* Inside a node: the two NVLink ports only. */
    assert_int_equal(rt_platform_path(p, 4, 7, segs), 2);

    /* Routes written: 32 nvlink + 32 nic + 4 planes x 2 leaf pairs + 32 pcie = 104 segment
     * routes, plus 16 x 15 device pairs. */
    char *buf = rt_fx_platform_xml(p, &t, 1);
    int routes = 0, splitduplex = 0;
    for (char *c = buf; (c = strstr(c, "<route ")); c++)
        routes++;
    for (char *c = buf; (c = strstr(c, "SPLITDUPLEX")); c++)
        splitduplex++;
    assert_int_equal(routes, 104 + 16 * 15);
    assert_int_equal(splitduplex, 56);
    free(buf);
    rt_platform_free(p);
}

/* One node of 8: alltoall of S moves 7/8 S per NVLink direction: 7/8 x 64 MiB / 100e9 =
 * 587.2 us; allreduce ring 2 x 7/8 S, NVLS S per direction. */
static void test_single_node_agrees(void **state)
{
    (void)state;
    rt_topology t;
    fill_topology(&t, 1, 8, 64, 1);
    double S = 64 * MiB, an;
    double sg = both(&t, RT_COLL_ALLTOALLV, RT_ALGO_AUTO, S, &an);
    assert_rel(sg, an, 0.05);
    assert_rel(sg, 7.0 / 8 * S / 100e9, 0.02);
    sg = both(&t, RT_COLL_ALLREDUCE, RT_ALGO_RING, S, &an);
    assert_rel(sg, an, 0.05);
    assert_rel(sg, 2 * 7.0 / 8 * S / 100e9, 0.02);
    sg = both(&t, RT_COLL_ALLREDUCE, RT_ALGO_AUTO, S, &an); /* NVLS */
    assert_rel(sg, an, 0.05);
    assert_rel(sg, S / 100e9, 0.02);
    sg = both(&t, RT_COLL_ALLGATHER, RT_ALGO_RING, S, &an);
    assert_rel(sg, an, 0.05);
}

/* 4 nodes x 8 on a non-blocking fat-tree of 2 leaves per rail. AlltoAll of S: a NIC carries
 * its node's bytes to the 3 other nodes' devices on its rail, 8 x 3 x S/32 = 0.75 S:
 * 0.75 x 256 MiB / 25e9 = 8.05 ms. The uplink (2 x 25e9) carries 2 nodes x 0.5 S: less. */
static void test_fat_tree_agrees(void **state)
{
    (void)state;
    rt_topology t;
    fill_topology(&t, 4, 8, 4, 1);
    double S = 256 * MiB, an;
    double sg = both(&t, RT_COLL_ALLTOALLV, RT_ALGO_AUTO, S, &an);
    assert_rel(sg, an, 0.05);
    assert_rel(sg, 0.75 * S / 25e9, 0.02);
    sg = both(&t, RT_COLL_ALLREDUCE, RT_ALGO_HIERARCHICAL, S, &an);
    assert_rel(sg, an, 0.05);
    sg = both(&t, RT_COLL_ALLREDUCE, RT_ALGO_RING, S, &an);
    assert_rel(sg, an, 0.05);
}

/* The same AlltoAll with 2:1 oversubscription: the uplink (25e9) now carries 2 nodes x 0.5 S
 * = S: 256 MiB / 25e9 = 10.74 ms, 4/3 of the non-blocking time. */
static void test_oversubscribed_alltoall_is_slower(void **state)
{
    (void)state;
    rt_topology t;
    fill_topology(&t, 4, 8, 4, 1);
    double S = 256 * MiB, an;
    double free_flow = both(&t, RT_COLL_ALLTOALLV, RT_ALGO_AUTO, S, &an);
    t.net.oversubscription = 2;
    double congested = both(&t, RT_COLL_ALLTOALLV, RT_ALGO_AUTO, S, &an);
    assert_true(congested > 1.25 * free_flow);
    assert_rel(congested, S / 25e9, 0.02);
}

/* Latency-bound sizes (4 KiB: a few hundred ns of transfer against microseconds of
 * latency): the simulated links carry the topology's latencies (a_net across leaves =
 * nic_latency + 3 x switch_latency on the platform's path as in the analytic model), the
 * engine adds the analytic latency beyond what the round paid, so the engines agree to
 * within a transfer time: a flow's latency overlaps the other flows' transfers in SimGrid,
 * while the alpha-beta sum adds the longest latency to the longest transfer. */
static void test_latency_bound_agrees(void **state)
{
    (void)state;
    rt_topology t;
    fill_topology(&t, 4, 8, 4, 1);
    t.net.switch_latency = 1e-6; /* latency-bound: a_net across leaves 3.2 us */
    double an, sg;
    rt_coll_kind kinds[3] = {RT_COLL_ALLTOALLV, RT_COLL_ALLREDUCE, RT_COLL_ALLREDUCE};
    rt_coll_algo algos[3] = {RT_ALGO_AUTO, RT_ALGO_TREE, RT_ALGO_RING};
    for (int i = 0; i < 3; i++) {
        sg = both(&t, kinds[i], algos[i], 4096, &an);
        assert_true(an > 3e-6);
        assert_true(sg <= an * (1 + 1e-9) && sg > an - 4096.0 / 25e9);
    }
}

/* With NCCL's protocols the wire carries the protocol's framing: LL moves 8 payload bytes per
 * 16-byte store, so a ring AllReduce of 64 MiB on LL alone takes 2 x 7/8 x S / (0.5 x 100e9)
 * on the NVLink ports, in the simulated flows as in the analytic ring. */
static void test_protocol_framing_on_the_wire(void **state)
{
    (void)state;
    rt_topology t;
    fill_topology(&t, 1, 8, 64, 1);
    t.coll.has_protocols = 1;
    t.coll.proto[RT_PROTO_LL] = (rt_proto_spec){.enabled = 1,
                                                .bandwidth = 0.5,
                                                .ring = {5e-6, 1e-6, 2e-6, 3e-6},
                                                .tree = {5e-6, 1e-6, 2e-6, 3e-6}};
    double S = 64 * MiB, an;
    double sg = both(&t, RT_COLL_ALLREDUCE, RT_ALGO_RING, S, &an);
    assert_rel(sg, an, 1e-9);
    assert_rel(sg, 2 * 7.0 / 8 * S / 50e9 + 5e-6 + 14 * 1e-6, 1e-9);
}

/* NCCL's channel tuning in the flows: with 16 channels and LL's 512 threads x 8 bytes x 8
 * ranks = 32768 B per channel, a ring AllReduce of 512 KiB or more runs on all 16 and a
 * 128 KiB one on 4: its flows carry 16 / 4 = 4 x the framed bytes, as the analytic term has
 * it: 4 x 2 x 7/8 x S / (0.5 x 100e9) + 5 us + 14 x 1 us. */
static void test_channel_ramp_on_the_wire(void **state)
{
    (void)state;
    rt_topology t;
    fill_topology(&t, 1, 8, 64, 1);
    t.coll.has_protocols = 1;
    t.coll.proto[RT_PROTO_LL] = (rt_proto_spec){.enabled = 1,
                                                .bandwidth = 0.5,
                                                .ring = {5e-6, 1e-6, 2e-6, 3e-6},
                                                .tree = {5e-6, 1e-6, 2e-6, 3e-6},
                                                .threads = 512,
                                                .thread_threshold = 8};
    t.coll.channels = 16;
    double S = 128 * 1024, an;
    double sg = both(&t, RT_COLL_ALLREDUCE, RT_ALGO_RING, S, &an);
    assert_rel(sg, an, 1e-9);
    assert_rel(sg, 4 * 2 * 7.0 / 8 * S / 50e9 + 5e-6 + 14 * 1e-6, 1e-9);
}

/* NCCL's NVLS figures in the flows: NVLS AllReduce of 64 MiB on one node runs at
 * 100e9 x 0.85 x 15/16 per NVLink direction in both engines, plus its 25 us and (no
 * protocols) base_latency's 1 us. */
static void test_nvls_figures_on_the_wire(void **state)
{
    (void)state;
    rt_topology t;
    fill_topology(&t, 1, 8, 64, 1);
    t.coll.has_nvls = 1;
    t.coll.nvls_efficiency = 0.85;
    t.coll.nvls_channels = 16;
    t.coll.nvls_latency = 25e-6;
    double S = 64 * MiB, an;
    double sg = both(&t, RT_COLL_ALLREDUCE, RT_ALGO_NVLS, S, &an);
    assert_rel(an, S / (100e9 * 0.85 * 15 / 16) + 26e-6, 1e-9);
    assert_rel(sg, an, 1e-9);
}

/* Aggregated flows (one per link direction and leaf pair) against one flow per device pair,
 * on the congested case where sharing matters most. */
static void test_aggregation_matches_pairs(void **state)
{
    (void)state;
    rt_topology t;
    fill_topology(&t, 4, 8, 4, 2);
    rt_graph *g = one_collective(32, RT_COLL_ALLTOALLV, RT_ALGO_AUTO, 64 * MiB);
    rt_simgrid_settings sg;
    rt_simgrid_settings_default(&sg);
    sg.flows = RT_SG_FLOWS_PAIRS;
    double pairs = run_with(NULL, &sg, &t, g);
    sg.flows = RT_SG_FLOWS_LINKS;
    double links = run_with(NULL, &sg, &t, g);
    assert_rel(links, pairs, 0.02);
    rt_graph_free(g);
}

/* User errors come back as -1 with a message, never a crash. */
static void test_bad_inputs(void **state)
{
    (void)state;
    rt_topology t;
    fill_topology(&t, 2, 4, 4, 1);
    rt_graph *g = one_collective(4, RT_COLL_ALLREDUCE, RT_ALGO_AUTO, MiB); /* world 4 != 8 */
    rt_scenario s;
    memset(&s, 0, sizeof s);
    s.topology = t;
    rt_result *r = rt_result_new(g, "simgrid");
    char *msg = NULL;
    size_t len = 0;
    FILE *err = open_memstream(&msg, &len);
    assert_int_equal(rt_engine_simgrid.run(&s, g, r, err), -1);
    fclose(err);
    assert_non_null(strstr(msg, "world size"));
    free(msg);
    rt_result_free(r);
    rt_graph_free(g);

    const char *why = NULL;
    t.net.nics_per_node = 8; /* more NICs than devices */
    assert_null(rt_platform_new(&t, 2, &why));
    assert_non_null(why);
}

/* Bytes rt_platform_write_xml really writes, counted through a temporary file. */
static double written_bytes(const rt_platform *p, const rt_topology *t, int pairs)
{
    FILE *f = tmpfile();
    assert_non_null(f);
    assert_int_equal(rt_platform_write_xml(p, t, pairs, f), 0);
    double n = (double)ftell(f);
    fclose(f);
    return n;
}

/* The size estimate that refuses huge platforms before writing them is within 5 % of what is
 * written, with and without device-pair routes, rail-optimized or not; and 16,384 nodes of
 * 8 devices on 8-port leaves (1 GiB+ of segment routes) are refused at once. */
static void test_platform_size_estimate(void **state)
{
    (void)state;
    const int nodes[] = {1, 2, 16, 64};
    for (int rail = 0; rail < 2; rail++)
        for (size_t i = 0; i < sizeof nodes / sizeof nodes[0]; i++)
            for (int pairs = 0; pairs < 2; pairs++) {
                rt_topology t;
                fill_topology(&t, nodes[i], 8, 16, 1);
                t.net.rail_optimized = rail;
                const char *why = NULL;
                rt_platform *p = rt_platform_new(&t, nodes[i], &why);
                assert_non_null(p);
                assert_rel(rt_platform_xml_bytes(p, pairs), written_bytes(p, &t, pairs), 0.05);
                rt_platform_free(p);
            }
    rt_topology t;
    fill_topology(&t, 16384, 8, 8, 1);
    const char *why = NULL;
    rt_platform *p = rt_platform_new(&t, 16384, &why);
    assert_non_null(p);
    assert_true(rt_platform_xml_bytes(p, 0) > RT_PLATFORM_MAX_XML_BYTES);
    FILE *err = tmpfile();
    assert_int_equal(rt_platform_check_size(p, 0, "/tmp", "test", err), -1);
    fclose(err);
    rt_platform_free(p);
    /* So many leaves that leaves^2 segments would overflow the segment index: refused. */
    fill_topology(&t, 1 << 17, 8, 2, 1);
    t.net.rail_optimized = 0;
    t.net.nics_per_node = 1;
    assert_null(rt_platform_new(&t, 1 << 17, &why));
    assert_non_null(strstr(why, "route segments"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_platform_counts_and_routes),
        cmocka_unit_test(test_single_node_agrees),
        cmocka_unit_test(test_fat_tree_agrees),
        cmocka_unit_test(test_oversubscribed_alltoall_is_slower),
        cmocka_unit_test(test_latency_bound_agrees),
        cmocka_unit_test(test_protocol_framing_on_the_wire),
        cmocka_unit_test(test_channel_ramp_on_the_wire),
        cmocka_unit_test(test_nvls_figures_on_the_wire),
        cmocka_unit_test(test_aggregation_matches_pairs),
        cmocka_unit_test(test_bad_inputs),
        cmocka_unit_test(test_platform_size_estimate),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
