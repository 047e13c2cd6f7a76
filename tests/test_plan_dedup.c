/* Deduplication and merging (seed 000): the expected-unique estimate against exact sums and
 * sampled counts; byte counts of the four dedup strategies on tables whose duplicates are
 * known by hand; merging keeps equal raw IDs of different tables apart and runs one unique
 * per merged table; statistical stage-2 counts against exact ones. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "graph_query.h"
#include <gsl/gsl_rng.h>
#include <math.h>

#include "dedup.h"
#include "merge.h"
#include "pipeline.h"
#include "workload.h"

#define DEDUP RT_SOURCE_DIR "/tests/data/dedup.yaml"
#define TINY RT_SOURCE_DIR "/tests/data/tiny.yaml"

static void build(rt_pipeline *p, const char *path, const char *const *sets, int n)
{
    if (rt_pipeline_run(p, path, sets, n, stderr)) fail_msg("pipeline failed");
}

static void uniform_estimate_is_closed_form(void **state)
{
    (void)state;
    rt_id_spec u = {RT_DIST_UNIFORM, 0};
    /* 1000 draws over 1000 keys: 1000 (1 - 0.999^1000) = 632.3046... */
    assert_true(fabs(rt_dedup_expected_unique(u, 1000, 0, 1000, 1000) - 632.3046) < 1e-3);
    assert_true(fabs(rt_dedup_expected_unique(u, 1000, 0, 250, 1000) - 632.3046 / 4) < 1e-3);
    assert_true(rt_dedup_expected_unique(u, 1000, 0, 1000, 0) == 0);
}

/* Against the vocabulary-sized sum the estimate replaces. */
static void zipf_estimate_matches_exact_sum(void **state)
{
    (void)state;
    const uint64_t n = 1000000;
    const double a = 1.05, m = 100000;
    double h = 0, exact = 0;
    for (uint64_t k = 1; k <= n; k++)
        h += pow((double)k, -a);
    for (uint64_t k = 1; k <= n; k++)
        exact += -expm1(m * log1p(-pow((double)k, -a) / h));
    rt_id_spec z = {RT_DIST_ZIPF, a};
    double est = rt_dedup_expected_unique(z, n, 0, n, m);
    assert_true(fabs(est - exact) / exact < 1e-4);
    /* Ranges add up: the head block and the tail block. */
    double parts =
        rt_dedup_expected_unique(z, n, 0, 250000, m) + rt_dedup_expected_unique(z, n, 250000, n, m);
    assert_true(fabs(parts - est) / est < 1e-4);
}

/* Against distinct counts of real draws from the workload's own Zipf sampler. */
static void zipf_estimate_matches_samples(void **state)
{
    (void)state;
    const uint64_t n = 50000000, m = 200000;
    rt_zipf z;
    rt_zipf_init(&z, n, 1.1);
    gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
    uint64_t *ids = malloc(sizeof(uint64_t) * m);
    assert_non_null(ids);
    double mean = 0;
    for (int t = 0; t < 4; t++) {
        gsl_rng_set(rng, 11 + t);
        for (uint64_t i = 0; i < m; i++)
            ids[i] = rt_zipf_draw(&z, rng);
        mean += (double)rt_dedup_count_sorted(ids, m) / 4;
    }
    double est = rt_dedup_expected_unique((rt_id_spec){RT_DIST_ZIPF, 1.1}, n, 0, n, (double)m);
    assert_true(fabs(est - mean) / mean < 0.01);
    free(ids);
    gsl_rng_free(rng);
}

static void count_sorted_counts_distinct(void **state)
{
    (void)state;
    uint64_t small[] = {5, 3, 5, 5, 1, 3};
    assert_int_equal(rt_dedup_count_sorted(small, 6), 3);
    /* Long enough for the radix path: 3000 keys, each value i % 700 with big high bits. */
    uint64_t *big = malloc(sizeof(uint64_t) * 3000);
    assert_non_null(big);
    for (int i = 0; i < 3000; i++)
        big[i] = ((uint64_t)(i % 700) << 40) | 7;
    assert_int_equal(rt_dedup_count_sorted(big, 3000), 700);
    for (int i = 1; i < 3000; i++)
        assert_true(big[i - 1] <= big[i]);
    free(big);
}

/* Flat on dedup-model, 4 ranks, b = 16, 8-byte IDs, fp32. Placement: t1 (3 x 8) -> rank 0,
 * t2 (2 x 8) -> rank 1, t3 (1 x 16) -> rank 2. Every ID is 0. */
