/* Dynamic (hash) tables in the graph: the probe op's bytes are the probed keys at the expected
 * probes of double hashing at the table's load (hits and inserted new keys counted from the
 * sampled batch), the key structure's doublings are priced when the new IDs pass the load
 * factor, offloading keys or values moves their bytes to host-link ops and out of HBM by the
 * amounts the key slots and value chunks take, and eviction adds its op. Every expected
 * number is computed by hand below from the fixture's constants: 4 ranks, table d1 of 1000
 * rows, dim 8, sgd, 2 IDs per sample, 16 samples per rank, load factor 0.5, chunks of 256. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "graph_query.h"
#include <math.h>

#include "dynamic.h"
#include "pipeline.h"

#define SCENARIO RT_SOURCE_DIR "/tests/data/dynamic.yaml"

enum { RANKS = 4, ROWS = 1000, DIM = 8, IDS_PER_RANK = 32, ITERS = 12 };

/* Writes a copy of the fixture model whose table d1 has HASH as its hash map, and a scenario
 * using it, into a fresh directory; returns the scenario path (static storage). */
static const char *variant(const char *hash)
{
    static char dir[64], path[128];
    snprintf(dir, sizeof dir, "/tmp/rt-dyn-XXXXXX");
    if (!mkdtemp(dir)) fail_msg("mkdtemp");
    char model[128];
    snprintf(model, sizeof model, "%s/model.yaml", dir);
    FILE *f = fopen(model, "w");
    assert_non_null(f);
    fprintf(f,
            "name: dynamic-variant\nsource: \"rectwin tests\"\ndense_features: 4\n"
            "defaults: {dim: 8, optimizer: sgd, initializer: normal, ids: {kind: uniform}}\n"
            "tables:\n"
            "  - {name: d1, rows: 1000, dynamic: true, pooling: {kind: fixed, mean: 2},\n"
            "     hash: %s}\n"
            "  - {name: s1, rows: 10, pooling: {kind: fixed, mean: 1}}\n"
            "layers:\n  - {type: mlp, name: top, input: [dense, embeddings], sizes: [16, 1]}\n",
            hash);
    fclose(f);
    snprintf(path, sizeof path, "%s/scenario.yaml", dir);
    f = fopen(path, "w");
    assert_non_null(f);
    fprintf(f,
            "name: dynamic-variant\nmodel: {file: model.yaml}\n"
            "topology: {file: %s/topologies/dgx-h100.yaml, nodes: 2, node: {devices: 2}}\n"
            "plan: {name: flat, sharding: table_wise}\n"
            "workload: {batch_per_rank: 16, seed: 7, mode: exact, new_id_rate: 0.1,\n"
            "           iterations: 10, warmup: 2}\n",
            RT_SOURCE_DIR);
    fclose(f);
    return path;
}

static void build(rt_pipeline *p, const char *path, const char *set)
{
    const char *sets[1] = {set};
    if (rt_pipeline_run(p, path, sets, set ? 1 : 0, stderr)) fail_msg("pipeline failed");
    if (!strncmp(path, "/tmp/rt-dyn-", 12)) { /* a variant: loaded, so no longer needed */
        char dir[128], model[160];
        snprintf(dir, sizeof dir, "%.*s", (int)(strrchr(path, '/') - path), path);
        snprintf(model, sizeof model, "%s/model.yaml", dir);
        unlink(model), unlink(path), rmdir(dir);
    }
}

/* The rank that owns table d1 (table-wise: the one whose probe op has bytes). */
static int owner_of_d1(const rt_graph *g)
{
    for (int u = 0; u < g->n_units; u++)
        for (int i = 0; i < g->units[u].n_features; i++)
            if (g->units[u].features[i] == 0) return g->units[u].owner[0];
    fail_msg("no unit holds d1");
    return -1;
}

