#include "plan_common.h"

#include <stdlib.h>
#include <string.h>

#include "layer_ops.h"
#include "negatives.h"

/* A token is one embedding of every sequence table, concatenated (models/README.md), and the
 * workload draws one length per sample shared by all of them: the tokens are the length of
 * any one sequence table, not the sum over tables (that charged MTGR about 5x its FLOPs). */
double rt_plan_sample_tokens(const rt_scenario *s, const rt_workload *w, int r, int i)
{
    if (!s->model.seq_len) return 1;
    for (int f = 0; f < w->n_features; f++)
        if (s->model.tables[f].sequence) return rt_workload_batch(w, r, f)->lengths[i];
    return 0;
}

/* One output per token for sequence models, one per sample otherwise. */
static rt_poly output_tokens(const rt_scenario *s)
{
    return s->model.seq_len ? (rt_poly){{0, 1, 0}} : (rt_poly){{1, 0, 0}};
}

int rt_plan_rep_batch(const rt_workload *w, int r)
{
    return w->n_features ? rt_workload_batch(w, r, 0)->batch : w->batch;
}

/* Sum over the rep's samples of a per-sample polynomial in the token count. */
static double batch_sum(const rt_scenario *s, const rt_workload *w, int r, rt_poly p)
{
    int n = rt_plan_rep_batch(w, r);
    if (!s->model.seq_len) return n * rt_poly_eval(p, 1);
    double t = 0;
    for (int i = 0; i < n; i++)
        t += rt_poly_eval(p, rt_plan_sample_tokens(s, w, r, i));
    return t;
}

int rt_plan_padded_len(const rt_scenario *s, const rt_workload *w, int r)
{
    if (s->workload.seq_layout != RT_SEQ_PADDED) return 0;
    int n = rt_plan_rep_batch(w, r);
    double mx = 0;
    for (int i = 0; i < n; i++) {
        double t = rt_plan_sample_tokens(s, w, r, i);
        mx = t > mx ? t : mx;
    }
    return (int)mx;
}

/* The same sum over the work the layers execute: padded, every sample is as long as the
 * longest of the batch. */
static double exec_sum(const rt_scenario *s, const rt_workload *w, int r, rt_poly p)
{
    int len = rt_plan_padded_len(s, w, r);
    return len ? rt_plan_rep_batch(w, r) * rt_poly_eval(p, len) : batch_sum(s, w, r, p);
}

/* Width of a token: one embedding of every sequence table. */
static double token_width(const rt_model *m)
{
    double wd = 0;
    for (int t = 0; t < m->n_tables; t++)
        wd += m->tables[t].sequence ? m->tables[t].dim : 0;
    return wd;
}

static void add_pad(rt_graph *g, const rt_scenario *s, const int *after, int n_after,
                    rt_dense_ops *d)
{
    d->pad = d->unpad = -1;
    if (s->workload.seq_layout != RT_SEQ_PADDED) return;
    d->pad = rt_graph_add_kernel(g, "dense.fwd", RT_STREAM_COMPUTE, RT_K_UNPERMUTE,
                                 s->plan.dense_dtype, "seq_pad", after, n_after);
    rt_graph_set_role(g, d->pad, RT_ROLE_SEQ_PAD, -1, -1);
}

