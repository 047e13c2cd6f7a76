/* Routing by destination rank: a stable radix sort of positions keyed by rank (few bits),
 * then a gather of the IDs and a scatter of I_s. */
#include "internal.cuh"

__global__ void dest_ranks(const int64_t *ids, const int64_t *offsets, int64_t nseg, int64_t n,
                           const int32_t *seg_rank, rt_kbucket_fn fn, int32_t nranks, int64_t *dest,
                           int64_t *pos_in, unsigned long long *rank_seg_counts, int *err)
{
    const int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    const int64_t s = rt_kcuda_segment_of(offsets, nseg, i);
    int64_t r;
    if (seg_rank) {
        r = seg_rank[s];
    } else {
        const int64_t id = ids[i];
        const uint64_t key = fn == RT_KBUCKET_HASH ? rt_kmix64((uint64_t)id) : (uint64_t)id;
        r = id < 0 ? -1 : (int64_t)(key % (uint64_t)nranks);
    }
    if (r < 0 || r >= nranks) {
        rt_kcuda_flag(err, RT_K_ERANGE);
        r = 0;
    }
    dest[i] = r;
    pos_in[i] = i;
    if (rank_seg_counts) atomicAdd(&rank_seg_counts[r * nseg + s], 1ull);
}

__global__ void place(const int64_t *ids, const int64_t *order, int64_t n, int64_t *out_ids,
                      int64_t *pos)
{
    const int64_t j = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (j >= n) return;
    out_ids[j] = ids[order[j]];
    pos[order[j]] = j;
}

/* rank_offsets[r] = first sorted position with rank >= r. */
__global__ void rank_bounds(const int64_t *sorted_dest, int64_t n, int32_t nranks,
                            int64_t *rank_offsets)
{
    const int64_t r = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (r > nranks) return;
    int64_t lo = 0, hi = n;
    while (lo < hi) {
        const int64_t mid = (lo + hi) / 2;
        if (sorted_dest[mid] < r)
            lo = mid + 1;
        else
            hi = mid;
    }
    rank_offsets[r] = lo;
}

rt_kstatus rt_kcuda_bucketize(const int64_t *ids, const int64_t *offsets, int64_t nseg,
                              const int32_t *seg_rank, rt_kbucket_fn fn, int32_t nranks,
                              int64_t *out_ids, int64_t *pos, int64_t *rank_offsets,
                              int64_t *rank_seg_counts, rt_kcuda_ctx *c)
{
    if (!c || nranks <= 0 || nseg < 0 || !offsets || !rank_offsets ||
        (fn != RT_KBUCKET_MOD && fn != RT_KBUCKET_HASH))
        return RT_K_EINVAL;
    int64_t n = 0;
    if (nseg > 0) {
        RT_K_TRY(rt_kcuda_check_offsets(offsets, nseg, c));
        RT_K_TRY(rt_kcuda_jagged_total(offsets, nseg, &n, c));
    }
    if (rank_seg_counts && nseg > 0)
        RT_CUDA_CHECK(cudaMemsetAsync(rank_seg_counts, 0,
                                      (size_t)nranks * (size_t)nseg * sizeof(int64_t), c->stream));
    if (n == 0) {
        RT_CUDA_CHECK(
            cudaMemsetAsync(rank_offsets, 0, (size_t)(nranks + 1) * sizeof(int64_t), c->stream));
        return RT_K_OK;
    }
    if (!ids || !out_ids || !pos) return RT_K_EINVAL;
    const int bits = rt_kcuda_bits(nranks);
    size_t tmp = 0;
    RT_K_TRY(rt_kcuda_sort_pairs(NULL, &tmp, NULL, NULL, NULL, NULL, n, bits, c));
    const size_t arr = rt_kcuda_round((size_t)n * sizeof(int64_t));
    void *ws;
    RT_K_TRY(rt_kcuda_workspace(c, 4 * arr + rt_kcuda_round(tmp), &ws));
    rt_kcuda_arena ar = {(char *)ws, 0};
    int64_t *dest = (int64_t *)rt_kcuda_take(&ar, arr),
            *pos_in = (int64_t *)rt_kcuda_take(&ar, arr);
    int64_t *sdest = (int64_t *)rt_kcuda_take(&ar, arr),
            *order = (int64_t *)rt_kcuda_take(&ar, arr);
    void *temp = rt_kcuda_take(&ar, tmp);
    const unsigned blocks = rt_kcuda_blocks(n, RT_KCUDA_THREADS);
    dest_ranks<<<blocks, RT_KCUDA_THREADS, 0, c->stream>>>(
        ids, offsets, nseg, n, seg_rank, fn, nranks, dest, pos_in,
        (unsigned long long *)rank_seg_counts, c->err);
    RT_K_TRY(rt_kcuda_sort_pairs(temp, &tmp, dest, sdest, pos_in, order, n, bits, c));
    place<<<blocks, RT_KCUDA_THREADS, 0, c->stream>>>(ids, order, n, out_ids, pos);
    rank_bounds<<<rt_kcuda_blocks(nranks + 1, RT_KCUDA_THREADS), RT_KCUDA_THREADS, 0, c->stream>>>(
        sdest, n, nranks, rank_offsets);
    RT_CUDA_CHECK(cudaGetLastError());
    return RT_K_OK;
}
