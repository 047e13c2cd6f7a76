/* Every key of the `simgrid:` section changes a result, each against a figure computed by hand
 * from SimGrid's CM02 model (src/surf/network_cm02.cpp, 3.32): a flow first waits its route
 * latency (times the latency factor), then shares its links by max-min with a weight of
 * 1 / (route latency + weight_S x sum of 1/bandwidth over its links), capped at
 * TCP-gamma / (2 x route latency); crosstraffic loads the reverse route with 5 % of the rate.
 *
 * Platform: 2 nodes x 2 devices, NVLink 100e9 B/s, one 25e9 B/s NIC per device on its rail,
 * scale-up latency a_up = 10 us (nvlink-R 5 us each way), NIC 0.2 us + switch 0.1 us,
 * base_latency 1 us, efficiencies 1. The engine charges a collective's analytic latency
 * beyond what its simulated round paid: here base_latency, 1 us. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "sim_fixture.h"
#include "simgrid.h"

#define X 1e9 /* bytes per flow: transfers of 10-80 ms dwarf the microsecond latencies */
#define A_UP 10e-6
#define BASE 1e-6

static void fill_topology(rt_topology *t)
{
    rt_fx_topology(t, "settings", 2);
}

/* One direct AlltoAllv over the 4 ranks: BYTES[s][d] from rank s to rank d. */
static rt_graph *alltoallv(double bytes[4][4])
{
    int op;
    rt_graph *g = rt_fx_alltoallv(4, &op);
    for (int r = 0; r < 4; r++)
        for (int k = 0; k < 4; k++)
            if (bytes[r][k] > 0) rt_fx_send(g, op, r, k, bytes[r][k]);
    return g;
}

/* Ranks 0 and 1 (one node) exchange X each way: one flow per NVLink direction. */
static rt_graph *intra_exchange(void)
{
    double b[4][4] = {{0, X, 0, 0}, {X, 0, 0, 0}, {0}, {0}};
    return alltoallv(b);
}

/* Rank 0 sends X to rank 1 (NVLink) and X to rank 3, whose route goes the PXN way over
 * rank 1's NVLink port to NIC 1: both flows share nvlink-0 up and nvlink-1 down. */
static rt_graph *shared_port(void)
{
    double b[4][4] = {{0, X, 0, X}, {0}, {0}, {0}};
    return alltoallv(b);
}

/* A ring AllReduce of S per rank over GROUP. */
static rt_graph *ring_over(double S, rt_group group)
{
    int reps[4] = {0, 1, 2, 3};
    double w[4] = {1, 1, 1, 1};
    rt_graph *g = rt_graph_new(4, 4, reps, w);
    assert_non_null(g);
    int op = rt_graph_add_collective(g, "c", RT_STREAM_COMM, RT_COLL_ALLREDUCE, RT_ALGO_RING, group,
                                     "c", NULL, 0);
    for (int r = 0; r < 4; r++)
        rt_graph_cost(g, op, r)->bytes = S;
    return g;
}

/* Inside each node: groups {0, 1} and {2, 3}. */
static rt_graph *ring_pairs(double S)
{
    return ring_over(S, (rt_group){2, 1});
}

/* Duration of the collective, and the links.csv rows when ROWS is given. */
static double run(const rt_simgrid_settings *sg, rt_graph *g, int *rows)
{
    rt_scenario s;
    memset(&s, 0, sizeof s);
    s.name = "settings";
    fill_topology(&s.topology);
    rt_result *r = rt_result_new(g, "simgrid");
    assert_non_null(r);
    assert_int_equal(rt_simgrid_run(&s, g, sg, r, stderr), 0);
    double d = r->end[0] - r->start[0];
    if (rows) {
        assert_int_equal(r->n_files, 1);
        assert_string_equal(r->files[0].name, "links.csv");
        *rows = -1; /* the header */
        for (const char *c = r->files[0].text; *c; c++)
            *rows += *c == '\n';
    }
    rt_result_free(r);
    rt_graph_free(g);
    return d;
}

static void defaults(rt_simgrid_settings *sg)
{
    rt_simgrid_settings_default(sg);
}

/* CM02: a_up + X / 100e9 + base. LV08 multiplies the latency by 13.01. */
static void model(void **state)
{
    (void)state;
    rt_simgrid_settings sg;
    defaults(&sg);
    double cm02 = run(&sg, intra_exchange(), NULL);
    rt_fx_assert_rel(cm02, A_UP + X / 100e9 + BASE, 1e-6);
    sg.model = RT_SG_LV08;
    double lv08 = run(&sg, intra_exchange(), NULL);
    rt_fx_assert_rel(lv08 - cm02, 12.01 * A_UP, 1e-4);
}

/* A window of 64 KiB caps each flow at 65536 / (2 x 10 us) = 3.2768e9 B/s. */
static void tcp_gamma(void **state)
{
    (void)state;
    rt_simgrid_settings sg;
    defaults(&sg);
    sg.tcp_gamma = 65536;
    rt_fx_assert_rel(run(&sg, intra_exchange(), NULL), A_UP + X / (65536 / (2 * A_UP)) + BASE,
                     1e-6);
}

/* Each link direction carries one flow at rate x and 5 % of the reverse flow's: 1.05 x =
 * 100e9. */
static void crosstraffic(void **state)
{
    (void)state;
    rt_simgrid_settings sg;
    defaults(&sg);
    sg.crosstraffic = 1;
    rt_fx_assert_rel(run(&sg, intra_exchange(), NULL), A_UP + 1.05 * X / 100e9 + BASE, 1e-6);
}

