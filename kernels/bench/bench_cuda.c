/* GPU kernel benchmarks: achieved GB/s over the minimum bytes each kernel must move, MBU
 * against a device copy kernel measured in the same run, and launch overhead (the same call
 * on a minimal input). Times are CUDA-event medians after a warm-up. */
#include "bench_report.h"
#include "cuda_harness.h"

#include <string.h>

typedef rt_kstatus (*run_fn)(void *ctx, rt_kcuda_ctx *c);

static double measure(run_fn fn, void *ctx, rt_kcuda_ctx *c)
{
    cudaEvent_t a, b;
    cudaEventCreate(&a);
    cudaEventCreate(&b);
    if (fn(ctx, c) != RT_K_OK || rt_kcuda_ctx_sync(c) != RT_K_OK) {
        fprintf(stderr, "benchmark: kernel failed\n");
        exit(1);
    }
    double t[64];
    int n = 0;
    const double start = rt_kbench_now();
    while (n < 64 && (n < 10 || rt_kbench_now() - start < 0.3)) {
        cudaEventRecord(a, rt_kcuda_ctx_stream(c));
        fn(ctx, c);
        cudaEventRecord(b, rt_kcuda_ctx_stream(c));
        cudaEventSynchronize(b);
        float ms = 0;
        cudaEventElapsedTime(&ms, a, b);
        t[n++] = ms * 1e-3;
    }
    cudaEventDestroy(a);
    cudaEventDestroy(b);
    return rt_kbench_median(t, n);
}

typedef struct {
    float *src, *dst;
    int64_t n;
} copy_ctx;

static rt_kstatus run_copy(void *p, rt_kcuda_ctx *c)
{
    copy_ctx *x = p;
    return rt_kcuda_copy(x->src, x->n, x->dst, c);
}

static double copy_bandwidth(rt_kcuda_ctx *c)
{
    const int64_t n = (int64_t)1 << 28; /* 1 GiB each way */
    copy_ctx x = {rt_tpoisoned((size_t)n * 4), rt_tpoisoned((size_t)n * 4), n};
    const double s = measure(run_copy, &x, c);
    cudaFree(x.src);
    cudaFree(x.dst);
    return 8.0 * (double)n / s / 1e9;
}

typedef struct {
    rt_ktable t;
    int64_t *ids, *off, nbags, n;
    float *out;
} pool_ctx;

static rt_kstatus run_pool(void *p, rt_kcuda_ctx *c)
{
    pool_ctx *x = p;
    return rt_kcuda_gather_pool(&x->t, x->ids, x->off, x->nbags, RT_KPOOL_SUM, x->out, c);
}

static const char *dt_name(rt_kdtype dt)
{
    return dt == RT_KDT_FP32 ? "fp32" : dt == RT_KDT_FP16 ? "fp16" : "bf16";
}

static void bench_pool(const rt_kbench_out *o, rt_trng *r, rt_kcuda_ctx *c, double copy,
                       int64_t dim, rt_kdtype dt, int64_t nbags, int64_t pool)
{
    if (!rt_kbench_selected(o, "gather_pool")) return;
    const size_t eb = rt_kdtype_bytes(dt);
    const int64_t rows = ((int64_t)4 << 30) / (dim * (int64_t)eb); /* 4 GiB table */
    const int64_t n = nbags * pool;
    int64_t *ids = rt_talloc((size_t)n * 8), *off = rt_talloc((size_t)(nbags + 1) * 8);
    for (int64_t i = 0; i < n; i++)
        ids[i] = rt_tbelow(r, rows);
    for (int64_t b = 0; b <= nbags; b++)
        off[b] = b * pool;
    pool_ctx x = {{rt_tpoisoned((size_t)rows * (size_t)dim * eb), rows, dim, dt},
                  rt_tdev(ids, (size_t)n * 8),
                  rt_tdev(off, (size_t)(nbags + 1) * 8),
                  nbags,
                  n,
                  rt_tpoisoned((size_t)(nbags * dim) * 4)};
    cudaMemset(x.t.data, 0, (size_t)rows * (size_t)dim * eb);
    rt_kbench_row row = {"gather_pool", dt_name(dt), "", 0, 0, copy, 0, (double)n, 0};
    snprintf(row.size, sizeof row.size, "bags=%lld pool=%lld dim=%lld", (long long)nbags,
             (long long)pool, (long long)dim);
    row.bytes = 8.0 * (double)n + 8.0 * (double)(nbags + 1) + (double)n * (double)dim * (double)eb +
                4.0 * (double)nbags * (double)dim;
    row.seconds = measure(run_pool, &x, c);
    pool_ctx one = x;
    one.nbags = 1;
    row.launch_us = measure(run_pool, &one, c) * 1e6;
    rt_kbench_print(o, &row);
    cudaFree(x.t.data), cudaFree(x.ids), cudaFree(x.off), cudaFree(x.out);
    free(ids), free(off);
}

