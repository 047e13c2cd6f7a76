/* plan.fusion (RecIS, seed 001 table 1; plans/fusion.h) on tests/data/exec-tiny.yaml: 4 ranks,
 * exact mode, table-wise, six pooled tables of dim 8, fp32 storage and comm, 32 samples per
 * rank. Hand counts: the owner of table f receives every rank's IDs of f (in_f), reads one
 * 32-byte row per ID and writes 4 x 32 pooled rows of 32 bytes (4096 bytes) into the embedding
 * message. Per feature, the gather writes those rows into an fp32 buffer and the copy reads
 * them back: 2 x 4096 bytes more per table, 6 x 8192 = 49152 bytes over the world, which the
 * fused gather does not move. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "analytic.h"
#include "pipeline.h"

#define SCEN RT_SOURCE_DIR "/tests/data/exec-tiny.yaml"

static void build(rt_pipeline *p, const char *fusion, const char *comm)
{
    char f[64], c[96];
    snprintf(f, sizeof f, "plan.fusion=%s", fusion);
    snprintf(c, sizeof c, "plan.precision={dense: fp32, embedding: fp32, comm: %s}", comm);
    const char *sets[] = {c, f};
    if (rt_pipeline_run(p, SCEN, sets, fusion ? 2 : 1, stderr)) fail_msg("pipeline failed");
}

static int lookups(const rt_graph *g, int *first)
{
    int n = 0;
    for (int o = 0; o < g->n_ops; o++)
        if (g->ops[o].role == RT_ROLE_LOOKUP && !n++) *first = o;
    return n;
}

/* Table f's lookup bytes on its owner, by hand: IDs (id_bytes), rows, message. */
static double owner_bytes(const rt_pipeline *p, int f, double *out)
{
    double ids = 0;
    for (int r = 0; r < p->workload->n_reps; r++)
        ids += (double)rt_workload_batch(p->workload, r, f)->n_ids;
    *out = 4.0 * 32 * 8 * 4;
    return ids * p->scenario->workload.id_bytes + ids * 8 * 4 + *out;
}

static void per_feature_ops_and_bytes(void **state)
{
    (void)state;
    rt_pipeline none, fused, unset;
    build(&none, "none", "fp32");
    build(&fused, "sparse", "fp32");
    build(&unset, NULL, "fp32");
    int f0 = 0, u0 = 0, s0 = 0;
    assert_int_equal(lookups(none.graph, &f0), 6);
    assert_int_equal(lookups(fused.graph, &s0), 1);
    assert_int_equal(lookups(unset.graph, &u0), 1);
    assert_string_equal(none.graph->ops[f0 + 2].name, "embedding_lookup.c");
    const rt_graph_unit *un = &none.graph->units[none.graph->ops[f0].unit];
    double fused_total = 0, per_total = 0, removed = 0;
    for (int f = 0; f < 6; f++) {
        double out, b = owner_bytes(&none, f, &out);
        int owner = un->owner[f];
        assert_int_equal(none.graph->ops[f0 + f].layer, f);
        for (int r = 0; r < 4; r++) {
            double got = rt_graph_cost(none.graph, f0 + f, r)->bytes;
            assert_true(got == (r == owner ? b + 2 * out : 0));
            per_total += got;
        }
        fused_total += b;
        removed += 2 * out;
    }
    double fb = 0, ub = 0;
    for (int r = 0; r < 4; r++) {
        fb += rt_graph_cost(fused.graph, s0, r)->bytes;
        ub += rt_graph_cost(unset.graph, u0, r)->bytes;
    }
    assert_true(fb == fused_total && ub == fused_total);
    assert_true(removed == 49152 && per_total - fb == removed);
    rt_pipeline_free(&none);
    rt_pipeline_free(&fused);
    rt_pipeline_free(&unset);
}

static int buckets(const rt_graph *g, int *first)
{
    int n = 0;
    for (int o = 0; o < g->n_ops; o++)
        if (g->ops[o].role == RT_ROLE_ROUTE && !n++) *first = o;
    return n;
}

/* The sender's routing (seed 001 fuses these ID passes): with fusion none one bucketize op per
 * feature, each reading rank r's n_ids(r, f) IDs of feature f and writing them with a 4-byte
 * permutation index (2 x id_bytes + 4 per ID); together the bytes of the one fused op, so
 * unfused costs only the five extra launches per rank. */
