/* The sptt plan: hand-computed byte counts of every SPTT step on a 2 x 2 cluster, the same
 * embedding bytes at every rank's dense input as flat, tower-module compression, FLOPs and
 * parameters, k hosts per tower, row-wise ReduceScatter, and a CPU reference that routes a
 * random batch through flat and through SPTT's index math and gets bitwise equal embeddings. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "graph_query.h"

#include "pipeline.h"

#define SPTT RT_SOURCE_DIR "/tests/data/sptt-tiny.yaml"
#define TINY RT_SOURCE_DIR "/tests/data/tiny.yaml"

static void build(rt_pipeline *p, const char *path, const char *const *sets, int n)
{
    if (rt_pipeline_run(p, path, sets, n, stderr)) fail_msg("pipeline failed");
}

/* Towers {a, c} on ranks 0-1 and {b, d} on ranks 2-3; all tables 8 wide, b = 16, 8-byte IDs,
 * fp32 payloads. LPT inside the towers: c (3 IDs) -> rank 0, a -> 1, b -> 2, d -> 3. */
static void step_bytes(void **state)
{
    (void)state;
    rt_pipeline p;
    build(&p, SPTT, NULL, 0);
    const rt_graph *g = p.graph;
    int ids = must_find_op(g, "emb.fwd.global_ids_a2a", NULL),
        intra = must_find_op(g, "emb.fwd.intra_a2a", NULL);
    int peer = must_find_op(g, "emb.fwd.peer_a2a", NULL),
        lookup = must_find_op(g, "emb.fwd.lookup", NULL);
    int pgrad = must_find_op(g, "emb.bwd.peer_a2a", NULL),
        igrad = must_find_op(g, "emb.bwd.intra_a2a", NULL);
    assert_int_equal(g->ops[ids].group.size, 4);
    assert_int_equal(g->ops[intra].group.size, 2);
    assert_int_equal(g->ops[intra].group.stride, 1);
    assert_int_equal(g->ops[peer].group.size, 2); /* world T */
    assert_int_equal(g->ops[peer].group.stride, 2);
    assert_int_equal(find_op(g, "emb.fwd.out_a2a", NULL, 0), -1);
    assert_int_equal(find_op(g, "emb.bwd.grad_a2a", NULL, 0), -1);
    /* (a) b x pooling x 8 B IDs + one uint32 length per sample, to the owner. */
    const uint64_t ids_to[4] = {16 * 3 * 8 + 64, 16 * 2 * 8 + 64, 16 * 2 * 8 + 64, 16 * 2 * 8 + 64};
    for (int r = 0; r < 4; r++) {
        const rt_op_cost *a = rt_graph_cost(g, ids, r), *d = rt_graph_cost(g, intra, r);
        const rt_op_cost *f = rt_graph_cost(g, peer, r);
        for (int q = 0; q < 4; q++)
            assert_int_equal(a->send[q], ids_to[q]);
        for (int i = 0; i < 2; i++) {
            /* (d) T requesters x b x 8 x 4 B of the owner's one feature. */
            assert_int_equal(d->send[i], 2 * 16 * 8 * 4);
            assert_int_equal(d->recv[i], 2 * 16 * 8 * 4);
            /* (f) b x 2 features x 8 x 4 B to each peer. */
            assert_int_equal(f->send[i], 16 * 2 * 8 * 4);
            assert_int_equal(f->recv[i], 16 * 2 * 8 * 4);
            assert_int_equal(rt_graph_cost(g, pgrad, r)->send[i], f->recv[i]);
            assert_int_equal(rt_graph_cost(g, igrad, r)->recv[i], d->send[i]);
        }
    }
    /* (b) on rank 0 (table c): 4 ranks x 48 IDs; IDs + rows read, 4 x b pooled rows written. */
    assert_true(rt_graph_cost(g, lookup, 0)->bytes == 192 * 8 + 192 * 8 * 4 + 4 * 16 * 8 * 4);
    rt_pipeline_free(&p);
}

