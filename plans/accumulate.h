/* plan.grad_accum: k (MTGRBoost, seed 000, gradient accumulation): one optimizer step over k
 * micro-batches of the rank's batch. The graph runs the plan's forward and backward k times,
 * each on its own slice of the sampled batch (costs from that slice), one after another; then,
 * once, the sparse gradient exchange and update of the aggregated gradients (identical IDs of
 * all micro-batches summed before the update: the plan's own backward exchange over the whole
 * batch), the dense AllReduce and the dense optimizer step. Activations are those of one
 * micro-batch (plans/plan_common.c). */
#ifndef RT_ACCUMULATE_H
#define RT_ACCUMULATE_H

#include <stdint.h>
#include <stdio.h>

#include "graph.h"
#include "plan.h"
#include "scenario.h"
#include "workload.h"

/* PLAN's graph for S and W, accumulated over s->plan.grad_accum micro-batches (the plan's own
 * graph when that is 1). NULL with a message on ERR. */
rt_graph *rt_accumulate_build(const rt_plan *plan, const rt_scenario *s, const void *opts,
                              const rt_workload *w, FILE *err);

/* Micro-batch M of K of a batch of N samples: samples [*LO, *HI). rectwin-exec slices its
 * batches with it, so it runs the samples the graph costs. */
void rt_accumulate_range(int64_t n, int m, int k, int64_t *lo, int64_t *hi);

/* For each op of G, a graph rt_accumulate_build composed of K micro-batches: the micro-batch
 * it belongs to, or -1 for the once-per-step update (MICRO has g->n_ops entries). 0, or -1
 * when G is not such a graph (out of memory, or its ops do not split into K equal parts). */
int rt_accumulate_micro_ops(const rt_graph *g, int k, int *micro);

#endif
