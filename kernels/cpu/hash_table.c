/* Dynamic hash embedding table (MTGRBoost, RecIS IDMap + block storage): a key structure of
 * (key, row) slots that doubles past its maximum load (0.75 by default), and value chunks that
 * never move.
 *
 * A batched find is a chain of random misses, so the layout keeps each step to one cache line: a
 * slot holds its key and row side by side, and a row's two eviction counters sit together. The
 * find then runs in two passes, probes then counter updates, each prefetching a later key's line
 * so the misses overlap. */
#include "hash_probe.h"
#include "internal.h"

#include <stdlib.h>

enum { PROBE_AHEAD = 16 };

typedef struct {
    int64_t key; /* RT_KHASH_EMPTY, RT_KHASH_ERASED or a live key */
    int64_t row;
} slot;

typedef struct {
    int64_t stamp; /* clock of the last find that touched the row (LRU) */
    int64_t count; /* finds that touched it (LFU) */
} usage;

/* One block of value storage with its per-row eviction counters and owner keys. */
typedef struct {
    float *values;
    int64_t *owner; /* RT_KHASH_EMPTY when the row is free */
    usage *use;
} chunk;

struct rt_khash {
    rt_khash_cfg cfg;
    int64_t nslots, live, erased;
    slot *slots;
    chunk *chunks;
    int64_t nchunks, chunks_cap;
    int64_t next_row; /* rows below this have been handed out at least once */
    int64_t *free_rows;
    int64_t nfree, free_cap;
    int64_t clock;
};

static void chunk_release(chunk *c)
{
    free(c->values);
    free(c->owner);
    free(c->use);
}

static rt_kstatus add_chunk(rt_khash *h)
{
    if (h->nchunks == h->chunks_cap) {
        const int64_t cap = h->chunks_cap ? 2 * h->chunks_cap : 4;
        chunk *grown = realloc(h->chunks, (size_t)cap * sizeof *grown);
        if (!grown) return RT_K_ENOMEM;
        h->chunks = grown;
        h->chunks_cap = cap;
    }
    const size_t rows = (size_t)h->cfg.chunk_rows;
    chunk c = {malloc(rows * (size_t)h->cfg.dim * sizeof(float)), malloc(rows * sizeof(int64_t)),
               calloc(rows, sizeof(usage))};
    if (!c.values || !c.owner || !c.use) {
        chunk_release(&c);
        return RT_K_ENOMEM;
    }
    for (size_t r = 0; r < rows; r++)
        c.owner[r] = RT_KHASH_EMPTY;
    h->chunks[h->nchunks++] = c;
    return RT_K_OK;
}

static chunk *chunk_of(const rt_khash *h, int64_t row, int64_t *at)
{
    *at = row % h->cfg.chunk_rows;
    return &h->chunks[row / h->cfg.chunk_rows];
}

static bool key_reserved(int64_t key)
{
    return key == RT_KHASH_EMPTY || key == RT_KHASH_ERASED;
}

/* Slot holding key, or -1. */
static int64_t probe_find(const rt_khash *h, int64_t key)
{
    const uint64_t mask = (uint64_t)h->nslots - 1;
    const uint64_t step = rt_khash_step(key, mask);
    uint64_t s = rt_khash_home(key, mask);
    for (int64_t t = 0; t < h->nslots; t++, s = (s + step) & mask) {
        if (h->slots[s].key == key) return (int64_t)s;
        if (h->slots[s].key == RT_KHASH_EMPTY) return -1;
    }
    return -1;
}

/* First free (empty or erased) slot on key's probe sequence; the key must be absent. */
static int64_t probe_free(const slot *slots, int64_t nslots, int64_t key)
{
    const uint64_t mask = (uint64_t)nslots - 1;
    const uint64_t step = rt_khash_step(key, mask);
    uint64_t s = rt_khash_home(key, mask);
    while (!key_reserved(slots[s].key))
        s = (s + step) & mask;
    return (int64_t)s;
}

