/* Three-tier fat-tree (scale_out.pod_leaves, core_oversubscription; sim/fabric_fat_tree.c):
 * both engines read one description of the pods.
 *
 * Platform: nodes of 2 devices, one 25e9 B/s NIC per device on its rail (rail-optimized, PXN),
 * efficiencies 1, NIC latency 0.2 us, switch latency 1 us, base_latency 1 us, radix 4 (a leaf
 * serves radix/2 = 2 nodes per rail), levels 2, 8 nodes: 4 leaves per plane.
 *
 * pod_leaves 2 (2 pods of 2 leaves): a pod uplink carries 2 leaves x 2 ports x 25e9 /
 * (oversubscription 1 x core_oversubscription) = 100e9 / core_oversubscription. Rank 0 (node 0,
 * leaf 0, pod 0) sends X = 1e9 bytes:
 *   to rank 4 (node 2, leaf 1, same pod): leaf, spine, leaf = 3 switches:
 *     X / 25e9 + 0.2 us + 3 x 1 us + 1 us (base) in both engines, whatever core_oversubscription;
 *   to rank 8 (node 4, leaf 2, pod 1): leaf, spine, core, spine, leaf = 5 switches:
 *     X / 25e9 + 0.2 us + 5 us + 1 us under core_oversubscription 1 in both engines. Under 2
 *     the analytic engine charges the device's share of its pod's uplink (X x 2 / 25e9) while
 *     SimGrid's lone flow finds the 50e9 B/s uplink idle and runs at its NIC's 25e9.
 * pod_leaves 1 (4 pods of one leaf; core_oversubscription 2: a pod uplink of 1 x 2 x 25e9 / 2 =
 * 25e9 B/s): rank 0 -> rank 8 and rank 2 -> rank 10 (nodes 0, 1 of leaf 0 on rail 0 to nodes 4,
 * 5 of leaf 2) share pod-uplink-0-0 UP and pod-uplink-0-2 DOWN: 12.5e9 B/s each, 2 X / 25e9 +
 * 6.2 us in SimGrid, and the analytic pod share X x 2 / 25e9 gives the same; rank 0 -> 8 with
 * rank 4 -> 12 (pod 1 to pod 3) instead share no pod uplink: X / 25e9 + 6.2 us in SimGrid. The
 * same in SimGrid's links mode (flows summed per segment), where the leaf-to-core segment, the
 * bottleneck, also carries the route's largest latency. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "collective_terms.h"
#include "engines.h"
#include "fabric.h"
#include "sim_fixture.h"
#include "simgrid.h"
#include "simgrid_platform.h"

#define X 1e9
#define WORLD 16

static void fill_pods(rt_topology *t, int pod_leaves, double core_os)
{
    rt_fx_topology(t, "pods", 8);
    t->net.levels = 2;
    t->net.radix = 4;
    t->net.switch_latency = 1e-6;
    t->net.family = RT_FAMILY_FAT_TREE;
    t->net.pod_leaves = pod_leaves;
    t->net.core_oversubscription = core_os;
}

/* An AlltoAllv over the 16 ranks where rank SRC[i] sends X to rank DST[i], i < N. */
static rt_graph *flows(const int *src, const int *dst, int n)
{
    return rt_fx_flows(WORLD, src, dst, n, X);
}

static double run(const rt_topology *t, rt_graph *g, const char *engine, rt_sg_flows mode)
{
    return rt_fx_run(t, g, engine, mode);
}

/* One flow in a pod and one across pods: the hand-computed times in both engines, the switch
 * counts in the platform's latencies. */
