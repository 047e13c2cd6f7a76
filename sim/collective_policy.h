/* Which entry of the algorithm table (collective_algo.h) a collective uses when the op says
 * RT_ALGO_AUTO: a decision table in the spirit of Open MPI's coll/tuned, mimicking what NCCL
 * picks, that asks the entries whether they can run. Separate from the algorithms so both
 * engines share one policy. */
#ifndef RT_COLLECTIVE_POLICY_H
#define RT_COLLECTIVE_POLICY_H

#include "collective_model.h"

typedef struct rt_coll_policy {
    double tree_max_bytes; /* multi-node AllReduce below this size: tree */
    double nvls_min_bytes; /* one-node AllReduce at or above this size: NVLS when available */
} rt_coll_policy;

void rt_coll_policy_default(rt_coll_policy *p);

/* The op's algorithm if forced (not AUTO), else the table's choice for KIND of S bytes on a
 * group of this shape. */
rt_coll_algo rt_coll_policy_choose(const rt_coll_policy *p, const rt_topology *t, rt_coll_kind kind,
                                   rt_coll_algo forced, const rt_coll_shape *shape, double bytes);

#endif
