/* Kernel time, for every engine. With the topology's calibration tables (core/calib.h) a kernel
 * op is the sum of its launches (rt_piece: GEMMs on the GEMM grid of the op's dtype, memory-
 * bound passes on their family's bytes/s curve, attention and interaction on their FLOP/s
 * curves) plus the measured dispatch cost per launch; an op without pieces (embedding lookup,
 * update, unique, permutes, the dense optimizer) is one launch of its bytes on its family's
 * curve. Without tables, or for a piece whose table is missing, the roofline of
 * rt_analytic_kernel_time. */
#ifndef RT_KERNEL_MODEL_H
#define RT_KERNEL_MODEL_H

#include "graph.h"
#include "scenario.h"

/* Seconds of kernel OP on representative REP. Returns 0, or -1 with *why set. */
int rt_kernel_time(const rt_scenario *s, const rt_graph *g, int op, int rep, double *out,
                   const char **why);

/* Seconds one launch of PIECE takes on S's calibrated run for the graph's world (without the
 * dispatch cost), falling back to the roofline of the device figures for a missing table. */
double rt_kernel_piece_time(const rt_scenario *s, rt_dtype dtype, const rt_piece *p);

#endif
