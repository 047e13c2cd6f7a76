/* Dynamic hash embedding table on the device. The host object owns device arrays: the key
 * structure (slot keys and rows, doubled past its maximum load (0.75 by default) by a rehash kernel
 * that moves only keys and rows), and value chunks that never move, each followed by its rows' LRU
 * timestamps and LFU counts. A batched find_or_insert claims slots with 64-bit atomicCAS; the
 * winner of a slot takes a row from a device counter and writes the keyed initial values. */
#include "hash_probe.h"
#include "internal.cuh"

#include <stdlib.h>

struct rt_kcuda_hash {
    rt_khash_cfg cfg;
    int64_t nslots, live, next_row, clock;
    int64_t *slot_key, *slot_row; /* device */
    char **chunks;                /* host array of device chunk pointers */
    char **chunks_dev;            /* device copy of it */
    int64_t nchunks, chunks_cap;
    int64_t *counters;  /* device: [0] next row, [1] keys inserted by the last batch */
    size_t value_bytes; /* bytes of a chunk's values, before its counters */
};

/* Where row `row` keeps its values and counters. */
struct row_ref {
    float *values;
    int64_t *stamp;
    unsigned long long *count;
};

static __device__ row_ref locate(char *const *chunks, int64_t chunk_rows, size_t value_bytes,
                                 int64_t dim, int64_t row)
{
    char *base = chunks[row / chunk_rows];
    const int64_t at = row % chunk_rows;
    row_ref r;
    r.values = (float *)base + at * dim;
    r.stamp = (int64_t *)(base + value_bytes) + at;
    r.count = (unsigned long long *)(base + value_bytes + (size_t)chunk_rows * 8) + at;
    return r;
}

__global__ void fill_empty(int64_t *slot_key, int64_t n)
{
    const int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) slot_key[i] = RT_KHASH_EMPTY;
}

/* Claims the first empty slot on key's probe sequence, or finds key; returns the slot and
 * sets *claimed when this thread inserted it. */
static __device__ int64_t claim(int64_t *slot_key, int64_t nslots, int64_t key, bool *claimed)
{
    const uint64_t mask = (uint64_t)nslots - 1;
    const uint64_t step = rt_khash_step(key, mask);
    uint64_t s = rt_khash_home(key, mask);
    *claimed = false;
    for (int64_t t = 0; t < nslots; t++, s = (s + step) & mask) {
        const int64_t seen = ((volatile int64_t *)slot_key)[s];
        if (seen == key) return (int64_t)s;
        if (seen != RT_KHASH_EMPTY) continue;
        const int64_t prev =
            (int64_t)atomicCAS((unsigned long long *)&slot_key[s],
                               (unsigned long long)RT_KHASH_EMPTY, (unsigned long long)key);
        if (prev == RT_KHASH_EMPTY) {
            *claimed = true;
            return (int64_t)s;
        }
        if (prev == key) return (int64_t)s;
    }
    return -1;
}

__global__ void rehash_kernel(const int64_t *old_key, const int64_t *old_row, int64_t old_n,
                              int64_t *slot_key, int64_t *slot_row, int64_t nslots)
{
    const int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= old_n || old_key[i] == RT_KHASH_EMPTY || old_key[i] == RT_KHASH_ERASED) return;
    bool claimed;
    const int64_t s = claim(slot_key, nslots, old_key[i], &claimed);
    slot_row[s] = old_row[i];
}

__global__ void find_kernel(const int64_t *slot_key, const int64_t *slot_row, int64_t nslots,
                            const int64_t *keys, int64_t n, int64_t *rows, char *const *chunks,
                            int64_t chunk_rows, size_t value_bytes, int64_t dim, int64_t clock,
                            int *err)
{
    const int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    const int64_t key = keys[i];
    rows[i] = -1;
    if (key == RT_KHASH_EMPTY || key == RT_KHASH_ERASED) {
        rt_kcuda_flag(err, RT_K_EINVAL);
        return;
    }
    const uint64_t mask = (uint64_t)nslots - 1;
    const uint64_t step = rt_khash_step(key, mask);
    uint64_t s = rt_khash_home(key, mask);
    for (int64_t t = 0; t < nslots; t++, s = (s + step) & mask) {
        const int64_t seen = __ldg(&slot_key[s]);
        if (seen == RT_KHASH_EMPTY) return;
        if (seen == key) {
            const int64_t row = slot_row[s];
            rows[i] = row;
            const row_ref r = locate(chunks, chunk_rows, value_bytes, dim, row);
            *r.stamp = clock;
            atomicAdd(r.count, 1ull);
            return;
        }
    }
}

