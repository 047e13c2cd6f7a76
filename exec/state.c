/* Setting up and tearing down one rank's exec state, its communicators and byte counters. */
#include <stdlib.h>
#include <string.h>

#include <libfyaml.h>

#include "cfg.h"
#include "exec.h"
#include "grad_accum.h"
#include "state.h"

int rt_xbuf_reserve(rt_xdev *d, rt_xbuf *b, size_t bytes, FILE *err)
{
    if (bytes <= b->cap && b->p) return 0;
    /* Grow geometrically: iteration sizes vary a little and reallocating each time costs. */
    size_t cap = bytes + bytes / 4 + 64;
    void *p = d->ops->alloc(d, cap);
    if (!p) {
        fprintf(err, "exec: out of %s memory: %zu bytes requested with %zu allocated (peak %zu)\n",
                d->ops->name, cap, d->bytes_now, d->bytes_peak);
        return -1;
    }
    if (b->p) d->ops->release(d, b->p);
    b->p = p, b->cap = cap;
    return 0;
}

void rt_xbuf_free(rt_xdev *d, rt_xbuf *b)
{
    if (b->p) d->ops->release(d, b->p);
    b->p = NULL, b->cap = 0;
}

rt_xgroup *rt_xexec_group(rt_xexec *x, rt_group g, FILE *err)
{
    for (int i = 0; i < x->n_groups; i++)
        if (x->group_keys[i].size == g.size && x->group_keys[i].stride == g.stride)
            return x->groups[i];
    rt_group *k = realloc(x->group_keys, sizeof *k * (size_t)(x->n_groups + 1));
    if (k) x->group_keys = k;
    rt_xgroup **v = realloc(x->groups, sizeof *v * (size_t)(x->n_groups + 1));
    if (v) x->groups = v;
    if (!k || !v) {
        fprintf(err, "exec: out of host memory\n");
        return NULL;
    }
    rt_xgroup *grp = x->comm->ops->group_open(x->comm, g, err);
    if (!grp) return NULL;
    x->group_keys[x->n_groups] = g;
    x->groups[x->n_groups++] = grp;
    return grp;
}

void rt_xexec_count(rt_xexec *x, int op, double bytes, double recv_bytes)
{
    if (!x->counting) return;
    x->moved[op].bytes += bytes;
    x->moved[op].recv_bytes += recv_bytes;
    x->moved[op].seen = 1;
}

void rt_xexec_count_peers(rt_xexec *x, int op, const size_t *send, const size_t *recv, int n)
{
    if (!x->counting) return;
    rt_xbytes *m = &x->moved[op];
    if (!m->send) {
        m->send = calloc((size_t)n, sizeof(uint64_t));
        m->recv = calloc((size_t)n, sizeof(uint64_t));
        if (!m->send || !m->recv) return; /* the check then reports the op as uncounted */
    }
    for (int k = 0; k < n; k++) {
        m->send[k] += send[k], m->recv[k] += recv[k];
        m->bytes += (double)send[k], m->recv_bytes += (double)recv[k];
    }
    m->seen = 1;
}

/* plan.attention unfused runs HSTU and FuXi blocks as separate kernels over materialized
 * scores (kernels/cpu/attention_unfused.c). The CUDA backend has only the fused kernels, so
 * running it there would measure the other variant than the one predicted: refused, located. */
static int refuse_unfused_attention(const rt_xexec *x)
{
    const rt_scenario *s = x->s;
    if (s->plan.attention != RT_ATTN_UNFUSED || x->dev->ops->attn_unfused_fwd) return 0;
    for (int l = 0; l < s->model.n_layers; l++) {
        rt_layer_kind k = s->model.layers[l].kind;
        if (k != RT_LAYER_HSTU && k != RT_LAYER_FUXI) continue;
        struct fy_node *at = fy_node_mapping_lookup_by_string(s->plan.node, "attention", FY_NT);
        rt_cfg_error(s->plan.cfg, at,
                     "attention unfused is not executed by rectwin-exec on device %s (fused "
                     "attention kernels only; rectwin sim prices it); allowed: attention fused, "
                     "or unfused on device cpu",
                     x->dev->ops->name);
        return -1;
    }
    return 0;
}

