/* GPU dense kernels, HSTU attention and losses against the CPU reference kernels on fresh
 * random inputs, with every output poisoned first. Exits 77 without a GPU. */
#include "cuda_harness.h"

#define D(x) cudaFree((void *)(x))

/* A random host array and its device copy. */
typedef struct {
    float *h;
    float *d;
    int64_t n;
} pair;

static pair make(rt_trng *r, int64_t n, float lo, float hi)
{
    pair p = {rt_talloc((size_t)n * 4 + 4), NULL, n};
    rt_tfill(r, p.h, n, lo, hi);
    p.d = rt_tdev(p.h, (size_t)n * 4);
    return p;
}

static void drop(pair *p)
{
    free(p->h);
    D(p->d);
}

static void check_gemm(rt_tctx *t, rt_kcuda_ctx *c, rt_trng *r, int64_t m, int64_t n, int64_t k,
                       int ta, int tb)
{
    const int64_t lda = (ta ? m : k) + 1, ldb = (tb ? k : n) + 2, ldc = n + 3;
    pair a = make(r, (ta ? k : m) * lda, -1, 1), b = make(r, (tb ? n : k) * ldb, -1, 1),
         cm = make(r, m * ldc, -1, 1);
    RT_TCHECK(t,
              rt_kcpu_gemm(ta, tb, m, n, k, 0.5f, a.h, lda, b.h, ldb, 2.0f, cm.h, ldc) == RT_K_OK);
    RT_TCHECK(t, rt_kcuda_gemm(ta, tb, m, n, k, 0.5f, a.d, lda, b.d, ldb, 2.0f, cm.d, ldc, c) ==
                     RT_K_OK);
    RT_TCHECK(t, rt_kcuda_ctx_sync(c) == RT_K_OK);
    RT_TCLOSE_DEV(t, "gpu gemm", cm.d, cm.h, m * ldc, 1e-4, 1e-4);
    drop(&a), drop(&b), drop(&cm);
}

static void check_linear(rt_tctx *t, rt_kcuda_ctx *c, rt_trng *r, int64_t batch, int64_t in,
                         int64_t out, rt_kact act)
{
    pair x = make(r, batch * in, -1, 1), w = make(r, out * in, -1, 1), bias = make(r, out, -1, 1),
         dy = make(r, batch * out, -1, 1);
    float *y = rt_talloc((size_t)(batch * out) * 4 + 4),
          *dx = rt_talloc((size_t)(batch * in) * 4 + 4), *dw = rt_talloc((size_t)(out * in) * 4),
          *db = rt_talloc((size_t)out * 4);
    float *d_y = rt_tpoisoned((size_t)(batch * out) * 4),
          *d_dx = rt_tpoisoned((size_t)(batch * in) * 4),
          *d_dw = rt_tpoisoned((size_t)(out * in) * 4), *d_db = rt_tpoisoned((size_t)out * 4);
    RT_TCHECK(t, rt_kcpu_linear_fwd(x.h, batch, in, out, w.h, bias.h, act, y) == RT_K_OK);
    RT_TCHECK(t, rt_kcpu_linear_bwd(x.h, y, dy.h, batch, in, out, w.h, act, dx, dw, db) == RT_K_OK);
    RT_TCHECK(t, rt_kcuda_linear_fwd(x.d, batch, in, out, w.d, bias.d, act, d_y, c) == RT_K_OK);
    RT_TCHECK(t, rt_kcuda_linear_bwd(x.d, d_y, dy.d, batch, in, out, w.d, act, d_dx, d_dw, d_db,
                                     c) == RT_K_OK);
    RT_TCHECK(t, rt_kcuda_ctx_sync(c) == RT_K_OK);
    RT_TCLOSE_DEV(t, "gpu linear y", d_y, y, batch * out, 1e-4, 1e-4);
    RT_TCLOSE_DEV(t, "gpu linear dx", d_dx, dx, batch * in, 1e-3, 1e-4);
    RT_TCLOSE_DEV(t, "gpu linear dw", d_dw, dw, out * in, 1e-3, 1e-4);
    RT_TCLOSE_DEV(t, "gpu linear db", d_db, db, out, 1e-3, 1e-4);
    drop(&x), drop(&w), drop(&bias), drop(&dy);
    free(y), free(dx), free(dw), free(db), D(d_y), D(d_dx), D(d_dw), D(d_db);
}

