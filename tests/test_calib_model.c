/* The calibrated cost model against hand-computed values: a layer decomposes into the launches
 * rectwin-exec makes (models/layer_ops.h), each launch is priced on its calibrated curve plus
 * the dispatch cost (sim/kernel_model.h), a window starts after the host's measured cost, a
 * collective takes its measured time and a one-rank collective none. The calibration below is
 * flat (every rate constant) so each expected time is a sum of amounts over one rate. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "calib.h"
#include "engine.h"
#include "engines.h"
#include "graph_query.h"
#include "kernel_model.h"
#include "layer_ops.h"
#include "pipeline.h"
#include "result.h"

static char dir[256], topo[320];

static const char *const calibration =
    "calibration:\n"
    "  date: x\n"
    "  host: test\n"
    "  device: flat test device\n"
    "  runs:\n"
    "    - ranks: 1\n"
    "      dispatch: 1us\n"
    "      host_per_iteration: 5us\n"
    "      gemm:\n"
    "        - {dtype: fp32, m: [1, 4096], n: [1, 4096], k: [1, 4096],\n"
    "           flops: [1e10, 1e10, 1e10, 1e10, 1e10, 1e10, 1e10, 1e10]}\n"
    "      kernels:\n"
    "        - {kernel: elementwise, bytes: [1, 1e12], bw: [1e9, 1e9]}\n"
    "        - {kernel: permute, bytes: [1, 1e12], bw: [2e9, 2e9]}\n"
    "        - {kernel: interaction, flops: [1, 1e12], rate: [4e9, 4e9]}\n"
    "        - {kernel: interaction_bwd, flops: [1, 1e12], rate: [4e9, 4e9]}\n"
    "        - {kernel: dense_adam, bytes: [1, 1e12], bw: [7e9, 7e9]}\n"
    "    - ranks: 2\n"
    "      dispatch: 1us\n"
    "      host_per_iteration: 5us\n"
    "      collectives:\n"
    "        - {op: allreduce, ranks: 2, bytes: [1000, 1000000], seconds: [1e-5, 1e-3]}\n";

static int setup(void **state)
{
    (void)state;
    snprintf(dir, sizeof dir, "/tmp/rt_test_calmodel_XXXXXX");
    if (!mkdtemp(dir)) return -1;
    snprintf(topo, sizeof topo, "%s/t.yaml", dir);
    char src[512], line[1024];
    snprintf(src, sizeof src, "%s/topologies/localhost-cpu.yaml", RT_SOURCE_DIR);
    FILE *in = fopen(src, "r"), *out = fopen(topo, "w");
    if (!in || !out) return -1;
    while (fgets(line, sizeof line, in))
        if (strncmp(line, "calibration:", 12) == 0)
            break; /* a calibrated file's own section is replaced */
        else
            fputs(line, out);
    fputs(calibration, out);
    fclose(in);
    fclose(out);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    return system(cmd) == 0 ? 0 : -1;
}

static void close_to(double got, double want)
{
    if (!(fabs(got - want) <= 1e-9 * fabs(want) + 1e-15))
        fail_msg("got %.12g, want %.12g", got, want);
}

/* exec-tiny (bottom mlp 5 -> 16 -> 8, dot of 7 vectors of 8, top mlp 29 -> 16 -> 1) on the
 * flat calibration, NODES ranks of batch 32. */
static void build(rt_pipeline *p, const char *nodes)
{
    char t[400], n[64];
    snprintf(t, sizeof t, "topology.file=%s", topo);
    snprintf(n, sizeof n, "topology.nodes=%s", nodes);
    const char *sets[] = {t, n, "workload.mode=exact"};
    if (rt_pipeline_run(p, RT_SOURCE_DIR "/tests/data/exec-tiny.yaml", sets, 3, stderr))
        fail_msg("pipeline failed");
}