/* Semantics preserved in bytes: what reaches each rank's dense input equals flat's. */
static void same_dense_input_as_flat(void **state)
{
    (void)state;
    const char *fl[] = {"workload.ids={kind: zipf, alpha: 1.1}"};
    const char *sp[] = {"workload.ids={kind: zipf, alpha: 1.1}", "plan.name=sptt",
                        "plan.towers.assignment=strided"};
    rt_pipeline a, b;
    build(&a, TINY, fl, 1);
    build(&b, TINY, sp, 3);
    int out = must_find_op(a.graph, "emb.fwd.out_a2a", NULL),
        peer = must_find_op(b.graph, "emb.fwd.peer_a2a", NULL);
    for (int r = 0; r < 4; r++)
        assert_true(rt_graph_cost(a.graph, out, r)->recv_bytes ==
                    rt_graph_cost(b.graph, peer, r)->recv_bytes);
    /* Without a tower module the model is untouched. */
    assert_true(a.graph->model_flops == b.graph->model_flops);
    assert_true(a.scenario->model.dense_params == b.scenario->model.dense_params);
    rt_pipeline_free(&a);
    rt_pipeline_free(&b);
}

/* Linear TM, R = 2: each tower's 2 features become 1 vector of 8; the dot interaction sees
 * 3 vectors instead of 5. */
static void tower_module_linear(void **state)
{
    (void)state;
    const char *sets[] = {"plan.tower_module={kind: linear, compression: 2}"};
    rt_pipeline p;
    build(&p, SPTT, sets, 1);
    const rt_graph *g = p.graph;
    const rt_model *m = &p.scenario->model;
    int peer = must_find_op(g, "emb.fwd.peer_a2a", NULL),
        tm = must_find_op(g, "dense.tm_fwd", NULL);
    int tar = must_find_op(g, "dense.tm_allreduce", NULL),
        ar = must_find_op(g, "dense.allreduce", NULL);
    for (int r = 0; r < 4; r++)
        for (int i = 0; i < 2; i++)
            assert_int_equal(rt_graph_cost(g, peer, r)->send[i], 16 * 2 * 8 * 4 / 2);
    /* TM per tower: 2 x 1 x 2 x 8 + 2 x 1 x 8 x 8 = 160 FLOPs per sample, on T x b samples;
     * 1 x 2 + 1 + 8 x 8 + 8 = 75 parameters. */
    assert_true(rt_graph_cost(g, tm, 0)->flops == 2 * 16 * 160);
    /* bottom 64 + dot 2 x 3^2 x 8 + top 2 x (11 x 4 + 4) + 2 towers x 160. */
    assert_true(rt_poly_eval(m->fwd_flops, 1) == 64 + 144 + 96 + 320);
    assert_true(m->dense_params == 40 + 53 + 2 * 75);
    assert_true(g->model_flops == 4.0 * 16 * 3 * 624);
    /* TM gradients stay in the tower; the world AllReduce carries the rest. */
    assert_int_equal(g->ops[tar].group.size, 2);
    assert_true(rt_graph_cost(g, tar, 0)->bytes == 75 * 4);
    assert_true(rt_graph_cost(g, ar, 0)->bytes == (40 + 53) * 4);
    rt_pipeline_free(&p);
}

/* CrossNet TM on tiny (tables 8, 8, 8, 16), strided towers {a, c} and {b, d}: widths 16 and
 * 24 compress to 8 and 12; parameters 2x16x8+16 + 16x8+8 = 408 and 2x24x12+24 + 24x12+12 =
 * 900; the top MLP input shrinks from 44 to 4 + 20 = 24. */
static void tower_module_crossnet(void **state)
{
    (void)state;
    const char *sets[] = {"plan.name=sptt", "plan.towers.assignment=strided",
                          "plan.tower_module={kind: crossnet, compression: 2}"};
    rt_pipeline p;
    build(&p, TINY, sets, 3);
    const rt_graph *g = p.graph;
    int peer = must_find_op(g, "emb.fwd.peer_a2a", NULL);
    const rt_op_cost *c = rt_graph_cost(g, peer, 0);
    assert_int_equal(c->send[1], 16 * 8 * 4);  /* rank 0 is in tower 0 */
    assert_int_equal(c->recv[1], 16 * 12 * 4); /* from tower 1 */
    assert_true(p.scenario->model.dense_params == (24 * 16 + 16 + 16 + 1) + 408 + 900);
    rt_pipeline_free(&p);
}