void rt_plan_add_dense(rt_graph *g, const rt_scenario *s, const int *after, int n_after,
                       rt_group group, rt_dense_ops *d)
{
    const rt_model *m = &s->model;
    rt_dtype dt = s->plan.dense_dtype;
    int prev = -1;
    add_pad(g, s, after, n_after, d);
    if (d->pad >= 0) after = &d->pad, n_after = 1;
    d->first_fwd = g->n_ops;
    for (int l = 0; l < m->n_layers; l++) {
        /* Layers run in order; the first waits for every embedding the model consumes. */
        if (l == 0)
            prev = rt_graph_add_kernel(g, "dense.fwd", RT_STREAM_COMPUTE, RT_K_DENSE_FWD, dt,
                                       m->layers[l].name, after, n_after);
        else
            prev = rt_graph_add_kernel(g, "dense.fwd", RT_STREAM_COMPUTE, RT_K_DENSE_FWD, dt,
                                       m->layers[l].name, &prev, 1);
        rt_graph_set_role(g, prev, RT_ROLE_DENSE_FWD, -1, l);
    }
    d->last_fwd = prev;
    /* Offloaded negatives: the copies come before the loss in the graph's order (an executor
     * running ops in order gathers and offloads, then fetches the first segment) but the loss
     * does not wait for them: segment n + 1 arrives while n is scored. The backward waits for
     * the last fetched segment. */
    int bwd_deps[2] = {prev, rt_neg_add_ops(g, s, after, n_after, d->last_fwd, &d->neg_offload)};
    d->neg_fetch = bwd_deps[1];
    d->loss = prev =
        rt_graph_add_kernel(g, "dense.fwd", RT_STREAM_COMPUTE, RT_K_LOSS, dt, "loss", &prev, 1);
    rt_graph_set_role(g, d->loss, RT_ROLE_LOSS, -1, -1);
    d->first_bwd = g->n_ops;
    for (int l = m->n_layers - 1; l >= 0; l--) {
        int first = l == m->n_layers - 1 && bwd_deps[1] >= 0;
        bwd_deps[0] = prev;
        prev = rt_graph_add_kernel(g, "dense.bwd", RT_STREAM_COMPUTE, RT_K_DENSE_BWD, dt,
                                   m->layers[l].name, bwd_deps, first ? 2 : 1);
        rt_graph_set_role(g, prev, RT_ROLE_DENSE_BWD, -1, l);
    }
    d->last_bwd = prev;
    if (d->pad >= 0) {
        /* The embedding gradients leave in the jagged layout the exchanges expect. */
        d->unpad = rt_graph_add_kernel(g, "dense.bwd", RT_STREAM_COMPUTE, RT_K_UNPERMUTE, dt,
                                       "seq_unpad", &prev, 1);
        rt_graph_set_role(g, d->unpad, RT_ROLE_SEQ_UNPAD, -1, -1);
        d->last_bwd = d->unpad;
    }
    rt_coll_algo algo =
        (rt_coll_algo[]){RT_ALGO_AUTO, RT_ALGO_RING, RT_ALGO_TREE, RT_ALGO_HIERARCHICAL,
                         RT_ALGO_NVLS}[s->plan.dense_allreduce];
    d->allreduce = rt_graph_add_collective(g, "dense.allreduce", RT_STREAM_COMM, RT_COLL_ALLREDUCE,
                                           algo, group, "dense_grad_allreduce", &prev, 1);
    d->update = rt_graph_add_kernel(g, "dense.update", RT_STREAM_COMPUTE, RT_K_DENSE_UPDATE,
                                    RT_DT_FP32, "dense_optimizer", &d->allreduce, 1);
    rt_graph_set_role(g, d->allreduce, RT_ROLE_DENSE_ALLREDUCE, -1, -1);
    rt_graph_set_role(g, d->update, RT_ROLE_DENSE_UPDATE, -1, -1);
}

/* The launches of an op (models/layer_ops.h) into the graph's arena. */
static void set_pieces(rt_graph *g, rt_op_cost *c, int n, const rt_piece *tmp)
{
    c->n_pieces = n;
    c->pieces = n ? memcpy(rt_graph_pieces(g, n), tmp, sizeof *tmp * (size_t)n) : NULL;
}

/* Only a topology with calibration tables costs launches one by one: without, the engines
 * price a kernel by its FLOPs and bytes alone, so the pieces would be unused weight. */
