/* Per-query sampled negatives (TurboGR, seed 002 section 4.3): logits of each query against
 * its own negatives and, with logit sharing, those gathered for the next k - 1 queries, one
 * block of negative rows at a time so an offloaded tensor can be fetched segment by segment;
 * and the softmax cross-entropy over the concatenated logits. */
#include "internal.h"

#include <math.h>

/* Query scoring the negatives of query J with sharing offset T: J - T, wrapped over NQ. */
static int64_t scorer(int64_t j, int64_t t, int64_t nq)
{
    return ((j - t) % nq + nq) % nq;
}

static float dot(const float *a, const float *b, int64_t d)
{
    float s = 0.0f;
    for (int64_t e = 0; e < d; e++)
        s += a[e] * b[e];
    return s;
}

static int bad_args(const float *q, int64_t nq, int64_t d, const float *neg, int64_t first,
                    int64_t rows, int64_t nneg, int64_t k, const float *lg, int64_t ld, int64_t col)
{
    return nq <= 0 || d <= 0 || nneg < 1 || k < 1 || rows < 0 || first < 0 || first + rows > nq ||
           col < 0 || col + k * nneg > ld || !q || !lg || (rows && !neg);
}

rt_kstatus rt_kcpu_neg_logits(const float *q, int64_t nq, int64_t d, const float *neg,
                              int64_t first, int64_t rows, int64_t nneg, int64_t k, float *logits,
                              int64_t ld, int64_t col)
{
    if (bad_args(q, nq, d, neg, first, rows, nneg, k, logits, ld, col)) return RT_K_EINVAL;
    for (int64_t r = 0; r < rows; r++)
        for (int64_t t = 0; t < k; t++) {
            int64_t i = scorer(first + r, t, nq);
            for (int64_t m = 0; m < nneg; m++)
                logits[i * ld + col + t * nneg + m] = dot(q + i * d, neg + (r * nneg + m) * d, d);
        }
    return RT_K_OK;
}

rt_kstatus rt_kcpu_neg_logits_bwd(const float *q, int64_t nq, int64_t d, const float *neg,
                                  int64_t first, int64_t rows, int64_t nneg, int64_t k,
                                  const float *dlogits, int64_t ld, int64_t col, float *dq,
                                  float *dneg)
{
    if (bad_args(q, nq, d, neg, first, rows, nneg, k, dlogits, ld, col) || !dq || (rows && !dneg))
        return RT_K_EINVAL;
    for (int64_t r = 0; r < rows; r++) {
        float *dn = dneg + r * nneg * d;
        for (int64_t e = 0; e < nneg * d; e++)
            dn[e] = 0.0f;
        for (int64_t t = 0; t < k; t++) {
            int64_t i = scorer(first + r, t, nq);
            for (int64_t m = 0; m < nneg; m++) {
                const float g = dlogits[i * ld + col + t * nneg + m];
                const float *n = neg + (r * nneg + m) * d;
                for (int64_t e = 0; e < d; e++) {
                    dn[m * d + e] += g * q[i * d + e];
                    dq[i * d + e] += g * n[e];
                }
            }
        }
    }
    return RT_K_OK;
}

rt_kstatus rt_kcpu_softmax_xent(float *logits, int64_t rows, int64_t cols, float scale, float *loss)
{
    if (rows <= 0 || cols < 1 || !logits || !loss) return RT_K_EINVAL;
    double total = 0.0;
    for (int64_t b = 0; b < rows; b++) {
        float *row = logits + b * cols;
        float mx = row[0];
        for (int64_t c = 1; c < cols; c++)
            mx = fmaxf(mx, row[c]);
        double z = 0.0;
        for (int64_t c = 0; c < cols; c++)
            z += exp((double)(row[c] - mx));
        total += (double)mx + log(z) - (double)row[0];
        for (int64_t c = 0; c < cols; c++)
            row[c] = (float)(exp((double)(row[c] - mx)) / z) * scale;
        row[0] -= scale;
    }
    *loss = (float)(total / (double)rows);
    return RT_K_OK;
}
