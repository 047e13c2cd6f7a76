/* Runs a rank's op graph for warm-up plus measured iterations, in graph order, each op on its
 * stream, timed by device marks (CUDA events; a monotonic clock on CPU). */
#ifndef RT_XRUNNER_H
#define RT_XRUNNER_H

#include <stdint.h>
#include <stdio.h>

#include "exec.h"

struct rt_criteo;

typedef struct rt_xrun_cfg {
    int warmup, iterations; /* iterations measured after the warm-up ones */
    /* The index of the first iteration (warm-up included): 0, or a resumed run's next
     * iteration, so its batches, Adam steps and data-file samples continue the saved run's. */
    int64_t first_iteration;
    double op_timeout_s;            /* watchdog limit for one op */
    const rt_workload *graph_batch; /* the workload the graph was built from: iteration 0 */
    struct rt_criteo *data;         /* optional data file */
    /* Fault injection for the tests: at op FAULT_OP on rank FAULT_RANK, "die" exits the
     * process, "hang" blocks forever and "fail" makes the op return an error (NULL: none). */
    const char *fault_kind;
    int fault_rank;
    const char *fault_op;
    const char *dump_dir; /* --dump: this run's first iteration's embeddings and loss (dump.h) */
} rt_xrun_cfg;

typedef struct rt_xtimes {
    int n_iter, n_ops;
    double *start, *end; /* [iter * n_ops + op], seconds from the iteration's start */
    double *wall;        /* [iter]: host wall time of the iteration */
    double *loss;        /* [iter]: this rank's loss */
    int batches;         /* trained: an overlapped run fills and drains its pipeline */
} rt_xtimes;

int rt_xrun(rt_xexec *x, const rt_xrun_cfg *c, rt_xtimes *t, FILE *err);
void rt_xtimes_free(rt_xtimes *t);

#endif