typedef struct {
    rt_ktable t;
    rt_kopt_state st;
    rt_kopt opt;
    int64_t *ids, n;
    float *g;
} upd_ctx;

static rt_kstatus run_update(void *p, rt_kcuda_ctx *c)
{
    upd_ctx *x = p;
    return rt_kcuda_sparse_update(&x->t, x->st, &x->opt, x->ids, NULL, x->n, RT_KPOOL_SUM, x->g, c);
}

static void bench_update(const rt_kbench_out *o, rt_trng *r, rt_kcuda_ctx *c, double copy,
                         rt_koptim kind, const char *name, int64_t dim, int64_t n)
{
    if (!rt_kbench_selected(o, name)) return;
    const int64_t rows = (int64_t)1 << 24;
    const int64_t n0 = rt_kopt_state_len(kind, 0, rows, dim),
                  n1 = rt_kopt_state_len(kind, 1, rows, dim);
    int64_t *ids = rt_talloc((size_t)n * 8), *u = rt_talloc((size_t)n * 8),
            *inv = rt_talloc((size_t)n * 8), nu;
    for (int64_t i = 0; i < n; i++)
        ids[i] = rt_tbelow(r, rows);
    rt_kcpu_unique(ids, n, u, inv, &nu);
    upd_ctx x = {
        {rt_tdev(NULL, (size_t)(rows * dim) * 4), rows, dim, RT_KDT_FP32},
        {n0 ? rt_tdev(NULL, (size_t)n0 * 4) : NULL, n1 ? rt_tdev(NULL, (size_t)n1 * 4) : NULL},
        {kind, 1e-3f, 1e-8f, 0.9f, 0.999f, 1},
        rt_tdev(ids, (size_t)n * 8),
        n,
        rt_tdev(NULL, (size_t)(n * dim) * 4)};
    cudaMemset(x.t.data, 0, (size_t)(rows * dim) * 4);
    cudaMemset(x.g, 0, (size_t)(n * dim) * 4);
    if (n0) cudaMemset(x.st.s0, 0, (size_t)n0 * 4);
    if (n1) cudaMemset(x.st.s1, 0, (size_t)n1 * 4);
    const double state_bytes =
        4.0 * (double)(n0 ? (n0 == rows ? 1 : dim) : 0) + 4.0 * (double)(n1 ? dim : 0);
    rt_kbench_row row = {name, "fp32", "", 0, 0, copy, 0, (double)n, 0};
    snprintf(row.size, sizeof row.size, "ids=%lld uniq=%lld dim=%lld", (long long)n, (long long)nu,
             (long long)dim);
    row.bytes = 8.0 * (double)n + 4.0 * (double)(n * dim) +
                (double)nu * (8.0 * (double)dim + 2.0 * state_bytes);
    row.seconds = measure(run_update, &x, c);
    upd_ctx one = x;
    one.n = 1;
    row.launch_us = measure(run_update, &one, c) * 1e6;
    rt_kbench_print(o, &row);
    cudaFree(x.t.data), cudaFree(x.st.s0), cudaFree(x.st.s1), cudaFree(x.ids), cudaFree(x.g);
    free(ids), free(u), free(inv);
}

