/* Finding ops in a built graph, for the plan tests. Include after <cmocka.h>. */
#ifndef RT_TEST_GRAPH_QUERY_H
#define RT_TEST_GRAPH_QUERY_H

#include <string.h>

#include "graph.h"

/* The NTH op (from 0) of PHASE whose name is NAME (any name when NULL), or -1. */
static inline int find_op(const rt_graph *g, const char *phase, const char *name, int nth)
{
    for (int o = 0; o < g->n_ops; o++)
        if (!strcmp(g->phases[g->ops[o].phase], phase) &&
            (!name || !strcmp(g->ops[o].name, name)) && nth-- == 0)
            return o;
    return -1;
}

static inline int count_ops(const rt_graph *g, const char *phase)
{
    int n = 0;
    while (find_op(g, phase, NULL, n) >= 0)
        n++;
    return n;
}

/* The first op of PHASE named NAME (any when NULL); fails the test when there is none. */
static inline int must_find_op(const rt_graph *g, const char *phase, const char *name)
{
    int o = find_op(g, phase, name, 0);
    if (o < 0) fail_msg("no op %s in phase %s", name ? name : "*", phase);
    return o;
}

#endif
