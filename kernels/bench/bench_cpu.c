/* CPU kernel benchmarks: achieved GB/s over the minimum bytes each kernel must move, MBU
 * against a memcpy measured in the same run, and the time of a minimal call (the CPU's
 * "launch overhead"). One thread, like the kernels. */
#define _DEFAULT_SOURCE /* madvise */
#include "bench_report.h"
#include "harness.h"
#include "kernels.h"

#include <string.h>
#include <sys/mman.h>

typedef rt_kstatus (*run_fn)(void *ctx);

/* Large buffers on 2 MiB transparent huge pages when the kernel allows it, so random row
 * reads measure memory, not page walks (GPU HBM is mapped with large pages too). */
static void *big_alloc(size_t bytes)
{
    const size_t huge = (size_t)2 << 20;
    const size_t rounded = (bytes + huge - 1) / huge * huge;
    void *p = aligned_alloc(huge, rounded ? rounded : huge);
    if (!p) {
        fprintf(stderr, "benchmark: out of memory (%zu bytes)\n", bytes);
        exit(1);
    }
    madvise(p, rounded, MADV_HUGEPAGE);
    return p;
}

/* Median seconds of fn over at least 5 calls and 0.3 s, after one warm-up call. */
static double measure(run_fn fn, void *ctx)
{
    double t[64];
    if (fn(ctx) != RT_K_OK) {
        fprintf(stderr, "benchmark: kernel failed\n");
        exit(1);
    }
    int n = 0;
    const double start = rt_kbench_now();
    while (n < 64 && (n < 5 || rt_kbench_now() - start < 0.3)) {
        const double t0 = rt_kbench_now();
        fn(ctx);
        t[n++] = rt_kbench_now() - t0;
    }
    return rt_kbench_median(t, n);
}

/* The copy reference: one thread's memcpy of 256 MiB, far larger than the caches. */
typedef struct {
    char *src, *dst;
    size_t bytes;
} copy_ref;

static copy_ref copy_ref_make(void)
{
    const size_t bytes = (size_t)256 << 20;
    copy_ref c = {big_alloc(bytes), big_alloc(bytes), bytes};
    memset(c.src, 1, bytes);
    memset(c.dst, 2, bytes);
    return c;
}

static void copy_ref_free(copy_ref *c)
{
    free(c->src);
    free(c->dst);
}

/* Calls of fn per timed batch, enough to last at least 2 ms: one for the large inputs, which
 * then run cold after each copy, many for the small ones, whose single call would be clock
 * resolution and which then run from cache, as a repeatedly launched small kernel would. */
static int calls_per_batch(run_fn fn, void *ctx)
{
    if (fn(ctx) != RT_K_OK) {
        fprintf(stderr, "benchmark: kernel failed\n");
        exit(1);
    }
    const double t0 = rt_kbench_now();
    fn(ctx);
    const double once = rt_kbench_now() - t0;
    const double calls = once > 0 ? 2e-3 / once : 1e6;
    return calls < 1 ? 1 : calls > 1e6 ? 1000000 : (int)calls;
}

static double time_batch(run_fn fn, void *ctx, int calls)
{
    const double t0 = rt_kbench_now();
    for (int c = 0; c < calls; c++)
        fn(ctx);
    return (rt_kbench_now() - t0) / calls;
}

enum { MAX_REPS = 41, MIN_REPS = 9 };

/* The box is shared and noisy, so the copy reference is measured interleaved with the kernel:
 * copy, kernel, copy, kernel... MBU is the median of the per-pair ratios, so a slow spell hits
 * both halves of a pair and cancels. Time and copy GB/s are the medians of their own series. */
