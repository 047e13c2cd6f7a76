/* Unique, segment unique, two-stage dedup and FusedRec recovery. */
#include "harness.h"
#include "kernels.h"

#include <string.h>

/* Properties of a correct unique: strictly ascending output, inverse maps back to the input,
 * and every output value occurs in the input. */
static void check_unique_props(rt_tctx *t, const int64_t *ids, int64_t n, const int64_t *uniq,
                               int64_t nu, const int64_t *inv)
{
    int ok = 1;
    for (int64_t i = 1; i < nu; i++)
        ok &= uniq[i - 1] < uniq[i];
    for (int64_t i = 0; i < n; i++)
        ok &= inv[i] >= 0 && inv[i] < nu && uniq[inv[i]] == ids[i];
    char *used = calloc((size_t)nu + 1, 1);
    for (int64_t i = 0; i < n; i++)
        used[inv[i]] = 1;
    for (int64_t i = 0; i < nu; i++)
        ok &= used[i];
    free(used);
    RT_TCHECK(t, ok);
}

static void test_unique_hand(rt_tctx *t)
{
    const int64_t ids[] = {5, -3, 5, 7, -3, 5, INT64_MAX, INT64_MIN};
    int64_t uniq[8], inv[8], nu = -1;
    RT_TCHECK(t, rt_kcpu_unique(ids, 8, uniq, inv, &nu) == RT_K_OK);
    const int64_t want_u[] = {INT64_MIN, -3, 5, 7, INT64_MAX};
    const int64_t want_i[] = {2, 1, 2, 3, 1, 2, 4, 0};
    RT_TCHECK(t, nu == 5 && memcmp(uniq, want_u, sizeof want_u) == 0);
    RT_TCHECK(t, memcmp(inv, want_i, sizeof want_i) == 0);
    RT_TCHECK(t, rt_kcpu_unique(ids, 0, uniq, inv, &nu) == RT_K_OK && nu == 0);
}

static void test_unique_random(rt_tctx *t, rt_trng *r, int64_t n, int64_t range)
{
    int64_t *ids = rt_talloc((size_t)n * 8), *uniq = rt_talloc((size_t)n * 8),
            *inv = rt_talloc((size_t)n * 8);
    for (int64_t i = 0; i < n; i++)
        ids[i] = range ? rt_tbelow(r, range) - range / 3 : (int64_t)rt_trand(r);
    int64_t nu = -1;
    RT_TCHECK(t, rt_kcpu_unique(ids, n, uniq, inv, &nu) == RT_K_OK);
    check_unique_props(t, ids, n, uniq, nu, inv);
    free(ids), free(uniq), free(inv);
}

static void test_segment_unique_hand(rt_tctx *t)
{
    /* features a: {0, 2, 0}, b: {}, c: {0, 2, 2, 1}: equal IDs of a and c stay apart. */
    const int64_t ids[] = {0, 2, 0, 0, 2, 2, 1};
    const int64_t off[] = {0, 3, 3, 7};
    int64_t uniq[7], uoff[4], inv[7];
    RT_TCHECK(t, rt_kcpu_segment_unique(ids, off, 3, uniq, uoff, inv) == RT_K_OK);
    const int64_t want_u[] = {0, 2, 0, 1, 2}, want_off[] = {0, 2, 2, 5};
    const int64_t want_i[] = {0, 1, 0, 2, 4, 4, 3};
    RT_TCHECK(t, memcmp(uniq, want_u, sizeof want_u) == 0);
    RT_TCHECK(t, memcmp(uoff, want_off, sizeof want_off) == 0);
    RT_TCHECK(t, memcmp(inv, want_i, sizeof want_i) == 0);
}

