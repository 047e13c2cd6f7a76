/* Layer -> launches, in step with exec/dense_net.c (keep them together: a kernel added there
 * is a piece here). Bytes of pointwise passes are 4-byte floats read + written, the counting
 * the calibration uses for its families (exec/calibrate_kernels.c): elementwise (axpy 12 B per
 * element; a zero fill 4, a bias reduction 4, an activation gradient 12), permute (rows x 8 index
 * bytes + rows x width x 8; a row copy without the index bytes), norm, softmax and SiLU (forward 8,
 * backward 12 B per element): SiLU and softmax evaluate an exponential per element, which a CPU
 * computes far slower than it streams bytes, so they have curves of their own. */
#include "layer_ops.h"

#include "calib.h"

typedef struct sink {
    rt_piece *out;
    int cap, n;
} sink;

static void put(sink *s, rt_piece p)
{
    if (!(p.count > 0) || !(p.amount > 0)) return;
    if (s->out && s->n < s->cap) s->out[s->n] = p;
    s->n++;
}

static void gemm(sink *s, double m, double n, double k)
{
    put(s, (rt_piece){RT_PIECE_GEMM, 0, 0, m, n, k, 2 * m * n * k, 1});
}

static void bytes(sink *s, rt_calib_kernel fam, double amount, int dim)
{
    put(s, (rt_piece){RT_PIECE_BYTES, fam, dim, 0, 0, 0, amount, 1});
}

static void flops(sink *s, rt_calib_kernel fam, double amount, int dim)
{
    put(s, (rt_piece){RT_PIECE_FLOPS, fam, dim, 0, 0, 0, amount, 1});
}

static void axpy(sink *s, double elems)
{
    bytes(s, RT_CK_ELEMENTWISE, 12 * elems, 0);
}

/* gather_rows / scatter_add_rows of ROWS rows of WIDTH floats */
static void permute(sink *s, double rows, double width)
{
    bytes(s, RT_CK_PERMUTE, rows * 8 + rows * width * 8, (int)width);
}

/* A pitched copy of rows of WIDTH floats, exec's concatenation and its split: a permute in
 * order, without the index bytes. The calibration has no copy family of its own. */
static void copy_rows(sink *s, double rows, double width)
{
    bytes(s, RT_CK_PERMUTE, rows * width * 8, (int)width);
}

/* linear_fwd: y = x w^T + b (bias and activation inside the kernel's pass over y) */
static void linear_fwd(sink *s, double rows, double in, double out)
{
    gemm(s, rows, out, in);
}

/* linear_bwd: the activation gradient, dW = dz^T x, dX = dz w (when wanted), db = sum dz */
static void linear_bwd(sink *s, double rows, double in, double out, int dx)
{
    bytes(s, RT_CK_ELEMENTWISE, 12 * rows * out, 0);
    gemm(s, out, in, rows);
    if (dx) gemm(s, rows, in, out);
    bytes(s, RT_CK_ELEMENTWISE, 4 * rows * out, 0);
}

static void chain(sink *s, int bwd, double rows, double in, const int *sizes, int n, int dx0)
{
    if (!bwd) {
        for (int i = 0; i < n; i++)
            linear_fwd(s, rows, i ? sizes[i - 1] : in, sizes[i]);
        return;
    }
    for (int i = n - 1; i >= 0; i--)
        linear_bwd(s, rows, i ? sizes[i - 1] : in, sizes[i], i ? 1 : dx0);
}

/* Input segments of layer L (one per table for 'embeddings' and 'sequence'): their widths
 * into W and whether a gradient flows back into each (dense features take none) into GRAD;
 * returns the count (at most CAP are written). */
