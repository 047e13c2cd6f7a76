/* Bucketize by destination rank, and the SPTT peer permute and shuffle. */
#include "harness.h"
#include "kernels.h"

#include <string.h>

static void test_bucketize_hand(rt_tctx *t)
{
    /* Row-wise modulo over 3 ranks: segment 0 {4, 3, 7}, segment 1 {2, 5, 6}. */
    const int64_t ids[] = {4, 3, 7, 2, 5, 6}, off[] = {0, 3, 6};
    int64_t out[6], pos[6], roff[4], counts[6];
    RT_TCHECK(t, rt_kcpu_bucketize(ids, off, 2, NULL, RT_KBUCKET_MOD, 3, out, pos, roff, counts) ==
                     RT_K_OK);
    const int64_t want_out[] = {3, 6, 4, 7, 2, 5}, want_pos[] = {2, 0, 3, 4, 5, 1};
    const int64_t want_roff[] = {0, 2, 4, 6}, want_counts[] = {1, 1, 2, 0, 0, 2};
    RT_TCHECK(t, memcmp(out, want_out, sizeof out) == 0);
    RT_TCHECK(t, memcmp(pos, want_pos, sizeof pos) == 0);
    RT_TCHECK(t, memcmp(roff, want_roff, sizeof roff) == 0);
    RT_TCHECK(t, memcmp(counts, want_counts, sizeof counts) == 0);
    /* Table-wise: segment 0 to rank 2, segment 1 to rank 0. */
    const int32_t seg_rank[] = {2, 0};
    RT_TCHECK(t, rt_kcpu_bucketize(ids, off, 2, seg_rank, RT_KBUCKET_MOD, 3, out, pos, roff,
                                   NULL) == RT_K_OK);
    const int64_t tw_out[] = {2, 5, 6, 4, 3, 7}, tw_roff[] = {0, 3, 3, 6};
    RT_TCHECK(t, memcmp(out, tw_out, sizeof out) == 0 && memcmp(roff, tw_roff, sizeof roff) == 0);
    const int32_t bad_rank[] = {3, 0};
    RT_TCHECK(t, rt_kcpu_bucketize(ids, off, 2, bad_rank, RT_KBUCKET_MOD, 3, out, pos, roff,
                                   NULL) == RT_K_ERANGE);
    const int64_t neg[] = {4, -3, 7, 2, 5, 6};
    RT_TCHECK(t, rt_kcpu_bucketize(neg, off, 2, NULL, RT_KBUCKET_MOD, 3, out, pos, roff, NULL) ==
                     RT_K_ERANGE);
}

static void test_bucketize_random(rt_tctx *t, rt_trng *r, int64_t nseg, int32_t nranks,
                                  rt_kbucket_fn fn, int table_wise)
{
    int64_t *off = rt_talloc((size_t)(nseg + 1) * 8);
    const int64_t n = rt_toffsets(r, off, nseg, 50, 1);
    int64_t *ids = rt_talloc((size_t)n * 8), *out = rt_talloc((size_t)n * 8),
            *pos = rt_talloc((size_t)n * 8), *roff = rt_talloc((size_t)(nranks + 1) * 8),
            *counts = rt_talloc((size_t)(nranks * nseg) * 8);
    int32_t *seg_rank = rt_talloc((size_t)nseg * 4);
    for (int64_t s = 0; s < nseg; s++)
        seg_rank[s] = (int32_t)rt_tbelow(r, nranks);
    for (int64_t i = 0; i < n; i++)
        ids[i] = rt_tbelow(r, 1000000);
    RT_TCHECK(t, rt_kcpu_bucketize(ids, off, nseg, table_wise ? seg_rank : NULL, fn, nranks, out,
                                   pos, roff, counts) == RT_K_OK);
    int ok = roff[0] == 0 && roff[nranks] == n;
    char *seen = calloc((size_t)n + 1, 1);
    for (int64_t s = 0; s < nseg; s++)
        for (int64_t i = off[s]; i < off[s + 1]; i++) {
            const int64_t want_rank =
                table_wise ? seg_rank[s]
                           : (int64_t)((fn == RT_KBUCKET_HASH ? rt_kmix64((uint64_t)ids[i])
                                                              : (uint64_t)ids[i]) %
                                       (uint64_t)nranks);
            ok &= pos[i] >= roff[want_rank] && pos[i] < roff[want_rank + 1];
            ok &= out[pos[i]] == ids[i] && !seen[pos[i]];
            seen[pos[i]] = 1;
            /* Stability: later inputs of a rank land later. */
            for (int64_t j = i + 1; j < off[nseg] && j < i + 4; j++)
                if (out[pos[j]] == ids[j] && pos[j] >= roff[want_rank] &&
                    pos[j] < roff[want_rank + 1])
                    ok &= pos[j] > pos[i];
        }
    for (int32_t k = 0; k < nranks; k++) {
        int64_t sum = 0;
        for (int64_t s = 0; s < nseg; s++)
            sum += counts[k * nseg + s];
        ok &= sum == roff[k + 1] - roff[k];
    }
    RT_TCHECK(t, ok);
    free(seen), free(off), free(ids), free(out), free(pos), free(roff), free(counts),
        free(seg_rank);
}

