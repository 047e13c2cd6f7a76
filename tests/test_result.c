/* Result writers: summary.json, ops.csv and trace.json parse back (JSON is YAML, so libfyaml
 * reads them) with the expected structure; failed writes leave nothing behind; the JSON
 * writer escapes and formats correctly. */
#include <dirent.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>
#include <libfyaml.h>

#include "atomic_file.h"
#include "json.h"
#include "manifest.h"
#include "result.h"

static struct fy_node *get(struct fy_node *map, const char *key)
{
    struct fy_node *n = fy_node_mapping_lookup_by_string(map, key, FY_NT);
    if (!n) fprintf(stderr, "missing key '%s'\n", key);
    assert_non_null(n);
    return n;
}

static const char *scalar(struct fy_node *n)
{
    assert_true(fy_node_is_scalar(n));
    size_t len;
    const char *s = fy_node_get_scalar(n, &len);
    assert_non_null(s);
    static char buf[256]; /* test-only: one scalar at a time */
    snprintf(buf, sizeof buf, "%.*s", (int)len, s);
    return buf;
}

static double number(struct fy_node *n)
{
    const char *s = scalar(n);
    char *end;
    double v = strtod(s, &end);
    assert_true(end != s && *end == '\0');
    return v;
}

/* A 2-rank graph with a kernel and a collective, with times filled by hand. */
static rt_graph *graph(void)
{
    rt_graph *g = rt_graph_new(2, 2, NULL, NULL);
    int d[] = {0};
    rt_graph_add_kernel(g, "emb.fwd.lookup", RT_STREAM_COMPUTE, RT_K_LOOKUP, RT_DT_FP32,
                        "lookup, \"pooled\"", NULL, 0);
    rt_graph_add_collective(g, "emb.fwd.out_a2a", RT_STREAM_COMM, RT_COLL_ALLTOALLV, RT_ALGO_DIRECT,
                            (rt_group){2, 1}, "out_a2a", d, 1);
    for (int rep = 0; rep < 2; rep++) {
        rt_graph_cost(g, 0, rep)->bytes = 1e6;
        rt_graph_cost(g, 1, rep)->bytes = 2e6;
    }
    return g;
}

static rt_result *result(const rt_graph *g, rt_scenario *s)
{
    memset(s, 0, sizeof *s);
    s->name = "unit";
    s->plan.name = "flat";
    s->topology.name = "hand";
    s->topology.nodes = 1;
    s->topology.node.devices = 2;
    s->topology.device.hbm_bw = 1e12;
    s->topology.device.eff_hbm = 1;
    s->topology.device.eff_flops = 1;
    s->topology.device.peak_flops[RT_DT_FP32] = 1e12;
    s->workload.batch_per_rank = 4;
    s->workload.seed = 18446744073709551615ULL;
    rt_result *r = rt_result_new(g, "hand");
    double t[2][2][2] = {{{0, 1e-3}, {1e-3, 3e-3}}, {{0, 2e-3}, {2e-3, 3e-3}}};
    for (int rep = 0; rep < 2; rep++)
        for (int op = 0; op < 2; op++) {
            r->start[op * 2 + rep] = t[rep][op][0];
            r->end[op * 2 + rep] = t[rep][op][1];
        }
    r->algo[1 * 2 + 0] = r->algo[1 * 2 + 1] = RT_ALGO_DIRECT;
    r->settings_json = strdup("{\"k\": 1}");
    rt_result_finish(r, s);
    return r;
}

static char *tmpdir(void)
{
    char *d = strdup("/tmp/rt_test_result_XXXXXX");
    assert_non_null(mkdtemp(d));
    return d;
}

static void rm_rf(const char *dir)
{
    char cmd[512];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    assert_int_equal(system(cmd), 0);
}

static int count_entries(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d) return -1;
    int n = 0;
    for (struct dirent *e; (e = readdir(d));)
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) n++;
    closedir(d);
    return n;
}

