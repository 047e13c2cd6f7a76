/* Dynamic hash table: random operations against a reference map, growth over several
 * doublings with values that never move, merged-table keys, erase and eviction counters. */
#include "harness.h"
#include "kernels.h"

#include <string.h>

enum { DIM = 4 };

/* Reference map: key pool[i] is live when ref_live[i]; its expected value row is ref_val[i]. */
typedef struct {
    int64_t *pool;
    char *live;
    float *val;
    int64_t n;
} refmap;

static refmap ref_make(uint64_t seed, int64_t n)
{
    refmap m = {rt_talloc((size_t)n * 8), calloc((size_t)n, 1), rt_talloc((size_t)(n * DIM) * 4),
                n};
    for (int64_t i = 0; i < n; i++) /* distinct: the mixer is a bijection */
        m.pool[i] = (int64_t)(rt_kmix64((uint64_t)i ^ seed) >> 1);
    return m;
}

static void ref_free(refmap *m)
{
    free(m->pool), free(m->live), free(m->val);
}

static void test_random_ops(rt_tctx *t, rt_trng *r)
{
    const rt_khash_cfg cfg = {DIM, 16, 100, 1, 0.5f, 0};
    rt_khash *h = NULL;
    RT_TCHECK(t, rt_khash_create(&cfg, &h) == RT_K_OK);
    refmap m = ref_make(rt_trand(r), 5000);
    int ok = 1, grew = 0;
    int64_t last_slots = rt_khash_slots(h);
    for (int round = 0; round < 60; round++) {
        enum { B = 97 };
        int64_t keys[B], idx[B], rows[B];
        float vals[B * DIM];
        for (int i = 0; i < B; i++)
            keys[i] = m.pool[idx[i] = rt_tbelow(r, m.n)];
        const int op = (int)rt_tbelow(r, 4);
        if (op == 0) { /* insert with values */
            rt_tfill(r, vals, B * DIM, -1, 1);
            ok &= rt_khash_insert(h, keys, vals, B, rows) == RT_K_OK;
            for (int i = 0; i < B; i++) {
                m.live[idx[i]] = 1;
                memcpy(m.val + idx[i] * DIM, vals + i * DIM, DIM * 4);
            }
        } else if (op == 1) { /* find_or_insert: new rows get the keyed initializer */
            int64_t n_new = -1, expect_new = 0;
            char *fresh = calloc((size_t)m.n, 1);
            for (int i = 0; i < B; i++)
                if (!m.live[idx[i]] && !fresh[idx[i]]) fresh[idx[i]] = 1, expect_new++;
            ok &= rt_khash_find_or_insert(h, keys, B, rows, &n_new) == RT_K_OK;
            ok &= n_new == expect_new;
            for (int i = 0; i < B; i++) {
                if (fresh[idx[i]]) {
                    for (int j = 0; j < DIM; j++) {
                        const float v = rt_khash_row(h, rows[i])[j];
                        ok &= v >= -0.5f && v < 0.5f;
                        m.val[idx[i] * DIM + j] = v;
                    }
                    fresh[idx[i]] = 0;
                    m.live[idx[i]] = 1;
                }
            }
            free(fresh);
        } else if (op == 2) { /* erase */
            ok &= rt_khash_erase(h, keys, B / 4) == RT_K_OK;
            for (int i = 0; i < B / 4; i++)
                m.live[idx[i]] = 0;
        }
        /* After every operation: find agrees with the reference for the whole pool. */
        int64_t live = 0;
        for (int64_t i = 0; i < m.n; i += 7) {
            int64_t row;
            ok &= rt_khash_find(h, &m.pool[i], 1, &row) == RT_K_OK;
            ok &= m.live[i] ? row >= 0 : row == -1;
            if (m.live[i] && row >= 0)
                ok &= memcmp(rt_khash_row(h, row), m.val + i * DIM, DIM * 4) == 0;
        }
        for (int64_t i = 0; i < m.n; i++)
            live += m.live[i];
        ok &= rt_khash_size(h) == live;
        ok &= 4 * rt_khash_size(h) <= 3 * rt_khash_slots(h);
        grew += rt_khash_slots(h) > last_slots;
        last_slots = rt_khash_slots(h);
    }
    RT_TCHECK(t, ok);
    RT_TCHECK(t, grew >= 3); /* 16 slots grew past 2048 */
    rt_khash_free(h);
    ref_free(&m);
}

