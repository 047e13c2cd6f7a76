/* ECMP by flow hash (`scale_out.ecmp: hash`, sim/simgrid_platform.h) against balanced ECMP.
 *
 * Platform (as tests/test_faults.c): nodes of 2 devices, one 25e9 B/s NIC per device on its
 * rail (rail-optimized, PXN), efficiencies 1, radix 4: a leaf serves 2 nodes and has 2 spine
 * ports. 4 nodes: 8 ranks, 2 leaves per rail. Flows of X bytes go from leaf 0 to leaf 1 on
 * rail 0 (local index 0: ranks 0, 2 to ranks 4, 6). Balanced, uplink-0-0 carries both at
 * 2 x 25e9: 40 ms. Hashed, each flow takes one 25e9 port: 40 ms if they take different ports,
 * 80 ms (2x) if they collide. The ports, hand-computed from the documented hash (FNV-1a then
 * fmix32, mod 2): 0->4 port 1, 2->6 port 0, 0->6 port 0, 2->4 port 0. */
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
#define LAT 100e-6 /* latencies stay below this; the transfers are tens of ms */

static void fill_topology(rt_topology *t, rt_ecmp ecmp)
{
    rt_fx_topology(t, "ecmp", 4);
    t->net.radix = 4;
    t->net.ecmp = ecmp;
}

/* An AlltoAllv over the 8 ranks where only the two pairs (S0 -> D0, S1 -> D1) send X. */
static rt_graph *two_flows(int s0, int d0, int s1, int d1)
{
    int src[2] = {s0, s1}, dst[2] = {d0, d1};
    return rt_fx_flows(8, src, dst, 2, X);
}

/* The collective's time under ENGINE; FLOWS picks the SimGrid flow granularity. */
static double run(const rt_topology *t, rt_graph *g, const char *engine, rt_sg_flows flows)
{
    return rt_fx_run(t, g, engine, flows);
}

/* The hash is a fixed function of its inputs (values from a transcription of the formula in
 * simgrid_platform.h), and the port choice follows it. */
static void hash_is_deterministic(void **state)
{
    (void)state;
    assert_int_equal(rt_fabric_ecmp_hash(0, 0, 0), 336666008u);
    assert_int_equal(rt_fabric_ecmp_hash(0, 4, 0), 2593990483u);
    assert_int_equal(rt_fabric_ecmp_hash(2, 6, 0), 4093547158u);
    assert_int_equal(rt_fabric_ecmp_hash(0, 6, 0), 3213438678u);
    assert_int_equal(rt_fabric_ecmp_hash(2, 4, 0), 1632265968u);
    assert_int_not_equal(rt_fabric_ecmp_hash(0, 4, 1), rt_fabric_ecmp_hash(0, 4, 0));
    rt_topology t;
    fill_topology(&t, RT_ECMP_HASH);
    const char *why = NULL;
    rt_platform *p = rt_platform_new(&t, 4, &why);
    assert_non_null(p);
    assert_int_equal(rt_fabric_ecmp_port(p, 0, 0, 1, 0, 4), 1);
    assert_int_equal(rt_fabric_ecmp_port(p, 0, 0, 1, 2, 6), 0);
    assert_int_equal(rt_fabric_ecmp_port(p, 0, 0, 1, 0, 6), 0);
    assert_int_equal(rt_fabric_ecmp_port(p, 0, 0, 1, 2, 4), 0);
    /* 0 -> 6: NIC up, leaf 0 -> spine 0, spine 0 -> leaf 1, NIC down. */
    int segs[RT_PLATFORM_MAX_PATH], links[2], hs, hd;
    char a[64], b[64];
    assert_int_equal(rt_platform_path(p, 0, 6, segs), 4);
    assert_int_equal(rt_platform_segment(p, segs[1], &hs, &hd, links), 1);
    rt_platform_host_name(p, hs, a, sizeof a);
    rt_platform_host_name(p, hd, b, sizeof b);
    assert_string_equal(a, "leaf-0-0");
    assert_string_equal(b, "spine-0-0");
    rt_platform_link_name(p, links[0] / 2, a, sizeof a);
    assert_string_equal(a, "uplink-0-0-0");
    assert_int_equal(rt_platform_segment(p, segs[2], &hs, &hd, links), 1);
    rt_platform_link_name(p, links[0] / 2, a, sizeof a);
    assert_string_equal(a, "uplink-0-1-0");
    assert_int_equal(links[0] % 2, RT_DIR_DOWN);
    rt_platform_free(p);
}

