/* Invariants every plan's graph must keep, checked for every registered plan in exact mode:
 * an AlltoAll(v) delivers what was sent (rank r receives from member q exactly what q sends
 * to r), deps point backwards, and collective groups tile the world. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "pipeline.h"
#include "plan.h"

static void check_plan(const char *scenario, const char *plan, const char *const *extra,
                       int n_extra)
{
    const char *sets[8] = {NULL};
    char name[64];
    snprintf(name, sizeof name, "plan.name=%s", plan);
    sets[0] = name;
    sets[1] = "workload.mode=exact";
    for (int i = 0; i < n_extra; i++)
        sets[2 + i] = extra[i];
    rt_pipeline p;
    if (rt_pipeline_run(&p, scenario, sets, 2 + n_extra, stderr))
        fail_msg("%s failed to build", plan);
    const rt_graph *g = p.graph;
    assert_int_equal(g->n_reps, g->world); /* exact: rep r is rank r */
    for (int o = 0; o < g->n_ops; o++) {
        const rt_op *op = &g->ops[o];
        for (int d = 0; d < op->n_deps; d++)
            assert_true(rt_graph_deps(g, o)[d] < o);
        if (op->type != RT_OP_COLLECTIVE) continue;
        assert_int_equal(g->world % op->group.size, 0);
        if (op->coll != RT_COLL_ALLTOALLV) continue;
        for (int r = 0; r < g->world; r++) {
            const rt_op_cost *c = rt_graph_cost(g, o, r);
            if (!c->send) continue;
            int k = rt_group_index(op->group, r);
            for (int q = 0; q < op->group.size; q++) {
                int peer = rt_group_member(op->group, r, q);
                const rt_op_cost *pc = rt_graph_cost(g, o, peer);
                if (c->recv[q] != pc->send[k])
                    fail_msg(
                        "plan %s op %s (%s): rank %d receives %llu B from rank %d, which sends it "
                        "%llu B",
                        plan, op->name, g->phases[op->phase], r, (unsigned long long)c->recv[q],
                        peer, (unsigned long long)pc->send[k]);
            }
        }
    }
    rt_pipeline_free(&p);
}

static void every_plan_on_dlrm(void **state)
{
    (void)state;
    const char *small[] = {"topology.nodes=2", "workload.batch_per_rank=64"};
    for (int i = 0; rt_plans[i]; i++)
        check_plan(RT_SOURCE_DIR "/experiments/dlrm-criteo.yaml", rt_plans[i]->name, small, 2);
}

static void dedup_and_merge_variants(void **state)
{
    (void)state;
    const char *base = RT_SOURCE_DIR "/experiments/dlrm-criteo.yaml";
    const char *modes[] = {"plan.dedup=none", "plan.dedup=comm", "plan.dedup=lookup",
                           "plan.dedup=two_stage"};
    for (int m = 0; m < 4; m++) {
        const char *a[] = {"topology.nodes=2", "workload.batch_per_rank=64", modes[m]};
        check_plan(base, "flat", a, 3);
        check_plan(base, "fused", a, 3);
        const char *b[] = {"topology.nodes=2", "workload.batch_per_rank=64", modes[m],
                           "plan.merge=true"};
        check_plan(base, "flat", b, 4);
        check_plan(base, "fused", b, 4);
    }
    /* The hash-before-send variant with its category AlltoAll, routed row-wise by hash. */
    const char *tfra[] = {"topology.nodes=2", "workload.batch_per_rank=64",
                          "plan.variant=tfra_fused", "plan.sharding=row_wise"};
    check_plan(RT_SOURCE_DIR "/tests/data/tiny.yaml", "fused", tfra, 4);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(every_plan_on_dlrm),
        cmocka_unit_test(dedup_and_merge_variants),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
