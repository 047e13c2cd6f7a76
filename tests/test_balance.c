/* Sequence balancing on a skewed lognormal workload (tests/data/balance-tiny.yaml: 8 ranks x
 * 32 samples, sigma 1.2): samples are conserved, token reallocation and dynamic batching cut
 * the largest per-rank token count, the dense cost follows the tokens each rank gets, and the
 * dense AllReduce's wait for the slowest rank shrinks. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "balance.h"
#include "engines.h"
#include "memory.h"
#include "pipeline.h"
#include "plan_common.h"
#include "result.h"

#define BAL RT_SOURCE_DIR "/tests/data/balance-tiny.yaml"

typedef struct stats {
    double max, min, sum, longest;
    long samples;
} stats;

static void build(rt_pipeline *p, const char *const *sets, int n)
{
    if (rt_pipeline_run(p, BAL, sets, n, stderr)) fail_msg("pipeline failed");
}

static stats tokens_of(const rt_pipeline *p)
{
    stats st = {0, INFINITY, 0, 0, 0};
    const rt_workload *w = p->workload;
    for (int r = 0; r < w->n_reps; r++) {
        double t = rt_balance_rep_tokens(p->scenario, w, r);
        const rt_feature_batch *fb = rt_workload_batch(w, r, 0);
        uint64_t ids = 0;
        for (int i = 0; i < fb->batch; i++) {
            ids += fb->lengths[i];
            st.longest = fmax(st.longest, fb->lengths[i]);
        }
        assert_int_equal(ids, fb->n_ids); /* moved samples keep their IDs */
        st.max = fmax(st.max, t), st.min = fmin(st.min, t), st.sum += t;
        st.samples += fb->batch;
    }
    return st;
}

static void token_realloc_cuts_max_tokens(void **state)
{
    (void)state;
    const char *on[] = {"plan.balance=token_realloc"};
    rt_pipeline a, b;
    build(&a, NULL, 0);
    build(&b, on, 1);
    stats s0 = tokens_of(&a), s1 = tokens_of(&b);
    assert_int_equal(s0.samples, 8 * 32);
    assert_int_equal(s1.samples, 8 * 32);
    assert_true(s1.sum == s0.sum);
    assert_true(s1.max < s0.max);
    /* Greedy longest-first: the spread is at most one sample. */
    assert_true(s1.max - s1.min <= s0.longest);
    rt_pipeline_free(&a);
    rt_pipeline_free(&b);
}

static void dynamic_batching_hits_the_target(void **state)
{
    (void)state;
    const char *mean[] = {"plan.balance=dynamic_batching"};
    const char *fixed[] = {"plan.balance=dynamic_batching", "plan.token_target=1500"};
    rt_pipeline a, b, c;
    build(&a, NULL, 0);
    build(&b, mean, 1);
    build(&c, fixed, 2);
    stats s0 = tokens_of(&a), s1 = tokens_of(&b), s2 = tokens_of(&c);
    assert_true(s1.sum == s0.sum && s2.sum == s0.sum);
    assert_int_equal(s1.samples, 8 * 32);
    double target = s0.sum / 8;
    /* Every rank but the last cuts the stream at the prefix closest to the target: within
     * half of the longest sample. */
    for (int r = 0; r < 7; r++) {
        assert_true(fabs(rt_balance_rep_tokens(b.scenario, b.workload, r) - target) <=
                    s0.longest / 2);
        assert_true(fabs(rt_balance_rep_tokens(c.scenario, c.workload, r) - 1500) <=
                    s0.longest / 2);
    }
    assert_true(s1.max < s0.max);
    rt_pipeline_free(&a);
    rt_pipeline_free(&b);
    rt_pipeline_free(&c);
}

/* Dense FLOPs of each rank are the sum of its samples' token polynomials, and the dense
 * AllReduce waits for the slowest rank's backward: less so once balanced. */
static double max_wait(const rt_pipeline *p)
{
    const rt_graph *g = p->graph;
    const rt_engine *e = rt_engine_find("analytic");
    rt_result *res = rt_result_new(g, "analytic");
    assert_int_equal(e->run(p->scenario, g, res, stderr), 0);
    int ar = -1;
    for (int o = 0; o < g->n_ops; o++)
        if (!strcmp(g->phases[g->ops[o].phase], "dense.allreduce")) ar = o;
    /* A rank's wait is inside its all-reduce, which it enters at its arrival: the wait is the
     * last arrival's lead over its own. */
    double last_arrival = 0, wait = 0;
    for (int r = 0; r < g->n_reps; r++)
        last_arrival = fmax(last_arrival, res->start[(long)ar * g->n_reps + r]);
    for (int r = 0; r < g->n_reps; r++) {
        double fwd_bwd = 0;
        for (int o = 0; o < g->n_ops; o++)
            if (!strncmp(g->phases[g->ops[o].phase], "dense.", 6) &&
                g->ops[o].type == RT_OP_KERNEL && g->ops[o].kernel != RT_K_LOSS &&
                g->ops[o].kernel != RT_K_DENSE_UPDATE)
                fwd_bwd += rt_graph_cost(g, o, r)->flops;
        assert_true(fabs(fwd_bwd - rt_plan_dense_flops(p->scenario, p->workload, r)) <=
                    1e-9 * fwd_bwd);
        wait = fmax(wait, last_arrival - res->start[(long)ar * g->n_reps + r]);
    }
    rt_result_free(res);
    return wait;
}

static void balanced_ranks_wait_less(void **state)
{
    (void)state;
    const char *on[] = {"plan.balance=token_realloc"};
    rt_pipeline a, b;
    build(&a, NULL, 0);
    build(&b, on, 1);
    double w0 = max_wait(&a), w1 = max_wait(&b);
    assert_true(w0 > 0);
    assert_true(w1 < w0);
    rt_pipeline_free(&a);
    rt_pipeline_free(&b);
}

/* Sampled softmax keeps tokens x 4 negatives x (16 x 2 B bf16 + a 4 B logit) per rank. */
static void negatives_memory_follows_tokens(void **state)
{
    (void)state;
    rt_pipeline p;
    build(&p, NULL, 0);
    for (int r = 0; r < p.workload->n_reps; r++)
        assert_true(rt_plan_negatives_memory(p.scenario, p.workload, r) ==
                    rt_balance_rep_tokens(p.scenario, p.workload, r) * 4 * (16 * 2 + 4));
    rt_pipeline_free(&p);
}

static void statistical_balances_representatives(void **state)
{
    (void)state;
    const char *off[] = {"workload.mode=statistical", "workload.reps=4"};
    const char *on[] = {"workload.mode=statistical", "workload.reps=4",
                        "plan.balance=token_realloc"};
    rt_pipeline a, b;
    build(&a, off, 2);
    build(&b, on, 3);
    stats s0 = tokens_of(&a), s1 = tokens_of(&b);
    assert_int_equal(s1.samples, 4 * 32);
    assert_true(s1.sum == s0.sum && s1.max <= s0.max);
    rt_pipeline_free(&a);
    rt_pipeline_free(&b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(token_realloc_cuts_max_tokens),
        cmocka_unit_test(dynamic_batching_hits_the_target),
        cmocka_unit_test(balanced_ranks_wait_less),
        cmocka_unit_test(negatives_memory_follows_tokens),
        cmocka_unit_test(statistical_balances_representatives),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
