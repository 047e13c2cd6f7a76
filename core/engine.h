/* Engine vtable: something that turns an op graph into op start/end times.
 * Adding an engine means one file and one entry in sim/engines.c. */
#ifndef RT_ENGINE_H
#define RT_ENGINE_H

#include <stdio.h>

#include "graph.h"
#include "result.h"
#include "scenario.h"

typedef struct rt_engine {
    const char *name;
    const char *description;
    /* Fills r->start / r->end (and settings_json). Returns 0 or -1 with a message on ERR. */
    int (*run)(const rt_scenario *s, const rt_graph *g, rt_result *r, FILE *err);
} rt_engine;

#endif
