/* The dense model of rectwin-exec on the device vtable: mlp, dot, dcn, hstu, fuxi and mmoe
 * layers, the BCE and sampled-softmax losses and the dense optimizer. Every tensor operation goes
 * through d->ops so the same code runs on the CPU and CUDA backends; the host only plans shapes,
 * builds index maps and keeps flags.
 *
 * Rows: a layer works on the batch's samples, or, when it reads the jagged sequence input or a
 * per-token layer (models/model_cost.c's per_token), on its tokens: T = sum of the samples'
 * lengths, the rows of every sequence table's n_ids x dim embeddings (all sequence tables share
 * one set of offsets; a token is the concatenation of one embedding of each, in table order).
 *
 * Concatenation: a row-major rows x W concatenation whose piece s has width w_s at column c_s
 * is one pitched row copy per piece (copy2d: rows of w_s floats, pitch W on the whole's side),
 * forward piece -> whole, backward whole -> piece gradient. It used to be a zero fill plus a
 * scatter in granules of gcd(w_s, c_s, W) floats, which is one float at a time for DLRM's
 * 479-wide interaction output: 0.09-0.16 ms forward and 0.19-0.25 ms backward at batch 128 on
 * a Zen 4 guest (experiments/measurements/cpu/interaction/exec-dot-timers.log).
 * A batch with more tokens than planned rebuilds the net larger, keeping its weights
 * (grow_tokens).
 *
 * Gradients of a layer output or an embedding that feeds several consumers are summed: the
 * first consumer to run its backward writes the gradient in place, the next ones write into a
 * scratch buffer and axpy it in (host flags say which case applies).
 *
 * The generative-recommender layers are exactly what models/model_cost.c costs, and every
 * forward counts the matmul-class FLOPs it runs (rt_dnet_layer_flops), which the tests compare
 * with the layer's fwd_flops polynomial:
 *   hstu stack: [input projection in -> d_model when they differ], then per block
 *     xn = layernorm(x); u, v, q, k = silu(xn W_p^T + b_p); a = attention(q, k, v) (jagged,
 *     causal, SiLU pointwise, relative bias, alpha = 1/sqrt(d_qk), 1/n = 1/nbias);
 *     y = x + (layernorm(a) * u) W_2^T + b_2.
 *   fuxi stack: per block the same projections with u three channels wide (semantic, position,
 *     time); a_sem = attention(q, k, v) without bias, a_pos and a_time = relpos attention of v
 *     with their own bias tables; g_c = layernorm(a_c) * u_c; h = x + sum_c g_c W0_c^T + b0
 *     (lin0); y = h + (silu(hn W_g^T + b_g) * (hn W_u^T + b_u)) W_d^T + b_d, hn = layernorm(h).
 *   mmoe: every expert an MLP on the input (ReLU after each of its linears), per task a softmax
 *     gate (linear in -> experts), the gate-weighted sum of the expert outputs, a tower MLP
 *     (ReLU between its linears, none after the last); the output is the tasks' tower outputs
 *     side by side. Per token after a sequence stack, as the cost model charges it (MTGR
 *     scores every candidate token), even where the loss reads only the last token.
 * Where the execution and the costing differ (bytes and parameters only; FLOPs agree):
 *   - the projection GEMMs run as one GEMM per output piece (u, v, q, k; lin0 per channel; FFN
 *     gate and up) so each piece is a contiguous buffer for the attention kernels: the same
 *     FLOPs, more launches;
 *   - SiLU is its own pass, not fused into the projection GEMM's epilogue, and norm(a) * u is
 *     two kernels (layer norm, product) where the cost model charges one: more bytes;
 *   - the relative bias tables (hstu: one per block, fuxi: position and time per block, each
 *     heads x nbias, nbias = the model's seq_len, longer distances sharing the last bucket) are
 *     trained parameters here, so they are in rt_dnet_grads and its AllReduce; model_cost.c
 *     does not count them (its convention, which reproduces TurboGR Table 1), so the plan's
 *     dense AllReduce of dense_params x 4 bytes is short by 4 x their size (--check-bytes
 *     reports it) until the model costs carry a count of trained-but-uncounted parameters;
 *   - the workload has no timestamps, so FuXi's time channel is indexed by the token distance
 *     like the position channel (with its own table): FuXi's shape and cost, not its signal;
 *   - dot interaction (not a sequence layer) runs n(n-1)/2 pair products, n(n-1) d FLOPs,
 *     where model_cost.c charges a full bmm, 2 n^2 d.
 *
 * Losses:
 *   bce: one logit per sample and task (the last layer is tasks x 1 wide); after a per-token
 *     last layer the logit is the sample's last token's (the candidate), since the workload
 *     has one label per sample; every task is trained on that label. The gradient is that of
 *     the global mean over samples and tasks.
 *   sampled_softmax: the query of token i is the last layer's output at i, its positive the
 *     token embedding of token i + 1 of the same sequence (the last token of a sequence has no
 *     target): Q = sum over samples of (len - 1) targets. Without the plan's negatives map,
 *     negatives are SHARED in-batch: the token embeddings at `negatives` token positions of
 *     this rank's batch, position k being hash(seed, k) mod T (iteration-independent; no extra
 *     lookup, no accidental-hit masking). With the map, each query has its own (neg_samples.h:
 *     per-query draws among the batch's real tokens, fp16 storage, logit sharing, offload);
 *     temperature 1, no logQ correction. Gradients reach the queries and the positive and
 *     negative token embeddings. The objective is PER SAMPLE: J = (1 / global_batch) sum over
 *     all ranks' targets of the cross-entropy, so ranks with more tokens weigh more, as TurboGR
 *     and MTGRBoost weight gradients by sample count; rt_dnet_loss_value reports this
 *     rank's mean per target token. */
#include "dense_net.h"

#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

/* ---- plan structures --------------------------------------------------------------------- */

/* Placement of the pieces of one concatenation (see the file comment). */
typedef struct {
    int n;
    int64_t width; /* W */
    int64_t *pw;   /* piece widths */
    int64_t *col;  /* first column of each piece in the whole */
} concat;

typedef enum { SEG_DENSE, SEG_EMB, SEG_LAYER, SEG_SEQ } seg_kind;

/* One contiguous input of a layer: dense features, a pooled table's embeddings, a sequence
 * table's token embeddings, or the output of an earlier layer, rows x width floats. */
typedef struct {
    seg_kind kind;
    int src; /* table or layer index */
} seg;

typedef struct {
    int64_t in, out;
    int64_t w_off, b_off; /* into the flat parameter buffer */
    rt_kact act;
    float *y;
} lin;

/* A linear piece without activation: W (out x in) at w_off, the bias at b_off (-1: none). */
typedef struct {
    int64_t in, out, w_off, b_off;
} plin;

typedef struct {
    int64_t u_off, v_off, b_off;
    float *p, *q, *y;
} cross;

enum { GR_MAX_CHAN = 3, GR_MAX_PIECES = GR_MAX_CHAN + 3 };

/* One HSTU or FuXi block: its parameters and the activations its backward reads, all
 * max_tokens rows. Projection pieces: u (one per channel), v, q, k. Buffers of several pieces
 * or channels hold them one after the other, T rows each, so they are contiguous for T. */
typedef struct {
    plin uvqk[GR_MAX_PIECES];
    plin out[GR_MAX_CHAN];        /* hstu: f2; fuxi: lin0, one column block per channel */
    plin ffn_in[2], ffn_out;      /* fuxi: SwiGLU gate and up, down */
    int64_t rab_off[GR_MAX_CHAN]; /* hstu: [0]; fuxi: [1] position, [2] time */
    float *xn, *mean, *rstd;      /* input norm */
    float *pre, *post;            /* projections before and after SiLU */
    float *attn, *an, *amean, *arstd, *gated;
    float *h, *hn, *hmean, *hrstd, *ffpre, *ffsilu, *ffm; /* fuxi MFFN */
    float *y;
    /* plan.attention unfused, saved for the backward: the causal scores, and per channel their
     * SiLU (channel c at sp + c * sc_cap) */
    float *sc, *sp;
} gblock;

typedef struct {
    int fuxi;
    int64_t d, heads, hd, A, chan, npieces, wu, ffn;
    int64_t poff[GR_MAX_PIECES + 1]; /* column offsets of the pieces in the projection */
    rt_khstu_cfg cfg;
    int has_proj;
    plin proj;
    float *xp; /* projected input */
    int nblocks;
    gblock *blk;
    /* Backward scratch shared by the blocks (they run one at a time). */
    float *dpost, *dgated, *dan, *dattn, *dxn, *dtmp, *dcur[2], *dffm, *dffpre, *dh;
    float *dsc;     /* plan.attention unfused: the scores' gradient */
    int64_t sc_cap; /* floats of sc, sp and dsc */
} gstack;

enum { MOE_MAX_TASKS = 64 };

typedef struct {
    int nexp, ntask, nel, ntl;
    int64_t s, tw; /* expert output and tower output widths */
    lin *experts;  /* nexp x nel */
    lin *towers;   /* ntask x ntl */
    plin *gates;   /* ntask */
    float *xe;     /* nexp x rows x s: expert outputs, one block each (the mix kernel's layout) */
    float *glog, *g, *mixed; /* ntask x rows x nexp gates before / after softmax, mixtures */
    concat outcat;           /* tasks' tower outputs side by side (ntask > 1) */
    float *dtow, *dmixed, *dxe, *dxe_tmp, *dg, *dglog, *dtmp;
} moe;

typedef struct {
    const rt_layer *def;
    int per_token;    /* rows are tokens, not samples */
    int64_t max_rows; /* max_tokens or max_batch */
    double flops;     /* matmul-class FLOPs of the last forward */
    int nseg;
    seg *segs;
    const float **src; /* the segments' buffers this iteration */
    concat in;         /* placement of segs in the flat input (in.width = input width) */
    float *xcat;       /* the concatenated input; NULL when the single segment is used in place */
    const float *x;    /* the input this iteration's forward read (saved for the backward) */
    float *out;        /* rows x out_w */
    int64_t out_w;
    int needs_dx; /* some segment has a gradient to receive */
    int nlin;     /* mlp */
    lin *lins;
    int64_t nf, dim; /* dot: nf vectors of dim */
    float *pairs, *v0buf;
    const float *v0;
    /* device: b * nf, the first vector of each sample with t viewed as rows of dim */
    int64_t *v0_idx;
    concat dout; /* dot output = [v0, pairs] */
    int ncross;  /* dcn */
    int64_t rank;
    cross *cr;
    gstack *gr; /* hstu, fuxi */
    moe *mo;    /* mmoe */
} dlayer;

/* A gradient a backward writes into: an embedding's or a layer output's. */
typedef struct {
    float *buf;
    int written; /* this iteration; reset by rt_dnet_loss */
} gtarget;

/* A parameter tensor: initialized uniform(-bound, bound), bound = 1/sqrt(fan_in), or zero. */
typedef struct {
    int64_t off, count, fan_in;
} ptensor;

struct rt_dnet {
    const rt_model *m;
    rt_xdev *d;
    int max_batch;
    int64_t max_tokens;
    uint64_t seed;
    int nl;
    dlayer *L;
    gtarget *tg; /* [n_tables] embedding gradients, then [n_layers] layer output gradients */
    int64_t nparams;
    int npt, cap_pt;
    ptensor *pt;
    float *params, *grads, *adam_m, *adam_v;
    int64_t step;
    rt_dnet_opt opt;
    /* Backward scratch shared by all layers (they run one at a time): work[] for a layer's
     * internal gradients, work_in for a concatenated input's gradient, acc for the
     * sum-into-target path. */
    int64_t need_work, need_in, need_acc;
    float *work[3], *work_in, *acc;
    float *loss; /* device float */
    int have_loss;
    int batch; /* rows of this iteration, 0 before the first rt_dnet_set_batch */
    double global_batch;
    const float *dense, *labels;
    const float **emb;
    /* Sequence input: the first sequence table (-1: none), their number and total width. */
    int seq0, nseqt;
    int64_t tokw;
    int64_t tokens;         /* T of this iteration */
    double pairs;           /* sum over samples of L (L + 1) / 2: causal attention pairs */
    const int64_t *seq_off; /* device offsets[batch + 1] of this iteration */
    /* Loss. bce: NLOG logits per sample; after a per-token last layer, d_last picks each
     * sample's last token; with several tasks d_rep repeats each label. */
    int ssm;
    int nlog;
    int64_t *d_last, *d_rep, *h_idx;
    float *lg, *lab, *dls;
    /* sampled softmax: NQ queries at d_qidx, positives at d_pidx, NNEG negatives at d_nidx */
    int64_t nneg, nq;
    int64_t *d_qidx, *d_pidx, *d_nidx;
    float *sq, *sp, *sn, *dq, *dp, *dn, *stmp, *tokbuf, *dtok;
    rt_xneg *xneg; /* per-query negatives (the plan's negatives map), else NULL */
    const rt_neg_cfg *neg_cfg;
    rt_kdtype neg_stored;
    concat seqcat; /* the sequence tables side by side (nseqt > 1) */
    /* Every device allocation, released by rt_dnet_free. */
    int nbufs, cap_bufs;
    void **bufs;
};

