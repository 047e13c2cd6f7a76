/* Analytic engine: critical path over streams, dependencies and group synchronization on
 * hand-made graphs, and the metrics derived from it, against hand-computed values. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "engines.h"

#define assert_close(a, b) assert_true(fabs((a) - (b)) <= 1e-12 * fabs(b) + 1e-15)

/* One node of two devices. Kernels: 1e12 FLOP/s x 0.5, 1e12 B/s x 0.5, 1 us launch.
 * Collectives: 100e9 B/s NVLink at efficiency 1, 1 us per hop, 2 us base latency. */
static void fill_scenario(rt_scenario *s, int nodes, int devices)
{
    memset(s, 0, sizeof *s);
    rt_topology *t = &s->topology;
    t->device.peak_flops[RT_DT_FP32] = 1e12;
    t->device.hbm_bw = 1e12;
    t->device.eff_flops = 0.5;
    t->device.eff_hbm = 0.5;
    t->device.launch_overhead = 1e-6;
    t->node.devices = devices;
    t->node.scale_up = RT_SCALEUP_NVSWITCH;
    t->node.scale_up_bw = 100e9;
    t->node.scale_up_latency = 1e-6;
    t->net.nics_per_node = devices;
    t->net.nic_bw = 25e9;
    t->net.nic_latency = 2e-6;
    t->net.rail_optimized = 1;
    t->net.levels = 1;
    t->net.radix = 64;
    t->net.oversubscription = 1;
    t->net.switch_latency = 1e-6;
    t->coll.eff_intra = 1.0;
    t->coll.eff_inter = 1.0;
    t->coll.base_latency = 2e-6;
    t->nodes = nodes;
    s->workload.batch_per_rank = 32;
    s->plan.dense_dtype = RT_DT_FP32;
}

static void set_cost(rt_graph *g, int op, int rep, double flops, double bytes)
{
    rt_op_cost *c = rt_graph_cost(g, op, rep);
    c->flops = flops;
    c->bytes = bytes;
}

/* op0 dense.fwd kernel (compute): 1e9 / 2e9 FLOPs on rank 0 / 1 -> 2.001 ms / 4.001 ms.
 * op1 all-reduce of 1e8 B (comm stream, after op0), ring of 2 in one node: 2 steps of 5e7 B
 *     at 100e9 = 1 ms, + 2 hops x 1 us + 2 us base = 1.004 ms; both ranks start together at
 *     the later ready time 4.001 ms and end at 5.005 ms.
 * op2 emb.fwd.lookup kernel (compute, no deps): 1e9 B -> 2 ms + 1 us, queued after op0:
 *     rank 0 [2.001, 4.002], rank 1 [4.001, 6.002] ms: it overlaps the all-reduce.
 * op3 dense.bwd kernel after op1 and op2 (if CHAINED, op2 also waits for op1):
 *     1e8 FLOPs (0.2 ms) and 2e8 B (0.4 ms): memory-bound, 0.401 ms. */
static rt_graph *two_stream_graph(int chained)
{
    rt_graph *g = rt_graph_new(2, 2, NULL, NULL);
    int d0[] = {0}, d1[] = {1}, d3[] = {1, 2};
    int op0 = rt_graph_add_kernel(g, "dense.fwd", RT_STREAM_COMPUTE, RT_K_DENSE_FWD, RT_DT_FP32,
                                  "mlp_fwd", NULL, 0);
    int op1 = rt_graph_add_collective(g, "dense.allreduce", RT_STREAM_COMM, RT_COLL_ALLREDUCE,
                                      RT_ALGO_RING, (rt_group){2, 1}, "grad_ar", d0, 1);
    int op2 = rt_graph_add_kernel(g, "emb.fwd.lookup", RT_STREAM_COMPUTE, RT_K_LOOKUP, RT_DT_FP32,
                                  "lookup", chained ? d1 : NULL, chained ? 1 : 0);
    int op3 = rt_graph_add_kernel(g, "dense.bwd", RT_STREAM_COMPUTE, RT_K_DENSE_BWD, RT_DT_FP32,
                                  "mlp_bwd", d3, 2);
    for (int rep = 0; rep < 2; rep++) {
        set_cost(g, op0, rep, rep ? 2e9 : 1e9, 0);
        set_cost(g, op1, rep, 0, 1e8);
        set_cost(g, op2, rep, 0, 1e9);
        set_cost(g, op3, rep, 1e8, 2e8);
    }
    g->model_flops = 3e9;
    return g;
}

