/* Gradient accumulation in rectwin-exec (grad_accum.h). */
#include "grad_accum.h"

#include <stdlib.h>
#include <string.h>

#include "accumulate.h"
#include "state.h"

typedef struct rt_xaccum {
    int k;
    int *micro;          /* [op]: its micro-batch, -1 for the update ops */
    int64_t batch_id;    /* the whole batch the state below belongs to */
    int cur;             /* the micro-batch slot 1 holds, -1: none */
    int64_t lo;          /* its first sample */
    int prepared;        /* the whole batch's exchange state is built */
    rt_feature_batch *f; /* [n_features]: the micro-batch's views into the whole batch */
    rt_xbuf dense_acc;   /* the dense gradients summed over the micro-batches */
    double loss;
    int *joins;           /* [unit]: its whole-batch ID messages are joined from the kept ones */
    rt_xaccum_msgs *kept; /* [unit * k + m]: micro-batch m's received ID messages */
} rt_xaccum;

enum { WHOLE = 0, MICRO = 1 };

int rt_xaccum_check(const rt_scenario *s, FILE *err)
{
    if (s->plan.grad_accum <= 1) return 0;
    const char *why = NULL, *plan = "";
    if (strcmp(s->plan.name, "flat") && strcmp(s->plan.name, "fused"))
        why = "plan ", plan = s->plan.name;
    else if (s->plan.balance != RT_BALANCE_NONE)
        why = "sequence balancing";
    else if (s->workload.seq_layout == RT_SEQ_PADDED)
        why = "workload.sequence_layout padded";
    for (int t = 0; t < s->model.n_tables && !why; t++)
        if (s->model.tables[t].dynamic) why = "dynamic tables";
    if (!why) return 0;
    fprintf(err,
            "exec: plan.grad_accum %d with %s%s is not executed by rectwin-exec yet (rectwin sim "
            "prices it); allowed: plans flat and fused (overlap sync), without balance, padded "
            "sequences or dynamic tables\n",
            s->plan.grad_accum, why, plan);
    return -1;
}

int rt_xaccum_open(rt_xexec *x, FILE *err)
{
    int k = x->s->plan.grad_accum;
    if (k <= 1) return 0;
    rt_xaccum *a = calloc(1, sizeof *a);
    if (a) {
        a->micro = malloc(sizeof(int) * (size_t)(x->g->n_ops ? x->g->n_ops : 1));
        a->f = calloc((size_t)(x->s->model.n_tables ? x->s->model.n_tables : 1), sizeof *a->f);
        a->joins = calloc((size_t)(x->g->n_units ? x->g->n_units : 1), sizeof *a->joins);
        a->kept = calloc((size_t)(x->g->n_units ? x->g->n_units : 1) * (size_t)k, sizeof *a->kept);
    }
    x->accum = a;
    if (!a || !a->micro || !a->f || !a->joins || !a->kept) {
        fprintf(err, "exec: out of host memory\n");
        return -1;
    }
    a->k = k, a->batch_id = -1, a->cur = -1;
    if (x->n_slots < 2 || rt_accumulate_micro_ops(x->g, k, a->micro)) {
        fprintf(err,
                "exec: plan.grad_accum %d: the graph does not split into %d micro-batches "
                "and one update\n",
                k, k);
        return -1;
    }
    for (int o = 0; o < x->g->n_ops; o++)
        if (a->micro[o] == 0 && x->g->ops[o].role == RT_ROLE_IDS_A2A)
            a->joins[x->g->ops[o].unit] = rt_xaccum_joinable(&x->g->units[x->g->ops[o].unit]);
    return 0;
}

void rt_xaccum_free(rt_xexec *x)
{
    rt_xaccum *a = x->accum;
    if (!a) return;
    /* Slot 1's batch is views into slot 0's: not its own to free. */
    if (x->n_slots > MICRO) memset(&x->slots[MICRO].batch, 0, sizeof x->slots[MICRO].batch);
    rt_xbuf_free(x->dev, &a->dense_acc);
    for (int i = 0; a->kept && i < x->g->n_units * a->k; i++)
        rt_xaccum_msgs_free(x->dev, &a->kept[i]);
    free(a->micro), free(a->f), free(a->joins), free(a->kept), free(a);
    x->accum = NULL;
}