/* New keys (past the table's rows) and all IDs of d1 over every rank's batch. */
static void count_ids(const rt_workload *w, double *hits, double *fresh)
{
    *hits = *fresh = 0;
    for (int r = 0; r < RANKS; r++) {
        const rt_feature_batch *fb = rt_workload_batch(w, r, 0);
        assert_int_equal(fb->n_ids, IDS_PER_RANK);
        for (uint64_t i = 0; i < fb->n_ids; i++)
            *(fb->ids[i] >= ROWS ? fresh : hits) += 1;
    }
}

static double hit_probes(double a)
{
    return log(1 / (1 - a)) / a;
}

/* Without new IDs: 1000 keys in 2048 slots (1024 would pass load 0.5), no growth; each of
 * the 128 IDs reads its 8-byte key, writes its 8-byte row, probes (1/a) ln(1/(1-a)) slots of
 * 16 bytes and reads and writes its 16 bytes of counters. */
static void probe_bytes_at_the_load(void **state)
{
    (void)state;
    rt_pipeline p = {0};
    build(&p, SCENARIO, "workload.new_id_rate=0");
    const rt_graph *g = p.graph;
    int owner = owner_of_d1(g);
    int probe = must_find_op(g, "emb.fwd.probe", "hash_probe");
    assert_int_equal(g->ops[probe].kernel, RT_K_HASH);
    assert_int_equal(count_ops(g, "emb.fwd.probe"), 1);
    assert_int_equal(count_ops(g, "emb.fwd.fetch"), 0);
    assert_int_equal(count_ops(g, "emb.bwd.evict"), 0);
    double a = 1000.0 / 2048;
    double want = 4 * IDS_PER_RANK * (8 + 8 + 32 + 16 * hit_probes(a));
    assert_true(fabs(rt_graph_cost(g, probe, owner)->bytes - want) < 1e-6 * want);
    for (int r = 0; r < RANKS; r++)
        if (r != owner) assert_true(rt_graph_cost(g, probe, r)->bytes == 0);
    rt_pipeline_free(&p);
}

/* With new IDs at rate 0.1: 0.1 x 32 x 4 = 12.8 new keys a batch for 12 batches. The table
 * probes at 1000/2048 and 1012.8/2048, then passes 1024 keys and doubles to 4096 slots (read
 * 2048 slots, write 4096: 98304 bytes over 12 batches), and probes at (1000 + 12.8 i)/4096
 * for i = 2..11. A new key misses (1/(1-a) slots) and is inserted: slot 16, metadata 24,
 * row 32 bytes. */
static void new_ids_insert_and_grow(void **state)
{
    (void)state;
    rt_pipeline p = {0};
    build(&p, SCENARIO, NULL);
    const rt_graph *g = p.graph;
    int owner = owner_of_d1(g), probe = must_find_op(g, "emb.fwd.probe", "hash_probe");
    double hits, fresh;
    count_ids(p.workload, &hits, &fresh);
    assert_true(fresh > 0 && hits > 0);
    double a = (1000.0 / 2048 + 1012.8 / 2048) / ITERS;
    for (int i = 2; i < ITERS; i++)
        a += (1000 + 12.8 * i) / 4096 / ITERS;
    double want = hits * (48 + 16 * hit_probes(a)) + fresh * (48 + 16 / (1 - a) + 16 + 24 + 32) +
                  16.0 * (2048 + 4096) / ITERS;
    double got = rt_graph_cost(g, probe, owner)->bytes;
    assert_true(fabs(got - want) < 1e-6 * want);
    rt_dyn_spec spec = {0.5, 256, RT_EVICT_NONE, 0, RT_OFFLOAD_NONE};
    rt_dyn_run run = rt_dyn_simulate(&spec, 1000, 12.8, ITERS);
    assert_int_equal(run.grows, 1);
    assert_true(run.slots_end == 4096 && fabs(run.keys_end - 1153.6) < 1e-9);
    rt_pipeline_free(&p);
}

/* HBM on the owner: the 4096 key slots (65536 B) leave with offload: keys; the value chunks
 * (1153.6 rows handed out: chunks 0..4 in use plus the spare, 6 x 256 rows of 32 B values and
 * 24 B metadata, 86016 B) leave with offload: values, whose rows then cross the host link
 * twice (fetch before the lookup, write-back after the update), 32 bytes per probed ID. */
