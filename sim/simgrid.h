/* The simgrid engine (rt_engine_simgrid) with its settings given rather than read from the
 * topology's `simgrid:` sections: what the engine runs after loading them, and what tests
 * call to set a key on a topology they built by hand. */
#ifndef RT_SIMGRID_H
#define RT_SIMGRID_H

#include <stdio.h>

#include "result.h"
#include "scenario.h"
#include "simgrid_settings.h"

/* Fills R's start, end and algorithms, its settings and links.csv. Returns 0 or -1 with a
 * message on ERR. */
int rt_simgrid_run(const rt_scenario *s, const rt_graph *g, const rt_simgrid_settings *sg,
                   rt_result *r, FILE *err);

#endif
