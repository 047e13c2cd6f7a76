/* The executors of the dense ops: per-layer forward and backward, the loss, the dense gradient
 * AllReduce and the optimizer step, all on the dense net (dense_net.c). */
#include "exec.h"

static int fail(FILE *err, const rt_xexec *x, int op, const char *what)
{
    fprintf(err, "exec: rank %d, op %d '%s': %s\n", x->rank, op,
            x->g->ops[op].name ? x->g->ops[op].name : "?", what);
    return -1;
}

/* The net reads the embeddings only once the exchanges have recovered them: the first layer's
 * forward hands it the iteration's batch. */
static int hand_batch(rt_xexec *x, FILE *err)
{
    rt_dnet_batch b = {.batch = x->v.batch.batch,
                       .global_batch = x->v.batch.global_batch,
                       .dense = x->v.d_dense,
                       .emb = x->v.emb,
                       .offsets = (const int64_t *const *)x->v.d_offsets,
                       .h_offsets = (const int64_t *const *)x->v.h_offsets,
                       .labels = x->v.d_labels};
    rt_xpad_batch(x, &b);
    return rt_dnet_set_batch(x->net, &b, err);
}

/* The fetch op of offloaded negatives that LOSS reads: the loss fetches every segment after
 * the first, and those bytes are the fetch op's (plans/negatives.h). The graph places each
 * fetch before its loss, and with plan.grad_accum every micro-batch has its own pair, so it is
 * the last fetch before LOSS; -1 when the graph has none. */
static int fetch_op(const rt_xexec *x, int loss)
{
    for (int op = loss - 1; op >= 0; op--)
        if (x->g->ops[op].role == RT_ROLE_NEG_FETCH) return op;
    return -1;
}

static int run_loss(rt_xexec *x, int op, FILE *err)
{
    if (rt_dnet_loss(x->net, err)) return -1;
    const rt_xneg *g = rt_dnet_negatives(x->net);
    int f = g && rt_xneg_offloads(g) ? fetch_op(x, op) : -1;
    if (f >= 0) rt_xexec_count(x, f, rt_xneg_stats(g).fetched, 0);
    return 0;
}

static int run_negatives(rt_xexec *x, int op, FILE *err)
{
    int offload = x->g->ops[op].role == RT_ROLE_NEG_OFFLOAD;
    if (offload ? rt_dnet_neg_offload(x->net, err) : rt_dnet_neg_prefetch(x->net, err)) return -1;
    rt_xneg_bytes b = rt_xneg_stats(rt_dnet_negatives(x->net));
    rt_xexec_count(x, op, offload ? b.offloaded : b.prefetched, 0);
    return 0;
}

int rt_xdense_run(rt_xexec *x, int op, FILE *err)
{
    const rt_op *o = &x->g->ops[op];
    int64_t len = 0;
    float *grads;
    switch (o->role) {
    case RT_ROLE_DENSE_FWD:
        if (o->layer == 0 && hand_batch(x, err)) return -1;
        return rt_dnet_forward(x->net, o->layer, err);
    case RT_ROLE_LOSS:
        return run_loss(x, op, err);
    case RT_ROLE_NEG_OFFLOAD:
    case RT_ROLE_NEG_FETCH:
        return run_negatives(x, op, err);
    case RT_ROLE_DENSE_BWD:
        return rt_dnet_backward(x->net, o->layer, err);
    case RT_ROLE_DENSE_ALLREDUCE:
        grads = rt_dnet_grads(x->net, &len);
        rt_xgroup *grp = rt_xexec_group(x, o->group, err);
        if (!grp) return -1;
        if (x->comm->ops->allreduce_f32(x->comm, grp, grads, (size_t)len))
            return fail(err, x, op, "the dense gradient AllReduce failed");
        rt_xexec_count(x, op, (double)len * 4, 0);
        return 0;
    case RT_ROLE_DENSE_UPDATE:
        return rt_dnet_update(x->net, err);
    default:
        return fail(err, x, op, "this role is not a dense op");
    }
}