static void four_strategies_bytes(void **state)
{
    (void)state;
    const char *modes[] = {"plan.dedup=none", "plan.dedup=comm", "plan.dedup=lookup",
                           "plan.dedup=two_stage"};
    /* ID AlltoAll per requester. none: b x pooling x 8 + b x 4 lengths per owner;
     * comm: one ID + one 4-byte count per owner. */
    const double ids_total[] = {448 + 320 + 192, 36, 448 + 320 + 192, 36};
    /* Embedding AlltoAll sent by the owner of t1 to the 4 requesters: pooled b x 8 x 4, or one
     * row of 8 x 4 after stage 1. */
    const double out_rank0[] = {4 * 512, 4 * 32, 4 * 512, 4 * 32};
    /* Lookup on rank 0 (t1): none reads all 192 rows (192 x 8 B IDs + 192 x 32 B rows);
     * lookup reads one key and row, 192 4-byte inverse entries; two_stage gets 4 IDs. */
    const double lookup_rank0[] = {192 * 8 + 192 * 32 + 2048, 4 * 8 + 4 * 32 + 128,
                                   8 + 4 * 192 + 32 + 2048, 8 + 4 * 4 + 32 + 128};
    for (int m = 0; m < 4; m++) {
        rt_pipeline p;
        build(&p, DEDUP, &modes[m], 1);
        const rt_graph *g = p.graph;
        int ids = find_op(g, "emb.fwd.ids_a2a", NULL, 0),
            out = find_op(g, "emb.fwd.out_a2a", NULL, 0);
        int lk = find_op(g, "emb.fwd.lookup", NULL, 0);
        for (int r = 0; r < 4; r++)
            assert_true(rt_graph_cost(g, ids, r)->bytes == ids_total[m]);
        assert_true(rt_graph_cost(g, out, 0)->bytes == out_rank0[m]);
        assert_true(rt_graph_cost(g, lk, 0)->bytes == lookup_rank0[m]);
        /* One unique kernel per table and stage (no merge). */
        assert_int_equal(count_ops(g, "emb.fwd.unique"), rt_dedup_stage1((rt_dedup_mode)m) ? 3 : 0);
        assert_int_equal(count_ops(g, "emb.fwd.global_unique"),
                         rt_dedup_stage2((rt_dedup_mode)m) ? 3 : 0);
        if (rt_dedup_stage1((rt_dedup_mode)m)) {
            /* t1's unique: 48 IDs in, 1 out: 48 x (8 + 8 + 4) + 8. */
            assert_true(rt_graph_cost(g, find_op(g, "emb.fwd.unique", NULL, 0), 0)->bytes ==
                        48 * 20 + 8);
        }
        rt_pipeline_free(&p);
    }
}

static void comm_dedup_removes_exactly_the_duplicates(void **state)
{
    (void)state;
    const char *none[] = {"plan.dedup=none"}, *comm[] = {"plan.dedup=comm"};
    rt_pipeline a, b;
    build(&a, DEDUP, none, 1);
    build(&b, DEDUP, comm, 1);
    int ia = find_op(a.graph, "emb.fwd.ids_a2a", NULL, 0),
        ib = find_op(b.graph, "emb.fwd.ids_a2a", NULL, 0);
    /* Duplicates per requester: 47 of t1, 31 of t2, 15 of t3, 8 bytes each; the per-sample
     * lengths (16 x 4 per table) become one 4-byte count per table. */
    double saved = (47 + 31 + 15) * 8 + 3 * (16 * 4 - 4);
    for (int r = 0; r < 4; r++)
        assert_true(rt_graph_cost(a.graph, ia, r)->bytes - rt_graph_cost(b.graph, ib, r)->bytes ==
                    saved);
    rt_pipeline_free(&a);
    rt_pipeline_free(&b);
}

static void merge_encoding_keeps_tables_apart(void **state)
{
    (void)state;
    assert_int_equal(rt_merge_bits(1), 1);
    assert_int_equal(rt_merge_bits(3), 2);
    assert_int_equal(rt_merge_bits(4), 3);
    uint64_t id0, id1, id2;
    /* Three tables: k = 2, the index sits in bits 61..62 and the top bit stays 0. */
    assert_int_equal(rt_merge_encode(0, 2, 42, &id0), 0);
    assert_int_equal(rt_merge_encode(1, 2, 42, &id1), 0);
    assert_int_equal(rt_merge_encode(2, 2, 42, &id2), 0);
    assert_true(id0 == 42 && id1 == ((1ull << 61) | 42) && id2 == ((2ull << 61) | 42));
    assert_int_equal(rt_merge_encode(0, 2, 1ull << 61, &id0), -1);
    assert_int_equal(rt_merge_encode(4, 2, 1, &id0), -1);
    /* Equal raw IDs of two tables: a unique over encoded IDs counts them twice, one over raw
     * IDs once (the collision the encoding prevents). */
    uint64_t raw[] = {7, 7, 9, 7, 9, 11}, enc[6];
    for (int i = 0; i < 6; i++)
        assert_int_equal(rt_merge_encode(i < 3 ? 0 : 1, 2, raw[i], &enc[i]), 0);
    /* Table 0 holds {7, 9}, table 1 {7, 9, 11}: 2 + 3 distinct keys, 3 distinct raw values. */
    assert_int_equal(rt_dedup_count_sorted(enc, 6), 5);
    assert_int_equal(rt_dedup_count_sorted(raw, 6), 3);
}