static void one_flow_in_and_across_pods(void **state)
{
    (void)state;
    rt_topology t;
    fill_pods(&t, 2, 1);
    assert_int_equal(rt_topology_check_faults(&t), 0);
    const int a[] = {0}, in[] = {4}, across[] = {8};
    double want_in = X / 25e9 + 0.2e-6 + 3e-6 + 1e-6, want_across = X / 25e9 + 0.2e-6 + 5e-6 + 1e-6;
    rt_fx_assert_rel(run(&t, flows(a, in, 1), "analytic", RT_SG_FLOWS_AUTO), want_in, 1e-12);
    rt_fx_assert_rel(run(&t, flows(a, across, 1), "analytic", RT_SG_FLOWS_AUTO), want_across,
                     1e-12);
    rt_fx_assert_rel(run(&t, flows(a, in, 1), "simgrid", RT_SG_FLOWS_PAIRS), want_in, 1e-9);
    rt_fx_assert_rel(run(&t, flows(a, across, 1), "simgrid", RT_SG_FLOWS_PAIRS), want_across, 1e-9);
    /* links mode runs each segment as its own flow: the round pays the largest segment latency
     * (the two uplinks', 2 us, or a leaf-core segment's, 2 us) while the NIC segments set its
     * end, so X / 25e9 + 0.6 us, then the analytic latency beyond 2 us: 1.4 us less than pairs
     * (the engine's aggregation, experiments/validation/aggregation.md) */
    rt_fx_assert_rel(run(&t, flows(a, in, 1), "simgrid", RT_SG_FLOWS_LINKS), want_in - 1.4e-6,
                     1e-9);
    rt_fx_assert_rel(run(&t, flows(a, across, 1), "simgrid", RT_SG_FLOWS_LINKS),
                     want_across - 1.4e-6, 1e-9);
    assert_int_equal(rt_fabric_of(&t)->switches(&t, 0), 1);
    assert_int_equal(rt_fabric_of(&t)->switches(&t, 1), 3);
    assert_int_equal(rt_fabric_of(&t)->switches(&t, 2), 5);
    const char *why = NULL;
    rt_platform *p = rt_platform_new(&t, 8, &why);
    assert_non_null(p);
    assert_int_equal(p->pods, 2);
    rt_fx_assert_rel(rt_fx_path_latency(p, 0, 2), 0.2e-6 + 1e-6, 1e-12); /* one leaf */
    rt_fx_assert_rel(rt_fx_path_latency(p, 0, 4), 0.2e-6 + 3e-6, 1e-12);
    rt_fx_assert_rel(rt_fx_path_latency(p, 0, 8), 0.2e-6 + 5e-6, 1e-12);
    rt_fx_assert_rel(rt_fx_path_latency(p, 0, 15), 10e-6 + 0.2e-6 + 5e-6,
                     1e-12); /* PXN hop, then pod 1 */
    rt_platform_free(p);
    /* core_oversubscription leaves a flow inside a pod alone in both engines; across pods the
     * analytic engine charges the device's share of the pod uplink, a lone SimGrid flow does
     * not meet it (header) */
    fill_pods(&t, 2, 2);
    rt_fx_assert_rel(run(&t, flows(a, in, 1), "analytic", RT_SG_FLOWS_AUTO), want_in, 1e-12);
    rt_fx_assert_rel(run(&t, flows(a, in, 1), "simgrid", RT_SG_FLOWS_AUTO), want_in, 1e-9);
    rt_fx_assert_rel(run(&t, flows(a, across, 1), "analytic", RT_SG_FLOWS_AUTO),
                     want_across + X / 25e9, 1e-12);
    rt_fx_assert_rel(run(&t, flows(a, across, 1), "simgrid", RT_SG_FLOWS_AUTO), want_across, 1e-9);
}

/* Two flows across pods on one pod uplink under core_oversubscription 2 share it; on two pods'
 * uplinks they do not. */
static void pod_uplink_shared(void **state)
{
    (void)state;
    rt_topology t;
    fill_pods(&t, 1, 2);
    assert_int_equal(rt_topology_check_faults(&t), 0);
    const int a[] = {0, 2}, b[] = {8, 10}, c[] = {0, 4}, d[] = {8, 12};
    double one = X / 25e9 + 6.2e-6, two = 2 * X / 25e9 + 6.2e-6;
    for (int m = RT_SG_FLOWS_PAIRS; m <= RT_SG_FLOWS_LINKS; m++) {
        rt_fx_assert_rel(run(&t, flows(a, b, 2), "simgrid", (rt_sg_flows)m), two, 1e-9);
        rt_fx_assert_rel(run(&t, flows(c, d, 2), "simgrid", (rt_sg_flows)m), one, 1e-9);
    }
    rt_fx_assert_rel(run(&t, flows(a, b, 2), "analytic", RT_SG_FLOWS_AUTO), two, 1e-12);
    /* core_oversubscription 1: the 50e9 B/s pod uplink carries both at NIC speed */
    t.net.core_oversubscription = 1;
    rt_fx_assert_rel(run(&t, flows(a, b, 2), "simgrid", RT_SG_FLOWS_AUTO), one, 1e-9);
    rt_fx_assert_rel(run(&t, flows(a, b, 2), "analytic", RT_SG_FLOWS_AUTO), one, 1e-12);
}