static void time_row(rt_kbench_row *row, const copy_ref *cp, run_fn fn, void *ctx)
{
    double t[MAX_REPS], copy[MAX_REPS], mbu[MAX_REPS];
    const int calls = calls_per_batch(fn, ctx);
    memcpy(cp->dst, cp->src, cp->bytes);
    int n = 0;
    const double start = rt_kbench_now();
    while (n < MAX_REPS && (n < MIN_REPS || rt_kbench_now() - start < 0.5)) {
        const double c0 = rt_kbench_now();
        memcpy(cp->dst, cp->src, cp->bytes);
        copy[n] = 2.0 * (double)cp->bytes / (rt_kbench_now() - c0) / 1e9;
        t[n] = time_batch(fn, ctx, calls);
        mbu[n] = row->bytes / t[n] / 1e9 / copy[n];
        n++;
    }
    row->seconds = rt_kbench_median(t, n);
    row->copy_gbps = rt_kbench_median(copy, n);
    row->mbu = rt_kbench_median(mbu, n);
}

/* ---- gather / pool ---- */
typedef struct {
    rt_ktable t;
    int64_t *ids, *off, nbags;
    float *out;
} pool_ctx;

static rt_kstatus run_pool(void *p)
{
    pool_ctx *c = p;
    return rt_kcpu_gather_pool(&c->t, c->ids, c->off, c->nbags, RT_KPOOL_SUM, c->out);
}

static rt_kstatus run_seq(void *p)
{
    pool_ctx *c = p;
    return rt_kcpu_sequence_lookup(&c->t, c->ids, c->off[c->nbags], c->out);
}

static const char *dt_name(rt_kdtype dt)
{
    return dt == RT_KDT_FP32 ? "fp32" : dt == RT_KDT_FP16 ? "fp16" : "bf16";
}

static void bench_pool(const rt_kbench_out *o, const copy_ref *cp, rt_trng *r, int64_t dim,
                       rt_kdtype dt, int64_t nbags, int64_t pool, int sequence)
{
    const char *name = sequence ? "sequence_lookup" : "gather_pool";
    if (!rt_kbench_selected(o, name)) return;
    const size_t eb = rt_kdtype_bytes(dt);
    const int64_t rows = ((int64_t)512 << 20) / (dim * (int64_t)eb);
    const int64_t n = nbags * pool;
    pool_ctx c = {{big_alloc((size_t)rows * (size_t)dim * eb), rows, dim, dt},
                  rt_talloc((size_t)n * 8),
                  rt_talloc((size_t)(nbags + 1) * 8),
                  nbags,
                  rt_talloc((size_t)(sequence ? n : nbags) * (size_t)dim * 4)};
    memset(c.t.data, 0, (size_t)rows * (size_t)dim * eb);
    for (int64_t i = 0; i < n; i++)
        c.ids[i] = rt_tbelow(r, rows);
    for (int64_t b = 0; b <= nbags; b++)
        c.off[b] = b * pool;
    rt_kbench_row row = {name, dt_name(dt), "", 0, 0, 0, 0, (double)n, 0};
    snprintf(row.size, sizeof row.size, "bags=%lld pool=%lld dim=%lld", (long long)nbags,
             (long long)pool, (long long)dim);
    /* ids + offsets + rows read + output written */
    row.bytes = 8.0 * (double)n + (sequence ? 0.0 : 8.0 * (double)(nbags + 1)) +
                (double)n * (double)dim * (double)eb +
                4.0 * (double)(sequence ? n : nbags) * (double)dim;
    time_row(&row, cp, sequence ? run_seq : run_pool, &c);
    pool_ctx one = c;
    one.nbags = 1;
    const int64_t one_off[2] = {0, sequence ? 1 : pool};
    one.off = (int64_t *)one_off;
    row.launch_us = measure(sequence ? run_seq : run_pool, &one) * 1e6;
    rt_kbench_print(o, &row);
    free(c.t.data), free(c.ids), free(c.off), free(c.out);
}

/* ---- sparse update ---- */
typedef struct {
    rt_ktable t;
    rt_kopt_state st;
    rt_kopt opt;
    int64_t *ids, n;
    float *g;
} upd_ctx;

