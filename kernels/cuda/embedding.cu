/* Embedding gather with pooling, sequence lookup, row gather / scatter-add, FusedRec recovery
 * and the device copy the benchmarks use as their bandwidth reference. A bag is handled by a
 * group of up to 32 threads that each read 4 consecutive elements (16 bytes for fp32) of a
 * row, so a warp issues wide, coalesced row reads and keeps several rows in flight. */
#include "internal.cuh"

/* Four consecutive elements starting at element i (i a multiple of 4 when vec4). */
static __device__ inline float4 load4(const void *data, rt_kdtype dt, int64_t i)
{
    if (dt == RT_KDT_FP32) return __ldg((const float4 *)((const float *)data + i));
    const uint2 raw = __ldg((const uint2 *)((const uint16_t *)data + i));
    if (dt == RT_KDT_FP16) {
        const float2 a = __half22float2(*(const __half2 *)&raw.x);
        const float2 b = __half22float2(*(const __half2 *)&raw.y);
        return make_float4(a.x, a.y, b.x, b.y);
    }
    const float2 a = __bfloat1622float2(*(const __nv_bfloat162 *)&raw.x);
    const float2 b = __bfloat1622float2(*(const __nv_bfloat162 *)&raw.y);
    return make_float4(a.x, a.y, b.x, b.y);
}

static __device__ inline void add4(float4 *acc, float4 x)
{
    acc->x += x.x;
    acc->y += x.y;
    acc->z += x.z;
    acc->w += x.w;
}

/* Threads per bag: enough for one pass over a row's 4-element chunks, at most a warp. */
static int group_size(int64_t chunks)
{
    int g = 1;
    while (g < 32 && g < chunks)
        g *= 2;
    return g;
}

__global__ void gather_pool_vec4(const void *__restrict__ table, rt_kdtype dt, int64_t rows,
                                 int64_t dim, const int64_t *__restrict__ ids,
                                 const int64_t *__restrict__ offsets, int64_t nbags, int group,
                                 int mean, float *__restrict__ out, int *err)
{
    const int64_t bag = ((int64_t)blockIdx.x * blockDim.x + threadIdx.x) / group;
    const int lane = (int)(threadIdx.x % group);
    if (bag >= nbags) return;
    const int64_t lo = offsets[bag], hi = offsets[bag + 1];
    const int64_t chunks = dim / 4;
    for (int64_t ch = lane; ch < chunks; ch += group) {
        float4 acc = make_float4(0, 0, 0, 0), acc2 = make_float4(0, 0, 0, 0);
        int64_t i = lo;
        for (; i + 1 < hi; i += 2) { /* two independent row reads in flight */
            const int64_t r0 = ids[i], r1 = ids[i + 1];
            if (r0 < 0 || r0 >= rows || r1 < 0 || r1 >= rows) {
                rt_kcuda_flag(err, RT_K_ERANGE);
                return;
            }
            add4(&acc, load4(table, dt, r0 * dim + ch * 4));
            add4(&acc2, load4(table, dt, r1 * dim + ch * 4));
        }
        if (i < hi) {
            const int64_t r0 = ids[i];
            if (r0 < 0 || r0 >= rows) {
                rt_kcuda_flag(err, RT_K_ERANGE);
                return;
            }
            add4(&acc, load4(table, dt, r0 * dim + ch * 4));
        }
        add4(&acc, acc2);
        if (mean && hi > lo) {
            const float inv = 1.0f / (float)(hi - lo);
            acc.x *= inv, acc.y *= inv, acc.z *= inv, acc.w *= inv;
        }
        *(float4 *)(out + bag * dim + ch * 4) = acc;
    }
}

