/* `node.cores`: CPU-device ranks sharing their node's host cores in the SimGrid engine
 * (sim/simgrid_cores.c), against times computed by hand; the analytic engine's refusal.
 *
 * The graph: 4 ranks on one node, each runs kernel A, then an AllReduce of all four (0 bytes,
 * zero latencies: it costs nothing but the wait for the last member), then kernel B. Alone on
 * a core, A takes 2 ms on ranks 0 and 1 and 1 ms on ranks 2 and 3; B takes 1 ms on ranks 0 and
 * 2 and nothing on ranks 1 and 3.
 *   - no node.cores (every device computes on its own): A ends at 2 ms, B at 3 ms;
 *   - node.cores 2: ranks are pinned in blocks, as rectwin-exec pins them: ranks 0 and 1 on
 *     core 0, ranks 2 and 3 on core 1. Core 0 runs both A's at half speed: 4 ms; core 1 its two
 *     at half speed: 2 ms, then idles (rank 0 cannot use it). The AllReduce ends at 4 ms. B runs
 *     alone on each core: 1 ms. Iteration 5 ms, B starting at 4 ms. Sharing the 2 cores among
 *     all four ranks (unpinned) would say 4 ms, a static "4 ranks / 2 cores = 2x" 6 ms;
 *   - node.cores 4: one core per rank, as without the key: 3 ms.
 * The same ranks as 4 nodes of one device (`node.cores_nodes`): 4 nodes on one set of 2 cores
 * give the one node's 5 ms; 2 nodes on each set of 2 cores give every rank its own core: 3 ms. */
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
#include "simgrid.h"

extern const rt_engine rt_engine_simgrid;
extern const rt_engine rt_engine_analytic;

#define MS 1e-3

static void assert_rel(double got, double want, double tol)
{
    if (!(fabs(got - want) <= tol * fabs(want))) {
        print_error("got %.9g, want %.9g (tolerance %.3g)\n", got, want, tol);
        fail();
    }
}

/* One node of 4 CPU devices at 1e12 FLOP/s alone, no launch cost, no latencies. */
static void fill_topology(rt_topology *t, int cores)
{
    memset(t, 0, sizeof *t);
    t->name = "cpu-test";
    t->device.name = "cpu";
    t->device.peak_flops[RT_DT_FP32] = 1e12;
    t->device.hbm_bw = 1e12;
    t->device.eff_flops = 1;
    t->device.eff_hbm = 1;
    t->node.devices = 4;
    t->node.cores = cores;
    t->node.scale_up = RT_SCALEUP_PCIE;
    t->node.scale_up_bw = 10e9;
    t->node.host_bw = 10e9;
    t->net.nics_per_node = 1;
    t->net.nic_bw = 10e9;
    t->net.levels = 1;
    t->net.radix = 48;
    t->net.oversubscription = 1;
    t->coll.eff_intra = 1;
    t->coll.eff_inter = 1;
    t->nodes = 1;
}

/* B_EVERYWHERE: B takes 1 ms on every rank, not only on ranks 0 and 2. */
static rt_graph *kernels_and_a_collective(int b_everywhere)
{
    int reps[4] = {0, 1, 2, 3};
    double w[4] = {1, 1, 1, 1};
    rt_graph *g = rt_graph_new(4, 4, reps, w);
    assert_non_null(g);
    int a = rt_graph_add_kernel(g, "dense.fwd", RT_STREAM_COMPUTE, RT_K_DENSE_FWD, RT_DT_FP32, "a",
                                NULL, 0);
    rt_group all = {4, 1};
    int c = rt_graph_add_collective(g, "dense.allreduce", RT_STREAM_COMM, RT_COLL_ALLREDUCE,
                                    RT_ALGO_RING, all, "allreduce", &a, 1);
    int b = rt_graph_add_kernel(g, "dense.bwd", RT_STREAM_COMPUTE, RT_K_DENSE_BWD, RT_DT_FP32, "b",
                                &c, 1);
    for (int r = 0; r < 4; r++) {
        rt_graph_cost(g, a, r)->flops = (r < 2 ? 2 : 1) * MS * 1e12;
        rt_graph_cost(g, c, r)->bytes = 0;
        rt_graph_cost(g, b, r)->flops = (r % 2 && !b_everywhere ? 0 : 1) * MS * 1e12;
    }
    return g;
}

/* From the last run of iteration(): the end of A on rank 0, the latest end of the AllReduce and
 * the longest B. */
static double a_end_rank0, allreduce_end, longest_b;

/* The iteration: the latest end of any op on any rank; -1 when the engine refused. */
static double iteration(const rt_engine *engine, const rt_topology *t, const rt_graph *g,
                        double *b_start_rank0)
{
    rt_scenario s;
    memset(&s, 0, sizeof s);
    s.name = "test";
    s.topology = *t;
    rt_result *r = rt_result_new(g, engine->name);
    assert_non_null(r);
    FILE *err = fopen("/dev/null", "w");
    assert_non_null(err);
    int rc = engine->run(&s, g, r, err);
    fclose(err);
    double end = -1;
    if (rc == 0)
        for (long i = 0; i < (long)g->n_ops * g->n_reps; i++)
            end = fmax(end, r->end[i]);
    if (rc == 0 && b_start_rank0) *b_start_rank0 = r->start[2 * g->n_reps + 0];
    if (rc == 0) {
        a_end_rank0 = r->end[0], allreduce_end = longest_b = 0;
        for (int k = 0; k < g->n_reps; k++) {
            allreduce_end = fmax(allreduce_end, r->end[g->n_reps + k]);
            longest_b = fmax(longest_b, r->end[2 * g->n_reps + k] - r->start[2 * g->n_reps + k]);
        }
    }
    rt_result_free(r);
    return end;
}