static void check_dot(rt_tctx *t, rt_kcuda_ctx *c, rt_trng *r, int64_t batch, int64_t nf, int64_t d)
{
    const int64_t np = nf * (nf - 1) / 2;
    pair x = make(r, batch * nf * d, -1, 1), g = make(r, batch * np, -1, 1);
    float *out = rt_talloc((size_t)(batch * np) * 4), *dx = rt_talloc((size_t)(batch * nf * d) * 4);
    float *d_out = rt_tpoisoned((size_t)(batch * np) * 4),
          *d_dx = rt_tpoisoned((size_t)(batch * nf * d) * 4);
    RT_TCHECK(t, rt_kcpu_dot_interact_fwd(x.h, batch, nf, d, out) == RT_K_OK);
    RT_TCHECK(t, rt_kcpu_dot_interact_bwd(x.h, g.h, batch, nf, d, dx) == RT_K_OK);
    RT_TCHECK(t, rt_kcuda_dot_interact_fwd(x.d, batch, nf, d, d_out, c) == RT_K_OK);
    RT_TCHECK(t, rt_kcuda_dot_interact_bwd(x.d, g.d, batch, nf, d, d_dx, c) == RT_K_OK);
    RT_TCHECK(t, rt_kcuda_ctx_sync(c) == RT_K_OK);
    RT_TCLOSE_DEV(t, "gpu dot fwd", d_out, out, batch * np, 1e-4, 1e-5);
    RT_TCLOSE_DEV(t, "gpu dot bwd", d_dx, dx, batch * nf * d, 1e-4, 1e-5);
    drop(&x), drop(&g), free(out), free(dx), D(d_out), D(d_dx);
}

static void check_dcn(rt_tctx *t, rt_kcuda_ctx *c, rt_trng *r, int64_t B, int64_t Dm, int64_t R)
{
    pair x0 = make(r, B * Dm, -1, 1), xl = make(r, B * Dm, -1, 1), u = make(r, Dm * R, -1, 1),
         v = make(r, Dm * R, -1, 1), bias = make(r, Dm, -1, 1), dy = make(r, B * Dm, -1, 1);
    const size_t bd = (size_t)(B * Dm) * 4, br = (size_t)(B * R) * 4, dr = (size_t)(Dm * R) * 4;
    float *p = rt_talloc(br), *q = rt_talloc(bd), *y = rt_talloc(bd), *dx0 = rt_talloc(bd),
          *dxl = rt_talloc(bd), *du = rt_talloc(dr), *dv = rt_talloc(dr),
          *db = rt_talloc((size_t)Dm * 4);
    float *d_p = rt_tpoisoned(br), *d_q = rt_tpoisoned(bd), *d_y = rt_tpoisoned(bd),
          *d_dx0 = rt_tpoisoned(bd), *d_dxl = rt_tpoisoned(bd), *d_du = rt_tpoisoned(dr),
          *d_dv = rt_tpoisoned(dr), *d_db = rt_tpoisoned((size_t)Dm * 4);
    RT_TCHECK(t, rt_kcpu_dcn_cross_fwd(x0.h, xl.h, B, Dm, R, u.h, v.h, bias.h, p, q, y) == RT_K_OK);
    RT_TCHECK(t, rt_kcpu_dcn_cross_bwd(x0.h, xl.h, p, q, dy.h, B, Dm, R, u.h, v.h, dx0, dxl, du, dv,
                                       db) == RT_K_OK);
    RT_TCHECK(t, rt_kcuda_dcn_cross_fwd(x0.d, xl.d, B, Dm, R, u.d, v.d, bias.d, d_p, d_q, d_y, c) ==
                     RT_K_OK);
    RT_TCHECK(t, rt_kcuda_dcn_cross_bwd(x0.d, xl.d, d_p, d_q, dy.d, B, Dm, R, u.d, v.d, d_dx0,
                                        d_dxl, d_du, d_dv, d_db, c) == RT_K_OK);
    RT_TCHECK(t, rt_kcuda_ctx_sync(c) == RT_K_OK);
    RT_TCLOSE_DEV(t, "gpu dcn y", d_y, y, B * Dm, 1e-4, 1e-4);
    RT_TCLOSE_DEV(t, "gpu dcn dx0", d_dx0, dx0, B * Dm, 1e-4, 1e-4);
    RT_TCLOSE_DEV(t, "gpu dcn dxl", d_dxl, dxl, B * Dm, 1e-3, 1e-4);
    RT_TCLOSE_DEV(t, "gpu dcn du", d_du, du, Dm * R, 1e-3, 1e-4);
    RT_TCLOSE_DEV(t, "gpu dcn dv", d_dv, dv, Dm * R, 1e-3, 1e-4);
    RT_TCLOSE_DEV(t, "gpu dcn dbias", d_db, db, Dm, 1e-3, 1e-4);
    drop(&x0), drop(&xl), drop(&u), drop(&v), drop(&bias), drop(&dy);
    free(p), free(q), free(y), free(dx0), free(dxl), free(du), free(dv), free(db);
    D(d_p), D(d_q), D(d_y), D(d_dx0), D(d_dxl), D(d_du), D(d_dv), D(d_db);
}

