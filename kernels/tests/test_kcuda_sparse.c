/* GPU sparse kernels against the CPU reference kernels on fresh random inputs, with every
 * output poisoned first. Exits 77 without a GPU. */
#include "cuda_harness.h"

#include <string.h>

#define D(x) cudaFree((void *)(x))

static void check_gather_pool(rt_tctx *t, rt_kcuda_ctx *c, rt_trng *r, int64_t rows, int64_t dim,
                              int64_t nbags, rt_kdtype dt, rt_kpool pool)
{
    const size_t tb_bytes = (size_t)(rows * dim) * rt_kdtype_bytes(dt);
    uint16_t *raw = rt_talloc(tb_bytes);
    for (int64_t i = 0; i < rows * dim; i++) {
        const float x = rt_tuniform(r, -1, 1);
        if (dt == RT_KDT_FP32)
            ((float *)raw)[i] = x;
        else
            raw[i] = dt == RT_KDT_FP16 ? rt_kf32_to_f16(x) : rt_kf32_to_bf16(x);
    }
    int64_t *off = rt_talloc((size_t)(nbags + 1) * 8);
    const int64_t n = rt_toffsets(r, off, nbags, 9, 1);
    int64_t *ids = rt_talloc((size_t)n * 8 + 8);
    for (int64_t i = 0; i < n; i++)
        ids[i] = rt_tbelow(r, rows);
    float *cpu = rt_talloc((size_t)(nbags * dim) * 4),
          *cpu_seq = rt_talloc((size_t)(n * dim) * 4 + 4);
    rt_ktable host = {raw, rows, dim, dt};
    RT_TCHECK(t, rt_kcpu_gather_pool(&host, ids, off, nbags, pool, cpu) == RT_K_OK);
    RT_TCHECK(t, rt_kcpu_sequence_lookup(&host, ids, n, cpu_seq) == RT_K_OK);
    rt_ktable dev = {rt_tdev(raw, tb_bytes), rows, dim, dt};
    int64_t *d_ids = rt_tdev(ids, (size_t)n * 8), *d_off = rt_tdev(off, (size_t)(nbags + 1) * 8);
    float *d_out = rt_tpoisoned((size_t)(nbags * dim) * 4),
          *d_seq = rt_tpoisoned((size_t)(n * dim) * 4);
    RT_TCHECK(t, rt_kcuda_gather_pool(&dev, d_ids, d_off, nbags, pool, d_out, c) == RT_K_OK);
    RT_TCHECK(t, rt_kcuda_sequence_lookup(&dev, d_ids, n, d_seq, c) == RT_K_OK);
    RT_TCHECK(t, rt_kcuda_ctx_sync(c) == RT_K_OK);
    RT_TCLOSE_DEV(t, "gpu gather_pool", d_out, cpu, nbags * dim, 1e-5, 1e-5);
    RT_TCLOSE_DEV(t, "gpu sequence_lookup", d_seq, cpu_seq, n * dim, 0, 0);
    /* The fused gather: bags from the middle on, and the IDs after the first third as rows,
     * into one output, against the CPU kernel on the same segments. */
    const int64_t b0 = nbags / 2, i0 = n / 3, rows_out = (nbags - b0) + (n - i0);
    float *cpu_seg = rt_talloc((size_t)(rows_out * dim) * 4 + 4);
    float *d_seg = rt_tpoisoned((size_t)(rows_out * dim) * 4);
    rt_kgather_seg hs[2] = {{host, ids, off, b0, nbags - b0, cpu_seg},
                            {host, ids, NULL, i0, n - i0, cpu_seg + (nbags - b0) * dim}};
    rt_kgather_seg ds[2] = {{dev, d_ids, d_off, b0, nbags - b0, d_seg},
                            {dev, d_ids, NULL, i0, n - i0, d_seg + (nbags - b0) * dim}};
    RT_TCHECK(t, rt_kcpu_gather_segments(hs, 2) == RT_K_OK);
    RT_TCHECK(t, rt_kcuda_gather_segments(ds, 2, c) == RT_K_OK);
    RT_TCHECK(t, rt_kcuda_ctx_sync(c) == RT_K_OK);
    RT_TCLOSE_DEV(t, "gpu gather_segments", d_seg, cpu_seg, rows_out * dim, 1e-5, 1e-5);
    D(d_seg);
    free(cpu_seg);
    if (n > 0) { /* an out-of-range ID is reported at sync */
        const int64_t bad = rows;
        cudaMemcpy(d_ids, &bad, 8, cudaMemcpyHostToDevice);
        RT_TCHECK(t, rt_kcuda_gather_pool(&dev, d_ids, d_off, nbags, pool, d_out, c) == RT_K_OK);
        RT_TCHECK(t, rt_kcuda_ctx_sync(c) == RT_K_ERANGE);
        RT_TCHECK(t, rt_kcuda_ctx_sync(c) == RT_K_OK);
    }
    D(dev.data), D(d_ids), D(d_off), D(d_out), D(d_seq);
    free(raw), free(off), free(ids), free(cpu), free(cpu_seq);
}