static rt_kstatus run_update(void *p)
{
    upd_ctx *c = p;
    return rt_kcpu_sparse_update(&c->t, c->st, &c->opt, c->ids, NULL, c->n, RT_KPOOL_SUM, c->g);
}

static void bench_update(const rt_kbench_out *o, const copy_ref *cp, rt_trng *r, rt_koptim kind,
                         const char *name, int64_t dim, int64_t n)
{
    if (!rt_kbench_selected(o, name)) return;
    const int64_t rows = (int64_t)1 << 20;
    const int64_t n0 = rt_kopt_state_len(kind, 0, rows, dim),
                  n1 = rt_kopt_state_len(kind, 1, rows, dim);
    upd_ctx c = {{big_alloc((size_t)(rows * dim) * 4), rows, dim, RT_KDT_FP32},
                 {n0 ? big_alloc((size_t)n0 * 4) : NULL, n1 ? big_alloc((size_t)n1 * 4) : NULL},
                 {kind, 1e-3f, 1e-8f, 0.9f, 0.999f, 1},
                 rt_talloc((size_t)n * 8),
                 n,
                 rt_talloc((size_t)(n * dim) * 4)};
    memset(c.t.data, 0, (size_t)(rows * dim) * 4);
    if (n0) memset(c.st.s0, 0, (size_t)n0 * 4);
    if (n1) memset(c.st.s1, 0, (size_t)n1 * 4);
    rt_tfill(r, c.g, n * dim, -1e-3f, 1e-3f);
    for (int64_t i = 0; i < n; i++)
        c.ids[i] = rt_tbelow(r, rows);
    int64_t *u = rt_talloc((size_t)n * 8), *inv = rt_talloc((size_t)n * 8), nu;
    rt_kcpu_unique(c.ids, n, u, inv, &nu);
    free(u), free(inv);
    const double state_bytes =
        4.0 * (double)(n0 ? (n0 == rows ? 1 : dim) : 0) + 4.0 * (double)(n1 ? dim : 0);
    rt_kbench_row row = {name, "fp32", "", 0, 0, 0, 0, (double)n, 0};
    snprintf(row.size, sizeof row.size, "ids=%lld uniq=%lld dim=%lld", (long long)n, (long long)nu,
             (long long)dim);
    /* ids + gradients read, then per touched row: weights and state read and written */
    row.bytes = 8.0 * (double)n + 4.0 * (double)(n * dim) +
                (double)nu * (8.0 * (double)dim + 2.0 * state_bytes);
    time_row(&row, cp, run_update, &c);
    upd_ctx one = c;
    one.n = 1;
    row.launch_us = measure(run_update, &one) * 1e6;
    rt_kbench_print(o, &row);
    free(c.t.data), free(c.st.s0), free(c.st.s1), free(c.ids), free(c.g);
}

/* ---- unique, segment unique, bucketize ---- */
typedef struct {
    int64_t *ids, *off, nseg, n;
    int64_t *a, *b, *cc, *d;
} ids_ctx;

static rt_kstatus run_unique(void *p)
{
    ids_ctx *c = p;
    int64_t nu;
    return rt_kcpu_unique(c->ids, c->n, c->a, c->b, &nu);
}

static rt_kstatus run_segment_unique(void *p)
{
    ids_ctx *c = p;
    return rt_kcpu_segment_unique(c->ids, c->off, c->nseg, c->a, c->d, c->b);
}

static rt_kstatus run_bucketize(void *p)
{
    ids_ctx *c = p;
    return rt_kcpu_bucketize(c->ids, c->off, c->nseg, NULL, RT_KBUCKET_HASH, 64, c->a, c->b, c->d,
                             NULL);
}