static void test_sptt(rt_tctx *t)
{
    /* 2 hosts x 3 GPUs, rank r sends r + 1 rows whose value is 10 r + row. */
    const int64_t rows[] = {1, 2, 3, 4, 5, 6};
    int32_t in[21], out[21];
    int at = 0;
    for (int r = 0; r < 6; r++)
        for (int i = 0; i < rows[r]; i++)
            in[at++] = 10 * r + i;
    RT_TCHECK(t, rt_kcpu_sptt_peer_permute(in, sizeof(int32_t), 2, 3, rows, out) == RT_K_OK);
    /* Order by (local, host): ranks 0, 3, 1, 4, 2, 5. */
    const int32_t want[] = {0,  30, 31, 32, 33, 10, 11, 40, 41, 42, 43,
                            44, 20, 21, 22, 50, 51, 52, 53, 54, 55};
    RT_TCHECK(t, memcmp(out, want, sizeof want) == 0);
    /* Shuffle (features, peers) -> (peers, features) with 2-wide rows and an empty block. */
    const int64_t blocks[] = {1, 0, 2, 1, 1, 1}; /* f0: p0 1, p1 0; f1: 2, 1; f2: 1, 1 */
    const int16_t src[] = {1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6};
    int16_t dst[12];
    RT_TCHECK(t, rt_kcpu_sptt_shuffle(src, 2 * sizeof(int16_t), 3, 2, blocks, dst) == RT_K_OK);
    /* src blocks: (0,0)={1}, (1,0)={2,3}, (1,1)={4}, (2,0)={5}, (2,1)={6}. */
    const int16_t want_dst[] = {1, 1, 2, 2, 3, 3, 5, 5, 4, 4, 6, 6};
    RT_TCHECK(t, memcmp(dst, want_dst, sizeof dst) == 0);
    const int64_t neg[] = {1, -1, 2, 1, 1, 1};
    RT_TCHECK(t, rt_kcpu_sptt_shuffle(src, 4, 3, 2, neg, dst) == RT_K_EINVAL);
}

/* Shuffle then the opposite shuffle restores the input, for random block sizes. */
static void test_block_transpose_inverse(rt_tctx *t, rt_trng *r, int64_t a, int64_t b)
{
    int64_t *sizes = rt_talloc((size_t)(a * b) * 8), *tsizes = rt_talloc((size_t)(a * b) * 8);
    int64_t total = 0;
    for (int64_t i = 0; i < a * b; i++)
        total += sizes[i] = rt_tbelow(r, 4);
    for (int64_t i = 0; i < a; i++)
        for (int64_t j = 0; j < b; j++)
            tsizes[j * a + i] = sizes[i * b + j];
    float *x = rt_talloc((size_t)total * 12), *y = rt_talloc((size_t)total * 12),
          *z = rt_talloc((size_t)total * 12);
    rt_tfill(r, x, total * 3, -1, 1);
    RT_TCHECK(t, rt_kcpu_block_transpose(x, 12, a, b, sizes, y) == RT_K_OK);
    RT_TCHECK(t, rt_kcpu_block_transpose(y, 12, b, a, tsizes, z) == RT_K_OK);
    RT_TCHECK(t, memcmp(x, z, (size_t)total * 12) == 0);
    free(sizes), free(tsizes), free(x), free(y), free(z);
}

int main(void)
{
    rt_tctx t = {0};
    rt_trng r = {5};
    test_bucketize_hand(&t);
    const int64_t cases[][2] = {{1, 1}, {3, 2}, {26, 8}, {5, 7}, {40, 64}};
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        test_bucketize_random(&t, &r, cases[c][0], (int32_t)cases[c][1], RT_KBUCKET_MOD, 0);
        test_bucketize_random(&t, &r, cases[c][0], (int32_t)cases[c][1], RT_KBUCKET_HASH, 0);
        test_bucketize_random(&t, &r, cases[c][0], (int32_t)cases[c][1], RT_KBUCKET_MOD, 1);
    }
    test_sptt(&t);
    test_block_transpose_inverse(&t, &r, 1, 1);
    test_block_transpose_inverse(&t, &r, 4, 8);
    test_block_transpose_inverse(&t, &r, 7, 3);
    return rt_treport(&t, "test_kcpu_routing");
}