static void check_sparse_update(rt_tctx *t, rt_kcuda_ctx *c, rt_trng *r, rt_koptim kind,
                                int64_t rows, int64_t dim, int64_t nbags, rt_kpool pool, int seq)
{
    const int64_t n0 = rt_kopt_state_len(kind, 0, rows, dim),
                  n1 = rt_kopt_state_len(kind, 1, rows, dim);
    float *w = rt_talloc((size_t)(rows * dim) * 4), *s0 = rt_talloc((size_t)n0 * 4 + 4),
          *s1 = rt_talloc((size_t)n1 * 4 + 4);
    rt_tfill(r, w, rows * dim, -1, 1);
    rt_tfill(r, s0, n0, 0, 1);
    rt_tfill(r, s1, n1, 0, 1);
    int64_t *off = rt_talloc((size_t)(nbags + 1) * 8);
    const int64_t n = seq ? nbags : rt_toffsets(r, off, nbags, 6, 1);
    int64_t *ids = rt_talloc((size_t)n * 8 + 8);
    for (int64_t i = 0; i < n; i++)
        ids[i] = rt_tbelow(r, rows);
    float *g = rt_talloc((size_t)(nbags * dim) * 4 + 4);
    rt_tfill(r, g, nbags * dim, -1, 1);
    const rt_kopt o = {kind, 0.05f, 1e-3f, 0.9f, 0.999f, 3};
    rt_ktable dev = {rt_tdev(w, (size_t)(rows * dim) * 4), rows, dim, RT_KDT_FP32};
    float *d_s0 = rt_tdev(s0, (size_t)n0 * 4), *d_s1 = rt_tdev(s1, (size_t)n1 * 4);
    float *d_g = rt_tdev(g, (size_t)(nbags * dim) * 4);
    int64_t *d_ids = rt_tdev(ids, (size_t)n * 8), *d_off = rt_tdev(off, (size_t)(nbags + 1) * 8);
    rt_ktable host = {w, rows, dim, RT_KDT_FP32};
    RT_TCHECK(t, rt_kcpu_sparse_update(&host, (rt_kopt_state){s0, s1}, &o, ids, seq ? NULL : off,
                                       nbags, pool, g) == RT_K_OK);
    RT_TCHECK(t,
              rt_kcuda_sparse_update(&dev, (rt_kopt_state){n0 ? d_s0 : NULL, n1 ? d_s1 : NULL}, &o,
                                     d_ids, seq ? NULL : d_off, nbags, pool, d_g, c) == RT_K_OK);
    RT_TCHECK(t, rt_kcuda_ctx_sync(c) == RT_K_OK);
    RT_TCLOSE_DEV(t, "gpu sparse_update w", dev.data, w, rows * dim, 1e-4, 1e-5);
    RT_TCLOSE_DEV(t, "gpu sparse_update s0", d_s0, s0, n0, 1e-4, 1e-6);
    RT_TCLOSE_DEV(t, "gpu sparse_update s1", d_s1, s1, n1, 1e-4, 1e-7);
    D(dev.data), D(d_s0), D(d_s1), D(d_g), D(d_ids), D(d_off);
    free(w), free(s0), free(s1), free(off), free(ids), free(g);
}

