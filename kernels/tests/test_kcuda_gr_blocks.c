/* GPU kernels of the generative-recommender blocks (SiLU, elementwise product, layer norm, row
 * softmax, MMoE mix, FuXi's positional attention) against their CPU references on random
 * inputs, outputs poisoned first so an element the GPU forgot is caught. Exits 77 without a
 * GPU. */
#include "cuda_harness.h"

#define D(x) cudaFree((void *)(x))

static float *random_host(rt_trng *r, int64_t n, float lo, float hi)
{
    float *x = rt_talloc((size_t)n * 4 + 4);
    rt_tfill(r, x, n, lo, hi);
    return x;
}

static float *dev_of(const float *h, int64_t n)
{
    return rt_tdev(h, (size_t)n * 4);
}

static float *poisoned(int64_t n)
{
    return rt_tpoisoned((size_t)n * 4);
}

static void check_elementwise(rt_tctx *t, rt_kcuda_ctx *c, rt_trng *r, int64_t n)
{
    float *a = random_host(r, n, -5, 5), *b = random_host(r, n, -2, 2),
          *dy = random_host(r, n, -1, 1);
    float *y = rt_talloc((size_t)n * 4 + 4), *da = rt_talloc((size_t)n * 4 + 4),
          *db = rt_talloc((size_t)n * 4 + 4);
    float *d_a = dev_of(a, n), *d_b = dev_of(b, n), *d_dy = dev_of(dy, n), *d_y = poisoned(n),
          *d_da = poisoned(n), *d_db = poisoned(n);

    RT_TCHECK(t, rt_kcpu_silu_fwd(a, n, y) == RT_K_OK);
    RT_TCHECK(t, rt_kcuda_silu_fwd(d_a, n, d_y, c) == RT_K_OK);
    RT_TCHECK(t, rt_kcuda_ctx_sync(c) == RT_K_OK);
    RT_TCLOSE_DEV(t, "gpu silu", d_y, y, n, 1e-5, 1e-6);
    RT_TCHECK(t, rt_kcpu_silu_bwd(a, dy, n, da) == RT_K_OK);
    RT_TCHECK(t, rt_kcuda_silu_bwd(d_a, d_dy, n, d_da, c) == RT_K_OK);
    RT_TCHECK(t, rt_kcuda_ctx_sync(c) == RT_K_OK);
    RT_TCLOSE_DEV(t, "gpu silu backward", d_da, da, n, 1e-5, 1e-6);

    RT_TCHECK(t, rt_kcpu_mul_fwd(a, b, n, y) == RT_K_OK);
    RT_TCHECK(t, rt_kcuda_mul_fwd(d_a, d_b, n, d_y, c) == RT_K_OK);
    RT_TCHECK(t, rt_kcuda_ctx_sync(c) == RT_K_OK);
    RT_TCLOSE_DEV(t, "gpu mul", d_y, y, n, 1e-6, 1e-7);
    RT_TCHECK(t, rt_kcpu_mul_bwd(a, b, dy, n, da, db) == RT_K_OK);
    RT_TCHECK(t, rt_kcuda_mul_bwd(d_a, d_b, d_dy, n, d_da, d_db, c) == RT_K_OK);
    RT_TCHECK(t, rt_kcuda_ctx_sync(c) == RT_K_OK);
    RT_TCLOSE_DEV(t, "gpu mul backward a", d_da, da, n, 1e-6, 1e-7);
    RT_TCLOSE_DEV(t, "gpu mul backward b", d_db, db, n, 1e-6, 1e-7);
    /* In place, as the dense net runs it: da overwrites dy. */
    RT_TCHECK(t, rt_kcuda_mul_bwd(d_a, d_b, d_dy, n, d_dy, d_db, c) == RT_K_OK);
    RT_TCHECK(t, rt_kcuda_ctx_sync(c) == RT_K_OK);
    RT_TCLOSE_DEV(t, "gpu mul backward in place", d_dy, da, n, 1e-6, 1e-7);
    free(a), free(b), free(dy), free(y), free(da), free(db);
    D(d_a), D(d_b), D(d_dy), D(d_y), D(d_da), D(d_db);
}