__global__ void gather_pool_scalar(const void *__restrict__ table, rt_kdtype dt, int64_t rows,
                                   int64_t dim, const int64_t *__restrict__ ids,
                                   const int64_t *__restrict__ offsets, int64_t nbags, int group,
                                   int mean, float *__restrict__ out, int *err)
{
    const int64_t bag = ((int64_t)blockIdx.x * blockDim.x + threadIdx.x) / group;
    const int lane = (int)(threadIdx.x % group);
    if (bag >= nbags) return;
    const int64_t lo = offsets[bag], hi = offsets[bag + 1];
    for (int64_t j = lane; j < dim; j += group) {
        float acc = 0.0f;
        for (int64_t i = lo; i < hi; i++) {
            const int64_t r = ids[i];
            if (r < 0 || r >= rows) {
                rt_kcuda_flag(err, RT_K_ERANGE);
                return;
            }
            acc += rt_kcuda_load(table, dt, r * dim + j);
        }
        out[bag * dim + j] = mean && hi > lo ? acc / (float)(hi - lo) : acc;
    }
}

static bool table_ok(const rt_ktable *t)
{
    return t && t->data && t->rows >= 0 && t->dim > 0 &&
           (t->dtype == RT_KDT_FP32 || t->dtype == RT_KDT_FP16 || t->dtype == RT_KDT_BF16);
}

static rt_kstatus launch_pool(const rt_ktable *t, const int64_t *ids, const int64_t *offsets,
                              int64_t nbags, int mean, float *out, rt_kcuda_ctx *c)
{
    /* The 4-wide path needs 4-element rows and aligned base pointers. */
    const size_t align = t->dtype == RT_KDT_FP32 ? 16 : 8;
    const bool vec = t->dim % 4 == 0 && (uintptr_t)t->data % align == 0 && (uintptr_t)out % 16 == 0;
    const int group = group_size(vec ? t->dim / 4 : t->dim);
    const unsigned blocks = rt_kcuda_blocks(nbags * group, RT_KCUDA_THREADS);
    if (vec)
        gather_pool_vec4<<<blocks, RT_KCUDA_THREADS, 0, c->stream>>>(
            t->data, t->dtype, t->rows, t->dim, ids, offsets, nbags, group, mean, out, c->err);
    else
        gather_pool_scalar<<<blocks, RT_KCUDA_THREADS, 0, c->stream>>>(
            t->data, t->dtype, t->rows, t->dim, ids, offsets, nbags, group, mean, out, c->err);
    RT_CUDA_CHECK(cudaGetLastError());
    return RT_K_OK;
}

rt_kstatus rt_kcuda_gather_pool(const rt_ktable *t, const int64_t *ids, const int64_t *offsets,
                                int64_t nbags, rt_kpool pool, float *out, rt_kcuda_ctx *c)
{
    if (!c || !table_ok(t) || nbags < 0 || !offsets || (nbags > 0 && !out) ||
        (pool != RT_KPOOL_SUM && pool != RT_KPOOL_MEAN))
        return RT_K_EINVAL;
    if (nbags == 0) return RT_K_OK;
    RT_K_TRY(rt_kcuda_check_offsets(offsets, nbags, c));
    return launch_pool(t, ids, offsets, nbags, pool == RT_KPOOL_MEAN, out, c);
}

/* Sequence lookup is pooling with bags of one: offsets are the identity. */
__global__ void identity_offsets(int64_t *offsets, int64_t n)
{
    const int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i <= n) offsets[i] = i;
}

rt_kstatus rt_kcuda_sequence_lookup(const rt_ktable *t, const int64_t *ids, int64_t n, float *out,
                                    rt_kcuda_ctx *c)
{
    if (!c || !table_ok(t) || n < 0 || (n > 0 && (!ids || !out))) return RT_K_EINVAL;
    if (n == 0) return RT_K_OK;
    void *ws;
    RT_K_TRY(rt_kcuda_workspace(c, (size_t)(n + 1) * sizeof(int64_t), &ws));
    int64_t *offsets = (int64_t *)ws;
    identity_offsets<<<rt_kcuda_blocks(n + 1, RT_KCUDA_THREADS), RT_KCUDA_THREADS, 0, c->stream>>>(
        offsets, n);
    return launch_pool(t, ids, offsets, n, 0, out, c);
}

