/* The SimGrid side of the simgrid engine: one simulation of one op graph. SimGrid keeps its
 * engine in process-wide state that cannot be reset, so sim/simgrid.c runs this in a child
 * process; the job's inputs are read-only and its outputs live in memory shared with the
 * parent. */
#ifndef RT_SIMGRID_RUN_H
#define RT_SIMGRID_RUN_H

#include "graph.h"
#include "simgrid_platform.h"
#include "simgrid_settings.h"
#include "topology.h"

typedef struct rt_sg_out {
    int status;      /* 0 when the simulation finished */
    char msg[512];   /* why it did not */
    double sim_time; /* simulated end of the iteration */
    long flows;      /* flows simulated */
    double *start;   /* [op * n_reps + rep] */
    double *end;
    double *link_bytes; /* [directed link] bytes carried */
} rt_sg_out;

typedef struct rt_sg_job {
    const rt_topology *t;
    const rt_simgrid_settings *sg;
    const rt_graph *g;
    const rt_platform *p;
    const char *platform_path;
    int pairs;                /* one flow per device pair (else per segment) */
    const int *rep_of;        /* [rank]: representative whose costs the rank uses */
    const double *kernel_s;   /* [op * n_reps + rep] kernel durations */
    const rt_coll_algo *algo; /* [op * n_reps + rep] */
    rt_sg_out *out;
} rt_sg_job;

/* Runs the simulation and fills job->out. Call it only in a process that has not started
 * SimGrid yet; it never returns control to SimGrid afterwards. Returns out->status. */
int rt_sg_simulate(const rt_sg_job *job);

#endif
