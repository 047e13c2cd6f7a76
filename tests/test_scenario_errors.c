/* Every class of user error in a scenario exits through a file:line:col message that names
 * the key, and never crashes or returns a half-loaded scenario. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "pipeline.h"
#include "scenario.h"

static char dir[256];

static int setup(void **state)
{
    (void)state;
    snprintf(dir, sizeof dir, "/tmp/rt_test_scn_XXXXXX");
    return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    return system(cmd) == 0 ? 0 : -1;
}

/* A valid scenario over the tiny test model; BODY_EXTRA lines replace nothing, they are
 * appended inside the given section by the caller's text. */
static const char *write_scenario(const char *text)
{
    static char path[300];
    snprintf(path, sizeof path, "%s/s.yaml", dir);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
    return path;
}

#define MODEL "  file: " RT_SOURCE_DIR "/tests/data/tiny-model.yaml\n"
#define TOPO "  file: " RT_SOURCE_DIR "/topologies/dgx-h100.yaml\n"

/* Loads TEXT (with SETS), configures its plan, expects failure and a message that contains
 * every string in EXPECT (NULL-terminated). */
static void expect_error(const char *text, const char *const *sets, int n_sets,
                         const char *const *expect)
{
    const char *path = write_scenario(text);
    char *buf = NULL;
    size_t len = 0;
    FILE *err = open_memstream(&buf, &len);
    /* The whole pipeline: some errors (more shards than rows) need the plan's shard groups. */
    rt_pipeline p;
    int failed = rt_pipeline_run(&p, path, sets, n_sets, err) != 0;
    rt_pipeline_free(&p);
    fclose(err);
    if (!failed) fail_msg("expected an error for:\n%s", text);
    for (int i = 0; expect[i]; i++)
        if (!strstr(buf, expect[i])) fail_msg("message lacks '%s':\n%s", expect[i], buf);
    free(buf);
}

static char loc[400];
static const char *at(int line, int col)
{
    snprintf(loc, sizeof loc, "%s/s.yaml:%d:%d: ", dir, line, col);
    return loc;
}

static void valid_scenario_loads(void **state)
{
    (void)state;
    const char *path = write_scenario("name: ok\nmodel:\n" MODEL "topology:\n" TOPO "  nodes: 2\n"
                                      "plan: {name: flat}\nworkload: {batch_per_rank: 16}\n");
    rt_scenario *s = rt_scenario_load(path, NULL, 0, stderr);
    assert_non_null(s);
    assert_int_equal(rt_scenario_ranks(s), 16);
    assert_int_equal(s->model.n_tables, 4);
    rt_scenario_free(s);
}

static void unknown_key(void **state)
{
    (void)state;
    const char *e[] = {NULL, "unknown key 'workload.batch_per_rnak'", "batch_per_rank", NULL};
    expect_error("name: x\nmodel:\n" MODEL "topology:\n" TOPO "  nodes: 1\nplan: {name: flat}\n"
                 "workload: {batch_per_rank: 16, batch_per_rnak: 3}\n",
                 NULL, 0, (e[0] = at(8, 32), e));
}

static void wrong_type(void **state)
{
    (void)state;
    const char *e[] = {NULL, "key 'workload.batch_per_rank'", "not an integer", NULL};
    expect_error("name: x\nmodel:\n" MODEL "topology:\n" TOPO "  nodes: 1\nplan: {name: flat}\n"
                 "workload:\n  batch_per_rank: lots\n",
                 NULL, 0, (e[0] = at(9, 19), e));
}

static void out_of_range(void **state)
{
    (void)state;
    const char *e[] = {NULL, "key 'topology.nodes'", "out of range", NULL};
    expect_error("name: x\nmodel:\n" MODEL "topology:\n" TOPO "  nodes: 0\nplan: {name: flat}\n"
                 "workload: {batch_per_rank: 16}\n",
                 NULL, 0, (e[0] = at(6, 10), e));
}

/* node.cores_nodes shares node.cores among whole nodes: it needs cores, and a divisor of the
 * node count. */
