/* overlap x every registered plan (rt_plans[], so plans added later are covered): the
 * steady-state window holds each op of the plan's iteration once, with the same bytes and
 * FLOPs; dense work no longer waits for its own sparse forward (done a window earlier);
 * lookups wait for the sparse update they must see; semi_async keeps sparse kernels off the
 * compute stream; and the period the analytic engine measures is never longer than sync's. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "engines.h"
#include "pipeline.h"
#include "plan.h"
#include "result.h"

#define TINY RT_SOURCE_DIR "/tests/data/tiny.yaml"

static int starts(const rt_graph *g, int op, const char *prefix)
{
    return !strncmp(g->phases[g->ops[op].phase], prefix, strlen(prefix));
}

static double period(const rt_pipeline *p)
{
    rt_result *r = rt_result_new(p->graph, "analytic");
    assert_int_equal(rt_engine_find("analytic")->run(p->scenario, p->graph, r, stderr), 0);
    rt_result_finish(r, p->scenario);
    double t = r->iteration_time_s;
    rt_result_free(r);
    return t;
}

/* Sum of bytes and op count of PHASE over all reps. */
static void phase_total(const rt_graph *g, const char *phase, double *bytes, int *ops)
{
    *bytes = 0, *ops = 0;
    for (int o = 0; o < g->n_ops; o++) {
        if (strcmp(g->phases[g->ops[o].phase], phase)) continue;
        (*ops)++;
        for (int r = 0; r < g->n_reps; r++)
            *bytes += rt_graph_cost(g, o, r)->bytes;
    }
}

static void same_work(const rt_graph *a, const rt_graph *b, int extra_ops)
{
    assert_int_equal(b->n_ops, a->n_ops + extra_ops);
    assert_true(a->model_flops == b->model_flops);
    for (int i = 0; i < a->n_phases; i++) {
        double ba, bb;
        int na, nb;
        phase_total(a, a->phases[i], &ba, &na);
        phase_total(b, a->phases[i], &bb, &nb);
        assert_int_equal(na, nb);
        assert_true(ba == bb);
    }
}

static void check_window(const rt_graph *g, rt_overlap mode)
{
    int lookups = 0;
    for (int o = 0; o < g->n_ops; o++) {
        const int *d = rt_graph_deps(g, o);
        int after_bwd = 0;
        for (int k = 0; k < g->ops[o].n_deps; k++) {
            assert_true(d[k] < o);
            /* Batch i's dense work consumed batch i's embeddings in the previous window. */
            if (starts(g, o, "dense.")) assert_false(starts(g, d[k], "emb.fwd"));
            after_bwd |= starts(g, d[k], "emb.bwd");
        }
        if (g->ops[o].type == RT_OP_KERNEL && g->ops[o].kernel == RT_K_LOOKUP &&
            starts(g, o, "emb.fwd")) {
            lookups++;
            assert_true(after_bwd); /* staleness 0 (pipeline) or 1 (semi_async), never more */
        }
        if (mode == RT_OVERLAP_SEMI_ASYNC && starts(g, o, "emb."))
            assert_int_not_equal(g->ops[o].stream, RT_STREAM_COMPUTE);
        if (starts(g, o, "emb.fwd") && g->ops[o].type == RT_OP_KERNEL)
            assert_int_equal(g->ops[o].stream, RT_STREAM_COPY); /* the dispatch stream */
        if (starts(g, o, "input.h2d")) assert_int_equal(g->ops[o].stream, RT_STREAM_COPY);
    }
    assert_true(lookups > 0);
}

static void every_plan_overlaps(void **state)
{
    (void)state;
    static const char *const modes[] = {"plan.overlap=pipeline", "plan.overlap=semi_async"};
    for (int i = 0; rt_plans[i]; i++) {
        char name[64];
        snprintf(name, sizeof name, "plan.name=%s", rt_plans[i]->name);
        const char *sync_sets[] = {name};
        rt_pipeline base;
        if (rt_pipeline_run(&base, TINY, sync_sets, 1, stderr))
            fail_msg("plan %s failed", rt_plans[i]->name);
        double t0 = period(&base);
        for (int m = 0; m < 2; m++) {
            const char *sets[] = {name, modes[m]};
            rt_pipeline p;
            if (rt_pipeline_run(&p, TINY, sets, 2, stderr))
                fail_msg("%s %s failed", name, modes[m]);
            rt_overlap mode = m ? RT_OVERLAP_SEMI_ASYNC : RT_OVERLAP_PIPELINE;
            same_work(base.graph, p.graph, mode == RT_OVERLAP_PIPELINE);
            check_window(p.graph, mode);
            double t = period(&p);
            assert_true(t > 0 && t <= t0 * (1 + 1e-12));
            rt_pipeline_free(&p);
        }
        rt_pipeline_free(&base);
    }
}

/* The pipeline's H2D copy moves each rank's IDs (8 B), KJT lengths (4 B per sample and
 * feature) and dense features (4 x 4 B per sample): tiny.yaml has 9 IDs per sample. */
static void pipeline_copies_the_next_input(void **state)
{
    (void)state;
    const char *sets[] = {"plan.overlap=pipeline"};
    rt_pipeline p;
    if (rt_pipeline_run(&p, TINY, sets, 1, stderr)) fail_msg("pipeline failed");
    int h2d = -1;
    for (int o = 0; o < p.graph->n_ops; o++)
        if (starts(p.graph, o, "input.h2d")) h2d = o;
    assert_int_equal(h2d, 0);
    assert_true(rt_graph_cost(p.graph, h2d, 0)->bytes == 16 * (9 * 8 + 4 * 4 + 4 * 4));
    rt_pipeline_free(&p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(every_plan_overlaps),
        cmocka_unit_test(pipeline_copies_the_next_input),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
