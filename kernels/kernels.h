/* rectwin kernels: one C interface, two implementations.
 *
 * rt_kcpu_* (this header) are the C11 reference kernels on host memory. The CUDA kernels in
 * cuda/kernels_cuda.h take the same arguments in the same order on device pointers, plus a
 * context (stream, cuBLAS handle, workspace) as the last argument.
 *
 * Conventions shared by every kernel:
 *  - argument order: inputs, their shapes, parameters, outputs;
 *  - IDs, offsets and index arrays are int64_t; embeddings and activations are fp32 row-major;
 *  - a jagged batch of nseg segments is described by offsets[nseg + 1] with offsets[0] == 0;
 *    segment s holds elements offsets[s] .. offsets[s + 1] - 1 (a KeyedJaggedTensor's offsets);
 *  - every kernel returns RT_K_OK or an error code and never writes outside the documented
 *    output ranges; an error is reported before any output is written. */
#ifndef RT_KERNELS_H
#define RT_KERNELS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
    RT_K_OK = 0,
    RT_K_EINVAL, /* bad shape, NULL pointer or unsupported option */
    RT_K_ERANGE, /* an ID or index outside its table or array */
    RT_K_ENOMEM,
    RT_K_EDEVICE /* CUDA or cuBLAS failure */
} rt_kstatus;

const char *rt_kstatus_str(rt_kstatus s);

/* ---- storage types --------------------------------------------------------------------- */

typedef enum { RT_KDT_FP32, RT_KDT_FP16, RT_KDT_BF16 } rt_kdtype;

size_t rt_kdtype_bytes(rt_kdtype dt);
/* Round-to-nearest-even conversions; NaN stays NaN, overflow becomes infinity. */
uint16_t rt_kf32_to_f16(float x);
float rt_kf16_to_f32(uint16_t h);
uint16_t rt_kf32_to_bf16(float x);
float rt_kbf16_to_f32(uint16_t b);

/* out[i] = in[i] converted from one storage type to another (n elements; the buffers do not
 * overlap): the embedding and gradient AlltoAlls in a reduced communication precision. */
rt_kstatus rt_kcpu_convert(const void *in, rt_kdtype from, int64_t n, rt_kdtype to, void *out);

/* A dense embedding table: rows x dim elements of dtype, row-major, rows contiguous. */
typedef struct {
    void *data;
    int64_t rows;
    int64_t dim;
    rt_kdtype dtype;
} rt_ktable;

/* ---- embedding lookup ------------------------------------------------------------------ */

typedef enum { RT_KPOOL_SUM, RT_KPOOL_MEAN } rt_kpool;

/* out[b] = pool(table[ids[offsets[b]]], ..., table[ids[offsets[b+1]-1]]), out is nbags x dim
 * fp32. An empty bag gives a zero row for both sum and mean. */
rt_kstatus rt_kcpu_gather_pool(const rt_ktable *t, const int64_t *ids, const int64_t *offsets,
                               int64_t nbags, rt_kpool pool, float *out);
/* One block of a fused multi-table gather (RecIS's fused lookup): output row j < n is the sum
 * pool of bag first + j of (ids, offsets), or with offsets NULL the row ids[first + j]; rows
 * are t.dim fp32 wide and land at out + j * t.dim. */
typedef struct {
    rt_ktable t;
    const int64_t *ids;
    const int64_t *offsets;
    int64_t first, n;
    float *out;
} rt_kgather_seg;
/* Every segment in one call (one launch on CUDA), so many small tables cost one dispatch and
 * each segment writes straight into its place in a message. */
rt_kstatus rt_kcpu_gather_segments(const rt_kgather_seg *segs, int64_t nseg);
/* Un-pooled lookup: out[i] = table[ids[i]], out is n x dim fp32. */
rt_kstatus rt_kcpu_sequence_lookup(const rt_ktable *t, const int64_t *ids, int64_t n, float *out);
/* dst[i] = src[idx[i]] for fp32 rows (lookup recovery, dedup restore). */
rt_kstatus rt_kcpu_gather_rows(const float *src, int64_t src_rows, int64_t dim, const int64_t *idx,
                               int64_t n, float *dst);
