/* The flat plan's byte counts equal hand-computed values on the tiny model, receives mirror
 * sends, statistical representatives carry the same numbers as exact mode, and the dense
 * FLOPs follow the layer arithmetic. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "graph_query.h"

#include "pipeline.h"

#define TINY RT_SOURCE_DIR "/tests/data/tiny.yaml"

static void build(rt_pipeline *p, const char *const *sets, int n)
{
    if (rt_pipeline_run(p, TINY, sets, n, stderr)) fail_msg("pipeline failed");
}

/* Tiny model, 2 nodes x 2 devices, b = 16, 8-byte IDs, fp32 everywhere.
 * Greedy placement by mean IDs x dim: d (2 x 16 = 32) -> rank 0, c (3 x 8 = 24) -> rank 1,
 * a (16) -> rank 2, b (16) -> rank 3. */
static void table_wise_bytes(void **state)
{
    (void)state;
    rt_pipeline p;
    build(&p, NULL, 0);
    const rt_graph *g = p.graph;
    assert_int_equal(g->world, 4);
    assert_int_equal(g->n_reps, 4);
    int ids = must_find_op(g, "emb.fwd.ids_a2a", NULL),
        out = must_find_op(g, "emb.fwd.out_a2a", NULL);
    int grad = must_find_op(g, "emb.bwd.grad_a2a", NULL),
        lookup = must_find_op(g, "emb.fwd.lookup", NULL);
    /* IDs to each owner: b x pooling x 8 bytes, plus one uint32 length per sample. */
    const uint64_t ids_to[4] = {16 * 2 * 8 + 16 * 4, 16 * 3 * 8 + 16 * 4, 16 * 2 * 8 + 16 * 4,
                                16 * 2 * 8 + 16 * 4};
    /* Pooled embeddings back from each owner: b x dim x 4 bytes. */
    const uint64_t emb_from[4] = {16 * 16 * 4, 16 * 8 * 4, 16 * 8 * 4, 16 * 8 * 4};
    for (int r = 0; r < 4; r++) {
        const rt_op_cost *c = rt_graph_cost(g, ids, r), *e = rt_graph_cost(g, out, r);
        const rt_op_cost *gr = rt_graph_cost(g, grad, r);
        for (int q = 0; q < 4; q++) {
            assert_int_equal(c->send[q], ids_to[q]);
            assert_int_equal(c->recv[q], ids_to[r]);
            assert_int_equal(e->send[q], emb_from[r]);
            assert_int_equal(e->recv[q], emb_from[q]);
            assert_int_equal(gr->send[q], e->recv[q]);
            assert_int_equal(gr->recv[q], e->send[q]);
        }
        assert_true(c->bytes == 320 + 448 + 320 + 320);
        assert_true(e->recv_bytes == 1024 + 3 * 512);
    }
    /* Lookup on the owner of c: 4 ranks x 48 IDs; read the IDs (8 B), the rows (8 x 4 B),
     * write 4 pooled outputs of 512 B. */
    assert_true(rt_graph_cost(g, lookup, 1)->bytes == 192 * 8 + 192 * 8 * 4 + 4 * 512);
    rt_pipeline_free(&p);
}

static void row_wise_totals_and_symmetry(void **state)
{
    (void)state;
    const char *sets[] = {"plan.sharding=row_wise"};
    rt_pipeline p;
    build(&p, sets, 1);
    const rt_graph *g = p.graph;
    int ids = must_find_op(g, "emb.fwd.ids_a2a", NULL),
        out = must_find_op(g, "emb.fwd.out_a2a", NULL);
    for (int r = 0; r < 4; r++) {
        const rt_op_cost *c = rt_graph_cost(g, ids, r);
        /* All 9 IDs per sample go somewhere; every shard gets every feature's lengths. */
        assert_true(c->bytes == 16 * 9 * 8 + 4 * (16 * 4 * 4));
        /* Row-wise pooled outputs are partial sums of full width: b x (8+8+8+16) x 4. */
        assert_true(rt_graph_cost(g, out, r)->bytes == 4.0 * 16 * 40 * 4);
        for (int q = 0; q < 4; q++) {
            /* In exact mode rank r receives from q exactly what q sends to r. */
            assert_int_equal(c->recv[q], rt_graph_cost(g, ids, q)->send[r]);
        }
    }
    rt_pipeline_free(&p);
}

static void statistical_reps_match_exact(void **state)
{
    (void)state;
    const char *ex[] = {"plan.sharding=row_wise", "workload.mode=exact"};
    const char *st[] = {"plan.sharding=row_wise", "workload.mode=statistical", "workload.reps=2"};
    rt_pipeline a, b;
    build(&a, ex, 2);
    build(&b, st, 3);
    int ids = must_find_op(a.graph, "emb.fwd.ids_a2a", NULL);
    assert_int_equal(b.graph->n_reps, 2);
    assert_int_equal(b.graph->rep_rank[1], 2);
    /* Rep 1 of the statistical graph is rank 2: its sends are rank 2's exact sends. */
    assert_memory_equal(rt_graph_cost(b.graph, ids, 1)->send, rt_graph_cost(a.graph, ids, 2)->send,
                        4 * sizeof(uint64_t));
    rt_pipeline_free(&a);
    rt_pipeline_free(&b);
}

static void dense_flops_follow_layers(void **state)
{
    (void)state;
    rt_pipeline p;
    build(&p, NULL, 0);
    const rt_graph *g = p.graph;
    /* top: input 4 dense + (8+8+8+16) embeddings = 44 -> 16 -> 1. */
    const double fwd = 2.0 * (44 * 16 + 16 * 1), bwd = 2 * fwd;
    int f = must_find_op(g, "dense.fwd", "top"), b = must_find_op(g, "dense.bwd", "top");
    assert_true(rt_graph_cost(g, f, 0)->flops == 16 * fwd);
    assert_true(rt_graph_cost(g, b, 0)->flops == 16 * bwd);
    assert_true(g->model_flops == 4 * 16 * (fwd + bwd));
    /* The dense AllReduce carries the fp32 gradients of 44x16+16 + 16x1+1 parameters. */
    int ar = must_find_op(g, "dense.allreduce", NULL);
    assert_true(rt_graph_cost(g, ar, 0)->bytes == 4.0 * (44 * 16 + 16 + 16 + 1));
    assert_int_equal(g->ops[ar].group.size, 4);
    rt_pipeline_free(&p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(table_wise_bytes),
        cmocka_unit_test(row_wise_totals_and_symmetry),
        cmocka_unit_test(statistical_reps_match_exact),
        cmocka_unit_test(dense_flops_follow_layers),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