static rt_result *run(const rt_scenario *s, const rt_graph *g)
{
    const rt_engine *e = rt_engine_find("analytic");
    assert_non_null(e);
    rt_result *r = rt_result_new(g, e->name);
    assert_non_null(r);
    assert_int_equal(e->run(s, g, r, stderr), 0);
    rt_result_finish(r, s);
    return r;
}

#define START(r, op, rep) ((r)->start[(op) * (r)->graph->n_reps + (rep)])
#define END(r, op, rep) ((r)->end[(op) * (r)->graph->n_reps + (rep)])

static void critical_path(void **state)
{
    (void)state;
    rt_scenario s;
    fill_scenario(&s, 1, 2);
    rt_graph *g = two_stream_graph(0);
    rt_result *r = run(&s, g);
    assert_close(END(r, 0, 0), 2.001e-3);
    assert_close(END(r, 0, 1), 4.001e-3);
    /* The all-reduce runs from rank 1's arrival; rank 0 arrived at 2.001 ms and waits in it. */
    assert_close(START(r, 1, 0), 2.001e-3);
    assert_close(START(r, 1, 1), 4.001e-3);
    for (int rep = 0; rep < 2; rep++) {
        assert_close(END(r, 1, rep), 5.005e-3);
        assert_int_equal(r->algo[1 * 2 + rep], RT_ALGO_RING);
    }
    assert_close(START(r, 2, 0), 2.001e-3);
    assert_close(END(r, 2, 0), 4.002e-3);
    assert_close(START(r, 2, 1), 4.001e-3);
    assert_close(END(r, 2, 1), 6.002e-3);
    assert_close(START(r, 3, 0), 5.005e-3);
    assert_close(END(r, 3, 0), 5.406e-3);
    assert_close(START(r, 3, 1), 6.002e-3);
    assert_close(END(r, 3, 1), 6.403e-3);
    assert_close(r->iteration_time_s, 6.403e-3);
    /* Rank 0 is in the all-reduce from 2.001 ms (its arrival) to 5.005 ms, the most any rank
     * spends in collectives; op2 covers it until 4.002 ms: 1.003 ms exposed, the maximum (rank
     * 1's 1.004 ms all-reduce is fully hidden under its op2). */
    assert_close(r->comm_time_s, 3.004e-3);
    assert_close(r->exposed_comm_s, 1.003e-3);
    assert_non_null(r->settings_json);
    assert_non_null(strstr(r->settings_json, "\"eff_intra\""));
    rt_result_free(r);
    rt_graph_free(g);
}

static void no_overlap(void **state)
{
    (void)state;
    rt_scenario s;
    fill_scenario(&s, 1, 2);
    rt_graph *g = two_stream_graph(1);
    rt_result *r = run(&s, g);
    /* op2 waits for the all-reduce: nothing hides it on either rank, and rank 0 is in it from
     * 2.001 ms (its arrival) to 5.005 ms, 2 ms of them waiting for rank 1. */
    assert_close(START(r, 2, 0), 5.005e-3);
    assert_close(END(r, 2, 1), 7.006e-3);
    assert_close(r->exposed_comm_s, 3.004e-3);
    assert_close(r->iteration_time_s, 7.407e-3);
    rt_result_free(r);
    rt_graph_free(g);
}

