#include "negatives.h"

static int dim_of(const rt_scenario *s)
{
    return s->model.n_tables ? s->model.tables[0].dim : 1;
}

static double count(const rt_scenario *s)
{
    return s->model.negatives > 0 ? s->model.negatives : 0;
}

int rt_neg_add_ops(rt_graph *g, const rt_scenario *s, const int *after, int n_after, int last_fwd,
                   int *offload)
{
    *offload = -1;
    if (!s->plan.negatives.offload || count(s) <= 0) return -1;
    *offload = rt_graph_add_kernel(g, "neg.offload", RT_STREAM_COPY, RT_K_H2D, RT_DT_FP32,
                                   "negatives_offload", after, n_after);
    rt_graph_set_role(g, *offload, RT_ROLE_NEG_OFFLOAD, -1, -1);
    int deps[2] = {*offload, last_fwd};
    int fetch = rt_graph_add_kernel(g, "neg.fetch", RT_STREAM_COPY, RT_K_H2D, RT_DT_FP32,
                                    "negatives_fetch", deps, 2);
    rt_graph_set_role(g, fetch, RT_ROLE_NEG_FETCH, -1, -1);
    return fetch;
}

double rt_neg_elem_bytes(const rt_scenario *s)
{
    return s->plan.negatives.fp16 ? 2.0 : (double)rt_dtype_bytes(s->plan.dense_dtype);
}

void rt_neg_loss_cost(const rt_scenario *s, double outs, double *flops, double *bytes)
{
    double neg = count(s), k = s->plan.negatives.expansion, dm = dim_of(s);
    *flops = 2 * outs * neg * k * dm;
    /* logit, label and gradient per token; each gathered embedding read once; the shared
     * logits written and read once more in fp32. */
    *bytes = outs * (3 * 4 + neg * dm * rt_neg_elem_bytes(s) + (k - 1) * neg * 8);
}

double rt_neg_offload_bytes(const rt_scenario *s, double outs)
{
    return outs * count(s) * dim_of(s) * rt_neg_elem_bytes(s);
}

double rt_neg_fetch_bytes(const rt_scenario *s, double outs)
{
    return 2 * rt_neg_offload_bytes(s, outs);
}

double rt_neg_memory(const rt_scenario *s, double outs)
{
    const rt_neg_cfg *n = &s->plan.negatives;
    double neg = count(s);
    if (neg <= 0) return 0;
    double held = n->offload && outs > 2.0 * n->segment ? 2.0 * n->segment : outs;
    return held * neg * dim_of(s) * rt_neg_elem_bytes(s) + outs * neg * n->expansion * 4;
}