/* Rebuilds the key structure with nslots slots; values stay where they are. */
static rt_kstatus rehash(rt_khash *h, int64_t nslots)
{
    slot *grown = malloc((size_t)nslots * sizeof *grown);
    if (!grown) return RT_K_ENOMEM;
    for (int64_t s = 0; s < nslots; s++)
        grown[s].key = RT_KHASH_EMPTY;
    for (int64_t s = 0; s < h->nslots; s++) {
        if (key_reserved(h->slots[s].key)) continue;
        grown[probe_free(grown, nslots, h->slots[s].key)] = h->slots[s];
    }
    free(h->slots);
    h->slots = grown;
    h->nslots = nslots;
    h->erased = 0;
    return RT_K_OK;
}

/* Makes room for one more key without passing the maximum load (erased slots count as used). */
static rt_kstatus reserve_one(rt_khash *h)
{
    const double max_load = rt_khash_max_load(&h->cfg);
    if ((double)(h->live + h->erased + 1) <= max_load * (double)h->nslots) return RT_K_OK;
    /* Mostly tombstones: a same-size rebuild is enough. */
    const bool crowded = (double)(h->live + 1) > 0.5 * max_load * (double)h->nslots;
    return rehash(h, crowded ? 2 * h->nslots : h->nslots);
}

static rt_kstatus take_row(rt_khash *h, int64_t *row)
{
    if (h->nfree > 0) {
        *row = h->free_rows[--h->nfree];
        return RT_K_OK;
    }
    *row = h->next_row;
    /* Keep a pre-allocated next chunk once the current one is in use. */
    if (h->next_row / h->cfg.chunk_rows + 2 > h->nchunks) {
        const rt_kstatus st = add_chunk(h);
        if (st != RT_K_OK) return st;
    }
    h->next_row++;
    return RT_K_OK;
}

static void touch(rt_khash *h, int64_t row)
{
    int64_t at;
    chunk *c = chunk_of(h, row, &at);
    c->use[at].stamp = h->clock;
    c->use[at].count++;
}

/* Inserts an absent key; its row gets owner, zeroed counters and initial values. */
static rt_kstatus insert_new(rt_khash *h, int64_t key, int64_t *row)
{
    rt_kstatus st = reserve_one(h);
    if (st == RT_K_OK) st = take_row(h, row);
    if (st != RT_K_OK) return st;
    const int64_t s = probe_free(h->slots, h->nslots, key);
    if (h->slots[s].key == RT_KHASH_ERASED) h->erased--;
    h->slots[s] = (slot){key, *row};
    h->live++;
    int64_t at;
    chunk *c = chunk_of(h, *row, &at);
    c->owner[at] = key;
    c->use[at] = (usage){0, 0};
    float *v = c->values + at * h->cfg.dim;
    for (int64_t j = 0; j < h->cfg.dim; j++)
        v[j] = rt_khash_init_value(h->cfg.init_seed, key, j, h->cfg.init_scale);
    return RT_K_OK;
}

rt_kstatus rt_khash_create(const rt_khash_cfg *cfg, rt_khash **out)
{
    if (!out) return RT_K_EINVAL;
    *out = NULL;
    if (!cfg || cfg->dim <= 0 || cfg->chunk_rows <= 0 || cfg->initial_slots < 0 ||
        cfg->initial_slots > (INT64_C(1) << 40) || !(cfg->init_scale >= 0) ||
        !(cfg->max_load >= 0 && cfg->max_load < 1))
        return RT_K_EINVAL;
    rt_khash *h = calloc(1, sizeof *h);
    if (!h) return RT_K_ENOMEM;
    h->cfg = *cfg;
    int64_t slots = 16;
    while (slots < cfg->initial_slots)
        slots *= 2;
    h->slots = malloc((size_t)slots * sizeof *h->slots);
    rt_kstatus st = h->slots ? RT_K_OK : RT_K_ENOMEM;
    if (st == RT_K_OK) st = add_chunk(h);
    if (st == RT_K_OK) st = add_chunk(h);
    if (st != RT_K_OK) {
        rt_khash_free(h);
        return st;
    }
    h->nslots = slots;
    for (int64_t s = 0; s < slots; s++)
        h->slots[s].key = RT_KHASH_EMPTY;
    *out = h;
    return RT_K_OK;
}

void rt_khash_free(rt_khash *h)
{
    if (!h) return;
    for (int64_t c = 0; c < h->nchunks; c++)
        chunk_release(&h->chunks[c]);
    free(h->chunks);
    free(h->slots);
    free(h->free_rows);
    free(h);
}

