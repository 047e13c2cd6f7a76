/* Golden iteration times of the simgrid engine in statistical mode (512 GPUs: 64 DGX H100
 * nodes, 8 representatives, links aggregation), for every plan and for concurrent collectives
 * (overlap: pipeline), plus one exact-mode pairs case (64 GPUs). The figures were printed by
 * the engine before issue 10's scale work (aa007c6: flows sent with sg_host_sendto, 128 KiB
 * actor stacks) and again after it (flows as mailbox put/get pairs on 16 KiB stacks): a
 * change of how the simulation is run must leave what it simulates bit for bit the same, so
 * these are compared to 1e-12 relative. A change of the model moves them on purpose; then
 * re-pin them and say why in the commit. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <math.h>

#define RECTWIN RT_BINARY_DIR "/cli/rectwin"

/* Runs `rectwin sim` on the flat DLRM scenario with SETS, checks that it ran in MODE with
 * FLOWS aggregation and returns summary.json's iteration_time_s. */
static double iteration(const char *sets, const char *mode, const char *flows)
{
    char dir[] = "/tmp/rectwin-golden-XXXXXX", cmd[1024], path[512];
    assert_non_null(mkdtemp(dir));
    snprintf(cmd, sizeof cmd,
             "cd '%s' && " RECTWIN " sim experiments/dlrm-criteo.yaml --engine simgrid --quiet "
             "--out %s/r %s",
             RT_SOURCE_DIR, dir, sets);
    if (system(cmd) != 0) {
        print_error("'%s' failed\n", cmd);
        fail();
    }
    snprintf(path, sizeof path, "%s/r/summary.json", dir);
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    static char buf[1 << 20];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    buf[n] = 0;
    fclose(f);
    char want[64];
    snprintf(want, sizeof want, "\"mode\": \"%s\"", mode);
    assert_non_null(strstr(buf, want));
    snprintf(want, sizeof want, "\"flows\":\"%s\"", flows);
    assert_non_null(strstr(buf, want));
    const char *at = strstr(buf, "\"iteration_time_s\": ");
    assert_non_null(at);
    double t = strtod(at + strlen("\"iteration_time_s\": "), NULL);
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    assert_int_equal(system(cmd), 0);
    return t;
}

static void expect(const char *sets, double want)
{
    int exact = strstr(sets, "nodes=8 ") != NULL;
    double got = iteration(sets, exact ? "exact" : "statistical", exact ? "pairs" : "links");
    if (!(fabs(got - want) <= 1e-12 * want)) {
        print_error("%s: iteration %.17g s, pinned %.17g s\n", sets, got, want);
        fail();
    }
}

#define STAT "--set topology.nodes=64 "

static void flat_statistical(void **state)
{
    (void)state;
    expect(STAT "--set plan.name=flat", 0.026190755819402986);
}

/* The dense AllReduce on sync_comm beside the embedding AlltoAlls: flows of two collectives
 * share links. */
static void flat_pipeline_statistical(void **state)
{
    (void)state;
    expect(STAT "--set plan.name=flat --set plan.overlap=pipeline", 0.025565380318656718);
}

static void fused_statistical(void **state)
{
    (void)state;
    expect(STAT "--set plan.name=fused", 0.016947737397518051);
}

static void sptt_statistical(void **state)
{
    (void)state;
    expect(STAT "--set plan.name=sptt --set plan.hosts_per_tower=4", 0.022473757929850739);
}

static void hsp_statistical(void **state)
{
    (void)state;
    expect(STAT "--set plan.name=hsp", 0.009065352018076284);
}

/* 64 GPUs: exact mode, one flow per device pair. */
static void flat_exact_pairs(void **state)
{
    (void)state;
    expect("--set topology.nodes=8 --set plan.name=flat", 0.0031467177411276955);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(flat_statistical),  cmocka_unit_test(flat_pipeline_statistical),
        cmocka_unit_test(fused_statistical), cmocka_unit_test(sptt_statistical),
        cmocka_unit_test(hsp_statistical),   cmocka_unit_test(flat_exact_pairs),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
