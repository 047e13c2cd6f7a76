/* Sequence balancing for jagged models (plan key `balance`, DESIGN.md section 4): whole
 * samples move between ranks before the plan builds its graph, so the embedding traffic and
 * the per-rank dense cost (plans/plan_common.c, per-sample token polynomials) both follow the
 * tokens each rank actually gets, and the remaining imbalance shows as the wait of the dense
 * AllReduce for the slowest rank.
 *
 * - dynamic_batching (MTGRBoost Algorithm 1; TurboGR's token-aware batch scaling is the same
 *   rule): the global sample stream is cut into consecutive per-rank batches, each the prefix
 *   whose cumulative token count is closest to the target (binary search over cumulative
 *   sums); the last rank takes the rest, so an iteration trains the same samples as without
 *   balancing.
 * - token_realloc (TurboGR global token reallocation): all samples of the global batch,
 *   longest first, each to the rank with the fewest tokens so far (greedy LPT).
 *
 * Batch sizes then differ per rank; gradients are meant to be averaged weighted by sample
 * count (one extra scalar per rank, not modeled as traffic). In statistical mode only the
 * representatives' samples exist: they are balanced among the representatives, each standing
 * for its share of ranks, so the spread over all N ranks is not seen. */
#ifndef RT_BALANCE_H
#define RT_BALANCE_H

#include <stdio.h>

#include "scenario.h"
#include "workload.h"

/* Rebalances W's samples by s->plan.balance (nothing for none). Returns 0, or -1 with a
 * message on ERR (out of memory). */
int rt_balance_apply(const rt_scenario *s, rt_workload *w, FILE *err);

/* Tokens rep R trains on (sum over its samples of rt_plan_sample_tokens). */
double rt_balance_rep_tokens(const rt_scenario *s, const rt_workload *w, int r);

#endif
