/* workload.sequence_layout padded, the baseline the jagged operators of seeds 000 and 002
 * remove: SEQ_PAD copies each sequence table's jagged token embeddings into a batch x L block
 * (L: the longest sequence of the batch), each sample's real tokens first and zeros after; the
 * dense net runs on that block with the padded offsets and the real lengths (dense_net.h
 * h_valid); SEQ_UNPAD gathers the real tokens' gradients back into the jagged layout the
 * embedding exchanges read. Both count the bytes the graph charges them (plans/plan_common.c),
 * so --check-bytes compares this rank's L with the graph's. */
#include <stdlib.h>
#include <string.h>

#include "exec.h"

struct rt_xpad {
    int64_t len, cap_b, cap_t;
    int64_t *h_off, *h_valid, *h_idx; /* host: padded offsets, real lengths, padded row of each
                                         real token */
    rt_xbuf off, idx;                 /* their device copies */
    rt_xbuf *blk;                     /* [table] padded blocks */
    float **emb;                      /* [table] what the dense net reads */
    const int64_t **d_off, **hh_off;  /* [table] offsets the dense net reads */
};

static int fail(FILE *err, const rt_xexec *x, int op, const char *what)
{
    fprintf(err, "exec: rank %d, op %d '%s': %s\n", x->rank, op,
            x->g->ops[op].name ? x->g->ops[op].name : "?", what);
    return -1;
}

int rt_xpad_open(rt_xexec *x, FILE *err)
{
    if (x->s->workload.seq_layout != RT_SEQ_PADDED) return 0;
    int T = x->net_model->n_tables;
    rt_xpad *p = calloc(1, sizeof *p);
    if (p) {
        p->blk = calloc((size_t)T, sizeof *p->blk), p->emb = calloc((size_t)T, sizeof *p->emb);
        p->d_off = calloc((size_t)T, sizeof *p->d_off);
        p->hh_off = calloc((size_t)T, sizeof *p->hh_off);
    }
    x->pad = p;
    if (p && p->blk && p->emb && p->d_off && p->hh_off) return 0;
    fprintf(err, "exec: out of host memory\n");
    return -1;
}

void rt_xpad_free(rt_xexec *x)
{
    rt_xpad *p = x->pad;
    if (!p) return;
    for (int t = 0; p->blk && t < x->net_model->n_tables; t++)
        rt_xbuf_free(x->dev, &p->blk[t]);
    rt_xbuf_free(x->dev, &p->off), rt_xbuf_free(x->dev, &p->idx);
    free(p->h_off), free(p->h_valid), free(p->h_idx);
    free(p->blk), free(p->emb), free(p->d_off), free(p->hh_off);
    free(p);
    x->pad = NULL;
}

static int first_seq(const rt_model *m)
{
    for (int t = 0; t < m->n_tables; t++)
        if (m->tables[t].sequence) return t;
    return -1;
}

static int grow(int64_t **a, int64_t *cap, int64_t need)
{
    if (need <= *cap) return 0;
    int64_t *n = realloc(*a, sizeof **a * (size_t)need);
    if (!n) return -1;
    *a = n, *cap = need;
    return 0;
}

/* The padded layout of the batch's jagged offsets H: L, offsets, real lengths, token rows. */
static int layout(rt_xpad *p, const int64_t *h, int B)
{
    int64_t T = h[B], cb = p->cap_b;
    p->len = 0;
    for (int s = 0; s < B; s++)
        p->len = h[s + 1] - h[s] > p->len ? h[s + 1] - h[s] : p->len;
    if (grow(&p->h_off, &cb, B + 1) || grow(&p->h_valid, &p->cap_b, B + 1) ||
        grow(&p->h_idx, &p->cap_t, T ? T : 1))
        return -1;
    for (int s = 0; s <= B; s++)
        p->h_off[s] = s * p->len;
    for (int s = 0; s < B; s++) {
        p->h_valid[s] = h[s + 1] - h[s];
        for (int64_t i = 0; i < p->h_valid[s]; i++)
            p->h_idx[h[s] + i] = s * p->len + i;
    }
    return 0;
}

static double token_width(const rt_model *m)
{
    double w = 0;
    for (int t = 0; t < m->n_tables; t++)
        w += m->tables[t].sequence ? m->tables[t].dim : 0;
    return w;
}