static void bad_cores_nodes(void **state)
{
    (void)state;
    const char *scn = "name: x\nmodel:\n" MODEL "topology:\n" TOPO "  nodes: 2\n"
                      "plan: {name: flat}\nworkload: {batch_per_rank: 16}\n";
    const char *no_cores[] = {"topology.node.cores_nodes=2"};
    const char *e1[] = {"node.cores_nodes shares the node.cores cores, and there are none",
                        "allowed: set node.cores", NULL};
    expect_error(scn, no_cores, 1, e1);
    const char *three[] = {"topology.node.cores=2", "topology.node.cores_nodes=3"};
    const char *e2[] = {"2 nodes do not split into groups of 3 sharing cores",
                        "allowed: a divisor of 2", NULL};
    expect_error(scn, three, 2, e2);
    const char *zero[] = {"topology.node.cores=2", "topology.node.cores_nodes=0"};
    const char *e3[] = {"topology.node.cores_nodes", "out of range", NULL};
    expect_error(scn, zero, 2, e3);
    /* a turn on a shared core is a time of at most a second */
    const char *long_turn[] = {"topology.node.cores=2", "topology.node.core_slice=2s"};
    const char *e4[] = {"topology.node.core_slice", "out of range", NULL};
    expect_error(scn, long_turn, 2, e4);
    const char *no_unit[] = {"topology.node.cores=2", "topology.node.core_slice=4"};
    const char *e5[] = {"topology.node.core_slice", NULL};
    expect_error(scn, no_unit, 2, e5);
}

/* faults: each entry is checked where it is written: its link kind, its keys, and its indices
 * against the cluster once the node count is known. */
static void bad_faults(void **state)
{
    (void)state;
    const char *e1[] = {NULL, "nic node 2 names no link", "allowed: node 0..1", NULL};
    expect_error("name: x\nmodel:\n" MODEL "topology:\n" TOPO "  nodes: 2\n"
                 "  faults:\n    - {link: nic, node: 2, nic: 0, bandwidth: 0.5}\n"
                 "plan: {name: flat}\nworkload: {batch_per_rank: 16}\n",
                 NULL, 0, (e1[0] = at(8, 8), e1));
    const char *e2[] = {NULL, "key 'topology.faults.0.link'", "nvlink", "uplink", NULL};
    expect_error("name: x\nmodel:\n" MODEL "topology:\n" TOPO "  nodes: 2\n"
                 "  faults:\n    - {link: spine, node: 1, bandwidth: 0.5}\n"
                 "plan: {name: flat}\nworkload: {batch_per_rank: 16}\n",
                 NULL, 0, (e2[0] = at(8, 14), e2));
    const char *e3[] = {NULL, "topology.faults.0.background", "out of range", NULL};
    expect_error("name: x\nmodel:\n" MODEL "topology:\n" TOPO "  nodes: 2\n"
                 "  faults:\n    - {link: nvlink, rank: 3, background: 1}\n"
                 "plan: {name: flat}\nworkload: {batch_per_rank: 16}\n",
                 NULL, 0, (e3[0] = at(8, 43), e3));
}

/* NCCL's channel tuning is all or nothing: `channels:` with every protocol's threads and
 * thread_threshold (dgx-h100.yaml has them), and a channel count NCCL can have (1..64). */
