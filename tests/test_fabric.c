/* Fabric families (`scale_out.family`, sim/fabric.h): both engines read one description.
 *
 * Platform (as tests/test_faults.c): nodes of 2 devices, one 25e9 B/s NIC per device on its
 * rail (rail-optimized, PXN), efficiencies 1, NIC latency 0.2 us, switch latency 1 us,
 * base_latency 1 us, radix 4, 4 nodes. fat_tree: a leaf serves radix/2 = 2 nodes, so node 0 and
 * node 2 sit under different leaves: 2 x levels + 1 = 3 switches between their NICs.
 * rail_only: the rail switch serves all radix = 4 nodes: 1 switch. Rank 0 sends X = 1e9 bytes to
 * rank 4 (node 2, same local index: no NVLink hop):
 *   fat_tree   X / 25e9 + 0.2 us + 3 x 1 us + 1 us = 40.0042 ms,
 *   rail_only  X / 25e9 + 0.2 us + 1 x 1 us + 1 us = 40.0022 ms,
 * in both engines (the SimGrid flow pays its route latency, and the engine adds the analytic
 * latency beyond it).
 *
 * torus (its own platform): 8 nodes of 4 devices, 4 NICs of 25e9 B/s, rail_optimized false,
 * dims [4, 2]: node N at (N mod 4, N / 4); a torus link carries 4 x 25e9 / (2 x 2) = 25e9 B/s
 * per direction; diameter 2 + 1 = 3, so the analytic engine charges 1 + 3 = 4 routers:
 *   one flow, rank 0 -> rank 8 (node 2, two hops +x): X / 25e9 + 0.2 us + 4 x 1 us + 1 us,
 *   the same in SimGrid (its route pays 0.2 + 3 x 1 us, the engine tops up to the analytic);
 *   with rank 4 -> rank 12 (node 1 -> node 3, +x over torus-1-0 and torus-2-0) beside it, both
 *   cross torus-1-0 UP: 12.5e9 B/s each, 2 X / 25e9 + 5.2 us in SimGrid, unchanged analytic;
 *   with rank 16 -> rank 24 (node 4 -> node 6, the y = 1 row) instead, no link is shared.
 *
 * dragonfly (its own platform): 6 nodes of 2 devices, 2 NICs of 25e9 B/s, rail_optimized false,
 * 3 groups of 2 routers, 1 node per router (node N on router N mod 2 of group N / 2), every
 * channel 25e9 B/s. global_links 1: each group pair is joined at router 0 only, so node 1 ->
 * node 3 goes local (router 1 -> 0), global, local (0 -> 1): 3 hops, the diameter; the analytic
 * engine charges 4 routers. Rank 0 -> rank 6 (node 0 -> node 3: global-0-1-0, local-1-0-1):
 * X / 25e9 + 0.2 us + 4 x 1 us + 1 us in both engines; with rank 2 -> rank 4 (node 1 -> node 2:
 * local-0-0-1, global-0-1-0) beside it both cross global-0-1-0: 2 X / 25e9 + 5.2 us in SimGrid.
 * global_links 2: router 1 holds its own channel to group 1, the two flows share no link
 * direction (X / 25e9) and the diameter is 2: X / 25e9 + 0.2 us + 3 x 1 us + 1 us. */
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
#include "fabric.h"
#include "sim_fixture.h"
#include "simgrid.h"
#include "simgrid_platform.h"

#define X 1e9

static void fill_topology(rt_topology *t, rt_fabric_family family)
{
    rt_fx_topology(t, "fabric", 4);
    t->net.radix = 4;
    t->net.switch_latency = 1e-6;
    t->net.family = family;
}

/* An AlltoAllv over the 8 ranks where rank 0 alone sends X to rank 4. */
static rt_graph *one_flow(void)
{
    int src = 0, dst = 4;
    return rt_fx_flows(8, &src, &dst, 1, X);
}

