/* Unique with inverse indices and FusedRec segment unique, by stable radix sort. Segment
 * unique sorts by ID first and then, stably, by segment, which orders pairs by
 * (segment, ID) without needing both in one key. */
#include "internal.cuh"

__global__ void iota(int64_t *x, int64_t n)
{
    const int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] = i;
}

/* head[i] = 1 where sorted element i starts a new run of equal (seg, key). */
__global__ void mark_heads(const int64_t *keys, const int64_t *segs, int64_t n, int64_t *head)
{
    const int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    head[i] = i == 0 || keys[i] != keys[i - 1] || (segs && segs[i] != segs[i - 1]);
}

/* With run = inclusive count of heads - 1 (exclusive sum of heads + head[i] - 1). */
__global__ void emit_unique(const int64_t *keys, const int64_t *pos, const int64_t *head,
                            const int64_t *head_excl, int64_t n, int64_t *uniq, int64_t *inverse,
                            int64_t *n_unique)
{
    const int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    const int64_t run = head_excl[i] + head[i] - 1;
    if (head[i]) uniq[run] = keys[i];
    inverse[pos[i]] = run;
    if (i == n - 1 && n_unique) *n_unique = run + 1;
}

static size_t max3(size_t a, size_t b, size_t c)
{
    const size_t m = a > b ? a : b;
    return m > c ? m : c;
}

rt_kstatus rt_kcuda_unique(const int64_t *ids, int64_t n, int64_t *uniq, int64_t *inverse,
                           int64_t *n_unique, rt_kcuda_ctx *c)
{
    if (!c || n < 0 || !n_unique || (n > 0 && (!ids || !uniq || !inverse))) return RT_K_EINVAL;
    if (n == 0) {
        RT_CUDA_CHECK(cudaMemsetAsync(n_unique, 0, sizeof *n_unique, c->stream));
        return RT_K_OK;
    }
    size_t sort_tmp = 0, scan_tmp = 0;
    RT_K_TRY(rt_kcuda_sort_pairs(NULL, &sort_tmp, NULL, NULL, NULL, NULL, n, 64, c));
    RT_K_TRY(rt_kcuda_exclusive_sum(NULL, &scan_tmp, NULL, NULL, n, c));
    size_t tmp = max3(sort_tmp, scan_tmp, 0);
    const size_t arr = rt_kcuda_round((size_t)n * sizeof(int64_t));
    void *ws;
    RT_K_TRY(rt_kcuda_workspace(c, 5 * arr + rt_kcuda_round(tmp), &ws));
    rt_kcuda_arena ar = {(char *)ws, 0};
    int64_t *pos_in = (int64_t *)rt_kcuda_take(&ar, arr),
            *keys = (int64_t *)rt_kcuda_take(&ar, arr);
    int64_t *pos = (int64_t *)rt_kcuda_take(&ar, arr), *head = (int64_t *)rt_kcuda_take(&ar, arr);
    int64_t *excl = (int64_t *)rt_kcuda_take(&ar, arr);
    void *temp = rt_kcuda_take(&ar, tmp);
    const unsigned blocks = rt_kcuda_blocks(n, RT_KCUDA_THREADS);
    iota<<<blocks, RT_KCUDA_THREADS, 0, c->stream>>>(pos_in, n);
    RT_K_TRY(rt_kcuda_sort_pairs(temp, &tmp, ids, keys, pos_in, pos, n, 64, c));
    mark_heads<<<blocks, RT_KCUDA_THREADS, 0, c->stream>>>(keys, NULL, n, head);
    RT_K_TRY(rt_kcuda_exclusive_sum(temp, &tmp, head, excl, n, c));
    emit_unique<<<blocks, RT_KCUDA_THREADS, 0, c->stream>>>(keys, pos, head, excl, n, uniq, inverse,
                                                            n_unique);
    RT_CUDA_CHECK(cudaGetLastError());
    return RT_K_OK;
}

__global__ void segment_of_pos(const int64_t *pos, const int64_t *offsets, int64_t nseg, int64_t n,
                               int64_t *segs)
{
    const int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) segs[i] = rt_kcuda_segment_of(offsets, nseg, pos[i]);
}

__global__ void gather_i64(const int64_t *src, const int64_t *idx, int64_t n, int64_t *dst)
{
    const int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) dst[i] = src[idx[i]];
}

/* uniq_offsets[s] = number of runs whose segment is below s: a lower bound over the runs'
 * segments (ascending), read at each run head. */