/* Values written before growth stay at the same rows after it: only keys move. */
static void test_growth(rt_tctx *t)
{
    const rt_khash_cfg cfg = {DIM, 16, 1000, 9, 0.1f, 0};
    rt_khash *h = NULL;
    RT_TCHECK(t, rt_khash_create(&cfg, &h) == RT_K_OK);
    RT_TCHECK(t, rt_khash_slots(h) == 16 && rt_khash_chunks(h) == 2);
    enum { N = 10000 };
    int64_t *keys = rt_talloc(N * 8), *rows = rt_talloc(N * 8), *rows2 = rt_talloc(N * 8);
    float *ptr_vals = rt_talloc(N * DIM * 4);
    for (int64_t i = 0; i < N; i++)
        keys[i] = i * 1000003 - 5000;
    RT_TCHECK(t, rt_khash_find_or_insert(h, keys, 11, rows, NULL) == RT_K_OK);
    float *first = rt_khash_row(h, rows[0]);
    float first_val[DIM];
    memcpy(first_val, first, sizeof first_val);
    int64_t n_new = 0;
    RT_TCHECK(t, rt_khash_find_or_insert(h, keys, N, rows, &n_new) == RT_K_OK && n_new == N - 11);
    /* 10000 keys at load <= 0.75 need 16384 slots: ten doublings from 16. */
    RT_TCHECK(t, rt_khash_slots(h) == 16384);
    RT_TCHECK(t, rt_khash_row(h, rows[0]) == first);
    RT_TCHECK(t, memcmp(first, first_val, sizeof first_val) == 0);
    /* 10000 rows in 1000-row chunks, plus the pre-allocated next chunk. */
    RT_TCHECK(t, rt_khash_chunks(h) == 11);
    for (int64_t i = 0; i < N; i++)
        memcpy(ptr_vals + i * DIM, rt_khash_row(h, rows[i]), DIM * 4);
    RT_TCHECK(t, rt_khash_find(h, keys, N, rows2) == RT_K_OK);
    RT_TCHECK(t, memcmp(rows, rows2, N * 8) == 0);
    /* Initial values are a pure function of (seed, key). */
    rt_khash *h2 = NULL;
    RT_TCHECK(t, rt_khash_create(&cfg, &h2) == RT_K_OK);
    float g[DIM];
    RT_TCHECK(t, rt_khash_find_or_insert(h2, &keys[777], 1, rows2, NULL) == RT_K_OK);
    RT_TCHECK(t, rt_khash_gather(h2, &keys[777], 1, g) == RT_K_OK);
    RT_TCHECK(t, memcmp(g, ptr_vals + 777 * DIM, sizeof g) == 0);
    const int64_t missing = 123;
    RT_TCHECK(t, rt_khash_gather(h2, &missing, 1, g) == RT_K_ERANGE);
    const int64_t reserved = RT_KHASH_EMPTY;
    RT_TCHECK(t, rt_khash_find_or_insert(h2, &reserved, 1, rows2, NULL) == RT_K_EINVAL);
    rt_khash_free(h2);
    rt_khash_free(h);
    free(keys), free(rows), free(rows2), free(ptr_vals);
}

/* Three tables merged into one key space: equal local IDs stay distinct keys. */
static void test_merged(rt_tctx *t)
{
    const rt_khash_cfg cfg = {1, 16, 8, 3, 0, 0};
    rt_khash *h = NULL;
    RT_TCHECK(t, rt_khash_create(&cfg, &h) == RT_K_OK);
    const int bits = rt_kmerge_bits(3);
    const int64_t local[] = {0, 1, 2, 1000};
    for (int64_t tb = 0; tb < 3; tb++) {
        int64_t keys[4];
        float vals[4];
        RT_TCHECK(t, rt_kmerge_encode(local, 4, tb, bits, keys) == RT_K_OK);
        for (int i = 0; i < 4; i++)
            vals[i] = (float)(100 * tb + i);
        RT_TCHECK(t, rt_khash_insert(h, keys, vals, 4, NULL) == RT_K_OK);
    }
    RT_TCHECK(t, rt_khash_size(h) == 12);
    int ok = 1;
    for (int64_t tb = 0; tb < 3; tb++)
        for (int i = 0; i < 4; i++) {
            int64_t key, row;
            rt_kmerge_encode(&local[i], 1, tb, bits, &key);
            ok &= rt_kmerge_table(key, bits) == tb && rt_kmerge_local(key, bits) == local[i];
            ok &= rt_khash_find(h, &key, 1, &row) == RT_K_OK && row >= 0;
            ok &= row >= 0 && rt_khash_row(h, row)[0] == (float)(100 * tb + i);
        }
    RT_TCHECK(t, ok);
    rt_khash_free(h);
}

