/* Pieces every plan shares: the dense part of the iteration (per-layer forward and backward
 * kernels, loss, AllReduce, optimizer step), memory accounting and the model FLOPs. */
#ifndef RT_PLAN_COMMON_H
#define RT_PLAN_COMMON_H

#include "graph.h"
#include "scenario.h"
#include "workload.h"

typedef struct rt_dense_ops {
    int first_fwd, last_fwd; /* per-layer forward kernels are consecutive op ids */
    int loss;
    int first_bwd, last_bwd; /* backward, in reverse layer order */
    int allreduce;
    int update;
    int pad, unpad; /* workload.sequence_layout padded: the layout conversions; -1: jagged */
    int neg_offload, neg_fetch; /* offloaded negatives' copy ops (plans/negatives.h), -1 */
} rt_dense_ops;

/* Adds forward kernels after the N_AFTER ops AFTER, the loss, backward kernels, the dense
 * gradient AllReduce over GROUP on the comm stream and the optimizer step after it. */
void rt_plan_add_dense(rt_graph *g, const rt_scenario *s, const int *after, int n_after,
                       rt_group group, rt_dense_ops *d);
/* Fills the dense ops' costs on rep R from the tokens of its sampled batch. */
void rt_plan_fill_dense(rt_graph *g, const rt_scenario *s, const rt_workload *w,
                        const rt_dense_ops *d, int r);

/* Samples rep r trains on this iteration (sequence balancing makes it vary per rank). */
int rt_plan_rep_batch(const rt_workload *w, int r);

/* Tokens of sample i on rep r (sum of its sequence lengths; 1 for non-sequence models). */
double rt_plan_sample_tokens(const rt_scenario *s, const rt_workload *w, int r, int i);

/* The length rep r's sequences are padded to: the longest of its batch under
 * workload.sequence_layout padded, 0 when jagged. */
int rt_plan_padded_len(const rt_scenario *s, const rt_workload *w, int r);

/* Useful dense FLOPs (forward + backward) of rep r's batch: real tokens only, padded or not. */
double rt_plan_dense_flops(const rt_scenario *s, const rt_workload *w, int r);
/* Sets g->model_flops: the useful dense FLOPs of one iteration over all ranks. */
void rt_plan_set_model_flops(rt_graph *g, const rt_scenario *s, const rt_workload *w);

/* HBM for the dense side of one rank: weights, gradients and optimizer state (fp32 master
 * copy + Adam-class state), the activations of rep r's batch and its sampled-softmax
 * negatives; the sum of the three functions below. */
double rt_plan_dense_memory(const rt_scenario *s, const rt_workload *w, int r);
double rt_plan_weights_memory(const rt_scenario *s);
double rt_plan_activation_memory(const rt_scenario *s, const rt_workload *w, int r);
double rt_plan_negatives_memory(const rt_scenario *s, const rt_workload *w, int r);

#endif