typedef struct {
    int64_t *ids, *off, nseg, n, *a, *b, *d;
} ids_ctx;

static rt_kstatus run_unique(void *p, rt_kcuda_ctx *c)
{
    ids_ctx *x = p;
    return rt_kcuda_unique(x->ids, x->n, x->a, x->b, x->d, c);
}

static rt_kstatus run_segment_unique(void *p, rt_kcuda_ctx *c)
{
    ids_ctx *x = p;
    return rt_kcuda_segment_unique(x->ids, x->off, x->nseg, x->a, x->d, x->b, c);
}

static rt_kstatus run_bucketize(void *p, rt_kcuda_ctx *c)
{
    ids_ctx *x = p;
    return rt_kcuda_bucketize(x->ids, x->off, x->nseg, NULL, RT_KBUCKET_HASH, 64, x->a, x->b, x->d,
                              NULL, c);
}

static void bench_ids(const rt_kbench_out *o, rt_trng *r, rt_kcuda_ctx *c, double copy,
                      const char *name, run_fn fn, int64_t n, int64_t range, int64_t nseg)
{
    if (!rt_kbench_selected(o, name)) return;
    int64_t *ids = rt_talloc((size_t)n * 8), *off = rt_talloc((size_t)(nseg + 1) * 8),
            *u = rt_talloc((size_t)n * 8), *inv = rt_talloc((size_t)n * 8), nu;
    for (int64_t i = 0; i < n; i++)
        ids[i] = rt_tbelow(r, range);
    for (int64_t s = 0; s <= nseg; s++)
        off[s] = n * s / nseg;
    rt_kcpu_unique(ids, n, u, inv, &nu);
    ids_ctx x = {rt_tdev(ids, (size_t)n * 8),
                 rt_tdev(off, (size_t)(nseg + 1) * 8),
                 nseg,
                 n,
                 rt_tpoisoned((size_t)n * 8),
                 rt_tpoisoned((size_t)n * 8),
                 rt_tpoisoned((size_t)(nseg + 65) * 8)};
    rt_kbench_row row = {name, "i64", "", 0, 0, copy, 0, (double)n, 0};
    snprintf(row.size, sizeof row.size, "ids=%lld range=%lld seg=%lld", (long long)n,
             (long long)range, (long long)nseg);
    row.bytes = fn == run_bucketize ? 24.0 * (double)n : 16.0 * (double)n + 8.0 * (double)nu;
    row.seconds = measure(fn, &x, c);
    rt_kbench_print(o, &row);
    cudaFree(x.ids), cudaFree(x.off), cudaFree(x.a), cudaFree(x.b), cudaFree(x.d);
    free(ids), free(off), free(u), free(inv);
}

typedef struct {
    rt_kcuda_hash *h;
    int64_t *keys, n, *rows;
} hash_ctx;

static rt_kstatus run_find(void *p, rt_kcuda_ctx *c)
{
    hash_ctx *x = p;
    return rt_kcuda_hash_find(x->h, x->keys, x->n, x->rows, c);
}