static void channel_and_tree_tuning_errors(void **state)
{
    (void)state;
    const char *e1[] = {NULL, "key 'topology.collective.channels'", "allowed: [1, 64]", NULL};
    expect_error("name: x\nmodel:\n" MODEL "topology:\n" TOPO "  nodes: 2\n"
                 "  collective: {channels: 65}\n"
                 "plan: {name: flat}\nworkload: {batch_per_rank: 16}\n",
                 NULL, 0, (e1[0] = at(7, 26), e1));
    /* dgx-a100.yaml has protocols without threads: channels alone is refused, and so are
     * threads without channels. */
#define TOPO_A100 "  file: " RT_SOURCE_DIR "/topologies/dgx-a100.yaml\n"
    const char *e2[] = {NULL, "channels needs protocols: with threads and thread_threshold", NULL};
    expect_error("name: x\nmodel:\n" MODEL "topology:\n" TOPO_A100 "  nodes: 2\n"
                 "  collective: {channels: 16}\n"
                 "plan: {name: flat}\nworkload: {batch_per_rank: 16}\n",
                 NULL, 0, (e2[0] = at(7, 16), e2));
    const char *e3[] = {NULL, "threads and thread_threshold do nothing without channels", NULL};
    expect_error("name: x\nmodel:\n" MODEL "topology:\n" TOPO_A100 "  nodes: 2\n"
                 "  collective:\n    protocols:\n"
                 "      ll: {bandwidth: 0.5, ring: {base: 1us, nvlink: 1us, pcie: 1us, net: 1us},"
                 " tree: {base: 1us, nvlink: 1us, pcie: 1us, net: 1us}, threads: 512,"
                 " thread_threshold: 8}\n"
                 "plan: {name: flat}\nworkload: {batch_per_rank: 16}\n",
                 NULL, 0, (e3[0] = at(8, 5), e3));
#undef TOPO_A100
    /* NCCL runs NVLS on 2 channels or more. */
    const char *e5[] = {NULL, "key 'topology.collective.nvls.channels'", "allowed: [2, 64]", NULL};
    expect_error("name: x\nmodel:\n" MODEL "topology:\n" TOPO "  nodes: 1\n"
                 "  collective: {nvls: {efficiency: 0.85, channels: 1, latency: 25us}}\n"
                 "plan: {name: flat}\nworkload: {batch_per_rank: 16}\n",
                 NULL, 0, (e5[0] = at(7, 51), e5));
    /* A tree correction table has 1 to 32 factors (64 B to 128 GiB). */
    const char *e4[] = {NULL, "tree_correction has 0 factors", "allowed: 1 to 32", NULL};
    expect_error("name: x\nmodel:\n" MODEL "topology:\n" TOPO "  nodes: 2\n"
                 "  collective:\n    protocols:\n"
                 "      ll: {bandwidth: 0.5, ring: {base: 1us, nvlink: 1us, pcie: 1us, net: 1us},"
                 " tree: {base: 1us, nvlink: 1us, pcie: 1us, net: 1us}, tree_correction: []}\n"
                 "plan: {name: flat}\nworkload: {batch_per_rank: 16}\n",
                 NULL, 0, (e4[0] = at(9, 12), e4));
}

static void unknown_unit(void **state)
{
    (void)state;
    const char *e[] = {NULL, "key 'topology.scale_out.nic_bw'", "unknown unit", "Gbps", NULL};
    expect_error(
        "name: x\nmodel:\n" MODEL "topology:\n" TOPO "  nodes: 1\n"
        "  scale_out: {nic_bw: 400Gbs}\nplan: {name: flat}\nworkload: {batch_per_rank: 16}\n",
        NULL, 0, (e[0] = at(7, 23), e));
}

static void missing_unit(void **state)
{
    (void)state;
    const char *e[] = {NULL, "missing unit", NULL};
    expect_error(
        "name: x\nmodel:\n" MODEL "topology:\n" TOPO "  nodes: 1\n"
        "  scale_out:\n    nic_latency: 2\nplan: {name: flat}\nworkload: {batch_per_rank: 16}\n",
        NULL, 0, (e[0] = at(8, 18), e));
}

static void unknown_enum(void **state)
{
    (void)state;
    const char *e[] = {NULL, "key 'plan.sharding'", "unknown value 'diagonal'", "row_wise", NULL};
    expect_error("name: x\nmodel:\n" MODEL "topology:\n" TOPO "  nodes: 1\n"
                 "plan: {name: flat, sharding: diagonal}\nworkload: {batch_per_rank: 16}\n",
                 NULL, 0, (e[0] = at(7, 30), e));
}

static void batch_not_divisible(void **state)
{
    (void)state;
    const char *e[] = {NULL, "not divisible by the 16 ranks", NULL};
    expect_error("name: x\nmodel:\n" MODEL "topology:\n" TOPO "  nodes: 2\nplan: {name: flat}\n"
                 "workload: {global_batch: 1000}\n",
                 NULL, 0, (e[0] = at(8, 26), e));
}

static void more_shards_than_rows(void **state)
{
    (void)state;
    /* 200 nodes x 8 = 1600 row-wise shards of tables with 1000 rows. */
    const char *e[] = {NULL, "more shards than rows", "table 'a'", NULL};
    expect_error("name: x\nmodel:\n" MODEL "topology:\n" TOPO "  nodes: 200\n"
                 "plan: {name: flat, sharding: row_wise}\nworkload: {batch_per_rank: 16}\n",
                 NULL, 0, (e[0] = at(7, 30), e));
}