/* dst[idx[i]] += src[i]: the backward of gather_rows. */
rt_kstatus rt_kcpu_scatter_add_rows(const float *src, int64_t n, int64_t dim, const int64_t *idx,
                                    int64_t dst_rows, float *dst);

/* ---- sparse backward fused with the optimizer ------------------------------------------ */

typedef enum { RT_KOPT_SGD, RT_KOPT_ADAGRAD, RT_KOPT_ROWWISE_ADAGRAD, RT_KOPT_ADAM } rt_koptim;

typedef struct {
    rt_koptim kind;
    float lr;
    float eps;
    float beta1, beta2; /* Adam only */
    int64_t step;       /* Adam bias correction: 1 for the first update */
} rt_kopt;

/* Optimizer state, fp32. SGD: none. Adagrad: s0 = sum of squares (rows x dim). Row-wise
 * Adagrad: s0 = mean of squares per row (rows). Adam: s0 = m, s1 = v (rows x dim). */
typedef struct {
    float *s0;
    float *s1;
} rt_kopt_state;

/* Whether OPT is usable with state ST: the state slots its kind needs are there and Adam's
 * step and betas are in range. Both backends check it before an update. */
static inline bool rt_kopt_valid(const rt_kopt *opt, rt_kopt_state st)
{
    if (!opt) return false;
    switch (opt->kind) {
    case RT_KOPT_SGD:
        return true;
    case RT_KOPT_ADAGRAD:
    case RT_KOPT_ROWWISE_ADAGRAD:
        return st.s0 != NULL;
    case RT_KOPT_ADAM:
        return st.s0 && st.s1 && opt->step >= 1 && opt->beta1 >= 0 && opt->beta1 < 1 &&
               opt->beta2 >= 0 && opt->beta2 < 1;
    }
    return false;
}

/* Number of floats of state slot `which` (0 or 1) for a rows x dim table. */
int64_t rt_kopt_state_len(rt_koptim kind, int which, int64_t rows, int64_t dim);

/* Backward of gather_pool fused with the update. Each occurrence of an ID in bag b contributes
 * grad_out[b] (divided by the bag length for mean pooling); contributions to the same row are
 * summed first and the optimizer is applied once per touched row, so untouched rows and their
 * state do not change. offsets == NULL means one ID per bag (sequence lookup). fp16/bf16
 * tables are updated in fp32 and rounded back. */
rt_kstatus rt_kcpu_sparse_update(rt_ktable *t, rt_kopt_state st, const rt_kopt *opt,
                                 const int64_t *ids, const int64_t *offsets, int64_t nbags,
                                 rt_kpool pool, const float *grad_out);

/* ---- dedup ----------------------------------------------------------------------------- */

/* uniq[0 .. *n_unique) = the distinct ids in ascending order; ids[i] == uniq[inverse[i]].
 * uniq must hold n entries. */
rt_kstatus rt_kcpu_unique(const int64_t *ids, int64_t n, int64_t *uniq, int64_t *inverse,
                          int64_t *n_unique);
/* FusedRec segment unique: duplicates are removed inside each segment only, so equal IDs of
 * different segments (features) are kept apart. Segment s's distinct ids, ascending, occupy
 * uniq[uniq_offsets[s] .. uniq_offsets[s+1]); ids[i] == uniq[inverse[i]] (I_u). uniq holds n
 * entries, uniq_offsets nseg + 1. */
rt_kstatus rt_kcpu_segment_unique(const int64_t *ids, const int64_t *offsets, int64_t nseg,
                                  int64_t *uniq, int64_t *uniq_offsets, int64_t *inverse);
/* out[i] = inner[outer[i]]: composes two index maps, e.g. the stage-1 and stage-2 inverses
 * of a two-stage dedup, or I_s and I_u into FusedRec's recovery map I_r. */
rt_kstatus rt_kcpu_compose_index(const int64_t *outer, int64_t n, const int64_t *inner,
                                 int64_t inner_n, int64_t *out);
/* FusedRec recovery: out[i] = recv[i_s[i_u[i]]], where recv holds the looked-up rows in
 * bucketed (sorted) order, i_s maps unique position -> bucketed position and i_u maps input
 * position -> unique position. */