static int pad(rt_xexec *x, int op, FILE *err)
{
    rt_xpad *p = x->pad;
    rt_xdev *d = x->dev;
    const rt_model *m = x->net_model;
    int B = x->v.batch.batch, t0 = first_seq(m);
    if (t0 < 0) return fail(err, x, op, "padding needs a sequence table");
    const int64_t *h = x->v.h_offsets[t0];
    if (layout(p, h, B)) return fail(err, x, op, "out of host memory");
    int64_t T = h[B], rows = B * p->len;
    if (rt_xbuf_reserve(d, &p->off, sizeof(int64_t) * (size_t)(B + 1), err) ||
        rt_xbuf_reserve(d, &p->idx, sizeof(int64_t) * (size_t)(T ? T : 1), err) ||
        d->ops->copy(d, p->off.p, p->h_off, sizeof(int64_t) * (size_t)(B + 1), RT_XCOPY_H2D) ||
        (T && d->ops->copy(d, p->idx.p, p->h_idx, sizeof(int64_t) * (size_t)T, RT_XCOPY_H2D)))
        return fail(err, x, op, "uploading the padded layout failed");
    for (int t = 0; t < m->n_tables; t++) {
        p->emb[t] = x->v.emb[t], p->d_off[t] = NULL, p->hh_off[t] = NULL;
        if (!m->tables[t].sequence) continue;
        size_t bytes = sizeof(float) * (size_t)rows * (size_t)m->tables[t].dim;
        if (rt_xbuf_reserve(d, &p->blk[t], bytes ? bytes : 4, err) ||
            d->ops->zero(d, p->blk[t].p, bytes) ||
            (T && d->ops->scatter_add_rows(d, x->v.emb[t], T, m->tables[t].dim, p->idx.p, rows,
                                           p->blk[t].p) != RT_K_OK))
            return fail(err, x, op, "padding the sequence embeddings failed");
        p->emb[t] = p->blk[t].p, p->d_off[t] = p->off.p, p->hh_off[t] = p->h_off;
    }
    double eb = (double)rt_dtype_bytes(x->s->plan.dense_dtype);
    rt_xexec_count(x, op, (double)(T + rows) * token_width(m) * eb, 0);
    return 0;
}

/* Leaves the gradients where rt_xexec_emb_grad finds them, as an overlap run's copy. */
static int unpad(rt_xexec *x, int op, FILE *err)
{
    rt_xpad *p = x->pad;
    rt_xdev *d = x->dev;
    const rt_model *m = x->net_model;
    int B = x->v.batch.batch, t0 = first_seq(m);
    int64_t T = x->v.h_offsets[t0][B];
    for (int t = 0; t < m->n_tables; t++) {
        const float *g = rt_dnet_emb_grad(x->net, t);
        if (!g) continue;
        int seq = m->tables[t].sequence;
        size_t bytes = sizeof(float) * (size_t)(seq ? T : B) * (size_t)m->tables[t].dim;
        if (rt_xbuf_reserve(d, &x->v.grad_copy[t], bytes ? bytes : 4, err))
            return fail(err, x, op, "out of device memory");
        int rc = seq ? (T && d->ops->gather_rows(d, g, B * p->len, m->tables[t].dim, p->idx.p, T,
                                                 x->v.grad_copy[t].p) != RT_K_OK)
                     : (bytes && d->ops->copy(d, x->v.grad_copy[t].p, g, bytes, RT_XCOPY_D2D));
        if (rc) return fail(err, x, op, "gathering the real tokens' gradients failed");
    }
    x->v.have_grads = 1;
    double eb = (double)rt_dtype_bytes(x->s->plan.dense_dtype);
    rt_xexec_count(x, op, 2.0 * (double)T * token_width(m) * eb, 0);
    return 0;
}

int rt_xpad_run(rt_xexec *x, int op, FILE *err)
{
    if (!x->pad) return fail(err, x, op, "the scenario's sequences are jagged, not padded");
    return x->g->ops[op].role == RT_ROLE_SEQ_PAD ? pad(x, op, err) : unpad(x, op, err);
}

int rt_xpad_batch(const rt_xexec *x, rt_dnet_batch *b)
{
    const rt_xpad *p = x->pad;
    if (!p) return 0;
    b->emb = p->emb;
    b->offsets = (const int64_t *const *)p->d_off;
    b->h_offsets = (const int64_t *const *)p->hh_off;
    b->h_valid = p->h_valid;
    return 0;
}
