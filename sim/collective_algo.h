/* Collective algorithms as one vtable, in the style of nccl-tests' `struct testColl`: each
 * algorithm is one file (collective_direct.c, collective_ring.c, collective_tree.c,
 * collective_hierarchical.c, collective_nvls.c) that fills one rt_coll_algo_def, and
 * collective_algos.c lists them. The harnesses are rt_coll_model_time (collective_model.h:
 * shape, calibration, base latency) and rt_sg_collective_traffic (simgrid_collectives.h:
 * member blocks); the choice among entries is collective_policy.h's. Adding an algorithm is
 * one file, one entry in the table and its name in core/graph.h (plans may force it). */
#ifndef RT_COLLECTIVE_ALGO_H
#define RT_COLLECTIVE_ALGO_H

#include "collective_model.h"
#include "simgrid_collectives.h"

typedef struct rt_coll_algo_def {
    rt_coll_algo id;
    /* 0 when the algorithm can run KIND on a group of this shape on T, else -1 with *why. */
    int (*check)(const rt_topology *t, rt_coll_kind kind, const rt_coll_shape *shape,
                 const char **why);
    /* Analytic time of a checked call on a group of two or more: the bandwidth term and the
     * per-step latencies; with the topology's `protocols:` also the protocol's base (and
     * o->proto), without them the harness adds base_latency. */
    void (*time)(const rt_topology *t, const rt_coll_call *c, const rt_coll_shape *shape,
                 rt_coll_time *o);
    /* The bytes each member of one instance sends where, for the SimGrid engine: every step
     * at once (c->round < 0), or round c->round of rounds(). Returns 0, or -1 when out of
     * memory. */
    int (*traffic)(const rt_sg_call *c, const rt_sg_blocks *b, rt_sg_flowset *f);
    /* Dependent rounds of the step-wise traffic (simgrid.collective_steps: steps) with
     * c->chunks pipelined chunks; NULL: the algorithm runs as one round. */
    int (*rounds)(const rt_sg_call *c);
    /* nccl-tests bus bandwidth factor of KIND on N ranks (busbw = algbw x factor), for the
     * kinds the algorithm runs. */
    double (*busbw_factor)(rt_coll_kind kind, int n);
} rt_coll_algo_def;

extern const rt_coll_algo_def rt_coll_algo_direct, rt_coll_algo_ring, rt_coll_algo_tree,
    rt_coll_algo_hierarchical, rt_coll_algo_nvls;

/* An NVSwitch node with in-switch reduction (NVLS's own condition; the policy also uses it). */
int rt_coll_nvls_available(const rt_topology *t);

/* NULL-terminated, one entry per algorithm. */
extern const rt_coll_algo_def *const rt_coll_algos[];

/* The entry of ID, or NULL (RT_ALGO_AUTO, unknown). */
const rt_coll_algo_def *rt_coll_algo_get(rt_coll_algo id);

#endif
