/* Embedding gather/pool, sequence lookup and row gather/scatter against double references. */
#include "harness.h"
#include "kernels.h"

#include <string.h>

/* A table of random values in storage dtype, with its fp32 view for references. */
typedef struct {
    rt_ktable t;
    float *ref;
} table;

static table make_table(rt_trng *r, int64_t rows, int64_t dim, rt_kdtype dt)
{
    table tb = {{rt_talloc((size_t)(rows * dim) * rt_kdtype_bytes(dt)), rows, dim, dt},
                rt_talloc((size_t)(rows * dim) * sizeof(float))};
    for (int64_t i = 0; i < rows * dim; i++) {
        const float x = rt_tuniform(r, -1.0f, 1.0f);
        if (dt == RT_KDT_FP32) {
            ((float *)tb.t.data)[i] = x;
            tb.ref[i] = x;
        } else if (dt == RT_KDT_FP16) {
            ((uint16_t *)tb.t.data)[i] = rt_kf32_to_f16(x);
            tb.ref[i] = rt_kf16_to_f32(rt_kf32_to_f16(x));
        } else {
            ((uint16_t *)tb.t.data)[i] = rt_kf32_to_bf16(x);
            tb.ref[i] = rt_kbf16_to_f32(rt_kf32_to_bf16(x));
        }
    }
    return tb;
}

static void free_table(table *tb)
{
    free(tb->t.data);
    free(tb->ref);
}

static void check_pool(rt_tctx *t, rt_trng *r, int64_t rows, int64_t dim, int64_t nbags,
                       rt_kdtype dt, rt_kpool pool)
{
    table tb = make_table(r, rows, dim, dt);
    int64_t *off = rt_talloc((size_t)(nbags + 1) * sizeof *off);
    const int64_t n = rt_toffsets(r, off, nbags, 7, 1);
    int64_t *ids = rt_talloc((size_t)n * sizeof *ids);
    /* Draw from a few rows so bags repeat IDs. */
    const int64_t span = rows < 5 ? rows : rows / 2 + 1;
    for (int64_t i = 0; i < n; i++)
        ids[i] = rt_tbelow(r, span);
    float *out = rt_talloc((size_t)(nbags * dim) * sizeof *out);
    double *want = rt_talloc((size_t)(nbags * dim) * sizeof *want);
    for (int64_t i = 0; i < nbags * dim; i++)
        out[i] = NAN;
    for (int64_t b = 0; b < nbags; b++)
        for (int64_t j = 0; j < dim; j++) {
            double s = 0;
            for (int64_t i = off[b]; i < off[b + 1]; i++)
                s += tb.ref[ids[i] * dim + j];
            const int64_t len = off[b + 1] - off[b];
            want[b * dim + j] = pool == RT_KPOOL_MEAN && len ? s / (double)len : s;
        }
    RT_TCHECK(t, rt_kcpu_gather_pool(&tb.t, ids, off, nbags, pool, out) == RT_K_OK);
    RT_TCLOSE(t, "gather_pool", out, want, nbags * dim, 1e-5, 1e-5);

    float *seq = rt_talloc((size_t)(n * dim) * sizeof *seq);
    double *seq_want = rt_talloc((size_t)(n * dim) * sizeof *seq_want);
    for (int64_t i = 0; i < n * dim; i++)
        seq_want[i] = tb.ref[ids[i / dim] * dim + i % dim];
    RT_TCHECK(t, rt_kcpu_sequence_lookup(&tb.t, ids, n, seq) == RT_K_OK);
    RT_TCLOSE(t, "sequence_lookup", seq, seq_want, n * dim, 0, 0);

    if (n > 0) { /* a bad ID is reported and nothing is written */
        const int64_t keep = ids[n - 1];
        ids[n - 1] = rows;
        out[0] = 42.0f;
        RT_TCHECK(t, rt_kcpu_gather_pool(&tb.t, ids, off, nbags, pool, out) == RT_K_ERANGE);
        RT_TCHECK(t, out[0] == 42.0f);
        ids[n - 1] = -1;
        RT_TCHECK(t, rt_kcpu_sequence_lookup(&tb.t, ids, n, seq) == RT_K_ERANGE);
        ids[n - 1] = keep;
    }
    free(seq);
    free(seq_want);
    free(out);
    free(want);
    free(ids);
    free(off);
    free_table(&tb);
}

static void test_hand_example(rt_tctx *t)
{
    float data[3 * 2] = {1, 2, 10, 20, 100, 200};
    rt_ktable tb = {data, 3, 2, RT_KDT_FP32};
    const int64_t ids[] = {0, 2, 2, 1};
    const int64_t off[] = {0, 3, 3, 4}; /* bags {0,2,2}, {}, {1} */
    float out[6];
    RT_TCHECK(t, rt_kcpu_gather_pool(&tb, ids, off, 3, RT_KPOOL_SUM, out) == RT_K_OK);
    const double sum[] = {201, 402, 0, 0, 10, 20};
    RT_TCLOSE(t, "hand sum", out, sum, 6, 0, 0);
    RT_TCHECK(t, rt_kcpu_gather_pool(&tb, ids, off, 3, RT_KPOOL_MEAN, out) == RT_K_OK);
    const double mean[] = {67, 134, 0, 0, 10, 20};
    RT_TCLOSE(t, "hand mean", out, mean, 6, 1e-6, 0);
    const int64_t bad_off[] = {0, 3, 2, 4};
    RT_TCHECK(t, rt_kcpu_gather_pool(&tb, ids, bad_off, 3, RT_KPOOL_SUM, out) == RT_K_EINVAL);
    RT_TCHECK(t, rt_kcpu_gather_pool(&tb, ids, off, 3, (rt_kpool)7, out) == RT_K_EINVAL);
}