static double run(const rt_topology *t, rt_graph *g, const char *engine)
{
    return rt_fx_run(t, g, engine, RT_SG_FLOWS_AUTO);
}

/* One flow, no congestion: each family's hand-computed time, the same in both engines. */
static void engines_agree_per_family(void **state)
{
    (void)state;
    const double want[RT_FAMILY_COUNT] = {
        [RT_FAMILY_FAT_TREE] = X / 25e9 + 0.2e-6 + 3e-6 + 1e-6,
        [RT_FAMILY_RAIL_ONLY] = X / 25e9 + 0.2e-6 + 1e-6 + 1e-6,
    };
    for (int f = 0; f < RT_FAMILY_TORUS; f++) { /* torus, dragonfly: below */
        rt_topology t;
        fill_topology(&t, (rt_fabric_family)f);
        assert_int_equal(rt_topology_check_faults(&t), 0);
        double a = run(&t, one_flow(), "analytic"), s = run(&t, one_flow(), "simgrid");
        rt_fx_assert_rel(a, want[f], 1e-12);
        rt_fx_assert_rel(s, a, 1e-9);
        /* the analytic hop count is the one the platform's latencies add up to */
        const char *why = NULL;
        rt_platform *p = rt_platform_new(&t, 4, &why);
        assert_non_null(p);
        int segs[RT_PLATFORM_MAX_PATH], n = rt_platform_path(p, 0, 4, segs);
        double lat = 0;
        for (int i = 0; i < n; i++)
            lat += rt_platform_segment_latency(p, segs[i]);
        rt_fx_assert_rel(
            lat, 0.2e-6 + rt_fabric_of(&t)->switches(&t, f == RT_FAMILY_FAT_TREE) * 1e-6, 1e-12);
        rt_platform_free(p);
    }
}

/* rail_only writes no spine and no uplink, and the rail switch serves radix nodes: 5 nodes on
 * radix 4 are refused by the platform and by the topology check. */
static void rail_only_layout(void **state)
{
    (void)state;
    rt_topology t;
    fill_topology(&t, RT_FAMILY_RAIL_ONLY);
    const char *why = NULL;
    rt_platform *p = rt_platform_new(&t, 4, &why);
    assert_non_null(p);
    assert_int_equal(p->leaves, 1);
    assert_int_equal(p->n_hosts, 8 + 4 + 4 + 2); /* gpus, nvs, cpus, one switch per rail */
    assert_int_equal(p->n_links, 8 + 8 + 8);     /* nvlink, nic, pcie */
    char *buf = rt_fx_platform_xml(p, &t, 1);
    assert_null(strstr(buf, "uplink"));
    assert_null(strstr(buf, "spine-"));
    assert_non_null(strstr(buf, "family rail_only"));
    assert_non_null(strstr(buf, "<route src=\"gpu-0\" dst=\"gpu-5\""));
    free(buf);
    rt_platform_free(p);
    t.nodes = 5;
    assert_null(rt_platform_new(&t, 5, &why));
    assert_non_null(strstr(why, "rail switch"));
    assert_int_equal(rt_topology_check_faults(&t), -1);
    t.nodes = 4;
    t.net.ecmp = RT_ECMP_HASH; /* no spine port to hash over */
    assert_int_equal(rt_topology_check_faults(&t), -1);
    t.net.ecmp = RT_ECMP_BALANCED;
    assert_int_equal(rt_topology_check_faults(&t), 0);
    t.net.rail_optimized = 0;
    assert_int_equal(rt_topology_check_faults(&t), -1);
}

/* The torus platform of the header: 8 nodes of 4 devices, dims [4, 2]. */
static void fill_torus(rt_topology *t)
{
    fill_topology(t, RT_FAMILY_TORUS);
    t->node.devices = 4;
    t->net.nics_per_node = 4;
    t->net.rail_optimized = 0;
    t->net.dims[0] = 4;
    t->net.dims[1] = 2;
    t->net.n_dims = 2;
    t->nodes = 8;
}