static int segments(const rt_model *m, const rt_layer *l, double *w, int *grad, int cap)
{
    int n = 0;
    for (int i = 0; i < l->n_inputs; i++) {
        rt_src src = l->inputs[i];
        if (src.kind == RT_SRC_EMBEDDINGS || src.kind == RT_SRC_SEQUENCE) {
            for (int t = 0; t < m->n_tables; t++)
                if (m->tables[t].sequence == (src.kind == RT_SRC_SEQUENCE)) {
                    if (n < cap) w[n] = m->tables[t].dim, grad[n] = 1;
                    n++;
                }
        } else {
            double width = src.kind == RT_SRC_DENSE ? m->dense_features
                                                    : (double)m->layers[src.layer].out_width *
                                                          m->layers[src.layer].out_vectors;
            if (n < cap) w[n] = width, grad[n] = src.kind != RT_SRC_DENSE;
            n++;
        }
    }
    return n;
}

/* Several input segments are concatenated (one row copy per segment) before the forward, and
 * the input gradient split back (one row copy per segment) after the backward. */
static void concat(sink *s, const rt_model *m, const rt_layer *l, double rows, int bwd)
{
    enum { CAP = 1024 };
    double w[CAP];
    int grad[CAP];
    int n = segments(m, l, w, grad, CAP);
    if (n < 2) return;
    for (int i = 0; i < n && i < CAP; i++)
        if (!bwd || grad[i]) copy_rows(s, rows, w[i]);
}

static void dot(sink *s, const rt_layer *l, double rows, int bwd)
{
    double nf = l->in_vectors, d = l->in_width, np = nf * (nf - 1) / 2;
    /* the kernel computes each of the nf(nf-1)/2 pairs once: 2 d FLOPs each */
    double f = rows * nf * (nf - 1) * d;
    if (!bwd) {
        flops(s, RT_CK_INTERACTION, f, (int)d);
        copy_rows(s, rows, d); /* output concatenation: the first vector, then the pairs */
        copy_rows(s, rows, np);
        return;
    }
    copy_rows(s, rows, np);
    copy_rows(s, rows, d);
    flops(s, RT_CK_INTERACTION_BWD, 2 * f, (int)d);
    permute(s, rows, d); /* the passed-through first vector's gradient */
}

static void dcn(sink *s, const rt_layer *l, double rows, int bwd)
{
    double D = l->in_width, r = l->rank, e = rows * D;
    for (int c = 0; c < l->num_layers; c++) {
        if (!bwd) {
            gemm(s, rows, r, D);
            gemm(s, rows, D, r);
            bytes(s, RT_CK_ELEMENTWISE, 20 * e, 0); /* q += b, y = x0 * q + xl */
            continue;
        }
        bytes(s, RT_CK_ELEMENTWISE, 20 * e, 0); /* dq = dy x0, dx0 = dy q */
        bytes(s, RT_CK_ELEMENTWISE, 4 * e, 0);  /* d bias */
        gemm(s, D, r, rows);
        gemm(s, rows, r, D);
        gemm(s, D, r, rows);
        bytes(s, RT_CK_ELEMENTWISE, 8 * e, 0); /* dxl = dy */
        gemm(s, rows, D, r);
        if (c != l->num_layers - 1) axpy(s, e);
    }
    if (bwd) axpy(s, e);
}

double rt_layer_score_passes(const rt_layer *l, int backward)
{
    if (l->kind != RT_LAYER_HSTU && l->kind != RT_LAYER_FUXI) return 0;
    double rel = l->kind == RT_LAYER_FUXI ? 2 * (backward ? 3 : 2) : 0;
    return (double)l->num_layers * l->heads * ((backward ? 7 : 4) + rel);
}

/* Unfused attention of one block (rt_layer_score_passes, fp32 as exec's dense net): the bias +
 * SiLU pass on the SiLU curve (forward reads S, writes P: 8 B; backward reads dP and S, writes
 * dS: 12 B per element), the remaining passes of the GEMMs as elementwise bytes, and the
 * position and time channels' weight matrices likewise. */
static void unfused_scores(sink *s, const rt_layer *l, double pairs, int bwd)
{
    double H = l->heads, n = H * pairs;
    bytes(s, bwd ? RT_CK_SILU_BWD : RT_CK_SILU, (bwd ? 12 : 8) * n, 0);
    bytes(s, RT_CK_ELEMENTWISE, (bwd ? 16 : 8) * n, 0);
    for (int c = 1; l->kind == RT_LAYER_FUXI && c < 3; c++)
        bytes(s, RT_CK_ELEMENTWISE, (bwd ? 12 : 8) * n, 0);
}

