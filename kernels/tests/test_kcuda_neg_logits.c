/* GPU per-query negatives (logits, their backward, softmax cross-entropy) against the CPU
 * kernels on random inputs, with logit sharing that wraps around the queries, and the device's
 * segmented calls against one call, bit for bit. Exits 77 without a GPU. */
#include "cuda_harness.h"

#include <string.h>

#define D(x) cudaFree((void *)(x))

typedef struct {
    int64_t nq, nneg, k, d, seg;
} shape;

/* Loss, dq, dpos and dneg of one shape through SEG-query segments; returns the device loss. */
static float device_run(rt_tctx *t, rt_kcuda_ctx *c, shape s, int64_t seg, const float *q,
                        const float *p, const float *n, float *lg, float *loss, float *dq,
                        float *dp, float *dn)
{
    const int64_t ld = 1 + s.k * s.nneg;
    RT_TCHECK(t, rt_kcuda_neg_logits(q, s.nq, s.d, p, 0, s.nq, 1, 1, lg, ld, 0, c) == RT_K_OK);
    for (int64_t f = 0; f < s.nq; f += seg) {
        int64_t rows = s.nq - f < seg ? s.nq - f : seg;
        RT_TCHECK(t, rt_kcuda_neg_logits(q, s.nq, s.d, n + f * s.nneg * s.d, f, rows, s.nneg, s.k,
                                         lg, ld, 1, c) == RT_K_OK);
    }
    RT_TCHECK(t, rt_kcuda_softmax_xent(lg, s.nq, ld, 0.5f, loss, c) == RT_K_OK);
    RT_TCHECK(t, cudaMemset(dq, 0, sizeof(float) * (size_t)(s.nq * s.d)) == cudaSuccess);
    RT_TCHECK(t, rt_kcuda_neg_logits_bwd(q, s.nq, s.d, p, 0, s.nq, 1, 1, lg, ld, 0, dq, dp, c) ==
                     RT_K_OK);
    for (int64_t f = 0; f < s.nq; f += seg) {
        int64_t rows = s.nq - f < seg ? s.nq - f : seg;
        RT_TCHECK(t,
                  rt_kcuda_neg_logits_bwd(q, s.nq, s.d, n + f * s.nneg * s.d, f, rows, s.nneg, s.k,
                                          lg, ld, 1, dq, dn + f * s.nneg * s.d, c) == RT_K_OK);
    }
    RT_TCHECK(t, rt_kcuda_ctx_sync(c) == RT_K_OK);
    float v = 0;
    cudaMemcpy(&v, loss, sizeof v, cudaMemcpyDeviceToHost);
    return v;
}

static void check_shape(rt_tctx *t, rt_kcuda_ctx *c, rt_trng *r, shape s)
{
    const int64_t nd = s.nq * s.d, nn = s.nq * s.nneg * s.d, ld = 1 + s.k * s.nneg;
    float *q = rt_talloc((size_t)nd * 4), *p = rt_talloc((size_t)nd * 4);
    float *n = rt_talloc((size_t)nn * 4), *lg = rt_talloc((size_t)(s.nq * ld) * 4);
    float *dq = rt_talloc((size_t)nd * 4), *dp = rt_talloc((size_t)nd * 4);
    float *dn = rt_talloc((size_t)nn * 4), loss = 0;
    rt_tfill(r, q, nd, -1, 1), rt_tfill(r, p, nd, -1, 1), rt_tfill(r, n, nn, -1, 1);
    memset(dq, 0, (size_t)nd * 4);
    RT_TCHECK(t, rt_kcpu_neg_logits(q, s.nq, s.d, p, 0, s.nq, 1, 1, lg, ld, 0) == RT_K_OK);
    RT_TCHECK(t, rt_kcpu_neg_logits(q, s.nq, s.d, n, 0, s.nq, s.nneg, s.k, lg, ld, 1) == RT_K_OK);
    RT_TCHECK(t, rt_kcpu_softmax_xent(lg, s.nq, ld, 0.5f, &loss) == RT_K_OK);
    RT_TCHECK(t,
              rt_kcpu_neg_logits_bwd(q, s.nq, s.d, p, 0, s.nq, 1, 1, lg, ld, 0, dq, dp) == RT_K_OK);
    RT_TCHECK(t, rt_kcpu_neg_logits_bwd(q, s.nq, s.d, n, 0, s.nq, s.nneg, s.k, lg, ld, 1, dq, dn) ==
                     RT_K_OK);
    float *d_q = rt_tdev(q, (size_t)nd * 4), *d_p = rt_tdev(p, (size_t)nd * 4);
    float *d_n = rt_tdev(n, (size_t)nn * 4), *d_lg = rt_tpoisoned((size_t)(s.nq * ld) * 4);
    float *d_loss = rt_tpoisoned(4), *d_dq = rt_tpoisoned((size_t)nd * 4);
    float *d_dp = rt_tpoisoned((size_t)nd * 4), *d_dn = rt_tpoisoned((size_t)nn * 4);
    float l1 = device_run(t, c, s, s.nq, d_q, d_p, d_n, d_lg, d_loss, d_dq, d_dp, d_dn);
    RT_TCHECK(t, fabsf(l1 - loss) <= 1e-5f * fabsf(loss));
    RT_TCLOSE_DEV(t, "gpu dlogits", d_lg, lg, s.nq * ld, 1e-4, 1e-6);
    RT_TCLOSE_DEV(t, "gpu dq", d_dq, dq, nd, 1e-4, 1e-5);
    RT_TCLOSE_DEV(t, "gpu dpos", d_dp, dp, nd, 1e-4, 1e-5);
    RT_TCLOSE_DEV(t, "gpu dneg", d_dn, dn, nn, 1e-4, 1e-5);
    /* Segments: the same bits on the device. */
    float *h_dq = rt_thost(d_dq, (size_t)nd * 4), *h_dn = rt_thost(d_dn, (size_t)nn * 4);
    float l2 = device_run(t, c, s, s.seg, d_q, d_p, d_n, d_lg, d_loss, d_dq, d_dp, d_dn);
    float *s_dq = rt_thost(d_dq, (size_t)nd * 4), *s_dn = rt_thost(d_dn, (size_t)nn * 4);
    RT_TCHECK(t, l1 == l2 && !memcmp(h_dq, s_dq, (size_t)nd * 4) &&
                     !memcmp(h_dn, s_dn, (size_t)nn * 4));
    free(q), free(p), free(n), free(lg), free(dq), free(dp), free(dn);
    free(h_dq), free(h_dn), free(s_dq), free(s_dn);
    D(d_q), D(d_p), D(d_n), D(d_lg), D(d_loss), D(d_dq), D(d_dp), D(d_dn);
}

int main(void)
{
    rt_tctx t = {0};
    rt_kcuda_ctx *c = rt_tgpu_or_skip("test_kcuda_neg_logits");
    rt_trng r = {77};
    const shape shapes[] = {
        {3, 2, 2, 4, 1}, {37, 8, 3, 64, 5}, {200, 16, 4, 96, 64}, {5, 3, 7, 8, 2}};
    for (size_t i = 0; i < sizeof shapes / sizeof *shapes; i++)
        check_shape(&t, c, &r, shapes[i]);
    rt_kcuda_ctx_free(c);
    return rt_treport(&t, "test_kcuda_neg_logits");
}
