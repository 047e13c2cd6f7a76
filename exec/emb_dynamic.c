#include "emb_dynamic.h"

#include <stdlib.h>
#include <string.h>

#include "dynamic.h"
#include "emb_tables.h"

static int64_t row_floats(const rt_xshard *sh)
{
    return sh->width + sh->dyn->s0 + sh->dyn->s1;
}

/* A new key's row: the initial values a static table gives row KEY, and zero state. */
static void init_row(const rt_xshard *sh, const rt_scenario *s, int64_t key, float *v)
{
    for (int c = 0; c < sh->width; c++)
        v[c] = rt_xtables_init_value(s, sh->table, (uint64_t)key, sh->col0 + c);
    memset(v + sh->width, 0, sizeof(float) * (size_t)(sh->dyn->s0 + sh->dyn->s1));
}

int rt_xdyn_create(rt_xshard *sh, rt_xdev *d, const rt_scenario *s, uint64_t row0, uint64_t rows,
                   FILE *err)
{
    (void)d;
    const rt_table *tb = &s->model.tables[sh->table];
    rt_xdyn *dy = sh->dyn = calloc(1, sizeof *dy);
    if (!dy) goto oom;
    dy->s0 = (int)rt_kopt_state_len(sh->opt, 0, 1, sh->width);
    dy->s1 = (int)rt_kopt_state_len(sh->opt, 1, 1, sh->width);
    const rt_khash_cfg cfg = {.dim = row_floats(sh),
                              .initial_slots =
                                  (int64_t)rt_dyn_initial_slots((double)rows, tb->hash.load_factor),
                              .chunk_rows = tb->hash.chunk_rows,
                              .max_load = tb->hash.load_factor};
    if (rt_khash_create(&cfg, &dy->h) != RT_K_OK) goto oom;
    enum { BATCH = 4096 };
    int64_t keys[BATCH];
    float *vals = malloc(sizeof(float) * BATCH * (size_t)cfg.dim);
    if (!vals) goto oom;
    for (uint64_t r0 = 0; r0 < rows; r0 += BATCH) {
        int64_t n = rows - r0 < BATCH ? (int64_t)(rows - r0) : BATCH;
        for (int64_t i = 0; i < n; i++) {
            keys[i] = (int64_t)(row0 + r0 + (uint64_t)i);
            init_row(sh, s, keys[i], vals + i * cfg.dim);
        }
        if (rt_khash_insert(dy->h, keys, vals, n, NULL) != RT_K_OK) {
            free(vals);
            goto oom;
        }
    }
    free(vals);
    return 0;
oom:
    fprintf(err, "exec: out of host memory building the hash table of table %d\n", sh->table);
    return -1;
}

void rt_xdyn_free(rt_xshard *sh, rt_xdev *d)
{
    (void)d;
    if (!sh->dyn) return;
    rt_khash_free(sh->dyn->h);
    free(sh->dyn->ws);
    free(sh->dyn->scratch);
    free(sh->dyn);
    sh->dyn = NULL;
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* Sorts V[0..N) and keeps each value once; returns how many remain. */
static int64_t sort_unique(int64_t *v, int64_t n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_i64);
    int64_t m = 0;
    for (int64_t i = 0; i < n; i++)
        if (m == 0 || v[m - 1] != v[i]) v[m++] = v[i];
    return m;
}

static int64_t index_of(const int64_t *v, int64_t n, int64_t key)
{
    const int64_t *p = bsearch(&key, v, (size_t)n, sizeof *v, cmp_i64);
    return p ? p - v : -1;
}

/* Inserts the M distinct absent keys MISS, initializes their rows into MROWS. */
static int insert_new(rt_xshard *sh, const rt_scenario *s, const int64_t *miss, int64_t m,
                      int64_t *mrows)
{
    rt_xdyn *dy = sh->dyn;
    int64_t slots = rt_khash_slots(dy->h), n_new = 0;
    if (rt_khash_find_or_insert(dy->h, miss, m, mrows, &n_new) != RT_K_OK) return -1;
    for (int64_t i = 0; i < m; i++)
        init_row(sh, s, miss[i], rt_khash_row(dy->h, mrows[i]));
    for (int64_t grown = rt_khash_slots(dy->h); grown > slots; grown /= 2)
        dy->grows++;
    dy->inserted += n_new;
    return 0;
}

