/* plan.grad_accum: k (MTGRBoost, seed 000) in rectwin-exec: one optimizer step over k
 * micro-batches of the rank's batch, op for op as plans/accumulate.c composes the graph.
 * Slot 0 holds the whole batch, slot 1 the running micro-batch (a slice of slot 0's host batch,
 * the samples rt_accumulate_range names). Each micro-batch runs the forward exchange, the dense
 * forward, loss and backward on its slice; its embeddings and embedding gradients go into the
 * whole batch's buffers at its rows and its dense gradients are summed. Then, once, the update
 * ops run on the whole batch: its gradient AlltoAll (every micro-batch's gradients in the whole
 * batch's ID order), sparse update, dense AllReduce of the summed gradients and dense step. */
#ifndef RT_XGRAD_ACCUM_H
#define RT_XGRAD_ACCUM_H

#include <stdio.h>

#include "exec.h"

/* One micro-batch's received ID (and category) messages of one exchange unit, kept from its
 * forward for the whole batch's (grad_accum_msgs.c), with their per-member byte counts and
 * displacements. */
typedef struct rt_xaccum_msgs {
    rt_xbuf ids, cats;
    size_t *rc, *rd, *crc, *crd; /* [group size] */
} rt_xaccum_msgs;

/* Moves the micro-batch's received messages of XU into KEPT (buffers swapped, not copied). */
int rt_xaccum_keep_msgs(rt_xunit *xu, rt_xaccum_msgs *kept, FILE *err);
/* Whether XU's whole-batch messages are its micro-batches' joined: the ID lists of consecutive
 * samples, not each micro-batch's distinct IDs (stage-1 dedup). */
int rt_xaccum_joinable(const rt_graph_unit *u);
/* XU's received messages of the whole batch of B samples from its K micro-batches' (KEPT[m]),
 * exactly as one ID AlltoAll of the whole batch delivers them, on the device with their counts
 * and displacements. 0 or -1 with OP and the reason on ERR. */
int rt_xaccum_join_msgs(rt_xexec *x, rt_xunit *xu, const rt_xaccum_msgs *kept, int k, int b, int op,
                        FILE *err);
void rt_xaccum_msgs_free(rt_xdev *d, rt_xaccum_msgs *kept);

/* Refuses what accumulation cannot run yet, by name (0 when S has grad_accum 1). */
int rt_xaccum_check(const rt_scenario *s, FILE *err);
/* X's accumulation state when s->plan.grad_accum is above 1 (x->accum stays NULL otherwise);
 * after the dense net exists. 0 or -1 with the reason on ERR. */
int rt_xaccum_open(rt_xexec *x, FILE *err);
/* Before X's slots are freed. */
void rt_xaccum_free(rt_xexec *x);
/* Before op OP, with the whole batch as the view: makes its micro-batch the view, or before the
 * first update op builds the whole batch's exchange state and hands the net the summed dense
 * gradients. */
int rt_xaccum_enter(rt_xexec *x, int op, FILE *err);
/* After op OP: keeps what the update needs of the micro-batch (after its last dense backward)
 * and its loss. */
int rt_xaccum_leave(rt_xexec *x, int op, FILE *err);
/* This rank's loss of the step: the net's, or the micro-batches' losses weighted by samples. */
double rt_xaccum_loss(const rt_xexec *x);

#endif
