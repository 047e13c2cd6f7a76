/* Calibration tables of a topology (core/calib.h): the parser locates every malformed table,
 * and the log-log interpolation gives hand-computed values. The curves below are power laws,
 * which log-log interpolation reproduces exactly between points, so every expected value is a
 * closed form. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "calib.h"
#include "cfg.h"
#include "topology.h"

static char dir[256];

static int setup(void **state)
{
    (void)state;
    snprintf(dir, sizeof dir, "/tmp/rt_test_calib_XXXXXX");
    return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    return system(cmd) == 0 ? 0 : -1;
}

/* dgx-h100's figures followed by CALIBRATION (a `calibration:` section, or ""). */
static const char *write_topology(const char *calibration)
{
    static char path[300];
    snprintf(path, sizeof path, "%s/t.yaml", dir);
    char src[512];
    snprintf(src, sizeof src, "%s/topologies/dgx-h100.yaml", RT_SOURCE_DIR);
    FILE *in = fopen(src, "r"), *out = fopen(path, "w");
    assert_non_null(in);
    assert_non_null(out);
    char line[1024];
    while (fgets(line, sizeof line, in))
        fputs(line, out);
    fputs(calibration, out);
    fclose(in);
    fclose(out);
    return path;
}

/* Parses PATH as a full topology; returns 0 or -1 with the messages in *MSG (malloc'd). */
static int load(const char *path, rt_topology *t, char **msg)
{
    size_t len = 0;
    FILE *err = open_memstream(msg, &len);
    assert_non_null(err);
    memset(t, 0, sizeof *t);
    rt_cfg *cfg = rt_cfg_load(path, err);
    int rc = cfg ? rt_topology_parse(cfg, rt_cfg_root(cfg), t, 0) : -1;
    rt_cfg_free(cfg);
    fclose(err);
    return rc;
}

static const char *const good =
    "calibration:\n"
    "  date: 2026-01-01T00:00Z\n"
    "  host: test\n"
    "  device: test device\n"
    "  runs:\n"
    "    - ranks: 2\n"
    "      dispatch: 2us\n"
    "      host_per_iteration: 10us\n"
    "      gemm:\n"
    /* rate = 1e8 m^0.5 n^0.25 k^0.25 at the corners of [1, 100]^3 */
    "        - dtype: fp32\n"
    "          m: [1, 100]\n"
    "          n: [1, 100]\n"
    "          k: [1, 100]\n"
    "          flops: [1e8, 3.1622776601683795e8, 3.1622776601683795e8, 1e9,\n"
    "                  1e9, 3.1622776601683795e9, 3.1622776601683795e9, 1e10]\n"
    "      kernels:\n"
    "        - {kernel: elementwise, bytes: [1000, 100000], bw: [1e9, 1e10]}\n"
    "        - {kernel: gather_pool, dim: 16, pooling: 1, bytes: [1000], bw: [1e9]}\n"
    "        - {kernel: gather_pool, dim: 128, pooling: 8, bytes: [1000], bw: [4e9]}\n"
    "        - {kernel: attention, flops: [1e6, 1e8], rate: [1e9, 1e11]}\n"
    "      collectives:\n"
    "        - {op: allreduce, ranks: 2, bytes: [1024, 1048576], seconds: [1e-5, 1e-3]}\n"
    "        - {op: allreduce, ranks: 8, bytes: [1024, 1048576], seconds: [4e-5, 4e-3]}\n"
    "    - ranks: 1\n"
    "      cpu_bind: \"block: bound by the launcher to cpu 0\"\n"
    "      core_slice: 3.97ms\n"
    "    - ranks: 4\n";

static void close_to(double got, double want)
{
    if (!(fabs(got - want) <= 1e-9 * fabs(want))) fail_msg("got %.12g, want %.12g", got, want);
}