__global__ void insert_claim_kernel(int64_t *slot_key, int64_t *slot_row, int64_t nslots,
                                    const int64_t *keys, int64_t n, int64_t *slots,
                                    int64_t *counters, char *const *chunks, int64_t chunk_rows,
                                    size_t value_bytes, int64_t dim, uint64_t seed, float scale,
                                    int *err)
{
    const int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    const int64_t key = keys[i];
    slots[i] = -1;
    if (key == RT_KHASH_EMPTY || key == RT_KHASH_ERASED) {
        rt_kcuda_flag(err, RT_K_EINVAL);
        return;
    }
    bool claimed;
    const int64_t s = claim(slot_key, nslots, key, &claimed);
    if (s < 0) {
        rt_kcuda_flag(err, RT_K_ENOMEM);
        return;
    }
    slots[i] = s;
    if (!claimed) return;
    const int64_t row = (int64_t)atomicAdd((unsigned long long *)&counters[0], 1ull);
    atomicAdd((unsigned long long *)&counters[1], 1ull);
    slot_row[s] = row;
    const row_ref r = locate(chunks, chunk_rows, value_bytes, dim, row);
    for (int64_t j = 0; j < dim; j++)
        r.values[j] = rt_khash_init_value(seed, key, j, scale);
    *r.stamp = 0;
    *r.count = 0;
}

__global__ void insert_rows_kernel(const int64_t *slot_row, const int64_t *slots, int64_t n,
                                   int64_t *rows, char *const *chunks, int64_t chunk_rows,
                                   size_t value_bytes, int64_t dim, int64_t clock)
{
    const int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    if (slots[i] < 0) {
        rows[i] = -1;
        return;
    }
    const int64_t row = slot_row[slots[i]];
    rows[i] = row;
    const row_ref r = locate(chunks, chunk_rows, value_bytes, dim, row);
    *r.stamp = clock;
    atomicAdd(r.count, 1ull);
}

__global__ void gather_kernel(const int64_t *rows, int64_t n, char *const *chunks,
                              int64_t chunk_rows, size_t value_bytes, int64_t dim, float *out,
                              int *err)
{
    const int64_t e = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (e >= n * dim) return;
    const int64_t row = rows[e / dim];
    if (row < 0) {
        rt_kcuda_flag(err, RT_K_ERANGE);
        return;
    }
    out[e] = locate(chunks, chunk_rows, value_bytes, dim, row).values[e % dim];
}

static rt_kstatus add_chunk(rt_kcuda_hash *h, rt_kcuda_ctx *c)
{
    if (h->nchunks == h->chunks_cap) {
        const int64_t cap = h->chunks_cap ? 2 * h->chunks_cap : 8;
        char **grown = (char **)realloc(h->chunks, (size_t)cap * sizeof *grown);
        if (!grown) return RT_K_ENOMEM;
        h->chunks = grown;
        char **dev;
        RT_CUDA_CHECK(cudaMalloc((void **)&dev, (size_t)cap * sizeof *dev));
        if (h->chunks_dev) RT_CUDA_CHECK(cudaFreeAsync(h->chunks_dev, c->stream));
        h->chunks_dev = dev;
        h->chunks_cap = cap;
    }
    const size_t bytes = h->value_bytes + (size_t)h->cfg.chunk_rows * 16;
    char *chunk;
    RT_CUDA_CHECK(cudaMalloc((void **)&chunk, bytes));
    h->chunks[h->nchunks++] = chunk;
    RT_CUDA_CHECK(cudaMemcpyAsync(h->chunks_dev, h->chunks, (size_t)h->nchunks * sizeof(char *),
                                  cudaMemcpyHostToDevice, c->stream));
    /* The host array may change before the copy runs; wait for it. */
    RT_CUDA_CHECK(cudaStreamSynchronize(c->stream));
    return RT_K_OK;
}

