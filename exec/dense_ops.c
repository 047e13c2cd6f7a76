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
        return rt_dnet_loss(x->net, err);
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