static void bench_ids(const rt_kbench_out *o, const copy_ref *cp, rt_trng *r, const char *name,
                      run_fn fn, int64_t n, int64_t range, int64_t nseg)
{
    if (!rt_kbench_selected(o, name)) return;
    ids_ctx c = {rt_talloc((size_t)n * 8),
                 rt_talloc((size_t)(nseg + 1) * 8),
                 nseg,
                 n,
                 rt_talloc((size_t)n * 8),
                 rt_talloc((size_t)n * 8),
                 rt_talloc((size_t)n * 8),
                 rt_talloc((size_t)(nseg + 65) * 8)};
    for (int64_t i = 0; i < n; i++)
        c.ids[i] = rt_tbelow(r, range);
    for (int64_t s = 0; s <= nseg; s++)
        c.off[s] = n * s / nseg;
    int64_t nu = 0;
    rt_kcpu_unique(c.ids, n, c.a, c.b, &nu);
    rt_kbench_row row = {name, "i64", "", 0, 0, 0, 0, (double)n, 0};
    snprintf(row.size, sizeof row.size, "ids=%lld range=%lld seg=%lld", (long long)n,
             (long long)range, (long long)nseg);
    if (fn == run_bucketize) /* ids read, ids and positions written */
        row.bytes = 24.0 * (double)n;
    else /* ids read, inverse written, unique ids written */
        row.bytes = 16.0 * (double)n + 8.0 * (double)nu;
    time_row(&row, cp, fn, &c);
    ids_ctx one = c;
    one.n = 1;
    one.nseg = 1;
    const int64_t one_off[2] = {0, 1};
    one.off = (int64_t *)one_off;
    row.launch_us = measure(fn, &one) * 1e6;
    rt_kbench_print(o, &row);
    free(c.ids), free(c.off), free(c.a), free(c.b), free(c.cc), free(c.d);
}

/* ---- SPTT shuffle ---- */
typedef struct {
    const void *in;
    void *out;
    size_t row_bytes;
    int64_t a, b, *sizes;
} bt_ctx;

static rt_kstatus run_bt(void *p)
{
    bt_ctx *c = p;
    return rt_kcpu_sptt_shuffle(c->in, c->row_bytes, c->a, c->b, c->sizes, c->out);
}

static void bench_shuffle(const rt_kbench_out *o, const copy_ref *cp, int64_t features,
                          int64_t peers, int64_t rows_per_block, size_t row_bytes)
{
    if (!rt_kbench_selected(o, "sptt_shuffle")) return;
    const int64_t nb = features * peers, total = nb * rows_per_block;
    bt_ctx c = {rt_talloc((size_t)total * row_bytes),
                rt_talloc((size_t)total * row_bytes),
                row_bytes,
                features,
                peers,
                rt_talloc((size_t)nb * 8)};
    memset((void *)c.in, 3, (size_t)total * row_bytes);
    for (int64_t i = 0; i < nb; i++)
        c.sizes[i] = rows_per_block;
    rt_kbench_row row = {"sptt_shuffle", "u8", "", 0, 0, 0, 0, (double)total, 0};
    snprintf(row.size, sizeof row.size, "F=%lld P=%lld rows=%lld rowB=%zu", (long long)features,
             (long long)peers, (long long)rows_per_block, row_bytes);
    row.bytes = 2.0 * (double)total * (double)row_bytes + 8.0 * (double)nb;
    time_row(&row, cp, run_bt, &c);
    bt_ctx one = c;
    one.a = one.b = 1;
    row.launch_us = measure(run_bt, &one) * 1e6;
    rt_kbench_print(o, &row);
    free((void *)c.in), free(c.out), free(c.sizes);
}

/* ---- hash table ---- */
typedef struct {
    rt_khash *h;
    int64_t *keys, n, *rows;
} hash_ctx;

static rt_kstatus run_find(void *p)
{
    hash_ctx *c = p;
    return rt_khash_find(c->h, c->keys, c->n, c->rows);
}

