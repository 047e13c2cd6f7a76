/* The registry of simulation engines (core/engine.h vtables). */
#ifndef RT_ENGINES_H
#define RT_ENGINES_H

#include "engine.h"

/* NULL-terminated, the default engine first. */
extern const rt_engine *const rt_engines[];

/* The engine called NAME, or NULL. */
const rt_engine *rt_engine_find(const char *name);

#endif
