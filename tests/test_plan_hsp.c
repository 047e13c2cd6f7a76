/* hsp: the AlltoAll stays inside groups of I ranks, and one cross-group synchronization per
 * shard carries hand-computed bytes (dense: union rows x dim; sparse: every group's (index,
 * value) pairs); one group is flat; a plan that does not fit HBM is refused with its numbers.
 *
 * tests/data/hsp-tiny.yaml: 2 nodes x 2 devices, b = 16, 8-byte IDs, fp32, the default group
 * size of one node (I = 2, M = 2 groups {0,1}, {2,3}). Greedy placement over a group by mean IDs x
 * dim: b (40 x 16 = 640) -> index 0; c (50 x 4 = 200) -> index 1; a (2 x 8 = 16) -> index 1. Every
 * rank draws every row of a (1 row), b (2 rows) and c (3 rows). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "graph_query.h"

#include "memory.h"
#include "pipeline.h"
#include "plan_common.h"

#define HSP RT_SOURCE_DIR "/tests/data/hsp-tiny.yaml"

static void build(rt_pipeline *p, const char *const *sets, int n)
{
    if (rt_pipeline_run(p, HSP, sets, n, stderr)) fail_msg("pipeline failed");
}

static void alltoall_world_is_the_group(void **state)
{
    (void)state;
    rt_pipeline p;
    build(&p, NULL, 0);
    const rt_graph *g = p.graph;
    int ids = find_op(g, "emb.fwd.ids_a2a", NULL, 0), out = find_op(g, "emb.fwd.out_a2a", NULL, 0);
    assert_int_equal(g->ops[ids].group.size, 2);
    assert_int_equal(g->ops[ids].group.stride, 1);
    /* To index 0 (b): 16 x 40 IDs x 8 B + 16 lengths x 4 B; to index 1 (c, a): 16 x (50 + 2)
     * x 8 B + 2 x 16 x 4 B. */
    const uint64_t ids_to[2] = {16 * 40 * 8 + 64, 16 * 52 * 8 + 128};
    /* Pooled embeddings from index 0: 16 x 16 x 4 B; from index 1: 16 x (4 + 8) x 4 B. */
    const uint64_t emb_from[2] = {1024, 768};
    for (int r = 0; r < 4; r++) {
        const rt_op_cost *c = rt_graph_cost(g, ids, r), *e = rt_graph_cost(g, out, r);
        int k = r % 2;
        for (int q = 0; q < 2; q++) {
            assert_int_equal(c->send[q], ids_to[q]);
            assert_int_equal(c->recv[q], ids_to[k]);
            assert_int_equal(e->send[q], emb_from[k]);
            assert_int_equal(e->recv[q], emb_from[q]);
        }
    }
    rt_pipeline_free(&p);
}

static void dense_sync_allreduces_union_rows(void **state)
{
    (void)state;
    rt_pipeline p;
    build(&p, NULL, 0);
    const rt_graph *g = p.graph;
    int n = 0, sync = -1;
    for (int o = 0; o < g->n_ops; o++)
        if (!strcmp(g->phases[g->ops[o].phase], "emb.bwd.cross_group_sync")) n++, sync = o;
    assert_int_equal(n, 1); /* one reduction, every rank's instance syncing its own shard */
    assert_int_equal(g->ops[sync].coll, RT_COLL_ALLREDUCE);
    assert_int_equal(g->ops[sync].group.size, 2); /* the M = 2 holders of a shard */
    assert_int_equal(g->ops[sync].group.stride, 2);
    /* Index 0 holds b: 2 rows x 16 x 4 B; index 1 holds c and a: (3 x 4 + 1 x 8) x 4 B. */
    const double bytes[2] = {128, 80};
    for (int r = 0; r < 4; r++)
        assert_true(rt_graph_cost(g, sync, r)->bytes == bytes[r % 2]);
    /* The update waits for the sync. */
    int up = find_op(g, "emb.bwd.update", NULL, 0);
    assert_int_equal(rt_graph_deps(g, up)[0], sync);
    rt_pipeline_free(&p);
}

static void sparse_sync_allgathers_pairs(void **state)
{
    (void)state;
    const char *sets[] = {"plan.sync=sparse"};
    rt_pipeline p;
    build(&p, sets, 1);
    const rt_graph *g = p.graph;
    int sync = find_op(g, "emb.bwd.cross_group_sync", NULL, 0);
    assert_int_equal(g->ops[sync].coll, RT_COLL_ALLGATHER);
    /* Each of the 2 groups contributes its touched rows as (8-byte index, fp32 row):
     * index 0: 2 x (2 x 8 + 32 x 4); index 1: 2 x (4 x 8 + 20 x 4). */
    const double bytes[2] = {288, 224};
    for (int r = 0; r < 4; r++)
        assert_true(rt_graph_cost(g, sync, r)->bytes == bytes[r % 2]);
    rt_pipeline_free(&p);
}

