#include "pipeline.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "accumulate.h"
#include "balance.h"
#include "memory.h"
#include "model_cost.h"
#include "overlap.h"
#include "plan.h"

double rt_pipeline_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

int rt_pipeline_run(rt_pipeline *p, const char *path, const char *const *sets, int n_sets,
                    FILE *err)
{
    memset(p, 0, sizeof *p);
    p->scenario = rt_scenario_load(path, sets, n_sets, err);
    if (!p->scenario) return -1;
    rt_scenario *s = p->scenario;
    if (rt_model_compute_costs(&s->model, err)) return -1;
    const rt_plan *plan = NULL;
    if (rt_plan_configure(s, &plan, &p->plan_opts)) return -1;
    if (plan->adjust_model && plan->adjust_model(s, p->plan_opts, err)) return -1;
    double t0 = rt_pipeline_now();
    p->workload = rt_workload_sample(s, err);
    if (!p->workload) return -1;
    /* Passes every plan gets: balancing moves samples before the graph exists; overlap
     * rewrites the plan's graph into its steady-state window; memory checks the result. */
    if (rt_balance_apply(s, p->workload, err)) return -1;
    p->graph = rt_accumulate_build(plan, s, p->plan_opts, p->workload, err);
    if (!p->graph) return -1;
    if (rt_overlap_apply(&p->graph, s, p->workload, err)) return -1;
    p->build_s = rt_pipeline_now() - t0;
    if (rt_memory_account(p->graph, s, p->workload, err)) return -1;
    return 0;
}

void rt_pipeline_free(rt_pipeline *p)
{
    rt_graph_free(p->graph);
    rt_workload_free(p->workload);
    free(p->plan_opts);
    rt_scenario_free(p->scenario);
    memset(p, 0, sizeof *p);
}
