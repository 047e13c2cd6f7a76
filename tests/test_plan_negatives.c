/* Sampled negatives (TurboGR, seed 002 section 4.3) in the graph: per rank 40 output tokens,
 * 4 negatives of dim 16 per token, fp32 dense (tests/data/negatives.yaml). By hand, the
 * baseline holds 40 x 4 x 16 x 4 = 10240 bytes of negative embeddings and 40 x 4 x 4 = 640 of
 * logits; fp16 halves the embeddings (5120); offload with segments of 5 tokens keeps two
 * segments (10 x 4 x 16 x 4 = 2560); over the host link it moves the negatives of the 36
 * queries (each token but the last of its sequence: 36 x 4 x 16 x 4 = 9216 bytes) out once
 * and back twice (logits, then their backward: 18432); logit sharing with k = 2 doubles the
 * logits (+640) and the loss FLOPs (2 x 40 x 4 x 2 x 16 = 10240) and adds 40 x 4 x 8 bytes of
 * shared logits written and read, with no extra embedding bytes or lookups. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <cmocka.h>

#include "graph_query.h"

#include "pipeline.h"

#define SCENARIO RT_SOURCE_DIR "/tests/data/negatives.yaml"

typedef struct {
    double hbm, loss_flops, loss_bytes, offload, fetch, lookup;
    int n_ops, fetch_before_bwd;
} figures;

static figures run(const char *set)
{
    const char *sets[1] = {set};
    rt_pipeline p = {0};
    if (rt_pipeline_run(&p, SCENARIO, sets, set ? 1 : 0, stderr)) fail_msg("pipeline failed");
    const rt_graph *g = p.graph;
    figures f = {.hbm = g->peak_hbm_bytes[0], .n_ops = g->n_ops};
    int loss = must_find_op(g, "dense.fwd", "loss");
    f.loss_flops = rt_graph_cost(g, loss, 0)->flops;
    f.loss_bytes = rt_graph_cost(g, loss, 0)->bytes;
    f.lookup = rt_graph_cost(g, must_find_op(g, "emb.fwd.lookup", NULL), 0)->bytes;
    int off = find_op(g, "neg.offload", NULL, 0), fetch = find_op(g, "neg.fetch", NULL, 0);
    f.offload = off >= 0 ? rt_graph_cost(g, off, 0)->bytes : -1;
    f.fetch = fetch >= 0 ? rt_graph_cost(g, fetch, 0)->bytes : -1;
    if (fetch >= 0) {
        const rt_op *b = &g->ops[must_find_op(g, "dense.bwd", NULL)];
        assert_int_equal(g->ops[fetch].stream, RT_STREAM_COPY);
        assert_int_equal(g->ops[fetch].kernel, RT_K_H2D);
        for (int k = 0; k < b->n_deps; k++)
            f.fetch_before_bwd |= g->deps[b->deps_at + k] == fetch;
    }
    rt_pipeline_free(&p);
    return f;
}

static void baseline(void **state)
{
    (void)state;
    figures b = run(NULL);
    assert_true(b.loss_flops == 2.0 * 40 * 4 * 16);
    assert_true(b.loss_bytes == 40 * (12 + 4 * 16 * 4));
    assert_true(b.offload == -1 && b.fetch == -1);
}

static void fp16_halves_the_embeddings(void **state)
{
    (void)state;
    figures b = run(NULL), h = run("plan.negatives={dtype: fp16}");
    assert_true(b.hbm - h.hbm == 5120);
    assert_true(b.loss_bytes - h.loss_bytes == 40 * 4 * 16 * 2);
    assert_true(h.loss_flops == b.loss_flops && h.n_ops == b.n_ops);
}

static void offload_keeps_two_segments(void **state)
{
    (void)state;
    figures b = run(NULL), o = run("plan.negatives={offload: true, segment: 5}");
    assert_true(b.hbm - o.hbm == 10240 - 2560);
    assert_true(o.offload == 9216 && o.fetch == 2 * 9216);
    assert_int_equal(o.n_ops, b.n_ops + 2);
    assert_true(o.fetch_before_bwd);
    /* Segments longer than the batch's tokens: everything stays, nothing is saved. */
    figures big = run("plan.negatives={offload: true, segment: 100}");
    assert_true(big.hbm == b.hbm);
}

static void sharing_adds_logits_not_lookups(void **state)
{
    (void)state;
    figures b = run(NULL), k = run("plan.negatives={expansion: 2}");
    assert_true(k.loss_flops == 2 * b.loss_flops);
    assert_true(k.loss_bytes - b.loss_bytes == 40 * 4 * 8);
    assert_true(k.hbm - b.hbm == 640);
    assert_true(k.lookup == b.lookup && k.n_ops == b.n_ops);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(baseline),
        cmocka_unit_test(fp16_halves_the_embeddings),
        cmocka_unit_test(offload_keeps_two_segments),
        cmocka_unit_test(sharing_adds_logits_not_lookups),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