/* 0 -> 6 and 2 -> 4 collide on port 0: 2X at 25e9 = 80 ms, twice what balanced ECMP and the
 * analytic engine (which assumes it) predict; 0 -> 4 and 2 -> 6 do not: 40 ms. Both flow
 * granularities. */
static void collision_doubles(void **state)
{
    (void)state;
    rt_sg_flows modes[] = {RT_SG_FLOWS_PAIRS, RT_SG_FLOWS_LINKS};
    for (int m = 0; m < 2; m++) {
        rt_topology t;
        fill_topology(&t, RT_ECMP_BALANCED);
        rt_fx_assert_near(run(&t, two_flows(0, 6, 2, 4), "simgrid", modes[m]), 2 * X / 50e9, LAT);
        fill_topology(&t, RT_ECMP_HASH);
        double hit = run(&t, two_flows(0, 6, 2, 4), "simgrid", modes[m]);
        rt_fx_assert_near(hit, 2 * X / 25e9, LAT);
        rt_fx_assert_near(run(&t, two_flows(0, 4, 2, 6), "simgrid", modes[m]), X / 25e9, LAT);
    }
    rt_topology t;
    fill_topology(&t, RT_ECMP_HASH);
    rt_fx_assert_near(run(&t, two_flows(0, 6, 2, 4), "analytic", RT_SG_FLOWS_AUTO), 2 * X / 50e9,
                      LAT);
}

/* A failed spine port is removed from the routes: with port 0 of leaf 1 down, 0 -> 6 and
 * 2 -> 4 rehash onto port 1 (both endpoints' leaves must have the port up) and still collide
 * (80 ms); 0 -> 4 and 2 -> 6, which did not collide, now do: 80 ms instead of 40. The leaf's
 * port-0 links keep their bandwidth but no route crosses them. */
static void failed_port_reroutes(void **state)
{
    (void)state;
    rt_topology t;
    fill_topology(&t, RT_ECMP_HASH);
    t.faults.f[t.faults.n++] = (rt_fault){
        .link = RT_FAULT_UPLINK, .a = 0, .b = 1, .bandwidth = 1, .background = 0, .ports_down = 1};
    const char *why = NULL;
    rt_platform *p = rt_platform_new(&t, 4, &why);
    assert_non_null(p);
    assert_int_equal(rt_fabric_ecmp_port(p, 0, 0, 1, 0, 6), 1);
    assert_int_equal(rt_fabric_ecmp_port(p, 0, 1, 0, 4, 2), 1);
    char *buf = rt_fx_platform_xml(p, &t, 0);
    assert_non_null(strstr(buf, "<host id=\"spine-0-1\""));
    assert_non_null(strstr(buf, "<link id=\"uplink-0-1-0\" bandwidth=\"25000000000Bps\""));
    assert_non_null(strstr(buf, "<route src=\"leaf-0-0\" dst=\"spine-0-0\""));
    assert_null(strstr(buf, "<route src=\"leaf-0-1\" dst=\"spine-0-0\""));
    assert_null(strstr(buf, "<route src=\"spine-0-0\" dst=\"leaf-0-1\""));
    assert_non_null(strstr(buf, "<route src=\"spine-0-1\" dst=\"leaf-0-1\""));
    free(buf);
    rt_platform_free(p);
    rt_sg_flows modes[] = {RT_SG_FLOWS_PAIRS, RT_SG_FLOWS_LINKS};
    for (int m = 0; m < 2; m++) {
        rt_fx_assert_near(run(&t, two_flows(0, 6, 2, 4), "simgrid", modes[m]), 2 * X / 25e9, LAT);
        rt_fx_assert_near(run(&t, two_flows(0, 4, 2, 6), "simgrid", modes[m]), 2 * X / 25e9, LAT);
    }
    /* Every port of a leaf down is refused. */
    t.faults.f[0].ports_down = 2;
    assert_null(rt_platform_new(&t, 4, &why));
    assert_non_null(strstr(why, "all its spine ports"));
}

