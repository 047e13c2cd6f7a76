/* plan.attention (MTGRBoost, seed 000: fused HSTU attention; core/scenario.h, models/layer_ops.h)
 * on tests/data/exec-tiny-hstu.yaml: 4 ranks, fp32, one HSTU block of 2 heads over jagged
 * sequences. Hand count: a sample of L tokens has L(L+1)/2 causal (query, key) pairs; unfused,
 * each head's score matrix makes 4 passes in the forward (S written, S read and P written by
 * the bias + SiLU pass, P read by P x V) and 7 in the backward (dP written; P read for dV; dP
 * and S read and dS written by the SiLU backward; dS read for dQ and for dK), 4 bytes each. FuXi
 * (exec-tiny-fuxi-model.yaml) adds, per head, for its position and time channels 2 passes
 * forward and 3 backward each. The fused kernel makes none. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "layer_ops.h"
#include "pipeline.h"

#define SCEN RT_SOURCE_DIR "/tests/data/exec-tiny-hstu.yaml"

static void build(rt_pipeline *p, const char *attention, const char *model)
{
    char a[64], m[128];
    snprintf(a, sizeof a, "plan.attention=%s", attention);
    snprintf(m, sizeof m, "model.file=%s", model);
    const char *sets[] = {m, a};
    if (rt_pipeline_run(p, SCEN, sets, 2, stderr)) fail_msg("pipeline failed");
}

/* The dense op of layer L, forward or backward. */
static int dense_op(const rt_graph *g, int l, int bwd)
{
    for (int o = 0; o < g->n_ops; o++)
        if (g->ops[o].role == (bwd ? RT_ROLE_DENSE_BWD : RT_ROLE_DENSE_FWD) && g->ops[o].layer == l)
            return o;
    fail_msg("no dense op for layer %d", l);
    return -1;
}

/* Causal pairs of rep R's samples, from their sequence lengths (table 0 is the sequence). */
static double pairs_of(const rt_pipeline *p, int r)
{
    const rt_feature_batch *fb = rt_workload_batch(p->workload, r, 0);
    double n = 0;
    for (int i = 0; i < fb->batch; i++)
        n += (double)fb->lengths[i] * (fb->lengths[i] + 1) / 2;
    return n;
}

static double piece_bytes(const rt_model *m, int l, int bwd, double pairs, int unfused)
{
    rt_piece pc[256];
    int n = rt_layer_pieces(m, l, bwd, 64, pairs, unfused, pc, 256);
    assert_true(n > 0);
    double b = 0;
    for (int i = 0; i < n; i++)
        if (pc[i].kind == RT_PIECE_BYTES) b += pc[i].amount;
    return b;
}

static void check(const char *model, double fwd_passes, double bwd_passes)
{
    rt_pipeline f, u;
    build(&f, "fused", model);
    build(&u, "unfused", model);
    const rt_model *m = &u.scenario->model;
    assert_int_equal(m->layers[0].kind, strstr(model, "fuxi") ? RT_LAYER_FUXI : RT_LAYER_HSTU);
    assert_true(rt_layer_score_passes(&m->layers[0], 0) == fwd_passes);
    assert_true(rt_layer_score_passes(&m->layers[0], 1) == bwd_passes);
    for (int bwd = 0; bwd < 2; bwd++) {
        int of = dense_op(f.graph, 0, bwd), ou = dense_op(u.graph, 0, bwd);
        double passes = bwd ? bwd_passes : fwd_passes;
        for (int r = 0; r < 4; r++) {
            double pairs = pairs_of(&u, r);
            assert_true(pairs > 0);
            const rt_op_cost *cf = rt_graph_cost(f.graph, of, r),
                             *cu = rt_graph_cost(u.graph, ou, r);
            assert_true(cu->bytes - cf->bytes == 4 * passes * pairs);
            assert_true(cu->flops == cf->flops);
            /* The calibrated launches carry the same bytes (fp32 as exec runs them). */
            assert_true(piece_bytes(m, 0, bwd, pairs, 1) - piece_bytes(m, 0, bwd, pairs, 0) ==
                        4 * passes * pairs);
        }
    }
    /* Layers without attention are unchanged. */
    for (int l = 1; l < m->n_layers; l++)
        assert_true(rt_layer_score_passes(&m->layers[l], 0) == 0);
    rt_pipeline_free(&f);
    rt_pipeline_free(&u);
}

static void hstu_score_round_trips(void **state)
{
    (void)state;
    check("exec-tiny-hstu-model.yaml", 1 * 2 * 4, 1 * 2 * 7);
}

static void fuxi_score_round_trips(void **state)
{
    (void)state;
    rt_pipeline p;
    build(&p, "fused", "exec-tiny-fuxi-model.yaml");
    const rt_layer *l = &p.scenario->model.layers[0];
    double B = l->num_layers, H = l->heads;
    rt_pipeline_free(&p);
    check("exec-tiny-fuxi-model.yaml", B * H * (4 + 2 * 2), B * H * (7 + 2 * 3));
}

static void refusal(void **state)
{
    (void)state;
    rt_pipeline p;
    char buf[4096] = {0};
    FILE *err = fmemopen(buf, sizeof buf - 1, "w");
    const char *sets[] = {"plan.attention=split"};
    assert_int_equal(rt_pipeline_run(&p, SCEN, sets, 1, err), -1);
    fclose(err);
    if (!strstr(buf, "fused") || !strstr(buf, "unfused")) fail_msg("%s", buf);
    rt_pipeline_free(&p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(hstu_score_round_trips),
        cmocka_unit_test(fuxi_score_round_trips),
        cmocka_unit_test(refusal),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