rt_kstatus rt_kcpu_recover(const float *recv, int64_t recv_rows, int64_t dim, const int64_t *i_s,
                           int64_t nu, const int64_t *i_u, int64_t n, float *out);

/* ---- routing --------------------------------------------------------------------------- */

typedef enum { RT_KBUCKET_MOD, RT_KBUCKET_HASH } rt_kbucket_fn;

/* Inline helpers below also compile as CUDA device code. */
#ifdef __CUDACC__
#define RT_KHD __host__ __device__
#else
#define RT_KHD
#endif

/* The mixing function used for hash routing and the hash table (splitmix64 finalizer). */
static inline RT_KHD uint64_t rt_kmix64(uint64_t x)
{
    x ^= x >> 30;
    x *= 0xbf58476d1ce4e5b9ULL;
    x ^= x >> 27;
    x *= 0x94d049bb133111ebULL;
    x ^= x >> 31;
    return x;
}

/* Bucketize a jagged batch by destination rank. Row-wise (seg_rank == NULL): the rank of an ID
 * is id mod nranks or rt_kmix64(id) mod nranks; IDs must be non-negative. Table-wise: every ID
 * of segment s goes to seg_rank[s]. The order is stable, so inside a rank IDs stay grouped by
 * segment. out_ids[pos[i]] = ids[i] (pos is FusedRec's I_s); rank r's IDs occupy
 * out_ids[rank_offsets[r] .. rank_offsets[r+1]); rank_seg_counts (nranks x nseg, rank-major,
 * may be NULL) tells the receiver each segment's share. */
rt_kstatus rt_kcpu_bucketize(const int64_t *ids, const int64_t *offsets, int64_t nseg,
                             const int32_t *seg_rank, rt_kbucket_fn fn, int32_t nranks,
                             int64_t *out_ids, int64_t *pos, int64_t *rank_offsets,
                             int64_t *rank_seg_counts);

/* ---- SPTT (DMT) data movement ---------------------------------------------------------- */

/* The input is an a x b grid of variable-size blocks stored a-major (block (i, j) holds
 * sizes[i*b + j] rows of row_bytes); the output stores the same blocks b-major. */
rt_kstatus rt_kcpu_block_transpose(const void *in, size_t row_bytes, int64_t a, int64_t b,
                                   const int64_t *sizes, void *out);
/* Peer permute: blocks in rank order r = host * gpus + local are reordered by (local, host). */
rt_kstatus rt_kcpu_sptt_peer_permute(const void *in, size_t row_bytes, int64_t hosts, int64_t gpus,
                                     const int64_t *rank_rows, void *out);
/* Shuffle a (features, peers) block layout into (peers, features). */
rt_kstatus rt_kcpu_sptt_shuffle(const void *in, size_t row_bytes, int64_t features, int64_t peers,
                                const int64_t *block_rows, void *out);

/* ---- merged tables (MTGRBoost) --------------------------------------------------------- */

/* Bits that hold the table index when ntables tables share one key space:
 * k = ceil(log2(ntables + 1)); merged ID = (table << (63 - k)) | id. */
int rt_kmerge_bits(int64_t ntables);
/* Returns RT_K_ERANGE when table or any id does not fit its field. */
rt_kstatus rt_kmerge_encode(const int64_t *ids, int64_t n, int64_t table, int bits, int64_t *out);
static inline RT_KHD int64_t rt_kmerge_table(int64_t merged, int bits)
{
    return (int64_t)((uint64_t)merged >> (63 - bits));
}
static inline RT_KHD int64_t rt_kmerge_local(int64_t merged, int bits)
{
    return (int64_t)((uint64_t)merged & ((UINT64_C(1) << (63 - bits)) - 1));
}

/* ---- dynamic hash embedding table (MTGRBoost, RecIS) ----------------------------------- */

/* Key structure: open addressing over 2^n slots of (key, row) with double-hashing probes of an
 * odd step, doubled when the load would pass max_load (0.75 by default); only keys and row
 * numbers move. Values:
 * fixed-size chunks of chunk_rows rows that never move; a current and a pre-allocated next
 * chunk are always present. Each row carries an LRU timestamp and an LFU count. */
typedef struct rt_khash rt_khash;

