/* What the analytic engine shares with the other engines: its kernel cost model. */
#ifndef RT_ANALYTIC_H
#define RT_ANALYTIC_H

#include "graph.h"
#include "topology.h"

/* Roofline time of kernel OP with cost C on T's device:
 * max(FLOPs / (peak[dtype] x eff_flops), bytes / (hbm_bw x eff_hbm)) + launch_overhead.
 * Returns 0, or -1 with *why set (no peak for the dtype, non-finite cost). */
int rt_analytic_kernel_time(const rt_topology *t, const rt_op *op, const rt_op_cost *c, double *out,
                            const char **why);

#endif
