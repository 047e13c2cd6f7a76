/* Lifetime of one rank's exec state (exec.h): open builds the tables, the exchanges' state,
 * the dense net and the communicators; load_batch uploads an iteration's batch. */
#ifndef RT_XSTATE_H
#define RT_XSTATE_H

#include "exec.h"

int rt_xexec_open(rt_xexec *x, const rt_scenario *s, const rt_graph *g, rt_xdev *d, rt_xcomm *c,
                  FILE *err);
void rt_xexec_close(rt_xexec *x);
int rt_xexec_load_batch(rt_xexec *x, FILE *err);
/* Saves the view into its slot and makes slot K (-1: none) the view. */
void rt_xexec_use(rt_xexec *x, int k);
/* Overlap: copies the dense net's embedding gradients into the view's slot, because the next
 * batch's dense backward overwrites them before this batch's sparse backward may read them. */
int rt_xexec_keep_grads(rt_xexec *x, FILE *err);

#endif