/* Reserved keys that mark empty and erased slots; they can never be inserted. */
#define RT_KHASH_EMPTY INT64_MIN
#define RT_KHASH_ERASED (INT64_MIN + 1)

typedef struct {
    int64_t dim;
    int64_t initial_slots; /* rounded up to a power of two, at least 16 */
    int64_t chunk_rows;
    uint64_t init_seed; /* new rows: uniform(-init_scale, init_scale) from (seed, key) */
    float init_scale;
    double max_load; /* in (0, 1): the key structure doubles past it; 0: 0.75 */
} rt_khash_cfg;

/* The load past which the key structure of CFG doubles. */
static inline RT_KHD double rt_khash_max_load(const rt_khash_cfg *cfg)
{
    return cfg->max_load > 0 ? cfg->max_load : 0.75;
}

typedef enum { RT_KEVICT_LRU, RT_KEVICT_LFU } rt_kevict;

rt_kstatus rt_khash_create(const rt_khash_cfg *cfg, rt_khash **out);
void rt_khash_free(rt_khash *h);
int64_t rt_khash_size(const rt_khash *h);
int64_t rt_khash_slots(const rt_khash *h);
int64_t rt_khash_chunks(const rt_khash *h);
int64_t rt_khash_dim(const rt_khash *h);
/* Each find / find_or_insert call is one tick of the clock used for LRU timestamps. */
int64_t rt_khash_clock(const rt_khash *h);

/* rows[i] = row of keys[i] or -1; hits update the row's counters. */
rt_kstatus rt_khash_find(rt_khash *h, const int64_t *keys, int64_t n, int64_t *rows);
/* Writes values (n x dim) under keys, inserting missing keys; rows may be NULL. */
rt_kstatus rt_khash_insert(rt_khash *h, const int64_t *keys, const float *values, int64_t n,
                           int64_t *rows);
/* rows[i] = row of keys[i]; missing keys are inserted with initialized values. Counters are
 * updated for all keys. *n_new (may be NULL) = number of keys inserted. */
rt_kstatus rt_khash_find_or_insert(rt_khash *h, const int64_t *keys, int64_t n, int64_t *rows,
                                   int64_t *n_new);
/* Removes keys (missing ones are ignored) and recycles their rows. */
rt_kstatus rt_khash_erase(rt_khash *h, const int64_t *keys, int64_t n);
/* Removes up to max_evict keys, oldest timestamp (LRU) or lowest count (LFU) first, ties by
 * key; evicted (may be NULL) receives them, *n_evicted their number. */
rt_kstatus rt_khash_evict(rt_khash *h, rt_kevict policy, int64_t max_evict, int64_t *evicted,
                          int64_t *n_evicted);
/* The dim floats of a row returned by find / insert; NULL for a row that is not live. */
float *rt_khash_row(rt_khash *h, int64_t row);
rt_kstatus rt_khash_counters(const rt_khash *h, int64_t row, int64_t *last_access, int64_t *count);
/* Gathers rows (n x dim) for keys through the table; a missing key is RT_K_ERANGE. */
rt_kstatus rt_khash_gather(rt_khash *h, const int64_t *keys, int64_t n, float *out);

/* ---- dense ----------------------------------------------------------------------------- */

/* The GEMM implementation rt_kcpu_gemm calls ("CBLAS libopenblas.so", or the built-in loop),
 * for calibration records. */
const char *rt_kcpu_gemm_library(void);

/* Row-major C = alpha * op(A) op(B) + beta * C with op(A) m x k, op(B) k x n. CBLAS when the
 * build found it, a cache-blocked loop otherwise. */
rt_kstatus rt_kcpu_gemm(int trans_a, int trans_b, int64_t m, int64_t n, int64_t k, float alpha,
                        const float *a, int64_t lda, const float *b, int64_t ldb, float beta,
                        float *c, int64_t ldc);

typedef enum { RT_KACT_NONE, RT_KACT_RELU, RT_KACT_SIGMOID } rt_kact;

/* y = act(x w^T + bias): x batch x in, w out x in, bias out (may be NULL), y batch x out. */
rt_kstatus rt_kcpu_linear_fwd(const float *x, int64_t batch, int64_t in, int64_t out,
                              const float *w, const float *bias, rt_kact act, float *y);