/* Every op must have an executor: a plan whose ops carry no role is not executable yet. */
static int check_executable(const rt_xexec *x, FILE *err)
{
    const rt_scenario *s = x->s;
    if (rt_xaccum_check(s, err) || refuse_unfused_attention(x)) return -1;
    for (int o = 0; o < x->g->n_ops; o++)
        if (x->g->ops[o].role == RT_ROLE_NONE) {
            fprintf(err,
                    "exec: plan '%s' builds op '%s' (phase %s), which rectwin-exec cannot run "
                    "yet; executable: flat, fused, hsp (sync sparse), sptt (tower module "
                    "linear or none)\n",
                    s->plan.name, x->g->ops[o].name ? x->g->ops[o].name : "?",
                    x->g->phases[x->g->ops[o].phase]);
            return -1;
        }
    return 0;
}

static int alloc_slot(rt_xslot *v, int T)
{
    size_t n = (size_t)(T ? T : 1);
    v->batch_id = -1;
    v->emb = calloc(n, sizeof(float *)), v->emb_buf = calloc(n, sizeof(rt_xbuf));
    v->grad_copy = calloc(n, sizeof(rt_xbuf));
    v->d_offsets = calloc(n, sizeof(int64_t *)), v->h_offsets = calloc(n, sizeof(int64_t *));
    v->off_buf = calloc(n, sizeof(rt_xbuf));
    return v->emb && v->emb_buf && v->grad_copy && v->d_offsets && v->h_offsets && v->off_buf ? 0
                                                                                              : -1;
}

/* Slots hold both the scenario's tables and the dense net's (tower outputs). */
static int slot_tables(const rt_xexec *x)
{
    int a = x->s->model.n_tables, b = x->net_model ? x->net_model->n_tables : 0;
    return a > b ? a : b;
}

static void free_slot(rt_xexec *x, rt_xslot *v)
{
    int T = slot_tables(x);
    for (int t = 0; t < T; t++) {
        if (v->emb_buf) rt_xbuf_free(x->dev, &v->emb_buf[t]);
        if (v->grad_copy) rt_xbuf_free(x->dev, &v->grad_copy[t]);
        if (v->off_buf) rt_xbuf_free(x->dev, &v->off_buf[t]);
        if (v->h_offsets) free(v->h_offsets[t]);
    }
    rt_xbuf_free(x->dev, &v->dense_buf), rt_xbuf_free(x->dev, &v->label_buf);
    free(v->emb), free(v->emb_buf), free(v->grad_copy), free(v->d_offsets), free(v->h_offsets);
    free(v->off_buf);
    rt_xbatch_free(&v->batch);
}

/* Overlap windows keep up to three batches in flight (semi-async: i - 1, i, i + 1); gradient
 * accumulation keeps the step's batch and its running micro-batch (grad_accum.h). */
static int alloc_batch_buffers(rt_xexec *x, FILE *err)
{
    x->n_slots = x->s->plan.overlap != RT_OVERLAP_SYNC ? 3 : x->s->plan.grad_accum > 1 ? 2 : 1;
    x->moved = calloc((size_t)x->g->n_ops, sizeof(rt_xbytes));
    int rc = x->moved ? 0 : -1;
    for (int k = 0; k < x->n_slots && !rc; k++)
        rc = alloc_slot(&x->slots[k], slot_tables(x));
    if (rc) fprintf(err, "exec: out of host memory\n");
    x->v = x->slots[0];
    return rc;
}

/* Per-query negatives are stored in fp16 when the plan says so, else in the dense dtype
 * (plans/negatives.c prices them so); the CPU's dense math is fp32 either way. */