/* The hand-computed timeline of the four ranks pinned to 2 cores (top of the file): 5 ms, and
 * B starts at 4 ms, when ranks 0 and 1 have shared core 0 for all of their A. */
static void assert_four_ranks_share_two_cores(const rt_topology *t, const rt_graph *g)
{
    double b_start = 0;
    assert_rel(iteration(&rt_engine_simgrid, t, g, &b_start), 5 * MS, 1e-6);
    assert_rel(b_start, 4 * MS, 1e-6);
}

static void test_without_cores_each_device_computes_alone(void **state)
{
    (void)state;
    rt_topology t;
    fill_topology(&t, 0);
    rt_graph *g = kernels_and_a_collective(0);
    assert_rel(iteration(&rt_engine_simgrid, &t, g, NULL), 3 * MS, 1e-6);
    assert_rel(iteration(&rt_engine_analytic, &t, g, NULL), 3 * MS, 1e-6);
    rt_graph_free(g);
}

static void test_two_cores_shared_by_four_ranks(void **state)
{
    (void)state;
    rt_topology t;
    fill_topology(&t, 2);
    rt_graph *g = kernels_and_a_collective(0);
    assert_four_ranks_share_two_cores(&t, g);
    rt_graph_free(g);
}

static void test_one_core_per_rank_is_no_sharing(void **state)
{
    (void)state;
    rt_topology t;
    fill_topology(&t, 4);
    rt_graph *g = kernels_and_a_collective(0);
    assert_rel(iteration(&rt_engine_simgrid, &t, g, NULL), 3 * MS, 1e-6);
    assert_rel(iteration(&rt_engine_analytic, &t, g, NULL), 3 * MS, 1e-6);
    rt_graph_free(g);
}

/* The four ranks as four nodes of one device, K consecutive nodes sharing 2 cores. */
static void fill_nodes_sharing_cores(rt_topology *t, int k)
{
    fill_topology(t, 2);
    t->node.devices = 1;
    t->node.cores_nodes = k;
    t->nodes = 4;
}

static void test_four_nodes_on_two_shared_cores(void **state)
{
    (void)state;
    rt_topology t;
    fill_nodes_sharing_cores(&t, 4);
    rt_graph *g = kernels_and_a_collective(0);
    assert_four_ranks_share_two_cores(&t, g);
    assert_true(iteration(&rt_engine_analytic, &t, g, NULL) < 0); /* 2 cores for 4 devices */
    fill_nodes_sharing_cores(&t, 2);
    assert_rel(iteration(&rt_engine_simgrid, &t, g, NULL), 3 * MS, 1e-6);
    assert_rel(iteration(&rt_engine_analytic, &t, g, NULL), 3 * MS, 1e-6);
    rt_graph_free(g);
}

/* node.core_slice 1 ms: the ranks of a core take turns of 1 ms (first come, first served),
 * a waiting rank gives its core up, and a rank needs its core back to leave a collective.
 * Core 0: rank 0 runs A 0-1, rank 1 1-2, rank 0 2-3 (A done at 3 ms, where even sharing says
 * 4), rank 1 3-4. Core 1: rank 2 runs A 0-1, rank 3 1-2. The AllReduce completes at 4 ms, when
 * rank 1 arrives. With B on ranks 0 and 2 only: one rank of each core takes its core back at
 * 4 ms, and B runs alone on each core, 4-5 ms: iteration 5 ms. With B (1 ms) on every rank: on
 * each core one rank leaves the AllReduce at 4 ms and runs B 4-5 (a whole turn), and the other
 * leaves it only at 5 ms, when it gets its core, and runs B 5-6: iteration 6 ms as with even
 * sharing, but every B lasts 1 ms (even sharing: 2 ms) and the AllReduce holds the wait. */
static void test_two_cores_in_turns(void **state)
{
    (void)state;
    rt_topology t;
    fill_topology(&t, 2);
    t.node.core_slice = 1 * MS;
    rt_graph *g = kernels_and_a_collective(0);
    double b_start = 0;
    assert_rel(iteration(&rt_engine_simgrid, &t, g, &b_start), 5 * MS, 1e-6);
    assert_rel(a_end_rank0, 3 * MS, 1e-6);
    assert_rel(b_start, 4 * MS, 1e-6);
    rt_graph_free(g);
    g = kernels_and_a_collective(1);
    assert_rel(iteration(&rt_engine_simgrid, &t, g, NULL), 6 * MS, 1e-6);
    assert_rel(allreduce_end, 5 * MS, 1e-6);
    assert_rel(longest_b, 1 * MS, 1e-6);
    t.node.core_slice = 0; /* even sharing */
    assert_rel(iteration(&rt_engine_simgrid, &t, g, NULL), 6 * MS, 1e-6);
    assert_rel(allreduce_end, 4 * MS, 1e-6);
    assert_rel(longest_b, 2 * MS, 1e-6);
    rt_graph_free(g);
}

/* The analytic engine cannot share cores over time: it refuses rather than guess. */
static void test_analytic_refuses_fewer_cores_than_devices(void **state)
{
    (void)state;
    rt_topology t;
    fill_topology(&t, 2);
    rt_graph *g = kernels_and_a_collective(0);
    assert_true(iteration(&rt_engine_analytic, &t, g, NULL) < 0);
    rt_graph_free(g);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_without_cores_each_device_computes_alone),
        cmocka_unit_test(test_two_cores_shared_by_four_ranks),
        cmocka_unit_test(test_one_core_per_rank_is_no_sharing),
        cmocka_unit_test(test_analytic_refuses_fewer_cores_than_devices),
        cmocka_unit_test(test_four_nodes_on_two_shared_cores),
        cmocka_unit_test(test_two_cores_in_turns),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