static void check_jagged_hstu(rt_tctx *t, rt_kcuda_ctx *c, rt_trng *r, int64_t nseq, int64_t heads,
                              int64_t hd, int64_t nbias, int64_t max_len)
{
    int64_t *off = rt_talloc((size_t)(nseq + 1) * 8);
    const int64_t N = rt_toffsets(r, off, nseq, max_len + 4, 1), S = heads * hd;
    int64_t *d_off = rt_tdev(off, (size_t)(nseq + 1) * 8);
    pair q = make(r, N * S, -1, 1), k = make(r, N * S, -1, 1), v = make(r, N * S, -1, 1),
         rab = make(r, heads * nbias, -1, 1), dout = make(r, N * S, -1, 1);
    const size_t ns = (size_t)(N * S) * 4 + 4, hb = (size_t)(heads * nbias) * 4;
    float *out = rt_talloc(ns), *dq = rt_talloc(ns), *dk = rt_talloc(ns), *dv = rt_talloc(ns),
          *drab = rt_talloc(hb);
    float *d_out = rt_tpoisoned(ns), *d_dq = rt_tpoisoned(ns), *d_dk = rt_tpoisoned(ns),
          *d_dv = rt_tpoisoned(ns), *d_drab = rt_tpoisoned(hb);
    const rt_khstu_cfg cfg = {heads, hd, nbias, 0.3f, 1.0f / (float)(max_len + 4)};
    RT_TCHECK(t, rt_kcpu_hstu_attn_fwd(q.h, k.h, v.h, off, nseq, &cfg, rab.h, out) == RT_K_OK);
    RT_TCHECK(t, rt_kcpu_hstu_attn_bwd(q.h, k.h, v.h, off, nseq, &cfg, rab.h, dout.h, dq, dk, dv,
                                       drab) == RT_K_OK);
    RT_TCHECK(t,
              rt_kcuda_hstu_attn_fwd(q.d, k.d, v.d, d_off, nseq, &cfg, rab.d, d_out, c) == RT_K_OK);
    RT_TCHECK(t, rt_kcuda_hstu_attn_bwd(q.d, k.d, v.d, d_off, nseq, &cfg, rab.d, dout.d, d_dq, d_dk,
                                        d_dv, d_drab, c) == RT_K_OK);
    RT_TCHECK(t, rt_kcuda_ctx_sync(c) == RT_K_OK);
    RT_TCLOSE_DEV(t, "gpu hstu out", d_out, out, N * S, 1e-4, 1e-5);
    RT_TCLOSE_DEV(t, "gpu hstu dq", d_dq, dq, N * S, 1e-3, 1e-5);
    RT_TCLOSE_DEV(t, "gpu hstu dk", d_dk, dk, N * S, 1e-3, 1e-5);
    RT_TCLOSE_DEV(t, "gpu hstu dv", d_dv, dv, N * S, 1e-3, 1e-5);
    RT_TCLOSE_DEV(t, "gpu hstu drab", d_drab, drab, heads * nbias, 1e-3, 1e-4);
    /* Jagged <-> dense on the same offsets, rows of S floats. */
    const size_t dn = (size_t)(nseq * max_len * S) * 4 + 4;
    float *dense = rt_talloc(dn), *back = rt_talloc(ns);
    float *d_dense = rt_tpoisoned(dn), *d_back = rt_tpoisoned(ns);
    RT_TCHECK(t, rt_kcpu_jagged_to_dense(q.h, off, nseq, S, max_len, -1.5f, dense) == RT_K_OK);
    RT_TCHECK(t, rt_kcpu_dense_to_jagged(dense, off, nseq, S, max_len, back) == RT_K_OK);
    RT_TCHECK(t,
              rt_kcuda_jagged_to_dense(q.d, d_off, nseq, S, max_len, -1.5f, d_dense, c) == RT_K_OK);
    RT_TCHECK(t, rt_kcuda_dense_to_jagged(d_dense, d_off, nseq, S, max_len, d_back, c) == RT_K_OK);
    RT_TCHECK(t, rt_kcuda_ctx_sync(c) == RT_K_OK);
    RT_TCLOSE_DEV(t, "gpu jagged_to_dense", d_dense, dense, nseq * max_len * S, 0, 0);
    RT_TCLOSE_DEV(t, "gpu dense_to_jagged", d_back, back, N * S, 0, 0);
    drop(&q), drop(&k), drop(&v), drop(&rab), drop(&dout);
    free(off), free(out), free(dq), free(dk), free(dv), free(drab), free(dense), free(back);
    D(d_off), D(d_out), D(d_dq), D(d_dk), D(d_dv), D(d_drab), D(d_dense), D(d_back);
}