static void interpolation_by_hand(void **state)
{
    (void)state;
    rt_topology t;
    char *msg = NULL;
    if (load(write_topology(good), &t, &msg)) fail_msg("%s", msg);
    free(msg);
    assert_non_null(t.calib);
    const rt_calib *c = t.calib;
    assert_string_equal(c->host, "test");
    /* Runs are sorted; a scenario uses the run of its rank count or the largest below. */
    assert_int_equal(c->runs[0].ranks, 1);
    assert_int_equal(rt_calib_run_for(c, 1)->ranks, 1);
    assert_int_equal(rt_calib_run_for(c, 3)->ranks, 2);
    assert_int_equal(rt_calib_run_for(c, 64)->ranks, 4);
    const rt_calib_run *r = rt_calib_run_for(c, 2);
    close_to(r->dispatch_s, 2e-6);
    close_to(r->host_per_iteration_s, 1e-5);
    /* where the ranks ran and the scheduler's turn, recorded by the cpu device's runs */
    assert_string_equal(rt_calib_run_for(c, 1)->cpu_bind, "block: bound by the launcher to cpu 0");
    close_to(rt_calib_run_for(c, 1)->core_slice, 3.97e-3);
    assert_null(r->cpu_bind);
    assert_true(r->core_slice == 0);

    /* GEMM: the power law at the grid's log centre, and clamped outside the grid. */
    const rt_gemm_table *g = rt_calib_gemm(r, RT_DT_FP32);
    assert_non_null(g);
    assert_null(rt_calib_gemm(r, RT_DT_BF16));
    close_to(rt_gemm_table_rate(g, 10, 10, 10), 1e9);
    close_to(rt_gemm_table_rate(g, 10, 1, 1), 1e8 * sqrt(10));
    close_to(rt_gemm_table_rate(g, 1000, 1, 1), 1e9);
    close_to(rt_gemm_table_rate(g, 0.5, 100, 100), 1e9);

    /* bytes/s curve: log-midpoint 10^4 has rate sqrt(1e9 x 1e10); a launch smaller than the
     * smallest costs the smallest's time; past the largest the largest's rate holds. */
    const rt_curve *ew = rt_calib_kernel_curve(r, RT_CK_ELEMENTWISE, 0, 0);
    assert_non_null(ew);
    close_to(rt_curve_eval(ew, 1e4), sqrt(1e19));
    close_to(rt_curve_time_of_rate(ew, 1e4), 1e4 / sqrt(1e19));
    close_to(rt_curve_time_of_rate(ew, 10), 1000 / 1e9);
    close_to(rt_curve_time_of_rate(ew, 1e6), 1e6 / 1e10);
    /* The gather curve nearest in (log dim, log pooling). */
    close_to(rt_curve_eval(rt_calib_kernel_curve(r, RT_CK_GATHER_POOL, 64, 8), 1000), 4e9);
    close_to(rt_curve_eval(rt_calib_kernel_curve(r, RT_CK_GATHER_POOL, 16, 2), 1000), 1e9);
    assert_null(rt_calib_kernel_curve(r, RT_CK_SORT, 0, 0));
    /* FLOP/s curve: 1e7 FLOPs run at 1e10 FLOP/s. */
    close_to(rt_curve_time_of_rate(rt_calib_kernel_curve(r, RT_CK_ATTENTION, 0, 0), 1e7),
             1e7 / 1e10);

    /* Collective seconds: the power law at the log-midpoint 32 KiB, the
     * smallest time below 1 KiB, proportional past 1 MiB; a group of 4 between the measured 2
     * and 8 is the geometric mean (log-linear in the group size). */
    close_to(rt_calib_coll_time(r, RT_CC_ALLREDUCE, 2, 32768), 1e-4);
    close_to(rt_calib_coll_time(r, RT_CC_ALLREDUCE, 2, 10), 1e-5);
    close_to(rt_calib_coll_time(r, RT_CC_ALLREDUCE, 2, 2097152), 2e-3);
    close_to(rt_calib_coll_time(r, RT_CC_ALLREDUCE, 4, 1024), 2e-5);
    close_to(rt_calib_coll_time(r, RT_CC_ALLREDUCE, 4, 32768), 2e-4);
    /* Outside the measured group sizes, or another collective: no figure (-1). */
    assert_true(rt_calib_coll_time(r, RT_CC_ALLREDUCE, 16, 1024) < 0);
    assert_true(rt_calib_coll_time(r, RT_CC_ALLTOALL, 2, 1024) < 0);
    rt_topology_free(&t);
}

static void no_tables_no_calibration(void **state)
{
    (void)state;
    rt_topology t;
    char *msg = NULL;
    assert_int_equal(load(write_topology(""), &t, &msg), 0);
    free(msg);
    assert_null(t.calib);
    rt_topology_free(&t);
}