static void check_rows(rt_tctx *t, rt_kcuda_ctx *c, rt_trng *r, int64_t src_rows, int64_t dim,
                       int64_t n)
{
    float *src = rt_talloc((size_t)(src_rows * dim) * 4),
          *dst = rt_talloc((size_t)(n * dim) * 4 + 4);
    float *acc = rt_talloc((size_t)(src_rows * dim) * 4);
    int64_t *idx = rt_talloc((size_t)n * 8 + 8), *inner = rt_talloc((size_t)src_rows * 8);
    rt_tfill(r, src, src_rows * dim, -1, 1);
    memset(acc, 0, (size_t)(src_rows * dim) * 4);
    for (int64_t i = 0; i < n; i++)
        idx[i] = rt_tbelow(r, src_rows);
    for (int64_t i = 0; i < src_rows; i++)
        inner[i] = rt_tbelow(r, src_rows);
    float *d_src = rt_tdev(src, (size_t)(src_rows * dim) * 4),
          *d_dst = rt_tpoisoned((size_t)(n * dim) * 4);
    float *d_acc = rt_tdev(acc, (size_t)(src_rows * dim) * 4),
          *d_rec = rt_tpoisoned((size_t)(n * dim) * 4);
    int64_t *d_idx = rt_tdev(idx, (size_t)n * 8), *d_inner = rt_tdev(inner, (size_t)src_rows * 8);
    int64_t *d_comp = rt_tpoisoned((size_t)n * 8), *comp = rt_talloc((size_t)n * 8 + 8);
    RT_TCHECK(t, rt_kcpu_gather_rows(src, src_rows, dim, idx, n, dst) == RT_K_OK);
    RT_TCHECK(t, rt_kcpu_scatter_add_rows(dst, n, dim, idx, src_rows, acc) == RT_K_OK);
    RT_TCHECK(t, rt_kcpu_compose_index(idx, n, inner, src_rows, comp) == RT_K_OK);
    RT_TCHECK(t, rt_kcuda_gather_rows(d_src, src_rows, dim, d_idx, n, d_dst, c) == RT_K_OK);
    RT_TCHECK(t, rt_kcuda_scatter_add_rows(d_dst, n, dim, d_idx, src_rows, d_acc, c) == RT_K_OK);
    RT_TCHECK(t, rt_kcuda_compose_index(d_idx, n, d_inner, src_rows, d_comp, c) == RT_K_OK);
    RT_TCHECK(t, rt_kcuda_recover(d_src, src_rows, dim, d_inner, src_rows, d_idx, n, d_rec, c) ==
                     RT_K_OK);
    RT_TCHECK(t, rt_kcuda_ctx_sync(c) == RT_K_OK);
    RT_TCLOSE_DEV(t, "gpu gather_rows", d_dst, dst, n * dim, 0, 0);
    RT_TCLOSE_DEV(t, "gpu scatter_add_rows", d_acc, acc, src_rows * dim, 1e-5, 1e-5);
    RT_TCHECK(t, rt_tsame_i64(d_comp, comp, n));
    float *rec = rt_talloc((size_t)(n * dim) * 4 + 4);
    RT_TCHECK(t, rt_kcpu_recover(src, src_rows, dim, inner, src_rows, idx, n, rec) == RT_K_OK);
    RT_TCLOSE_DEV(t, "gpu recover", d_rec, rec, n * dim, 0, 0);
    D(d_src), D(d_dst), D(d_acc), D(d_rec), D(d_idx), D(d_inner), D(d_comp);
    free(src), free(dst), free(acc), free(idx), free(inner), free(comp), free(rec);
}

