/* plan.grad_accum: k (MTGRBoost, seed 000, gradient accumulation): one optimizer step over k
 * micro-batches of the rank's batch. The graph runs the plan's forward and backward k times,
 * each on its own slice of the sampled batch (costs from that slice), one after another; then,
 * once, the sparse gradient exchange and update of the aggregated gradients (identical IDs of
 * all micro-batches summed before the update: the plan's own backward exchange over the whole
 * batch), the dense AllReduce and the dense optimizer step. Activations are those of one
 * micro-batch (plans/plan_common.c). */
#ifndef RT_ACCUMULATE_H
#define RT_ACCUMULATE_H

#include <stdio.h>

#include "graph.h"
#include "plan.h"
#include "scenario.h"
#include "workload.h"

/* PLAN's graph for S and W, accumulated over s->plan.grad_accum micro-batches (the plan's own
 * graph when that is 1). NULL with a message on ERR. */
rt_graph *rt_accumulate_build(const rt_plan *plan, const rt_scenario *s, const void *opts,
                              const rt_workload *w, FILE *err);

#endif
