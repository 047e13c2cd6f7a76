/* Sampled negatives in the graph (the plan's `negatives` map, core/negatives.h; TurboGR, seed
 * 002 section 4.3). Per output token the loss gathers `negatives` embeddings (the model's
 * item table) and computes k x negatives logits: with logit sharing (k > 1) each token also
 * scores (k - 1) x negatives embeddings gathered for other tokens of the batch, so the extra
 * logits cost FLOPs and logit bytes, never lookups. fp16 halves (or keeps, for fp16 dense
 * models) the embeddings' bytes. With offload, the gathered embeddings are copied to host
 * memory while the dense forward runs (`neg.offload`) and fetched back in segments during the
 * loss (`neg.fetch`, double-buffered: only two segments stay in HBM); both are host-link ops
 * on the copy stream, and the backward waits for the fetch. The output tokens are the loss's
 * queries: every token with a next one to predict (the last of a sequence has no target, so
 * no negatives), as rectwin-exec draws them. */
#ifndef RT_PLAN_NEGATIVES_H
#define RT_PLAN_NEGATIVES_H

#include "graph.h"
#include "scenario.h"

/* Adds the offload and fetch ops when the plan offloads: the offload after the N_AFTER ops
 * AFTER (the embeddings the forward starts from), the fetch after it and LAST_FWD. Returns the
 * fetch op, or -1. */
int rt_neg_add_ops(rt_graph *g, const rt_scenario *s, const int *after, int n_after, int last_fwd,
                   int *offload);

/* Bytes per stored negative embedding element. */
double rt_neg_elem_bytes(const rt_scenario *s);

/* Loss costs for OUTS output tokens: FLOPs of the k x negatives logits and the bytes of the
 * embeddings read and the shared logits written and read. */
void rt_neg_loss_cost(const rt_scenario *s, double outs, double *flops, double *bytes);

/* Bytes the offload moves to the host for OUTS output tokens, and the fetch back: twice, as
 * the logits' backward (d query = d logits x negatives) reads every segment again. */
double rt_neg_offload_bytes(const rt_scenario *s, double outs);
double rt_neg_fetch_bytes(const rt_scenario *s, double outs);

/* HBM for OUTS output tokens: the negative embeddings held (all of them, or two segments with
 * offload) and the fp32 logits kept for the backward (k x negatives per token). */
double rt_neg_memory(const rt_scenario *s, double outs);

#endif
