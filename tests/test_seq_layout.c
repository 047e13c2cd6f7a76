/* workload.sequence_layout on the toy HSTU scenario (tests/data/exec-tiny-hstu.yaml: 4 ranks x
 * 4 samples, lognormal lengths 2..16, one item table of dim 8, one HSTU block of 2 heads with
 * d_qk = d_v = 4): padded, every sample costs what the longest of its rank's batch costs, two
 * layout conversions join the graph, useful FLOPs (MFU's numerator) do not move, and the
 * activation memory grows by the padding. Hand arithmetic of the block, per sample of L
 * tokens: u, v, q, k projection 2 x 8 x 2 x (4 + 4 + 4 + 4) = 512 FLOPs per token, output
 * projection 2 x (2 x 4) x 8 = 128 per token, causal attention L (L + 1) x 2 x (4 + 4). */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "pipeline.h"
#include "plan_common.h"

#define SCEN RT_SOURCE_DIR "/tests/data/exec-tiny-hstu.yaml"

static double block_flops(double L)
{
    return 640 * L + 16 * L * (L + 1);
}

static void build(rt_pipeline *p, const char *layout)
{
    char set[64];
    snprintf(set, sizeof set, "workload.sequence_layout=%s", layout);
    const char *sets[] = {set};
    if (rt_pipeline_run(p, SCEN, sets, 1, stderr)) fail_msg("pipeline failed");
}

static int find(const rt_graph *g, rt_role role, int layer)
{
    for (int o = 0; o < g->n_ops; o++)
        if (g->ops[o].role == role && (layer < 0 || g->ops[o].layer == layer)) return o;
    return -1;
}

static void lengths(const rt_pipeline *p, int r, double *real, double *longest, int *batch)
{
    const rt_feature_batch *fb = rt_workload_batch(p->workload, r, 0);
    *real = 0, *longest = 0, *batch = fb->batch;
    for (int i = 0; i < fb->batch; i++) {
        *real += fb->lengths[i];
        *longest = fmax(*longest, fb->lengths[i]);
    }
}

static void padded_costs_the_longest_sequence(void **state)
{
    (void)state;
    rt_pipeline j, p;
    build(&j, "jagged");
    build(&p, "padded");
    const rt_graph *gj = j.graph, *gp = p.graph;
    assert_int_equal(gp->n_ops, gj->n_ops + 2);
    assert_int_equal(find(gj, RT_ROLE_SEQ_PAD, -1), -1);
    int pad = find(gp, RT_ROLE_SEQ_PAD, -1), unpad = find(gp, RT_ROLE_SEQ_UNPAD, -1);
    int fj = find(gj, RT_ROLE_DENSE_FWD, 0), fp = find(gp, RT_ROLE_DENSE_FWD, 0);
    assert_true(pad >= 0 && unpad >= 0);
    /* The first layer waits for the padded block; the exchanges' backward for the unpad. */
    assert_int_equal(gp->ops[fp].n_deps, 1);
    assert_int_equal(rt_graph_deps(gp, fp)[0], pad);
    int bj = find(gj, RT_ROLE_DENSE_BWD, 0), bp = find(gp, RT_ROLE_DENSE_BWD, 0);
    int grad_a2a = find(gp, RT_ROLE_GRAD_A2A, -1);
    assert_int_equal(rt_graph_deps(gp, unpad)[0], bp);
    int waits = 0;
    for (int d = 0; d < gp->ops[grad_a2a].n_deps; d++)
        waits |= rt_graph_deps(gp, grad_a2a)[d] == unpad;
    assert_true(waits);
    int longer = 0;
    for (int r = 0; r < gp->n_reps; r++) {
        double real, L;
        int B;
        lengths(&p, r, &real, &L, &B);
        double jag = 0;
        const rt_feature_batch *fb = rt_workload_batch(p.workload, r, 0);
        for (int i = 0; i < B; i++)
            jag += block_flops(fb->lengths[i]);
        assert_true(fabs(rt_graph_cost(gj, fj, r)->flops - jag) < 1e-9 * jag);
        assert_true(fabs(rt_graph_cost(gp, fp, r)->flops - B * block_flops(L)) < 1e-9 * jag);
        assert_true(fabs(rt_graph_cost(gp, bp, r)->flops - 2 * B * block_flops(L)) < 1e-9 * jag);
        assert_true(fabs(rt_graph_cost(gj, bj, r)->flops - 2 * jag) < 1e-9 * jag);
        /* fp32 tokens of width 8: pad reads the real ones and writes B x L; unpad moves the
         * real ones' gradients. */
        assert_true(rt_graph_cost(gp, pad, r)->bytes == (real + B * L) * 8 * 4);
        assert_true(rt_graph_cost(gp, unpad, r)->bytes == 2 * real * 8 * 4);
        assert_int_equal(rt_plan_padded_len(p.scenario, p.workload, r), (int)L);
        /* Activations: the layer's per-token polynomial at L for every sample, and the padded
         * input block itself. */
        rt_poly a = p.scenario->model.act_bytes;
        double act = B * rt_poly_eval(a, L) + B * L * 8 * 4;
        assert_true(fabs(rt_plan_activation_memory(p.scenario, p.workload, r) - act) < 1e-6);
        longer += B * L > real;
    }
    assert_true(longer > 0); /* the lognormal lengths differ, so padding costs something */
    /* MFU counts useful work only: padding adds none. */
    assert_true(gj->model_flops == gp->model_flops);
    rt_pipeline_free(&j);
    rt_pipeline_free(&p);
}

static void padded_needs_sequences(void **state)
{
    (void)state;
    const char *sets[] = {"workload.sequence_layout=padded"};
    rt_pipeline p;
    char buf[4096] = {0};
    FILE *err = fmemopen(buf, sizeof buf - 1, "w");
    assert_int_equal(rt_pipeline_run(&p, RT_SOURCE_DIR "/tests/data/exec-tiny.yaml", sets, 1, err),
                     -1);
    fclose(err);
    assert_non_null(strstr(buf, "sequence_layout"));
    assert_non_null(strstr(buf, "allowed: jagged"));
    rt_pipeline_free(&p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(padded_costs_the_longest_sequence),
        cmocka_unit_test(padded_needs_sequences),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