static rt_kdtype neg_dtype(const rt_plan_cfg *p)
{
    if (p->negatives.fp16 || p->dense_dtype == RT_DT_FP16) return RT_KDT_FP16;
    return p->dense_dtype == RT_DT_BF16 ? RT_KDT_BF16 : RT_KDT_FP32;
}

int rt_xexec_open(rt_xexec *x, const rt_scenario *s, const rt_graph *g, rt_xdev *d, rt_xcomm *c,
                  FILE *err)
{
    memset(x, 0, sizeof *x);
    x->s = s, x->g = g, x->dev = d, x->comm = c;
    x->rank = c->rank, x->world = c->world;
    x->local_rtt_s[0] = x->local_rtt_s[1] = -1;
    if (check_executable(x, err) || rt_xtm_open(x, err) || alloc_batch_buffers(x, err)) return -1;
    if (!(x->world_grp = rt_xexec_group(x, (rt_group){x->world, 1}, err))) return -1;
    if (rt_xemb_setup(x, err)) return -1;
    const rt_training *tr = &s->model.training;
    rt_dnet_opt opt = {tr->dense_optimizer == RT_OPT_ADAM ? RT_KOPT_ADAM : RT_KOPT_SGD,
                       (float)tr->dense_lr,
                       (float)tr->beta1,
                       (float)tr->beta2,
                       (float)tr->eps,
                       s->plan.attention == RT_ATTN_UNFUSED};
    int64_t max_tokens = 0;
    for (int t = 0; t < s->model.n_tables; t++)
        if (s->model.tables[t].sequence) {
            int max = s->workload.has_seq_len ? s->workload.seq_len.max : 0;
            max_tokens += (int64_t)(max > 0 ? max : s->model.seq_len) * s->workload.batch_per_rank;
        }
    /* Sequence balancing moves whole samples: a rank may get more than its share, at most
     * every sample of the iteration. */
    int max_batch = s->workload.batch_per_rank;
    if (s->plan.balance != RT_BALANCE_NONE) max_batch *= x->world;
    x->net = rt_dnet_new(x->net_model, d, max_batch, max_tokens, s->workload.seed, opt, err);
    const rt_neg_cfg *neg = &s->plan.negatives;
    if (x->net && neg->per_query && !neg->fp16 && s->plan.dense_dtype == RT_DT_FP8) {
        fprintf(err, "exec: plan.negatives stores dense negatives in the dense dtype, and fp8 "
                     "storage is not executed; allowed: negatives dtype fp16, or a dense "
                     "precision of fp32, tf32, bf16 or fp16\n");
        return -1;
    }
    if (x->net && rt_dnet_set_negatives(x->net, neg, neg_dtype(&s->plan), err)) return -1;
    return x->net && !rt_xpad_open(x, err) ? rt_xaccum_open(x, err) : -1;
}

void rt_xexec_close(rt_xexec *x)
{
    if (x->net) rt_dnet_free(x->net);
    if (x->net_model) rt_xpad_free(x);
    rt_xemb_free(x);
    if (x->dev) rt_xtables_free(&x->tables, x->dev);
    if (x->s) rt_xexec_use(x, -1);
    rt_xaccum_free(x); /* before the slots: its micro-batch views their batch */
    for (int k = 0; x->s && k < x->n_slots; k++)
        free_slot(x, &x->slots[k]);
    rt_xtm_close(x); /* after the slots, which hold its output tables */
    for (int i = 0; i < x->n_groups; i++)
        x->comm->ops->group_close(x->comm, x->groups[i]);
    for (int o = 0; x->moved && o < x->g->n_ops; o++)
        free(x->moved[o].send), free(x->moved[o].recv);
    free(x->moved), free(x->groups), free(x->group_keys);
    memset(x, 0, sizeof *x);
}

/* Uploads the iteration's dense features, labels and sequence offsets and sizes the
 * embedding buffers the exchanges recover into. */