/* Slot 1 (the view) becomes micro-batch M of the whole batch W, uploaded. */
static int load_micro(rt_xexec *x, const rt_xbatch *w, int m, FILE *err)
{
    rt_xaccum *a = x->accum;
    int64_t lo, hi;
    rt_accumulate_range(w->batch, m, a->k, &lo, &hi);
    for (int i = 0; i < w->n_features; i++) {
        const rt_feature_batch *fb = &w->f[i];
        uint64_t off = 0, cnt = 0;
        for (int64_t s = 0; s < lo; s++)
            off += fb->lengths[s];
        for (int64_t s = lo; s < hi; s++)
            cnt += fb->lengths[s];
        a->f[i] = (rt_feature_batch){(int)(hi - lo), fb->lengths + lo, cnt,
                                     fb->ids ? fb->ids + off : NULL};
    }
    int nd = x->s->model.dense_features;
    x->v.batch = (rt_xbatch){(int)(hi - lo),
                             w->global_batch, /* the objective stays per sample of the step */
                             w->n_features,
                             a->f,
                             w->dense + lo * (nd ? nd : 1),
                             w->labels + lo};
    x->v.batch_id = -1; /* slot 1 never holds a step's batch of its own */
    x->v.have_grads = 0;
    a->cur = m, a->lo = lo;
    if (rt_xexec_load_batch(x, err)) return -1;
    x->v.loaded = 1;
    return 0;
}

/* Copies ROWS x DIM floats from SRC into DST's rows from ROW0 on. */
static int put_rows(rt_xdev *d, float *dst, int64_t row0, const float *src, int64_t rows, int dim)
{
    size_t bytes = sizeof(float) * (size_t)rows * (size_t)dim;
    return bytes ? d->ops->copy(d, dst + row0 * dim, src, bytes, RT_XCOPY_D2D) : 0;
}

/* After the micro-batch's last dense backward: its embeddings and embedding gradients into the
 * whole batch's rows (the dump reads the former, the gradient AlltoAll the latter) and its
 * dense gradients into the sum. */
static int keep_micro(rt_xexec *x, int m, FILE *err)
{
    rt_xaccum *a = x->accum;
    rt_xslot *w = &x->slots[WHOLE];
    rt_xdev *d = x->dev;
    for (int t = 0; t < x->net_model->n_tables; t++) {
        const rt_table *tb = &x->net_model->tables[t];
        int64_t row0 = tb->sequence ? w->h_offsets[t][a->lo] : a->lo;
        int64_t rows = tb->sequence ? (int64_t)x->v.batch.f[t].n_ids : x->v.batch.batch;
        int64_t all = tb->sequence ? (int64_t)w->batch.f[t].n_ids : w->batch.batch;
        const float *g = rt_dnet_emb_grad(x->net, t);
        if (put_rows(d, w->emb[t], row0, x->v.emb[t], rows, tb->dim)) return -1;
        if (!g) continue;
        /* The same size every micro-batch of the step: the reserve keeps earlier rows. */
        if (rt_xbuf_reserve(d, &w->grad_copy[t], sizeof(float) * (size_t)(all * tb->dim), err) ||
            put_rows(d, w->grad_copy[t].p, row0, g, rows, tb->dim))
            return -1;
    }
    w->have_grads = 1;
    for (int u = 0; u < x->g->n_units; u++)
        if (a->joins[u] && rt_xaccum_keep_msgs(&x->v.units[u], &a->kept[u * a->k + m], err))
            return -1;
    int64_t len;
    float *grads = rt_dnet_grads(x->net, &len);
    if (rt_xbuf_reserve(d, &a->dense_acc, sizeof(float) * (size_t)len, err)) return -1;
    if (m == 0)
        return len ? d->ops->copy(d, a->dense_acc.p, grads, sizeof(float) * (size_t)len,
                                  RT_XCOPY_D2D)
                   : 0;
    if (d->ops->axpy(d, len, 1.0f, grads, a->dense_acc.p) != RT_K_OK) {
        fprintf(err, "exec: rank %d: summing micro-batch %d's dense gradients failed\n", x->rank,
                m);
        return -1;
    }
    return 0;
}