static void check_unique(rt_tctx *t, rt_kcuda_ctx *c, rt_trng *r, int64_t nseg, int64_t range)
{
    int64_t *off = rt_talloc((size_t)(nseg + 1) * 8);
    const int64_t n = rt_toffsets(r, off, nseg, 60, 1);
    int64_t *ids = rt_talloc((size_t)n * 8 + 8), *u = rt_talloc((size_t)n * 8 + 8),
            *inv = rt_talloc((size_t)n * 8 + 8), *uoff = rt_talloc((size_t)(nseg + 1) * 8), nu;
    for (int64_t i = 0; i < n; i++)
        ids[i] = range ? rt_tbelow(r, range) - range / 4 : (int64_t)rt_trand(r);
    int64_t *d_ids = rt_tdev(ids, (size_t)n * 8), *d_off = rt_tdev(off, (size_t)(nseg + 1) * 8);
    int64_t *d_u = rt_tpoisoned((size_t)n * 8), *d_inv = rt_tpoisoned((size_t)n * 8);
    int64_t *d_nu = rt_tpoisoned(8), *d_uoff = rt_tpoisoned((size_t)(nseg + 1) * 8);
    RT_TCHECK(t, rt_kcpu_unique(ids, n, u, inv, &nu) == RT_K_OK);
    RT_TCHECK(t, rt_kcuda_unique(d_ids, n, d_u, d_inv, d_nu, c) == RT_K_OK);
    RT_TCHECK(t, rt_kcuda_ctx_sync(c) == RT_K_OK);
    RT_TCHECK(t, rt_tsame_i64(d_nu, &nu, 1) && rt_tsame_i64(d_u, u, nu));
    RT_TCHECK(t, rt_tsame_i64(d_inv, inv, n));
    /* Segment unique: the CPU and GPU orders are both (segment, ascending ID). */
    RT_TCHECK(t, rt_kcpu_segment_unique(ids, off, nseg, u, uoff, inv) == RT_K_OK);
    cudaMemset(d_u, 0xff, (size_t)n * 8 + 0);
    RT_TCHECK(t, rt_kcuda_segment_unique(d_ids, d_off, nseg, d_u, d_uoff, d_inv, c) == RT_K_OK);
    RT_TCHECK(t, rt_kcuda_ctx_sync(c) == RT_K_OK);
    RT_TCHECK(t, rt_tsame_i64(d_uoff, uoff, nseg + 1));
    RT_TCHECK(t, rt_tsame_i64(d_u, u, uoff[nseg]) && rt_tsame_i64(d_inv, inv, n));
    D(d_ids), D(d_off), D(d_u), D(d_inv), D(d_nu), D(d_uoff);
    free(off), free(ids), free(u), free(inv), free(uoff);
}

static void check_bucketize(rt_tctx *t, rt_kcuda_ctx *c, rt_trng *r, int64_t nseg, int32_t nranks,
                            rt_kbucket_fn fn, int table_wise)
{
    int64_t *off = rt_talloc((size_t)(nseg + 1) * 8);
    const int64_t n = rt_toffsets(r, off, nseg, 40, 1);
    int64_t *ids = rt_talloc((size_t)n * 8 + 8), *out = rt_talloc((size_t)n * 8 + 8),
            *pos = rt_talloc((size_t)n * 8 + 8), *roff = rt_talloc((size_t)(nranks + 1) * 8),
            *cnt = rt_talloc((size_t)(nranks * nseg) * 8 + 8);
    int32_t *seg_rank = rt_talloc((size_t)nseg * 4 + 4);
    for (int64_t i = 0; i < n; i++)
        ids[i] = rt_tbelow(r, INT64_C(1) << 40);
    for (int64_t s = 0; s < nseg; s++)
        seg_rank[s] = (int32_t)rt_tbelow(r, nranks);
    const int32_t *sr = table_wise ? seg_rank : NULL;
    RT_TCHECK(t, rt_kcpu_bucketize(ids, off, nseg, sr, fn, nranks, out, pos, roff, cnt) == RT_K_OK);
    int64_t *d_ids = rt_tdev(ids, (size_t)n * 8), *d_off = rt_tdev(off, (size_t)(nseg + 1) * 8);
    int32_t *d_sr = rt_tdev(seg_rank, (size_t)nseg * 4);
    int64_t *d_out = rt_tpoisoned((size_t)n * 8), *d_pos = rt_tpoisoned((size_t)n * 8);
    int64_t *d_roff = rt_tpoisoned((size_t)(nranks + 1) * 8),
            *d_cnt = rt_tpoisoned((size_t)(nranks * nseg) * 8);
    RT_TCHECK(t, rt_kcuda_bucketize(d_ids, d_off, nseg, table_wise ? d_sr : NULL, fn, nranks, d_out,
                                    d_pos, d_roff, d_cnt, c) == RT_K_OK);
    RT_TCHECK(t, rt_kcuda_ctx_sync(c) == RT_K_OK);
    RT_TCHECK(t, rt_tsame_i64(d_out, out, n) && rt_tsame_i64(d_pos, pos, n));
    RT_TCHECK(t, rt_tsame_i64(d_roff, roff, nranks + 1) && rt_tsame_i64(d_cnt, cnt, nranks * nseg));
    D(d_ids), D(d_off), D(d_sr), D(d_out), D(d_pos), D(d_roff), D(d_cnt);
    free(off), free(ids), free(out), free(pos), free(roff), free(cnt), free(seg_rank);
}