/* An AlltoAllv over 32 ranks where rank SRC[i] sends X to rank DST[i], i < N. */

/* One flow: the hand-computed time in both engines; the per-pair hop count in the platform. */
static void torus_one_flow(void **state)
{
    (void)state;
    rt_topology t;
    fill_torus(&t);
    assert_int_equal(rt_topology_check_faults(&t), 0);
    assert_int_equal(rt_fabric_of(&t)->switches(&t, 1), 4);
    const int a[] = {0}, b[] = {8};
    double want = X / 25e9 + 0.2e-6 + 4e-6 + 1e-6;
    rt_fx_assert_rel(run(&t, rt_fx_flows(32, a, b, 1, X), "analytic"), want, 1e-12);
    rt_fx_assert_rel(run(&t, rt_fx_flows(32, a, b, 1, X), "simgrid"), want, 1e-9);
    const char *why = NULL;
    rt_platform *p = rt_platform_new(&t, 8, &why);
    assert_non_null(p);
    assert_int_equal(p->leaves, 8);                  /* one router per node */
    assert_int_equal(p->n_links, 32 + 32 + 16 + 32); /* nvlink, nic, torus, pcie */
    rt_fx_assert_rel(p->bw[rt_fabric_link0(p)], 25e9, 1e-15);
    rt_fx_assert_rel(rt_fx_path_latency(p, 0, 8), 0.2e-6 + 3e-6, 1e-12); /* 2 hops +x */
    rt_fx_assert_rel(rt_fx_path_latency(p, 0, 12), 0.2e-6 + 2e-6,
                     1e-12); /* 1 hop -x (wraparound) */
    rt_fx_assert_rel(rt_fx_path_latency(p, 0, 20), 0.2e-6 + 3e-6, 1e-12); /* (1, 1): x then y */
    rt_fx_assert_rel(rt_fx_path_latency(p, 0, 3), 10e-6,
                     1e-12); /* inside the node: NVLink, no router */
    rt_platform_free(p);
}

/* Two flows on one torus link take twice as long in SimGrid; on disjoint links they do not. */
static void torus_shared_link(void **state)
{
    (void)state;
    rt_topology t;
    fill_torus(&t);
    const int a[] = {0, 4}, b[] = {8, 12}, c[] = {0, 16}, d[] = {8, 24};
    double one = X / 25e9 + 5.2e-6;
    rt_fx_assert_rel(run(&t, rt_fx_flows(32, a, b, 2, X), "simgrid"), 2 * X / 25e9 + 5.2e-6, 1e-9);
    rt_fx_assert_rel(run(&t, rt_fx_flows(32, c, d, 2, X), "simgrid"), one, 1e-9);
    /* the analytic engine does not see the torus links */
    rt_fx_assert_rel(run(&t, rt_fx_flows(32, a, b, 2, X), "analytic"), one, 1e-12);
}

/* Dimension order on the written routes: x first, the shorter way, the + link of coordinate 0 in
 * a dimension of 2; the refusals. */