static void plan_option_not_in_plan(void **state)
{
    (void)state;
    const char *e[] = {NULL, "unknown key 'plan.towers'", "allowed here: name, sharding", NULL};
    expect_error("name: x\nmodel:\n" MODEL "topology:\n" TOPO "  nodes: 1\n"
                 "plan: {name: flat, towers: 4}\nworkload: {batch_per_rank: 16}\n",
                 NULL, 0, (e[0] = at(7, 20), e));
}

static void unknown_plan(void **state)
{
    (void)state;
    const char *e[] = {NULL, "unknown plan 'flatter'", "allowed plans: flat", NULL};
    expect_error("name: x\nmodel:\n" MODEL "topology:\n" TOPO "  nodes: 1\n"
                 "plan: {name: flatter}\nworkload: {batch_per_rank: 16}\n",
                 NULL, 0, (e[0] = at(7, 14), e));
}

static void missing_required_key(void **state)
{
    (void)state;
    const char *e[] = {NULL, "key 'topology.nodes': missing", NULL};
    expect_error("name: x\nmodel:\n" MODEL "topology:\n" TOPO "plan: {name: flat}\n"
                 "workload: {batch_per_rank: 16}\n",
                 NULL, 0, (e[0] = at(5, 3), e));
}

static void unsupported_precision(void **state)
{
    (void)state;
    const char *e[] = {NULL, "dense precision fp8 is not supported by device", NULL};
    const char *text =
        "name: x\nmodel:\n  file: " RT_SOURCE_DIR "/tests/data/tiny-model.yaml\n"
        "topology:\n  file: " RT_SOURCE_DIR "/topologies/dgx-v100.yaml\n  nodes: 1\n"
        "plan: {name: flat, precision: {dense: fp8}}\nworkload: {batch_per_rank: 16}\n";
    expect_error(text, NULL, 0, (e[0] = at(7, 8), e));
}

static void yaml_syntax_error(void **state)
{
    (void)state;
    const char *e[] = {"s.yaml:3:1: error: flow sequence without a closing bracket",
                       "not valid YAML", NULL};
    expect_error("name: x\nmodel: [unclosed\n", NULL, 0, e);
}

static void missing_model_file(void **state)
{
    (void)state;
    const char *e[] = {NULL, "cannot open", "cannot load the model file", NULL};
    expect_error("name: x\nmodel:\n  file: nowhere.yaml\ntopology:\n" TOPO "  nodes: 1\n"
                 "plan: {name: flat}\nworkload: {batch_per_rank: 16}\n",
                 NULL, 0, (e[0] = at(3, 9), e));
}

static void error_in_model_file_names_that_file(void **state)
{
    (void)state;
    char model[300];
    snprintf(model, sizeof model, "%s/m.yaml", dir);
    FILE *f = fopen(model, "w");
    assert_non_null(f);
    fputs("name: m\nsource: t\ndense_features: 4\ntables:\n  - {name: a, rows: 10, dim: -8}\n"
          "layers:\n  - {type: mlp, name: top, sizes: [1]}\n",
          f);
    fclose(f);
    char want[400];
    snprintf(want, sizeof want, "%s:5:30: key 'tables.0.dim'", model);
    const char *e[] = {want, "out of range", NULL};
    expect_error("name: x\nmodel:\n  file: m.yaml\ntopology:\n" TOPO "  nodes: 1\n"
                 "plan: {name: flat}\nworkload: {batch_per_rank: 16}\n",
                 NULL, 0, e);
}