static void per_feature_bucketize(void **state)
{
    (void)state;
    rt_pipeline none, fused;
    build(&none, "none", "fp32");
    build(&fused, "sparse", "fp32");
    const rt_topology *t = &none.scenario->topology;
    int b0 = 0, s0 = 0, idb = none.scenario->workload.id_bytes;
    assert_int_equal(buckets(none.graph, &b0), 6);
    assert_int_equal(buckets(fused.graph, &s0), 1);
    assert_string_equal(none.graph->ops[b0 + 2].name, "bucketize_ids.c");
    for (int r = 0; r < 4; r++) {
        double sum = 0, tn = 0, d;
        for (int f = 0; f < 6; f++) {
            double want = (double)rt_workload_batch(none.workload, r, f)->n_ids * (2 * idb + 4);
            const rt_op_cost *c = rt_graph_cost(none.graph, b0 + f, r);
            assert_int_equal(none.graph->ops[b0 + f].layer, f);
            assert_true(c->bytes == want && want > 0);
            sum += want;
            assert_int_equal(
                rt_analytic_kernel_time(t, &none.graph->ops[b0 + f], c, &d, &(const char *){NULL}),
                0);
            tn += d;
        }
        const rt_op_cost *fc = rt_graph_cost(fused.graph, s0, r);
        assert_true(fc->bytes == sum);
        assert_int_equal(
            rt_analytic_kernel_time(t, &fused.graph->ops[s0], fc, &d, &(const char *){NULL}), 0);
        assert_true(tn > d + 4.999 * t->device.launch_overhead);
    }
    rt_pipeline_free(&none);
    rt_pipeline_free(&fused);
}

/* Uncalibrated cost (max(FLOPs, bytes) + launch overhead per op): six launches instead of one,
 * and the round trip at the HBM rate. */
static void launches_and_round_trip_cost_time(void **state)
{
    (void)state;
    rt_pipeline none, fused;
    build(&none, "none", "fp32");
    build(&fused, "sparse", "fp32");
    const rt_topology *t = &none.scenario->topology;
    int f0 = 0, s0 = 0;
    lookups(none.graph, &f0);
    lookups(fused.graph, &s0);
    int owner = none.graph->units[none.graph->ops[f0].unit].owner[0];
    double tn = 0, tf = 0, d, extra = 0;
    for (int f = 0; f < 6; f++) {
        assert_int_equal(rt_analytic_kernel_time(t, &none.graph->ops[f0 + f],
                                                 rt_graph_cost(none.graph, f0 + f, owner), &d,
                                                 &(const char *){NULL}),
                         0);
        tn += d;
        if (none.graph->units[none.graph->ops[f0].unit].owner[f] == owner) extra += 2 * 4096;
    }
    assert_int_equal(rt_analytic_kernel_time(t, &fused.graph->ops[s0],
                                             rt_graph_cost(fused.graph, s0, owner), &d,
                                             &(const char *){NULL}),
                     0);
    tf = d;
    double want = 5 * t->device.launch_overhead + extra / (t->device.hbm_bw * t->device.eff_hbm);
    assert_true(fabs((tn - tf) - want) < 1e-12);
    rt_pipeline_free(&none);
    rt_pipeline_free(&fused);
}

/* A reduced comm precision keeps the fused gather's fp32 staging and convert pass. */
static void fp16_comm_keeps_the_round_trip(void **state)
{
    (void)state;
    rt_pipeline h, u;
    build(&h, "sparse", "fp16");
    build(&u, NULL, "fp16");
    int a = 0, b = 0;
    lookups(h.graph, &a);
    lookups(u.graph, &b);
    double dh = 0;
    for (int r = 0; r < 4; r++)
        dh += rt_graph_cost(h.graph, a, r)->bytes - rt_graph_cost(u.graph, b, r)->bytes;
    assert_true(dh == 6 * 2 * 4096); /* 6 tables x 1024 elements x 4 bytes x 2 */
    rt_pipeline_free(&h);
    rt_pipeline_free(&u);
}

static void refusals(void **state)
{
    (void)state;
    const char *cases[][3] = {
        {"plan.fusion=sparse", "plan.dedup=two_stage", "allowed: fusion with dedup none or comm"},
        {"plan.fusion=all", "plan.dedup=none", "allowed"},
        {"plan.fusion=none", "plan.name=sptt", "fusion"},
    };
    for (int i = 0; i < 3; i++) {
        rt_pipeline p;
        char buf[4096] = {0};
        FILE *err = fmemopen(buf, sizeof buf - 1, "w");
        const char *sets[] = {cases[i][1], cases[i][0]};
        assert_int_equal(rt_pipeline_run(&p, SCEN, sets, 2, err), -1);
        fclose(err);
        if (!strstr(buf, cases[i][2])) fail_msg("case %d: %s", i, buf);
        rt_pipeline_free(&p);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(per_feature_ops_and_bytes),
        cmocka_unit_test(per_feature_bucketize),
        cmocka_unit_test(launches_and_round_trip_cost_time),
        cmocka_unit_test(fp16_comm_keeps_the_round_trip),
        cmocka_unit_test(refusals),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