/* HSTU and FuXi blocks (one head dimension: exec requires d_qk == d_v). */
static void gr(sink *s, const rt_layer *l, double T, double pairs, int bwd, int unfused)
{
    int fuxi = l->kind == RT_LAYER_FUXI;
    double in = l->in_width, d = l->d_model ? l->d_model : in, H = l->heads, hd = l->d_qk;
    double A = H * l->d_v, C = fuxi ? 3 : 1, F = fuxi ? (double)l->ffn_mult * d : 0;
    double wu = (C + 1) * A + 2 * H * hd;
    double attn = 2 * pairs * H * (hd + l->d_v);           /* q k^T and the sum over v */
    double attn_b = 2 * pairs * H * (3 * hd + 2 * l->d_v); /* scores again, dv, dS, dq, dk */
    int np = (int)C + 3, proj = d != in;
    if (!bwd && proj) linear_fwd(s, T, in, d);
    for (int b = 0; b < l->num_layers; b++) {
        if (!bwd) {
            bytes(s, RT_CK_NORM, 8 * T * d, 0);
            for (int p = 0; p < np; p++)
                linear_fwd(s, T, d, p <= C ? A : H * hd);
            bytes(s, RT_CK_SILU, 8 * T * wu, 0);
            flops(s, RT_CK_ATTENTION, attn, (int)hd);
            for (int c = 1; c < C; c++)
                flops(s, RT_CK_ATTENTION, 2 * pairs * A, (int)hd); /* position, time */
            if (unfused) unfused_scores(s, l, pairs, 0);
            bytes(s, RT_CK_NORM, 8 * C * T * A, 0);
            bytes(s, RT_CK_ELEMENTWISE, 12 * C * T * A, 0); /* gating */
            for (int c = 0; c < C; c++)
                linear_fwd(s, T, A, d);
            for (int c = 1; c < C; c++)
                axpy(s, T * d);
            axpy(s, T * d); /* residual */
            if (fuxi) {
                bytes(s, RT_CK_NORM, 8 * T * d, 0);
                linear_fwd(s, T, d, F);
                linear_fwd(s, T, d, F);
                bytes(s, RT_CK_SILU, 8 * T * F, 0);
                bytes(s, RT_CK_ELEMENTWISE, 12 * T * F, 0); /* swiglu product */
                linear_fwd(s, T, F, d);
                axpy(s, T * d);
            }
            continue;
        }
        if (fuxi) {
            linear_bwd(s, T, F, d, 1);
            bytes(s, RT_CK_ELEMENTWISE, 20 * T * F, 0); /* product backward */
            bytes(s, RT_CK_SILU_BWD, 12 * T * F, 0);
            linear_bwd(s, T, d, F, 1);
            linear_bwd(s, T, d, F, 1);
            axpy(s, T * d);
            bytes(s, RT_CK_NORM, 12 * T * d, 0);
            axpy(s, T * d);
        }
        for (int c = 0; c < C; c++)
            linear_bwd(s, T, A, d, 1);
        bytes(s, RT_CK_ELEMENTWISE, 20 * C * T * A, 0); /* gating backward */
        bytes(s, RT_CK_NORM, 12 * C * T * A, 0);
        flops(s, RT_CK_ATTENTION_BWD, attn_b, (int)hd);
        for (int c = 1; c < C; c++) {
            flops(s, RT_CK_ATTENTION_BWD, 4 * pairs * A, (int)hd);
            axpy(s, T * A);
        }
        if (unfused) unfused_scores(s, l, pairs, 1);
        bytes(s, RT_CK_SILU_BWD, 12 * T * wu, 0);
        for (int p = 0; p < np; p++) {
            linear_bwd(s, T, d, p <= C ? A : H * hd, 1);
            if (p) axpy(s, T * d);
        }
        bytes(s, RT_CK_NORM, 12 * T * d, 0);
        axpy(s, T * d); /* residual */
    }
    if (bwd && proj) linear_bwd(s, T, in, d, l->needs_dx);
}