/* 4 nodes x 2 devices, 2 hosts per tower: D = 4, T = 2. */
static void hosts_per_tower(void **state)
{
    (void)state;
    const char *sets[] = {"topology.nodes=4", "plan.hosts_per_tower=2",
                          "plan.towers.assignment=strided"};
    rt_pipeline p;
    build(&p, SPTT, sets, 3);
    const rt_graph *g = p.graph;
    int intra = must_find_op(g, "emb.fwd.intra_a2a", NULL),
        peer = must_find_op(g, "emb.fwd.peer_a2a", NULL);
    assert_int_equal(g->ops[intra].group.size, 4);
    assert_int_equal(g->ops[peer].group.size, 2);
    assert_int_equal(g->ops[peer].group.stride, 4);
    /* Strided: tower 0 = {a, c}, tower 1 = {b, d}; one table per device in a tower of 4, so
     * devices without a table send nothing in (d) and every peer message is b x 2 x 8 x 4. */
    for (int r = 0; r < 8; r++)
        assert_int_equal(rt_graph_cost(g, peer, r)->send[1], 16 * 2 * 8 * 4);
    double sent = 0;
    for (int i = 0; i < 4; i++)
        sent += (double)rt_graph_cost(g, intra, 0)->send[i];
    assert_true(sent == 4 * 2 * 16 * 8 * 4); /* rank 0 owns c: T x b rows to each of 4 members */
    rt_pipeline_free(&p);
}

/* Row-wise inside the tower: step (d) is a ReduceScatter of full-width partial sums for all
 * N x b samples of the tower's 2 features; backward is an AllGather of the same size. */
static void row_wise_reduce_scatter(void **state)
{
    (void)state;
    const char *sets[] = {"plan.sharding=row_wise"};
    rt_pipeline p;
    build(&p, SPTT, sets, 1);
    const rt_graph *g = p.graph;
    int rs = must_find_op(g, "emb.fwd.intra_reduce_scatter", NULL),
        ag = must_find_op(g, "emb.bwd.intra_allgather", NULL);
    assert_int_equal(find_op(g, "emb.fwd.intra_a2a", NULL, 0), -1);
    assert_int_equal(g->ops[rs].coll, RT_COLL_REDUCE_SCATTER);
    for (int r = 0; r < 4; r++) {
        assert_true(rt_graph_cost(g, rs, r)->bytes == 4.0 * 16 * 2 * 8 * 4);
        assert_true(rt_graph_cost(g, ag, r)->bytes == 4.0 * 16 * 2 * 8 * 4);
    }
    int peer = must_find_op(g, "emb.fwd.peer_a2a", NULL);
    assert_true(rt_graph_cost(g, peer, 0)->recv_bytes == 16.0 * 4 * 8 * 4);
    rt_pipeline_free(&p);
}

static void errors_are_reported(void **state)
{
    (void)state;
    const char *bad[][1] = {{"plan.hosts_per_tower=3"},
                            {"plan.towers.assignment=missing.csv"},
                            {"plan.tower_module={kind: dense}"},
                            {"topology.nodes=8"}};
    for (int i = 0; i < 4; i++) {
        rt_pipeline p;
        char *msg = NULL;
        size_t len = 0;
        FILE *err = open_memstream(&msg, &len);
        assert_int_equal(rt_pipeline_run(&p, SPTT, bad[i], 1, err), -1);
        fclose(err);
        assert_true(len > 0);
        rt_pipeline_free(&p);
        free(msg);
    }
}

/* ---- CPU reference: flat routing vs SPTT routing, bit for bit -------------------------- */

enum { H = 3, G = 2, N = H * G, F = 5, DIM = 3, ROWS = 11, B = 4, MAXP = 3 };

typedef struct {
    int len[N][F][B];
    int ids[N][F][B][MAXP];
    float table[F][ROWS][DIM];
    int tower_of[F];
    int owner_local[F]; /* device inside the tower */
} ref_batch;

/* Pooled embedding of sample i of rank p, feature f: the sum in ID order (both routings). */
static void pool(const ref_batch *x, int p, int f, int i, float *out)
{
    for (int k = 0; k < DIM; k++)
        out[k] = 0;
    for (int l = 0; l < x->len[p][f][i]; l++)
        for (int k = 0; k < DIM; k++)
            out[k] += x->table[f][x->ids[p][f][i][l]][k];
}