/* Segment blockIdx.y of a fused gather; x threads stride over its n x dim elements. */
__global__ void gather_segments_kernel(const rt_kgather_seg *__restrict__ segs, int *err)
{
    const rt_kgather_seg g = segs[blockIdx.y];
    const int64_t dim = g.t.dim, total = g.n * dim;
    for (int64_t e = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; e < total;
         e += (int64_t)gridDim.x * blockDim.x) {
        const int64_t j = e / dim, col = e % dim, b = g.first + j;
        const int64_t lo = g.offsets ? g.offsets[b] : b, hi = g.offsets ? g.offsets[b + 1] : b + 1;
        float acc = 0.0f;
        for (int64_t i = lo; i < hi; i++) {
            const int64_t r = g.ids[i];
            if (r < 0 || r >= g.t.rows) {
                rt_kcuda_flag(err, RT_K_ERANGE);
                return;
            }
            acc += rt_kcuda_load(g.t.data, g.t.dtype, r * dim + col);
        }
        g.out[j * dim + col] = acc;
    }
}

rt_kstatus rt_kcuda_gather_segments(const rt_kgather_seg *segs, int64_t nseg, rt_kcuda_ctx *c)
{
    if (!c || nseg < 0 || nseg > 65535 || (nseg > 0 && !segs)) return RT_K_EINVAL;
    int64_t most = 0;
    for (int64_t s = 0; s < nseg; s++) {
        const rt_kgather_seg *g = &segs[s];
        if (g->n < 0 || g->first < 0) return RT_K_EINVAL;
        if (g->n == 0) continue;
        if (!table_ok(&g->t) || !g->out) return RT_K_EINVAL;
        if (g->n * g->t.dim > most) most = g->n * g->t.dim;
    }
    if (most == 0) return RT_K_OK;
    void *ws;
    const size_t bytes = sizeof(rt_kgather_seg) * (size_t)nseg;
    RT_K_TRY(rt_kcuda_workspace(c, bytes, &ws));
    RT_CUDA_CHECK(cudaMemcpyAsync(ws, segs, bytes, cudaMemcpyHostToDevice, c->stream));
    unsigned bx = rt_kcuda_blocks(most, RT_KCUDA_THREADS);
    dim3 grid(bx < 4096 ? bx : 4096, (unsigned)nseg);
    gather_segments_kernel<<<grid, RT_KCUDA_THREADS, 0, c->stream>>>((const rt_kgather_seg *)ws,
                                                                     c->err);
    RT_CUDA_CHECK(cudaGetLastError());
    return RT_K_OK;
}

/* dst[i] = src[idx[i] indirect through inner when inner != NULL] */
__global__ void gather_rows_kernel(const float *__restrict__ src, int64_t src_rows, int64_t dim,
                                   const int64_t *__restrict__ inner, int64_t inner_n,
                                   const int64_t *__restrict__ idx, int64_t n,
                                   float *__restrict__ dst, int *err)
{
    const int64_t e = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (e >= n * dim) return;
    const int64_t i = e / dim, j = e % dim;
    int64_t r = idx[i];
    if (inner) {
        if (r < 0 || r >= inner_n) {
            rt_kcuda_flag(err, RT_K_ERANGE);
            return;
        }
        r = inner[r];
    }
    if (r < 0 || r >= src_rows) {
        rt_kcuda_flag(err, RT_K_ERANGE);
        return;
    }
    dst[e] = src[r * dim + j];
}

rt_kstatus rt_kcuda_gather_rows(const float *src, int64_t src_rows, int64_t dim, const int64_t *idx,
                                int64_t n, float *dst, rt_kcuda_ctx *c)
{
    if (!c || dim <= 0 || n < 0 || src_rows < 0 || (n > 0 && (!src || !idx || !dst)))
        return RT_K_EINVAL;
    if (n == 0) return RT_K_OK;
    gather_rows_kernel<<<rt_kcuda_blocks(n * dim, RT_KCUDA_THREADS), RT_KCUDA_THREADS, 0,
                         c->stream>>>(src, src_rows, dim, NULL, 0, idx, n, dst, c->err);
    RT_CUDA_CHECK(cudaGetLastError());
    return RT_K_OK;
}