static void check_trace(const char *path, const rt_graph *g)
{
    struct fy_document *doc = fy_document_build_from_file(NULL, path);
    assert_non_null(doc);
    struct fy_node *ev = get(fy_document_root(doc), "traceEvents");
    assert_true(fy_node_is_sequence(ev));
    int n = fy_node_sequence_item_count(ev), x = 0, procs = 0, threads = 0;
    for (int i = 0; i < n; i++) {
        struct fy_node *e = fy_node_sequence_get_by_index(ev, i);
        assert_true(fy_node_is_mapping(e));
        get(e, "name");
        number(get(e, "pid"));
        number(get(e, "tid"));
        const char *ph = scalar(get(e, "ph"));
        if (strcmp(ph, "X") == 0) {
            x++;
            assert_true(number(get(e, "ts")) >= 0);
            assert_true(number(get(e, "dur")) >= 0);
            get(get(e, "args"), "bytes");
            get(e, "cat");
        } else {
            assert_string_equal(ph, "M");
            const char *what = scalar(get(e, "name"));
            if (strcmp(what, "process_name") == 0)
                procs++;
            else if (strcmp(what, "thread_name") == 0)
                threads++;
            else
                fail_msg("unexpected metadata %s", what);
            get(get(e, "args"), "name");
        }
    }
    assert_int_equal(x, g->n_ops * g->n_reps);
    assert_int_equal(procs, g->n_reps);
    assert_int_equal(threads, g->n_reps * RT_STREAM_COUNT);
    /* The collective of rank 1 runs 2..3 ms: ts 2000 us, dur 1000 us. */
    struct fy_node *last = fy_node_sequence_get_by_index(ev, n - 1);
    assert_string_equal(scalar(get(last, "cat")), "emb.fwd.out_a2a");
    assert_true(fabs(number(get(last, "ts")) - 2000) < 1e-9);
    assert_true(fabs(number(get(last, "dur")) - 1000) < 1e-9);
    assert_string_equal(scalar(get(get(last, "args"), "algo")), "direct");
    fy_document_destroy(doc);
}

static void check_summary(const char *path, const rt_result *r)
{
    struct fy_document *doc = fy_document_build_from_file(NULL, path);
    assert_non_null(doc);
    struct fy_node *root = fy_document_root(doc);
    assert_true(fabs(number(get(root, "iteration_time_s")) - 3e-3) < 1e-15);
    assert_true(fabs(number(get(root, "samples_per_s")) - r->samples_per_s) < 1e-9);
    /* Rank 0: comm 1..3 ms, compute 0..1 ms: 2 ms exposed. */
    assert_true(fabs(number(get(root, "exposed_comm_s")) - 2e-3) < 1e-15);
    assert_true(fabs(number(get(root, "mbu")) - 2e6 / (3e-3 * 1e12)) < 1e-12);
    assert_true(fabs(number(get(get(root, "phases"), "emb.fwd.lookup")) - 2e-3) < 1e-15);
    assert_string_equal(scalar(get(get(root, "settings"), "k")), "1");
    assert_string_equal(scalar(get(root, "engine")), "hand");
    assert_string_equal(scalar(get(root, "plan")), "flat");
    struct fy_node *w = get(root, "workload");
    assert_string_equal(scalar(get(w, "mode")), "exact");
    assert_string_equal(scalar(get(w, "seed")), "18446744073709551615");
    for (const char *const *k =
             (const char *const[]){"mfu", "mbu_sparse", "comm_time_s", "peak_hbm_bytes", "scenario",
                                   "model", "topology", "nodes", "ranks", NULL};
         *k; k++)
        get(root, *k);
    fy_document_destroy(doc);
}

static void check_csv(const char *path)
{
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    char line[512];
    assert_non_null(fgets(line, sizeof line, f));
    assert_string_equal(line, "rank,op,name,phase,stream,type,start_s,end_s,flops,bytes\n");
    assert_non_null(fgets(line, sizeof line, f));
    assert_non_null(strstr(line, "0,0,\"lookup, \"\"pooled\"\"\",emb.fwd.lookup,compute,lookup,"));
    int rows = 1;
    while (fgets(line, sizeof line, f))
        rows++;
    assert_int_equal(rows, 4);
    fclose(f);
}

static void writes_three_files(void **state)
{
    (void)state;
    rt_graph *g = graph();
    rt_scenario s;
    rt_result *r = result(g, &s);
    char *dir = tmpdir();
    char out[512], p[600];
    snprintf(out, sizeof out, "%s/a/b", dir);
    assert_int_equal(rt_result_write(r, &s, out, stderr), 0);
    assert_int_equal(count_entries(out), 4); /* the three results and their manifest */
    assert_int_equal(rt_manifest_check(out, stderr), 0);
    /* A file replaced behind the manifest's back (another run's) is detected. */
    snprintf(p, sizeof p, "%s/ops.csv", out);
    FILE *f = fopen(p, "a");
    assert_non_null(f);
    fputs("0,9,x,emb.fwd.lookup,compute,lookup,0,0,0,0\n", f);
    fclose(f);
    assert_int_equal(rt_manifest_check(out, stderr), -1);
    assert_int_equal(rt_result_write(r, &s, out, stderr), 0);
    assert_int_equal(rt_manifest_check(out, stderr), 0);
    snprintf(p, sizeof p, "%s/trace.json", out);
    check_trace(p, g);
    snprintf(p, sizeof p, "%s/summary.json", out);
    check_summary(p, r);
    snprintf(p, sizeof p, "%s/ops.csv", out);
    check_csv(p);
    /* An engine's own file (links.csv of the simgrid engine) joins the set and its manifest;
     * adding it again replaces its text. */
    assert_int_equal(rt_result_add_file(r, "extra.csv", strdup("a,b\n")), 0);
    assert_int_equal(rt_result_add_file(r, "extra.csv", strdup("a,b\n1,2\n")), 0);
    assert_int_equal(r->n_files, 1);
    assert_int_equal(rt_result_write(r, &s, out, stderr), 0);
    assert_int_equal(count_entries(out), 5);
    assert_int_equal(rt_manifest_check(out, stderr), 0);
    snprintf(p, sizeof p, "%s/extra.csv", out);
    f = fopen(p, "r");
    assert_non_null(f);
    char line[16] = {0};
    assert_int_equal(fread(line, 1, sizeof line - 1, f), 8);
    fclose(f);
    assert_string_equal(line, "a,b\n1,2\n");
    rm_rf(dir);
    free(dir);
    rt_result_free(r);
    rt_graph_free(g);
}