__global__ void segment_unique_offsets(const int64_t *segs, const int64_t *head,
                                       const int64_t *head_excl, int64_t n, int64_t nseg,
                                       int64_t *uniq_offsets)
{
    const int64_t s = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (s > nseg) return;
    int64_t lo = 0, hi = n; /* first sorted element with segment >= s */
    while (lo < hi) {
        const int64_t mid = (lo + hi) / 2;
        if (segs[mid] < s)
            lo = mid + 1;
        else
            hi = mid;
    }
    uniq_offsets[s] = lo < n ? head_excl[lo] : head_excl[n - 1] + head[n - 1];
}

rt_kstatus rt_kcuda_segment_unique(const int64_t *ids, const int64_t *offsets, int64_t nseg,
                                   int64_t *uniq, int64_t *uniq_offsets, int64_t *inverse,
                                   rt_kcuda_ctx *c)
{
    if (!c || nseg < 0 || !offsets || !uniq_offsets) return RT_K_EINVAL;
    int64_t n = 0;
    if (nseg > 0) {
        RT_K_TRY(rt_kcuda_check_offsets(offsets, nseg, c));
        RT_K_TRY(rt_kcuda_jagged_total(offsets, nseg, &n, c));
    }
    if (n == 0) {
        RT_CUDA_CHECK(
            cudaMemsetAsync(uniq_offsets, 0, (size_t)(nseg + 1) * sizeof(int64_t), c->stream));
        return RT_K_OK;
    }
    if (!ids || !uniq || !inverse) return RT_K_EINVAL;
    const int seg_bits = rt_kcuda_bits(nseg);
    size_t sort_tmp = 0, sort2_tmp = 0, scan_tmp = 0;
    RT_K_TRY(rt_kcuda_sort_pairs(NULL, &sort_tmp, NULL, NULL, NULL, NULL, n, 64, c));
    RT_K_TRY(rt_kcuda_sort_pairs(NULL, &sort2_tmp, NULL, NULL, NULL, NULL, n, seg_bits, c));
    RT_K_TRY(rt_kcuda_exclusive_sum(NULL, &scan_tmp, NULL, NULL, n, c));
    size_t tmp = max3(sort_tmp, sort2_tmp, scan_tmp);
    const size_t arr = rt_kcuda_round((size_t)n * sizeof(int64_t));
    void *ws;
    RT_K_TRY(rt_kcuda_workspace(c, 8 * arr + rt_kcuda_round(tmp), &ws));
    rt_kcuda_arena ar = {(char *)ws, 0};
    int64_t *pos_in = (int64_t *)rt_kcuda_take(&ar, arr),
            *keys = (int64_t *)rt_kcuda_take(&ar, arr);
    int64_t *pos = (int64_t *)rt_kcuda_take(&ar, arr), *segs = (int64_t *)rt_kcuda_take(&ar, arr);
    int64_t *ssegs = (int64_t *)rt_kcuda_take(&ar, arr), *pos2 = (int64_t *)rt_kcuda_take(&ar, arr);
    int64_t *head = (int64_t *)rt_kcuda_take(&ar, arr), *excl = (int64_t *)rt_kcuda_take(&ar, arr);
    void *temp = rt_kcuda_take(&ar, tmp);
    const unsigned blocks = rt_kcuda_blocks(n, RT_KCUDA_THREADS);
    iota<<<blocks, RT_KCUDA_THREADS, 0, c->stream>>>(pos_in, n);
    RT_K_TRY(rt_kcuda_sort_pairs(temp, &tmp, ids, keys, pos_in, pos, n, 64, c));
    segment_of_pos<<<blocks, RT_KCUDA_THREADS, 0, c->stream>>>(pos, offsets, nseg, n, segs);
    /* Stable sort by segment: pos2 = original positions in (segment, id) order. */
    RT_K_TRY(rt_kcuda_sort_pairs(temp, &tmp, segs, ssegs, pos, pos2, n, seg_bits, c));
    gather_i64<<<blocks, RT_KCUDA_THREADS, 0, c->stream>>>(ids, pos2, n, keys);
    mark_heads<<<blocks, RT_KCUDA_THREADS, 0, c->stream>>>(keys, ssegs, n, head);
    RT_K_TRY(rt_kcuda_exclusive_sum(temp, &tmp, head, excl, n, c));
    emit_unique<<<blocks, RT_KCUDA_THREADS, 0, c->stream>>>(keys, pos2, head, excl, n, uniq,
                                                            inverse, NULL);
    segment_unique_offsets<<<rt_kcuda_blocks(nseg + 1, RT_KCUDA_THREADS), RT_KCUDA_THREADS, 0,
                             c->stream>>>(ssegs, head, excl, n, nseg, uniq_offsets);
    RT_CUDA_CHECK(cudaGetLastError());
    return RT_K_OK;
}
