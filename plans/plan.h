/* Plan vtable: a plan is a function that builds the op graph from a scenario and a sampled
 * workload. Adding a plan means one file and one entry in plans/registry.c. */
#ifndef RT_PLAN_H
#define RT_PLAN_H

#include <stdio.h>

#include "graph.h"
#include "scenario.h"
#include "workload.h"

typedef struct rt_plan {
    const char *name;
    const char *description;
    /* Plan-specific keys allowed in the scenario's plan section, besides the common ones
     * (name, sharding, column_shards, precision, dense_allreduce). NULL-terminated. */
    const char *const *option_keys;
    /* Parses and validates the plan-specific keys; *opts is plan-owned (freed with free()). */
    int (*configure)(const rt_scenario *s, void **opts);
    /* Optional (NULL for most plans): a plan that adds parts to the model (SPTT's tower
     * modules) updates the model's costs here, after configure, so `plan`, MFU and the
     * memory check see them. */
    int (*adjust_model)(rt_scenario *s, void *opts, FILE *err);
    /* Builds the graph. Returns NULL with a message on ERR. */
    rt_graph *(*build)(const rt_scenario *s, const void *opts, const rt_workload *w, FILE *err);
} rt_plan;

const rt_plan *rt_plan_find(const char *name);
/* NULL-terminated table of all plans. */
extern const rt_plan *const rt_plans[];

/* Validates s->plan: the plan exists and its section has only allowed keys; runs configure.
 * Returns 0 or -1 (message with file:line:col). */
int rt_plan_configure(const rt_scenario *s, const rt_plan **plan, void **opts);

#endif