/* A leaf uplink fault under pods: pod_leaves 1, core_oversubscription 2, uplink-0-0 at half
 * bandwidth (2 x 25e9 x 0.5 = 25e9 B/s, as its pod's uplink). Rank 0 -> 8 and rank 2 -> 10 share
 * both: 2 X / 25e9 + 6.2 us in SimGrid. The analytic engine runs the group at the faulted
 * uplink's factor 0.5: the leaf term X x (1 / 0.5) / 25e9 = 2 X / 25e9, and the core term keeps
 * oversubscription x core_oversubscription (the core links have no fault): X x 1 x 2 / 25e9 =
 * 2 X / 25e9, not the 4 X / 25e9 that slowing it by the leaf's fault too would give. */
static void leaf_fault_under_pods(void **state)
{
    (void)state;
    rt_topology t;
    fill_pods(&t, 1, 2);
    t.faults.f[t.faults.n++] =
        (rt_fault){.link = RT_FAULT_UPLINK, .a = 0, .b = 0, .bandwidth = 0.5, .background = 0};
    assert_int_equal(rt_topology_check_faults(&t), 0);
    const int a[] = {0, 2}, b[] = {8, 10};
    double two = 2 * X / 25e9 + 6.2e-6;
    rt_fx_assert_rel(run(&t, flows(a, b, 2), "simgrid", RT_SG_FLOWS_PAIRS), two, 1e-9);
    rt_fx_assert_rel(run(&t, flows(a, b, 2), "analytic", RT_SG_FLOWS_AUTO), two, 1e-12);
}

/* The analytic group shape: the share of a ring's node-to-node hops that leave the pod, the
 * B_net it gives, the farthest hop. */
static void analytic_shape(void **state)
{
    (void)state;
    rt_topology t;
    fill_pods(&t, 2, 4);
    rt_coll_shape sh;
    rt_coll_shape_of(&t, (rt_group){WORLD, 1}, 0, &sh);
    assert_int_equal(sh.nodes, 8);
    assert_int_equal(sh.leaves, 4);
    assert_int_equal(sh.pods, 2);
    rt_fx_assert_rel(sh.leaf_cross, 0.5, 1e-15);
    rt_fx_assert_rel(sh.pod_cross, 0.25, 1e-15);
    /* B_net = 25e9 / max(1, 0.5 x 1, 0.25 x 1 x core_oversubscription) */
    rt_fx_assert_rel(rt_coll_bw_net(&t, &sh), 25e9, 1e-15);
    t.net.core_oversubscription = 8;
    rt_fx_assert_rel(rt_coll_bw_net(&t, &sh), 12.5e9, 1e-15);
    rt_fx_assert_rel(rt_coll_lat_net(&t, rt_coll_farthest(&sh)), 0.2e-6 + 5e-6, 1e-12);
    rt_coll_shape_of(&t, (rt_group){8, 1}, 0, &sh); /* ranks 0-7: nodes 0-3, pod 0 */
    assert_int_equal(sh.pods, 1);
    rt_fx_assert_rel(sh.pod_cross, 0, 0);
    rt_fx_assert_rel(rt_coll_bw_net(&t, &sh), 25e9, 1e-15);
    rt_fx_assert_rel(rt_coll_lat_net(&t, rt_coll_farthest(&sh)), 0.2e-6 + 3e-6, 1e-12);
    /* two tiers: no pods, levels 2 crossing leaves is 2 x 2 + 1 = 5 switches */
    fill_pods(&t, 0, 1);
    rt_coll_shape_of(&t, (rt_group){WORLD, 1}, 0, &sh);
    assert_int_equal(sh.pods, 1);
    rt_fx_assert_rel(sh.pod_cross, 0, 0);
    rt_fx_assert_rel(rt_coll_lat_net(&t, rt_coll_farthest(&sh)), 0.2e-6 + 5e-6, 1e-12);
}

/* The XML: core hosts, pod uplinks with their bandwidth, a route across pods over them, leaf
 * pairs only inside a pod. */