static void check_block_transpose(rt_tctx *t, rt_kcuda_ctx *c, rt_trng *r, int64_t a, int64_t b,
                                  size_t row_bytes)
{
    int64_t *sizes = rt_talloc((size_t)(a * b) * 8), total = 0;
    for (int64_t i = 0; i < a * b; i++)
        total += sizes[i] = rt_tbelow(r, 5);
    unsigned char *in = rt_talloc((size_t)total * row_bytes),
                  *out = rt_talloc((size_t)total * row_bytes);
    for (int64_t i = 0; i < total * (int64_t)row_bytes; i++)
        in[i] = (unsigned char)rt_trand(r);
    RT_TCHECK(t, rt_kcpu_block_transpose(in, row_bytes, a, b, sizes, out) == RT_K_OK);
    void *d_in = rt_tdev(in, (size_t)total * row_bytes),
         *d_out = rt_tpoisoned((size_t)total * row_bytes);
    int64_t *d_sizes = rt_tdev(sizes, (size_t)(a * b) * 8);
    RT_TCHECK(t, rt_kcuda_block_transpose(d_in, row_bytes, a, b, d_sizes, d_out, c) == RT_K_OK);
    RT_TCHECK(t, rt_kcuda_ctx_sync(c) == RT_K_OK);
    unsigned char *got = rt_thost(d_out, (size_t)total * row_bytes);
    RT_TCHECK(t, memcmp(got, out, (size_t)total * row_bytes) == 0);
    D(d_in), D(d_out), D(d_sizes);
    free(sizes), free(in), free(out), free(got);
}

/* The device table against the CPU table: same sizes, same growth, same keyed values, at the
 * default maximum load (MAX_LOAD 0) or another. */
static void check_hash(rt_tctx *t, rt_kcuda_ctx *c, rt_trng *r, double max_load)
{
    const rt_khash_cfg cfg = {8, 16, 4096, 77, 0.25f, max_load};
    rt_khash *h = NULL;
    rt_kcuda_hash *g = NULL;
    RT_TCHECK(t, rt_khash_create(&cfg, &h) == RT_K_OK);
    RT_TCHECK(t, rt_kcuda_hash_create(&cfg, c, &g) == RT_K_OK);
    enum { B = 5000 };
    int64_t *keys = rt_talloc(B * 8), *rows = rt_talloc(B * 8), *probe = rt_talloc(B * 8);
    float *vals = rt_talloc(B * 8 * 4);
    int64_t *d_keys = rt_tdev(NULL, B * 8), *d_rows = rt_tpoisoned(B * 8);
    float *d_vals = rt_tpoisoned(B * 8 * 4);
    for (int round = 0; round < 6; round++) {
        for (int i = 0; i < B; i++)
            keys[i] = (int64_t)(rt_trand(r) % 20000) * 7919 - 1000;
        int64_t n_cpu = 0, n_gpu = -1;
        RT_TCHECK(t, rt_khash_find_or_insert(h, keys, B, rows, &n_cpu) == RT_K_OK);
        cudaMemcpy(d_keys, keys, B * 8, cudaMemcpyHostToDevice);
        RT_TCHECK(t, rt_kcuda_hash_find_or_insert(g, d_keys, B, d_rows, &n_gpu, c) == RT_K_OK);
        RT_TCHECK(t, n_gpu == n_cpu);
        RT_TCHECK(t, rt_kcuda_hash_size(g) == rt_khash_size(h));
        RT_TCHECK(t, rt_kcuda_hash_slots(g) >= rt_khash_slots(h));
        RT_TCHECK(t, (double)rt_kcuda_hash_size(g) <=
                         rt_khash_max_load(&cfg) * (double)rt_kcuda_hash_slots(g));
        /* Probe with a mix of present and absent keys. */
        for (int i = 0; i < B; i++)
            probe[i] = i % 2 ? keys[i] : (int64_t)(rt_trand(r) % 20000) * 7919 + 3;
        RT_TCHECK(t, rt_khash_find(h, probe, B, rows) == RT_K_OK);
        cudaMemcpy(d_keys, probe, B * 8, cudaMemcpyHostToDevice);
        RT_TCHECK(t, rt_kcuda_hash_find(g, d_keys, B, d_rows, c) == RT_K_OK);
        RT_TCHECK(t, rt_kcuda_ctx_sync(c) == RT_K_OK);
        int64_t *grows = rt_thost(d_rows, B * 8);
        int agree = 1;
        for (int i = 0; i < B; i++)
            agree &= (rows[i] < 0) == (grows[i] < 0);
        RT_TCHECK(t, agree);
        free(grows);
        RT_TCHECK(t, rt_khash_gather(h, keys, B, vals) == RT_K_OK);
        cudaMemcpy(d_keys, keys, B * 8, cudaMemcpyHostToDevice);
        RT_TCHECK(t, rt_kcuda_hash_gather(g, d_keys, B, d_vals, c) == RT_K_OK);
        RT_TCHECK(t, rt_kcuda_ctx_sync(c) == RT_K_OK);
        RT_TCLOSE_DEV(t, "gpu hash values", d_vals, vals, B * 8, 0, 0);
    }
    RT_TCHECK(t, rt_kcuda_hash_slots(g) > 16);
    rt_khash_free(h);
    rt_kcuda_hash_free(g);
    D(d_keys), D(d_rows), D(d_vals);
    free(keys), free(rows), free(probe), free(vals);
}