static void test_segment_unique_random(rt_tctx *t, rt_trng *r, int64_t nseg, int64_t range)
{
    int64_t *off = rt_talloc((size_t)(nseg + 1) * 8);
    const int64_t n = rt_toffsets(r, off, nseg, 40, 1);
    int64_t *ids = rt_talloc((size_t)n * 8), *uniq = rt_talloc((size_t)n * 8),
            *inv = rt_talloc((size_t)n * 8), *uoff = rt_talloc((size_t)(nseg + 1) * 8);
    for (int64_t i = 0; i < n; i++)
        ids[i] = rt_tbelow(r, range);
    RT_TCHECK(t, rt_kcpu_segment_unique(ids, off, nseg, uniq, uoff, inv) == RT_K_OK);
    int ok = uoff[0] == 0;
    for (int64_t s = 0; s < nseg; s++) {
        /* Each segment alone must be a correct unique whose inverse stays in the segment. */
        ok &= uoff[s + 1] >= uoff[s];
        for (int64_t i = off[s]; i < off[s + 1]; i++)
            ok &= inv[i] >= uoff[s] && inv[i] < uoff[s + 1];
        int64_t *local = rt_talloc((size_t)(off[s + 1] - off[s] + 1) * 8);
        for (int64_t i = off[s]; i < off[s + 1]; i++)
            local[i - off[s]] = inv[i] - uoff[s];
        check_unique_props(t, ids + off[s], off[s + 1] - off[s], uniq + uoff[s],
                           uoff[s + 1] - uoff[s], local);
        free(local);
    }
    RT_TCHECK(t, ok);
    free(off), free(ids), free(uniq), free(inv), free(uoff);
}

/* Two-stage dedup (MTGRBoost) over two simulated ranks that both send to one owner: stage 1
 * dedups each sender's IDs, stage 2 dedups the concatenation the owner receives, and the
 * composed inverses route every original ID to its looked-up row. */
static void test_two_stage(rt_tctx *t, rt_trng *r)
{
    enum { N = 300, DIM = 3 };
    int64_t ids[2][N], u1[2][N], inv1[2][N], nu1[2];
    for (int k = 0; k < 2; k++) {
        for (int i = 0; i < N; i++)
            ids[k][i] = rt_tbelow(r, 80);
        RT_TCHECK(t, rt_kcpu_unique(ids[k], N, u1[k], inv1[k], &nu1[k]) == RT_K_OK);
    }
    int64_t recv[2 * N], u2[2 * N], inv2[2 * N], nu2;
    memcpy(recv, u1[0], (size_t)nu1[0] * 8);
    memcpy(recv + nu1[0], u1[1], (size_t)nu1[1] * 8);
    const int64_t nrecv = nu1[0] + nu1[1];
    RT_TCHECK(t, rt_kcpu_unique(recv, nrecv, u2, inv2, &nu2) == RT_K_OK);
    RT_TCHECK(t, nu2 <= 80 && nu2 < nrecv);
    /* Owner: one row per distinct ID, value = 10 * id + column. */
    float rows[80 * DIM], back[2 * N * DIM], out[N * DIM];
    for (int64_t i = 0; i < nu2; i++)
        for (int j = 0; j < DIM; j++)
            rows[i * DIM + j] = (float)(10 * u2[i] + j);
    RT_TCHECK(t, rt_kcpu_gather_rows(rows, nu2, DIM, inv2, nrecv, back) == RT_K_OK);
    for (int k = 0; k < 2; k++) {
        const float *mine = back + (k ? nu1[0] * DIM : 0);
        RT_TCHECK(t, rt_kcpu_gather_rows(mine, nu1[k], DIM, inv1[k], N, out) == RT_K_OK);
        int ok = 1;
        for (int i = 0; i < N; i++)
            for (int j = 0; j < DIM; j++)
                ok &= out[i * DIM + j] == (float)(10 * ids[k][i] + j);
        RT_TCHECK(t, ok);
        /* The same through one composed index (stage-1 inverse, then the offset stage-2). */
        int64_t shifted[N], composed[N];
        for (int64_t i = 0; i < nu1[k]; i++)
            shifted[i] = inv2[(k ? nu1[0] : 0) + i];
        RT_TCHECK(t, rt_kcpu_compose_index(inv1[k], N, shifted, nu1[k], composed) == RT_K_OK);
        ok = 1;
        for (int i = 0; i < N; i++)
            ok &= u2[composed[i]] == ids[k][i];
        RT_TCHECK(t, ok);
    }
    const int64_t bad[] = {0, 5};
    int64_t o[2];
    RT_TCHECK(t, rt_kcpu_compose_index(bad, 2, inv2, 5, o) == RT_K_ERANGE);
}

