/* The simgrid engine through the rectwin command: `sim` (now the default engine) writes the
 * analytic engine's files plus links.csv; `collective --engine simgrid` answers like the
 * analytic engine on an uncongested case; `platform` writes the XML with the hand-counted
 * hosts and links. One node of DGX H100 keeps it fast, also under ASan. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#define RECTWIN RT_BINARY_DIR "/cli/rectwin"

/* Runs CMD in the source directory; returns its stdout (owned) or fails the test. */
static char *run(const char *cmd)
{
    char full[2048];
    snprintf(full, sizeof full, "cd '%s' && %s", RT_SOURCE_DIR, cmd);
    FILE *p = popen(full, "r");
    assert_non_null(p);
    size_t cap = 1 << 16, len = 0;
    char *buf = malloc(cap);
    assert_non_null(buf);
    size_t n;
    while ((n = fread(buf + len, 1, cap - len - 1, p)) > 0)
        len += n;
    buf[len] = 0;
    int status = pclose(p);
    if (status != 0) {
        print_error("'%s' exited with %d:\n%s\n", cmd, status, buf);
        fail();
    }
    return buf;
}

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f) return NULL;
    char *buf = malloc(1 << 20);
    assert_non_null(buf);
    size_t n = fread(buf, 1, (1 << 20) - 1, f);
    buf[n] = 0;
    fclose(f);
    return buf;
}

static double number_after(const char *text, const char *key)
{
    const char *at = strstr(text, key);
    assert_non_null(at);
    return strtod(at + strlen(key), NULL);
}

static void test_sim_default_is_simgrid_with_links_csv(void **state)
{
    (void)state;
    char dir[] = "/tmp/rectwin-test-XXXXXX", cmd[512], path[512];
    assert_non_null(mkdtemp(dir));
    snprintf(cmd, sizeof cmd,
             RECTWIN " sim experiments/dlrm-criteo.yaml --set topology.nodes=1 --out %s/r", dir);
    free(run(cmd));
    const char *files[] = {"summary.json", "ops.csv", "trace.json", "links.csv"};
    for (int i = 0; i < 4; i++) {
        snprintf(path, sizeof path, "%s/r/%s", dir, files[i]);
        char *text = slurp(path);
        assert_non_null(text);
        if (i == 0) {
            assert_non_null(strstr(text, "\"engine\": \"simgrid\""));
            assert_non_null(strstr(text, "\"network_model\":\"CM02\""));
            assert_non_null(strstr(text, "\"flows\":\"pairs\""));
        }
        if (i == 3) {
            assert_true(
                strncmp(text, "link,direction,bandwidth_Bps,bytes,busy_s,utilization\n", 54) == 0);
            /* One node: only NVLink ports carry collective traffic (nvlink-R at 0.8 x 450). */
            assert_non_null(strstr(text, "\nnvlink-"));
            assert_non_null(strstr(text, ",3.6e+11,"));
            assert_null(strstr(text, "\nnic-"));
        }
        free(text);
        remove(path);
    }
    snprintf(path, sizeof path, "%s/r", dir);
    rmdir(path);
    rmdir(dir);
}

/* One DGX H100 node, AlltoAll of 1 GiB: 7/8 x 2^30 B over 0.8 x 450 GB/s NVLink = 2.61 ms,
 * busbw 360 GB/s less latencies; both engines must print the same figure. */
static void test_collective_engines_agree(void **state)
{
    (void)state;
    const char *fmt = RECTWIN " collective --topology topologies/dgx-h100.yaml --nodes 1 --op "
                              "alltoall --bytes 1GiB --engine %s";
    char cmd[512];
    double busbw[2];
    const char *engines[2] = {"analytic", "simgrid"};
    for (int i = 0; i < 2; i++) {
        snprintf(cmd, sizeof cmd, fmt, engines[i]);
        char *out = run(cmd);
        assert_non_null(strstr(out, engines[i]));
        busbw[i] = number_after(out, "busbw_GBps");
        free(out);
    }
    assert_true(busbw[1] > 0.95 * busbw[0] && busbw[1] < 1.05 * busbw[0]);
    assert_true(busbw[1] > 350 && busbw[1] <= 360);
}

/* dgx-h100, 2 nodes: 16 gpu + 2 nvs + 2 cpu + 8 rails x 1 leaf = 28 hosts; 16 nvlink +
 * 16 nic + 8 uplink + 16 pcie = 56 links. */
static void test_platform_command(void **state)
{
    (void)state;
    char path[] = "/tmp/rectwin-platform-test-XXXXXX", cmd[512];
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    snprintf(cmd, sizeof cmd, RECTWIN " platform topologies/dgx-h100.yaml --nodes 2 -o %s", path);
    char *out = run(cmd);
    assert_non_null(strstr(out, "28 hosts, 56 SPLITDUPLEX links"));
    free(out);
    char *xml = slurp(path);
    assert_non_null(xml);
    assert_non_null(strstr(xml, "<host id=\"leaf-7-0\""));
    assert_non_null(strstr(xml, "<link id=\"uplink-7-0\""));
    assert_null(strstr(xml, "gpu-16"));
    free(xml);
    remove(path);
    /* A user error: a clear message and a non-zero status, nothing written. */
    snprintf(cmd, sizeof cmd,
             "cd '%s' && " RECTWIN " platform topologies/dgx-h100.yaml -o %s 2>/dev/null",
             RT_SOURCE_DIR, path);
    assert_int_not_equal(system(cmd), 0);
    assert_int_not_equal(access(path, F_OK), 0);
}

int main(void)
{
    if (access(RECTWIN, X_OK) != 0) {
        fprintf(stderr, "no %s (build the rectwin target first)\n", RECTWIN);
        return 77;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sim_default_is_simgrid_with_links_csv),
        cmocka_unit_test(test_collective_engines_agree),
        cmocka_unit_test(test_platform_command),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
