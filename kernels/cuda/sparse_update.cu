/* Backward scatter fused with the sparse optimizer: (id, bag) pairs are radix-sorted by id,
 * runs of equal ids found, and one warp per run sums its gradients in a fixed order and
 * updates the row once, so the result is deterministic and untouched rows never move. */
#include "internal.cuh"

/* keys[i] = ids[i] (or `rows`, a key that is skipped, for an invalid id); vals[i] = bag. */
__global__ void make_pairs(const int64_t *ids, const int64_t *offsets, int64_t nbags, int64_t n,
                           int64_t rows, int64_t *keys, int64_t *vals, int *err)
{
    const int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    const int64_t id = ids[i];
    if (id < 0 || id >= rows) rt_kcuda_flag(err, RT_K_ERANGE);
    keys[i] = id < 0 || id >= rows ? rows : id;
    vals[i] = offsets ? rt_kcuda_segment_of(offsets, nbags, i) : i;
}

struct opt_args {
    rt_kopt o;
    float c1, c2; /* Adam bias corrections */
};

static __device__ float run_grad(const int64_t *bags, int64_t lo, int64_t hi,
                                 const int64_t *offsets, int mean, const float *grad_out,
                                 int64_t dim, int64_t j)
{
    float g = 0.0f;
    for (int64_t k = lo; k < hi; k++) {
        const int64_t b = bags[k];
        const float scale = mean && offsets ? 1.0f / (float)(offsets[b + 1] - offsets[b]) : 1.0f;
        g += scale * grad_out[b * dim + j];
    }
    return g;
}

__global__ void update_runs(void *table, rt_kdtype dt, int64_t rows, int64_t dim, float *s0,
                            float *s1, opt_args a, const int64_t *run_keys,
                            const int64_t *run_starts, const int64_t *run_counts,
                            const int64_t *num_runs, const int64_t *bags, const int64_t *offsets,
                            int mean, const float *grad_out)
{
    const int64_t run = ((int64_t)blockIdx.x * blockDim.x + threadIdx.x) / 32;
    const int lane = threadIdx.x % 32;
    if (run >= *num_runs) return;
    const int64_t row = run_keys[run];
    if (row >= rows) return; /* the invalid-id key, already flagged */
    const int64_t lo = run_starts[run], hi = lo + run_counts[run];
    float row_scale = 0.0f;
    if (a.o.kind == RT_KOPT_ROWWISE_ADAGRAD) {
        float sq = 0.0f;
        for (int64_t j = lane; j < dim; j += 32) {
            const float g = run_grad(bags, lo, hi, offsets, mean, grad_out, dim, j);
            sq += g * g;
        }
        for (int off = 16; off > 0; off /= 2)
            sq += __shfl_xor_sync(0xffffffffu, sq, off);
        const float acc = s0[row] + sq / (float)dim;
        row_scale = a.o.lr / (sqrtf(acc) + a.o.eps);
        __syncwarp();
        if (lane == 0) s0[row] = acc;
    }
    for (int64_t j = lane; j < dim; j += 32) {
        const float g = run_grad(bags, lo, hi, offsets, mean, grad_out, dim, j);
        const int64_t at = row * dim + j;
        float w = rt_kcuda_load(table, dt, at);
        switch (a.o.kind) {
        case RT_KOPT_SGD:
            w -= a.o.lr * g;
            break;
        case RT_KOPT_ADAGRAD:
            s0[at] += g * g;
            w -= a.o.lr * g / (sqrtf(s0[at]) + a.o.eps);
            break;
        case RT_KOPT_ROWWISE_ADAGRAD:
            w -= row_scale * g;
            break;
        case RT_KOPT_ADAM:
            s0[at] = a.o.beta1 * s0[at] + (1.0f - a.o.beta1) * g;
            s1[at] = a.o.beta2 * s1[at] + (1.0f - a.o.beta2) * g * g;
            w -= a.o.lr * (s0[at] / a.c1) / (sqrtf(s1[at] / a.c2) + a.o.eps);
            break;
        }
        rt_kcuda_store(table, dt, at, w);
    }
}