static rt_kstatus rehash(rt_kcuda_hash *h, int64_t nslots, rt_kcuda_ctx *c)
{
    int64_t *key, *row;
    RT_CUDA_CHECK(cudaMallocAsync((void **)&key, (size_t)nslots * 8, c->stream));
    RT_CUDA_CHECK(cudaMallocAsync((void **)&row, (size_t)nslots * 8, c->stream));
    fill_empty<<<rt_kcuda_blocks(nslots, RT_KCUDA_THREADS), RT_KCUDA_THREADS, 0, c->stream>>>(
        key, nslots);
    if (h->slot_key) {
        rehash_kernel<<<rt_kcuda_blocks(h->nslots, RT_KCUDA_THREADS), RT_KCUDA_THREADS, 0,
                        c->stream>>>(h->slot_key, h->slot_row, h->nslots, key, row, nslots);
        RT_CUDA_CHECK(cudaFreeAsync(h->slot_key, c->stream));
        RT_CUDA_CHECK(cudaFreeAsync(h->slot_row, c->stream));
    }
    RT_CUDA_CHECK(cudaGetLastError());
    h->slot_key = key;
    h->slot_row = row;
    h->nslots = nslots;
    return RT_K_OK;
}

/* Room for n more keys within the maximum load and n more rows plus a spare chunk. */
static rt_kstatus reserve(rt_kcuda_hash *h, int64_t n, rt_kcuda_ctx *c)
{
    const double max_load = rt_khash_max_load(&h->cfg);
    int64_t slots = h->nslots;
    while ((double)(h->live + n) > max_load * (double)slots)
        slots *= 2;
    if (slots != h->nslots) RT_K_TRY(rehash(h, slots, c));
    while ((h->next_row + n) / h->cfg.chunk_rows + 2 > h->nchunks)
        RT_K_TRY(add_chunk(h, c));
    return RT_K_OK;
}

rt_kstatus rt_kcuda_hash_create(const rt_khash_cfg *cfg, rt_kcuda_ctx *c, rt_kcuda_hash **out)
{
    if (!out) return RT_K_EINVAL;
    *out = NULL;
    if (!c || !cfg || cfg->dim <= 0 || cfg->chunk_rows <= 0 || cfg->initial_slots < 0 ||
        cfg->initial_slots > (INT64_C(1) << 40) || !(cfg->init_scale >= 0) ||
        !(cfg->max_load >= 0 && cfg->max_load < 1))
        return RT_K_EINVAL;
    rt_kcuda_hash *h = (rt_kcuda_hash *)calloc(1, sizeof *h);
    if (!h) return RT_K_ENOMEM;
    h->cfg = *cfg;
    h->value_bytes = ((size_t)cfg->chunk_rows * (size_t)cfg->dim * 4 + 7) & ~(size_t)7;
    int64_t slots = 16;
    while (slots < cfg->initial_slots)
        slots *= 2;
    rt_kstatus st = rehash(h, slots, c);
    if (st == RT_K_OK) st = add_chunk(h, c);
    if (st == RT_K_OK) st = add_chunk(h, c);
    if (st == RT_K_OK && cudaMalloc((void **)&h->counters, 16) != cudaSuccess) st = RT_K_EDEVICE;
    if (st == RT_K_OK && cudaMemset(h->counters, 0, 16) != cudaSuccess) st = RT_K_EDEVICE;
    if (st != RT_K_OK) {
        rt_kcuda_hash_free(h);
        return st;
    }
    *out = h;
    return RT_K_OK;
}

void rt_kcuda_hash_free(rt_kcuda_hash *h)
{
    if (!h) return;
    cudaDeviceSynchronize();
    for (int64_t i = 0; i < h->nchunks; i++)
        cudaFree(h->chunks[i]);
    cudaFree(h->chunks_dev);
    cudaFree(h->slot_key);
    cudaFree(h->slot_row);
    cudaFree(h->counters);
    free(h->chunks);
    free(h);
}