/* 2:1 oversubscription under hash is half the uplink ports at full NIC speed: radix 4 gives one
 * 25e9 port per leaf (balanced: one uplink of 2 x 25e9 / 2), so one flow keeps its NIC's rate,
 * X / 25e9 = 40 ms, and the two flows share the port, 80 ms, as balanced gives. An
 * oversubscription that does not divide radix/2 into whole ports is refused. */
static void oversubscribed_ports(void **state)
{
    (void)state;
    rt_topology t;
    fill_topology(&t, RT_ECMP_HASH);
    t.net.oversubscription = 2;
    const char *why = NULL;
    rt_platform *p = rt_platform_new(&t, 4, &why);
    assert_non_null(p);
    assert_int_equal(p->ports, 1);
    char name[64];
    rt_platform_link_name(p, rt_fabric_link0(p) + 1, name, sizeof name);
    assert_string_equal(name, "uplink-0-1-0");
    assert_true(p->bw[rt_fabric_link0(p) + 1] == 25e9);
    rt_platform_free(p);
    for (int e = 0; e < 2; e++) {
        t.net.ecmp = e ? RT_ECMP_HASH : RT_ECMP_BALANCED;
        rt_fx_assert_near(run(&t, two_flows(0, 4, 2, 6), "simgrid", RT_SG_FLOWS_PAIRS),
                          2 * X / 25e9, LAT);
    }
    rt_graph *g = two_flows(0, 4, 2, 6);
    rt_graph_cost(g, 0, 2)->send[6] = 0; /* keep 0 -> 4 alone */
    rt_graph_cost(g, 0, 2)->bytes = 0;
    rt_graph_cost(g, 0, 6)->recv[2] = 0;
    rt_graph_cost(g, 0, 6)->recv_bytes = 0;
    rt_fx_assert_near(run(&t, g, "simgrid", RT_SG_FLOWS_PAIRS), X / 25e9, LAT);
    t.net.oversubscription = 1.5;
    assert_null(rt_platform_new(&t, 4, &why));
    assert_non_null(strstr(why, "whole number"));
}

/* The size estimate that refuses huge platforms (rt_platform_xml_bytes) holds under hash too:
 * within 5 % of what is written, with and without device-pair routes. */
static void size_estimate(void **state)
{
    (void)state;
    const int nodes[] = {2, 16, 64};
    for (size_t i = 0; i < sizeof nodes / sizeof nodes[0]; i++)
        for (int pairs = 0; pairs < 2; pairs++) {
            rt_topology t;
            fill_topology(&t, RT_ECMP_HASH);
            t.net.radix = 8;
            t.nodes = nodes[i];
            const char *why = NULL;
            rt_platform *p = rt_platform_new(&t, nodes[i], &why);
            assert_non_null(p);
            FILE *f = tmpfile();
            assert_non_null(f);
            assert_int_equal(rt_platform_write_xml(p, &t, pairs, f), 0);
            double written = (double)ftell(f);
            fclose(f);
            double est = rt_platform_xml_bytes(p, pairs);
            if (!(fabs(est - written) <= 0.05 * written)) {
                print_error("%d nodes, pairs %d: estimate %.0f, written %.0f\n", nodes[i], pairs,
                            est, written);
                fail();
            }
            rt_platform_free(p);
        }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(hash_is_deterministic), cmocka_unit_test(collision_doubles),
        cmocka_unit_test(failed_port_reroutes),  cmocka_unit_test(oversubscribed_ports),
        cmocka_unit_test(size_estimate),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