static void torus_routes(void **state)
{
    (void)state;
    rt_topology t;
    fill_torus(&t);
    const char *why = NULL;
    rt_platform *p = rt_platform_new(&t, 8, &why);
    assert_non_null(p);
    char *buf = rt_fx_platform_xml(p, &t, 1);
    assert_non_null(strstr(buf, "family torus 4x2"));
    assert_null(strstr(buf, "uplink"));
    /* node 0 (0, 0) -> node 5 (1, 1): +x from router 0, then +y from router 1 */
    assert_non_null(strstr(buf, "<route src=\"gpu-0\" dst=\"gpu-20\" symmetrical=\"NO\">"
                                "<link_ctn id=\"nic-0-0\" direction=\"UP\"/>"
                                "<link_ctn id=\"torus-0-0\" direction=\"UP\"/>"
                                "<link_ctn id=\"torus-1-1\" direction=\"UP\"/>"
                                "<link_ctn id=\"nic-5-0\" direction=\"DOWN\"/></route>"));
    /* node 5 -> node 0: -x (router 4's + link, DOWN), then y from coordinate 1 over router 0's
     * link (DOWN) */
    assert_non_null(strstr(buf, "<route src=\"gpu-20\" dst=\"gpu-0\" symmetrical=\"NO\">"
                                "<link_ctn id=\"nic-5-0\" direction=\"UP\"/>"
                                "<link_ctn id=\"torus-4-0\" direction=\"DOWN\"/>"
                                "<link_ctn id=\"torus-0-1\" direction=\"DOWN\"/>"
                                "<link_ctn id=\"nic-0-0\" direction=\"DOWN\"/></route>"));
    /* node 0 -> node 3: -x, one hop over router 3's + link */
    assert_non_null(strstr(buf, "<route src=\"gpu-0\" dst=\"gpu-12\" symmetrical=\"NO\">"
                                "<link_ctn id=\"nic-0-0\" direction=\"UP\"/>"
                                "<link_ctn id=\"torus-3-0\" direction=\"DOWN\"/>"
                                "<link_ctn id=\"nic-3-0\" direction=\"DOWN\"/></route>"));
    /* router 4's y link (coordinate 1 in a dimension of 2) is written, never routed */
    assert_non_null(strstr(buf, "<link id=\"torus-4-1\""));
    assert_null(strstr(buf, "<link_ctn id=\"torus-4-1\""));
    free(buf);
    rt_platform_free(p);
    assert_int_equal(rt_topology_check_faults(&t), 0);
    t.net.dims[1] = 3; /* 12 routers for 8 nodes */
    assert_int_equal(rt_topology_check_faults(&t), -1);
    assert_null(rt_platform_new(&t, 8, &why));
    t.net.dims[1] = 2;
    t.net.rail_optimized = 1;
    assert_int_equal(rt_topology_check_faults(&t), -1);
    t.net.rail_optimized = 0;
    t.net.nics_per_node = 2; /* a link would carry half a NIC */
    assert_int_equal(rt_topology_check_faults(&t), -1);
    assert_null(rt_platform_new(&t, 8, &why));
    t.net.nics_per_node = 4;
    t.net.oversubscription = 2;
    assert_int_equal(rt_topology_check_faults(&t), -1);
    t.net.oversubscription = 1;
    t.net.n_dims = 0;
    assert_int_equal(rt_topology_check_faults(&t), -1);
    /* diameter 13 + 1 = 14 hops > 12 */
    t.net.n_dims = 2;
    t.net.dims[0] = 26;
    t.nodes = 52;
    assert_int_equal(rt_topology_check_faults(&t), 0);
    assert_null(rt_platform_new(&t, 52, &why));
    assert_non_null(strstr(why, "more than 12 torus links"));
    /* dims under another family is refused */
    fill_topology(&t, RT_FAMILY_FAT_TREE);
    t.net.n_dims = 2;
    t.net.dims[0] = t.net.dims[1] = 2;
    assert_int_equal(rt_topology_check_faults(&t), -1);
}

/* A 3D torus [3, 2, 2] (12 nodes of 6 devices, 6 NICs: links of 6 x 25e9 / 6 = 25e9 B/s): node
 * 0 (0, 0, 0) -> node 11 (2, 1, 1) is x the - way (distance 2 of 3, over router 2's + link),
 * then y and z the + way from coordinate 0: torus-2-0 DOWN, torus-2-1 UP, torus-5-2 UP; the
 * diameter 1 + 1 + 1 = 3 gives the analytic engine 4 routers. */