/* From the forward's x and y and the gradient dy: dx (may be NULL), dw, db (may be NULL). */
rt_kstatus rt_kcpu_linear_bwd(const float *x, const float *y, const float *dy, int64_t batch,
                              int64_t in, int64_t out, const float *w, rt_kact act, float *dx,
                              float *dw, float *db);

/* DLRM dot interaction: t is batch x nf x d (dense vector and embeddings); out is
 * batch x nf(nf-1)/2 with pairs (i, j), i > j, ordered i-major: (1,0), (2,0), (2,1), ... */
rt_kstatus rt_kcpu_dot_interact_fwd(const float *t, int64_t batch, int64_t nf, int64_t d,
                                    float *out);
rt_kstatus rt_kcpu_dot_interact_bwd(const float *t, const float *dout, int64_t batch, int64_t nf,
                                    int64_t d, float *dt);

/* DCN-v2 low-rank cross: p = xl v (batch x r), q = p u^T + bias (batch x d),
 * y = x0 * q + xl. u and v are d x r. p and q are saved for the backward. */
rt_kstatus rt_kcpu_dcn_cross_fwd(const float *x0, const float *xl, int64_t batch, int64_t d,
                                 int64_t r, const float *u, const float *v, const float *bias,
                                 float *p, float *q, float *y);
/* dx0 and dxl are written separately (the first layer, x0 == xl, sums them). */
rt_kstatus rt_kcpu_dcn_cross_bwd(const float *x0, const float *xl, const float *p, const float *q,
                                 const float *dy, int64_t batch, int64_t d, int64_t r,
                                 const float *u, const float *v, float *dx0, float *dxl, float *du,
                                 float *dv, float *dbias);

/* Jagged (total x d) to dense (nseg x max_len x d): longer segments are truncated, missing
 * positions filled with pad. dense_to_jagged is its inverse (and its backward, with pad 0):
 * truncated elements get 0. */
rt_kstatus rt_kcpu_jagged_to_dense(const float *values, const int64_t *offsets, int64_t nseg,
                                   int64_t d, int64_t max_len, float pad, float *dense);
rt_kstatus rt_kcpu_dense_to_jagged(const float *dense, const int64_t *offsets, int64_t nseg,
                                   int64_t d, int64_t max_len, float *values);

/* Jagged HSTU attention: q, k, v, out are total_tokens x heads x head_dim. For tokens i >= j of
 * one sequence: s = alpha * q_i . k_j + rab[h][min(i - j, nbias - 1)],
 * out_i = sum_j silu(s) * inv_n * v_j. rab (heads x nbias) may be NULL. */
typedef struct {
    int64_t heads;
    int64_t head_dim;
    int64_t nbias;
    float alpha;
    float inv_n;
} rt_khstu_cfg;

rt_kstatus rt_kcpu_hstu_attn_fwd(const float *q, const float *k, const float *v,
                                 const int64_t *offsets, int64_t nseq, const rt_khstu_cfg *c,
                                 const float *rab, float *out);
/* drab may be NULL (no bias gradient); it is overwritten, not accumulated. */
rt_kstatus rt_kcpu_hstu_attn_bwd(const float *q, const float *k, const float *v,
                                 const int64_t *offsets, int64_t nseq, const rt_khstu_cfg *c,
                                 const float *rab, const float *dout, float *dq, float *dk,
                                 float *dv, float *drab);

/* Unfused HSTU attention (plan.attention unfused): the fused kernels' math as separate passes
 * over a materialized score buffer S of rt_kcpu_attn_pairs floats (heads x the samples' causal
 * pairs: sample-major, then head, then packed rows i >= j). Forward: scores (S = alpha q.k +
 * rab), silu (A = silu(S) inv_n, pointwise over n floats), pv (out = A v). Backward: pv_bwd
 * (dA = dout.v, dv = A^T dout), silu_bwd (dS = dA inv_n silu'(S); ds may be da), scores_bwd
 * (dq, dk, and drab overwritten when not NULL). Equal to hstu_attn_* up to float rounding. */
rt_kstatus rt_kcpu_attn_pairs(const int64_t *offsets, int64_t nseq, const rt_khstu_cfg *c,
                              int64_t *n);