static void check_rows(rt_tctx *t, rt_kcuda_ctx *c, rt_trng *r, int64_t rows, int64_t dim)
{
    const int64_t n = rows * dim;
    float *x = random_host(r, n, -3, 5), *dy = random_host(r, n, -1, 1);
    float *y = rt_talloc((size_t)n * 4 + 4), *dx = rt_talloc((size_t)n * 4 + 4),
          *st = rt_talloc((size_t)rows * 8 + 8);
    float *d_x = dev_of(x, n), *d_dy = dev_of(dy, n), *d_y = poisoned(n), *d_dx = poisoned(n),
          *d_st = poisoned(2 * rows);

    RT_TCHECK(t, rt_kcpu_layernorm_fwd(x, rows, dim, 1e-5f, y, st, st + rows) == RT_K_OK);
    RT_TCHECK(t,
              rt_kcuda_layernorm_fwd(d_x, rows, dim, 1e-5f, d_y, d_st, d_st + rows, c) == RT_K_OK);
    RT_TCHECK(t, rt_kcuda_ctx_sync(c) == RT_K_OK);
    RT_TCLOSE_DEV(t, "gpu layernorm", d_y, y, n, 1e-4, 1e-5);
    RT_TCLOSE_DEV(t, "gpu layernorm statistics", d_st, st, 2 * rows, 1e-4, 1e-5);
    RT_TCHECK(t, rt_kcpu_layernorm_bwd(x, dy, rows, dim, st, st + rows, dx) == RT_K_OK);
    RT_TCHECK(t,
              rt_kcuda_layernorm_bwd(d_x, d_dy, rows, dim, d_st, d_st + rows, d_dx, c) == RT_K_OK);
    RT_TCHECK(t, rt_kcuda_ctx_sync(c) == RT_K_OK);
    RT_TCLOSE_DEV(t, "gpu layernorm backward", d_dx, dx, n, 1e-4, 1e-5);

    RT_TCHECK(t, rt_kcpu_softmax_fwd(x, rows, dim, y) == RT_K_OK);
    RT_TCHECK(t, rt_kcuda_softmax_fwd(d_x, rows, dim, d_y, c) == RT_K_OK);
    RT_TCHECK(t, rt_kcuda_ctx_sync(c) == RT_K_OK);
    RT_TCLOSE_DEV(t, "gpu softmax", d_y, y, n, 1e-5, 1e-7);
    RT_TCHECK(t, rt_kcpu_softmax_bwd(y, dy, rows, dim, dx) == RT_K_OK);
    RT_TCHECK(t, rt_kcuda_softmax_bwd(d_y, d_dy, rows, dim, d_dx, c) == RT_K_OK);
    RT_TCHECK(t, rt_kcuda_ctx_sync(c) == RT_K_OK);
    RT_TCLOSE_DEV(t, "gpu softmax backward", d_dx, dx, n, 1e-4, 1e-6);
    free(x), free(dy), free(y), free(dx), free(st);
    D(d_x), D(d_dy), D(d_y), D(d_dx), D(d_st);
}

static void check_mix(rt_tctx *t, rt_kcuda_ctx *c, rt_trng *r, int64_t rows, int64_t nexp,
                      int64_t dim)
{
    const int64_t nx = nexp * rows * dim, ng = rows * nexp, ny = rows * dim;
    float *x = random_host(r, nx, -1, 1), *g = random_host(r, ng, 0, 1),
          *dy = random_host(r, ny, -1, 1);
    float *y = rt_talloc((size_t)ny * 4 + 4), *dx = rt_talloc((size_t)nx * 4 + 4),
          *dg = rt_talloc((size_t)ng * 4 + 4);
    float *d_x = dev_of(x, nx), *d_g = dev_of(g, ng), *d_dy = dev_of(dy, ny), *d_y = poisoned(ny),
          *d_dx = poisoned(nx), *d_dg = poisoned(ng);
    RT_TCHECK(t, rt_kcpu_mix_fwd(x, g, rows, nexp, dim, y) == RT_K_OK);
    RT_TCHECK(t, rt_kcuda_mix_fwd(d_x, d_g, rows, nexp, dim, d_y, c) == RT_K_OK);
    RT_TCHECK(t, rt_kcpu_mix_bwd(x, g, dy, rows, nexp, dim, dx, dg) == RT_K_OK);
    RT_TCHECK(t, rt_kcuda_mix_bwd(d_x, d_g, d_dy, rows, nexp, dim, d_dx, d_dg, c) == RT_K_OK);
    RT_TCHECK(t, rt_kcuda_ctx_sync(c) == RT_K_OK);
    RT_TCLOSE_DEV(t, "gpu mix", d_y, y, ny, 1e-5, 1e-6);
    RT_TCLOSE_DEV(t, "gpu mix backward x", d_dx, dx, nx, 1e-6, 1e-7);
    RT_TCLOSE_DEV(t, "gpu mix backward gates", d_dg, dg, ng, 1e-4, 1e-5);
    free(x), free(g), free(dy), free(y), free(dx), free(dg);
    D(d_x), D(d_g), D(d_dy), D(d_y), D(d_dx), D(d_dg);
}

