/* The dense model of rectwin-exec on the device vtable: mlp, dot and dcn layers, the BCE loss and
 * the dense optimizer. Every tensor operation goes through d->ops so the same code runs on the
 * CPU and CUDA backends; the host only plans shapes, builds index maps once and keeps flags.
 *
 * Concatenation without a dedicated kernel: a row-major rows x W concatenation whose piece s
 * (width w_s at column c_s) is cut into "granules" of g_s = gcd(w_s, c_s, W) floats is a plain
 * row gather/scatter, because every granule of the piece maps to one granule of the whole. One
 * index map per piece (built on the host at construction) serves both directions:
 *   forward:  zero(out), scatter_add_rows(piece -> out)   (the pieces tile the output exactly)
 *   backward: gather_rows(dout -> dpiece)
 * A batch smaller than max_batch uses a prefix of each map, since maps are sample-major.
 *
 * Gradients of a layer output or an embedding that feeds several consumers are summed: the
 * first consumer to run its backward writes the gradient in place, the next ones write into a
 * scratch buffer and axpy it in (host flags say which case applies). */
#include "dense_net.h"

#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

/* ---- plan structures --------------------------------------------------------------------- */

/* Placement of the pieces of one concatenation (see the file comment). */
typedef struct {
    int n;
    int64_t width;    /* W */
    int64_t *pw;      /* piece widths */
    int64_t *granule; /* g per piece */
    int64_t **idx;    /* device: per piece, max_rows * pw / g granule rows of the whole */
} concat;

typedef enum { SEG_DENSE, SEG_EMB, SEG_LAYER } seg_kind;

/* One contiguous input of a layer: dense features, a pooled table's embeddings, or the output of
 * an earlier layer, rows x width floats. */
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

typedef struct {
    int64_t u_off, v_off, b_off;
    float *p, *q, *y;
} cross;