/* FusedRec flow on one rank: segment unique, bucketize the unique IDs, pretend the owners
 * return row = f(feature, id) in bucketed order, recover through I_s and I_u. */
static void test_recover(rt_tctx *t, rt_trng *r)
{
    enum { NSEG = 4, DIM = 2, NRANKS = 3 };
    int64_t off[NSEG + 1];
    const int64_t n = rt_toffsets(r, off, NSEG, 30, 1);
    int64_t ids[NSEG * 30], uniq[NSEG * 30], uoff[NSEG + 1], i_u[NSEG * 30];
    for (int64_t i = 0; i < n; i++)
        ids[i] = rt_tbelow(r, 12);
    RT_TCHECK(t, rt_kcpu_segment_unique(ids, off, NSEG, uniq, uoff, i_u) == RT_K_OK);
    const int64_t nu = uoff[NSEG];
    int64_t sorted[NSEG * 30], i_s[NSEG * 30], roff[NRANKS + 1];
    RT_TCHECK(t, rt_kcpu_bucketize(uniq, uoff, NSEG, NULL, RT_KBUCKET_HASH, NRANKS, sorted, i_s,
                                   roff, NULL) == RT_K_OK);
    /* Segment of each bucketed element, to build the owner's answer. */
    int64_t seg_of[NSEG * 30];
    for (int64_t s = 0; s < NSEG; s++)
        for (int64_t i = uoff[s]; i < uoff[s + 1]; i++)
            seg_of[i_s[i]] = s;
    float recv[NSEG * 30 * DIM], out[NSEG * 30 * DIM];
    for (int64_t j = 0; j < nu; j++)
        for (int e = 0; e < DIM; e++)
            recv[j * DIM + e] = (float)(100 * seg_of[j] + sorted[j] + e * 0.5);
    RT_TCHECK(t, rt_kcpu_recover(recv, nu, DIM, i_s, nu, i_u, n, out) == RT_K_OK);
    int ok = 1;
    for (int64_t s = 0; s < NSEG; s++)
        for (int64_t i = off[s]; i < off[s + 1]; i++)
            for (int e = 0; e < DIM; e++)
                ok &= out[i * DIM + e] == (float)(100 * s + ids[i] + e * 0.5);
    RT_TCHECK(t, ok);
}

static void test_merge_ids(rt_tctx *t)
{
    RT_TCHECK(t, rt_kmerge_bits(1) == 1);
    RT_TCHECK(t, rt_kmerge_bits(3) == 2);
    RT_TCHECK(t, rt_kmerge_bits(4) == 3);
    RT_TCHECK(t, rt_kmerge_bits(7) == 3);
    const int64_t ids[] = {0, 5, (INT64_C(1) << 61) - 1};
    int64_t out[3];
    RT_TCHECK(t, rt_kmerge_encode(ids, 3, 3, 2, out) == RT_K_OK);
    RT_TCHECK(t, out[1] == ((INT64_C(3) << 61) | 5));
    RT_TCHECK(t, rt_kmerge_table(out[2], 2) == 3 && rt_kmerge_local(out[2], 2) == ids[2]);
    const int64_t too_big[] = {INT64_C(1) << 61};
    RT_TCHECK(t, rt_kmerge_encode(too_big, 1, 1, 2, out) == RT_K_ERANGE);
    RT_TCHECK(t, rt_kmerge_encode(ids, 3, 4, 2, out) == RT_K_ERANGE);
}

int main(void)
{
    rt_tctx t = {0};
    rt_trng r = {99};
    test_unique_hand(&t);
    const int64_t sizes[][2] = {{1, 5}, {2, 1}, {1000, 17}, {4097, 100000}, {5000, 0}};
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++)
        test_unique_random(&t, &r, sizes[i][0], sizes[i][1]);
    test_segment_unique_hand(&t);
    test_segment_unique_random(&t, &r, 1, 5);
    test_segment_unique_random(&t, &r, 26, 30);
    test_segment_unique_random(&t, &r, 7, 1000000);
    test_two_stage(&t, &r);
    for (int i = 0; i < 5; i++)
        test_recover(&t, &r);
    test_merge_ids(&t);
    return rt_treport(&t, "test_kcpu_unique");
}
