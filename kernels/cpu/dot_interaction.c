/* DLRM pairwise dot interaction of the dense vector and the pooled embeddings. */
#include "internal.h"

/* Independent partial sums per dot product. One running sum is a chain of dependent float
 * adds, which no compiler may reorder; DOT_LANES of them vectorize. At DLRM's shape on a Zen 4
 * guest the forward went from 4.00-4.06 to 15.97-16.12 GFLOP/s
 * (experiments/measurements/cpu/interaction/probe.log). */
enum { DOT_LANES = 16 };

/* Columns of one gradient row held in a local tile while every other vector is added into
 * it: 32 floats are 8 SSE registers, so the tile stays in registers on baseline x86-64. */
enum { GRAD_TILE = 32 };

static float dot(const float *restrict a, const float *restrict b, int64_t d)
{
    float lane[DOT_LANES] = {0.0f};
    int64_t e = 0;
    for (; e + DOT_LANES <= d; e += DOT_LANES)
        for (int l = 0; l < DOT_LANES; l++)
            lane[l] += a[e + l] * b[e + l];
    for (int half = DOT_LANES / 2; half > 0; half /= 2)
        for (int l = 0; l < half; l++)
            lane[l] += lane[l + half];
    float s = lane[0];
    for (; e < d; e++)
        s += a[e] * b[e];
    return s;
}

rt_kstatus rt_kcpu_dot_interact_fwd(const float *t, int64_t batch, int64_t nf, int64_t d,
                                    float *out)
{
    if (batch < 0 || nf < 2 || d <= 0 || (batch > 0 && (!t || !out))) return RT_K_EINVAL;
    const int64_t npairs = nf * (nf - 1) / 2;
    for (int64_t b = 0; b < batch; b++) {
        const float *tb = t + b * nf * d;
        float *ob = out + b * npairs;
        for (int64_t i = 1; i < nf; i++)
            for (int64_t j = 0; j < i; j++)
                *ob++ = dot(tb + i * d, tb + j * d, d);
    }
    return RT_K_OK;
}

/* Index of the pair {i, j}, i != j, in the forward's output order (row i > j, j ascending). */
static inline int64_t pair_index(int64_t i, int64_t j)
{
    return i > j ? i * (i - 1) / 2 + j : j * (j - 1) / 2 + i;
}

/* Columns [e0, e0 + GRAD_TILE) of dt_k = sum over j != k, ascending, of g(k, j) t_j. The tile
 * is only ever indexed by constants, so it lives in registers. */
static void grad_row_tile(const float *restrict tb, const float *restrict g, int64_t nf, int64_t d,
                          int64_t k, int64_t e0, float *restrict dst)
{
    float acc[GRAD_TILE] = {0.0f};
    for (int64_t j = 0; j < nf; j++) {
        if (j == k) continue;
        const float gp = g[pair_index(k, j)];
        const float *restrict tj = tb + j * d + e0;
        for (int l = 0; l < GRAD_TILE; l++)
            acc[l] += gp * tj[l];
    }
    for (int l = 0; l < GRAD_TILE; l++)
        dst[l] = acc[l];
}

/* The same for the last w < GRAD_TILE columns, one column at a time. */
static void grad_row_tail(const float *restrict tb, const float *restrict g, int64_t nf, int64_t d,
                          int64_t k, int64_t e0, int64_t w, float *restrict dst)
{
    for (int64_t l = 0; l < w; l++) {
        float s = 0.0f;
        for (int64_t j = 0; j < nf; j++)
            if (j != k) s += g[pair_index(k, j)] * tb[j * d + e0 + l];
        dst[l] = s;
    }
}

/* Each gradient row is accumulated in registers and written once. The pairwise form (zero the
 * whole gradient, then add each pair's term into both of its rows) read and wrote two rows per
 * pair, and its rate moved with where its buffers landed: over fresh processes on a Zen 4 guest,
 * 11.14-22.71 GFLOP/s at DLRM's shape against 23.95-24.95 for this form
 * (experiments/measurements/cpu/interaction/probe.log). Every row still adds its terms in the
 * order j = 0, 1, ..., so the gradient is the same floats. */
rt_kstatus rt_kcpu_dot_interact_bwd(const float *t, const float *dout, int64_t batch, int64_t nf,
                                    int64_t d, float *dt)
{
    if (batch < 0 || nf < 2 || d <= 0 || (batch > 0 && (!t || !dout || !dt))) return RT_K_EINVAL;
    const int64_t npairs = nf * (nf - 1) / 2;
    for (int64_t b = 0; b < batch; b++) {
        const float *tb = t + b * nf * d;
        const float *g = dout + b * npairs;
        float *db = dt + b * nf * d;
        for (int64_t k = 0; k < nf; k++) {
            int64_t e0 = 0;
            for (; e0 + GRAD_TILE <= d; e0 += GRAD_TILE)
                grad_row_tile(tb, g, nf, d, k, e0, db + k * d + e0);
            grad_row_tail(tb, g, nf, d, k, e0, d - e0, db + k * d + e0);
        }
    }
    return RT_K_OK;
}