typedef struct {
    const rt_layer *def;
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

static int kcheck(rt_kstatus st, const char *what, const dlayer *l, FILE *err)
{
    if (st == RT_K_OK) return 0;
    if (l) return fail(err, "layer %s: %s: %s", name_or(l->def->name), what, rt_kstatus_str(st));
    return fail(err, "%s: %s", what, rt_kstatus_str(st));
}

static int64_t gcd64(int64_t a, int64_t b)
{
    while (b) {
        int64_t t = a % b;
        a = b;
        b = t;
    }
    return a;
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

/* ---- concatenation ----------------------------------------------------------------------- */

/* Plans the concatenation of pieces of widths PW (taken over) for MAX_ROWS rows. */
static int concat_plan(rt_dnet *n, concat *c, int np, int64_t *pw, int64_t max_rows, FILE *err)
{
    c->n = np;
    c->pw = pw;
    c->width = 0;
    for (int i = 0; i < np; i++)
        c->width += pw[i];
    c->granule = calloc((size_t)np, sizeof *c->granule);
    c->idx = calloc((size_t)np, sizeof *c->idx);
    if (!c->granule || !c->idx) return fail(err, "out of host memory");
    if (np == 1) return 0; /* used in place, never copied */
    int64_t col = 0;
    for (int i = 0; i < np; i++) {
        int64_t g = gcd64(gcd64(pw[i], col), c->width), per_row = pw[i] / g;
        int64_t cnt = max_rows * per_row;
        int64_t *h = malloc(sizeof *h * (size_t)(cnt ? cnt : 1));
        if (!h) return fail(err, "out of host memory for a %lld-entry index map", (long long)cnt);
        for (int64_t k = 0; k < cnt; k++)
            h[k] = ((k / per_row) * c->width + col) / g + k % per_row;
        c->granule[i] = g;
        c->idx[i] = dalloc(n, sizeof *h * (size_t)cnt, err);
        int rc = c->idx[i]
                     ? n->d->ops->copy(n->d, c->idx[i], h, sizeof *h * (size_t)cnt, RT_XCOPY_H2D)
                     : -1;
        free(h);
        if (rc) return c->idx[i] ? fail(err, "index map upload failed") : -1;
        col += pw[i];
    }
    return 0;
}

static void concat_free(concat *c)
{
    free(c->pw);
    free(c->granule);
    free(c->idx);
}

static int concat_fwd(rt_dnet *n, const concat *c, const float *const *src, int64_t rows,
                      float *dst, const dlayer *l, FILE *err)
{
    rt_xdev *d = n->d;
    if (d->ops->zero(d, dst, sizeof(float) * (size_t)(rows * c->width)))
        return fail(err, "layer %s: zeroing the concatenation failed", name_or(l->def->name));
    for (int i = 0; i < c->n; i++) {
        int64_t g = c->granule[i];
        rt_kstatus st = d->ops->scatter_add_rows(d, src[i], rows * c->pw[i] / g, g, c->idx[i],
                                                 rows * c->width / g, dst);
        if (kcheck(st, "concatenation", l, err)) return -1;
    }
    return 0;
}

/* dst = piece I of the concatenation's gradient DCAT. */
static int concat_piece_grad(rt_dnet *n, const concat *c, int i, const float *dcat, int64_t rows,
                             float *dst, const dlayer *l, FILE *err)
{
    int64_t g = c->granule[i];
    rt_kstatus st = n->d->ops->gather_rows(n->d, dcat, rows * c->width / g, g, c->idx[i],
                                           rows * c->pw[i] / g, dst);
    return kcheck(st, "split of the input gradient", l, err);
}

/* ---- segments and gradient targets ------------------------------------------------------- */

static const float *seg_ptr(const rt_dnet *n, const seg *s)
{
    switch (s->kind) {
    case SEG_DENSE:
        return n->dense;
    case SEG_EMB:
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
        size_t bytes = sizeof(float) * (size_t)(n->batch * n->L[li].out_w);
        if (n->d->ops->zero(n->d, t->buf, bytes)) {
            fail(err, "layer %s: zeroing an unused output gradient failed",
                 name_or(n->L[li].def->name));
            return NULL;
        }
        t->written = 1;
    }
    return t->buf;
}

/* ---- mlp --------------------------------------------------------------------------------- */

static int mlp_build(rt_dnet *n, dlayer *l, FILE *err)
{
    const rt_layer *def = l->def;
    l->nlin = def->n_sizes;
    l->lins = calloc((size_t)l->nlin, sizeof *l->lins);
    if (!l->lins) return fail(err, "out of host memory");
    int64_t in = l->in.width, widest = 0;
    for (int i = 0; i < l->nlin; i++) {
        lin *f = &l->lins[i];
        f->in = in;
        f->out = def->sizes[i];
        f->act = (i + 1 < l->nlin || def->activation_last) ? RT_KACT_RELU : RT_KACT_NONE;
        f->w_off = add_params(n, f->out * f->in, f->in, err);
        f->b_off = add_params(n, f->out, f->in, err);
        f->y = dfloats(n, (int64_t)n->max_batch * f->out, err);
        if (f->w_off < 0 || f->b_off < 0 || !f->y) return -1;
        if (f->out > widest) widest = f->out;
        in = f->out;
    }
    l->out = l->lins[l->nlin - 1].y;
    l->out_w = in;
    need(&n->need_work, (int64_t)n->max_batch * widest);
    return 0;
}

static int mlp_fwd(rt_dnet *n, dlayer *l, FILE *err)
{
    const float *x = l->x;
    for (int i = 0; i < l->nlin; i++) {
        lin *f = &l->lins[i];
        rt_kstatus st =
            n->d->ops->linear_fwd(n->d, x, n->batch, f->in, f->out, n->params + f->w_off,
                                  n->params + f->b_off, f->act, f->y);
        if (kcheck(st, "linear forward", l, err)) return -1;
        x = f->y;
    }
    return 0;
}

static int mlp_bwd(rt_dnet *n, dlayer *l, const float *dout, FILE *err)
{
    const float *dy = dout;
    float *dx0 = in_grad_dst(n, l);
    for (int i = l->nlin - 1; i >= 0; i--) {
        lin *f = &l->lins[i];
        const float *x = i ? l->lins[i - 1].y : l->x;
        /* Ping-pong: layer i's dy lives in work[(i + 1) & 1] (or dout), its dx in work[i & 1]. */
        float *dx = i ? n->work[i & 1] : dx0;
        rt_kstatus st =
            n->d->ops->linear_bwd(n->d, x, f->y, dy, n->batch, f->in, f->out, n->params + f->w_off,
                                  f->act, dx, n->grads + f->w_off, n->grads + f->b_off);
        if (kcheck(st, "linear backward", l, err)) return -1;
        dy = dx;
    }
    return in_grad_finish(n, l, dx0, n->batch, err);
}

/* ---- dot interaction --------------------------------------------------------------------- */

/* A device map of B * NF for b < max_batch: the first vector of each sample when the sample's
 * nf vectors are viewed as rows of their own. */
static int64_t *first_vector_map(rt_dnet *n, int64_t nf, FILE *err)
{
    int64_t mb = n->max_batch, *h = malloc(sizeof *h * (size_t)mb);
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
    int64_t np = l->nf * (l->nf - 1) / 2, mb = n->max_batch;
    l->pairs = dfloats(n, mb * np, err);
    /* The map serves the forward (first vector of a wider first input) and the backward
     * (scatter of the passed-through vector's gradient into dt). */
    l->v0_idx = first_vector_map(n, l->nf, err);
    if (!l->pairs || !l->v0_idx) return -1;
    if (seg_width(n, &l->segs[0]) != l->dim && !(l->v0buf = dfloats(n, mb * l->dim, err)))
        return -1;
    int64_t *pw = malloc(2 * sizeof *pw);
    if (!pw) return fail(err, "out of host memory");
    pw[0] = l->dim;
    pw[1] = np;
    if (concat_plan(n, &l->dout, 2, pw, mb, err)) return -1;
    l->out_w = l->dim + np;
    if (!(l->out = dfloats(n, mb * l->out_w, err))) return -1;
    need(&n->need_work, mb * (np > l->dim ? np : l->dim));
    return 0;
}

static int dot_fwd(rt_dnet *n, dlayer *l, FILE *err)
{
    rt_xdev *d = n->d;
    int64_t rows = n->batch;
    if (kcheck(d->ops->dot_interact_fwd(d, l->x, rows, l->nf, l->dim, l->pairs), "dot forward", l,
               err))
        return -1;
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
    int64_t rows = n->batch;
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
    int64_t w = l->in.width, r = l->def->rank, mb = n->max_batch;
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
    for (int c = 0; c < l->ncross; c++) {
        cross *x = &l->cr[c];
        const float *xl = c ? l->cr[c - 1].y : l->x;
        rt_kstatus st = n->d->ops->dcn_cross_fwd(n->d, l->x, xl, n->batch, l->in.width, l->rank,
                                                 n->params + x->u_off, n->params + x->v_off,
                                                 n->params + x->b_off, x->p, x->q, x->y);
        if (kcheck(st, "cross forward", l, err)) return -1;
    }
    return 0;
}

static int dcn_bwd(rt_dnet *n, dlayer *l, const float *dout, FILE *err)
{
    int64_t rows = n->batch, w = l->in.width, count = rows * w;
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
    int cap = 0;
    for (int i = 0; i < def->n_inputs; i++)
        cap += def->inputs[i].kind == RT_SRC_EMBEDDINGS ? m->n_tables : 1;
    l->segs = calloc((size_t)(cap ? cap : 1), sizeof *l->segs);
    l->src = calloc((size_t)(cap ? cap : 1), sizeof *l->src);
    if (!l->segs || !l->src) return fail(err, "out of host memory");
    for (int i = 0; i < def->n_inputs; i++) {
        rt_src s = def->inputs[i];
        switch (s.kind) {
        case RT_SRC_DENSE:
            l->segs[l->nseg++] = (seg){SEG_DENSE, 0};
            break;
        case RT_SRC_EMBEDDINGS:
            for (int t = 0; t < m->n_tables; t++)
                if (!m->tables[t].sequence) l->segs[l->nseg++] = (seg){SEG_EMB, t};
            break;
        case RT_SRC_LAYER:
            if (s.layer < 0 || s.layer >= (int)(l - n->L))
                return fail(err, "layer %s: input is not an earlier layer", name_or(def->name));
            l->segs[l->nseg++] = (seg){SEG_LAYER, s.layer};
            break;
        case RT_SRC_SEQUENCE:
        default:
            return fail(err,
                        "layer %s: sequence (per-token) inputs are not supported by the dense "
                        "executor yet (they need hstu/fuxi and sampled_softmax)",
                        name_or(def->name));
        }
    }
    if (!l->nseg)
        return fail(err, "layer %s: has no inputs (costs not computed?)", name_or(def->name));
    int64_t *pw = malloc(sizeof *pw * (size_t)l->nseg);
    if (!pw) return fail(err, "out of host memory");
    for (int i = 0; i < l->nseg; i++) {
        pw[i] = seg_width(n, &l->segs[i]);
        if (seg_target(n, &l->segs[i])) l->needs_dx = 1;
    }
    if (concat_plan(n, &l->in, l->nseg, pw, n->max_batch, err)) return -1;
    if (l->nseg > 1) {
        l->xcat = dfloats(n, (int64_t)n->max_batch * l->in.width, err);
        if (!l->xcat) return -1;
        need(&n->need_in, (int64_t)n->max_batch * l->in.width);
    }
    need(&n->need_acc, (int64_t)n->max_batch * l->in.width);
    return 0;
}

static int build_layer(rt_dnet *n, int li, FILE *err)
{
    dlayer *l = &n->L[li];
    l->def = &n->m->layers[li];
    int rc;
    if (build_segments(n, l, err)) return -1;
    if (l->def->kind == RT_LAYER_MLP)
        rc = mlp_build(n, l, err);
    else if (l->def->kind == RT_LAYER_DOT)
        rc = dot_build(n, l, err);
    else
        rc = dcn_build(n, l, err);
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
        if (l->kind != RT_LAYER_MLP && l->kind != RT_LAYER_DOT && l->kind != RT_LAYER_DCN)
            return fail(err,
                        "model %s: layer %s: type %s is not supported by the dense executor yet "
                        "(it needs norm, SiLU, softmax and elementwise device kernels)",
                        name_or(m->name), name_or(l->name), layer_kind(l));
    }
    if (!m->loss || strcmp(m->loss, "bce"))
        return fail(err, "model %s: loss %s is not supported by the dense executor yet",
                    name_or(m->name), m->loss ? m->loss : "(none)");
    if (opt.kind != RT_KOPT_SGD && opt.kind != RT_KOPT_ADAM)
        return fail(err, "model %s: the dense optimizer must be sgd or adam", name_or(m->name));
    return 0;
}

/* The loss needs one logit per sample from the last layer. */
static int check_logit(const rt_dnet *n, FILE *err)
{
    const dlayer *last = &n->L[n->nl - 1];
    if (last->out_w != 1)
        return fail(err,
                    "model %s: bce needs one logit per sample, but the last layer %s is %lld "
                    "wide",
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
    for (int t = 0; t < m->n_tables; t++)
        if (!m->tables[t].sequence &&
            !(n->tg[t].buf = dfloats(n, (int64_t)n->max_batch * m->tables[t].dim, err)))
            return -1;
    for (int li = 0; li < n->nl; li++) {
        gtarget *t = &n->tg[m->n_tables + li];
        if (!(t->buf = dfloats(n, (int64_t)n->max_batch * n->L[li].out_w, err))) return -1;
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
    (void)max_tokens; /* no per-token layer is built yet */
    if (!m || !d || !d->ops || max_batch < 1) {
        fail(err, "rt_dnet_new: needs a model, an open device and max_batch >= 1");
        return NULL;
    }
    if (check_model(m, opt, err)) return NULL;
    rt_dnet *n = calloc(1, sizeof *n);
    if (!n) {
        fail(err, "out of host memory");
        return NULL;
    }
    n->m = m;
    n->d = d;
    n->max_batch = max_batch;
    n->opt = opt;
    n->nl = m->n_layers;
    n->L = calloc((size_t)n->nl, sizeof *n->L);
    n->tg = calloc((size_t)(m->n_tables + n->nl), sizeof *n->tg);
    n->emb = calloc((size_t)m->n_tables + 1, sizeof *n->emb);
    int rc = n->L && n->tg && n->emb ? 0 : fail(err, "out of host memory");
    for (int li = 0; li < n->nl && !rc; li++)
        rc = build_layer(n, li, err);
    /* Work buffers must hold at least one batch of gradient floats for the loss path. */
    need(&n->need_work, max_batch);
    if (!rc) rc = check_logit(n, err);
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
    }
    for (int i = n->nbufs - 1; i >= 0; i--)
        n->d->ops->release(n->d, n->bufs[i]);
    free(n->bufs);
    free(n->L);
    free(n->tg);
    free(n->emb);
    free(n->pt);
    free(n);
}

/* ---- iteration --------------------------------------------------------------------------- */

int rt_dnet_set_batch(rt_dnet *n, const rt_dnet_batch *b, FILE *err)
{
    const rt_model *m = n->m;
    if (!b || b->batch < 1 || b->batch > n->max_batch)
        return fail(err, "batch of %d samples outside 1..%d", b ? b->batch : 0, n->max_batch);
    if (!(b->global_batch >= b->batch))
        return fail(err, "global batch %g is smaller than this rank's %d", b->global_batch,
                    b->batch);
    if (!b->labels) return fail(err, "bce needs labels");
    for (int li = 0; li < n->nl; li++)
        for (int s = 0; s < n->L[li].nseg; s++) {
            const seg *g = &n->L[li].segs[s];
            if (g->kind == SEG_DENSE && !b->dense)
                return fail(err, "layer %s reads dense features but the batch has none",
                            name_or(n->L[li].def->name));
            if (g->kind == SEG_EMB && (!b->emb || !b->emb[g->src]))
                return fail(err, "layer %s reads table %s but the batch lacks its embeddings",
                            name_or(n->L[li].def->name), m->tables[g->src].name);
        }
    for (int t = 0; t < m->n_tables; t++)
        n->emb[t] = b->emb ? b->emb[t] : NULL;
    n->batch = b->batch;
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
    if (l->nseg == 1) {
        l->x = seg_ptr(n, &l->segs[0]);
    } else {
        for (int i = 0; i < l->nseg; i++)
            l->src[i] = seg_ptr(n, &l->segs[i]);
        if (concat_fwd(n, &l->in, l->src, n->batch, l->xcat, l, err)) return -1;
        l->x = l->xcat;
    }
    switch (l->def->kind) {
    case RT_LAYER_MLP:
        return mlp_fwd(n, l, err);
    case RT_LAYER_DOT:
        return dot_fwd(n, l, err);
    default:
        return dcn_fwd(n, l, err);
    }
}

int rt_dnet_loss(rt_dnet *n, FILE *err)
{
    if (!n->batch) return fail(err, "no batch set");
    rt_xdev *d = n->d;
    const dlayer *last = &n->L[n->nl - 1];
    for (int i = 0; i < n->m->n_tables + n->nl; i++)
        n->tg[i].written = 0;
    float *dlogits = n->work[0];
    if (kcheck(d->ops->bce_logits(d, last->out, n->labels, n->batch, n->loss, dlogits), "bce", NULL,
               err))
        return -1;
    /* The kernel's gradient is that of this rank's mean; the AllReduce sums ranks, so each
     * rank contributes d(global mean)/d(logit) = dlogits * batch / global_batch. */
    gtarget *t = &n->tg[n->m->n_tables + n->nl - 1];
    float scale = (float)((double)n->batch / n->global_batch);
    if (d->ops->zero(d, t->buf, sizeof(float) * (size_t)n->batch))
        return fail(err, "zeroing the logit gradient failed");
    if (kcheck(d->ops->axpy(d, n->batch, scale, dlogits, t->buf), "bce gradient scale", NULL, err))
        return -1;
    t->written = 1;
    n->have_loss = 1;
    return 0;
}

/* Embeddings no layer consumed get a zero gradient once the last backward has run. */
static int zero_unused_emb_grads(rt_dnet *n, FILE *err)
{
    for (int t = 0; t < n->m->n_tables; t++) {
        gtarget *g = &n->tg[t];
        if (!g->buf || g->written) continue;
        size_t bytes = sizeof(float) * (size_t)n->batch * (size_t)n->m->tables[t].dim;
        if (n->d->ops->zero(n->d, g->buf, bytes))
            return fail(err, "zeroing an unused embedding gradient failed");
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
    default:
        rc = dcn_bwd(n, l, dout, err);
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