static void mmoe(sink *s, const rt_layer *l, double R, int bwd)
{
    double in = (double)l->in_width * l->in_vectors, E = l->experts, K = l->tasks;
    double S = l->sizes[l->n_sizes - 1];
    double tw = l->n_tower_sizes ? l->tower_sizes[l->n_tower_sizes - 1] : 1;
    if (!bwd) {
        for (int e = 0; e < E; e++)
            chain(s, 0, R, in, l->sizes, l->n_sizes, 0);
        for (int t = 0; t < K; t++)
            linear_fwd(s, R, in, E);
        bytes(s, RT_CK_SOFTMAX, 8 * K * R * E, (int)E);
        for (int t = 0; t < K; t++) {
            bytes(s, RT_CK_ELEMENTWISE, 4 * (E * R * S + R * E + R * S), 0); /* mix */
            chain(s, 0, R, S, l->tower_sizes, l->n_tower_sizes, 0);
        }
        if (K > 1)
            for (int t = 0; t < K; t++)
                copy_rows(s, R, tw);
        return;
    }
    for (int t = 0; t < K; t++) {
        if (K > 1) copy_rows(s, R, tw);
        chain(s, 1, R, S, l->tower_sizes, l->n_tower_sizes, 1);
        bytes(s, RT_CK_ELEMENTWISE, 4 * (2 * E * R * S + R * S + 2 * R * E), 0); /* mix bwd */
        if (t) axpy(s, E * R * S);
    }
    bytes(s, RT_CK_SOFTMAX, 12 * K * R * E, (int)E);
    for (int t = 0; t < K; t++) {
        linear_bwd(s, R, in, E, l->needs_dx);
        if (t && l->needs_dx) axpy(s, R * in);
    }
    for (int e = 0; e < E; e++) {
        chain(s, 1, R, in, l->sizes, l->n_sizes, l->needs_dx);
        if (l->needs_dx) axpy(s, R * in);
    }
}

int rt_layer_pieces(const rt_model *m, int layer, int backward, double rows, double pairs,
                    int unfused, rt_piece *out, int cap)
{
    const rt_layer *l = &m->layers[layer];
    sink s = {out, cap, 0};
    if (!backward) concat(&s, m, l, rows, 0);
    switch (l->kind) {
    case RT_LAYER_MLP:
        chain(&s, backward, rows, (double)l->in_width * l->in_vectors, l->sizes, l->n_sizes,
              l->needs_dx);
        break;
    case RT_LAYER_DOT:
        dot(&s, l, rows, backward);
        break;
    case RT_LAYER_DCN:
        dcn(&s, l, rows, backward);
        break;
    case RT_LAYER_HSTU:
    case RT_LAYER_FUXI:
        gr(&s, l, rows, pairs, backward, unfused);
        break;
    case RT_LAYER_MMOE:
        mmoe(&s, l, rows, backward);
        break;
    default:
        break;
    }
    if (backward && l->needs_dx) concat(&s, m, l, rows, 1);
    return out && s.n > cap ? -1 : s.n;
}

int rt_loss_pieces(const rt_model *m, double outs, double neg, int dim, rt_piece *out, int cap)
{
    (void)m;
    sink s = {out, cap, 0};
    if (neg > 0) {
        /* queries, positives, negatives gathered; logits of every query against its positive
         * and the shared negatives, their gradients for the query and the candidates */
        bytes(&s, RT_CK_ELEMENTWISE, 8 * outs * dim, 0);
        permute(&s, outs, dim);
        permute(&s, outs, dim);
        permute(&s, neg, dim);
        flops(&s, RT_CK_SAMPLED_SOFTMAX, 3 * 2 * outs * (neg + 1) * dim, dim);
        for (int i = 0; i < 3; i++) {
            bytes(&s, RT_CK_ELEMENTWISE, 8 * (i < 2 ? outs : neg) * dim, 0);
            permute(&s, i < 2 ? outs : neg, dim);
        }
    } else {
        bytes(&s, RT_CK_ELEMENTWISE, 16 * outs, 0); /* logits, labels, gradient, scale */
    }
    return out && s.n > cap ? -1 : s.n;
}
