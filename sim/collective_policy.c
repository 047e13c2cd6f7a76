/* Decision table (first match wins):
 *   forced algorithm on the op                         -> that algorithm
 *   alltoallv, sendrecv                                -> direct
 *   allgather, reduce_scatter                          -> ring (NCCL's default for both)
 *   allreduce, one node, NVSwitch with nvls, S >= 256 KiB -> nvls
 *   allreduce, one node                                -> ring (NCCL's intra-node choice; its
 *                                                         tree inside a node is a chain)
 *   allreduce, several nodes, S < 4 MiB                -> tree (log-depth latency between
 *                                                         nodes, NCCL's pick for small and
 *                                                         medium sizes at scale)
 *   allreduce, several nodes, > 1 member per node,
 *     NVSwitch with nvls                               -> hierarchical (NVLink and NICs
 *                                                         pipelined, like NCCL's NVLS-tree)
 *   allreduce, several nodes, otherwise                -> ring (NCCL on A100-class nodes:
 *                                                         the hierarchical choice there
 *                                                         over-predicted published 2-node
 *                                                         busbw by about 2x, see
 *                                                         experiments/validation/collectives.md)
 * Thresholds: NVLS runs only NCCL's Simple protocol, whose fixed cost loses to the LL ring
 * below a few hundred KiB; the tree/ring crossover in NCCL's tuning for 8-GPU nodes sits in
 * the low MiB. Both are settings (echoed in summary.json), not measurements. */
#include "collective_policy.h"

#include "collective_algo.h"

void rt_coll_policy_default(rt_coll_policy *p)
{
    p->tree_max_bytes = 4.0 * 1024 * 1024;
    p->nvls_min_bytes = 256.0 * 1024;
}

static rt_coll_algo allreduce_choice(const rt_coll_policy *p, const rt_topology *t,
                                     const rt_coll_shape *sh, double bytes)
{
    const char *why;
    if (sh->nodes <= 1) {
        int nvls = rt_coll_algo_nvls.check(t, RT_COLL_ALLREDUCE, sh, &why) == 0;
        return nvls && sh->size > 1 && bytes >= p->nvls_min_bytes ? RT_ALGO_NVLS : RT_ALGO_RING;
    }
    if (bytes < p->tree_max_bytes) return RT_ALGO_TREE;
    return sh->local > 1 && rt_coll_nvls_available(t) ? RT_ALGO_HIERARCHICAL : RT_ALGO_RING;
}

rt_coll_algo rt_coll_policy_choose(const rt_coll_policy *p, const rt_topology *t, rt_coll_kind kind,
                                   rt_coll_algo forced, const rt_coll_shape *shape, double bytes)
{
    if (forced != RT_ALGO_AUTO) return forced;
    switch (kind) {
    case RT_COLL_ALLTOALLV:
    case RT_COLL_SENDRECV:
        return RT_ALGO_DIRECT;
    case RT_COLL_ALLREDUCE:
        return allreduce_choice(p, t, shape, bytes);
    default:
        return RT_ALGO_RING;
    }
}
