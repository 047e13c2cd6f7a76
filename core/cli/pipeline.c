#include "pipeline.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "model_cost.h"
#include "plan.h"

double rt_cli_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

int rt_cli_take_set(int argc, char **argv, int *i, const char **sets, int *n_sets, int max_sets)
{
    const char *a = argv[*i];
    const char *v = NULL;
    if (strcmp(a, "--set") == 0 || strcmp(a, "-s") == 0) {
        if (*i + 1 >= argc) {
            fprintf(stderr, "rectwin: %s needs a path.to.key=value argument\n", a);
            return -1;
        }
        v = argv[++*i];
    } else if (strncmp(a, "--set=", 6) == 0) {
        v = a + 6;
    } else {
        return 0;
    }
    if (*n_sets >= max_sets) {
        fprintf(stderr, "rectwin: at most %d --set overrides\n", max_sets);
        return -1;
    }
    sets[(*n_sets)++] = v;
    return 1;
}

int rt_pipeline_run(rt_pipeline *p, const char *path, const char *const *sets, int n_sets)
{
    memset(p, 0, sizeof *p);
    p->scenario = rt_scenario_load(path, sets, n_sets, stderr);
    if (!p->scenario) return -1;
    rt_scenario *s = p->scenario;
    if (rt_model_compute_costs(&s->model, stderr)) return -1;
    const rt_plan *plan = NULL;
    if (rt_plan_configure(s, &plan, &p->plan_opts)) return -1;
    double t0 = rt_cli_now();
    p->workload = rt_workload_sample(s, stderr);
    if (!p->workload) return -1;
    p->graph = plan->build(s, p->plan_opts, p->workload, stderr);
    if (!p->graph) return -1;
    p->build_s = rt_cli_now() - t0;
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