static void bandwidth_factor(void **state)
{
    (void)state;
    rt_simgrid_settings sg;
    defaults(&sg);
    sg.bandwidth_factor = 0.5;
    rt_fx_assert_rel(run(&sg, intra_exchange(), NULL), A_UP + X / 50e9 + BASE, 1e-6);
}

/* The shared port. weight_s 0: weights 1/10 us and 1/10.3 us split NVLink about evenly, the
 * PXN flow is held to its NIC's 25e9 and the other takes the remaining 75e9: the PXN flow
 * ends at X / 25e9 = 40 ms. weight_s 1e12 (weight_S/bandwidth dominates): weights 1/(2/100e9)
 * and 1/(2/100e9 + 2/25e9), 5:1, so the PXN flow gets 100e9/6 = 16.7e9 until the other
 * (83.3e9) has sent X: 12 ms, in which it sends X/5; then 25e9 for 4X/5: 44 ms, 1.1 x.
 * flows: links runs one flow per link direction, so nothing couples the two routes and the
 * weight changes nothing: 40 ms. pair_max_ranks decides which of the two `auto` is. */
static void weight_s_flows_and_pair_max_ranks(void **state)
{
    (void)state;
    rt_simgrid_settings sg;
    defaults(&sg);
    double even = run(&sg, shared_port(), NULL);
    rt_fx_assert_rel(even, X / 25e9, 1e-3);
    sg.weight_s = 1e12;
    double weighted = run(&sg, shared_port(), NULL);
    rt_fx_assert_rel(weighted, 1.1 * X / 25e9, 1e-3);
    sg.flows = RT_SG_FLOWS_LINKS;
    rt_fx_assert_rel(run(&sg, shared_port(), NULL), X / 25e9, 1e-3);
    sg.flows = RT_SG_FLOWS_AUTO;
    sg.pair_max_ranks = 2; /* 4 ranks: auto is links */
    rt_fx_assert_rel(run(&sg, shared_port(), NULL), X / 25e9, 1e-3);
    sg.pair_max_ranks = 4;
    rt_fx_assert_rel(run(&sg, shared_port(), NULL), weighted, 1e-9);
}

/* A ring AllReduce of two members: 2 steps of S/2 each way over NVLink, analytic latency
 * 2 a_up + base. bulk: one round of S per flow, a_up paid, base added: S/B + 2 a_up + base.
 * steps: 2 dependent rounds of S/2, each paying a_up: the same. steps with 4 chunks: 5
 * rounds carrying 1, 2, 2, 2, 1 chunk-steps of S/8, each paying a_up (more than the analytic
 * latency, so nothing is added): S/B + 5 a_up. */
static void collective_steps_and_chunks(void **state)
{
    (void)state;
    const double S = 1e9;
    rt_simgrid_settings sg;
    defaults(&sg);
    double bulk = run(&sg, ring_pairs(S), NULL);
    rt_fx_assert_rel(bulk, S / 100e9 + 2 * A_UP + BASE, 1e-6);
    sg.collective_steps = RT_SG_STEPS_STEPS;
    rt_fx_assert_rel(run(&sg, ring_pairs(S), NULL), bulk, 1e-9);
    sg.chunks = 4;
    rt_fx_assert_rel(run(&sg, ring_pairs(S), NULL), S / 100e9 + 5 * A_UP, 1e-6);
}

/* A latency-bound ring AllReduce over both nodes (4 KiB): two channels, each a cycle of two
 * NVLink hops (a_up = 10 us) and two rail hops (0.3 us); 6 steps. Step-wise, each member
 * waits only for its predecessor on its channel, so the chain pays 3 NVLink and 3 rail hops:
 * 30.9 us (plus about 75 ns of transfer), more than the analytic latency (6 x 0.3 + 1 us:
 * the analytic ring charges every step the network hop). Bulk pays one round's longest route
 * latency, 10 us, and its transfer; a barrier per step would pay 6 x 10 us. */
static void step_dependencies_follow_the_ring(void **state)
{
    (void)state;
    rt_simgrid_settings sg;
    defaults(&sg);
    double bulk = run(&sg, ring_over(4096, (rt_group){4, 1}), NULL);
    assert_true(bulk > A_UP && bulk < A_UP + 0.5e-6);
    sg.collective_steps = RT_SG_STEPS_STEPS;
    rt_fx_assert_rel(run(&sg, ring_over(4096, (rt_group){4, 1}), NULL), 3 * A_UP + 3 * 0.3e-6,
                     0.01);
}

/* links.csv keeps the links_top most loaded link directions: the shared port loads 4
 * (nvlink-0 up, nvlink-1 down, nic-0-1 up, nic-1-1 down). */
static void links_top(void **state)
{
    (void)state;
    rt_simgrid_settings sg;
    defaults(&sg);
    int rows;
    run(&sg, shared_port(), &rows);
    assert_int_equal(rows, 4);
    sg.links_top = 2;
    run(&sg, shared_port(), &rows);
    assert_int_equal(rows, 2);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(model),
        cmocka_unit_test(tcp_gamma),
        cmocka_unit_test(crosstraffic),
        cmocka_unit_test(bandwidth_factor),
        cmocka_unit_test(weight_s_flows_and_pair_max_ranks),
        cmocka_unit_test(links_top),
        cmocka_unit_test(collective_steps_and_chunks),
        cmocka_unit_test(step_dependencies_follow_the_ring),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