rt_kstatus rt_kcpu_attn_scores(const float *q, const float *k, const int64_t *offsets, int64_t nseq,
                               const rt_khstu_cfg *c, const float *rab, float *s);
rt_kstatus rt_kcpu_attn_silu(const float *s, int64_t n, float inv_n, float *a);
rt_kstatus rt_kcpu_attn_pv(const float *a, const float *v, const int64_t *offsets, int64_t nseq,
                           const rt_khstu_cfg *c, float *out);
rt_kstatus rt_kcpu_attn_pv_bwd(const float *a, const float *v, const float *dout,
                               const int64_t *offsets, int64_t nseq, const rt_khstu_cfg *c,
                               float *da, float *dv);
rt_kstatus rt_kcpu_attn_silu_bwd(const float *s, const float *da, int64_t n, float inv_n,
                                 float *ds);
rt_kstatus rt_kcpu_attn_scores_bwd(const float *q, const float *k, const float *ds,
                                   const int64_t *offsets, int64_t nseq, const rt_khstu_cfg *c,
                                   float *dq, float *dk, float *drab);
/* FuXi's position and time channels unfused (relpos_attn_*): relpos_weights writes the score
 * buffer's SiLU output P = silu(rab[h][min(i - j, nbias - 1)]) inv_n directly (no q.k);
 * attn_pv and attn_pv_bwd apply it; relpos_bias_bwd reduces pv_bwd's dA into drab
 * (required, overwritten). */
rt_kstatus rt_kcpu_relpos_weights(const int64_t *offsets, int64_t nseq, const rt_khstu_cfg *c,
                                  const float *rab, float *p);
rt_kstatus rt_kcpu_relpos_bias_bwd(const float *da, const int64_t *offsets, int64_t nseq,
                                   const rt_khstu_cfg *c, const float *rab, float *drab);

/* ---- dense optimizer ------------------------------------------------------------------- */

/* y[i] += a * x[i]. */
rt_kstatus rt_kcpu_axpy(int64_t n, float a, const float *x, float *y);

/* Adam (beta1 == 0 and beta2 == 0 with eps: plain SGD is kind SGD) over a flat fp32 buffer:
 * g' = g * grad_scale; m = b1 m + (1-b1) g'; v = b2 v + (1-b2) g'^2;
 * w -= lr * (m / (1 - b1^step)) / (sqrt(v / (1 - b2^step)) + eps). With kind SGD, w -= lr g'
 * and m, v are unused (may be NULL). */
typedef struct {
    rt_koptim kind; /* RT_KOPT_SGD or RT_KOPT_ADAM */
    float lr, beta1, beta2, eps;
    float grad_scale;
    int64_t step; /* >= 1 */
} rt_kadam;
rt_kstatus rt_kcpu_adam(int64_t n, const rt_kadam *opt, float *w, const float *g, float *m,
                        float *v);

/* ---- losses ---------------------------------------------------------------------------- */

/* Mean binary cross-entropy on logits and its gradient dlogits = (sigmoid(z) - y) / n. */
rt_kstatus rt_kcpu_bce_logits(const float *logits, const float *labels, int64_t n, float *loss,
                              float *dlogits);
/* Sampled softmax with shared negatives: logit_0 = q.pos / T, logit_k = q.neg_k / T - logq_k
 * (logq may be NULL: no correction). loss = mean over the batch of -log softmax_0. q and pos
 * are batch x d, neg is nneg x d; gradients have the shapes of their inputs. */
rt_kstatus rt_kcpu_sampled_softmax(const float *q, const float *pos, const float *neg,
                                   const float *logq, int64_t batch, int64_t nneg, int64_t d,
                                   float temperature, float *loss, float *dq, float *dpos,
                                   float *dneg);

/* Per-query negatives (seed 002 section 4.3). NEG holds ROWS blocks of NNEG x D embeddings,
 * block r gathered for query FIRST + r of NQ queries Q (nq x d). Query i scores the blocks of
 * queries i, i+1, ..., i+k-1 (wrapping over NQ), block i+t into columns COL + t*NNEG .. of its
 * row of LOGITS (leading dimension LD); one call writes the columns of the given blocks only,
 * so the blocks may come one segment at a time. The backward overwrites DNEG (the shape of
 * NEG) and adds into DQ. */
