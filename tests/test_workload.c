/* Workload sampling: seeded and reproducible, a rank's batch independent of the sampling
 * mode, Zipf frequencies follow k^-alpha without a table, lengths follow their spec. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "scenario.h"
#include "workload.h"

#define TINY RT_SOURCE_DIR "/tests/data/tiny.yaml"

static rt_workload *sample(const char *const *sets, int n)
{
    rt_scenario *s = rt_scenario_load(TINY, sets, n, stderr);
    assert_non_null(s);
    rt_workload *w = rt_workload_sample(s, stderr);
    assert_non_null(w);
    rt_scenario_free(s);
    return w;
}

static void reproducible_and_mode_independent(void **state)
{
    (void)state;
    const char *exact[] = {"workload.mode=exact"};
    const char *stat[] = {"workload.mode=statistical", "workload.reps=2"};
    rt_workload *a = sample(exact, 1), *b = sample(exact, 1), *c = sample(stat, 2);
    assert_int_equal(a->n_reps, 4);
    assert_int_equal(c->n_reps, 2);
    assert_int_equal(c->rep_rank[1], 2); /* spread over the machine */
    assert_true(c->rep_weight[0] == 2.0);
    for (int f = 0; f < a->n_features; f++) {
        const rt_feature_batch *x = rt_workload_batch(a, 2, f), *y = rt_workload_batch(b, 2, f),
                               *z = rt_workload_batch(c, 1, f);
        assert_int_equal(x->n_ids, y->n_ids);
        assert_memory_equal(x->ids, y->ids, x->n_ids * sizeof(uint64_t));
        assert_memory_equal(x->ids, z->ids, x->n_ids * sizeof(uint64_t));
        /* Different ranks draw different IDs. */
        assert_true(memcmp(x->ids, rt_workload_batch(a, 1, f)->ids, x->n_ids * sizeof(uint64_t)) !=
                    0);
    }
    rt_workload_free(a), rt_workload_free(b), rt_workload_free(c);
}

static void pooling_follows_the_model(void **state)
{
    (void)state;
    rt_workload *w = sample(NULL, 0);
    /* Tiny model: tables a, b, d pool 2 IDs per sample, c pools 3; batch 16. */
    const uint64_t expect[] = {32, 32, 48, 32};
    for (int f = 0; f < 4; f++) {
        const rt_feature_batch *fb = rt_workload_batch(w, 0, f);
        assert_int_equal(fb->n_ids, expect[f]);
        for (uint64_t i = 0; i < fb->n_ids; i++)
            assert_true(fb->ids[i] < 1000);
    }
    rt_workload_free(w);
}

static void lognormal_lengths_clamped(void **state)
{
    (void)state;
    const char *sets[] = {
        "workload.pooling={kind: lognormal, mean: 20, sigma: 0.8, min: 1, max: 60}",
        "workload.batch_per_rank=4000"};
    rt_workload *w = sample(sets, 2);
    const rt_feature_batch *fb = rt_workload_batch(w, 0, 0);
    double sum = 0;
    for (int i = 0; i < fb->batch; i++) {
        assert_true(fb->lengths[i] >= 1 && fb->lengths[i] <= 60);
        sum += fb->lengths[i];
    }
    /* Clamping at 60 trims the tail a little: the mean stays within a few percent of 20. */
    assert_true(fabs(sum / fb->batch - 20) < 1.5);
    rt_workload_free(w);
}

static void zipf_frequencies(void **state)
{
    (void)state;
    gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(rng, 3);
    rt_zipf z;
    const double alpha = 1.05;
    rt_zipf_init(&z, 1000000, alpha);
    enum { N = 400000 };
    long count[4] = {0};
    for (int i = 0; i < N; i++) {
        uint64_t k = rt_zipf_draw(&z, rng);
        assert_true(k < 1000000);
        if (k < 4) count[k]++;
    }
    /* P(k) ~ (k+1)^-alpha: ratios of the top ranks within sampling noise. */
    assert_true(fabs((double)count[0] / count[1] - pow(2, alpha)) < 0.08);
    assert_true(fabs((double)count[0] / count[3] - pow(4, alpha)) < 0.2);
    /* P(0) = 1 / H(n, alpha), the generalized harmonic number, summed directly. */
    double h = 0;
    for (long k = 1; k <= 1000000; k++)
        h += pow((double)k, -alpha);
    assert_true(fabs((double)count[0] / N - 1 / h) < 0.004);
    /* A vocabulary of 2^50 needs no table. */
    rt_zipf_init(&z, (uint64_t)1 << 50, 1.2);
    for (int i = 0; i < 1000; i++)
        assert_true(rt_zipf_draw(&z, rng) < ((uint64_t)1 << 50));
    gsl_rng_free(rng);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(reproducible_and_mode_independent),
        cmocka_unit_test(pooling_follows_the_model),
        cmocka_unit_test(lognormal_lengths_clamped),
        cmocka_unit_test(zipf_frequencies),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