static void fill_pieces(rt_graph *g, const rt_scenario *s, const rt_workload *w,
                        const rt_dense_ops *d, int r)
{
    const rt_model *m = &s->model;
    double batch = rt_plan_rep_batch(w, r), tokens = batch_sum(s, w, r, output_tokens(s));
    double run_tokens = exec_sum(s, w, r, output_tokens(s));
    double pairs = s->model.seq_len ? exec_sum(s, w, r, (rt_poly){{0, 0.5, 0.5}}) : 0;
    int un = s->plan.attention == RT_ATTN_UNFUSED;
    for (int l = 0; l < m->n_layers; l++) {
        double rows = m->layers[l].per_token ? run_tokens : batch;
        for (int bwd = 0; bwd < 2; bwd++) {
            int op = bwd ? d->first_bwd + (m->n_layers - 1 - l) : d->first_fwd + l;
            int n = rt_layer_pieces(m, l, bwd, rows, pairs, un, NULL, 0);
            rt_piece *tmp = malloc(sizeof *tmp * (size_t)(n > 0 ? n : 1));
            if (!tmp) abort(); /* as the graph's own arena does */
            set_pieces(g, rt_graph_cost(g, op, r),
                       rt_layer_pieces(m, l, bwd, rows, pairs, un, tmp, n), tmp);
            free(tmp);
        }
    }
    rt_piece loss[16];
    int dm = m->n_tables ? m->tables[0].dim : 1;
    int n = rt_loss_pieces(m, tokens, m->negatives > 0 ? m->negatives : 0, dm, loss, 16);
    set_pieces(g, rt_graph_cost(g, d->loss, r), n > 0 ? n : 0, loss);
}

/* Pad: read the real tokens, write the whole padded block (zeros included). Unpad: gather the
 * real tokens' gradients out of the padded block. */
static void fill_pad(rt_graph *g, const rt_scenario *s, const rt_workload *w, const rt_dense_ops *d,
                     int r)
{
    double eb = (double)rt_dtype_bytes(s->plan.dense_dtype), wd = token_width(&s->model);
    double real = batch_sum(s, w, r, output_tokens(s));
    double padded = exec_sum(s, w, r, output_tokens(s));
    rt_graph_cost(g, d->pad, r)->bytes = (real + padded) * wd * eb;
    rt_graph_cost(g, d->unpad, r)->bytes = 2 * real * wd * eb;
}

/* Sampled softmax's queries: every token with a next token of its sequence to predict. */
static double neg_queries(const rt_scenario *s, const rt_workload *w, int r)
{
    if (!s->model.seq_len) return rt_plan_rep_batch(w, r);
    double q = 0;
    for (int i = 0; i < rt_plan_rep_batch(w, r); i++) {
        double L = rt_plan_sample_tokens(s, w, r, i);
        q += L > 1 ? L - 1 : 0;
    }
    return q;
}

void rt_plan_fill_dense(rt_graph *g, const rt_scenario *s, const rt_workload *w,
                        const rt_dense_ops *d, int r)
{
    const rt_model *m = &s->model;
    double eb = (double)rt_dtype_bytes(s->plan.dense_dtype);
    /* Unfused attention: the score-shaped matrices' round trips over every causal pair. */
    double pairs = s->plan.attention == RT_ATTN_UNFUSED && s->model.seq_len
                       ? exec_sum(s, w, r, (rt_poly){{0, 0.5, 0.5}}) * eb
                       : 0;
    for (int l = 0; l < m->n_layers; l++) {
        const rt_layer *ly = &m->layers[l];
        rt_op_cost *f = rt_graph_cost(g, d->first_fwd + l, r);
        rt_op_cost *b = rt_graph_cost(g, d->first_bwd + (m->n_layers - 1 - l), r);
        /* Weights are read once per pass; the backward also writes their gradients. */
        f->flops = exec_sum(s, w, r, ly->fwd_flops);
        f->bytes = exec_sum(s, w, r, ly->fwd_bytes) + ly->params * eb +
                   pairs * rt_layer_score_passes(ly, 0);
        b->flops = exec_sum(s, w, r, ly->bwd_flops);
        b->bytes = exec_sum(s, w, r, ly->bwd_bytes) + 2 * ly->params * eb +
                   pairs * rt_layer_score_passes(ly, 1);
    }
    if (d->pad >= 0) fill_pad(g, s, w, d, r);
    /* The loss reads real tokens only, padded or not (padded positions are masked). BCE over one
     * logit per sample (per token for sequence models): read logit and label, write the gradient.
     */
    rt_op_cost *loss = rt_graph_cost(g, d->loss, r);
    double outs = batch_sum(s, w, r, output_tokens(s));
    rt_neg_loss_cost(s, outs, &loss->flops, &loss->bytes);
    if (d->neg_offload >= 0) {
        double q = neg_queries(s, w, r);
        rt_graph_cost(g, d->neg_offload, r)->bytes = rt_neg_offload_bytes(s, q);
        rt_graph_cost(g, d->neg_fetch, r)->bytes = rt_neg_fetch_bytes(s, q);
    }
    rt_op_cost *ar = rt_graph_cost(g, d->allreduce, r);
    double trained = m->dense_params + m->aux_params;
    ar->bytes = trained * 4; /* fp32 gradients, as DDP reduces them */
    rt_op_cost *up = rt_graph_cost(g, d->update, r);
    /* Adam-class step: read weight, grad, two moments; write weight and moments. */
    up->bytes = trained * 4 * 7;
    up->flops = trained * 10;
    if (s->topology.calib) fill_pieces(g, s, w, d, r);
}