static void set_override_errors(void **state)
{
    (void)state;
    const char *good = "name: x\nmodel:\n" MODEL "topology:\n" TOPO "  nodes: 1\n"
                       "plan: {name: flat}\nworkload: {batch_per_rank: 16}\n";
    const char *bad_type[] = {"workload.seed=1", "topology.nodes=many"};
    const char *e1[] = {"--set:2:", "key 'topology.nodes'", "not an integer", NULL};
    expect_error(good, bad_type, 2, e1);
    const char *no_eq[] = {"topology.nodes"};
    const char *e2[] = {"--set:1:1:", "not of the form path.to.key=value", NULL};
    expect_error(good, no_eq, 1, e2);
    const char *unknown[] = {"workload.bacth=3"};
    const char *e3[] = {"--set:1:", "unknown key 'workload.bacth'", NULL};
    expect_error(good, unknown, 1, e3);
    const char *unit[] = {"topology.scale_out.nic_bw=fast"};
    const char *e4[] = {"--set:1:", "topology.scale_out.nic_bw", NULL};
    expect_error(good, unit, 1, e4);
}

static void set_override_applies(void **state)
{
    (void)state;
    const char *path = write_scenario("name: ok\nmodel:\n" MODEL "topology:\n" TOPO "  nodes: 2\n"
                                      "plan: {name: flat}\nworkload: {batch_per_rank: 16}\n");
    const char *sets[] = {"topology.nodes=64", "topology.scale_out.nic_bw=800Gbps",
                          "workload.ids={kind: zipf, alpha: 1.2}", "plan.sharding=column_wise"};
    rt_scenario *s = rt_scenario_load(path, sets, 4, stderr);
    assert_non_null(s);
    assert_int_equal(s->topology.nodes, 64);
    assert_true(s->topology.net.nic_bw == 100e9);       /* 800 Gb/s = 100 GB/s */
    assert_true(s->topology.node.scale_up_bw == 450e9); /* untouched file value */
    assert_int_equal(s->workload.has_ids, 1);
    assert_true(s->workload.ids.alpha == 1.2);
    assert_int_equal(s->plan.sharding, RT_SHARD_COLUMN);
    rt_scenario_free(s);
}

/* Common schedule keys (overlap, balance, token_target, memory) and hsp's group size. */
static void overlap_unknown(void **state)
{
    (void)state;
    const char *e[] = {NULL, "key 'plan.overlap'", "sync, pipeline, semi_async", NULL};
    expect_error("name: x\nmodel:\n" MODEL "topology:\n" TOPO "  nodes: 1\n"
                 "plan: {name: flat, overlap: async}\nworkload: {batch_per_rank: 16}\n",
                 NULL, 0, (e[0] = at(7, 29), e));
}

static void balance_needs_sequences(void **state)
{
    (void)state;
    const char *e[] = {NULL, "key 'plan.balance'", "has none (seq_len 0)", "allowed: none", NULL};
    expect_error("name: x\nmodel:\n" MODEL "topology:\n" TOPO "  nodes: 1\n"
                 "plan: {name: flat, balance: token_realloc}\nworkload: {batch_per_rank: 16}\n",
                 NULL, 0, (e[0] = at(7, 29), e));
}

static void token_target_without_dynamic_batching(void **state)
{
    (void)state;
    const char *e[] = {NULL, "key 'plan.token_target'", "only with it", NULL};
    expect_error("name: x\nmodel:\n" MODEL "topology:\n" TOPO "  nodes: 1\n"
                 "plan: {name: flat, token_target: 100}\nworkload: {batch_per_rank: 16}\n",
                 NULL, 0, (e[0] = at(7, 34), e));
}

static void memory_policy_unknown(void **state)
{
    (void)state;
    const char *e[] = {NULL, "key 'plan.memory'", "refuse, warn", NULL};
    expect_error("name: x\nmodel:\n" MODEL "topology:\n" TOPO "  nodes: 1\n"
                 "plan: {name: flat, memory: ignore}\nworkload: {batch_per_rank: 16}\n",
                 NULL, 0, (e[0] = at(7, 28), e));
}

static void hsp_group_across_node_boundaries(void **state)
{
    (void)state;
    const char *e[] = {NULL, "key 'plan.group_size'",
                       "neither a multiple nor a divisor of the 8 devices", NULL};
    expect_error("name: x\nmodel:\n" MODEL "topology:\n" TOPO "  nodes: 3\n"
                 "plan: {name: hsp, group_size: 12}\nworkload: {batch_per_rank: 16}\n",
                 NULL, 0, (e[0] = at(7, 31), e));
}