static void offload_moves_bytes_to_the_host_link(void **state)
{
    (void)state;
    rt_pipeline base = {0}, keys = {0}, values = {0};
    build(&base, variant("{load_factor: 0.5, chunk_rows: 256}"), NULL);
    build(&keys, variant("{load_factor: 0.5, chunk_rows: 256, offload: keys}"), NULL);
    build(&values, variant("{load_factor: 0.5, chunk_rows: 256, offload: values}"), NULL);
    int owner = owner_of_d1(base.graph);
    double hbm = base.graph->peak_hbm_bytes[owner];
    assert_true(fabs(hbm - keys.graph->peak_hbm_bytes[owner] - 65536) < 1e-6);
    assert_true(fabs(hbm - values.graph->peak_hbm_bytes[owner] - 86016) < 1e-6);

    int host = must_find_op(keys.graph, "emb.fwd.probe", "hash_probe_host");
    assert_int_equal(keys.graph->ops[host].kernel, RT_K_H2D);
    assert_int_equal(keys.graph->ops[host].stream, RT_STREAM_COPY);
    assert_int_equal(find_op(keys.graph, "emb.fwd.probe", "hash_probe", 0), -1);
    assert_true(rt_graph_cost(keys.graph, host, owner)->bytes == 4 * IDS_PER_RANK * (8 + 8));

    int fetch = must_find_op(values.graph, "emb.fwd.fetch", NULL);
    int back = must_find_op(values.graph, "emb.bwd.writeback", NULL);
    assert_int_equal(values.graph->ops[fetch].kernel, RT_K_H2D);
    assert_true(rt_graph_cost(values.graph, fetch, owner)->bytes == 4 * IDS_PER_RANK * DIM * 4);
    assert_true(rt_graph_cost(values.graph, back, owner)->bytes == 4 * IDS_PER_RANK * DIM * 4);
    rt_pipeline_free(&base), rt_pipeline_free(&keys), rt_pipeline_free(&values);
}

/* LRU eviction to 1050 keys: the table passes 1050 after the 4th batch (1051.2 keys) and
 * evicts 1.2 then 12.8 keys a batch; the op scans the live keys' 24-byte metadata and erases
 * each evicted key's slot and metadata (40 bytes). */
static void eviction_scans_and_erases(void **state)
{
    (void)state;
    rt_pipeline p = {0};
    build(&p, variant("{load_factor: 0.5, chunk_rows: 256, eviction: lru, capacity: 1050}"), NULL);
    int owner = owner_of_d1(p.graph), ev = must_find_op(p.graph, "emb.bwd.evict", "hash_evict");
    assert_int_equal(p.graph->ops[ev].kernel, RT_K_HASH);
    double live = 0, evicted = 1.2 + 12.8 * 8;
    for (int i = 1; i <= 4; i++)
        live += 1000 + 12.8 * i;
    live += 8 * (1050 + 12.8);
    double want = (live * 24 + evicted * 40) / ITERS;
    assert_true(fabs(rt_graph_cost(p.graph, ev, owner)->bytes - want) < 1e-6 * want);
    rt_pipeline_free(&p);
}

/* Probes: the textbook values at load 1/2 (Knuth 6.4: 2 ln 2 and 2 slots). */
static void probe_formulas(void **state)
{
    (void)state;
    assert_true(fabs(rt_dyn_probes_hit(0.5) - 2 * log(2)) < 1e-12);
    assert_true(fabs(rt_dyn_probes_miss(0.5) - 2) < 1e-12);
    assert_true(rt_dyn_initial_slots(1000, 0.5) == 2048);
    assert_true(rt_dyn_initial_slots(3, 0.75) == 16);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(probe_formulas),
        cmocka_unit_test(probe_bytes_at_the_load),
        cmocka_unit_test(new_ids_insert_and_grow),
        cmocka_unit_test(offload_moves_bytes_to_the_host_link),
        cmocka_unit_test(eviction_scans_and_erases),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