static void metrics(void **state)
{
    (void)state;
    rt_scenario s;
    fill_scenario(&s, 1, 2);
    rt_graph *g = two_stream_graph(0);
    g->peak_hbm_bytes[0] = 1e9;
    g->peak_hbm_bytes[1] = 3e9;
    rt_result *r = run(&s, g);
    double it = 6.403e-3;
    assert_close(r->samples_per_s, 32.0 * 2 / it);
    assert_close(r->mfu, 3e9 / (it * 2 * 1e12));
    /* Memory-bound kernels: op2 (2.001 ms per rank) and op3 (0.401 ms per rank). */
    assert_close(r->mbu, (2 * 1e9 + 2 * 2e8) / ((2 * 2.001e-3 + 2 * 0.401e-3) * 1e12));
    assert_close(r->mbu_sparse, 2e9 / (2 * 2.001e-3 * 1e12));
    assert_close(r->peak_hbm_bytes, 3e9);
    /* Phases: slowest rank per phase; rank 0's all-reduce holds its 2 ms wait for rank 1. */
    assert_int_equal(r->n_phases, 4);
    assert_close(r->phase_s[rt_graph_phase(g, "dense.fwd")], 4.001e-3);
    assert_close(r->phase_s[rt_graph_phase(g, "dense.allreduce")], 3.004e-3);
    assert_close(r->phase_s[rt_graph_phase(g, "emb.fwd.lookup")], 2.001e-3);
    assert_close(r->phase_s[rt_graph_phase(g, "dense.bwd")], 0.401e-3);
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    rt_result_print(r, &s, f);
    fclose(f);
    assert_non_null(strstr(text, "6.403 ms"));
    assert_non_null(strstr(text, "emb.fwd.lookup"));
    free(text);
    rt_result_free(r);
    rt_graph_free(g);
}

/* Statistical mode: ranks 0 and 8 stand for 8 ranks each on two 8-device nodes. A node-local
 * all-reduce puts them in different instances (each keeps its own times); a world one joins
 * them. */
static void group_instances(void **state)
{
    (void)state;
    rt_scenario s;
    fill_scenario(&s, 2, 8);
    int reps[] = {0, 8};
    double w[] = {8, 8};
    rt_graph *g = rt_graph_new(16, 2, reps, w);
    int d0[] = {0};
    int k = rt_graph_add_kernel(g, "dense.fwd", RT_STREAM_COMPUTE, RT_K_DENSE_FWD, RT_DT_FP32,
                                "fwd", NULL, 0);
    int local = rt_graph_add_collective(g, "dense.allreduce", RT_STREAM_COMM, RT_COLL_ALLREDUCE,
                                        RT_ALGO_RING, (rt_group){8, 1}, "node_ar", d0, 1);
    int world = rt_graph_add_collective(g, "dense.allreduce", RT_STREAM_COMM, RT_COLL_ALLREDUCE,
                                        RT_ALGO_AUTO, (rt_group){16, 1}, "world_ar", NULL, 0);
    set_cost(g, k, 0, 1e9, 0); /* 2.001 ms */
    set_cost(g, k, 1, 0, 0);   /* launch only: 1 us */
    set_cost(g, local, 0, 0, 8e6);
    set_cost(g, local, 1, 0, 8e6);
    set_cost(g, world, 0, 0, 1024);
    set_cost(g, world, 1, 0, 1024);
    rt_result *r = run(&s, g);
    /* Ring of 8 in a node: 14 steps of 1e6 B at 100e9 = 140 us, + 14 us hops + 2 us base. */
    double ring = 14 * 1e6 / 100e9 + 14e-6 + 2e-6;
    assert_close(START(r, local, 0), 2.001e-3);
    assert_close(START(r, local, 1), 1e-6);
    assert_close(END(r, local, 1), 1e-6 + ring);
    /* The world all-reduce (tree for 1 KiB over 2 nodes) runs after rank 0's ring; rank 8
     * arrives after its own ring and waits. */
    assert_close(START(r, world, 0), 2.001e-3 + ring);
    assert_close(START(r, world, 1), 1e-6 + ring);
    assert_true(END(r, world, 1) > 2.001e-3 + ring);
    assert_close(END(r, world, 0), END(r, world, 1));
    assert_int_equal(r->algo[world * 2 + 0], RT_ALGO_TREE);
    rt_result_free(r);
    rt_graph_free(g);
}

static void errors(void **state)
{
    (void)state;
    rt_scenario s;
    fill_scenario(&s, 1, 2);
    const rt_engine *e = rt_engine_find("analytic");
    assert_null(rt_engine_find("nope"));
    assert_non_null(e);
    assert_string_equal(e->name, "analytic");
    rt_graph *g = rt_graph_new(2, 2, NULL, NULL);
    int op = rt_graph_add_kernel(g, "dense.fwd", RT_STREAM_COMPUTE, RT_K_DENSE_FWD, RT_DT_BF16,
                                 "bf16_gemm", NULL, 0);
    set_cost(g, op, 0, 1e9, 0);
    rt_result *r = rt_result_new(g, "analytic");
    char *msg = NULL;
    size_t len = 0;
    FILE *err = open_memstream(&msg, &len);
    assert_int_equal(e->run(&s, g, r, err), -1); /* no bf16 peak in this topology */
    s.topology.nodes = 3;                        /* 6 ranks, graph has 2 */
    assert_int_equal(e->run(&s, g, r, err), -1);
    fclose(err);
    assert_non_null(strstr(msg, "bf16_gemm"));
    assert_non_null(strstr(msg, "world size"));
    free(msg);
    rt_result_free(r);
    rt_graph_free(g);
}