int rt_xexec_load_batch(rt_xexec *x, FILE *err)
{
    const rt_scenario *s = x->s;
    rt_xdev *d = x->dev;
    int b = x->v.batch.batch, nd = s->model.dense_features;
    size_t db = sizeof(float) * (size_t)b * (size_t)(nd ? nd : 1), lb = sizeof(float) * (size_t)b;
    if (rt_xbuf_reserve(d, &x->v.dense_buf, db, err) ||
        rt_xbuf_reserve(d, &x->v.label_buf, lb, err))
        return -1;
    if (d->ops->copy(d, x->v.dense_buf.p, x->v.batch.dense, db, RT_XCOPY_H2D) ||
        d->ops->copy(d, x->v.label_buf.p, x->v.batch.labels, lb, RT_XCOPY_H2D))
        return -1;
    x->v.d_dense = nd ? x->v.dense_buf.p : NULL, x->v.d_labels = x->v.label_buf.p;
    /* The dense net's tables: the scenario's, or the tower outputs (no sequence tables then,
     * rt_xtm_open refuses them, so batch.f[t] is read for the scenario's own tables only). */
    for (int t = 0; t < x->net_model->n_tables; t++) {
        const rt_table *tb = &x->net_model->tables[t];
        const rt_feature_batch *fb = tb->sequence ? &x->v.batch.f[t] : NULL;
        size_t rows = fb ? (size_t)fb->n_ids : (size_t)b;
        if (rt_xbuf_reserve(d, &x->v.emb_buf[t], rows * (size_t)tb->dim * sizeof(float), err))
            return -1;
        x->v.emb[t] = x->v.emb_buf[t].p;
        if (!tb->sequence) continue;
        free(x->v.h_offsets[t]);
        if (!(x->v.h_offsets[t] = malloc(sizeof(int64_t) * (size_t)(b + 1)))) {
            fprintf(err, "exec: out of host memory\n");
            return -1;
        }
        x->v.h_offsets[t][0] = 0;
        for (int i = 0; i < b; i++)
            x->v.h_offsets[t][i + 1] = x->v.h_offsets[t][i] + fb->lengths[i];
        size_t ob = sizeof(int64_t) * (size_t)(b + 1);
        if (rt_xbuf_reserve(d, &x->v.off_buf[t], ob, err) ||
            d->ops->copy(d, x->v.off_buf[t].p, x->v.h_offsets[t], ob, RT_XCOPY_H2D))
            return -1;
        x->v.d_offsets[t] = x->v.off_buf[t].p;
    }
    return 0;
}

/* The view is a copy of slot `cur`: save it back, then load slot K (-1: only save). */
void rt_xexec_use(rt_xexec *x, int k)
{
    x->slots[x->cur] = x->v;
    if (k < 0) return;
    x->cur = k;
    x->v = x->slots[k];
}

const float *rt_xexec_emb_grad(const rt_xexec *x, int table)
{
    if (x->v.have_grads) return x->v.grad_copy[table].p;
    return rt_dnet_emb_grad(x->net, table);
}

int rt_xexec_keep_grads(rt_xexec *x, FILE *err)
{
    for (int t = 0; t < x->net_model->n_tables; t++) {
        const float *g = rt_dnet_emb_grad(x->net, t);
        const rt_table *tb = &x->net_model->tables[t];
        size_t rows = tb->sequence ? (size_t)x->v.batch.f[t].n_ids : (size_t)x->v.batch.batch;
        size_t bytes = rows * (size_t)tb->dim * sizeof(float);
        if (!g) continue;
        if (rt_xbuf_reserve(x->dev, &x->v.grad_copy[t], bytes, err) ||
            (bytes && x->dev->ops->copy(x->dev, x->v.grad_copy[t].p, g, bytes, RT_XCOPY_D2D)))
            return -1;
    }
    x->v.have_grads = 1;
    return 0;
}