double rt_plan_dense_flops(const rt_scenario *s, const rt_workload *w, int r)
{
    rt_poly t = s->model.fwd_flops;
    for (int i = 0; i < 3; i++)
        t.c[i] += s->model.bwd_flops.c[i];
    return batch_sum(s, w, r, t);
}

void rt_plan_set_model_flops(rt_graph *g, const rt_scenario *s, const rt_workload *w)
{
    double total = 0;
    for (int r = 0; r < w->n_reps; r++)
        total += w->rep_weight[r] * rt_plan_dense_flops(s, w, r);
    g->model_flops = total;
}

double rt_plan_weights_memory(const rt_scenario *s)
{
    /* Weight in the compute dtype, fp32 master weight and gradient, two fp32 moments. */
    return (s->model.dense_params + s->model.aux_params) *
           ((double)rt_dtype_bytes(s->plan.dense_dtype) + 4 * 4);
}

/* Sum of P over samples [lo, hi) of rep r as the layers run them (padded: each as long as the
 * longest of the range). */
static double range_sum(const rt_scenario *s, const rt_workload *w, int r, rt_poly p, int lo,
                        int hi, int padded)
{
    if (!s->model.seq_len) return (hi - lo) * rt_poly_eval(p, 1);
    double t = 0, mx = 0;
    for (int i = lo; i < hi; i++) {
        double L = rt_plan_sample_tokens(s, w, r, i);
        t += rt_poly_eval(p, L);
        mx = L > mx ? L : mx;
    }
    return padded ? (hi - lo) * rt_poly_eval(p, mx) : t;
}

/* The most P over the micro-batches of rep r's batch (plans/accumulate.h: plan.grad_accum
 * slices it into k, and one micro-batch's activations live at a time); the whole batch when
 * k is 1. */
static double micro_max(const rt_scenario *s, const rt_workload *w, int r, rt_poly p, int padded)
{
    int n = rt_plan_rep_batch(w, r), k = s->plan.grad_accum > 1 ? s->plan.grad_accum : 1;
    double mx = 0;
    for (int m = 0; m < k; m++) {
        double v =
            range_sum(s, w, r, p, (int)((long)n * m / k), (int)((long)n * (m + 1) / k), padded);
        mx = v > mx ? v : mx;
    }
    return mx;
}

/* Padded, the layers keep the padded tokens' activations and the padded input block. */
double rt_plan_activation_memory(const rt_scenario *s, const rt_workload *w, int r)
{
    rt_poly p = s->model.act_bytes;
    int padded = s->workload.seq_layout == RT_SEQ_PADDED;
    if (padded) {
        double blk = token_width(&s->model) * (double)rt_dtype_bytes(s->plan.dense_dtype);
        for (int i = 0; i < 3; i++)
            p.c[i] += blk * output_tokens(s).c[i];
    }
    return micro_max(s, w, r, p, padded);
}

double rt_plan_negatives_memory(const rt_scenario *s, const rt_workload *w, int r)
{
    /* Sampled softmax keeps, per output token, the gathered negative embeddings and their
     * fp32 logits for the backward: the HBM TurboGR's negative-sampling section is about. Real
     * tokens of the largest micro-batch, padded or not. */
    return rt_neg_memory(s, micro_max(s, w, r, output_tokens(s), 0));
}

double rt_plan_dense_memory(const rt_scenario *s, const rt_workload *w, int r)
{
    return rt_plan_weights_memory(s) + rt_plan_activation_memory(s, w, r) +
           rt_plan_negatives_memory(s, w, r);
}