static int sets_up_exchange(rt_role r)
{
    return r == RT_ROLE_KEY_HASH || r == RT_ROLE_UNIQUE_SEND || r == RT_ROLE_ROUTE ||
           r == RT_ROLE_IDS_A2A || r == RT_ROLE_CAT_A2A || r == RT_ROLE_UNIQUE_OWNER;
}

/* Before the first update op (OP), on the whole batch: the exchanges' whole-batch state (route,
 * ID messages, dedup, the owner's index lists, the message layouts), built as the first
 * micro-batch's ops build theirs but over every sample and not counted: the graph prices the
 * micro-batches' forward exchanges, not this one. The received ID messages are the
 * micro-batches' joined where they join; with stage-1 dedup the whole batch's distinct IDs are
 * sent once more. Then the summed dense gradients go back into the net for the AllReduce. */
static int prepare(rt_xexec *x, int op, FILE *err)
{
    rt_xaccum *a = x->accum;
    const rt_graph *g = x->g;
    int counting = x->counting, rc = 0;
    x->counting = 0;
    for (int o = 0; o < g->n_ops && !rc; o++) {
        const rt_op *p = &g->ops[o];
        if (a->micro[o] != 0 || !sets_up_exchange(p->role)) continue;
        if (a->joins[p->unit] && p->role == RT_ROLE_IDS_A2A)
            rc = rt_xaccum_join_msgs(x, &x->v.units[p->unit], &a->kept[p->unit * a->k], a->k,
                                     x->v.batch.batch, op, err);
        else if (!(a->joins[p->unit] && p->role == RT_ROLE_CAT_A2A))
            rc = rt_xemb_run(x, o, err);
    }
    for (int o = 0; o < g->n_ops && !rc; o++) {
        if (a->micro[o] != 0 || g->ops[o].role != RT_ROLE_ROUTE) continue;
        rt_xunit *xu = &x->v.units[g->ops[o].unit];
        /* plan.fusion none routes per feature: the last feature's op completes the unit. */
        if (g->ops[o].layer >= 0 && g->ops[o].layer != xu->u->n_features - 1) continue;
        if (!(rc = rt_xemb_parse(x, xu, op, err))) rt_xemb_layout(x, xu);
    }
    x->counting = counting;
    if (rc) return -1;
    int64_t len;
    float *grads = rt_dnet_grads(x->net, &len);
    if (len &&
        x->dev->ops->copy(x->dev, grads, a->dense_acc.p, sizeof(float) * (size_t)len, RT_XCOPY_D2D))
        return -1;
    a->prepared = 1;
    return 0;
}

int rt_xaccum_enter(rt_xexec *x, int op, FILE *err)
{
    rt_xaccum *a = x->accum;
    if (x->v.batch_id != a->batch_id) { /* a new step */
        a->batch_id = x->v.batch_id, a->cur = -1, a->prepared = 0, a->loss = 0;
    }
    int m = a->micro[op];
    if (m < 0) return a->prepared ? 0 : prepare(x, op, err);
    rt_xexec_use(x, MICRO);
    return a->cur == m ? 0 : load_micro(x, &x->slots[WHOLE].batch, m, err);
}

int rt_xaccum_leave(rt_xexec *x, int op, FILE *err)
{
    rt_xaccum *a = x->accum;
    const rt_op *o = &x->g->ops[op];
    int m = a->micro[op];
    if (m < 0) return 0;
    if (o->role == RT_ROLE_LOSS) {
        double part = (double)x->v.batch.batch / (double)x->slots[WHOLE].batch.batch;
        a->loss += part * rt_dnet_loss_value(x->net);
        return 0;
    }
    return o->role == RT_ROLE_DENSE_BWD && o->layer == 0 ? keep_micro(x, m, err) : 0;
}

double rt_xaccum_loss(const rt_xexec *x)
{
    return x->accum ? x->accum->loss : rt_dnet_loss_value(x->net);
}
