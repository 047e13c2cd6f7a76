/* Per-table precision (MTGRBoost, seed 000: hot tables in fp32, cold ones in fp16): with
 * plan.precision.embedding unset, each table keeps its model dtype
 * (tests/data/exec-tiny-mixed-model.yaml: a, c, e fp16, d bf16, b and f fp32, dim 8) and the
 * lookup, the sparse update and the table memory shrink by exactly 2 bytes per element of the
 * 16-bit tables against the same model in fp32 everywhere; the traffic does not change (the
 * AlltoAlls carry precision.comm). Exact mode, table-wise: every ID of a table is looked up
 * and updated once on its owner. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "pipeline.h"

#define SCEN RT_SOURCE_DIR "/tests/data/exec-tiny.yaml"

static void build(rt_pipeline *p, int mixed)
{
    const char *sets[] = {"model.file=exec-tiny-mixed-model.yaml",
                          mixed ? "plan.precision={dense: fp32, comm: fp32}"
                                : "plan.precision={dense: fp32, embedding: fp32, comm: fp32}"};
    if (rt_pipeline_run(p, SCEN, sets, 2, stderr)) fail_msg("pipeline failed");
}

static double phase_bytes(const rt_graph *g, const char *phase)
{
    double b = 0;
    for (int o = 0; o < g->n_ops; o++)
        if (!strcmp(g->phases[g->ops[o].phase], phase))
            for (int r = 0; r < g->n_reps; r++)
                b += rt_graph_cost(g, o, r)->bytes;
    return b;
}

static void sixteen_bit_tables_move_half(void **state)
{
    (void)state;
    rt_pipeline f, m;
    build(&f, 0);
    build(&m, 1);
    const rt_scenario *s = m.scenario;
    assert_int_equal(rt_scenario_table_dtype(s, 0), RT_DT_FP16);
    assert_int_equal(rt_scenario_table_dtype(s, 1), RT_DT_FP32);
    assert_int_equal(rt_scenario_table_dtype(s, 3), RT_DT_BF16);
    assert_int_equal(rt_scenario_table_dtype(f.scenario, 0), RT_DT_FP32);
    /* IDs of the 16-bit tables over all ranks, and their rows. */
    double ids16 = 0, rows16 = 0;
    for (int t = 0; t < s->model.n_tables; t++) {
        if (rt_scenario_table_dtype(s, t) == RT_DT_FP32) continue;
        rows16 += (double)s->model.tables[t].rows;
        for (int r = 0; r < m.workload->n_reps; r++)
            ids16 += (double)rt_workload_batch(m.workload, r, t)->n_ids;
    }
    assert_true(ids16 > 0);
    /* Lookup: each row read 2 bytes x 8 narrower. Update: the row read and written. */
    assert_true(phase_bytes(f.graph, "emb.fwd.lookup") - phase_bytes(m.graph, "emb.fwd.lookup") ==
                ids16 * 8 * 2);
    assert_true(phase_bytes(f.graph, "emb.bwd.update") - phase_bytes(m.graph, "emb.bwd.update") ==
                ids16 * 8 * 2 * 2);
    assert_true(phase_bytes(f.graph, "emb.fwd.out_a2a") == phase_bytes(m.graph, "emb.fwd.out_a2a"));
    double hbm = 0;
    for (int r = 0; r < m.graph->n_reps; r++)
        hbm += f.graph->peak_hbm_bytes[r] - m.graph->peak_hbm_bytes[r];
    assert_true(fabs(hbm - rows16 * 8 * 2) < 1e-6);
    rt_pipeline_free(&f);
    rt_pipeline_free(&m);
}

static void sptt_refuses_mixed_dtypes(void **state)
{
    (void)state;
    const char *sets[] = {"model.file=exec-tiny-mixed-model.yaml",
                          "plan.precision={dense: fp32, comm: fp32}", "plan.name=sptt"};
    rt_pipeline p;
    char buf[4096] = {0};
    FILE *err = fmemopen(buf, sizeof buf - 1, "w");
    assert_int_equal(rt_pipeline_run(&p, SCEN, sets, 3, err), -1);
    fclose(err);
    assert_non_null(strstr(buf, "allowed: tables of one dtype"));
    rt_pipeline_free(&p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(sixteen_bit_tables_move_half),
        cmocka_unit_test(sptt_refuses_mixed_dtypes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