int64_t rt_khash_size(const rt_khash *h)
{
    return h->live;
}
int64_t rt_khash_slots(const rt_khash *h)
{
    return h->nslots;
}
int64_t rt_khash_chunks(const rt_khash *h)
{
    return h->nchunks;
}
int64_t rt_khash_dim(const rt_khash *h)
{
    return h->cfg.dim;
}
int64_t rt_khash_clock(const rt_khash *h)
{
    return h->clock;
}

static rt_kstatus check_keys(const rt_khash *h, const int64_t *keys, int64_t n)
{
    if (!h || n < 0 || (n > 0 && !keys)) return RT_K_EINVAL;
    for (int64_t i = 0; i < n; i++)
        if (key_reserved(keys[i])) return RT_K_EINVAL;
    return RT_K_OK;
}

rt_kstatus rt_khash_find(rt_khash *h, const int64_t *keys, int64_t n, int64_t *rows)
{
    rt_kstatus st = check_keys(h, keys, n);
    if (st != RT_K_OK || (n > 0 && !rows)) return st != RT_K_OK ? st : RT_K_EINVAL;
    h->clock++;
    const uint64_t mask = (uint64_t)h->nslots - 1;
    for (int64_t i = 0; i < n; i++) {
        if (i + PROBE_AHEAD < n) {
            /* At load 0.5 about a third of the keys need the second slot of their sequence. */
            const int64_t key = keys[i + PROBE_AHEAD];
            const uint64_t home = rt_khash_home(key, mask);
            __builtin_prefetch(&h->slots[home]);
            __builtin_prefetch(&h->slots[(home + rt_khash_step(key, mask)) & mask]);
        }
        const int64_t s = probe_find(h, keys[i]);
        rows[i] = s < 0 ? -1 : h->slots[s].row;
    }
    for (int64_t i = 0; i < n; i++) {
        if (i + PROBE_AHEAD < n && rows[i + PROBE_AHEAD] >= 0) {
            int64_t at;
            const chunk *c = chunk_of(h, rows[i + PROBE_AHEAD], &at);
            __builtin_prefetch(&c->use[at], 1);
        }
        if (rows[i] >= 0) touch(h, rows[i]);
    }
    return RT_K_OK;
}

rt_kstatus rt_khash_insert(rt_khash *h, const int64_t *keys, const float *values, int64_t n,
                           int64_t *rows)
{
    rt_kstatus st = check_keys(h, keys, n);
    if (st != RT_K_OK || (n > 0 && !values)) return st != RT_K_OK ? st : RT_K_EINVAL;
    for (int64_t i = 0; i < n; i++) {
        const int64_t s = probe_find(h, keys[i]);
        int64_t row = s < 0 ? -1 : h->slots[s].row;
        if (s < 0 && (st = insert_new(h, keys[i], &row)) != RT_K_OK) return st;
        memcpy(rt_khash_row(h, row), values + i * h->cfg.dim, (size_t)h->cfg.dim * sizeof(float));
        if (rows) rows[i] = row;
    }
    return RT_K_OK;
}

rt_kstatus rt_khash_find_or_insert(rt_khash *h, const int64_t *keys, int64_t n, int64_t *rows,
                                   int64_t *n_new)
{
    rt_kstatus st = check_keys(h, keys, n);
    if (st != RT_K_OK || (n > 0 && !rows)) return st != RT_K_OK ? st : RT_K_EINVAL;
    h->clock++;
    int64_t added = 0;
    for (int64_t i = 0; i < n; i++) {
        const int64_t s = probe_find(h, keys[i]);
        if (s >= 0) {
            rows[i] = h->slots[s].row;
        } else {
            if ((st = insert_new(h, keys[i], &rows[i])) != RT_K_OK) return st;
            added++;
        }
        touch(h, rows[i]);
    }
    if (n_new) *n_new = added;
    return RT_K_OK;
}

static rt_kstatus erase_slot(rt_khash *h, int64_t s)
{
    if (h->nfree == h->free_cap) {
        const int64_t cap = h->free_cap ? 2 * h->free_cap : 64;
        int64_t *grown = realloc(h->free_rows, (size_t)cap * sizeof *grown);
        if (!grown) return RT_K_ENOMEM;
        h->free_rows = grown;
        h->free_cap = cap;
    }
    const int64_t row = h->slots[s].row;
    int64_t at;
    chunk *c = chunk_of(h, row, &at);
    c->owner[at] = RT_KHASH_EMPTY;
    h->free_rows[h->nfree++] = row;
    h->slots[s].key = RT_KHASH_ERASED;
    h->live--;
    h->erased++;
    return RT_K_OK;
}