rt_kstatus rt_kcuda_recover(const float *recv, int64_t recv_rows, int64_t dim, const int64_t *i_s,
                            int64_t nu, const int64_t *i_u, int64_t n, float *out, rt_kcuda_ctx *c)
{
    if (!c || dim <= 0 || recv_rows < 0 || nu < 0 || n < 0 ||
        (n > 0 && (!recv || !i_s || !i_u || !out)))
        return RT_K_EINVAL;
    if (n == 0) return RT_K_OK;
    gather_rows_kernel<<<rt_kcuda_blocks(n * dim, RT_KCUDA_THREADS), RT_KCUDA_THREADS, 0,
                         c->stream>>>(recv, recv_rows, dim, i_s, nu, i_u, n, out, c->err);
    RT_CUDA_CHECK(cudaGetLastError());
    return RT_K_OK;
}

__global__ void compose_kernel(const int64_t *outer, int64_t n, const int64_t *inner,
                               int64_t inner_n, int64_t *out, int *err)
{
    const int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    const int64_t o = outer[i];
    if (o < 0 || o >= inner_n)
        rt_kcuda_flag(err, RT_K_ERANGE);
    else
        out[i] = inner[o];
}

rt_kstatus rt_kcuda_compose_index(const int64_t *outer, int64_t n, const int64_t *inner,
                                  int64_t inner_n, int64_t *out, rt_kcuda_ctx *c)
{
    if (!c || n < 0 || inner_n < 0 || (n > 0 && (!outer || !inner || !out))) return RT_K_EINVAL;
    if (n == 0) return RT_K_OK;
    compose_kernel<<<rt_kcuda_blocks(n, RT_KCUDA_THREADS), RT_KCUDA_THREADS, 0, c->stream>>>(
        outer, n, inner, inner_n, out, c->err);
    RT_CUDA_CHECK(cudaGetLastError());
    return RT_K_OK;
}

__global__ void scatter_add_kernel(const float *__restrict__ src, int64_t n, int64_t dim,
                                   const int64_t *__restrict__ idx, int64_t dst_rows,
                                   float *__restrict__ dst, int *err)
{
    const int64_t e = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (e >= n * dim) return;
    const int64_t r = idx[e / dim];
    if (r < 0 || r >= dst_rows)
        rt_kcuda_flag(err, RT_K_ERANGE);
    else
        atomicAdd(&dst[r * dim + e % dim], src[e]);
}

rt_kstatus rt_kcuda_scatter_add_rows(const float *src, int64_t n, int64_t dim, const int64_t *idx,
                                     int64_t dst_rows, float *dst, rt_kcuda_ctx *c)
{
    if (!c || dim <= 0 || n < 0 || dst_rows < 0 || (n > 0 && (!src || !idx || !dst)))
        return RT_K_EINVAL;
    if (n == 0) return RT_K_OK;
    scatter_add_kernel<<<rt_kcuda_blocks(n * dim, RT_KCUDA_THREADS), RT_KCUDA_THREADS, 0,
                         c->stream>>>(src, n, dim, idx, dst_rows, dst, c->err);
    RT_CUDA_CHECK(cudaGetLastError());
    return RT_K_OK;
}

__global__ void copy_kernel(const float4 *__restrict__ src, int64_t n4, float4 *__restrict__ dst)
{
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n4;
         i += (int64_t)gridDim.x * blockDim.x)
        dst[i] = src[i];
}

rt_kstatus rt_kcuda_copy(const float *src, int64_t n, float *dst, rt_kcuda_ctx *c)
{
    if (!c || n < 0 || n % 4 != 0 || (n > 0 && (!src || !dst))) return RT_K_EINVAL;
    if (n == 0) return RT_K_OK;
    copy_kernel<<<rt_kcuda_blocks(n / 4, RT_KCUDA_THREADS * 4), RT_KCUDA_THREADS, 0, c->stream>>>(
        (const float4 *)src, n / 4, (float4 *)dst);
    RT_CUDA_CHECK(cudaGetLastError());
    return RT_K_OK;
}
