/* Collective algorithms as traffic: the bytes each member of one group instance sends to
 * which device, for the algorithm the policy chose (collective_policy.h). Pipelined
 * algorithms are one round of concurrent flows carrying every step's bytes; their per-step
 * latencies are added by the engine from the analytic model (collective_model.h). */
#ifndef RT_SIMGRID_COLLECTIVES_H
#define RT_SIMGRID_COLLECTIVES_H

#include "graph.h"
#include "simgrid_flows.h"
#include "topology.h"

/* The cost of the op on the representative standing for RANK. */
typedef const rt_op_cost *(*rt_sg_cost_fn)(void *ctx, int rank);

typedef struct rt_sg_call {
    const rt_topology *t;
    rt_coll_kind kind;
    rt_coll_algo algo; /* resolved */
    rt_group group;
    int base; /* group base rank of the instance */
    rt_sg_cost_fn cost;
    void *ctx;
} rt_sg_call;

/* Adds the instance's traffic to F. Returns 0, or -1 with *why set. */
int rt_sg_collective_traffic(const rt_sg_call *c, rt_sg_flowset *f, const char **why);

#endif