static void bench_hash(const rt_kbench_out *o, rt_trng *r, rt_kcuda_ctx *c, double copy,
                       int64_t nkeys)
{
    if (!rt_kbench_selected(o, "hash_find")) return;
    /* load 0.5 at 64-bit keys: nkeys keys in 2 nkeys slots */
    const rt_khash_cfg cfg = {16, 2 * nkeys, 1 << 20, 1, 0.01f, 0};
    int64_t *keys = rt_talloc((size_t)nkeys * 8);
    for (int64_t i = 0; i < nkeys; i++)
        keys[i] = (int64_t)(rt_trand(r) >> 1);
    hash_ctx x = {NULL, rt_tdev(keys, (size_t)nkeys * 8), nkeys, rt_tpoisoned((size_t)nkeys * 8)};
    if (rt_kcuda_hash_create(&cfg, c, &x.h) != RT_K_OK ||
        rt_kcuda_hash_find_or_insert(x.h, x.keys, nkeys, x.rows, NULL, c) != RT_K_OK)
        exit(1);
    for (int64_t i = 0; i < nkeys; i++)
        keys[i] = keys[rt_tbelow(r, nkeys)];
    cudaMemcpy(x.keys, keys, (size_t)nkeys * 8, cudaMemcpyHostToDevice);
    rt_kbench_row row = {"hash_find", "i64", "", 0, 0, copy, 0, (double)nkeys, 0};
    snprintf(row.size, sizeof row.size, "keys=%lld slots=%lld load=%.2f", (long long)nkeys,
             (long long)rt_kcuda_hash_slots(x.h),
             (double)rt_kcuda_hash_size(x.h) / (double)rt_kcuda_hash_slots(x.h));
    row.bytes = (8.0 + 16.0 + 8.0 + 8.0 + 16.0) * (double)nkeys;
    row.seconds = measure(run_find, &x, c);
    hash_ctx one = x;
    one.n = 1;
    row.launch_us = measure(run_find, &one, c) * 1e6;
    rt_kbench_print(o, &row);
    rt_kcuda_hash_free(x.h);
    cudaFree(x.keys), cudaFree(x.rows);
    free(keys);
}

int main(int argc, char **argv)
{
    rt_kbench_out o;
    if (rt_kbench_args(argc, argv, &o, "gpu") != 0) return 2;
    rt_kcuda_ctx *c = rt_tgpu_or_skip("rt_kbench_cuda");
    rt_trng r = {12345};
    const double copy = copy_bandwidth(c);
    printf("# device copy kernel (read + write, 1 GiB each way): %.1f GB/s\n", copy);
    rt_kbench_header(&o);
    const int64_t dims[] = {4, 8, 16, 32, 64, 128, 256};
    for (int i = 0; i < 7; i++)
        bench_pool(&o, &r, c, copy, dims[i], RT_KDT_FP32, ((int64_t)1 << 25) / dims[i], 8);
    bench_pool(&o, &r, c, copy, 64, RT_KDT_FP16, (int64_t)1 << 19, 8);
    bench_pool(&o, &r, c, copy, 64, RT_KDT_BF16, (int64_t)1 << 19, 8);
    const int64_t bags[] = {1, 64, 1024, 16384, 262144, 1048576};
    for (int i = 0; i < 6; i++)
        bench_pool(&o, &r, c, copy, 64, RT_KDT_FP32, bags[i], 8);
    bench_update(&o, &r, c, copy, RT_KOPT_SGD, "update_sgd", 64, 1 << 22);
    bench_update(&o, &r, c, copy, RT_KOPT_ADAGRAD, "update_adagrad", 64, 1 << 22);
    bench_update(&o, &r, c, copy, RT_KOPT_ROWWISE_ADAGRAD, "update_rowwise_adagrad", 64, 1 << 22);
    bench_update(&o, &r, c, copy, RT_KOPT_ADAM, "update_adam", 64, 1 << 22);
    bench_ids(&o, &r, c, copy, "unique", run_unique, 1 << 24, 1 << 22, 1);
    bench_ids(&o, &r, c, copy, "segment_unique", run_segment_unique, 1 << 24, 1 << 22, 26);
    bench_ids(&o, &r, c, copy, "bucketize", run_bucketize, 1 << 24, INT64_C(1) << 40, 26);
    bench_hash(&o, &r, c, copy, (int64_t)1 << 24);
    rt_kcuda_ctx_free(c);
    if (o.csv) fclose(o.csv);
    return 0;
}