rt_kstatus rt_khash_erase(rt_khash *h, const int64_t *keys, int64_t n)
{
    rt_kstatus st = check_keys(h, keys, n);
    for (int64_t i = 0; st == RT_K_OK && i < n; i++) {
        const int64_t s = probe_find(h, keys[i]);
        if (s >= 0) st = erase_slot(h, s);
    }
    return st;
}

typedef struct {
    int64_t rank; /* timestamp or count */
    int64_t key;
} victim;

static int victim_cmp(const void *pa, const void *pb)
{
    const victim *a = pa, *b = pb;
    if (a->rank != b->rank) return a->rank < b->rank ? -1 : 1;
    return (a->key > b->key) - (a->key < b->key);
}

rt_kstatus rt_khash_evict(rt_khash *h, rt_kevict policy, int64_t max_evict, int64_t *evicted,
                          int64_t *n_evicted)
{
    if (!h || !n_evicted || max_evict < 0 || (policy != RT_KEVICT_LRU && policy != RT_KEVICT_LFU))
        return RT_K_EINVAL;
    *n_evicted = 0;
    if (h->live == 0 || max_evict == 0) return RT_K_OK;
    victim *v = malloc((size_t)h->live * sizeof *v);
    if (!v) return RT_K_ENOMEM;
    int64_t nv = 0;
    for (int64_t s = 0; s < h->nslots; s++) {
        if (key_reserved(h->slots[s].key)) continue;
        int64_t at;
        const chunk *c = chunk_of(h, h->slots[s].row, &at);
        v[nv++] = (victim){policy == RT_KEVICT_LRU ? c->use[at].stamp : c->use[at].count,
                           h->slots[s].key};
    }
    qsort(v, (size_t)nv, sizeof *v, victim_cmp);
    const int64_t m = max_evict < nv ? max_evict : nv;
    rt_kstatus st = RT_K_OK;
    for (int64_t i = 0; i < m && st == RT_K_OK; i++) {
        st = erase_slot(h, probe_find(h, v[i].key));
        if (st == RT_K_OK && evicted) evicted[i] = v[i].key;
        if (st == RT_K_OK) (*n_evicted)++;
    }
    free(v);
    return st;
}

float *rt_khash_row(rt_khash *h, int64_t row)
{
    if (!h || row < 0 || row >= h->next_row) return NULL;
    int64_t at;
    chunk *c = chunk_of(h, row, &at);
    return c->owner[at] == RT_KHASH_EMPTY ? NULL : c->values + at * h->cfg.dim;
}

rt_kstatus rt_khash_counters(const rt_khash *h, int64_t row, int64_t *last_access, int64_t *count)
{
    if (!h || !last_access || !count) return RT_K_EINVAL;
    if (row < 0 || row >= h->next_row) return RT_K_ERANGE;
    int64_t at;
    const chunk *c = chunk_of(h, row, &at);
    if (c->owner[at] == RT_KHASH_EMPTY) return RT_K_ERANGE;
    *last_access = c->use[at].stamp;
    *count = c->use[at].count;
    return RT_K_OK;
}

rt_kstatus rt_khash_gather(rt_khash *h, const int64_t *keys, int64_t n, float *out)
{
    rt_kstatus st = check_keys(h, keys, n);
    if (st != RT_K_OK || (n > 0 && !out)) return st != RT_K_OK ? st : RT_K_EINVAL;
    for (int64_t i = 0; i < n; i++)
        if (probe_find(h, keys[i]) < 0) return RT_K_ERANGE;
    h->clock++;
    const size_t bytes = (size_t)h->cfg.dim * sizeof(float);
    for (int64_t i = 0; i < n; i++) {
        const int64_t row = h->slots[probe_find(h, keys[i])].row;
        touch(h, row);
        memcpy(out + i * h->cfg.dim, rt_khash_row(h, row), bytes);
    }
    return RT_K_OK;
}
