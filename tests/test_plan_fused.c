/* The fused plan (seed 003): the same ID bytes travel in K group messages instead of F
 * per-feature ones; segment unique, rankwise sort and the deferred hash are kernel ops with
 * their costs; TFRA-fused hashes on the sender and adds one category AlltoAll per group;
 * dedup and merge compose with it. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "graph_query.h"

#include "pipeline.h"

#define TINY RT_SOURCE_DIR "/tests/data/tiny.yaml"
#define DEDUP RT_SOURCE_DIR "/tests/data/dedup.yaml"

static double phase_bytes(const rt_graph *g, const char *phase, int r)
{
    double b = 0;
    for (int k = 0; k < count_ops(g, phase); k++)
        b += rt_graph_cost(g, find_op(g, phase, NULL, k), r)->bytes;
    return b;
}

static void build(rt_pipeline *p, const char *path, const char *const *sets, int n)
{
    if (rt_pipeline_run(p, path, sets, n, stderr)) fail_msg("pipeline failed");
}

/* Tiny model (a, b, c: dim 8 sgd; d: dim 16 sgd), 4 ranks, b = 16, no dedup so the per-sample
 * traffic is flat's: d -> rank 0, c -> rank 1, a -> rank 2, b -> rank 3. Spec groups {a, b, c}
 * and {d}: K = 2 against F = 4. */
static void same_bytes_in_k_messages(void **state)
{
    (void)state;
    const char *grouping[] = {"plan.grouping=per_feature", "plan.grouping=spec_groups",
                              "plan.grouping=all"};
    const int rounds[] = {4, 2, 1};
    for (int i = 0; i < 3; i++) {
        const char *sets[] = {"plan.name=fused", "plan.dedup=none", grouping[i]};
        rt_pipeline p;
        build(&p, TINY, sets, 3);
        const rt_graph *g = p.graph;
        assert_int_equal(count_ops(g, "emb.fwd.ids_a2a"), rounds[i]);
        assert_int_equal(count_ops(g, "emb.fwd.out_a2a"), rounds[i]);
        assert_int_equal(count_ops(g, "emb.bwd.grad_a2a"), rounds[i]);
        assert_int_equal(count_ops(g, "emb.fwd.sort"), rounds[i]);
        for (int r = 0; r < 4; r++) {
            /* b x pooling x 8 + b x 4 per table: 320 + 448 + 320 + 320. */
            assert_true(phase_bytes(g, "emb.fwd.ids_a2a", r) == 1408);
            /* Pooled b x dim x 4 from each owner: 3 x 512 + 1024 (the self block included). */
            assert_true(phase_bytes(g, "emb.fwd.out_a2a", r) == (r == 0 ? 4 * 1024 : 4 * 512));
        }
        if (rounds[i] == 2) {
            /* Group {a, b, c} goes to ranks 1..3, group {d} to rank 0. */
            const rt_op_cost *g0 = rt_graph_cost(g, find_op(g, "emb.fwd.ids_a2a", NULL, 0), 2);
            const rt_op_cost *g1 = rt_graph_cost(g, find_op(g, "emb.fwd.ids_a2a", NULL, 1), 2);
            const uint64_t s0[4] = {0, 448, 320, 320}, s1[4] = {320, 0, 0, 0};
            assert_memory_equal(g0->send, s0, sizeof s0);
            assert_memory_equal(g1->send, s1, sizeof s1);
        }
        rt_pipeline_free(&p);
    }
}

/* FusedRec hashes (category, ID) on the owner after the ID AlltoAll; TFRA-fused hashes all raw
 * IDs on the sender and moves the per-feature counts into one more AlltoAll. */