rt_kstatus rt_kcuda_sparse_update(rt_ktable *t, rt_kopt_state st, const rt_kopt *opt,
                                  const int64_t *ids, const int64_t *offsets, int64_t nbags,
                                  rt_kpool pool, const float *grad_out, rt_kcuda_ctx *c)
{
    if (!c || !t || !t->data || t->rows < 0 || t->dim <= 0 || !rt_kopt_valid(opt, st) ||
        nbags < 0 || (pool != RT_KPOOL_SUM && pool != RT_KPOOL_MEAN))
        return RT_K_EINVAL;
    int64_t n = nbags;
    if (offsets && nbags > 0) {
        RT_K_TRY(rt_kcuda_check_offsets(offsets, nbags, c));
        RT_K_TRY(rt_kcuda_jagged_total(offsets, nbags, &n, c));
    }
    if (n == 0) return RT_K_OK;
    if (!ids || !grad_out) return RT_K_EINVAL;
    const int end_bit = rt_kcuda_bits(t->rows + 1);
    size_t sort_tmp = 0, rle_tmp = 0, scan_tmp = 0;
    RT_K_TRY(rt_kcuda_sort_pairs(NULL, &sort_tmp, NULL, NULL, NULL, NULL, n, end_bit, c));
    RT_K_TRY(rt_kcuda_run_length(NULL, &rle_tmp, NULL, n, NULL, NULL, NULL, c));
    RT_K_TRY(rt_kcuda_exclusive_sum(NULL, &scan_tmp, NULL, NULL, n, c));
    size_t tmp = sort_tmp > rle_tmp ? sort_tmp : rle_tmp;
    tmp = tmp > scan_tmp ? tmp : scan_tmp;
    const size_t arr = rt_kcuda_round((size_t)n * sizeof(int64_t));
    void *ws;
    RT_K_TRY(rt_kcuda_workspace(c, 7 * arr + 256 + rt_kcuda_round(tmp), &ws));
    rt_kcuda_arena ar = {(char *)ws, 0};
    int64_t *keys = (int64_t *)rt_kcuda_take(&ar, arr), *vals = (int64_t *)rt_kcuda_take(&ar, arr);
    int64_t *skeys = (int64_t *)rt_kcuda_take(&ar, arr), *bags = (int64_t *)rt_kcuda_take(&ar, arr);
    int64_t *run_keys = (int64_t *)rt_kcuda_take(&ar, arr);
    int64_t *run_counts = (int64_t *)rt_kcuda_take(&ar, arr);
    int64_t *run_starts = (int64_t *)rt_kcuda_take(&ar, arr);
    int64_t *num_runs = (int64_t *)rt_kcuda_take(&ar, 256);
    void *temp = rt_kcuda_take(&ar, tmp);

    make_pairs<<<rt_kcuda_blocks(n, RT_KCUDA_THREADS), RT_KCUDA_THREADS, 0, c->stream>>>(
        ids, offsets, nbags, n, t->rows, keys, vals, c->err);
    RT_CUDA_CHECK(cudaGetLastError());
    RT_K_TRY(rt_kcuda_sort_pairs(temp, &tmp, keys, skeys, vals, bags, n, end_bit, c));
    RT_CUDA_CHECK(cudaMemsetAsync(run_counts, 0, arr, c->stream));
    RT_K_TRY(rt_kcuda_run_length(temp, &tmp, skeys, n, run_keys, run_counts, num_runs, c));
    RT_K_TRY(rt_kcuda_exclusive_sum(temp, &tmp, run_counts, run_starts, n, c));

    opt_args a = {*opt, 1.0f, 1.0f};
    if (opt->kind == RT_KOPT_ADAM) {
        a.c1 = 1.0f - powf(opt->beta1, (float)opt->step);
        a.c2 = 1.0f - powf(opt->beta2, (float)opt->step);
    }
    update_runs<<<rt_kcuda_blocks(n * 32, RT_KCUDA_THREADS), RT_KCUDA_THREADS, 0, c->stream>>>(
        t->data, t->dtype, t->rows, t->dim, st.s0, st.s1, a, run_keys, run_starts, run_counts,
        num_runs, bags, offsets, pool == RT_KPOOL_MEAN, grad_out);
    RT_CUDA_CHECK(cudaGetLastError());
    return RT_K_OK;
}