/* Moves an a x b grid of equal blocks (BLK floats) from a-major to b-major. */
static void transpose_blocks(const float *in, int a, int b, int blk, float *out)
{
    for (int j = 0; j < b; j++)
        for (int i = 0; i < a; i++)
            memcpy(out + (j * a + i) * blk, in + (i * b + j) * blk, sizeof(float) * blk);
}

static void sptt_matches_flat_bitwise(void **state)
{
    (void)state;
    static ref_batch x;
    srand(5);
    for (int f = 0; f < F; f++) {
        x.tower_of[f] = f % H; /* one tower per host */
        x.owner_local[f] = (f / H) % G;
        for (int r = 0; r < ROWS; r++)
            for (int k = 0; k < DIM; k++)
                x.table[f][r][k] = (float)rand() / RAND_MAX - 0.5f;
    }
    for (int p = 0; p < N; p++)
        for (int f = 0; f < F; f++)
            for (int i = 0; i < B; i++) {
                x.len[p][f][i] = 1 + rand() % MAXP;
                for (int l = 0; l < MAXP; l++)
                    x.ids[p][f][i][l] = rand() % ROWS;
            }
    const int blk = B * DIM, T = H, D = G;
    static float flat[N][B][F][DIM], got[N][B][F][DIM];
    for (int p = 0; p < N; p++)
        for (int i = 0; i < B; i++)
            for (int f = 0; f < F; f++)
                pool(&x, p, f, i, flat[p][i][f]);
    /* Per device: (a)+(b) lookup for every requester in rank order, (c) peer order, (d) the
     * T-block slice for local index i from every owner of the tower, (e) shuffle, (f) send. */
    static float held[N][F][N * B * DIM]; /* [owner][feature][...] */
    static float recv_d[N][F * H * B * DIM];
    for (int o = 0; o < N; o++)
        for (int f = 0; f < F; f++) {
            if (x.tower_of[f] * D + x.owner_local[f] != o) continue;
            float rank_order[N * B * DIM];
            for (int q = 0; q < N; q++)
                for (int i = 0; i < B; i++)
                    pool(&x, q, f, i, rank_order + (q * B + i) * DIM);
            transpose_blocks(rank_order, T, D, blk,
                             held[o][f]); /* (c): (tower, local) -> (local, tower) */
        }
    for (int t = 0; t < T; t++)
        for (int i = 0; i < D; i++) {
            int dev = t * D + i, nf = 0;
            float feat_peer[F * H * B * DIM];
            for (int f = 0; f < F; f++) /* (d): features of the tower in model order */
                if (x.tower_of[f] == t) {
                    memcpy(feat_peer + nf * T * blk,
                           held[t * D + x.owner_local[f]][f] + i * T * blk,
                           sizeof(float) * T * blk);
                    nf++;
                }
            transpose_blocks(feat_peer, nf, T, blk, recv_d[dev]); /* (e) -> (peers, features) */
        }
    /* (f): device (t, i) sends peer u its block of nf features; the receiver (u, i) puts
     * feature f of sample s where the dense input expects it. */
    for (int u = 0; u < T; u++)
        for (int i = 0; i < D; i++)
            for (int t = 0; t < T; t++) {
                int nf = 0, fs[F];
                for (int f = 0; f < F; f++)
                    if (x.tower_of[f] == t) fs[nf++] = f;
                const float *chunk = recv_d[t * D + i] + u * nf * blk;
                for (int k = 0; k < nf; k++)
                    for (int s = 0; s < B; s++)
                        memcpy(got[u * D + i][s][fs[k]], chunk + (k * B + s) * DIM,
                               sizeof(float) * DIM);
            }
    assert_memory_equal(got, flat, sizeof flat);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(step_bytes),          cmocka_unit_test(same_dense_input_as_flat),
        cmocka_unit_test(tower_module_linear), cmocka_unit_test(tower_module_crossnet),
        cmocka_unit_test(hosts_per_tower),     cmocka_unit_test(row_wise_reduce_scatter),
        cmocka_unit_test(errors_are_reported), cmocka_unit_test(sptt_matches_flat_bitwise),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
