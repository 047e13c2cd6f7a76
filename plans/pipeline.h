/* The steps every consumer of a scenario shares (CLI commands, tests, benchmarks): load and
 * validate the scenario, compute the model's costs, configure the plan, sample the workload, build
 * the op graph. */
#ifndef RT_PIPELINE_H
#define RT_PIPELINE_H

#include <stdio.h>

#include "graph.h"
#include "scenario.h"
#include "workload.h"

typedef struct rt_pipeline {
    rt_scenario *scenario;
    rt_workload *workload;
    rt_graph *graph;
    void *plan_opts;
    double build_s; /* wall time of sampling + building */
} rt_pipeline;

/* Returns 0, or -1 after printing what was wrong to ERR. On failure P still needs
 * rt_pipeline_free. */
int rt_pipeline_run(rt_pipeline *p, const char *path, const char *const *sets, int n_sets,
                    FILE *err);
void rt_pipeline_free(rt_pipeline *p);

/* Monotonic clock, seconds. */
double rt_pipeline_now(void);

#endif