static void torus_3d_route(void **state)
{
    (void)state;
    rt_topology t;
    fill_torus(&t);
    t.node.devices = t.net.nics_per_node = 6;
    t.net.dims[0] = 3;
    t.net.dims[1] = t.net.dims[2] = 2;
    t.net.n_dims = 3;
    t.nodes = 12;
    assert_int_equal(rt_topology_check_faults(&t), 0);
    assert_int_equal(rt_fabric_of(&t)->switches(&t, 1), 4);
    const char *why = NULL;
    rt_platform *p = rt_platform_new(&t, 12, &why);
    assert_non_null(p);
    rt_fx_assert_rel(p->bw[rt_fabric_link0(p)], 25e9, 1e-15);
    int segs[RT_PLATFORM_MAX_PATH], n = rt_platform_path(p, 0, 66, segs);
    assert_int_equal(n, 5); /* NIC up, 3 hops, NIC down */
    const char *want[] = {"torus-2-0", "torus-2-1", "torus-5-2"};
    const int dir[] = {RT_DIR_DOWN, RT_DIR_UP, RT_DIR_UP};
    for (int i = 0; i < 3; i++) {
        int links[2], hs, hd;
        assert_int_equal(rt_platform_segment(p, segs[1 + i], &hs, &hd, links), 1);
        char name[64];
        rt_platform_link_name(p, links[0] / 2, name, sizeof name);
        assert_string_equal(name, want[i]);
        assert_int_equal(links[0] % 2, dir[i]);
    }
    rt_fx_assert_rel(rt_fx_path_latency(p, 0, 66), 0.2e-6 + 4e-6, 1e-12);
    rt_platform_free(p);
}

static void fill_dragonfly(rt_topology *t, int global_links)
{
    fill_topology(t, RT_FAMILY_DRAGONFLY);
    t->net.rail_optimized = 0;
    t->net.groups = 3;
    t->net.group_routers = 2;
    t->net.global_links = global_links;
    t->nodes = 6;
}

/* An AlltoAllv over 12 ranks where rank SRC[i] sends X to rank DST[i], i < N. */

static void dragonfly_flows(void **state)
{
    (void)state;
    rt_topology t;
    fill_dragonfly(&t, 1);
    assert_int_equal(rt_topology_check_faults(&t), 0);
    assert_int_equal(rt_fabric_of(&t)->switches(&t, 1), 4);
    const int a[] = {0}, b[] = {6}, a2[] = {0, 2}, b2[] = {6, 4};
    double one = X / 25e9 + 5.2e-6;
    rt_fx_assert_rel(run(&t, rt_fx_flows(12, a, b, 1, X), "analytic"), one, 1e-12);
    rt_fx_assert_rel(run(&t, rt_fx_flows(12, a, b, 1, X), "simgrid"), one, 1e-9);
    rt_fx_assert_rel(run(&t, rt_fx_flows(12, a2, b2, 2, X), "simgrid"), 2 * X / 25e9 + 5.2e-6,
                     1e-9);
    rt_fx_assert_rel(run(&t, rt_fx_flows(12, a2, b2, 2, X), "analytic"), one, 1e-12);
    const char *why = NULL;
    rt_platform *p = rt_platform_new(&t, 6, &why);
    assert_non_null(p);
    assert_int_equal(p->leaves, 6);
    assert_int_equal(p->n_up_links, 3 + 3); /* a local link per group, a global per pair */
    rt_fx_assert_rel(rt_fx_path_latency(p, 2, 6), 0.2e-6 + 4e-6, 1e-12);
    rt_fx_assert_rel(rt_fx_path_latency(p, 0, 4), 0.2e-6 + 2e-6, 1e-12); /* router 0 to router 0 */
    rt_platform_free(p);
    fill_dragonfly(&t, 2);
    assert_int_equal(rt_fabric_of(&t)->switches(&t, 1), 3);
    rt_fx_assert_rel(run(&t, rt_fx_flows(12, a2, b2, 2, X), "simgrid"), X / 25e9 + 4.2e-6, 1e-9);
    rt_fx_assert_rel(run(&t, rt_fx_flows(12, a2, b2, 2, X), "analytic"), X / 25e9 + 4.2e-6, 1e-12);
}