static void mlp_pieces_by_hand(void **state)
{
    (void)state;
    rt_pipeline p;
    build(&p, "1");
    const rt_model *m = &p.scenario->model;
    rt_piece pc[64];
    /* bottom forward: two GEMMs (32, 16, 5) and (32, 8, 16) */
    int n = rt_layer_pieces(m, 0, 0, 32, 0, 0, pc, 64);
    assert_int_equal(n, 2);
    assert_int_equal(pc[0].kind, RT_PIECE_GEMM);
    close_to(pc[0].m, 32), close_to(pc[0].n, 16), close_to(pc[0].k, 5);
    close_to(pc[1].amount, 2.0 * 32 * 8 * 16);
    /* bottom backward, last linear first: activation gradient (12 B x 32 x 8), dW (8, 16, 32),
     * dX (32, 16, 8), bias (4 B x 32 x 8); the first linear has no dX (dense input) */
    n = rt_layer_pieces(m, 0, 1, 32, 0, 0, pc, 64);
    assert_int_equal(n, 4 + 3);
    close_to(pc[0].amount, 12.0 * 32 * 8);
    assert_int_equal(pc[1].kind, RT_PIECE_GEMM);
    close_to(pc[1].m, 8), close_to(pc[1].n, 16), close_to(pc[1].k, 32);
    close_to(pc[2].m, 32), close_to(pc[2].n, 16), close_to(pc[2].k, 8);
    close_to(pc[3].amount, 4.0 * 32 * 8);
    close_to(pc[5].m, 16), close_to(pc[5].n, 5), close_to(pc[5].k, 32);
    assert_int_equal(pc[6].kind, RT_PIECE_BYTES); /* bias of the first linear, no dX GEMM */
    /* dot forward: the concatenation of bottom and 6 tables (7 row copies), the kernel's
     * 32 x 7 x 6 x 8 FLOPs, the output's two row copies (the first vector, the 21 pairs) */
    n = rt_layer_pieces(m, 1, 0, 32, 0, 0, pc, 64);
    assert_int_equal(n, 7 + 1 + 2);
    assert_int_equal(pc[7].kind, RT_PIECE_FLOPS);
    assert_int_equal(pc[7].family, RT_CK_INTERACTION);
    close_to(pc[7].amount, 32.0 * 7 * 6 * 8);
    assert_int_equal(pc[0].family, RT_CK_PERMUTE);
    close_to(pc[0].amount, 32 * 8 * 8.0); /* a row copy: 8 B per float, no index */
    close_to(pc[8].amount, 32 * 8 * 8.0);
    close_to(pc[9].amount, 32 * 21 * 8.0);
    rt_pipeline_free(&p);
}

static void attention_backward_is_not_twice_forward(void **state)
{
    (void)state;
    rt_model m = {0};
    rt_layer l = {.kind = RT_LAYER_HSTU,
                  .num_layers = 1,
                  .heads = 2,
                  .d_qk = 4,
                  .d_v = 4,
                  .in_width = 8,
                  .in_vectors = 1,
                  .per_token = 1,
                  .needs_dx = 1};
    m.layers = &l, m.n_layers = 1;
    rt_piece pc[64];
    double fwd = 0, bwd = 0, pairs = 10; /* one sequence of 4 tokens: 4 x 5 / 2 */
    int n = rt_layer_pieces(&m, 0, 0, 4, pairs, 0, pc, 64);
    for (int i = 0; i < n; i++)
        if (pc[i].kind == RT_PIECE_FLOPS) fwd += pc[i].amount;
    n = rt_layer_pieces(&m, 0, 1, 4, pairs, 0, pc, 64);
    for (int i = 0; i < n; i++)
        if (pc[i].kind == RT_PIECE_FLOPS) bwd += pc[i].amount;
    close_to(fwd, 2 * pairs * 2 * (4 + 4));         /* q k^T, weighted sum of v */
    close_to(bwd, 2 * pairs * 2 * (3 * 4 + 2 * 4)); /* scores, dv, dS, dq, dk */
    close_to(bwd / fwd, 2.5);
    /* the count matches what a buffer of that size receives */
    assert_int_equal(rt_layer_pieces(&m, 0, 1, 4, pairs, 0, NULL, 0), n);
    assert_int_equal(rt_layer_pieces(&m, 0, 1, 4, pairs, 0, pc, 3), -1);
}

static void kernel_time_is_the_sum_of_launches(void **state)
{
    (void)state;
    rt_pipeline p;
    build(&p, "1");
    const rt_graph *g = p.graph;
    int bottom = must_find_op(g, "dense.fwd", "bottom");
    const rt_op_cost *c = rt_graph_cost(g, bottom, 0);
    assert_int_equal(c->n_pieces, 2);
    double t = 0;
    const char *why = NULL;
    assert_int_equal(rt_kernel_time(p.scenario, g, bottom, 0, &t, &why), 0);
    close_to(t, 2.0 * 32 * (5 * 16 + 16 * 8) / 1e10 + 2 * 1e-6);
    /* the interaction forward: 7 permutes and 3 elementwise passes, one FLOP piece */
    int dot = must_find_op(g, "dense.fwd", "interaction");
    c = rt_graph_cost(g, dot, 0);
    double want = 0;
    for (int i = 0; i < c->n_pieces; i++) {
        const rt_piece *x = &c->pieces[i];
        want += x->amount / (x->kind == RT_PIECE_FLOPS    ? 4e9
                             : x->family == RT_CK_PERMUTE ? 2e9
                                                          : 1e9) +
                1e-6;
    }
    assert_int_equal(rt_kernel_time(p.scenario, g, dot, 0, &t, &why), 0);
    close_to(t, want);
    /* An op without pieces: the dense optimizer, its bytes on dense_adam's curve. */
    int up = must_find_op(g, "dense.update", NULL);
    assert_int_equal(rt_kernel_time(p.scenario, g, up, 0, &t, &why), 0);
    close_to(t, rt_graph_cost(g, up, 0)->bytes / 7e9 + 1e-6);
    rt_pipeline_free(&p);
}