static void bench_hash(const rt_kbench_out *o, const copy_ref *cp, rt_trng *r, int64_t nkeys)
{
    if (!rt_kbench_selected(o, "hash_find")) return;
    /* load 0.5: nkeys keys in 2 nkeys slots */
    const rt_khash_cfg cfg = {16, 2 * nkeys, 1 << 16, 1, 0.01f, 0};
    hash_ctx c = {NULL, rt_talloc((size_t)nkeys * 8), nkeys, rt_talloc((size_t)nkeys * 8)};
    if (rt_khash_create(&cfg, &c.h) != RT_K_OK) exit(1);
    for (int64_t i = 0; i < nkeys; i++)
        c.keys[i] = (int64_t)(rt_trand(r) >> 1);
    rt_khash_find_or_insert(c.h, c.keys, nkeys, c.rows, NULL);
    for (int64_t i = 0; i < nkeys; i++) /* look up in a different order than inserted */
        c.keys[i] = c.keys[rt_tbelow(r, nkeys)];
    rt_kbench_row row = {"hash_find", "i64", "", 0, 0, 0, 0, (double)nkeys, 0};
    snprintf(row.size, sizeof row.size, "keys=%lld slots=%lld load=%.2f", (long long)nkeys,
             (long long)rt_khash_slots(c.h),
             (double)rt_khash_size(c.h) / (double)rt_khash_slots(c.h));
    /* key read, one (key, row) slot read, row written, timestamp written, count updated */
    row.bytes = (8.0 + 16.0 + 8.0 + 8.0 + 16.0) * (double)nkeys;
    time_row(&row, cp, run_find, &c);
    hash_ctx one = c;
    one.n = 1;
    row.launch_us = measure(run_find, &one) * 1e6;
    rt_kbench_print(o, &row);
    rt_khash_free(c.h);
    free(c.keys), free(c.rows);
}

int main(int argc, char **argv)
{
    rt_kbench_out o;
    if (rt_kbench_args(argc, argv, &o, "cpu") != 0) return 2;
    rt_trng r = {12345};
    printf("# copy reference: memcpy of 256 MiB (read + write), one thread, interleaved with the "
           "kernel; MBU = median of per-pair ratios\n");
    copy_ref cp = copy_ref_make();
    rt_kbench_header(&o);
    const int64_t dims[] = {4, 8, 16, 32, 64, 128, 256};
    for (int i = 0; i < 7; i++)
        bench_pool(&o, &cp, &r, dims[i], RT_KDT_FP32, ((int64_t)1 << 21) / dims[i], 8, 0);
    bench_pool(&o, &cp, &r, 64, RT_KDT_FP16, 32768, 8, 0);
    bench_pool(&o, &cp, &r, 64, RT_KDT_BF16, 32768, 8, 0);
    const int64_t bags[] = {1, 16, 256, 4096, 65536};
    for (int i = 0; i < 5; i++)
        bench_pool(&o, &cp, &r, 64, RT_KDT_FP32, bags[i], 8, 0);
    bench_pool(&o, &cp, &r, 64, RT_KDT_FP32, 32768, 8, 1);
    bench_update(&o, &cp, &r, RT_KOPT_SGD, "update_sgd", 64, 1 << 18);
    bench_update(&o, &cp, &r, RT_KOPT_ADAGRAD, "update_adagrad", 64, 1 << 18);
    bench_update(&o, &cp, &r, RT_KOPT_ROWWISE_ADAGRAD, "update_rowwise_adagrad", 64, 1 << 18);
    bench_update(&o, &cp, &r, RT_KOPT_ADAM, "update_adam", 64, 1 << 18);
    bench_ids(&o, &cp, &r, "unique", run_unique, 1 << 22, 1 << 20, 1);
    bench_ids(&o, &cp, &r, "segment_unique", run_segment_unique, 1 << 22, 1 << 20, 26);
    bench_ids(&o, &cp, &r, "bucketize", run_bucketize, 1 << 22, INT64_C(1) << 40, 26);
    bench_shuffle(&o, &cp, 26, 64, 64, 256);
    bench_hash(&o, &cp, &r, 1 << 22);
    copy_ref_free(&cp);
    if (o.csv) fclose(o.csv);
    return 0;
}
