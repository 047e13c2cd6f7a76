/* Collective algorithms as traffic: the harness that hands one group instance to its
 * algorithm's traffic function (collective_algo.h) with the members grouped by node.
 * Pipelined algorithms are one round of concurrent flows carrying every step's bytes; their
 * per-step latencies are added by the engine from the analytic model (collective_model.h). */
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
    int round;   /* -1: every step in one round of concurrent flows; else this round */
    int chunks;  /* pipelined chunks of a step-wise algorithm (>= 1) */
    double wire; /* bytes on the wire per payload byte: 1 / the protocol's bandwidth fraction */
} rt_sg_call;

/* Members of an instance are ranks in increasing order, so the members of one node are
 * consecutive: a block per node. */
typedef struct rt_sg_blocks {
    int n;      /* members */
    int m;      /* blocks (nodes) */
    int *first; /* [m + 1]: member index where block b starts */
} rt_sg_blocks;

/* The rank of member K. */
static inline int rt_sg_member(const rt_sg_call *c, int k)
{
    return c->base + k * c->group.stride;
}
static inline int rt_sg_block_len(const rt_sg_blocks *b, int i)
{
    return b->first[i + 1] - b->first[i];
}
/* The nccl-tests size of the call on RANK. */
static inline double rt_sg_size_of(const rt_sg_call *c, int rank)
{
    return c->cost(c->ctx, rank)->bytes;
}

/* Adds the instance's traffic (of round c->round) to F. Returns 0, or -1 with *why set. */
int rt_sg_collective_traffic(const rt_sg_call *c, rt_sg_flowset *f, const char **why);

/* Dependent rounds the instance runs when step-wise: the algorithm's rounds(), 1 for an
 * algorithm without (or a one-member group). */
int rt_sg_collective_rounds(const rt_sg_call *c);

#endif