/* 16384 GPUs in statistical mode: 8 representatives, 20 ops of which 6 alltoallv with
 * 16384-entry per-peer arrays. */
static void scale(void **state)
{
    (void)state;
    rt_scenario s;
    fill_scenario(&s, 2048, 8);
    int reps[8];
    double w[8];
    for (int i = 0; i < 8; i++)
        reps[i] = i * 2047, w[i] = 2048;
    int n = 16384;
    rt_graph *g = rt_graph_new(n, 8, reps, w);
    int prev = -1;
    for (int i = 0; i < 20; i++) {
        int deps[] = {prev};
        int op = i % 3 == 0 ? rt_graph_add_collective(g, "emb.fwd.ids_a2a", RT_STREAM_COMM,
                                                      RT_COLL_ALLTOALLV, RT_ALGO_AUTO,
                                                      (rt_group){n, 1}, "a2a", deps, prev >= 0)
                            : rt_graph_add_kernel(g, "dense.fwd", RT_STREAM_COMPUTE, RT_K_DENSE_FWD,
                                                  RT_DT_FP32, "k", deps, prev >= 0);
        for (int rep = 0; rep < 8; rep++) {
            rt_op_cost *c = rt_graph_cost(g, op, rep);
            if (g->ops[op].type == RT_OP_KERNEL) {
                c->flops = 1e9;
                continue;
            }
            c->send = rt_graph_peer_bytes(g, n);
            c->recv = rt_graph_peer_bytes(g, n);
            for (int k = 0; k < n; k++)
                c->send[k] = c->recv[k] = 4096 + k % 7;
            c->bytes = 4096.0 * n;
        }
        prev = op;
    }
    /* The engine's speed is measured by experiments/bench/analytic-scale.sh, not here: this
     * checks the scale case is right. Every AlltoAll synchronizes the 8 representatives (one
     * group instance: the world), so they all leave it together, and the chain makes the
     * iteration end at the last op's end. */
    rt_result *r = run(&s, g);
    for (int op = 0; op < g->n_ops; op++) {
        if (g->ops[op].type != RT_OP_COLLECTIVE) continue;
        for (int rep = 1; rep < 8; rep++)
            assert_true(r->end[(long)op * 8 + rep] == r->end[(long)op * 8]);
    }
    double last = 0;
    for (int rep = 0; rep < 8; rep++)
        last = fmax(last, r->end[(long)(g->n_ops - 1) * 8 + rep]);
    assert_true(r->iteration_time_s == last);
    assert_true(r->iteration_time_s > 0);
    rt_result_free(r);
    rt_graph_free(g);
}

/* A host-to-device copy runs at the host link's rate: 1e8 B over 10e9 B/s = 10 ms, plus the
 * host link latency (5 us) and the launch overhead (1 us), not at the HBM rate (0.2 ms). */
static void h2d_uses_host_link(void **state)
{
    (void)state;
    rt_scenario s;
    fill_scenario(&s, 1, 1);
    s.topology.node.host_bw = 10e9;
    s.topology.node.host_latency = 5e-6;
    rt_graph *g = rt_graph_new(1, 1, NULL, NULL);
    int op =
        rt_graph_add_kernel(g, "input.h2d", RT_STREAM_COPY, RT_K_H2D, RT_DT_FP32, "h2d", NULL, 0);
    set_cost(g, op, 0, 0, 1e8);
    rt_result *r = run(&s, g);
    assert_true(fabs(r->end[0] - r->start[0] - (1e-2 + 5e-6 + 1e-6)) < 1e-12);
    rt_result_free(r);
    rt_graph_free(g);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(critical_path),   cmocka_unit_test(h2d_uses_host_link),
        cmocka_unit_test(no_overlap),      cmocka_unit_test(metrics),
        cmocka_unit_test(group_instances), cmocka_unit_test(errors),
        cmocka_unit_test(scale),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