/* `node.cores` (the engine shares the host cores itself, sim/simgrid_cores.c): a kernel is
 * priced at the rate of one rank alone, the run measured with 1 rank, whatever the scenario's
 * rank count. The 2-rank run above has no GEMM grid, so without the key the bottom MLP of a
 * 2-rank scenario falls back to the roofline (localhost-cpu: 100 GFLOP/s x 0.5). */
static void cores_price_kernels_alone(void **state)
{
    (void)state;
    char t[400];
    snprintf(t, sizeof t, "topology.file=%s", topo);
    double flops = 2.0 * 32 * (5 * 16 + 16 * 8), got[2];
    for (int cores = 0; cores < 2; cores++) {
        const char *sets[] = {t, "topology.nodes=2", "workload.mode=exact",
                              "topology.node.cores=2"};
        rt_pipeline p;
        if (rt_pipeline_run(&p, RT_SOURCE_DIR "/tests/data/exec-tiny.yaml", sets, 3 + cores,
                            stderr))
            fail_msg("pipeline failed");
        assert_int_equal(p.scenario->topology.node.cores, cores ? 2 : 0);
        int bottom = must_find_op(p.graph, "dense.fwd", "bottom");
        const char *why = NULL;
        assert_int_equal(rt_kernel_time(p.scenario, p.graph, bottom, 0, &got[cores], &why), 0);
        rt_pipeline_free(&p);
    }
    close_to(got[0], flops / (100e9 * 0.5) + 2 * 1e-6);
    close_to(got[1], flops / 1e10 + 2 * 1e-6);

    /* Without a 1-rank run there is no alone rate: refused, not priced on a shared curve. */
    char topo2[400], t2[420], line[1024];
    snprintf(topo2, sizeof topo2, "%s/no-alone.yaml", dir);
    FILE *in = fopen(topo, "r"), *out = fopen(topo2, "w");
    assert_non_null(in);
    assert_non_null(out);
    int skip = 0;
    while (fgets(line, sizeof line, in)) {
        if (strstr(line, "- ranks: 1")) skip = 1;
        if (strstr(line, "- ranks: 2")) skip = 0;
        if (!skip) fputs(line, out);
    }
    fclose(in);
    fclose(out);
    snprintf(t2, sizeof t2, "topology.file=%s", topo2);
    const char *sets[] = {t2, "topology.nodes=2", "workload.mode=exact", "topology.node.cores=2"};
    rt_pipeline p;
    if (rt_pipeline_run(&p, RT_SOURCE_DIR "/tests/data/exec-tiny.yaml", sets, 4, stderr))
        fail_msg("pipeline failed");
    int bottom = must_find_op(p.graph, "dense.fwd", "bottom");
    const char *why = NULL;
    double x;
    assert_int_equal(rt_kernel_time(p.scenario, p.graph, bottom, 0, &x, &why), -1);
    assert_non_null(strstr(why, "no 1-rank run"));
    rt_pipeline_free(&p);
}

static void windows_collectives_and_one_rank(void **state)
{
    (void)state;
    for (int nodes = 1; nodes <= 2; nodes++) {
        rt_pipeline p;
        build(&p, nodes == 1 ? "1" : "2");
        const rt_graph *g = p.graph;
        rt_result *r = rt_result_new(g, "analytic");
        assert_non_null(r);
        assert_int_equal(rt_engine_find("analytic")->run(p.scenario, g, r, stderr), 0);
        /* the first op starts after the host's cost of a window */
        close_to(r->start[0], 5e-6);
        int ar = must_find_op(g, "dense.allreduce", NULL);
        double dur = r->end[(long)ar * g->n_reps] - r->start[(long)ar * g->n_reps];
        double bytes = rt_graph_cost(g, ar, 0)->bytes;
        if (nodes == 1) {
            close_to(dur + 1, 1); /* a one-rank collective costs nothing */
        } else {
            /* log-log between (1000 B, 10 us) and (1 MB, 1 ms): t = 1e-5 (B / 1000)^(2/3) */
            assert_true(bytes > 1000 && bytes < 1e6);
            close_to(dur, 1e-5 * pow(bytes / 1000, 2.0 / 3));
        }
        rt_result_free(r);
        rt_pipeline_free(&p);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(mlp_pieces_by_hand),
        cmocka_unit_test(attention_backward_is_not_twice_forward),
        cmocka_unit_test(kernel_time_is_the_sum_of_launches),
        cmocka_unit_test(cores_price_kernels_alone),
        cmocka_unit_test(windows_collectives_and_one_rank),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