static void check_losses(rt_tctx *t, rt_kcuda_ctx *c, rt_trng *r, int64_t B, int64_t K, int64_t Dm)
{
    pair z = make(r, B, -6, 6), y = make(r, B, 0, 1);
    float loss, *dz = rt_talloc((size_t)B * 4), *d_loss = rt_tpoisoned(4),
                *d_dz = rt_tpoisoned((size_t)B * 4);
    RT_TCHECK(t, rt_kcpu_bce_logits(z.h, y.h, B, &loss, dz) == RT_K_OK);
    RT_TCHECK(t, rt_kcuda_bce_logits(z.d, y.d, B, d_loss, d_dz, c) == RT_K_OK);
    RT_TCHECK(t, rt_kcuda_ctx_sync(c) == RT_K_OK);
    RT_TCLOSE_DEV(t, "gpu bce loss", d_loss, &loss, 1, 1e-5, 1e-6);
    RT_TCLOSE_DEV(t, "gpu bce grad", d_dz, dz, B, 1e-5, 1e-7);
    pair q = make(r, B * Dm, -1, 1), pos = make(r, B * Dm, -1, 1), neg = make(r, K * Dm, -1, 1),
         logq = make(r, K, -4, 0);
    const size_t bd = (size_t)(B * Dm) * 4, kd = (size_t)(K * Dm) * 4 + 4;
    float *dq = rt_talloc(bd), *dpos = rt_talloc(bd), *dneg = rt_talloc(kd);
    float *d_dq = rt_tpoisoned(bd), *d_dpos = rt_tpoisoned(bd), *d_dneg = rt_tpoisoned(kd);
    RT_TCHECK(t, rt_kcpu_sampled_softmax(q.h, pos.h, neg.h, logq.h, B, K, Dm, 0.2f, &loss, dq, dpos,
                                         dneg) == RT_K_OK);
    RT_TCHECK(t, rt_kcuda_sampled_softmax(q.d, pos.d, neg.d, logq.d, B, K, Dm, 0.2f, d_loss, d_dq,
                                          d_dpos, d_dneg, c) == RT_K_OK);
    RT_TCHECK(t, rt_kcuda_ctx_sync(c) == RT_K_OK);
    RT_TCLOSE_DEV(t, "gpu sampled softmax loss", d_loss, &loss, 1, 1e-4, 1e-5);
    RT_TCLOSE_DEV(t, "gpu sampled softmax dq", d_dq, dq, B * Dm, 1e-3, 1e-6);
    RT_TCLOSE_DEV(t, "gpu sampled softmax dpos", d_dpos, dpos, B * Dm, 1e-3, 1e-6);
    RT_TCLOSE_DEV(t, "gpu sampled softmax dneg", d_dneg, dneg, K * Dm, 1e-3, 1e-6);
    drop(&z), drop(&y), drop(&q), drop(&pos), drop(&neg), drop(&logq);
    free(dz), free(dq), free(dpos), free(dneg);
    D(d_loss), D(d_dz), D(d_dq), D(d_dpos), D(d_dneg);
}

int main(void)
{
    rt_tctx t = {0};
    rt_kcuda_ctx *c = rt_tgpu_or_skip("test_kcuda_dense");
    rt_trng r = {777};
    const int64_t g[][3] = {{1, 1, 1}, {3, 5, 7}, {65, 33, 17}, {128, 256, 64}, {4, 4, 0}};
    for (size_t i = 0; i < sizeof g / sizeof g[0]; i++)
        for (int ta = 0; ta < 2; ta++)
            for (int tb = 0; tb < 2; tb++)
                check_gemm(&t, c, &r, g[i][0], g[i][1], g[i][2], ta, tb);
    const rt_kact acts[] = {RT_KACT_NONE, RT_KACT_RELU, RT_KACT_SIGMOID};
    for (int a = 0; a < 3; a++) {
        check_linear(&t, c, &r, 1, 1, 1, acts[a]);
        check_linear(&t, c, &r, 300, 129, 65, acts[a]);
    }
    check_dot(&t, c, &r, 1, 2, 1);
    check_dot(&t, c, &r, 64, 27, 16);
    check_dcn(&t, c, &r, 1, 1, 1);
    check_dcn(&t, c, &r, 100, 37, 8);
    check_jagged_hstu(&t, c, &r, 1, 1, 1, 1, 1);
    check_jagged_hstu(&t, c, &r, 9, 2, 33, 5, 7);
    check_jagged_hstu(&t, c, &r, 20, 4, 64, 16, 30);
    check_losses(&t, c, &r, 1, 0, 1);
    check_losses(&t, c, &r, 200, 37, 24);
    rt_kcuda_ctx_free(c);
    return rt_treport(&t, "test_kcuda_dense");
}