static void deferred_hash_and_category_message(void **state)
{
    (void)state;
    const char *fu[] = {"plan.name=fused"}, *tf[] = {"plan.name=fused", "plan.variant=tfra_fused"};
    rt_pipeline a, b;
    build(&a, TINY, fu, 1);
    build(&b, TINY, tf, 2);
    /* Only the mixed group {a, b, c} needs the hash and the category message. */
    assert_int_equal(count_ops(a.graph, "emb.fwd.hash"), 1);
    assert_int_equal(count_ops(a.graph, "emb.fwd.category_a2a"), 0);
    assert_int_equal(count_ops(b.graph, "emb.fwd.hash"), 1);
    assert_int_equal(count_ops(b.graph, "emb.fwd.category_a2a"), 1);
    int ha = find_op(a.graph, "emb.fwd.hash", NULL, 0),
        hb = find_op(b.graph, "emb.fwd.hash", NULL, 0);
    int ids_a = find_op(a.graph, "emb.fwd.ids_a2a", NULL, 0),
        ids_b = find_op(b.graph, "emb.fwd.ids_a2a", NULL, 0);
    assert_true(ha > ids_a); /* on the owner, after the IDs arrive */
    assert_true(hb < ids_b); /* on the sender, before they leave */
    assert_true(hb < find_op(b.graph, "emb.fwd.unique", NULL, 0));
    int cat = find_op(b.graph, "emb.fwd.category_a2a", NULL, 0);
    for (int r = 0; r < 4; r++) {
        /* Sender: 16 x (2 + 2 + 3) raw IDs read (8 B) and hashed keys written (8 B). */
        assert_true(rt_graph_cost(b.graph, hb, r)->bytes == 112 * 16);
        /* One 4-byte count per feature to each of a's, b's and c's owners. */
        assert_true(rt_graph_cost(b.graph, cat, r)->bytes == 12);
        assert_true(rt_graph_cost(a.graph, ids_a, r)->bytes ==
                    rt_graph_cost(b.graph, ids_b, r)->bytes + 12);
        /* Owner: every received ID read and hashed: received bytes less the counts, / 8. */
        const rt_op_cost *in = rt_graph_cost(a.graph, ids_a, r);
        double counts = r == 0 ? 0 : 4 * 4; /* the owner of one of a, b, c gets 4 counts */
        assert_true(rt_graph_cost(a.graph, ha, r)->bytes == (in->recv_bytes - counts) / 8 * 16);
    }
    rt_pipeline_free(&a);
    rt_pipeline_free(&b);
}

/* dedup x fused on tables of one row: segment unique sends one ID per table and owner, in
 * 2 group messages ({t1, t2} and {t3}); flat sends the same 36 bytes in one. */
static void dedup_composes_with_fused(void **state)
{
    (void)state;
    const char *fu[] = {"plan.name=fused", "plan.dedup=comm"}, *fl[] = {"plan.dedup=comm"};
    rt_pipeline a, b;
    build(&a, DEDUP, fu, 2);
    build(&b, DEDUP, fl, 1);
    assert_int_equal(count_ops(a.graph, "emb.fwd.ids_a2a"), 2);
    /* Segment unique: one kernel per group, not per table. */
    assert_int_equal(count_ops(a.graph, "emb.fwd.unique"), 2);
    assert_int_equal(count_ops(b.graph, "emb.fwd.unique"), 3);
    for (int r = 0; r < 4; r++) {
        assert_true(phase_bytes(a.graph, "emb.fwd.ids_a2a", r) == 36);
        assert_true(phase_bytes(b.graph, "emb.fwd.ids_a2a", r) == 36);
        assert_true(phase_bytes(a.graph, "emb.fwd.out_a2a", r) ==
                    phase_bytes(b.graph, "emb.fwd.out_a2a", r));
    }
    /* Group {t1, t2}: 48 + 32 IDs in, 2 distinct keys out. */
    assert_true(rt_graph_cost(a.graph, find_op(a.graph, "emb.fwd.unique", NULL, 0), 0)->bytes ==
                80 * 20 + 2 * 8);
    rt_pipeline_free(&a);
    rt_pipeline_free(&b);
}

/* merge x fused: a merged table needs no (category, ID) hash, and per_feature rounds become
 * one per merged table ({a, b, c} merged, d alone: 2 rounds instead of 4). */
static void merge_composes_with_fused(void **state)
{
    (void)state;
    const char *sg[] = {"plan.name=fused", "plan.merge=true"};
    const char *pf[] = {"plan.name=fused", "plan.merge=true", "plan.grouping=per_feature"};
    rt_pipeline a, b;
    build(&a, TINY, sg, 2);
    build(&b, TINY, pf, 3);
    assert_int_equal(count_ops(a.graph, "emb.fwd.hash"), 0);
    assert_int_equal(count_ops(b.graph, "emb.fwd.ids_a2a"), 2);
    for (int r = 0; r < 4; r++)
        assert_true(phase_bytes(a.graph, "emb.fwd.ids_a2a", r) ==
                    phase_bytes(b.graph, "emb.fwd.ids_a2a", r));
    rt_pipeline_free(&a);
    rt_pipeline_free(&b);
}

static void bad_grouping_is_refused(void **state)
{
    (void)state;
    const char *sets[] = {"plan.name=fused", "plan.grouping=by_dim"};
    rt_pipeline p;
    char *buf = NULL;
    size_t len = 0;
    FILE *err = open_memstream(&buf, &len);
    assert_int_equal(rt_pipeline_run(&p, TINY, sets, 2, err), -1);
    fclose(err);
    assert_non_null(strstr(buf, "plan.grouping"));
    assert_non_null(strstr(buf, "spec_groups"));
    free(buf);
    rt_pipeline_free(&p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(same_bytes_in_k_messages),
        cmocka_unit_test(deferred_hash_and_category_message),
        cmocka_unit_test(dedup_composes_with_fused),
        cmocka_unit_test(merge_composes_with_fused),
        cmocka_unit_test(bad_grouping_is_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