static void statistical_sync_expects_every_row(void **state)
{
    (void)state;
    /* 640 draws of 2 rows: 2 (1 - 2^-640) expected distinct rows, 2 in double precision. */
    const char *sets[] = {"workload.mode=statistical", "workload.reps=2"};
    rt_pipeline p;
    build(&p, sets, 2);
    int sync = find_op(p.graph, "emb.bwd.cross_group_sync", NULL, 0);
    assert_true(rt_graph_cost(p.graph, sync, 0)->bytes == 128);
    assert_true(rt_graph_cost(p.graph, sync, 1)->bytes == 128); /* rep 1 is rank 2, index 0 */
    rt_pipeline_free(&p);
}

static void one_group_is_flat(void **state)
{
    (void)state;
    const char *h[] = {"plan.group_size=4"};
    const char *f[] = {"plan.name=flat"};
    rt_pipeline a, b;
    build(&a, h, 1);
    build(&b, f, 1);
    assert_int_equal(find_op(a.graph, "emb.bwd.cross_group_sync", NULL, 0), -1);
    int ia = find_op(a.graph, "emb.fwd.ids_a2a", NULL, 0),
        ib = find_op(b.graph, "emb.fwd.ids_a2a", NULL, 0);
    assert_int_equal(a.graph->ops[ia].group.size, 4);
    for (int r = 0; r < 4; r++)
        assert_memory_equal(rt_graph_cost(a.graph, ia, r)->send,
                            rt_graph_cost(b.graph, ib, r)->send, 4 * sizeof(uint64_t));
    rt_pipeline_free(&a);
    rt_pipeline_free(&b);
}

static void bad_group_sizes_are_refused(void **state)
{
    (void)state;
    const char *bad[][1] = {{"plan.group_size=3"}, {"plan.group_size=8"}};
    for (int i = 0; i < 2; i++) {
        char *buf = NULL;
        size_t len = 0;
        FILE *err = open_memstream(&buf, &len);
        rt_pipeline p;
        assert_int_equal(rt_pipeline_run(&p, HSP, bad[i], 1, err), -1);
        fclose(err);
        assert_non_null(strstr(buf, "--set:1:"));
        assert_non_null(strstr(buf, "plan.group_size"));
        assert_non_null(strstr(buf, "does not divide the 4 ranks"));
        free(buf);
        rt_pipeline_free(&p);
    }
}

/* With b = 1024, rank 0 (index 0) holds table b (2 x 16 x 4 B, SGD: no state), its AlltoAll
 * buffers (IDs sent to both indices and received from both members, embeddings sent and
 * received, twice with the gradients) and the 128-byte sync buffer: 1.92 MB, more than a
 * 1 MB device. Dense: 545 parameters x (4 + 16) B. */
static void memory_refusal_names_the_numbers(void **state)
{
    (void)state;
    const char *warn[] = {"topology.device.hbm=1MB", "workload.batch_per_rank=1024",
                          "plan.memory=warn"};
    const double b = 1024, to0 = b * (40 * 8 + 4), to1 = b * (52 * 8 + 8);
    const double emb0 = b * 16 * 4, emb1 = b * 12 * 4;
    char *buf = NULL;
    size_t len = 0;
    FILE *err = open_memstream(&buf, &len);
    rt_pipeline p;
    assert_int_equal(rt_pipeline_run(&p, HSP, warn, 3, err), 0);
    rt_memory_report m;
    rt_memory_report_of(p.graph, p.scenario, p.workload, &m);
    assert_true(m.capacity == 1e6);
    assert_true(m.weights == 545 * 20);
    assert_true(m.negatives == 0 && m.overlap == 0);
    for (int r = 0; r < 4; r += 2) {
        double sparse = p.graph->peak_hbm_bytes[r] - m.weights -
                        rt_plan_activation_memory(p.scenario, p.workload, r);
        assert_true(sparse == 128 + (to0 + to1) + 2 * to0 + 2 * (2 * emb0 + emb0 + emb1) + 128);
    }
    assert_true(m.total > m.capacity);
    rt_pipeline_free(&p);
    fclose(err);
    assert_non_null(strstr(buf, "warning: plan hsp needs"));
    free(buf);

    char want[128];
    snprintf(want, sizeof want, "needs %.4g GB of HBM on rank %d but device", m.total / 1e9,
             m.rank);
    buf = NULL;
    err = open_memstream(&buf, &len);
    assert_int_equal(rt_pipeline_run(&p, HSP, warn, 2, err), -1);
    fclose(err);
    assert_non_null(strstr(buf, want));
    assert_non_null(strstr(buf, "has 0.001 GB"));
    free(buf);
    rt_pipeline_free(&p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(alltoall_world_is_the_group),
        cmocka_unit_test(dense_sync_allreduces_union_rows),
        cmocka_unit_test(sparse_sync_allgathers_pairs),
        cmocka_unit_test(statistical_sync_expects_every_row),
        cmocka_unit_test(one_group_is_flat),
        cmocka_unit_test(bad_group_sizes_are_refused),
        cmocka_unit_test(memory_refusal_names_the_numbers),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
