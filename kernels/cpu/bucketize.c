/* Routing of a jagged ID batch to destination ranks by a stable counting sort. */
#include "internal.h"

static int64_t dest_rank(int64_t id, int64_t seg, const int32_t *seg_rank, rt_kbucket_fn fn,
                         int32_t nranks)
{
    if (seg_rank) return seg_rank[seg];
    const uint64_t key = fn == RT_KBUCKET_HASH ? rt_kmix64((uint64_t)id) : (uint64_t)id;
    return (int64_t)(key % (uint64_t)nranks);
}

static rt_kstatus check_routes(const int64_t *ids, const int64_t *offsets, int64_t nseg,
                               const int32_t *seg_rank, int32_t nranks)
{
    if (seg_rank) {
        for (int64_t s = 0; s < nseg; s++)
            if (seg_rank[s] < 0 || seg_rank[s] >= nranks) return RT_K_ERANGE;
        return RT_K_OK;
    }
    for (int64_t i = 0; i < offsets[nseg]; i++)
        if (ids[i] < 0) return RT_K_ERANGE;
    return RT_K_OK;
}

rt_kstatus rt_kcpu_bucketize(const int64_t *ids, const int64_t *offsets, int64_t nseg,
                             const int32_t *seg_rank, rt_kbucket_fn fn, int32_t nranks,
                             int64_t *out_ids, int64_t *pos, int64_t *rank_offsets,
                             int64_t *rank_seg_counts)
{
    int64_t n;
    if (nranks <= 0 || !rt_kcpu_offsets_ok(offsets, nseg, &n) || !rank_offsets ||
        (fn != RT_KBUCKET_MOD && fn != RT_KBUCKET_HASH) || (n > 0 && (!ids || !out_ids || !pos)))
        return RT_K_EINVAL;
    const rt_kstatus st = check_routes(ids, offsets, nseg, seg_rank, nranks);
    if (st != RT_K_OK) return st;
    for (int32_t r = 0; r <= nranks; r++)
        rank_offsets[r] = 0;
    if (rank_seg_counts)
        memset(rank_seg_counts, 0, (size_t)nranks * (size_t)nseg * sizeof *rank_seg_counts);
    for (int64_t s = 0; s < nseg; s++)
        for (int64_t i = offsets[s]; i < offsets[s + 1]; i++) {
            const int64_t r = dest_rank(ids[i], s, seg_rank, fn, nranks);
            rank_offsets[r + 1]++;
            if (rank_seg_counts) rank_seg_counts[r * nseg + s]++;
        }
    for (int32_t r = 0; r < nranks; r++)
        rank_offsets[r + 1] += rank_offsets[r];
    /* rank_offsets[r] doubles as rank r's fill cursor, then is restored from the next one. */
    for (int64_t s = 0; s < nseg; s++)
        for (int64_t i = offsets[s]; i < offsets[s + 1]; i++) {
            const int64_t at = rank_offsets[dest_rank(ids[i], s, seg_rank, fn, nranks)]++;
            out_ids[at] = ids[i];
            pos[i] = at;
        }
    for (int32_t r = nranks; r > 0; r--)
        rank_offsets[r] = rank_offsets[r - 1];
    rank_offsets[0] = 0;
    return RT_K_OK;
}