/* Minimal routing on the written routes, link bandwidths, and the refusals. */
static void dragonfly_routes(void **state)
{
    (void)state;
    rt_topology t;
    fill_dragonfly(&t, 1);
    const char *why = NULL;
    rt_platform *p = rt_platform_new(&t, 6, &why);
    assert_non_null(p);
    char *buf = rt_fx_platform_xml(p, &t, 1);
    assert_non_null(strstr(buf, "family dragonfly: 3 groups x 2 routers"));
    assert_non_null(strstr(buf, "<link id=\"global-1-2-0\" bandwidth=\"25000000000Bps\""));
    /* node 1 (group 0, router 1) -> node 3 (group 1, router 1): local, global, local */
    assert_non_null(strstr(buf, "<route src=\"gpu-2\" dst=\"gpu-6\" symmetrical=\"NO\">"
                                "<link_ctn id=\"nic-1-0\" direction=\"UP\"/>"
                                "<link_ctn id=\"local-0-0-1\" direction=\"DOWN\"/>"
                                "<link_ctn id=\"global-0-1-0\" direction=\"UP\"/>"
                                "<link_ctn id=\"local-1-0-1\" direction=\"UP\"/>"
                                "<link_ctn id=\"nic-3-0\" direction=\"DOWN\"/></route>"));
    /* node 5 (group 2, router 1) -> node 0 (group 0, router 0): local, global (DOWN) */
    assert_non_null(strstr(buf, "<route src=\"gpu-10\" dst=\"gpu-0\" symmetrical=\"NO\">"
                                "<link_ctn id=\"nic-5-0\" direction=\"UP\"/>"
                                "<link_ctn id=\"local-2-0-1\" direction=\"DOWN\"/>"
                                "<link_ctn id=\"global-0-2-0\" direction=\"DOWN\"/>"
                                "<link_ctn id=\"nic-0-0\" direction=\"DOWN\"/></route>"));
    free(buf);
    rt_platform_free(p);
    /* 5 channels on 2 routers: router 0 holds 3, router 1 holds 2 */
    fill_dragonfly(&t, 5);
    p = rt_platform_new(&t, 6, &why);
    assert_non_null(p);
    rt_fx_assert_rel(p->bw[rt_fabric_link0(p) + 3], 3 * 25e9, 1e-15); /* global-0-1-0 */
    rt_fx_assert_rel(p->bw[rt_fabric_link0(p) + 4], 2 * 25e9, 1e-15); /* global-0-1-1 */
    rt_platform_free(p);
    t.nodes = 7; /* not a multiple of 3 x 2 routers */
    assert_int_equal(rt_topology_check_faults(&t), -1);
    assert_null(rt_platform_new(&t, 7, &why));
    t.nodes = 12; /* 2 nodes per router */
    assert_int_equal(rt_topology_check_faults(&t), 0);
    assert_int_equal(rt_topology_nodes_per_leaf(&t), 2);
    t.nodes = 6;
    t.net.rail_optimized = 1;
    assert_int_equal(rt_topology_check_faults(&t), -1);
    t.net.rail_optimized = 0;
    t.net.global_links = 0;
    assert_int_equal(rt_topology_check_faults(&t), -1);
    fill_topology(&t, RT_FAMILY_FAT_TREE);
    t.net.groups = 2;
    assert_int_equal(rt_topology_check_faults(&t), -1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(engines_agree_per_family),
        cmocka_unit_test(rail_only_layout),
        cmocka_unit_test(torus_one_flow),
        cmocka_unit_test(torus_shared_link),
        cmocka_unit_test(torus_routes),
        cmocka_unit_test(torus_3d_route),
        cmocka_unit_test(dragonfly_flows),
        cmocka_unit_test(dragonfly_routes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