static void new_ids_need_a_dynamic_table(void **state)
{
    (void)state;
    const char *e[] = {NULL, "new_id_rate 0.1", "no dynamic table", "allowed: 0", NULL};
    expect_error("name: x\nmodel:\n" MODEL "topology:\n" TOPO "  nodes: 1\n"
                 "plan: {name: flat}\nworkload: {batch_per_rank: 16, new_id_rate: 0.1}\n",
                 NULL, 0, (e[0] = at(8, 45), e));
}

static void negatives_need_sampled_softmax(void **state)
{
    (void)state;
    const char *e[] = {NULL, "samples no negatives", "allowed: the negatives map", NULL};
    expect_error("name: x\nmodel:\n" MODEL "topology:\n" TOPO "  nodes: 1\n"
                 "plan: {name: flat, negatives: {offload: true}}\nworkload: {batch_per_rank: 16}\n",
                 NULL, 0, (e[0] = at(7, 32), e));
}

/* A model file with table T (its YAML flow mapping) next to the scenario. */
static const char *with_table(const char *t)
{
    static char text[1024];
    char path[300];
    snprintf(path, sizeof path, "%s/m.yaml", dir);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fprintf(f,
            "name: m\nsource: test\ndense_features: 2\ntables:\n  - %s\n"
            "layers:\n  - {type: mlp, name: top, input: [dense, embeddings], sizes: [4, 1]}\n",
            t);
    fclose(f);
    snprintf(text, sizeof text,
             "name: x\nmodel: {file: m.yaml}\ntopology:\n" TOPO "  nodes: 1\n"
             "plan: {name: flat}\nworkload: {batch_per_rank: 16}\n");
    return text;
}

static void hash_needs_a_dynamic_table(void **state)
{
    (void)state;
    char where[400];
    snprintf(where, sizeof where, "%s/m.yaml:5:40: ", dir);
    const char *e[] = {where, "allowed: with dynamic: true", NULL};
    expect_error(with_table("{name: t, rows: 10, dim: 4, hash: {load_factor: 0.5}}"), NULL, 0, e);
}

static void eviction_needs_a_capacity(void **state)
{
    (void)state;
    const char *e[] = {"m.yaml:5:", "eviction lru with capacity 0", "allowed: eviction lru or lfu",
                       NULL};
    expect_error(with_table("{name: t, rows: 10, dim: 4, dynamic: true, hash: {eviction: lru}}"),
                 NULL, 0, e);
    const char *f[] = {"key 'tables.0.hash.load_factor'", "out of range", NULL};
    expect_error(with_table("{name: t, rows: 10, dim: 4, dynamic: true, hash: {load_factor: 1}}"),
                 NULL, 0, f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(valid_scenario_loads),
        cmocka_unit_test(unknown_key),
        cmocka_unit_test(bad_faults),
        cmocka_unit_test(bad_cores_nodes),
        cmocka_unit_test(channel_and_tree_tuning_errors),
        cmocka_unit_test(wrong_type),
        cmocka_unit_test(out_of_range),
        cmocka_unit_test(unknown_unit),
        cmocka_unit_test(missing_unit),
        cmocka_unit_test(unknown_enum),
        cmocka_unit_test(batch_not_divisible),
        cmocka_unit_test(more_shards_than_rows),
        cmocka_unit_test(plan_option_not_in_plan),
        cmocka_unit_test(unknown_plan),
        cmocka_unit_test(missing_required_key),
        cmocka_unit_test(unsupported_precision),
        cmocka_unit_test(yaml_syntax_error),
        cmocka_unit_test(missing_model_file),
        cmocka_unit_test(error_in_model_file_names_that_file),
        cmocka_unit_test(set_override_errors),
        cmocka_unit_test(set_override_applies),
        cmocka_unit_test(overlap_unknown),
        cmocka_unit_test(balance_needs_sequences),
        cmocka_unit_test(token_target_without_dynamic_batching),
        cmocka_unit_test(memory_policy_unknown),
        cmocka_unit_test(hsp_group_across_node_boundaries),
        cmocka_unit_test(new_ids_need_a_dynamic_table),
        cmocka_unit_test(negatives_need_sampled_softmax),
        cmocka_unit_test(hash_needs_a_dynamic_table),
        cmocka_unit_test(eviction_needs_a_capacity),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
