/* Layer cost arithmetic.
 *
 * Conventions (models/README.md says the same; tests/test_model_cost.c checks them):
 * - Every cost is per sample, a polynomial in the sample's token count L (rt_poly). Layers over
 *   a sequence (hstu, fuxi, and anything fed by them) work per token: their per-token cost goes
 *   to c[1]; attention goes to c[2] and c[1]; everything else to c[0]. A token of the input
 *   'sequence' is the concatenation of one embedding from every sequence table.
 * - FLOPs: a multiply-add is 2 FLOPs, and only matmul-class work counts (GEMM, bmm, the attention
 *   score and value products, the MMoE gate-weighted sum of expert outputs). Bias, activation,
 *   softmax, SiLU, norms and residual adds cost bytes, not FLOPs.
 * - Backward FLOPs = 2 x forward, for linear layers (input and weight gradients) and for
 *   weight-free products alike (gradients with respect to both operands). No exception.
 * - Attention is causal and counted over the L(L+1)/2 unmasked (query, key) pairs, the useful
 *   work that MFU may claim: per block 2 * L(L+1)/2 * heads * (d_qk + d_v) for HSTU, and
 *   d_qk + 3 d_v for FuXi, whose semantic, position and time channels each multiply by V.
 *   The score matrix is never stored: fused kernels recompute it, and recompute is not counted.
 * - Bytes: the minimum HBM traffic of activations per sample, in the dense dtype. Weights are
 *   read once per micro-batch, so they are not a per-sample cost and are not counted. Each kernel
 *   reads its inputs and writes its outputs once; bias and activation are fused into the GEMM
 *   that produces them; norms, gating, softmax and residual adds are kernels of their own.
 *   Backward bytes = 2 x forward bytes (it reads the output gradient and the saved input and
 *   writes the input gradient).
 * - act_bytes: activations kept for backward. A linear keeps its input; a gate keeps both
 *   operands; a fused attention keeps its output (q, k, v are kept as the projection output).
 * - params: weights and biases of linear layers; norm scales and relative attention bias tables
 *   are not counted (TurboGR Table 1's model sizes are reproduced this way).
 * - aux_params: what is trained beyond params: the relative attention bias tables of HSTU (one
 *   per block: heads x seq_len buckets) and FuXi (position and time: twice that), as
 *   rectwin-exec trains them. The dense AllReduce, the optimizer and the memory count them.
 * - dense_params is the sum of layer params; embedding_params = sum over tables of rows * dim. */
#include "model_cost.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "dtype.h"

/* What a set of inputs looks like: VECTORS vectors whose widths sum to FLAT; WIDTH is their
 * common width, or -1 when they differ. PER_TOKEN: one such set per token of the sequence. */
typedef struct {
    int vectors;
    double flat;
    int width;
    int per_token;
} shape;

/* Costs of one layer per unit (a sample, or a token for per-token layers), in elements for
 * bytes. ATTN is the coefficient of L(L+1) in the forward FLOPs. */
typedef struct {
    double flops, bytes, act, params;
    double attn;
} cost;

static const char *name_or(const char *s)
{
    return s ? s : "?";
}