static void test_rows(rt_tctx *t, rt_trng *r)
{
    const int64_t src_rows = 13, dim = 5, n = 29;
    float src[13 * 5], dst[29 * 5], acc[13 * 5];
    int64_t idx[29];
    double want[29 * 5], acc_want[13 * 5];
    rt_tfill(r, src, src_rows * dim, -1, 1);
    for (int64_t i = 0; i < n; i++)
        idx[i] = rt_tbelow(r, src_rows);
    for (int64_t i = 0; i < n * dim; i++)
        want[i] = src[idx[i / dim] * dim + i % dim];
    RT_TCHECK(t, rt_kcpu_gather_rows(src, src_rows, dim, idx, n, dst) == RT_K_OK);
    RT_TCLOSE(t, "gather_rows", dst, want, n * dim, 0, 0);
    for (int64_t i = 0; i < src_rows * dim; i++)
        acc[i] = 1.0f, acc_want[i] = 1.0;
    for (int64_t i = 0; i < n * dim; i++)
        acc_want[idx[i / dim] * dim + i % dim] += dst[i];
    RT_TCHECK(t, rt_kcpu_scatter_add_rows(dst, n, dim, idx, src_rows, acc) == RT_K_OK);
    RT_TCLOSE(t, "scatter_add_rows", acc, acc_want, src_rows * dim, 1e-6, 1e-6);
    idx[3] = src_rows;
    RT_TCHECK(t, rt_kcpu_gather_rows(src, src_rows, dim, idx, n, dst) == RT_K_ERANGE);
}

/* Two tables of different widths and dtypes, a pooled segment starting at bag 1 and a row
 * segment starting at ID 1, written into one buffer at chosen places, by hand. */
static void test_segments(rt_tctx *t)
{
    float a[3 * 2] = {1, 2, 10, 20, 100, 200};
    uint16_t b[2 * 3];
    const float bv[6] = {0.5f, 1.5f, 2.5f, -1, -2, -4};
    for (int i = 0; i < 6; i++)
        b[i] = rt_kf32_to_f16(bv[i]);
    const int64_t ida[] = {0, 2, 2, 1}, offa[] = {0, 3, 3, 4}; /* bags {0,2,2}, {}, {1} */
    const int64_t idb[] = {0, 1, 0};
    float out[12];
    for (int i = 0; i < 12; i++)
        out[i] = -9;
    const rt_kgather_seg segs[] = {
        {{a, 3, 2, RT_KDT_FP32}, ida, offa, 1, 2, out},     /* bags 1, 2 -> out[0..4) */
        {{b, 2, 3, RT_KDT_FP16}, idb, NULL, 1, 2, out + 5}, /* rows 1, 0 -> out[5..11) */
        {{a, 3, 2, RT_KDT_FP32}, ida, offa, 0, 0, out + 4}, /* empty: out[4] untouched */
    };
    RT_TCHECK(t, rt_kcpu_gather_segments(segs, 3) == RT_K_OK);
    const double want[] = {0, 0, 10, 20, -9, -1, -2, -4, 0.5, 1.5, 2.5, -9};
    RT_TCLOSE(t, "gather_segments", out, want, 12, 0, 0);
    const int64_t bad[] = {0, 5, 0};
    rt_kgather_seg oob = segs[1];
    oob.ids = bad;
    RT_TCHECK(t, rt_kcpu_gather_segments(&oob, 1) == RT_K_ERANGE);
    RT_TCHECK(t, rt_kcpu_gather_segments(segs, -1) == RT_K_EINVAL);
}

int main(void)
{
    rt_tctx t = {0};
    rt_trng r = {42};
    test_hand_example(&t);
    /* Dims 8..136 in steps the vectorized pooling path tiles differently (8, 16, 24, 40, 64,
     * 72, 136) and others only the portable loop takes (1, 3, 129). */
    const int64_t shapes[][3] = {{1, 1, 1},     {1, 64, 5},    {7, 3, 11},    {1000, 64, 257},
                                 {97, 129, 33}, {53, 8, 9},    {64, 16, 17},  {40, 24, 6},
                                 {33, 40, 12},  {200, 72, 31}, {300, 136, 19}};
    const rt_kdtype dts[] = {RT_KDT_FP32, RT_KDT_FP16, RT_KDT_BF16};
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++)
        for (int d = 0; d < 3; d++) {
            check_pool(&t, &r, shapes[s][0], shapes[s][1], shapes[s][2], dts[d], RT_KPOOL_SUM);
            check_pool(&t, &r, shapes[s][0], shapes[s][1], shapes[s][2], dts[d], RT_KPOOL_MEAN);
        }
    test_rows(&t, &r);
    test_segments(&t);
    return rt_treport(&t, "test_kcpu_embedding");
}
