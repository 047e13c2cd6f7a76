/* The table of collective algorithms (collective_algo.h). */
#include "collective_algo.h"

const rt_coll_algo_def *const rt_coll_algos[] = {
    &rt_coll_algo_direct,       &rt_coll_algo_ring, &rt_coll_algo_tree,
    &rt_coll_algo_hierarchical, &rt_coll_algo_nvls, NULL,
};

const rt_coll_algo_def *rt_coll_algo_get(rt_coll_algo id)
{
    for (int i = 0; rt_coll_algos[i]; i++)
        if (rt_coll_algos[i]->id == id) return rt_coll_algos[i];
    return NULL;
}