static int fail(const rt_model *m, const rt_layer *l, FILE *err, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static int fail(const rt_model *m, const rt_layer *l, FILE *err, const char *fmt, ...)
{
    va_list ap;
    fprintf(err, "model %s: layer %s: ", name_or(m->name), name_or(l->name));
    va_start(ap, fmt);
    vfprintf(err, fmt, ap);
    va_end(ap);
    fputc('\n', err);
    return -1;
}

static void shape_add(shape *s, int vectors, int width)
{
    if (s->vectors == 0)
        s->width = width;
    else if (s->width != width)
        s->width = -1;
    s->vectors += vectors;
    s->flat += (double)vectors * width;
}

/* A token is the concatenation of one embedding from every sequence table. */
static int sequence_width(const rt_model *m, const rt_layer *l, FILE *err, int *width)
{
    *width = 0;
    for (int t = 0; t < m->n_tables; t++)
        if (m->tables[t].sequence) *width += m->tables[t].dim;
    if (!*width) return fail(m, l, err, "input 'sequence' but the model has no sequence tables");
    return 0;
}

/* Adds source SRC of layer LI to S. PER_TOKEN[j] says whether layer j's output is per token. */
static int add_source(const rt_model *m, int li, rt_src src, const int *per_token, shape *s,
                      FILE *err)
{
    const rt_layer *l = &m->layers[li];
    int before = s->vectors, width, tok = 0;
    switch (src.kind) {
    case RT_SRC_DENSE:
        if (m->dense_features <= 0)
            return fail(m, l, err, "input 'dense' but the model has dense_features: 0");
        shape_add(s, 1, m->dense_features);
        break;
    case RT_SRC_EMBEDDINGS:
        for (int t = 0; t < m->n_tables; t++)
            if (!m->tables[t].sequence) shape_add(s, 1, m->tables[t].dim);
        if (s->vectors == before)
            return fail(m, l, err,
                        "input 'embeddings' but the model has no pooled (non-sequence) "
                        "tables");
        break;
    case RT_SRC_SEQUENCE:
        if (sequence_width(m, l, err, &width)) return -1;
        shape_add(s, 1, width);
        tok = 1;
        break;
    case RT_SRC_LAYER:
        if (src.layer < 0 || src.layer >= li)
            return fail(m, l, err, "input refers to layer index %d, which is not an earlier layer",
                        src.layer);
        shape_add(s, m->layers[src.layer].out_vectors, m->layers[src.layer].out_width);
        tok = per_token[src.layer];
        break;
    default:
        return fail(m, l, err, "unknown input kind %d", (int)src.kind);
    }
    if (before > 0 && tok != s->per_token)
        return fail(m, l, err, "mixes per-token (sequence) and per-sample inputs");
    s->per_token = tok;
    return 0;
}

/* Gives a layer without an explicit input its default: the previous layer, or the dense
 * features for the first layer. */
static int default_input(rt_model *m, int li)
{
    rt_layer *l = &m->layers[li];
    if (l->n_inputs > 0) return 0;
    rt_src *in = realloc(l->inputs, sizeof *in);
    if (!in) return -1;
    in[0] = li ? (rt_src){RT_SRC_LAYER, li - 1} : (rt_src){RT_SRC_DENSE, 0};
    l->inputs = in;
    l->n_inputs = 1;
    return 0;
}

static void linear(cost *c, double in, double out)
{
    c->flops += 2 * in * out;
    c->params += in * out + out;
    c->bytes += in + out;
    c->act += in;
}

/* An unfused elementwise kernel (norm, gate, softmax, residual add). */
static void pointwise(cost *c, double read, double written, double kept)
{
    c->bytes += read + written;
    c->act += kept;
}

static double mlp(cost *c, double in, const int *sizes, int n)
{
    for (int i = 0; i < n; i++) {
        linear(c, in, sizes[i]);
        in = sizes[i];
    }
    return in;
}

static void dcn(cost *c, double D, double r, int layers)
{
    for (int i = 0; i < layers; i++) {
        c->flops += 4 * D * r;
        c->params += 2 * D * r + D;
        /* x0 and x_l in, the rank-r intermediate out and back, x_{l+1} out */
        c->bytes += 3 * D + 2 * r;
        /* x_l, V^T x_l, and U V^T x_l + b (the gradient of x0 needs it) */
        c->act += 2 * D + r;
    }
}

static void hstu_block(cost *c, double d, double H, double dqk, double dv)
{
    pointwise(c, d, d, 0); /* input norm; its output is kept by f1 */
    linear(c, d, H * (2 * dqk + 2 * dv));
    c->act += H * (2 * dqk + 2 * dv); /* u, v, q, k after SiLU */
    c->attn += H * (dqk + dv);
    pointwise(c, H * (2 * dqk + dv), H * dv, H * dv); /* fused attention */
    pointwise(c, 2 * H * dv, H * dv, 0);              /* norm(AV) * u; f2 keeps the result */
    linear(c, H * dv, d);
    pointwise(c, 2 * d, d, 0); /* residual */
}

/* FuXi-alpha block: AMS (u is three channels wide, v is shared by the semantic, position and
 * time channels) and the MFFN (channel fusion lin0 + residual, then a SwiGLU FFN). */
static void fuxi_block(cost *c, double d, double H, double dqk, double dv, double mult)
{
    double ffn = mult * d;
    pointwise(c, d, d, 0);
    linear(c, d, H * (4 * dv + 2 * dqk));
    c->act += H * (4 * dv + 2 * dqk);
    c->attn += H * (dqk + 3 * dv);
    pointwise(c, H * (2 * dqk + dv), 3 * H * dv, 3 * H * dv);
    pointwise(c, 6 * H * dv, 3 * H * dv, 0);
    linear(c, 3 * H * dv, d);
    pointwise(c, 2 * d, d, 0);
    pointwise(c, d, d, 0);
    linear(c, d, 2 * ffn); /* gate and up projections share one input */
    pointwise(c, 2 * ffn, ffn, 2 * ffn);
    linear(c, ffn, d);
    pointwise(c, 2 * d, d, 0);
}

/* MMoE: every expert MLP on the input, a softmax gate per task, the gate-weighted sum of expert
 * outputs, then a tower MLP per task. Returns the tower output width. */
static double mmoe(cost *c, const rt_layer *l, double in)
{
    double E = l->experts, s = 0;
    for (int e = 0; e < l->experts; e++)
        s = mlp(c, in, l->sizes, l->n_sizes);
    double out = s;
    for (int t = 0; t < l->tasks; t++) {
        linear(c, in, E);
        pointwise(c, E, E, E);
        c->flops += 2 * E * s;
        c->bytes += E * s + E + s;
        c->act += E * s;
        out = mlp(c, s, l->tower_sizes, l->n_tower_sizes);
    }
    return out;
}

static int check_params(const rt_model *m, const rt_layer *l, FILE *err)
{
    switch (l->kind) {
    case RT_LAYER_MLP:
        if (l->n_sizes < 1) return fail(m, l, err, "mlp needs a non-empty 'sizes'");
        break;
    case RT_LAYER_DCN:
        if (l->num_layers < 1 || l->rank < 1)
            return fail(m, l, err, "dcn needs num_layers >= 1 and rank >= 1 (got %d and %d)",
                        l->num_layers, l->rank);
        break;
    case RT_LAYER_FUXI:
        if (l->ffn_mult < 1) return fail(m, l, err, "fuxi needs ffn_mult >= 1");
        /* fall through */
    case RT_LAYER_HSTU:
        if (l->num_layers < 1 || l->heads < 1 || l->d_qk < 1 || l->d_v < 1 || l->d_model < 0)
            return fail(m, l, err, "%s needs blocks, heads, d_qk, d_v >= 1 and d_model >= 0",
                        rt_layer_kind_names[l->kind]);
        break;
    case RT_LAYER_MMOE:
        if (l->experts < 1 || l->tasks < 1 || l->n_sizes < 1)
            return fail(m, l, err, "mmoe needs experts >= 1, tasks >= 1 and a non-empty 'sizes'");
        break;
    case RT_LAYER_DOT:
        break;
    default:
        return fail(m, l, err, "unknown layer type %d", (int)l->kind);
    }
    return 0;
}

/* Computes cost C of layer LI from its input shape IN and sets its in/out shapes. */
static int layer_cost(rt_model *m, int li, const shape *in, cost *c, FILE *err)
{
    rt_layer *l = &m->layers[li];
    l->in_vectors = 1;
    l->in_width = (int)in->flat;
    l->out_vectors = 1;
    int d;
    switch (l->kind) {
    case RT_LAYER_MLP:
        l->out_width = (int)mlp(c, in->flat, l->sizes, l->n_sizes);
        break;
    case RT_LAYER_DOT: {
        if (in->width < 0)
            return fail(m, l, err,
                        "dot needs vectors of equal width; its inputs have %d vectors "
                        "of unequal widths",
                        in->vectors);
        double n = in->vectors, w = in->width;
        l->in_vectors = in->vectors;
        l->in_width = in->width;
        l->out_width = in->width + in->vectors * (in->vectors - 1) / 2;
        c->flops = 2 * n * n * w;
        c->bytes = n * w + l->out_width;
        c->act = n * w;
        break;
    }
    case RT_LAYER_DCN:
        dcn(c, in->flat, l->rank, l->num_layers);
        l->out_width = (int)in->flat;
        break;
    case RT_LAYER_HSTU:
    case RT_LAYER_FUXI:
        if (!in->per_token)
            return fail(m, l, err, "%s needs a sequence input (per-token vectors)",
                        rt_layer_kind_names[l->kind]);
        d = l->d_model ? l->d_model : (int)in->flat;
        if (d != (int)in->flat) linear(c, in->flat, d); /* input projection to d_model */
        for (int b = 0; b < l->num_layers; b++) {
            if (l->kind == RT_LAYER_HSTU)
                hstu_block(c, d, l->heads, l->d_qk, l->d_v);
            else
                fuxi_block(c, d, l->heads, l->d_qk, l->d_v, l->ffn_mult);
        }
        l->aux_params = (double)l->num_layers * l->heads * (m->seq_len > 0 ? m->seq_len : 1) *
                        (l->kind == RT_LAYER_FUXI ? 2 : 1);
        l->out_width = d;
        break;
    case RT_LAYER_MMOE:
        l->out_width = (int)mmoe(c, l, in->flat);
        l->out_vectors = l->tasks;
        break;
    default:
        return fail(m, l, err, "unknown layer type %d", (int)l->kind);
    }
    return 0;
}

static rt_poly poly_scale(rt_poly p, double k)
{
    for (int i = 0; i < 3; i++)
        p.c[i] *= k;
    return p;
}

static void poly_add(rt_poly *acc, rt_poly p)
{
    for (int i = 0; i < 3; i++)
        acc->c[i] += p.c[i];
}

/* Places per-unit cost C into layer L's polynomials; ELEM is the bytes of one element. */
static void store_cost(rt_layer *l, const cost *c, int per_token, double elem)
{
    int k = per_token ? 1 : 0;
    rt_poly f = {{0}}, b = {{0}}, a = {{0}};
    f.c[k] = c->flops;
    f.c[2] += c->attn;
    f.c[1] += c->attn; /* L(L+1) = L^2 + L */
    b.c[k] = c->bytes * elem;
    a.c[k] = c->act * elem;
    l->fwd_flops = f;
    l->bwd_flops = poly_scale(f, 2);
    l->fwd_bytes = b;
    l->bwd_bytes = poly_scale(b, 2);
    l->act_bytes = a;
    l->params = c->params;
}

static void sum_model(rt_model *m)
{
    rt_poly zero = {{0}};
    m->fwd_flops = m->bwd_flops = m->fwd_bytes = m->bwd_bytes = m->act_bytes = zero;
    m->dense_params = m->aux_params = 0;
    for (int i = 0; i < m->n_layers; i++) {
        const rt_layer *l = &m->layers[i];
        poly_add(&m->fwd_flops, l->fwd_flops);
        poly_add(&m->bwd_flops, l->bwd_flops);
        poly_add(&m->fwd_bytes, l->fwd_bytes);
        poly_add(&m->bwd_bytes, l->bwd_bytes);
        poly_add(&m->act_bytes, l->act_bytes);
        m->dense_params += l->params;
        m->aux_params += l->aux_params;
    }
    m->embedding_params = 0;
    for (int t = 0; t < m->n_tables; t++)
        m->embedding_params += (double)m->tables[t].rows * m->tables[t].dim;
}

int rt_model_compute_costs(rt_model *m, FILE *err)
{
    if (m->n_layers < 1) {
        fprintf(err, "model %s: has no layers\n", name_or(m->name));
        return -1;
    }
    int *per_token = calloc((size_t)m->n_layers, sizeof *per_token);
    if (!per_token) {
        fprintf(err, "model %s: out of memory\n", name_or(m->name));
        return -1;
    }
    double elem = (double)rt_dtype_bytes(m->dense_dtype);
    int rc = 0;
    for (int li = 0; li < m->n_layers && !rc; li++) {
        rt_layer *l = &m->layers[li];
        shape in = {0};
        cost c = {0};
        if (check_params(m, l, err))
            rc = -1;
        else if (default_input(m, li))
            rc = fail(m, l, err, "out of memory");
        for (int s = 0; s < l->n_inputs && !rc; s++)
            rc = add_source(m, li, l->inputs[s], per_token, &in, err);
        if (!rc) rc = layer_cost(m, li, &in, &c, err);
        if (!rc) {
            per_token[li] = in.per_token;
            l->per_token = in.per_token;
            l->needs_dx = 0;
            for (int s = 0; s < l->n_inputs; s++)
                if (l->inputs[s].kind != RT_SRC_DENSE) l->needs_dx = 1;
            store_cost(l, &c, in.per_token, elem);
        }
    }
    free(per_token);
    if (!rc) sum_model(m);
    return rc;
}