int64_t rt_kcuda_hash_size(const rt_kcuda_hash *h)
{
    return h->live;
}
int64_t rt_kcuda_hash_slots(const rt_kcuda_hash *h)
{
    return h->nslots;
}
int64_t rt_kcuda_hash_chunks(const rt_kcuda_hash *h)
{
    return h->nchunks;
}

rt_kstatus rt_kcuda_hash_find(rt_kcuda_hash *h, const int64_t *keys, int64_t n, int64_t *rows,
                              rt_kcuda_ctx *c)
{
    if (!h || !c || n < 0 || (n > 0 && (!keys || !rows))) return RT_K_EINVAL;
    h->clock++;
    if (n == 0) return RT_K_OK;
    find_kernel<<<rt_kcuda_blocks(n, RT_KCUDA_THREADS), RT_KCUDA_THREADS, 0, c->stream>>>(
        h->slot_key, h->slot_row, h->nslots, keys, n, rows, h->chunks_dev, h->cfg.chunk_rows,
        h->value_bytes, h->cfg.dim, h->clock, c->err);
    RT_CUDA_CHECK(cudaGetLastError());
    return RT_K_OK;
}

rt_kstatus rt_kcuda_hash_find_or_insert(rt_kcuda_hash *h, const int64_t *keys, int64_t n,
                                        int64_t *rows, int64_t *n_new, rt_kcuda_ctx *c)
{
    if (!h || !c || n < 0 || (n > 0 && (!keys || !rows))) return RT_K_EINVAL;
    h->clock++;
    if (n_new) *n_new = 0;
    if (n == 0) return RT_K_OK;
    RT_K_TRY(reserve(h, n, c));
    void *ws;
    RT_K_TRY(rt_kcuda_workspace(c, (size_t)n * sizeof(int64_t), &ws));
    int64_t *slots = (int64_t *)ws;
    RT_CUDA_CHECK(cudaMemsetAsync(h->counters + 1, 0, 8, c->stream));
    const unsigned blocks = rt_kcuda_blocks(n, RT_KCUDA_THREADS);
    insert_claim_kernel<<<blocks, RT_KCUDA_THREADS, 0, c->stream>>>(
        h->slot_key, h->slot_row, h->nslots, keys, n, slots, h->counters, h->chunks_dev,
        h->cfg.chunk_rows, h->value_bytes, h->cfg.dim, h->cfg.init_seed, h->cfg.init_scale, c->err);
    insert_rows_kernel<<<blocks, RT_KCUDA_THREADS, 0, c->stream>>>(
        h->slot_row, slots, n, rows, h->chunks_dev, h->cfg.chunk_rows, h->value_bytes, h->cfg.dim,
        h->clock);
    RT_CUDA_CHECK(cudaGetLastError());
    int64_t counters[2];
    RT_CUDA_CHECK(
        cudaMemcpyAsync(counters, h->counters, sizeof counters, cudaMemcpyDeviceToHost, c->stream));
    RT_CUDA_CHECK(cudaStreamSynchronize(c->stream));
    h->next_row = counters[0];
    h->live += counters[1];
    if (n_new) *n_new = counters[1];
    return RT_K_OK;
}

rt_kstatus rt_kcuda_hash_gather(rt_kcuda_hash *h, const int64_t *keys, int64_t n, float *out,
                                rt_kcuda_ctx *c)
{
    if (!h || !c || n < 0 || (n > 0 && (!keys || !out))) return RT_K_EINVAL;
    if (n == 0) return RT_K_OK;
    void *ws;
    RT_K_TRY(rt_kcuda_workspace(c, (size_t)n * sizeof(int64_t), &ws));
    int64_t *rows = (int64_t *)ws;
    RT_K_TRY(rt_kcuda_hash_find(h, keys, n, rows, c));
    gather_kernel<<<rt_kcuda_blocks(n * h->cfg.dim, RT_KCUDA_THREADS), RT_KCUDA_THREADS, 0,
                    c->stream>>>(rows, n, h->chunks_dev, h->cfg.chunk_rows, h->value_bytes,
                                 h->cfg.dim, out, c->err);
    RT_CUDA_CHECK(cudaGetLastError());
    return RT_K_OK;
}
