/* Overlap of consecutive iterations (plan key `overlap`, DESIGN.md section 4), as a graph
 * transformation every plan gets from plans/pipeline.c after it builds its graph. It reads
 * only phases, streams and kernel kinds:
 *   F = ops in an emb.fwd.* phase and everything they depend on (the sparse forward),
 *   B = ops in an emb.bwd.* phase and everything that depends on them (the sparse backward),
 *   D = the rest (dense forward, backward, AllReduce, optimizer).
 *
 * The graph it returns is one steady-state period: a window holding each op once, from the
 * batches that are in flight together, so its makespan is the period and its bytes and FLOPs
 * are one iteration's. Dependencies into earlier windows are dropped (they have completed:
 * every window ends before the next starts, which is exact when the last op of a window is
 * one the next window waits for, as it is below).
 *   sync:       F(i) D(i) B(i), the plan's graph unchanged.
 *   pipeline:   MTGRBoost's copy/dispatch/compute streams. Window F(i+1) D(i) B(i) plus
 *               batch i+1's H2D input copy. F's kernels leave the compute stream, so batch
 *               i+1's ID routing and AlltoAll run under batch i's dense compute; its lookups
 *               wait for batch i's sparse update (no staleness).
 *   semi_async: TurboGR's sparse-async, dense-sync training. Window B(i-1) F(i+1) D(i): batch
 *               i+1's sparse forward runs before batch i's sparse backward and reads tables
 *               updated through batch i-1 (staleness 1: its lookups wait for B(i-1)); F's and
 *               B's kernels leave the compute stream, which holds the dense work only.
 * The graph has three streams (core/graph.h): the kernels that leave the compute stream go to
 * the copy stream, which then plays MTGRBoost's dispatch stream (H2D, then the sparse
 * kernels), while collectives stay on the comm stream, so sparse kernels and AlltoAlls still
 * overlap each other as in the plan's own graph. The analytic engine does not model SMs
 * shared by kernels of two streams, so these kernels overlap dense compute for free: an
 * optimistic bound. */
#ifndef RT_OVERLAP_H
#define RT_OVERLAP_H

#include <stdio.h>

#include "graph.h"
#include "scenario.h"
#include "workload.h"

/* Replaces *G by its steady-state window under s->plan.overlap (no change for sync).
 * Returns 0, or -1 with a message on ERR (a graph whose sparse forward depends on its sparse
 * backward cannot be split). */
int rt_overlap_apply(rt_graph **g, const rt_scenario *s, const rt_workload *w, FILE *err);

/* HBM that overlap adds on rep R: the in-flight batch's input copy and sparse-forward
 * AlltoAll buffers live next to the current batch's (0 for sync). */
double rt_overlap_buffer_bytes(const rt_graph *g, const rt_scenario *s, int r);

#endif