/* A broken copy of the good section: the line containing FROM gets TO instead. */
static void expect_error(const char *from, const char *to, const char *const *expect)
{
    char text[4096];
    const char *at = strstr(good, from);
    assert_non_null(at);
    snprintf(text, sizeof text, "%.*s%s%s", (int)(at - good), good, to, at + strlen(from));
    rt_topology t;
    char *msg = NULL;
    const char *path = write_topology(text);
    int rc = load(path, &t, &msg);
    rt_topology_free(&t);
    if (rc == 0) fail_msg("accepted: %s -> %s", from, to);
    for (int i = 0; expect[i]; i++)
        if (!strstr(msg, expect[i])) fail_msg("message lacks '%s':\n%s", expect[i], msg);
    /* file:line:col of the topology file */
    if (!strstr(msg, path)) fail_msg("message lacks the file name:\n%s", msg);
    free(msg);
}

static void located_errors(void **state)
{
    (void)state;
    expect_error("bytes: [1000, 100000], bw", "bytes: [100000, 1000], bw",
                 (const char *const[]){":", "strictly increasing", NULL});
    expect_error("bw: [1e9, 1e10]", "bw: [1e9]",
                 (const char *const[]){"1 values for 2 points", NULL});
    expect_error("3.1622776601683795e9, 1e10]", "3.1622776601683795e9]",
                 (const char *const[]){"7 rates for a 2 x 2 x 2 grid", NULL});
    expect_error("kernel: elementwise", "kernel: memcpy",
                 (const char *const[]){"calibration.runs", "elementwise", NULL});
    expect_error("{kernel: attention, flops", "{kernel: attention, bytes",
                 (const char *const[]){"FLOP/s", "'flops' and 'rate'", NULL});
    expect_error("op: allreduce, ranks: 8", "op: allreduce, ranks: 2",
                 (const char *const[]){"a second allreduce curve for 2 ranks", NULL});
    expect_error("    - ranks: 4\n", "    - ranks: 1\n",
                 (const char *const[]){"a second run of 1 ranks", NULL});
    expect_error("dispatch: 2us", "dispatch: 2",
                 (const char *const[]){"calibration.runs", "dispatch", NULL});
    expect_error("  host: test\n", "", (const char *const[]){"host", NULL});
}

/* The calibrated machines committed under topologies/ (localhost-cpu*.yaml, one per
 * development machine): each loads as a whole topology, and each of its runs of 1, 2 and 4
 * ranks (what experiments/validation/cpu-mpi.sh predicts from) has the fp32 GEMM grid, the
 * gather curve of DLRM's dim 128 and a 2-rank AllReduce curve where it ran 2 ranks or more. */
static void committed_calibrations_load(void **state)
{
    (void)state;
    static const char *const files[] = {"localhost-cpu.yaml", "localhost-cpu-epyc.yaml",
                                        "localhost-cpu-epyc-zen4.yaml"};
    for (size_t f = 0; f < sizeof files / sizeof *files; f++) {
        char path[512];
        snprintf(path, sizeof path, "%s/topologies/%s", RT_SOURCE_DIR, files[f]);
        rt_topology t;
        char *msg = NULL;
        if (load(path, &t, &msg)) fail_msg("%s: %s", files[f], msg ? msg : "");
        free(msg);
        assert_non_null(t.calib);
        for (int ranks = 1; ranks <= 4; ranks *= 2) {
            const rt_calib_run *r = rt_calib_run_for(t.calib, ranks);
            assert_non_null(r);
            assert_int_equal(r->ranks, ranks);
            assert_non_null(rt_calib_gemm(r, RT_DT_FP32));
            assert_non_null(rt_calib_kernel_curve(r, RT_CK_GATHER_POOL, 128, 1));
            if (ranks > 1) assert_true(rt_calib_coll_time(r, RT_CC_ALLREDUCE, 2, 1 << 20) > 0);
        }
        rt_topology_free(&t);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(interpolation_by_hand),
        cmocka_unit_test(no_tables_no_calibration),
        cmocka_unit_test(located_errors),
        cmocka_unit_test(committed_calibrations_load),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