/* Jagged batches with empty sequences and lengths past nbias (the clamped last bucket). */
static void check_relpos(rt_tctx *t, rt_kcuda_ctx *c, rt_trng *r, int64_t nseq, int64_t heads,
                         int64_t hd, int64_t nbias, int64_t max_len)
{
    int64_t *off = rt_talloc((size_t)(nseq + 1) * 8);
    const int64_t N = rt_toffsets(r, off, nseq, max_len, 1), S = heads * hd, nv = N * S,
                  nb = heads * nbias;
    const rt_khstu_cfg cfg = {heads, hd, nbias, 0.0f, 1.0f / (float)max_len};
    float *v = random_host(r, nv, -1, 1), *rab = random_host(r, nb, -2, 2),
          *dout = random_host(r, nv, -1, 1);
    float *out = rt_talloc((size_t)nv * 4 + 4), *dv = rt_talloc((size_t)nv * 4 + 4),
          *drab = rt_talloc((size_t)nb * 4 + 4);
    int64_t *d_off = rt_tdev(off, (size_t)(nseq + 1) * 8);
    float *d_v = dev_of(v, nv), *d_rab = dev_of(rab, nb), *d_dout = dev_of(dout, nv),
          *d_out = poisoned(nv), *d_dv = poisoned(nv), *d_drab = poisoned(nb);
    RT_TCHECK(t, rt_kcpu_relpos_attn_fwd(v, off, nseq, &cfg, rab, out) == RT_K_OK);
    RT_TCHECK(t, rt_kcuda_relpos_attn_fwd(d_v, d_off, nseq, &cfg, d_rab, d_out, c) == RT_K_OK);
    RT_TCHECK(t, rt_kcpu_relpos_attn_bwd(v, off, nseq, &cfg, rab, dout, dv, drab) == RT_K_OK);
    RT_TCHECK(t, rt_kcuda_relpos_attn_bwd(d_v, d_off, nseq, &cfg, d_rab, d_dout, d_dv, d_drab, c) ==
                     RT_K_OK);
    RT_TCHECK(t, rt_kcuda_ctx_sync(c) == RT_K_OK);
    RT_TCLOSE_DEV(t, "gpu relpos attention", d_out, out, nv, 1e-4, 1e-5);
    RT_TCLOSE_DEV(t, "gpu relpos attention dv", d_dv, dv, nv, 1e-4, 1e-5);
    /* The bias gradient sums many pairs in another order (and atomically). */
    RT_TCLOSE_DEV(t, "gpu relpos attention drab", d_drab, drab, nb, 1e-3, 1e-4);
    free(off), free(v), free(rab), free(dout), free(out), free(dv), free(drab);
    D(d_off), D(d_v), D(d_rab), D(d_dout), D(d_out), D(d_dv), D(d_drab);
}

static void check_invalid(rt_tctx *t, rt_kcuda_ctx *c)
{
    float *d = rt_tdev(NULL, 64);
    int64_t off[] = {0, 2}, *d_off = rt_tdev(off, sizeof off);
    const rt_khstu_cfg cfg = {1, 2, 2, 0.0f, 1.0f}, wide = {1, 257, 2, 0.0f, 1.0f};
    RT_TCHECK(t, rt_kcuda_silu_fwd(d, 4, d, NULL) == RT_K_EINVAL);
    RT_TCHECK(t, rt_kcuda_silu_fwd(NULL, 4, d, c) == RT_K_EINVAL);
    RT_TCHECK(t, rt_kcuda_silu_fwd(NULL, 0, NULL, c) == RT_K_OK);
    RT_TCHECK(t, rt_kcuda_mul_bwd(d, d, d, 4, d, NULL, c) == RT_K_EINVAL);
    RT_TCHECK(t, rt_kcuda_layernorm_fwd(d, 2, 2, 0.0f, d, d, d, c) == RT_K_EINVAL);
    RT_TCHECK(t, rt_kcuda_layernorm_bwd(d, d, 2, 0, d, d, d, c) == RT_K_EINVAL);
    RT_TCHECK(t, rt_kcuda_softmax_fwd(d, -1, 2, d, c) == RT_K_EINVAL);
    RT_TCHECK(t, rt_kcuda_mix_fwd(d, d, 1, 0, 1, d, c) == RT_K_EINVAL);
    RT_TCHECK(t, rt_kcuda_relpos_attn_fwd(d, d_off, 1, &cfg, NULL, d, c) == RT_K_EINVAL);
    RT_TCHECK(t, rt_kcuda_relpos_attn_fwd(d, d_off, 1, &wide, d, d, c) == RT_K_EINVAL);
    RT_TCHECK(t, rt_kcuda_ctx_sync(c) == RT_K_OK);
    D(d), D(d_off);
}

int main(void)
{
    rt_tctx t = {0};
    rt_kcuda_ctx *c = rt_tgpu_or_skip("test_kcuda_gr_blocks");
    rt_trng r = {77};
    const int64_t sizes[] = {0, 1, 33, 100003};
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++)
        check_elementwise(&t, c, &r, sizes[i]);
    check_rows(&t, c, &r, 1, 1);
    check_rows(&t, c, &r, 37, 7);
    check_rows(&t, c, &r, 513, 128);
    check_rows(&t, c, &r, 9, 1000);
    check_mix(&t, c, &r, 1, 1, 1);
    check_mix(&t, c, &r, 77, 4, 33);
    check_relpos(&t, c, &r, 1, 1, 1, 1, 3);
    check_relpos(&t, c, &r, 9, 2, 16, 5, 12);
    check_relpos(&t, c, &r, 17, 8, 40, 64, 40);
    check_relpos(&t, c, &r, 3, 2, 256, 100, 150);
    check_invalid(&t, c);
    rt_kcuda_ctx_free(c);
    return rt_treport(&t, "test_kcuda_gr_blocks");
}