static void failed_write_leaves_nothing(void **state)
{
    (void)state;
    rt_graph *g = graph();
    rt_scenario s;
    rt_result *r = result(g, &s);
    char *dir = tmpdir();
    char file[512], out[600];
    /* The output directory would have to live under a regular file: mkdir fails. */
    snprintf(file, sizeof file, "%s/plain", dir);
    FILE *f = fopen(file, "w");
    assert_non_null(f);
    fclose(f);
    snprintf(out, sizeof out, "%s/sub", file);
    char *msg = NULL;
    size_t len = 0;
    FILE *err = open_memstream(&msg, &len);
    assert_int_equal(rt_result_write(r, &s, out, err), -1);
    /* trace.json is a directory: the temp files are written, but no rename may happen. */
    snprintf(out, sizeof out, "%s/out", dir);
    snprintf(file, sizeof file, "%s/out/trace.json", dir);
    assert_int_equal(rt_mkdir_p(file), 0);
    assert_int_equal(rt_result_write(r, &s, out, err), -1);
    fclose(err);
    assert_non_null(strstr(msg, "cannot create directory"));
    assert_non_null(strstr(msg, "trace.json"));
    free(msg);
    assert_int_equal(count_entries(dir), 2); /* plain, out */
    /* Neither the other outputs nor a temporary file remain. */
    assert_int_equal(count_entries(out), 1);
    DIR *d = opendir(out);
    for (struct dirent *e; (e = readdir(d));)
        assert_null(strstr(e->d_name, ".tmp."));
    closedir(d);
    rm_rf(dir);
    free(dir);
    rt_result_free(r);
    rt_graph_free(g);
}

static void atomic_abort(void **state)
{
    (void)state;
    char *dir = tmpdir();
    char path[512];
    snprintf(path, sizeof path, "%s/x.json", dir);
    rt_atomic_file a;
    assert_int_equal(rt_atomic_open(&a, path), 0);
    fputs("half", a.f);
    rt_atomic_abort(&a);
    assert_int_equal(count_entries(dir), 0);
    assert_int_equal(rt_atomic_open(&a, path), 0);
    fputs("whole", a.f);
    assert_int_equal(rt_atomic_commit(&a), 0);
    assert_int_equal(count_entries(dir), 1);
    rm_rf(dir);
    free(dir);
}

static void json_writer(void **state)
{
    (void)state;
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    rt_json j;
    rt_json_init(&j, f, 1);
    rt_json_begin_object(&j, NULL);
    rt_json_string(&j, "s", "a\"b\\c\nd\x01");
    rt_json_number(&j, "nan", NAN);
    rt_json_number(&j, "tenth", 0.1);
    rt_json_number(&j, "third", 1.0 / 3);
    rt_json_int(&j, "i", -42);
    rt_json_bool(&j, "b", 1);
    rt_json_begin_array(&j, "empty");
    rt_json_end_array(&j);
    rt_json_begin_array(&j, "list");
    rt_json_number(&j, NULL, 1);
    rt_json_begin_object(&j, NULL);
    rt_json_end_object(&j);
    rt_json_end_array(&j);
    rt_json_end_object(&j);
    rt_json_finish(&j);
    fclose(f);
    assert_non_null(strstr(text, "\"a\\\"b\\\\c\\nd\\u0001\""));
    assert_non_null(strstr(text, "\"nan\": null"));
    assert_non_null(strstr(text, "\"tenth\": 0.1,"));
    assert_non_null(strstr(text, "\"empty\": []"));
    struct fy_document *doc = fy_document_build_from_string(NULL, text, len);
    assert_non_null(doc);
    struct fy_node *root = fy_document_root(doc);
    assert_true(number(get(root, "third")) == 1.0 / 3); /* exact round trip */
    assert_int_equal(fy_node_sequence_item_count(get(root, "list")), 2);
    assert_string_equal(scalar(get(root, "s")), "a\"b\\c\nd\x01");
    fy_document_destroy(doc);
    free(text);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(writes_three_files),
        cmocka_unit_test(failed_write_leaves_nothing),
        cmocka_unit_test(atomic_abort),
        cmocka_unit_test(json_writer),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