/* Merging t1 and t2 (equal dim and optimizer) into one table: one unique kernel for both,
 * counting 1 + 1 distinct keys of 48 + 32 IDs; the traffic is unchanged. */
static void merge_composes_with_flat(void **state)
{
    (void)state;
    const char *plain[] = {"plan.dedup=two_stage"},
               *merged[] = {"plan.dedup=two_stage", "plan.merge=true"};
    rt_pipeline a, b;
    build(&a, DEDUP, plain, 1);
    build(&b, DEDUP, merged, 2);
    assert_int_equal(count_ops(a.graph, "emb.fwd.unique"), 3);
    assert_int_equal(count_ops(b.graph, "emb.fwd.unique"), 2);
    assert_int_equal(count_ops(b.graph, "emb.fwd.global_unique"), 2);
    assert_true(rt_graph_cost(b.graph, find_op(b.graph, "emb.fwd.unique", NULL, 0), 0)->bytes ==
                80 * 20 + 2 * 8);
    /* Owner-side merged unique on rank 0: 4 t1 IDs arrive (one per requester), t2 lives on
     * rank 1, so 4 in and 1 out. */
    assert_true(
        rt_graph_cost(b.graph, find_op(b.graph, "emb.fwd.global_unique", NULL, 0), 0)->bytes ==
        4 * 20 + 8);
    int ia = find_op(a.graph, "emb.fwd.ids_a2a", NULL, 0),
        ib = find_op(b.graph, "emb.fwd.ids_a2a", NULL, 0);
    assert_true(rt_graph_cost(a.graph, ia, 1)->bytes == rt_graph_cost(b.graph, ib, 1)->bytes);
    rt_pipeline_free(&a);
    rt_pipeline_free(&b);
}

/* Statistical stage 2 (expected unique) against exact stage 2 (the union of all senders). */
static void statistical_stage2_tracks_exact(void **state)
{
    (void)state;
    const char *ex[] = {"plan.dedup=lookup", "plan.sharding=row_wise", "workload.mode=exact",
                        "workload.batch_per_rank=512", "workload.ids={kind: zipf, alpha: 1.05}"};
    const char *st[] = {"plan.dedup=lookup",
                        "plan.sharding=row_wise",
                        "workload.mode=statistical",
                        "workload.batch_per_rank=512",
                        "workload.ids={kind: zipf, alpha: 1.05}",
                        "workload.reps=4"};
    rt_pipeline a, b;
    build(&a, TINY, ex, 5);
    build(&b, TINY, st, 6);
    /* Same ranks (reps = all 4), same samples: only the stage-2 counts differ. */
    int n = count_ops(a.graph, "emb.fwd.global_unique");
    assert_int_equal(n, 4);
    for (int r = 0; r < 4; r++) {
        double ea = 0, eb = 0;
        for (int k = 0; k < n; k++) {
            ea += rt_graph_cost(a.graph, find_op(a.graph, "emb.fwd.global_unique", NULL, k), r)
                      ->bytes;
            eb += rt_graph_cost(b.graph, find_op(b.graph, "emb.fwd.global_unique", NULL, k), r)
                      ->bytes;
        }
        /* The unique's bytes are dominated by the IDs in; compare the distinct rows read. */
        double la = rt_graph_cost(a.graph, find_op(a.graph, "emb.fwd.lookup", NULL, 0), r)->bytes;
        double lb = rt_graph_cost(b.graph, find_op(b.graph, "emb.fwd.lookup", NULL, 0), r)->bytes;
        assert_true(fabs(ea - eb) / ea < 0.02);
        assert_true(fabs(la - lb) / la < 0.03);
    }
    rt_pipeline_free(&a);
    rt_pipeline_free(&b);
}

static void bad_dedup_value_is_refused(void **state)
{
    (void)state;
    const char *sets[] = {"plan.dedup=three_stage"};
    rt_pipeline p;
    char *buf = NULL;
    size_t len = 0;
    FILE *err = open_memstream(&buf, &len);
    assert_int_equal(rt_pipeline_run(&p, DEDUP, sets, 1, err), -1);
    fclose(err);
    assert_non_null(strstr(buf, "plan.dedup"));
    assert_non_null(strstr(buf, "two_stage"));
    free(buf);
    rt_pipeline_free(&p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(uniform_estimate_is_closed_form),
        cmocka_unit_test(zipf_estimate_matches_exact_sum),
        cmocka_unit_test(zipf_estimate_matches_samples),
        cmocka_unit_test(count_sorted_counts_distinct),
        cmocka_unit_test(four_strategies_bytes),
        cmocka_unit_test(comm_dedup_removes_exactly_the_duplicates),
        cmocka_unit_test(merge_encoding_keeps_tables_apart),
        cmocka_unit_test(merge_composes_with_flat),
        cmocka_unit_test(statistical_stage2_tracks_exact),
        cmocka_unit_test(bad_dedup_value_is_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