rt_kstatus rt_kcpu_neg_logits(const float *q, int64_t nq, int64_t d, const float *neg,
                              int64_t first, int64_t rows, int64_t nneg, int64_t k, float *logits,
                              int64_t ld, int64_t col);
rt_kstatus rt_kcpu_neg_logits_bwd(const float *q, int64_t nq, int64_t d, const float *neg,
                                  int64_t first, int64_t rows, int64_t nneg, int64_t k,
                                  const float *dlogits, int64_t ld, int64_t col, float *dq,
                                  float *dneg);
/* Softmax cross-entropy with column 0 the target, over ROWS rows of COLS logits: *loss is the
 * mean over rows of -log softmax_0, and LOGITS become SCALE * (softmax - onehot_0) in place. */
rt_kstatus rt_kcpu_softmax_xent(float *logits, int64_t rows, int64_t cols, float scale,
                                float *loss);

/* ---- generative-recommender blocks (HSTU, FuXi, MMoE) ---------------------------------- */

/* Elementwise, n floats; an output may be the same buffer as an input of the same shape. */
/* y = x sigmoid(x); dx = dy silu'(x) from the forward's input x. */
rt_kstatus rt_kcpu_silu_fwd(const float *x, int64_t n, float *y);
rt_kstatus rt_kcpu_silu_bwd(const float *x, const float *dy, int64_t n, float *dx);
/* y = a b (gating, SwiGLU); da = dy b, db = dy a. */
rt_kstatus rt_kcpu_mul_fwd(const float *a, const float *b, int64_t n, float *y);
rt_kstatus rt_kcpu_mul_bwd(const float *a, const float *b, const float *dy, int64_t n, float *da,
                           float *db);

/* Layer norm of each of ROWS rows of DIM floats, without scale or shift (HSTU's norms):
 * y = (x - mean) rstd, rstd = 1 / sqrt(var + eps) (biased variance). mean and rstd (ROWS floats
 * each) are saved for the backward, which reads the forward's x. */
rt_kstatus rt_kcpu_layernorm_fwd(const float *x, int64_t rows, int64_t dim, float eps, float *y,
                                 float *mean, float *rstd);
rt_kstatus rt_kcpu_layernorm_bwd(const float *x, const float *dy, int64_t rows, int64_t dim,
                                 const float *mean, const float *rstd, float *dx);

/* Softmax of each row (MMoE gates); the backward reads the forward's output y. */
rt_kstatus rt_kcpu_softmax_fwd(const float *x, int64_t rows, int64_t dim, float *y);
rt_kstatus rt_kcpu_softmax_bwd(const float *y, const float *dy, int64_t rows, int64_t dim,
                               float *dx);

/* MMoE gate-weighted sum of expert outputs: x is nexp x rows x dim (expert-major: each
 * expert's output is one contiguous block), g is rows x nexp, y[r] = sum_e g[r][e] x[e][r].
 * The backward writes dx (the shape of x) and dg (the shape of g). */
rt_kstatus rt_kcpu_mix_fwd(const float *x, const float *g, int64_t rows, int64_t nexp, int64_t dim,
                           float *y);
rt_kstatus rt_kcpu_mix_bwd(const float *x, const float *g, const float *dy, int64_t rows,
                           int64_t nexp, int64_t dim, float *dx, float *dg);

/* FuXi-alpha's positional channel: the jagged HSTU attention without the q.k term. For tokens
 * i >= j of one sequence, out_i = sum_j silu(rab[h][min(i - j, nbias - 1)]) * inv_n * v_j;
 * v and out are total_tokens x heads x head_dim, rab (heads x nbias) is required and c->alpha
 * is unused. drab may be NULL; it is overwritten, not accumulated. */
rt_kstatus rt_kcpu_relpos_attn_fwd(const float *v, const int64_t *offsets, int64_t nseq,
                                   const rt_khstu_cfg *c, const float *rab, float *out);
rt_kstatus rt_kcpu_relpos_attn_bwd(const float *v, const int64_t *offsets, int64_t nseq,
                                   const rt_khstu_cfg *c, const float *rab, const float *dout,
                                   float *dv, float *drab);

#ifdef __cplusplus
}
#endif

#endif