static void platform_xml(void **state)
{
    (void)state;
    rt_topology t;
    fill_pods(&t, 2, 1);
    const char *why = NULL;
    rt_platform *p = rt_platform_new(&t, 8, &why);
    assert_non_null(p);
    assert_int_equal(p->n_hosts, 16 + 8 + 8 + 2 * 4 + 2); /* gpus, nvs, cpus, leaves, cores */
    assert_int_equal(p->n_links, 16 + 16 + 2 * 4 + 2 * 2 + 16);
    char *buf = rt_fx_platform_xml(p, &t, 1);
    assert_non_null(strstr(buf, "<host id=\"core-1\""));
    assert_non_null(strstr(buf, "<link id=\"pod-uplink-1-1\" bandwidth=\"100000000000Bps\""));
    assert_non_null(strstr(buf, "<link id=\"uplink-0-3\" bandwidth=\"50000000000Bps\""));
    assert_non_null(strstr(buf, "<route src=\"gpu-0\" dst=\"gpu-8\" symmetrical=\"NO\">"
                                "<link_ctn id=\"nic-0-0\" direction=\"UP\"/>"
                                "<link_ctn id=\"uplink-0-0\" direction=\"UP\"/>"
                                "<link_ctn id=\"pod-uplink-0-0\" direction=\"UP\"/>"
                                "<link_ctn id=\"pod-uplink-0-1\" direction=\"DOWN\"/>"
                                "<link_ctn id=\"uplink-0-2\" direction=\"DOWN\"/>"
                                "<link_ctn id=\"nic-4-0\" direction=\"DOWN\"/></route>"));
    assert_non_null(strstr(buf, "<route src=\"leaf-0-0\" dst=\"leaf-0-1\""));
    assert_null(strstr(buf, "<route src=\"leaf-0-0\" dst=\"leaf-0-2\""));
    assert_non_null(strstr(buf, "<route src=\"leaf-1-2\" dst=\"core-1\""));
    assert_non_null(strstr(buf, "<route src=\"core-1\" dst=\"leaf-1-0\""));
    free(buf);
    rt_platform_free(p);
    /* one pod: nothing reaches the core */
    fill_pods(&t, 2, 1);
    t.nodes = 4;
    p = rt_platform_new(&t, 4, &why);
    assert_non_null(p);
    buf = rt_fx_platform_xml(p, &t, 0);
    assert_null(strstr(buf, "dst=\"core-0\""));
    free(buf);
    rt_platform_free(p);
    /* no pods: the two-tier platform, no core */
    fill_pods(&t, 0, 1);
    p = rt_platform_new(&t, 8, &why);
    assert_non_null(p);
    assert_int_equal(p->n_hosts, 16 + 8 + 8 + 2 * 4);
    assert_int_equal(p->n_links, 16 + 16 + 2 * 4 + 16);
    rt_platform_free(p);
}

/* What the pods refuse, in the topology check and in the platform. */
static void refusals(void **state)
{
    (void)state;
    rt_topology t;
    const char *why = NULL;
    fill_pods(&t, 2, 1);
    t.net.ecmp = RT_ECMP_HASH;
    assert_int_equal(rt_topology_check_faults(&t), -1);
    assert_null(rt_platform_new(&t, 8, &why));
    assert_non_null(strstr(why, "ecmp: hash"));
    fill_pods(&t, 2, 1);
    t.net.levels = 1;
    assert_int_equal(rt_topology_check_faults(&t), -1);
    fill_pods(&t, 3, 1); /* > radix/2 */
    assert_int_equal(rt_topology_check_faults(&t), -1);
    assert_null(rt_platform_new(&t, 8, &why));
    fill_pods(&t, 1, 1);
    t.nodes = 10; /* 5 leaves, 5 pods > radix 4 */
    assert_int_equal(rt_topology_check_faults(&t), -1);
    t.nodes = 8;
    assert_int_equal(rt_topology_check_faults(&t), 0);
    t.net.family = RT_FAMILY_RAIL_ONLY;
    t.nodes = 4;
    assert_int_equal(rt_topology_check_faults(&t), -1);
    fill_pods(&t, 0, 2); /* core_oversubscription without pods */
    assert_int_equal(rt_topology_check_faults(&t), -1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(one_flow_in_and_across_pods),
        cmocka_unit_test(pod_uplink_shared),
        cmocka_unit_test(leaf_fault_under_pods),
        cmocka_unit_test(analytic_shape),
        cmocka_unit_test(platform_xml),
        cmocka_unit_test(refusals),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