/* ---- small helpers ----------------------------------------------------------------------- */

static int fail(FILE *err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int fail(FILE *err, const char *fmt, ...)
{
    if (!err) return -1;
    va_list ap;
    fputs("dense net: ", err);
    va_start(ap, fmt);
    vfprintf(err, fmt, ap);
    va_end(ap);
    fputc('\n', err);
    return -1;
}

static const char *name_or(const char *s)
{
    return s ? s : "?";
}

static const char *lname(const dlayer *l)
{
    return l ? name_or(l->def->name) : "loss";
}

static int kcheck(rt_kstatus st, const char *what, const dlayer *l, FILE *err)
{
    if (st == RT_K_OK) return 0;
    if (l) return fail(err, "layer %s: %s: %s", name_or(l->def->name), what, rt_kstatus_str(st));
    return fail(err, "%s: %s", what, rt_kstatus_str(st));
}

/* Device memory owned by the net; the request is kept in the message when it cannot be met. */
static void *dalloc(rt_dnet *n, size_t bytes, FILE *err)
{
    if (n->nbufs == n->cap_bufs) {
        int cap = n->cap_bufs ? 2 * n->cap_bufs : 32;
        void **nb = realloc(n->bufs, sizeof *nb * (size_t)cap);
        if (!nb) {
            fail(err, "out of host memory");
            return NULL;
        }
        n->bufs = nb;
        n->cap_bufs = cap;
    }
    void *p = n->d->ops->alloc(n->d, bytes ? bytes : sizeof(float));
    if (!p) {
        fail(err, "out of %s device memory: %zu bytes asked for, %zu in use", n->d->ops->name,
             bytes, n->d->bytes_now);
        return NULL;
    }
    n->bufs[n->nbufs++] = p;
    return p;
}

static float *dfloats(rt_dnet *n, int64_t count, FILE *err)
{
    return dalloc(n, (size_t)count * sizeof(float), err);
}

static int64_t add_params(rt_dnet *n, int64_t count, int64_t fan_in, FILE *err)
{
    if (n->npt == n->cap_pt) {
        int cap = n->cap_pt ? 2 * n->cap_pt : 16;
        ptensor *np = realloc(n->pt, sizeof *np * (size_t)cap);
        if (!np) return fail(err, "out of host memory");
        n->pt = np;
        n->cap_pt = cap;
    }
    int64_t off = n->nparams;
    n->pt[n->npt++] = (ptensor){off, count, fan_in};
    n->nparams += count;
    return off;
}

static void need(int64_t *slot, int64_t floats)
{
    if (floats > *slot) *slot = floats;
}

static int64_t rows_of(const rt_dnet *n, const dlayer *l)
{
    return l->per_token ? n->tokens : n->batch;
}

static int dzero(rt_dnet *n, float *p, int64_t count, const dlayer *l, FILE *err)
{
    if (n->d->ops->zero(n->d, p, sizeof(float) * (size_t)count))
        return fail(err, "layer %s: zeroing a buffer failed", lname(l));
    return 0;
}

/* dst = a * src (COUNT floats), through zero and axpy. */
static int scaled_copy(rt_dnet *n, float *dst, const float *src, int64_t count, float a,
                       const dlayer *l, FILE *err)
{
    if (dzero(n, dst, count, l, err)) return -1;
    return kcheck(n->d->ops->axpy(n->d, count, a, src, dst), "scaled copy", l, err);
}

static int add_into(rt_dnet *n, float *dst, const float *src, int64_t count, const dlayer *l,
                    FILE *err)
{
    return kcheck(n->d->ops->axpy(n->d, count, 1.0f, src, dst), "accumulation", l, err);
}

static int upload_i64(rt_dnet *n, int64_t *dst, const int64_t *src, int64_t count, FILE *err)
{
    if (count > 0 && n->d->ops->copy(n->d, dst, src, sizeof *src * (size_t)count, RT_XCOPY_H2D))
        return fail(err, "index upload failed");
    return 0;
}

/* ---- linear pieces ----------------------------------------------------------------------- */

static int plin_make(rt_dnet *n, plin *f, int64_t in, int64_t out, int64_t fan_in, int bias,
                     FILE *err)
{
    f->in = in;
    f->out = out;
    f->w_off = add_params(n, out * in, fan_in, err);
    f->b_off = bias ? add_params(n, out, fan_in, err) : -1;
    return f->w_off < 0 || (bias && f->b_off < 0) ? -1 : 0;
}

static int plin_fwd(rt_dnet *n, dlayer *l, const plin *f, const float *x, int64_t rows, float *y,
                    FILE *err)
{
    rt_kstatus st =
        n->d->ops->linear_fwd(n->d, x, rows, f->in, f->out, n->params + f->w_off,
                              f->b_off >= 0 ? n->params + f->b_off : NULL, RT_KACT_NONE, y);
    l->flops += 2.0 * (double)rows * (double)f->in * (double)f->out;
    return kcheck(st, "linear forward", l, err);
}

/* Writes the weight (and bias) gradient and, when DX is set, the input gradient. Without an
 * activation the kernel ignores y; dy stands in for it. */
static int plin_bwd(rt_dnet *n, const dlayer *l, const plin *f, const float *x, const float *dy,
                    int64_t rows, float *dx, FILE *err)
{
    rt_kstatus st = n->d->ops->linear_bwd(
        n->d, x, dy, dy, rows, f->in, f->out, n->params + f->w_off, RT_KACT_NONE, dx,
        n->grads + f->w_off, f->b_off >= 0 ? n->grads + f->b_off : NULL);
    return kcheck(st, "linear backward", l, err);
}

/* DX = (FIRST) or += the input gradient of F; later pieces go through TMP. */
static int plin_bwd_acc(rt_dnet *n, const dlayer *l, const plin *f, const float *x, const float *dy,
                        int64_t rows, float *dx, int first, float *tmp, FILE *err)
{
    if (!dx || first) return plin_bwd(n, l, f, x, dy, rows, dx, err);
    if (plin_bwd(n, l, f, x, dy, rows, tmp, err)) return -1;
    return add_into(n, dx, tmp, rows * f->in, l, err);
}

/* ---- concatenation ----------------------------------------------------------------------- */

/* Plans the concatenation of pieces of widths PW (taken over). */
static int concat_plan(concat *c, int np, int64_t *pw, FILE *err)
{
    c->n = np;
    c->pw = pw;
    c->col = calloc((size_t)np, sizeof *c->col);
    if (!c->col) return fail(err, "out of host memory");
    c->width = 0;
    for (int i = 0; i < np; i++) {
        c->col[i] = c->width;
        c->width += pw[i];
    }
    return 0;
}

static void concat_free(concat *c)
{
    free(c->pw);
    free(c->col);
}

/* Who a concatenation belongs to, for messages: a layer's input or output, or (no layer) the
 * sequence tables' tokens. */
static const char *concat_owner(const dlayer *l)
{
    return l ? name_or(l->def->name) : "sequence tokens";
}

static int concat_fwd(rt_dnet *n, const concat *c, const float *const *src, int64_t rows,
                      float *dst, const dlayer *l, FILE *err)
{
    rt_xdev *d = n->d;
    const size_t f = sizeof(float);
    for (int i = 0; i < c->n; i++)
        if (d->ops->copy2d(d, dst + c->col[i], f * (size_t)c->width, src[i], f * (size_t)c->pw[i],
                           f * (size_t)c->pw[i], (size_t)rows))
            return fail(err, "%s%s: concatenating piece %d failed", l ? "layer " : "",
                        concat_owner(l), i);
    return 0;
}

/* dst = piece I of the concatenation's gradient DCAT. */
static int concat_piece_grad(rt_dnet *n, const concat *c, int i, const float *dcat, int64_t rows,
                             float *dst, const dlayer *l, FILE *err)
{
    const size_t f = sizeof(float);
    if (n->d->ops->copy2d(n->d, dst, f * (size_t)c->pw[i], dcat + c->col[i], f * (size_t)c->width,
                          f * (size_t)c->pw[i], (size_t)rows))
        return fail(err, "%s%s: splitting piece %d of the gradient failed", l ? "layer " : "",
                    concat_owner(l), i);
    return 0;
}

/* ---- segments and gradient targets ------------------------------------------------------- */

static const float *seg_ptr(const rt_dnet *n, const seg *s)
{
    switch (s->kind) {
    case SEG_DENSE:
        return n->dense;
    case SEG_EMB:
    case SEG_SEQ:
        return n->emb[s->src];
    case SEG_LAYER:
        return n->L[s->src].out;
    }
    return NULL;
}

static int64_t seg_width(const rt_dnet *n, const seg *s)
{
    switch (s->kind) {
    case SEG_DENSE:
        return n->m->dense_features;
    case SEG_EMB:
    case SEG_SEQ:
        return n->m->tables[s->src].dim;
    case SEG_LAYER:
        return n->L[s->src].out_w;
    }
    return 0;
}

/* Dense features are data, not parameters: they receive no gradient. */
static gtarget *seg_target(rt_dnet *n, const seg *s)
{
    switch (s->kind) {
    case SEG_DENSE:
        return NULL;
    case SEG_EMB:
    case SEG_SEQ:
        return &n->tg[s->src];
    case SEG_LAYER:
        return &n->tg[n->m->n_tables + s->src];
    }
    return NULL;
}

/* Adds COUNT floats of SRC into target T, or lets them stand when T holds nothing yet. */
static int target_add(rt_dnet *n, gtarget *t, const float *src, int64_t count, const dlayer *l,
                      FILE *err)
{
    if (src != t->buf &&
        kcheck(n->d->ops->axpy(n->d, count, 1.0f, src, t->buf), "gradient accumulation", l, err))
        return -1;
    t->written = 1;
    return 0;
}

/* Where the backward writes d loss / d input: the concatenation's gradient, or for a single
 * segment straight into its target when that holds nothing yet. NULL: nothing needs it. */
static float *in_grad_dst(rt_dnet *n, dlayer *l)
{
    if (!l->needs_dx) return NULL;
    if (l->nseg > 1) return n->work_in;
    gtarget *t = seg_target(n, &l->segs[0]);
    return t->written ? n->acc : t->buf;
}

static int in_grad_finish(rt_dnet *n, dlayer *l, const float *dx, int64_t rows, FILE *err)
{
    if (!dx) return 0;
    if (l->nseg == 1)
        return target_add(n, seg_target(n, &l->segs[0]), dx, rows * l->in.width, l, err);
    for (int i = 0; i < l->nseg; i++) {
        gtarget *t = seg_target(n, &l->segs[i]);
        if (!t) continue;
        float *dst = t->written ? n->acc : t->buf;
        if (concat_piece_grad(n, &l->in, i, dx, rows, dst, l, err) ||
            target_add(n, t, dst, rows * l->in.pw[i], l, err))
            return -1;
    }
    return 0;
}

/* A layer output nobody consumed has a zero gradient. */
static float *out_grad(rt_dnet *n, int li, FILE *err)
{
    gtarget *t = &n->tg[n->m->n_tables + li];
    if (!t->written) {
        const dlayer *l = &n->L[li];
        if (dzero(n, t->buf, rows_of(n, l) * l->out_w, l, err)) return NULL;
        t->written = 1;
    }
    return t->buf;
}

/* ---- mlp chains (mlp layers, MMoE experts and towers) ------------------------------------ */

/* Plans NL linears from width IN through SIZES; ReLU after each but the last, and after the
 * last too when RELU_LAST. The last output buffer is left to the caller when !ALLOC_LAST. */
static int chain_build(rt_dnet *n, lin *f, int nl, int64_t in, const int *sizes, int relu_last,
                       int alloc_last, int64_t max_rows, FILE *err)
{
    int64_t widest = 0;
    for (int i = 0; i < nl; i++) {
        f[i].in = in;
        f[i].out = sizes[i];
        f[i].act = (i + 1 < nl || relu_last) ? RT_KACT_RELU : RT_KACT_NONE;
        f[i].w_off = add_params(n, f[i].out * f[i].in, f[i].in, err);
        f[i].b_off = add_params(n, f[i].out, f[i].in, err);
        if (f[i].w_off < 0 || f[i].b_off < 0) return -1;
        if ((i + 1 < nl || alloc_last) && !(f[i].y = dfloats(n, max_rows * f[i].out, err)))
            return -1;
        if (f[i].out > widest) widest = f[i].out;
        in = f[i].out;
    }
    need(&n->need_work, max_rows * widest);
    return 0;
}

static int chain_fwd(rt_dnet *n, dlayer *l, lin *f, int nl, const float *x, int64_t rows, FILE *err)
{
    for (int i = 0; i < nl; i++) {
        rt_kstatus st =
            n->d->ops->linear_fwd(n->d, x, rows, f[i].in, f[i].out, n->params + f[i].w_off,
                                  n->params + f[i].b_off, f[i].act, f[i].y);
        if (kcheck(st, "linear forward", l, err)) return -1;
        l->flops += 2.0 * (double)rows * (double)f[i].in * (double)f[i].out;
        x = f[i].y;
    }
    return 0;
}

/* DY must not be work[0] or work[1]: the chain ping-pongs between them. DX0 may be NULL. */
static int chain_bwd(rt_dnet *n, const dlayer *l, const lin *f, int nl, const float *x0,
                     const float *dy, int64_t rows, float *dx0, FILE *err)
{
    for (int i = nl - 1; i >= 0; i--) {
        const float *x = i ? f[i - 1].y : x0;
        /* Ping-pong: linear i's dy lives in work[(i + 1) & 1] (or DY), its dx in work[i & 1]. */
        float *dx = i ? n->work[i & 1] : dx0;
        rt_kstatus st = n->d->ops->linear_bwd(n->d, x, f[i].y, dy, rows, f[i].in, f[i].out,
                                              n->params + f[i].w_off, f[i].act, dx,
                                              n->grads + f[i].w_off, n->grads + f[i].b_off);
        if (kcheck(st, "linear backward", l, err)) return -1;
        dy = dx;
    }
    return 0;
}

/* ---- mlp --------------------------------------------------------------------------------- */

static int mlp_build(rt_dnet *n, dlayer *l, FILE *err)
{
    const rt_layer *def = l->def;
    l->nlin = def->n_sizes;
    l->lins = calloc((size_t)l->nlin, sizeof *l->lins);
    if (!l->lins) return fail(err, "out of host memory");
    if (chain_build(n, l->lins, l->nlin, l->in.width, def->sizes, def->activation_last, 1,
                    l->max_rows, err))
        return -1;
    l->out = l->lins[l->nlin - 1].y;
    l->out_w = l->lins[l->nlin - 1].out;
    return 0;
}

static int mlp_fwd(rt_dnet *n, dlayer *l, FILE *err)
{
    return chain_fwd(n, l, l->lins, l->nlin, l->x, rows_of(n, l), err);
}

static int mlp_bwd(rt_dnet *n, dlayer *l, const float *dout, FILE *err)
{
    float *dx0 = in_grad_dst(n, l);
    int64_t rows = rows_of(n, l);
    if (chain_bwd(n, l, l->lins, l->nlin, l->x, dout, rows, dx0, err)) return -1;
    return in_grad_finish(n, l, dx0, rows, err);
}

/* ---- dot interaction --------------------------------------------------------------------- */

/* A device map of B * NF for b < max_rows: the first vector of each row when the row's nf
 * vectors are viewed as rows of their own. */
static int64_t *first_vector_map(rt_dnet *n, int64_t nf, int64_t mb, FILE *err)
{
    int64_t *h = malloc(sizeof *h * (size_t)mb);
    if (!h) {
        fail(err, "out of host memory");
        return NULL;
    }
    for (int64_t b = 0; b < mb; b++)
        h[b] = b * nf;
    int64_t *dev = dalloc(n, sizeof *h * (size_t)mb, err);
    if (dev && n->d->ops->copy(n->d, dev, h, sizeof *h * (size_t)mb, RT_XCOPY_H2D)) {
        fail(err, "index map upload failed");
        dev = NULL;
    }
    free(h);
    return dev;
}

static int dot_build(rt_dnet *n, dlayer *l, FILE *err)
{
    l->dim = l->def->in_width; /* model_cost.c: the common width of the input vectors */
    for (int i = 0; i < l->nseg && l->dim > 0; i++)
        if (seg_width(n, &l->segs[i]) % l->dim) l->dim = -1;
    if (l->dim <= 0 || l->in.width != (int64_t)l->def->in_vectors * l->dim)
        return fail(err, "layer %s: dot needs input vectors of one width (costs not computed?)",
                    name_or(l->def->name));
    l->nf = l->def->in_vectors;
    if (l->nf < 2)
        return fail(err, "layer %s: dot needs at least two input vectors", name_or(l->def->name));
    int64_t np = l->nf * (l->nf - 1) / 2, mb = l->max_rows;
    l->pairs = dfloats(n, mb * np, err);
    /* The map serves the forward (first vector of a wider first input) and the backward
     * (scatter of the passed-through vector's gradient into dt). */
    l->v0_idx = first_vector_map(n, l->nf, mb, err);
    if (!l->pairs || !l->v0_idx) return -1;
    if (seg_width(n, &l->segs[0]) != l->dim && !(l->v0buf = dfloats(n, mb * l->dim, err)))
        return -1;
    int64_t *pw = malloc(2 * sizeof *pw);
    if (!pw) return fail(err, "out of host memory");
    pw[0] = l->dim;
    pw[1] = np;
    if (concat_plan(&l->dout, 2, pw, err)) return -1;
    l->out_w = l->dim + np;
    if (!(l->out = dfloats(n, mb * l->out_w, err))) return -1;
    need(&n->need_work, mb * (np > l->dim ? np : l->dim));
    return 0;
}

static int dot_fwd(rt_dnet *n, dlayer *l, FILE *err)
{
    rt_xdev *d = n->d;
    int64_t rows = rows_of(n, l);
    if (kcheck(d->ops->dot_interact_fwd(d, l->x, rows, l->nf, l->dim, l->pairs), "dot forward", l,
               err))
        return -1;
    /* The kernel computes the nf(nf-1)/2 pairs only (model_cost.c charges 2 nf^2 dim). */
    l->flops += (double)rows * (double)(l->nf * (l->nf - 1) * l->dim);
    l->v0 = l->v0buf ? l->v0buf : seg_ptr(n, &l->segs[0]);
    if (l->v0buf &&
        kcheck(d->ops->gather_rows(d, l->x, rows * l->nf, l->dim, l->v0_idx, rows, l->v0buf),
               "first vector", l, err))
        return -1;
    const float *src[2] = {l->v0, l->pairs};
    return concat_fwd(n, &l->dout, src, rows, l->out, l, err);
}

static int dot_bwd(rt_dnet *n, dlayer *l, const float *dout, FILE *err)
{
    float *dt = in_grad_dst(n, l);
    if (!dt) return 0; /* no parameters, and nothing upstream wants a gradient */
    rt_xdev *d = n->d;
    int64_t rows = rows_of(n, l);
    float *dpairs = n->work[0], *dv0 = n->work[1];
    if (concat_piece_grad(n, &l->dout, 1, dout, rows, dpairs, l, err) ||
        concat_piece_grad(n, &l->dout, 0, dout, rows, dv0, l, err))
        return -1;
    if (kcheck(d->ops->dot_interact_bwd(d, l->x, dpairs, rows, l->nf, l->dim, dt), "dot backward",
               l, err))
        return -1;
    /* The first vector is also passed through to the output: add its gradient. */
    if (kcheck(d->ops->scatter_add_rows(d, dv0, rows, l->dim, l->v0_idx, rows * l->nf, dt),
               "first-vector gradient", l, err))
        return -1;
    return in_grad_finish(n, l, dt, rows, err);
}

/* ---- dcn --------------------------------------------------------------------------------- */

static int dcn_build(rt_dnet *n, dlayer *l, FILE *err)
{
    int64_t w = l->in.width, r = l->def->rank, mb = l->max_rows;
    l->ncross = l->def->num_layers;
    l->rank = r;
    l->cr = calloc((size_t)l->ncross, sizeof *l->cr);
    if (!l->cr) return fail(err, "out of host memory");
    for (int c = 0; c < l->ncross; c++) {
        cross *x = &l->cr[c];
        /* v contracts x_l (fan-in W), u contracts p (fan-in r); the bias starts at zero as in
         * DCN-v2, which the zero fan-in below selects. */
        x->u_off = add_params(n, w * r, r, err);
        x->v_off = add_params(n, w * r, w, err);
        x->b_off = add_params(n, w, 0, err);
        x->p = dfloats(n, mb * r, err);
        x->q = dfloats(n, mb * w, err);
        x->y = dfloats(n, mb * w, err);
        if (x->u_off < 0 || x->v_off < 0 || x->b_off < 0 || !x->p || !x->q || !x->y) return -1;
    }
    l->out = l->cr[l->ncross - 1].y;
    l->out_w = w;
    need(&n->need_work, mb * w);
    need(&n->need_in, mb * w); /* the dropped input gradient when nothing upstream wants it */
    return 0;
}

static int dcn_fwd(rt_dnet *n, dlayer *l, FILE *err)
{
    int64_t rows = rows_of(n, l);
    for (int c = 0; c < l->ncross; c++) {
        cross *x = &l->cr[c];
        const float *xl = c ? l->cr[c - 1].y : l->x;
        rt_kstatus st = n->d->ops->dcn_cross_fwd(n->d, l->x, xl, rows, l->in.width, l->rank,
                                                 n->params + x->u_off, n->params + x->v_off,
                                                 n->params + x->b_off, x->p, x->q, x->y);
        if (kcheck(st, "cross forward", l, err)) return -1;
        l->flops += 4.0 * (double)rows * (double)l->in.width * (double)l->rank;
    }
    return 0;
}

static int dcn_bwd(rt_dnet *n, dlayer *l, const float *dout, FILE *err)
{
    int64_t rows = rows_of(n, l), w = l->in.width, count = rows * w;
    float *dx = in_grad_dst(n, l);
    /* The cross kernels always produce input gradients; without a consumer they land in
     * work_in and are dropped. */
    float *dx0 = dx ? dx : n->work_in;
    const float *dy = dout;
    for (int c = l->ncross - 1; c >= 0; c--) {
        cross *x = &l->cr[c];
        const float *xl = c ? l->cr[c - 1].y : l->x;
        float *dx0_c = c == l->ncross - 1 ? dx0 : n->work[2];
        float *dxl_c = n->work[c & 1];
        rt_kstatus st =
            n->d->ops->dcn_cross_bwd(n->d, l->x, xl, x->p, x->q, dy, rows, w, l->rank,
                                     n->params + x->u_off, n->params + x->v_off, dx0_c, dxl_c,
                                     n->grads + x->u_off, n->grads + x->v_off, n->grads + x->b_off);
        if (kcheck(st, "cross backward", l, err)) return -1;
        if (dx0_c != dx0 &&
            kcheck(n->d->ops->axpy(n->d, count, 1.0f, dx0_c, dx0), "x0 gradient", l, err))
            return -1;
        dy = dxl_c;
    }
    /* The first cross reads x0 as x_l too. */
    if (kcheck(n->d->ops->axpy(n->d, count, 1.0f, dy, dx0), "x0 gradient", l, err)) return -1;
    return in_grad_finish(n, l, dx, rows, err);
}

/* ---- hstu and fuxi stacks ---------------------------------------------------------------- */

#define GR_NORM_EPS 1e-5f

static int gblock_alloc(rt_dnet *n, const gstack *g, gblock *b, FILE *err)
{
    int64_t mt = n->max_tokens, d = g->d, ca = g->chan * g->A;
    b->xn = dfloats(n, mt * d, err);
    b->mean = dfloats(n, mt, err);
    b->rstd = dfloats(n, mt, err);
    b->pre = dfloats(n, mt * g->wu, err);
    b->post = dfloats(n, mt * g->wu, err);
    b->attn = dfloats(n, mt * ca, err);
    b->an = dfloats(n, mt * ca, err);
    b->amean = dfloats(n, mt * g->chan, err);
    b->arstd = dfloats(n, mt * g->chan, err);
    b->gated = dfloats(n, mt * ca, err);
    b->y = dfloats(n, mt * d, err);
    if (!b->xn || !b->mean || !b->rstd || !b->pre || !b->post || !b->attn || !b->an || !b->amean ||
        !b->arstd || !b->gated || !b->y)
        return -1;
    if (!g->fuxi) return 0;
    b->h = dfloats(n, mt * d, err);
    b->hn = dfloats(n, mt * d, err);
    b->hmean = dfloats(n, mt, err);
    b->hrstd = dfloats(n, mt, err);
    b->ffpre = dfloats(n, 2 * mt * g->ffn, err);
    b->ffsilu = dfloats(n, mt * g->ffn, err);
    b->ffm = dfloats(n, mt * g->ffn, err);
    return b->h && b->hn && b->hmean && b->hrstd && b->ffpre && b->ffsilu && b->ffm ? 0 : -1;
}

static int gblock_params(rt_dnet *n, const gstack *g, gblock *b, FILE *err)
{
    int64_t d = g->d;
    for (int p = 0; p < g->npieces; p++)
        if (plin_make(n, &b->uvqk[p], d, g->poff[p + 1] - g->poff[p], d, 1, err)) return -1;
    /* lin0's fan-in is its whole input, the channels side by side; one bias for the sum. */
    for (int c = 0; c < g->chan; c++)
        if (plin_make(n, &b->out[c], g->A, d, g->chan * g->A, c == 0, err)) return -1;
    /* HSTU's relative bias starts at zero (fan-in 0): the attention begins position-blind.
     * FuXi's position and time tables are the whole weight of their channel, so they start
     * uniform(-1, 1) (fan-in 1): a zero table would make the channel all zero, and its layer
     * norm would then have nothing but eps to divide by. */
    for (int c = g->fuxi ? 1 : 0; c < (g->fuxi ? 3 : 1); c++)
        if ((b->rab_off[c] = add_params(n, g->heads * g->cfg.nbias, g->fuxi ? 1 : 0, err)) < 0)
            return -1;
    if (!g->fuxi) return 0;
    if (plin_make(n, &b->ffn_in[0], d, g->ffn, d, 1, err) ||
        plin_make(n, &b->ffn_in[1], d, g->ffn, d, 1, err) ||
        plin_make(n, &b->ffn_out, g->ffn, d, g->ffn, 1, err))
        return -1;
    return 0;
}

static int gr_build(rt_dnet *n, dlayer *l, FILE *err)
{
    const rt_layer *def = l->def;
    if (!l->per_token)
        return fail(err, "layer %s: %s needs the sequence input", name_or(def->name),
                    rt_layer_kind_names[def->kind]);
    if (def->d_qk != def->d_v)
        return fail(err,
                    "layer %s: d_qk %d != d_v %d: the jagged attention kernels take one head "
                    "dimension",
                    name_or(def->name), def->d_qk, def->d_v);
    gstack *g = l->gr = calloc(1, sizeof *g);
    if (!g) return fail(err, "out of host memory");
    int64_t in = l->in.width, mt = n->max_tokens;
    g->fuxi = def->kind == RT_LAYER_FUXI;
    g->d = def->d_model ? def->d_model : in;
    g->heads = def->heads;
    g->hd = def->d_qk;
    g->A = g->heads * def->d_v;
    g->chan = g->fuxi ? 3 : 1;
    g->npieces = g->chan + 3;
    g->ffn = g->fuxi ? (int64_t)def->ffn_mult * g->d : 0;
    for (int p = 0; p < g->npieces; p++)
        g->poff[p + 1] = g->poff[p] + (p <= g->chan ? g->A : g->heads * def->d_qk);
    g->wu = g->poff[g->npieces];
    /* The bias covers the nominal sequence length; longer distances share the last bucket, and
     * 1/n is its inverse, fixed so the scale does not change with the batch. */
    int64_t nbias = n->m->seq_len > 0 ? n->m->seq_len : mt / n->max_batch;
    if (nbias < 1) nbias = 1;
    g->cfg = (rt_khstu_cfg){g->heads, g->hd, nbias, (float)(1.0 / sqrt((double)g->hd)),
                            (float)(1.0 / (double)nbias)};
    g->has_proj = g->d != in;
    if (g->has_proj &&
        (plin_make(n, &g->proj, in, g->d, in, 1, err) || !(g->xp = dfloats(n, mt * g->d, err))))
        return -1;
    g->nblocks = def->num_layers;
    g->blk = calloc((size_t)g->nblocks, sizeof *g->blk);
    if (!g->blk) return fail(err, "out of host memory");
    for (int b = 0; b < g->nblocks; b++)
        if (gblock_params(n, g, &g->blk[b], err) || gblock_alloc(n, g, &g->blk[b], err)) return -1;
    int64_t ca = g->chan * g->A, d = g->d;
    g->dpost = dfloats(n, mt * g->wu, err);
    g->dgated = dfloats(n, mt * ca, err);
    g->dan = dfloats(n, mt * ca, err);
    g->dattn = dfloats(n, mt * ca, err);
    g->dxn = dfloats(n, mt * d, err);
    g->dtmp = dfloats(n, mt * d, err);
    g->dcur[0] = dfloats(n, mt * d, err);
    g->dcur[1] = dfloats(n, mt * d, err);
    if (!g->dpost || !g->dgated || !g->dan || !g->dattn || !g->dxn || !g->dtmp || !g->dcur[0] ||
        !g->dcur[1])
        return -1;
    if (g->fuxi &&
        (!(g->dffm = dfloats(n, mt * g->ffn, err)) ||
         !(g->dffpre = dfloats(n, 2 * mt * g->ffn, err)) || !(g->dh = dfloats(n, mt * d, err))))
        return -1;
    l->out = g->blk[g->nblocks - 1].y;
    l->out_w = d;
    return 0;
}

/* Piece P of a projection buffer holding T rows of every piece. */
static float *piece(const gstack *g, float *base, int p, int64_t T)
{
    return base + T * g->poff[p];
}

static int gblock_fwd(rt_dnet *n, dlayer *l, gstack *g, gblock *b, const float *x, FILE *err)
{
    rt_xdev *d = n->d;
    const int64_t T = n->tokens, A = g->A, C = g->chan, B = n->batch;
    if (kcheck(d->ops->layernorm_fwd(d, x, T, g->d, GR_NORM_EPS, b->xn, b->mean, b->rstd),
               "input norm", l, err))
        return -1;
    for (int p = 0; p < g->npieces; p++)
        if (plin_fwd(n, l, &b->uvqk[p], b->xn, T, piece(g, b->pre, p, T), err)) return -1;
    if (kcheck(d->ops->silu_fwd(d, b->pre, T * g->wu, b->post), "projection silu", l, err))
        return -1;
    const float *u = piece(g, b->post, 0, T), *v = piece(g, b->post, (int)C, T),
                *q = piece(g, b->post, (int)C + 1, T), *k = piece(g, b->post, (int)C + 2, T);
    /* HSTU's relative bias sits in its semantic channel; FuXi keeps position apart. */
    const float *rab = g->fuxi ? NULL : n->params + b->rab_off[0];
    if (n->opt.attn_unfused
            ? kcheck(d->ops->attn_unfused_fwd(d, q, k, v, n->seq_off, B, &g->cfg, rab, b->sc, b->sp,
                                              b->attn),
                     "unfused attention", l, err)
            : kcheck(d->ops->hstu_attn_fwd(d, q, k, v, n->seq_off, B, &g->cfg, rab, b->attn),
                     "attention", l, err))
        return -1;
    l->flops += 2.0 * n->pairs * (double)g->heads * (double)(g->hd + g->hd);
    for (int c = 1; c < C; c++) {
        const float *crab = n->params + b->rab_off[c];
        if (n->opt.attn_unfused
                ? kcheck(d->ops->relpos_unfused_fwd(d, v, n->seq_off, B, &g->cfg, crab,
                                                    b->sp + c * g->sc_cap, b->attn + c * T * A),
                         "unfused relative-position attention", l, err)
                : kcheck(d->ops->relpos_attn_fwd(d, v, n->seq_off, B, &g->cfg, crab,
                                                 b->attn + c * T * A),
                         "relative-position attention", l, err))
            return -1;
        l->flops += 2.0 * n->pairs * (double)A;
    }
    if (kcheck(d->ops->layernorm_fwd(d, b->attn, C * T, A, GR_NORM_EPS, b->an, b->amean, b->arstd),
               "attention norm", l, err) ||
        kcheck(d->ops->mul_fwd(d, b->an, u, C * T * A, b->gated), "gating", l, err))
        return -1;
    if (!g->fuxi) {
        if (plin_fwd(n, l, &b->out[0], b->gated, T, b->y, err)) return -1;
        return add_into(n, b->y, x, T * g->d, l, err); /* residual */
    }
    /* lin0 over the channels side by side = the sum of one GEMM per channel's column block. */
    for (int c = 0; c < C; c++) {
        float *dst = c ? g->dtmp : b->h;
        if (plin_fwd(n, l, &b->out[c], b->gated + c * T * A, T, dst, err) ||
            (c && add_into(n, b->h, g->dtmp, T * g->d, l, err)))
            return -1;
    }
    const int64_t F = g->ffn;
    if (add_into(n, b->h, x, T * g->d, l, err) ||
        kcheck(d->ops->layernorm_fwd(d, b->h, T, g->d, GR_NORM_EPS, b->hn, b->hmean, b->hrstd),
               "ffn norm", l, err) ||
        plin_fwd(n, l, &b->ffn_in[0], b->hn, T, b->ffpre, err) ||
        plin_fwd(n, l, &b->ffn_in[1], b->hn, T, b->ffpre + T * F, err) ||
        kcheck(d->ops->silu_fwd(d, b->ffpre, T * F, b->ffsilu), "ffn silu", l, err) ||
        kcheck(d->ops->mul_fwd(d, b->ffsilu, b->ffpre + T * F, T * F, b->ffm), "swiglu", l, err) ||
        plin_fwd(n, l, &b->ffn_out, b->ffm, T, b->y, err))
        return -1;
    return add_into(n, b->y, b->h, T * g->d, l, err);
}

/* DX = d loss / d x of the block from DY = d loss / d y; DX differs from DY. */
static int gblock_bwd(rt_dnet *n, dlayer *l, gstack *g, gblock *b, const float *x, const float *dy,
                      float *dx, FILE *err)
{
    rt_xdev *d = n->d;
    const int64_t T = n->tokens, A = g->A, C = g->chan, B = n->batch, D = g->d, F = g->ffn;
    const float *dres = dy; /* gradient at the attention half's residual output */
    if (g->fuxi) {
        float *dup = g->dffpre + T * F;
        if (plin_bwd(n, l, &b->ffn_out, b->ffm, dy, T, g->dffm, err) ||
            kcheck(d->ops->mul_bwd(d, b->ffsilu, b->ffpre + T * F, g->dffm, T * F, g->dffm, dup),
                   "swiglu backward", l, err) ||
            kcheck(d->ops->silu_bwd(d, b->ffpre, g->dffm, T * F, g->dffpre), "ffn silu backward", l,
                   err) ||
            plin_bwd_acc(n, l, &b->ffn_in[0], b->hn, g->dffpre, T, g->dxn, 1, g->dtmp, err) ||
            plin_bwd_acc(n, l, &b->ffn_in[1], b->hn, dup, T, g->dxn, 0, g->dtmp, err) ||
            kcheck(d->ops->layernorm_bwd(d, b->h, g->dxn, T, D, b->hmean, b->hrstd, g->dh),
                   "ffn norm backward", l, err) ||
            add_into(n, g->dh, dy, T * D, l, err))
            return -1;
        dres = g->dh;
    }
    for (int c = 0; c < C; c++)
        if (plin_bwd(n, l, &b->out[c], b->gated + c * T * A, dres, T, g->dgated + c * T * A, err))
            return -1;
    float *du = piece(g, g->dpost, 0, T), *dv = piece(g, g->dpost, (int)C, T),
          *dq = piece(g, g->dpost, (int)C + 1, T), *dk = piece(g, g->dpost, (int)C + 2, T);
    const float *u = piece(g, b->post, 0, T), *v = piece(g, b->post, (int)C, T),
                *q = piece(g, b->post, (int)C + 1, T), *k = piece(g, b->post, (int)C + 2, T);
    if (kcheck(d->ops->mul_bwd(d, b->an, u, g->dgated, C * T * A, g->dan, du), "gating backward", l,
               err) ||
        kcheck(d->ops->layernorm_bwd(d, b->attn, g->dan, C * T, A, b->amean, b->arstd, g->dattn),
               "attention norm backward", l, err))
        return -1;
    const float *rab = g->fuxi ? NULL : n->params + b->rab_off[0];
    float *drab = g->fuxi ? NULL : n->grads + b->rab_off[0];
    if (n->opt.attn_unfused
            ? kcheck(d->ops->attn_unfused_bwd(d, q, k, v, n->seq_off, B, &g->cfg, b->sc, b->sp,
                                              g->dattn, g->dsc, dq, dk, dv, drab),
                     "unfused attention backward", l, err)
            : kcheck(d->ops->hstu_attn_bwd(d, q, k, v, n->seq_off, B, &g->cfg, rab, g->dattn, dq,
                                           dk, dv, drab),
                     "attention backward", l, err))
        return -1;
    /* The position and time channels read v too: their dv goes through dgated (consumed). */
    for (int c = 1; c < C; c++) {
        const float *crab = n->params + b->rab_off[c];
        float *cdrab = n->grads + b->rab_off[c];
        if ((n->opt.attn_unfused
                 ? kcheck(d->ops->relpos_unfused_bwd(d, v, n->seq_off, B, &g->cfg, crab,
                                                     b->sp + c * g->sc_cap, g->dattn + c * T * A,
                                                     g->dsc, g->dgated, cdrab),
                          "unfused relative-position attention backward", l, err)
                 : kcheck(d->ops->relpos_attn_bwd(d, v, n->seq_off, B, &g->cfg, crab,
                                                  g->dattn + c * T * A, g->dgated, cdrab),
                          "relative-position attention backward", l, err)) ||
            add_into(n, dv, g->dgated, T * A, l, err))
            return -1;
    }
    if (kcheck(d->ops->silu_bwd(d, b->pre, g->dpost, T * g->wu, g->dpost),
               "projection silu backward", l, err))
        return -1;
    for (int p = 0; p < g->npieces; p++)
        if (plin_bwd_acc(n, l, &b->uvqk[p], b->xn, piece(g, g->dpost, p, T), T, g->dxn, p == 0,
                         g->dtmp, err))
            return -1;
    if (kcheck(d->ops->layernorm_bwd(d, x, g->dxn, T, D, b->mean, b->rstd, dx),
               "input norm backward", l, err))
        return -1;
    return add_into(n, dx, dres, T * D, l, err);
}

/* The unfused attention's score buffers hold heads x this batch's causal pairs, which the
 * token count does not bound, so they grow with the batch (by half again). The old buffers
 * stay on n's allocation list until rt_dnet_free: growth is geometric, so they at most double
 * the footprint, and freeing mid-run would need a per-buffer release the list lacks. */
static int grow_scores(rt_dnet *n, gstack *g, FILE *err)
{
    const int64_t need = (int64_t)n->pairs * g->heads;
    if (!n->opt.attn_unfused || need <= g->sc_cap) return 0;
    int64_t cap = g->sc_cap + g->sc_cap / 2;
    if (cap < need) cap = need;
    for (int b = 0; b < g->nblocks; b++)
        if (!(g->blk[b].sc = dfloats(n, cap, err)) ||
            !(g->blk[b].sp = dfloats(n, g->chan * cap, err)))
            return -1;
    if (!(g->dsc = dfloats(n, cap, err))) return -1;
    g->sc_cap = cap;
    return 0;
}

static int gr_fwd(rt_dnet *n, dlayer *l, FILE *err)
{
    gstack *g = l->gr;
    const float *x = l->x;
    if (grow_scores(n, g, err)) return -1;
    if (g->has_proj) {
        if (plin_fwd(n, l, &g->proj, x, n->tokens, g->xp, err)) return -1;
        x = g->xp;
    }
    for (int b = 0; b < g->nblocks; b++) {
        if (gblock_fwd(n, l, g, &g->blk[b], x, err)) return -1;
        x = g->blk[b].y;
    }
    return 0;
}

static int gr_bwd(rt_dnet *n, dlayer *l, const float *dout, FILE *err)
{
    gstack *g = l->gr;
    float *dst = in_grad_dst(n, l);
    const float *dy = dout;
    for (int b = g->nblocks - 1; b >= 0; b--) {
        const float *x = b ? g->blk[b - 1].y : g->has_proj ? g->xp : l->x;
        float *dx = b == 0 && !g->has_proj && dst ? dst : g->dcur[b & 1];
        if (gblock_bwd(n, l, g, &g->blk[b], x, dy, dx, err)) return -1;
        dy = dx;
    }
    if (g->has_proj && plin_bwd(n, l, &g->proj, l->x, dy, n->tokens, dst, err)) return -1;
    return in_grad_finish(n, l, dst, n->tokens, err);
}

/* ---- mmoe -------------------------------------------------------------------------------- */

static int moe_build(rt_dnet *n, dlayer *l, FILE *err)
{
    const rt_layer *def = l->def;
    moe *o = l->mo = calloc(1, sizeof *o);
    if (!o) return fail(err, "out of host memory");
    int64_t in = l->in.width, mr = l->max_rows;
    o->nexp = def->experts;
    o->ntask = def->tasks;
    if (o->ntask > MOE_MAX_TASKS)
        return fail(err, "layer %s: %d tasks, at most %d", name_or(def->name), o->ntask,
                    MOE_MAX_TASKS);
    o->nel = def->n_sizes;
    o->ntl = def->n_tower_sizes;
    o->s = def->sizes[o->nel - 1];
    o->experts = calloc((size_t)(o->nexp * o->nel), sizeof *o->experts);
    o->towers = calloc((size_t)(o->ntask * (o->ntl ? o->ntl : 1)), sizeof *o->towers);
    o->gates = calloc((size_t)o->ntask, sizeof *o->gates);
    if (!o->experts || !o->towers || !o->gates) return fail(err, "out of host memory");
    if (o->ntl < 1)
        return fail(err, "layer %s: mmoe needs tower_sizes (one logit per task)",
                    name_or(def->name));
    o->tw = def->tower_sizes[o->ntl - 1];
    /* An expert's last output lands in its block of xe, placed per iteration. */
    for (int e = 0; e < o->nexp; e++)
        if (chain_build(n, o->experts + e * o->nel, o->nel, in, def->sizes, 1, 0, mr, err))
            return -1;
    for (int t = 0; t < o->ntask; t++)
        if (plin_make(n, &o->gates[t], in, o->nexp, in, 1, err) ||
            chain_build(n, o->towers + t * o->ntl, o->ntl, o->s, def->tower_sizes, 0, 1, mr, err))
            return -1;
    int64_t E = o->nexp, K = o->ntask;
    o->xe = dfloats(n, E * mr * o->s, err);
    o->glog = dfloats(n, K * mr * E, err);
    o->g = dfloats(n, K * mr * E, err);
    o->mixed = dfloats(n, K * mr * o->s, err);
    o->dtow = dfloats(n, mr * o->tw, err);
    o->dmixed = dfloats(n, mr * o->s, err);
    o->dxe = dfloats(n, E * mr * o->s, err);
    o->dxe_tmp = dfloats(n, E * mr * o->s, err);
    o->dg = dfloats(n, K * mr * E, err);
    o->dglog = dfloats(n, K * mr * E, err);
    o->dtmp = dfloats(n, mr * in, err);
    if (!o->xe || !o->glog || !o->g || !o->mixed || !o->dtow || !o->dmixed || !o->dxe ||
        !o->dxe_tmp || !o->dg || !o->dglog || !o->dtmp)
        return -1;
    l->out_w = K * o->tw;
    if (K == 1) {
        l->out = o->towers[o->ntl - 1].y;
        return 0;
    }
    int64_t *pw = malloc(sizeof *pw * (size_t)K);
    if (!pw) return fail(err, "out of host memory");
    for (int t = 0; t < K; t++)
        pw[t] = o->tw;
    if (concat_plan(&o->outcat, (int)K, pw, err)) return -1;
    return (l->out = dfloats(n, mr * l->out_w, err)) ? 0 : -1;
}

static int moe_fwd(rt_dnet *n, dlayer *l, FILE *err)
{
    rt_xdev *d = n->d;
    moe *o = l->mo;
    const int64_t R = rows_of(n, l), E = o->nexp, S = o->s;
    for (int e = 0; e < E; e++) {
        lin *f = o->experts + e * o->nel;
        f[o->nel - 1].y = o->xe + e * R * S;
        if (chain_fwd(n, l, f, o->nel, l->x, R, err)) return -1;
    }
    for (int t = 0; t < o->ntask; t++)
        if (plin_fwd(n, l, &o->gates[t], l->x, R, o->glog + t * R * E, err)) return -1;
    if (kcheck(d->ops->softmax_fwd(d, o->glog, o->ntask * R, E, o->g), "gate softmax", l, err))
        return -1;
    const float *src[MOE_MAX_TASKS];
    for (int t = 0; t < o->ntask; t++) {
        lin *tw = o->towers + t * o->ntl;
        if (kcheck(d->ops->mix_fwd(d, o->xe, o->g + t * R * E, R, E, S, o->mixed + t * R * S),
                   "expert mix", l, err) ||
            chain_fwd(n, l, tw, o->ntl, o->mixed + t * R * S, R, err))
            return -1;
        l->flops += 2.0 * (double)R * (double)E * (double)S;
        src[t] = tw[o->ntl - 1].y;
    }
    if (o->ntask == 1) return 0;
    return concat_fwd(n, &o->outcat, src, R, l->out, l, err);
}

static int moe_bwd(rt_dnet *n, dlayer *l, const float *dout, FILE *err)
{
    rt_xdev *d = n->d;
    moe *o = l->mo;
    const int64_t R = rows_of(n, l), E = o->nexp, S = o->s, in = l->in.width;
    for (int t = 0; t < o->ntask; t++) {
        const float *dtow = dout;
        if (o->ntask > 1) {
            if (concat_piece_grad(n, &o->outcat, t, dout, R, o->dtow, l, err)) return -1;
            dtow = o->dtow;
        }
        float *dxe = t ? o->dxe_tmp : o->dxe;
        if (chain_bwd(n, l, o->towers + t * o->ntl, o->ntl, o->mixed + t * R * S, dtow, R,
                      o->dmixed, err) ||
            kcheck(d->ops->mix_bwd(d, o->xe, o->g + t * R * E, o->dmixed, R, E, S, dxe,
                                   o->dg + t * R * E),
                   "expert mix backward", l, err) ||
            (t && add_into(n, o->dxe, o->dxe_tmp, E * R * S, l, err)))
            return -1;
    }
    if (kcheck(d->ops->softmax_bwd(d, o->g, o->dg, o->ntask * R, E, o->dglog),
               "gate softmax backward", l, err))
        return -1;
    float *dx = in_grad_dst(n, l);
    for (int t = 0; t < o->ntask; t++)
        if (plin_bwd_acc(n, l, &o->gates[t], l->x, o->dglog + t * R * E, R, dx, t == 0, o->dtmp,
                         err))
            return -1;
    for (int e = 0; e < E; e++) {
        const lin *f = o->experts + e * o->nel;
        if (chain_bwd(n, l, f, o->nel, l->x, o->dxe + e * R * S, R, dx ? o->dtmp : NULL, err) ||
            (dx && add_into(n, dx, o->dtmp, R * in, l, err)))
            return -1;
    }
    return in_grad_finish(n, l, dx, R, err);
}

/* ---- construction ------------------------------------------------------------------------ */

static const char *layer_kind(const rt_layer *def)
{
    return def->kind < RT_LAYER_COUNT ? rt_layer_kind_names[def->kind] : "?";
}

/* Expands the layer's rt_src inputs into segments in model_cost.c's order. */
static int build_segments(rt_dnet *n, dlayer *l, FILE *err)
{
    const rt_model *m = n->m;
    const rt_layer *def = l->def;
    int cap = 0, tok = -1;
    for (int i = 0; i < def->n_inputs; i++)
        cap += def->inputs[i].kind == RT_SRC_EMBEDDINGS || def->inputs[i].kind == RT_SRC_SEQUENCE
                   ? m->n_tables
                   : 1;
    l->segs = calloc((size_t)(cap ? cap : 1), sizeof *l->segs);
    l->src = calloc((size_t)(cap ? cap : 1), sizeof *l->src);
    if (!l->segs || !l->src) return fail(err, "out of host memory");
    for (int i = 0; i < def->n_inputs; i++) {
        rt_src s = def->inputs[i];
        int t_in = 0;
        switch (s.kind) {
        case RT_SRC_DENSE:
            l->segs[l->nseg++] = (seg){SEG_DENSE, 0};
            break;
        case RT_SRC_EMBEDDINGS:
            for (int t = 0; t < m->n_tables; t++)
                if (!m->tables[t].sequence) l->segs[l->nseg++] = (seg){SEG_EMB, t};
            break;
        case RT_SRC_SEQUENCE:
            for (int t = 0; t < m->n_tables; t++)
                if (m->tables[t].sequence) l->segs[l->nseg++] = (seg){SEG_SEQ, t};
            t_in = 1;
            break;
        case RT_SRC_LAYER:
            if (s.layer < 0 || s.layer >= (int)(l - n->L))
                return fail(err, "layer %s: input is not an earlier layer", name_or(def->name));
            l->segs[l->nseg++] = (seg){SEG_LAYER, s.layer};
            t_in = n->L[s.layer].per_token;
            break;
        default:
            return fail(err, "layer %s: unknown input kind %d", name_or(def->name), (int)s.kind);
        }
        if (tok >= 0 && tok != t_in)
            return fail(err, "layer %s: mixes per-token (sequence) and per-sample inputs",
                        name_or(def->name));
        tok = t_in;
    }
    if (!l->nseg)
        return fail(err, "layer %s: has no inputs (costs not computed?)", name_or(def->name));
    l->per_token = tok == 1;
    if (l->per_token && n->max_tokens < 1)
        return fail(err, "layer %s: works per token but max_tokens is %lld", name_or(def->name),
                    (long long)n->max_tokens);
    l->max_rows = l->per_token ? n->max_tokens : n->max_batch;
    int64_t *pw = malloc(sizeof *pw * (size_t)l->nseg);
    if (!pw) return fail(err, "out of host memory");
    for (int i = 0; i < l->nseg; i++) {
        pw[i] = seg_width(n, &l->segs[i]);
        if (seg_target(n, &l->segs[i])) l->needs_dx = 1;
    }
    if (concat_plan(&l->in, l->nseg, pw, err)) return -1;
    if (l->nseg > 1) {
        l->xcat = dfloats(n, l->max_rows * l->in.width, err);
        if (!l->xcat) return -1;
        need(&n->need_in, l->max_rows * l->in.width);
    }
    need(&n->need_acc, l->max_rows * l->in.width);
    return 0;
}

static int build_layer(rt_dnet *n, int li, FILE *err)
{
    dlayer *l = &n->L[li];
    l->def = &n->m->layers[li];
    int rc;
    if (build_segments(n, l, err)) return -1;
    switch (l->def->kind) {
    case RT_LAYER_MLP:
        rc = mlp_build(n, l, err);
        break;
    case RT_LAYER_DOT:
        rc = dot_build(n, l, err);
        break;
    case RT_LAYER_DCN:
        rc = dcn_build(n, l, err);
        break;
    case RT_LAYER_HSTU:
    case RT_LAYER_FUXI:
        rc = gr_build(n, l, err);
        break;
    default:
        rc = moe_build(n, l, err);
        break;
    }
    if (rc) return -1;
    if (l->out_w != (int64_t)l->def->out_width * l->def->out_vectors)
        return fail(err, "layer %s: output width %lld disagrees with the model's %d x %d",
                    name_or(l->def->name), (long long)l->out_w, l->def->out_vectors,
                    l->def->out_width);
    return 0;
}

/* Unsupported parts are refused up front, naming the layer, so nothing is silently skipped. */
static int check_model(const rt_model *m, rt_dnet_opt opt, FILE *err)
{
    if (m->n_layers < 1) return fail(err, "model %s: has no layers", name_or(m->name));
    for (int i = 0; i < m->n_layers; i++) {
        const rt_layer *l = &m->layers[i];
        if (l->kind >= RT_LAYER_COUNT)
            return fail(err, "model %s: layer %s: type %s is not supported by the dense executor",
                        name_or(m->name), name_or(l->name), layer_kind(l));
    }
    if (!m->loss || (strcmp(m->loss, "bce") && strcmp(m->loss, "sampled_softmax")))
        return fail(err, "model %s: loss %s is not supported by the dense executor",
                    name_or(m->name), m->loss ? m->loss : "(none)");
    if (opt.kind != RT_KOPT_SGD && opt.kind != RT_KOPT_ADAM)
        return fail(err, "model %s: the dense optimizer must be sgd or adam", name_or(m->name));
    return 0;
}

/* bce needs one logit per sample and task; sampled softmax a per-token query as wide as a
 * token embedding. */
static int check_loss(const rt_dnet *n, FILE *err)
{
    const dlayer *last = &n->L[n->nl - 1];
    if (n->ssm) {
        if (!last->per_token || last->out_w != n->tokw)
            return fail(err,
                        "model %s: sampled_softmax needs a per-token last layer as wide as a "
                        "token embedding (%lld), but %s is %s and %lld wide",
                        name_or(n->m->name), (long long)n->tokw, name_or(last->def->name),
                        last->per_token ? "per token" : "per sample", (long long)last->out_w);
        if (n->m->negatives < 0)
            return fail(err, "model %s: negative count %d", name_or(n->m->name), n->m->negatives);
        return 0;
    }
    if (last->def->out_width != 1)
        return fail(err,
                    "model %s: bce needs one logit per sample (per task), but the last layer %s "
                    "is %lld wide",
                    name_or(n->m->name), name_or(last->def->name), (long long)last->out_w);
    return 0;
}

/* splitmix64 step: tiny, fast and identical everywhere, so every rank draws the same weights. */
static uint64_t splitmix_next(uint64_t *s)
{
    *s += 0x9e3779b97f4a7c15ULL;
    return rt_kmix64(*s);
}

/* Each tensor has its own stream seeded by (seed, tensor index), so adding a layer does not
 * shift the weights of the others. */
static int init_params(rt_dnet *n, uint64_t seed, FILE *err)
{
    float *h = malloc(sizeof *h * (size_t)(n->nparams ? n->nparams : 1));
    if (!h) return fail(err, "out of host memory for %lld initial weights", (long long)n->nparams);
    for (int i = 0; i < n->npt; i++) {
        const ptensor *t = &n->pt[i];
        uint64_t s = rt_kmix64(seed ^ rt_kmix64((uint64_t)i + 1));
        float bound = t->fan_in > 0 ? (float)(1.0 / sqrt((double)t->fan_in)) : 0.0f;
        for (int64_t k = 0; k < t->count; k++) {
            double u = (double)(splitmix_next(&s) >> 11) * 0x1.0p-53;
            h[t->off + k] = bound * (float)(2.0 * u - 1.0);
        }
    }
    int rc = n->d->ops->copy(n->d, n->params, h, sizeof *h * (size_t)n->nparams, RT_XCOPY_H2D);
    free(h);
    return rc ? fail(err, "uploading the initial weights failed") : 0;
}

/* The loss's buffers and index maps. */
static int alloc_loss(rt_dnet *n, FILE *err)
{
    const dlayer *last = &n->L[n->nl - 1];
    int64_t mb = n->max_batch, mt = n->max_tokens;
    if (!n->ssm) {
        n->nlog = last->def->out_vectors;
        int64_t nl = mb * n->nlog;
        need(&n->need_work, nl);
        n->lg = dfloats(n, nl, err);
        n->lab = dfloats(n, nl, err);
        n->dls = dfloats(n, nl, err);
        n->h_idx = malloc(sizeof *n->h_idx * (size_t)(nl > mb ? nl : mb));
        if (!n->lg || !n->lab || !n->dls) return -1;
        if (!n->h_idx) return fail(err, "out of host memory");
        if (last->per_token && !(n->d_last = dalloc(n, sizeof(int64_t) * (size_t)mb, err)))
            return -1;
        if (n->nlog > 1) {
            if (!(n->d_rep = dalloc(n, sizeof(int64_t) * (size_t)nl, err))) return -1;
            for (int64_t i = 0; i < nl; i++)
                n->h_idx[i] = i / n->nlog;
            if (upload_i64(n, n->d_rep, n->h_idx, nl, err)) return -1;
        }
        return 0;
    }
    int64_t D = n->tokw, K = n->nneg = n->m->negatives, kd = (K > 0 ? K : 1) * D;
    n->h_idx = malloc(sizeof *n->h_idx * (size_t)(mt > K ? mt : K + 1));
    if (!n->h_idx) return fail(err, "out of host memory");
    n->d_qidx = dalloc(n, sizeof(int64_t) * (size_t)mt, err);
    n->d_pidx = dalloc(n, sizeof(int64_t) * (size_t)mt, err);
    n->d_nidx = dalloc(n, sizeof(int64_t) * (size_t)(K > 0 ? K : 1), err);
    n->sq = dfloats(n, mt * D, err);
    n->sp = dfloats(n, mt * D, err);
    n->dq = dfloats(n, mt * D, err);
    n->dp = dfloats(n, mt * D, err);
    n->sn = dfloats(n, kd, err);
    n->dn = dfloats(n, kd, err);
    n->stmp = dfloats(n, (mt > K ? mt : K) * D, err);
    if (!n->d_qidx || !n->d_pidx || !n->d_nidx || !n->sq || !n->sp || !n->dq || !n->dp || !n->sn ||
        !n->dn || !n->stmp)
        return -1;
    if (n->nseqt > 1) {
        int64_t *pw = malloc(sizeof *pw * (size_t)n->nseqt);
        if (!pw) return fail(err, "out of host memory");
        for (int t = 0, i = 0; t < n->m->n_tables; t++)
            if (n->m->tables[t].sequence) pw[i++] = n->m->tables[t].dim;
        if (concat_plan(&n->seqcat, n->nseqt, pw, err)) return -1;
        if (!(n->tokbuf = dfloats(n, mt * D, err)) || !(n->dtok = dfloats(n, mt * D, err)))
            return -1;
    }
    return 0;
}

static int alloc_state(rt_dnet *n, FILE *err)
{
    const rt_model *m = n->m;
    rt_xdev *d = n->d;
    int64_t np = n->nparams;
    n->params = dfloats(n, np, err);
    n->grads = dfloats(n, np, err);
    if (!n->params || !n->grads) return -1;
    if (n->opt.kind == RT_KOPT_ADAM) {
        n->adam_m = dfloats(n, np, err);
        n->adam_v = dfloats(n, np, err);
        if (!n->adam_m || !n->adam_v) return -1;
        if (d->ops->zero(d, n->adam_m, sizeof(float) * (size_t)np) ||
            d->ops->zero(d, n->adam_v, sizeof(float) * (size_t)np))
            return fail(err, "zeroing the optimizer state failed");
    }
    if (d->ops->zero(d, n->grads, sizeof(float) * (size_t)np))
        return fail(err, "zeroing the gradients failed");
    for (int t = 0; t < m->n_tables; t++) {
        int64_t rows = m->tables[t].sequence ? n->max_tokens : n->max_batch;
        if (rows > 0 && !(n->tg[t].buf = dfloats(n, rows * m->tables[t].dim, err))) return -1;
    }
    for (int li = 0; li < n->nl; li++) {
        gtarget *t = &n->tg[m->n_tables + li];
        if (!(t->buf = dfloats(n, n->L[li].max_rows * n->L[li].out_w, err))) return -1;
    }
    for (int i = 0; i < 3; i++)
        if (!(n->work[i] = dfloats(n, n->need_work, err))) return -1;
    n->work_in = dfloats(n, n->need_in, err);
    n->acc = dfloats(n, n->need_acc > n->max_batch ? n->need_acc : n->max_batch, err);
    n->loss = dfloats(n, 1, err);
    return n->work_in && n->acc && n->loss ? 0 : -1;
}

rt_dnet *rt_dnet_new(const rt_model *m, rt_xdev *d, int max_batch, int64_t max_tokens,
                     uint64_t seed, rt_dnet_opt opt, FILE *err)
{
    if (!m || !d || !d->ops || max_batch < 1 || max_tokens < 0) {
        fail(err, "rt_dnet_new: needs a model, an open device, max_batch >= 1 and "
                  "max_tokens >= 0");
        return NULL;
    }
    if (check_model(m, opt, err)) return NULL;
    if (opt.attn_unfused && (!d->ops->attn_unfused_fwd || !d->ops->attn_unfused_bwd ||
                             !d->ops->relpos_unfused_fwd || !d->ops->relpos_unfused_bwd)) {
        fail(err, "device %s has no unfused attention kernels", d->ops->name);
        return NULL;
    }
    rt_dnet *n = calloc(1, sizeof *n);
    if (!n) {
        fail(err, "out of host memory");
        return NULL;
    }
    n->m = m;
    n->d = d;
    n->max_batch = max_batch;
    n->max_tokens = max_tokens;
    n->seed = seed;
    n->opt = opt;
    n->nl = m->n_layers;
    n->ssm = !strcmp(m->loss, "sampled_softmax");
    n->seq0 = -1;
    for (int t = 0; t < m->n_tables; t++)
        if (m->tables[t].sequence) {
            if (n->seq0 < 0) n->seq0 = t;
            n->nseqt++;
            n->tokw += m->tables[t].dim;
        }
    n->L = calloc((size_t)n->nl, sizeof *n->L);
    n->tg = calloc((size_t)(m->n_tables + n->nl), sizeof *n->tg);
    n->emb = calloc((size_t)m->n_tables + 1, sizeof *n->emb);
    int rc = n->L && n->tg && n->emb ? 0 : fail(err, "out of host memory");
    for (int li = 0; li < n->nl && !rc; li++)
        rc = build_layer(n, li, err);
    /* Work buffers must hold at least one batch of gradient floats for the loss path. */
    need(&n->need_work, max_batch);
    if (!rc) rc = check_loss(n, err);
    if (!rc) rc = alloc_loss(n, err);
    if (!rc) rc = alloc_state(n, err);
    if (!rc) rc = init_params(n, seed, err);
    if (rc) {
        rt_dnet_free(n);
        return NULL;
    }
    return n;
}

void rt_dnet_free(rt_dnet *n)
{
    if (!n) return;
    for (int li = 0; n->L && li < n->nl; li++) {
        dlayer *l = &n->L[li];
        concat_free(&l->in);
        concat_free(&l->dout);
        free(l->segs);
        free(l->src);
        free(l->lins);
        free(l->cr);
        if (l->gr) free(l->gr->blk);
        free(l->gr);
        if (l->mo) {
            concat_free(&l->mo->outcat);
            free(l->mo->experts);
            free(l->mo->towers);
            free(l->mo->gates);
        }
        free(l->mo);
    }
    concat_free(&n->seqcat);
    rt_xneg_free(n->xneg);
    for (int i = n->nbufs - 1; i >= 0; i--)
        n->d->ops->release(n->d, n->bufs[i]);
    free(n->bufs);
    free(n->L);
    free(n->tg);
    free(n->emb);
    free(n->pt);
    free(n->h_idx);
    free(n);
}

/* ---- iteration --------------------------------------------------------------------------- */

/* Row of real token J (counted over real tokens only) in the layout of offsets H. */
static int64_t real_token(const int64_t *h, const int64_t *valid, int B, int64_t j)
{
    for (int s = 0; valid && s < B; s++) {
        if (j < valid[s]) return h[s] + j;
        j -= valid[s];
    }
    return j;
}

/* The sequence tables' offsets: one set shared by all (checked), the token count, the
 * attention pairs, and the loss's per-iteration index maps. */
static int set_sequences(rt_dnet *n, const rt_dnet_batch *b, FILE *err)
{
    const rt_model *m = n->m;
    int B = b->batch, t0 = n->seq0;
    if (!b->offsets || !b->h_offsets || !b->offsets[t0] || !b->h_offsets[t0])
        return fail(err, "sequence table %s needs device and host offsets", m->tables[t0].name);
    const int64_t *h = b->h_offsets[t0];
    for (int t = t0 + 1; t < m->n_tables; t++)
        if (m->tables[t].sequence &&
            (!b->h_offsets[t] || memcmp(b->h_offsets[t], h, sizeof *h * (size_t)(B + 1))))
            return fail(err,
                        "sequence tables %s and %s have different lengths: a token is one "
                        "embedding of each",
                        m->tables[t0].name, m->tables[t].name);
    if (h[0] != 0 || h[B] > n->max_tokens)
        return fail(err, "%lld tokens in the batch, outside 0..%lld", (long long)h[B],
                    (long long)n->max_tokens);
    double pairs = 0;
    int64_t nq = 0, real = 0;
    const int64_t *valid = b->h_valid;
    for (int s = 0; s < B; s++) {
        int64_t len = h[s + 1] - h[s], vl = valid ? valid[s] : len;
        if (len < 0) return fail(err, "decreasing sequence offsets at sample %d", s);
        if (vl < 0 || vl > len)
            return fail(err, "sample %d has %lld real tokens in %lld", s, (long long)vl,
                        (long long)len);
        pairs += 0.5 * (double)len * (double)(len + 1);
        real += vl;
        /* Queries: every token but the last of its sequence; the positive is the next one. */
        if (n->ssm)
            for (int64_t i = h[s]; i + 1 < h[s] + vl; i++)
                n->h_idx[nq++] = i;
    }
    n->tokens = h[B];
    n->pairs = pairs;
    n->seq_off = b->offsets[t0];
    if (n->ssm) {
        n->nq = nq;
        if (upload_i64(n, n->d_qidx, n->h_idx, nq, err)) return -1;
        for (int64_t k = 0; k < nq; k++)
            n->h_idx[k]++;
        if (upload_i64(n, n->d_pidx, n->h_idx, nq, err)) return -1;
        if (n->xneg) return rt_xneg_sample(n->xneg, h, valid, B, nq, err);
        /* Shared in-batch negatives: a fixed hash of (seed, k), so they move only with T. */
        for (int64_t k = 0; k < n->nneg && real > 0; k++)
            n->h_idx[k] =
                real_token(h, valid, B,
                           (int64_t)(rt_kmix64(n->seed ^ rt_kmix64(0x6e656773ULL + (uint64_t)k)) %
                                     (uint64_t)real));
        if (real > 0 && upload_i64(n, n->d_nidx, n->h_idx, n->nneg, err)) return -1;
        return 0;
    }
    if (!n->d_last) return 0;
    for (int s = 0; s < B; s++) {
        int64_t vl = valid ? valid[s] : h[s + 1] - h[s];
        if (vl == 0)
            return fail(err, "sample %d has no tokens, so no last token to score for bce", s);
        n->h_idx[s] = h[s] + vl - 1;
    }
    return upload_i64(n, n->d_last, n->h_idx, B, err);
}

/* Rebuilds N for at least NEED tokens, keeping its weights, optimizer state and step: a batch
 * longer than the max_tokens the caller planned for (a length distribution without a hard
 * maximum) grows the per-token buffers by half again instead of failing. The old and the new
 * buffers coexist for the copy; N keeps its address, so pointers to it stay valid. */
static int grow_tokens(rt_dnet *n, int64_t need_tokens, FILE *err)
{
    int64_t cap = n->max_tokens + n->max_tokens / 2;
    if (cap < need_tokens) cap = need_tokens;
    rt_dnet *g = rt_dnet_new(n->m, n->d, n->max_batch, cap, n->seed, n->opt, err);
    if (!g)
        return fail(err, "growing the per-token buffers from %lld to %lld tokens failed",
                    (long long)n->max_tokens, (long long)cap);
    size_t bytes = sizeof(float) * (size_t)n->nparams;
    int rc = g->nparams != n->nparams ||
             n->d->ops->copy(n->d, g->params, n->params, bytes, RT_XCOPY_D2D) ||
             (n->adam_m && (n->d->ops->copy(n->d, g->adam_m, n->adam_m, bytes, RT_XCOPY_D2D) ||
                            n->d->ops->copy(n->d, g->adam_v, n->adam_v, bytes, RT_XCOPY_D2D)));
    g->step = n->step;
    if (!rc && n->neg_cfg) rc = rt_dnet_set_negatives(g, n->neg_cfg, n->neg_stored, err);
    rt_dnet tmp = *n;
    *n = *g;
    *g = tmp;
    rt_dnet_free(g);
    return rc ? fail(err, "copying the weights into the grown net failed") : 0;
}

int rt_dnet_set_batch(rt_dnet *n, const rt_dnet_batch *b, FILE *err)
{
    const rt_model *m = n->m;
    if (!b || b->batch < 1 || b->batch > n->max_batch)
        return fail(err, "batch of %d samples outside 1..%d", b ? b->batch : 0, n->max_batch);
    if (n->seq0 >= 0 && n->max_tokens > 0 && b->h_offsets && b->h_offsets[n->seq0] &&
        b->h_offsets[n->seq0][b->batch] > n->max_tokens &&
        grow_tokens(n, b->h_offsets[n->seq0][b->batch], err))
        return -1;
    if (!(b->global_batch >= b->batch))
        return fail(err, "global batch %g is smaller than this rank's %d", b->global_batch,
                    b->batch);
    if (!n->ssm && !b->labels) return fail(err, "bce needs labels");
    for (int li = 0; li < n->nl; li++)
        for (int s = 0; s < n->L[li].nseg; s++) {
            const seg *g = &n->L[li].segs[s];
            if (g->kind == SEG_DENSE && !b->dense)
                return fail(err, "layer %s reads dense features but the batch has none",
                            name_or(n->L[li].def->name));
            if ((g->kind == SEG_EMB || g->kind == SEG_SEQ) && (!b->emb || !b->emb[g->src]))
                return fail(err, "layer %s reads table %s but the batch lacks its embeddings",
                            name_or(n->L[li].def->name), m->tables[g->src].name);
        }
    if (n->ssm)
        for (int t = 0; t < m->n_tables; t++)
            if (m->tables[t].sequence && (!b->emb || !b->emb[t]))
                return fail(err, "sampled softmax reads table %s but the batch lacks it",
                            m->tables[t].name);
    n->batch = b->batch;
    if (n->seq0 >= 0 && set_sequences(n, b, err)) {
        n->batch = 0;
        return -1;
    }
    for (int t = 0; t < m->n_tables; t++)
        n->emb[t] = b->emb ? b->emb[t] : NULL;
    n->global_batch = b->global_batch;
    n->dense = b->dense;
    n->labels = b->labels;
    n->have_loss = 0;
    return 0;
}

static int check_layer(const rt_dnet *n, int layer, FILE *err)
{
    if (layer < 0 || layer >= n->nl)
        return fail(err, "layer index %d outside 0..%d", layer, n->nl - 1);
    if (!n->batch) return fail(err, "no batch set");
    return 0;
}

int rt_dnet_forward(rt_dnet *n, int layer, FILE *err)
{
    if (check_layer(n, layer, err)) return -1;
    dlayer *l = &n->L[layer];
    l->flops = 0;
    if (l->nseg == 1) {
        l->x = seg_ptr(n, &l->segs[0]);
    } else {
        for (int i = 0; i < l->nseg; i++)
            l->src[i] = seg_ptr(n, &l->segs[i]);
        if (concat_fwd(n, &l->in, l->src, rows_of(n, l), l->xcat, l, err)) return -1;
        l->x = l->xcat;
    }
    switch (l->def->kind) {
    case RT_LAYER_MLP:
        return mlp_fwd(n, l, err);
    case RT_LAYER_DOT:
        return dot_fwd(n, l, err);
    case RT_LAYER_DCN:
        return dcn_fwd(n, l, err);
    case RT_LAYER_HSTU:
    case RT_LAYER_FUXI:
        return gr_fwd(n, l, err);
    default:
        return moe_fwd(n, l, err);
    }
}

static int bce_loss(rt_dnet *n, FILE *err)
{
    rt_xdev *d = n->d;
    const dlayer *last = &n->L[n->nl - 1];
    int64_t B = n->batch, nl = B * n->nlog;
    const float *logits = last->out, *labels = n->labels;
    if (last->per_token &&
        kcheck(d->ops->gather_rows(d, last->out, n->tokens, n->nlog, n->d_last, B, n->lg),
               "last-token logits", NULL, err))
        return -1;
    if (last->per_token) logits = n->lg;
    if (n->nlog > 1) {
        if (kcheck(d->ops->gather_rows(d, n->labels, B, 1, n->d_rep, nl, n->lab), "labels per task",
                   NULL, err))
            return -1;
        labels = n->lab;
    }
    float *dlogits = n->work[0];
    if (kcheck(d->ops->bce_logits(d, logits, labels, nl, n->loss, dlogits), "bce", NULL, err))
        return -1;
    /* The kernel's gradient is that of this rank's mean; the AllReduce sums ranks, so each
     * rank contributes d(global mean)/d(logit) = dlogits * batch / global_batch. */
    gtarget *t = &n->tg[n->m->n_tables + n->nl - 1];
    float scale = (float)((double)B / n->global_batch);
    if (dzero(n, t->buf, rows_of(n, last) * last->out_w, NULL, err)) return -1;
    if (!last->per_token) {
        if (kcheck(d->ops->axpy(d, nl, scale, dlogits, t->buf), "bce gradient scale", NULL, err))
            return -1;
    } else if (scaled_copy(n, n->dls, dlogits, nl, scale, NULL, err) ||
               kcheck(d->ops->scatter_add_rows(d, n->dls, B, n->nlog, n->d_last, n->tokens, t->buf),
                      "last-token gradient", NULL, err)) {
        return -1;
    }
    t->written = 1;
    return 0;
}

/* Writes the scaled gradient rows G (COUNT x D at IDX) into DST (T x D, already zeroed). */
static int scatter_scaled(rt_dnet *n, const float *g, int64_t count, const int64_t *idx,
                          float scale, float *dst, FILE *err)
{
    int64_t D = n->tokw;
    if (count == 0) return 0;
    if (scaled_copy(n, n->stmp, g, count * D, scale, NULL, err)) return -1;
    return kcheck(n->d->ops->scatter_add_rows(n->d, n->stmp, count, D, idx, n->tokens, dst),
                  "sampled softmax gradient", NULL, err);
}

/* The token embeddings the loss reads: the sequence tables side by side. */
static const float *loss_tokens(rt_dnet *n, FILE *err)
{
    if (n->nseqt == 1) return n->emb[n->seq0];
    const float *src[64];
    int i = 0;
    for (int t = 0; t < n->m->n_tables && i < 64; t++)
        if (n->m->tables[t].sequence) src[i++] = n->emb[t];
    if (i < n->nseqt) {
        fail(err, "more than 64 sequence tables");
        return NULL;
    }
    return concat_fwd(n, &n->seqcat, src, n->tokens, n->tokbuf, NULL, err) ? NULL : n->tokbuf;
}

/* Per-query negatives: the loss and every gradient (neg_samples.h walks the segments for the
 * logits, then for their backward), already scaled to the per-sample objective. */
static int per_query_loss(rt_dnet *n, const float *tok, float *dq_out, float *dtok, FILE *err)
{
    rt_xdev *d = n->d;
    int64_t T = n->tokens, D = n->tokw, Q = n->nq;
    if (!rt_xneg_offloads(n->xneg) && rt_xneg_gather(n->xneg, tok, T, err)) return -1;
    if (rt_xneg_loss(n->xneg, n->sq, n->sp, (float)(1.0 / n->global_batch), n->loss, n->dq, n->dp,
                     dtok, T, err))
        return -1;
    if (kcheck(d->ops->scatter_add_rows(d, n->dq, Q, D, n->d_qidx, T, dq_out), "query gradient",
               NULL, err))
        return -1;
    return kcheck(d->ops->scatter_add_rows(d, n->dp, Q, D, n->d_pidx, T, dtok), "positive gradient",
                  NULL, err);
}

static int ssm_loss(rt_dnet *n, FILE *err)
{
    rt_xdev *d = n->d;
    const rt_model *m = n->m;
    const dlayer *last = &n->L[n->nl - 1];
    int64_t T = n->tokens, D = n->tokw, Q = n->nq, K = T > 0 ? n->nneg : 0;
    const float *tok = loss_tokens(n, err);
    float *dtok = n->nseqt > 1 ? n->dtok : n->tg[n->seq0].buf;
    if (!tok) return -1;
    gtarget *qt = &n->tg[m->n_tables + n->nl - 1];
    if (dzero(n, qt->buf, T * last->out_w, NULL, err) || dzero(n, dtok, T * D, NULL, err))
        return -1;
    qt->written = 1;
    if (Q == 0) {
        /* No sequence longer than one token: nothing to predict, zero loss and gradients. */
        if (dzero(n, n->loss, 1, NULL, err)) return -1;
    } else if (n->xneg) {
        if (kcheck(d->ops->gather_rows(d, last->out, T, D, n->d_qidx, Q, n->sq), "queries", NULL,
                   err) ||
            kcheck(d->ops->gather_rows(d, tok, T, D, n->d_pidx, Q, n->sp), "positives", NULL,
                   err) ||
            per_query_loss(n, tok, qt->buf, dtok, err))
            return -1;
    } else {
        if (kcheck(d->ops->gather_rows(d, last->out, T, D, n->d_qidx, Q, n->sq), "queries", NULL,
                   err) ||
            kcheck(d->ops->gather_rows(d, tok, T, D, n->d_pidx, Q, n->sp), "positives", NULL,
                   err) ||
            (K > 0 && kcheck(d->ops->gather_rows(d, tok, T, D, n->d_nidx, K, n->sn), "negatives",
                             NULL, err)) ||
            kcheck(d->ops->sampled_softmax(d, n->sq, n->sp, K > 0 ? n->sn : NULL, NULL, Q, K, D,
                                           1.0f, n->loss, n->dq, n->dp, K > 0 ? n->dn : NULL),
                   "sampled softmax", NULL, err))
            return -1;
        /* The kernel differentiates the mean over this rank's Q targets; the objective sums
         * targets and divides by the global sample count. */
        float scale = (float)((double)Q / n->global_batch);
        if (scatter_scaled(n, n->dq, Q, n->d_qidx, scale, qt->buf, err) ||
            scatter_scaled(n, n->dp, Q, n->d_pidx, scale, dtok, err) ||
            scatter_scaled(n, n->dn, K, n->d_nidx, scale, dtok, err))
            return -1;
    }
    for (int t = 0, i = 0; t < m->n_tables; t++) {
        if (!m->tables[t].sequence) continue;
        if (n->nseqt > 1 &&
            concat_piece_grad(n, &n->seqcat, i++, n->dtok, T, n->tg[t].buf, NULL, err))
            return -1;
        n->tg[t].written = 1;
    }
    return 0;
}

int rt_dnet_set_negatives(rt_dnet *n, const rt_neg_cfg *c, rt_kdtype stored, FILE *err)
{
    if (!c->per_query) return 0;
    if (!n->ssm || n->nneg <= 0 || n->xneg)
        return fail(err,
                    "model %s: plan.negatives needs a sampled-softmax loss with negatives "
                    "(set once); allowed: no plan.negatives map for this model",
                    name_or(n->m->name));
    n->xneg = rt_xneg_new(n->d, c, stored, n->max_tokens, n->nneg, n->tokw, n->seed, err);
    n->neg_cfg = c, n->neg_stored = stored;
    return n->xneg ? 0 : -1;
}

int rt_dnet_neg_offload(rt_dnet *n, FILE *err)
{
    if (!n->batch) return fail(err, "no batch set");
    if (!n->xneg || !rt_xneg_offloads(n->xneg))
        return fail(err, "the negatives are not offloaded: no plan.negatives offload");
    const float *tok = loss_tokens(n, err);
    return tok ? rt_xneg_gather(n->xneg, tok, n->tokens, err) : -1;
}

int rt_dnet_neg_prefetch(rt_dnet *n, FILE *err)
{
    if (!n->xneg || !rt_xneg_offloads(n->xneg))
        return fail(err, "the negatives are not offloaded: no plan.negatives offload");
    return rt_xneg_prefetch(n->xneg, err);
}

const rt_xneg *rt_dnet_negatives(const rt_dnet *n)
{
    return n->xneg;
}

int rt_dnet_loss(rt_dnet *n, FILE *err)
{
    if (!n->batch) return fail(err, "no batch set");
    for (int i = 0; i < n->m->n_tables + n->nl; i++)
        n->tg[i].written = 0;
    if (n->ssm ? ssm_loss(n, err) : bce_loss(n, err)) return -1;
    n->have_loss = 1;
    return 0;
}

/* Embeddings no layer consumed get a zero gradient once the last backward has run. */
static int zero_unused_emb_grads(rt_dnet *n, FILE *err)
{
    for (int t = 0; t < n->m->n_tables; t++) {
        gtarget *g = &n->tg[t];
        if (!g->buf || g->written) continue;
        int64_t rows = n->m->tables[t].sequence ? n->tokens : n->batch;
        if (dzero(n, g->buf, rows * n->m->tables[t].dim, NULL, err)) return -1;
        g->written = 1;
    }
    return 0;
}

int rt_dnet_backward(rt_dnet *n, int layer, FILE *err)
{
    if (check_layer(n, layer, err)) return -1;
    if (!n->have_loss) return fail(err, "backward of layer %d before the loss", layer);
    dlayer *l = &n->L[layer];
    const float *dout = out_grad(n, layer, err);
    if (!dout) return -1;
    int rc;
    switch (l->def->kind) {
    case RT_LAYER_MLP:
        rc = mlp_bwd(n, l, dout, err);
        break;
    case RT_LAYER_DOT:
        rc = dot_bwd(n, l, dout, err);
        break;
    case RT_LAYER_DCN:
        rc = dcn_bwd(n, l, dout, err);
        break;
    case RT_LAYER_HSTU:
    case RT_LAYER_FUXI:
        rc = gr_bwd(n, l, dout, err);
        break;
    default:
        rc = moe_bwd(n, l, dout, err);
        break;
    }
    if (!rc && layer == 0) rc = zero_unused_emb_grads(n, err);
    return rc;
}

double rt_dnet_loss_value(rt_dnet *n)
{
    float v = NAN;
    if (!n->have_loss || n->d->ops->sync(n->d) ||
        n->d->ops->copy(n->d, &v, n->loss, sizeof v, RT_XCOPY_D2H))
        return NAN;
    return v;
}

const float *rt_dnet_emb_grad(const rt_dnet *n, int table)
{
    if (table < 0 || table >= n->m->n_tables) return NULL;
    return n->tg[table].buf;
}

double rt_dnet_layer_flops(const rt_dnet *n, int layer)
{
    if (layer < 0 || layer >= n->nl) return NAN;
    return n->L[layer].flops;
}

int64_t rt_dnet_tokens(const rt_dnet *n)
{
    return n->tokens;
}

float *rt_dnet_grads(rt_dnet *n, int64_t *len)
{
    if (len) *len = n->nparams;
    return n->grads;
}

int rt_dnet_update(rt_dnet *n, FILE *err)
{
    rt_kadam o = {.kind = n->opt.kind,
                  .lr = n->opt.lr,
                  .beta1 = n->opt.beta1,
                  .beta2 = n->opt.beta2,
                  .eps = n->opt.eps,
                  .grad_scale = 1.0f,
                  .step = n->step + 1};
    rt_kstatus st =
        n->d->ops->adam(n->d, n->nparams, &o, n->params, n->grads, n->adam_m, n->adam_v);
    if (kcheck(st, "dense optimizer step", NULL, err)) return -1;
    n->step++;
    return 0;
}

float *rt_dnet_params(rt_dnet *n, int64_t *len)
{
    if (len) *len = n->nparams;
    return n->params;
}

float *rt_dnet_opt_state(rt_dnet *n, int which)
{
    if (n->opt.kind != RT_KOPT_ADAM) return NULL;
    return which == 0 ? n->adam_m : which == 1 ? n->adam_v : NULL;
}

int64_t *rt_dnet_step(rt_dnet *n)
{
    return &n->step;
}
