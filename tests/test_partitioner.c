/* Tower Partitioner: size bounds, balanced groups on random affinity, planted clusters
 * recovered (coherent) or spread over every group (diverse), the embedding reproduces
 * Euclidean distances, the model affinity and the file readers. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "partitioner.h"
#include "pipeline.h"

static void bounds(void **state)
{
    (void)state;
    int lo, hi;
    assert_int_equal(rt_partition_bounds(26, 8, 2, &lo, &hi), 0);
    assert_int_equal(lo, 3);
    assert_int_equal(hi, 6); /* floor(2 x 3) */
    assert_int_equal(rt_partition_bounds(26, 16, 2, &lo, &hi), 0);
    assert_int_equal(lo, 1);
    assert_int_equal(hi, 2);
    assert_int_equal(rt_partition_bounds(26, 16, 1.5, &lo, &hi), -1); /* needs 2 / 1 */
    assert_int_equal(rt_partition_bounds(3, 4, 2, &lo, &hi), -1);     /* more groups than items */
}

static void sizes(const int *g, int n, int k, int *sz)
{
    memset(sz, 0, sizeof(int) * (size_t)k);
    for (int i = 0; i < n; i++) {
        assert_in_range(g[i], 0, k - 1);
        sz[g[i]]++;
    }
}

static void balanced_on_random_affinity(void **state)
{
    (void)state;
    enum { n = 26 };
    double a[n * n];
    srand(11);
    for (int i = 0; i < n; i++)
        for (int j = 0; j <= i; j++)
            a[i * n + j] = a[j * n + i] = i == j ? 1 : (double)rand() / RAND_MAX;
    const double factors[] = {1.34, 1.5, 2};
    for (int s = 0; s < RT_PART_COUNT; s++)
        for (int fi = 0; fi < 3; fi++) {
            rt_partition_opts o = {8, (rt_part_strategy)s, factors[fi], 2, 3, 0};
            int g[n], sz[8];
            assert_int_equal(rt_partition(a, n, &o, g, stderr), 0);
            sizes(g, n, 8, sz);
            int mn = n, mx = 0;
            for (int c = 0; c < 8; c++)
                mn = sz[c] < mn ? sz[c] : mn, mx = sz[c] > mx ? sz[c] : mx;
            assert_true(mn >= 1);
            assert_true(mx <= factors[fi] * mn + 1e-9);
        }
}

/* Three clusters of four features: affinity 0.9 inside, 0.05 across (+ small noise). */
static void planted(double *a, int *truth)
{
    enum { n = 12 };
    srand(3);
    for (int i = 0; i < n; i++)
        truth[i] = (i * 7) % 3; /* interleaved, so order does not help */
    for (int i = 0; i < n; i++)
        for (int j = 0; j <= i; j++) {
            double noise = 0.02 * rand() / RAND_MAX;
            a[i * n + j] = a[j * n + i] = i == j ? 1 : (truth[i] == truth[j] ? 0.9 : 0.05) + noise;
        }
}

static void planted_clusters_recovered(void **state)
{
    (void)state;
    enum { n = 12 };
    double a[n * n];
    int truth[n], g[n];
    planted(a, truth);
    rt_partition_opts o = {3, RT_PART_COHERENT, 1, 2, 1, 0};
    assert_int_equal(rt_partition(a, n, &o, g, stderr), 0);
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++)
            assert_int_equal(g[i] == g[j], truth[i] == truth[j]);
}

/* Diverse: 4 groups of 3, each with one feature of every cluster. */
static void diverse_mixes_clusters(void **state)
{
    (void)state;
    enum { n = 12 };
    double a[n * n];
    int truth[n], g[n];
    planted(a, truth);
    rt_partition_opts o = {4, RT_PART_DIVERSE, 1, 2, 1, 0};
    assert_int_equal(rt_partition(a, n, &o, g, stderr), 0);
    for (int c = 0; c < 4; c++) {
        int seen[3] = {0};
        for (int i = 0; i < n; i++)
            if (g[i] == c) seen[truth[i]]++;
        assert_int_equal(seen[0], 1);
        assert_int_equal(seen[1], 1);
        assert_int_equal(seen[2], 1);
    }
}

/* Distances of points in the plane are embedded with (near) zero stress. */
static void embedding_reproduces_euclidean(void **state)
{
    (void)state;
    enum { n = 6 };
    const double p[n][2] = {{0, 0}, {1, 0}, {0, 2}, {3, 1}, {-1, -1}, {2, 2}};
    double d[n * n], x[n * 2];
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++)
            d[i * n + j] = hypot(p[i][0] - p[j][0], p[i][1] - p[j][1]);
    double s = rt_partition_embed(d, n, 2, x, stderr);
    assert_true(s >= 0 && s < 1e-8);
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++)
            assert_true(fabs(hypot(x[2 * i] - x[2 * j], x[2 * i + 1] - x[2 * j + 1]) -
                             d[i * n + j]) < 1e-4);
}

static void model_affinity(void **state)
{
    (void)state;
    rt_pipeline p;
    if (rt_pipeline_run(&p, RT_SOURCE_DIR "/tests/data/tiny.yaml", NULL, 0, stderr)) fail();
    const rt_model *m = &p.scenario->model;
    double a[16];
    rt_partition_model_affinity(m, NULL, NULL, a);
    /* a and b have identical statistics: affinity 1; everything is in [0, 1] and symmetric. */
    assert_true(fabs(a[0 * 4 + 1] - 1) < 1e-12);
    for (int i = 0; i < 4; i++) {
        assert_true(a[i * 4 + i] == 1);
        for (int j = 0; j < 4; j++) {
            assert_true(a[i * 4 + j] >= 0 && a[i * 4 + j] <= 1 + 1e-12);
            assert_true(a[i * 4 + j] == a[j * 4 + i]);
        }
    }
    rt_pipeline_free(&p);
}

static char *write_tmp(const char *text)
{
    static char path[64];
    snprintf(path, sizeof path, "/tmp/rt_part_XXXXXX");
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    FILE *f = fdopen(fd, "w");
    fputs(text, f);
    fclose(f);
    return path;
}

static void csv_readers(void **state)
{
    (void)state;
    double *a = NULL;
    int n = 0;
    char *path = write_tmp("# affinity\nx,y,z\n1,0.5,0\n0.5 1 0.25\n0,0.25,1\n");
    assert_int_equal(rt_partition_read_csv(path, &a, &n, stderr), 0);
    assert_int_equal(n, 3);
    assert_true(a[1 * 3 + 2] == 0.25);
    free(a);
    remove(path);
    char *msg = NULL;
    size_t len = 0;
    FILE *err = open_memstream(&msg, &len);
    path = write_tmp("1,0.5\n0.4,1\n");
    assert_int_equal(rt_partition_read_csv(path, &a, &n, err), -1); /* not symmetric */
    remove(path);
    path = write_tmp("1,2\n2,1\n");
    assert_int_equal(rt_partition_read_csv(path, &a, &n, err), -1); /* out of range */
    remove(path);
    fclose(err);
    assert_non_null(strstr(msg, "not symmetric"));
    free(msg);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(bounds),
        cmocka_unit_test(balanced_on_random_affinity),
        cmocka_unit_test(planted_clusters_recovered),
        cmocka_unit_test(diverse_mixes_clusters),
        cmocka_unit_test(embedding_reproduces_euclidean),
        cmocka_unit_test(model_affinity),
        cmocka_unit_test(csv_readers),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