int main(void)
{
    rt_tctx t = {0};
    rt_kcuda_ctx *c = rt_tgpu_or_skip("test_kcuda_sparse");
    rt_trng r = {4242};
    const int64_t shapes[][3] = {{1, 1, 1},        {1, 64, 5},    {7, 3, 11},
                                 {5000, 64, 1000}, {97, 130, 33}, {300, 128, 64}};
    const rt_kdtype dts[] = {RT_KDT_FP32, RT_KDT_FP16, RT_KDT_BF16};
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++)
        for (int d = 0; d < 3; d++)
            for (int p = 0; p < 2; p++)
                check_gather_pool(&t, c, &r, shapes[s][0], shapes[s][1], shapes[s][2], dts[d],
                                  p ? RT_KPOOL_MEAN : RT_KPOOL_SUM);
    const rt_koptim kinds[] = {RT_KOPT_SGD, RT_KOPT_ADAGRAD, RT_KOPT_ROWWISE_ADAGRAD, RT_KOPT_ADAM};
    for (int k = 0; k < 4; k++) {
        check_sparse_update(&t, c, &r, kinds[k], 1, 1, 3, RT_KPOOL_SUM, 0);
        check_sparse_update(&t, c, &r, kinds[k], 50, 33, 40, RT_KPOOL_MEAN, 0);
        check_sparse_update(&t, c, &r, kinds[k], 1000, 64, 2000, RT_KPOOL_SUM, 1);
        check_sparse_update(&t, c, &r, kinds[k], 10, 100, 0, RT_KPOOL_SUM, 0);
    }
    check_rows(&t, c, &r, 1, 1, 1);
    check_rows(&t, c, &r, 37, 17, 300);
    check_unique(&t, c, &r, 1, 3);
    check_unique(&t, c, &r, 26, 50);
    check_unique(&t, c, &r, 100, 0);
    check_unique(&t, c, &r, 7, 1000000);
    check_bucketize(&t, c, &r, 1, 1, RT_KBUCKET_MOD, 0);
    check_bucketize(&t, c, &r, 26, 8, RT_KBUCKET_HASH, 0);
    check_bucketize(&t, c, &r, 26, 7, RT_KBUCKET_MOD, 0);
    check_bucketize(&t, c, &r, 40, 5, RT_KBUCKET_MOD, 1);
    check_block_transpose(&t, c, &r, 1, 1, 4);
    check_block_transpose(&t, c, &r, 4, 8, 256);
    check_block_transpose(&t, c, &r, 7, 3, 6);
    check_hash(&t, c, &r, 0);
    check_hash(&t, c, &r, 0.5);
    rt_kcuda_ctx_free(c);
    return rt_treport(&t, "test_kcuda_sparse");
}
