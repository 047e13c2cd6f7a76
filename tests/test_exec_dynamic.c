/* rectwin-exec's dynamic table shard (exec/emb_dynamic.c) trained on a stream of new IDs: the
 * batches rectwin-exec draws for iterations 0..39 of table `item` of
 * tests/data/exec-dynamic.yaml (10% new keys), each probed into the working set, every touched row
 * changed by a step that depends only on its key, written back. A reference map kept beside it says
 * what every key must hold; after every batch every key ever inserted, the 500 initial ones
 * included, is found with exactly its expected values, while the key structure doubles under it. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "device.h"
#include "emb_dynamic.h"
#include "emb_tables.h"
#include "workload.h"

#define SCENARIO RT_SOURCE_DIR "/tests/data/exec-dynamic.yaml"

enum { TABLE = 1, ROWS = 500, WIDTH = 16, BATCHES = 40 };

typedef struct {
    int64_t *keys;
    float *vals;
    int64_t n, cap;
} refmap;

static int64_t ref_find(const refmap *m, int64_t key)
{
    for (int64_t i = m->n - 1; i >= 0; i--) /* new keys are recent: search from the end */
        if (m->keys[i] == key) return i;
    return -1;
}

static int64_t ref_add(refmap *m, const rt_scenario *s, int64_t key)
{
    if (m->n == m->cap) {
        m->cap = m->cap ? 2 * m->cap : 4096;
        m->keys = realloc(m->keys, sizeof(int64_t) * (size_t)m->cap);
        m->vals = realloc(m->vals, sizeof(float) * WIDTH * (size_t)m->cap);
        assert_non_null(m->keys);
        assert_non_null(m->vals);
    }
    m->keys[m->n] = key;
    for (int c = 0; c < WIDTH; c++)
        m->vals[m->n * WIDTH + c] = rt_xtables_init_value(s, TABLE, (uint64_t)key, c);
    return m->n++;
}

/* The training step of a row: a function of its key and column only. */
static float step(int64_t key, int c)
{
    return 0.001f * (float)((key + c) % 17 + 1);
}

/* Every key of the reference is in the table with exactly its values. */
static void check_all(const rt_xshard *sh, const refmap *m)
{
    int64_t *rows = malloc(sizeof(int64_t) * (size_t)m->n);
    assert_non_null(rows);
    assert_int_equal(rt_khash_find(sh->dyn->h, m->keys, m->n, rows), RT_K_OK);
    int64_t missing = 0, wrong = 0;
    for (int64_t i = 0; i < m->n; i++) {
        if (rows[i] < 0) {
            missing++;
            continue;
        }
        wrong += memcmp(rt_khash_row(sh->dyn->h, rows[i]), m->vals + i * WIDTH,
                        sizeof(float) * WIDTH) != 0;
    }
    free(rows);
    assert_int_equal(missing, 0);
    assert_int_equal(wrong, 0);
    assert_int_equal(rt_khash_size(sh->dyn->h), m->n);
}

static void growth_keeps_every_row(void **state)
{
    (void)state;
    rt_scenario *s = rt_scenario_load(SCENARIO, NULL, 0, stderr);
    assert_non_null(s);
    assert_true(s->model.tables[TABLE].dynamic && s->model.tables[TABLE].dim == WIDTH);
    rt_xdev d;
    memset(&d, 0, sizeof d);
    d.ops = rt_xdev_find("cpu");
    assert_non_null(d.ops);
    assert_int_equal(d.ops->open(&d, 0, 4, RT_XMATH_FP32, stderr), 0);
    rt_xtables ts = {0};
    int idx = rt_xtables_add(&ts, &d, s, TABLE, 0, WIDTH, 0, ROWS, NULL, stderr);
    assert_true(idx >= 0);
    rt_xshard *sh = &ts.shards[idx];
    refmap ref = {0};
    for (int64_t k = 0; k < ROWS; k++)
        ref_add(&ref, s, k);
    check_all(sh, &ref);
    int64_t slots0 = rt_khash_slots(sh->dyn->h), fresh = 0;
    int n_tables = s->model.n_tables;
    for (int it = 0; it < BATCHES; it++) {
        rt_feature_batch *b = calloc((size_t)n_tables, sizeof *b);
        assert_non_null(b);
        assert_int_equal(rt_workload_sample_rank(s, s->workload.seed + (uint64_t)it, 0, b, stderr),
                         0);
        int64_t n = (int64_t)b[TABLE].n_ids;
        int64_t *keys = malloc(sizeof(int64_t) * (size_t)n),
                *ids = malloc(sizeof(int64_t) * (size_t)n);
        assert_non_null(keys);
        assert_non_null(ids);
        for (int64_t i = 0; i < n; i++)
            keys[i] = ids[i] = (int64_t)b[TABLE].ids[i];
        assert_int_equal(rt_xdyn_probe(sh, s, ids, n, stderr), 0);
        assert_int_equal(rt_xdyn_fetch(sh, &d, stderr), 0);
        /* One step per distinct row of the batch, on the working set and in the reference. */
        char *done = calloc((size_t)sh->dyn->n_ws, 1);
        assert_non_null(done);
        for (int64_t i = 0; i < n; i++) {
            int64_t at = ref_find(&ref, keys[i]);
            if (at < 0) at = ref_add(&ref, s, keys[i]), fresh++;
            if (done[ids[i]]) continue;
            done[ids[i]] = 1;
            float *row = (float *)sh->t.data + ids[i] * WIDTH;
            for (int c = 0; c < WIDTH; c++) {
                row[c] += step(keys[i], c);
                ref.vals[at * WIDTH + c] += step(keys[i], c);
            }
        }
        rt_xdyn_write_back(sh);
        check_all(sh, &ref);
        free(done), free(keys), free(ids);
        rt_feature_batches_free(b, n_tables);
        free(b);
    }
    /* About 10% of 40 x 64 x 4 IDs were new: the 500 keys in 1024 slots at load 0.5 passed
     * 512 and 1024 keys, so the key structure doubled twice. */
    assert_true(fresh > 800);
    assert_int_equal(sh->dyn->inserted, fresh);
    assert_true(rt_khash_slots(sh->dyn->h) >= 4 * slots0);
    assert_true(sh->dyn->grows >= 2);
    free(ref.keys), free(ref.vals);
    rt_xtables_free(&ts, &d);
    d.ops->close(&d);
    rt_scenario_free(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(growth_keeps_every_row)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
