/* The steps every scenario command shares: load and validate the scenario, compute the
 * model's costs, configure the plan, sample the workload, build the op graph. */
#ifndef RT_CLI_PIPELINE_H
#define RT_CLI_PIPELINE_H

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

/* Returns 0, or -1 after printing what was wrong to stderr. */
int rt_pipeline_run(rt_pipeline *p, const char *path, const char *const *sets, int n_sets);
void rt_pipeline_free(rt_pipeline *p);

/* Common option parsing: consumes "--set k=v" / "--set=k=v" at argv[*i] into SETS.
 * Returns 1 when consumed, 0 when not a --set, -1 on a missing value. */
int rt_cli_take_set(int argc, char **argv, int *i, const char **sets, int *n_sets, int max_sets);

double rt_cli_now(void);

#endif
