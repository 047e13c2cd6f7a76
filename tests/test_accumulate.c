/* plan.grad_accum on the toy HSTU scenario (tests/data/exec-tiny-hstu.yaml: 4 ranks x 4
 * samples, lognormal lengths, flat table-wise): k micro-batches give k copies of the forward
 * and backward, each costed on its own slice of the batch, and one gradient AlltoAll, sparse
 * update, dense AllReduce and dense step at the whole batch's cost; the micro-batches' dense
 * FLOPs and exchanged bytes add up to the whole batch's; activations are those of the largest
 * micro-batch (and so are the sampled-softmax negatives). Per sample of L tokens the HSTU block
 * does 640 L + 16 L (L + 1) forward FLOPs (tests/test_seq_layout.c has the arithmetic). */
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

static void build(rt_pipeline *p, int k, const char *extra)
{
    char set[64];
    snprintf(set, sizeof set, "plan.grad_accum=%d", k);
    const char *sets[] = {set, extra};
    if (rt_pipeline_run(p, SCEN, sets, extra ? 2 : 1, stderr)) fail_msg("pipeline failed");
}

static int count_role(const rt_graph *g, rt_role role)
{
    int n = 0;
    for (int o = 0; o < g->n_ops; o++)
        n += g->ops[o].role == role;
    return n;
}

static double role_sum(const rt_graph *g, rt_role role, int r, int flops)
{
    double t = 0;
    for (int o = 0; o < g->n_ops; o++)
        if (g->ops[o].role == role)
            t += flops ? rt_graph_cost(g, o, r)->flops : rt_graph_cost(g, o, r)->bytes;
    return t;
}

static void micro_batches_then_one_update(void **state)
{
    (void)state;
    rt_pipeline one, two;
    build(&one, 1, NULL);
    build(&two, 2, NULL);
    const rt_graph *a = one.graph, *b = two.graph;
    static const rt_role once[] = {RT_ROLE_GRAD_A2A, RT_ROLE_SPARSE_UPDATE, RT_ROLE_DENSE_ALLREDUCE,
                                   RT_ROLE_DENSE_UPDATE};
    static const rt_role twice[] = {RT_ROLE_ROUTE,   RT_ROLE_IDS_A2A,  RT_ROLE_LOOKUP,
                                    RT_ROLE_OUT_A2A, RT_ROLE_RECOVER,  RT_ROLE_DENSE_FWD,
                                    RT_ROLE_LOSS,    RT_ROLE_DENSE_BWD};
    for (size_t i = 0; i < sizeof once / sizeof *once; i++)
        assert_int_equal(count_role(b, once[i]), count_role(a, once[i]));
    for (size_t i = 0; i < sizeof twice / sizeof *twice; i++)
        assert_int_equal(count_role(b, twice[i]), 2 * count_role(a, twice[i]));
    assert_int_equal(b->n_ops, 2 * a->n_ops - 4);
    for (int r = 0; r < a->n_reps; r++) {
        const rt_feature_batch *fb = rt_workload_batch(one.workload, r, 0);
        /* Sampled softmax keeps 8 negatives of 8 fp32 values and an fp32 logit per token. */
        double fl = 0, act[2] = {0, 0};
        for (int i = 0; i < fb->batch; i++) {
            double L = fb->lengths[i];
            fl += 640 * L + 16 * L * (L + 1);
            act[i >= fb->batch / 2] +=
                rt_poly_eval(one.scenario->model.act_bytes, L) + L * 8 * (8 * 4 + 4);
        }
        assert_true(fabs(role_sum(b, RT_ROLE_DENSE_FWD, r, 1) - fl) < 1e-9 * fl);
        assert_true(fabs(role_sum(a, RT_ROLE_DENSE_FWD, r, 1) - fl) < 1e-9 * fl);
        /* Table-wise, no dedup: the micro-batches' lookups and AlltoAlls move the batch's
         * bytes; the one gradient AlltoAll and update move the batch's too. */
        static const rt_role same[] = {RT_ROLE_LOOKUP,        RT_ROLE_IDS_A2A,
                                       RT_ROLE_OUT_A2A,       RT_ROLE_GRAD_A2A,
                                       RT_ROLE_SPARSE_UPDATE, RT_ROLE_DENSE_ALLREDUCE};
        for (size_t i = 0; i < sizeof same / sizeof *same; i++)
            assert_true(role_sum(a, same[i], r, 0) == role_sum(b, same[i], r, 0));
        double full = act[0] + act[1], micro = fmax(act[0], act[1]);
        assert_true(fabs((a->peak_hbm_bytes[r] - b->peak_hbm_bytes[r]) - (full - micro)) < 1e-6);
    }
    assert_true(a->model_flops == b->model_flops);
    rt_pipeline_free(&one);
    rt_pipeline_free(&two);
}

/* The second micro-batch starts after the first one's backward: they share the device. */
static void micro_batches_run_in_order(void **state)
{
    (void)state;
    rt_pipeline p;
    build(&p, 2, NULL);
    const rt_graph *g = p.graph;
    int bwd = -1, route = -1, routes = 0;
    for (int o = 0; o < g->n_ops; o++) {
        if (g->ops[o].role == RT_ROLE_DENSE_BWD && bwd < 0) bwd = o;
        if (g->ops[o].role == RT_ROLE_ROUTE && ++routes == 2) route = o;
    }
    assert_true(bwd >= 0 && route > bwd);
    int waits = 0;
    for (int d = 0; d < g->ops[route].n_deps; d++)
        waits |= rt_graph_deps(g, route)[d] == bwd;
    assert_true(waits);
    rt_pipeline_free(&p);
}

static void refused_combinations(void **state)
{
    (void)state;
    static const char *const bad[][2] = {{"plan.grad_accum=5", "expect 1..4"},
                                         {"plan.grad_accum=2", "plan.overlap=pipeline"}};
    for (int i = 0; i < 2; i++) {
        const char *sets[] = {bad[i][0], bad[i][1]};
        rt_pipeline p;
        char buf[4096] = {0};
        FILE *err = fmemopen(buf, sizeof buf - 1, "w");
        assert_int_equal(rt_pipeline_run(&p, SCEN, sets, i ? 2 : 1, err), -1);
        fclose(err);
        assert_non_null(strstr(buf, "grad_accum"));
        rt_pipeline_free(&p);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(micro_batches_then_one_update),
        cmocka_unit_test(micro_batches_run_in_order),
        cmocka_unit_test(refused_combinations),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