int rt_xdyn_probe(rt_xshard *sh, const rt_scenario *s, int64_t *ids, int64_t n, FILE *err)
{
    rt_xdyn *dy = sh->dyn;
    int64_t *rows = malloc(sizeof(int64_t) * (size_t)(3 * n + 1));
    if (!rows) goto oom;
    int64_t *miss = rows + n, *mrows = rows + 2 * n, m = 0;
    if (rt_khash_find(dy->h, ids, n, rows) != RT_K_OK) goto fail;
    for (int64_t i = 0; i < n; i++)
        if (rows[i] < 0) miss[m++] = ids[i];
    m = sort_unique(miss, m);
    if (m && insert_new(sh, s, miss, m, mrows)) goto fail;
    for (int64_t i = 0; i < n; i++)
        if (rows[i] < 0) rows[i] = mrows[index_of(miss, m, ids[i])];
    int64_t *ws = realloc(dy->ws, sizeof(int64_t) * (size_t)(n + 1));
    if (!ws) goto oom_rows;
    dy->ws = ws;
    memcpy(ws, rows, sizeof(int64_t) * (size_t)n);
    dy->n_ws = sort_unique(ws, n);
    for (int64_t i = 0; i < n; i++)
        ids[i] = index_of(ws, dy->n_ws, rows[i]);
    free(rows);
    return 0;
fail:
    free(rows);
    fprintf(err, "exec: the hash table of table %d refused a probe or insertion\n", sh->table);
    return -1;
oom_rows:
    free(rows);
oom:
    fprintf(err, "exec: out of host memory probing table %d\n", sh->table);
    return -1;
}

/* Dense copies for N rows: values and the state slots, reallocated when they grow. */
static int reserve(rt_xshard *sh, rt_xdev *d, int64_t n, FILE *err)
{
    rt_xdyn *dy = sh->dyn;
    sh->t.rows = n, sh->rows = (uint64_t)n;
    if (n <= dy->cap && sh->t.data) return 0;
    int64_t cap = dy->cap ? dy->cap : 64;
    while (cap < n)
        cap *= 2;
    void **bufs[3] = {&sh->t.data, (void **)&sh->st.s0, (void **)&sh->st.s1};
    int64_t per_row[3] = {sh->width, dy->s0, dy->s1};
    for (int k = 0; k < 3; k++) {
        if (*bufs[k]) d->ops->release(d, *bufs[k]);
        *bufs[k] = NULL;
        if (!per_row[k]) continue;
        if (!(*bufs[k] = d->ops->alloc(d, sizeof(float) * (size_t)(cap * per_row[k])))) {
            fprintf(err, "exec: out of memory for the working set of table %d\n", sh->table);
            return -1;
        }
    }
    dy->cap = cap;
    return 0;
}

int rt_xdyn_fetch(rt_xshard *sh, rt_xdev *d, FILE *err)
{
    rt_xdyn *dy = sh->dyn;
    if (reserve(sh, d, dy->n_ws, err)) return -1;
    size_t w = (size_t)sh->width;
    for (int64_t i = 0; i < dy->n_ws; i++) {
        const float *v = rt_khash_row(dy->h, dy->ws[i]);
        memcpy((float *)sh->t.data + (size_t)i * w, v, sizeof(float) * w);
        if (dy->s0) memcpy(sh->st.s0 + i * dy->s0, v + w, sizeof(float) * (size_t)dy->s0);
        if (dy->s1) memcpy(sh->st.s1 + i * dy->s1, v + w + dy->s0, sizeof(float) * (size_t)dy->s1);
    }
    return 0;
}

void rt_xdyn_write_back(rt_xshard *sh)
{
    rt_xdyn *dy = sh->dyn;
    size_t w = (size_t)sh->width;
    for (int64_t i = 0; i < dy->n_ws; i++) {
        float *v = rt_khash_row(dy->h, dy->ws[i]);
        memcpy(v, (const float *)sh->t.data + (size_t)i * w, sizeof(float) * w);
        if (dy->s0) memcpy(v + w, sh->st.s0 + i * dy->s0, sizeof(float) * (size_t)dy->s0);
        if (dy->s1) memcpy(v + w + dy->s0, sh->st.s1 + i * dy->s1, sizeof(float) * (size_t)dy->s1);
    }
}

int rt_xdyn_evict(rt_xshard *sh, const rt_scenario *s, FILE *err)
{
    const rt_dyn_spec *spec = &s->model.tables[sh->table].hash;
    rt_xdyn *dy = sh->dyn;
    int64_t over = rt_khash_size(dy->h) - (int64_t)spec->capacity, n = 0;
    if (spec->eviction == RT_EVICT_NONE || over <= 0) return 0;
    rt_kevict policy = spec->eviction == RT_EVICT_LRU ? RT_KEVICT_LRU : RT_KEVICT_LFU;
    if (rt_khash_evict(dy->h, policy, over, NULL, &n) != RT_K_OK) {
        fprintf(err, "exec: evicting %lld keys of table %d failed\n", (long long)over, sh->table);
        return -1;
    }
    dy->evicted += n;
    return 0;
}
