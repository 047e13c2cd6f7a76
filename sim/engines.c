#include "engines.h"

#include <string.h>

extern const rt_engine rt_engine_simgrid;
extern const rt_engine rt_engine_analytic;

const rt_engine *const rt_engines[] = {&rt_engine_simgrid, &rt_engine_analytic, NULL};

const rt_engine *rt_engine_find(const char *name)
{
    if (!name) return NULL;
    for (int i = 0; rt_engines[i]; i++)
        if (strcmp(rt_engines[i]->name, name) == 0) return rt_engines[i];
    return NULL;
}