static void test_eviction(rt_tctx *t)
{
    const rt_khash_cfg cfg = {2, 16, 4, 0, 0, 0};
    rt_khash *h = NULL;
    RT_TCHECK(t, rt_khash_create(&cfg, &h) == RT_K_OK);
    const int64_t a[] = {10, 20, 30, 40};
    int64_t rows[4], ev[4], nev = -1;
    RT_TCHECK(t, rt_khash_find_or_insert(h, a, 4, rows, NULL) == RT_K_OK); /* clock 1 */
    RT_TCHECK(t, rt_khash_find_or_insert(h, a, 2, rows, NULL) == RT_K_OK); /* 10, 20 at 2 */
    RT_TCHECK(t, rt_khash_find(h, &a[0], 1, rows) == RT_K_OK);             /* 10 at 3 */
    int64_t stamp, count;
    RT_TCHECK(t, rt_khash_counters(h, rows[0], &stamp, &count) == RT_K_OK);
    RT_TCHECK(t, stamp == 3 && count == 3);
    /* LRU: 30 and 40 (stamp 1, ties by key), LFU would pick them too; check LFU after. */
    RT_TCHECK(t, rt_khash_evict(h, RT_KEVICT_LRU, 2, ev, &nev) == RT_K_OK);
    RT_TCHECK(t, nev == 2 && ev[0] == 30 && ev[1] == 40 && rt_khash_size(h) == 2);
    RT_TCHECK(t, rt_khash_evict(h, RT_KEVICT_LFU, 1, ev, &nev) == RT_K_OK);
    RT_TCHECK(t, nev == 1 && ev[0] == 20); /* 20 was used twice, 10 three times */
    int64_t row;
    RT_TCHECK(t, rt_khash_find(h, &a[1], 1, &row) == RT_K_OK && row == -1);
    /* Freed rows are reused before new ones are handed out. */
    const int64_t b[] = {50, 60};
    RT_TCHECK(t, rt_khash_find_or_insert(h, b, 2, rows, NULL) == RT_K_OK);
    RT_TCHECK(t, rows[0] < 4 && rows[1] < 4);
    RT_TCHECK(t, rt_khash_evict(h, RT_KEVICT_LFU, 10, NULL, &nev) == RT_K_OK && nev == 3);
    RT_TCHECK(t, rt_khash_size(h) == 0);
    rt_khash_free(h);
    const rt_khash_cfg bad = {0, 16, 4, 0, 0, 0};
    RT_TCHECK(t, rt_khash_create(&bad, &h) == RT_K_EINVAL && h == NULL);
}

/* The key structure doubles exactly when the next key would pass max_load; rows never move. */
static void test_max_load(rt_tctx *t)
{
    const rt_khash_cfg cfg = {1, 16, 8, 5, 0.5f, 0.5};
    rt_khash *h = NULL;
    RT_TCHECK(t, rt_khash_create(&cfg, &h) == RT_K_OK);
    int ok = 1;
    int64_t first_row = -1;
    for (int64_t k = 0; k < 40; k++) {
        int64_t row;
        ok &= rt_khash_find_or_insert(h, &k, 1, &row, NULL) == RT_K_OK;
        if (k == 0) first_row = row, rt_khash_row(h, row)[0] = 42.0f;
        /* 8 keys fit 16 slots at 0.5, the 9th needs 32, the 17th 64, the 33rd 128. */
        const int64_t want = k < 8 ? 16 : k < 16 ? 32 : k < 32 ? 64 : 128;
        ok &= rt_khash_slots(h) == want;
    }
    int64_t key = 0, row;
    ok &= rt_khash_find(h, &key, 1, &row) == RT_K_OK && row == first_row;
    ok &= rt_khash_row(h, row)[0] == 42.0f;
    RT_TCHECK(t, ok);
    rt_khash_free(h);
    const rt_khash_cfg bad = {1, 16, 8, 5, 0.5f, 1.0};
    RT_TCHECK(t, rt_khash_create(&bad, &h) == RT_K_EINVAL && h == NULL);
}

int main(void)
{
    rt_tctx t = {0};
    rt_trng r = {2024};
    test_random_ops(&t, &r);
    test_growth(&t);
    test_merged(&t);
    test_eviction(&t);
    test_max_load(&t);
    return rt_treport(&t, "test_kcpu_hash");
}
