/* Traffic harness: members grouped by node, then the algorithm's own traffic function. */
#include "simgrid_collectives.h"

#include <stdlib.h>

#include "collective_algo.h"

static int blocks_of(const rt_sg_call *c, rt_sg_blocks *b)
{
    int G = c->t->node.devices;
    b->n = c->group.size;
    b->first = malloc(sizeof(int) * (size_t)(b->n + 1));
    if (!b->first) return -1;
    b->m = 0;
    for (int k = 0; k < b->n; k++)
        if (k == 0 || rt_sg_member(c, k) / G != rt_sg_member(c, k - 1) / G) b->first[b->m++] = k;
    b->first[b->m] = b->n;
    return 0;
}

int rt_sg_collective_traffic(const rt_sg_call *c, rt_sg_flowset *f, const char **why)
{
    if (c->group.size < 2) return 0;
    const rt_coll_algo_def *a = rt_coll_algo_get(c->algo);
    if (!a) {
        *why = "algorithm not resolved";
        return -1;
    }
    rt_sg_blocks b = {0};
    if (blocks_of(c, &b) < 0) {
        *why = "out of memory";
        return -1;
    }
    f->wire = c->wire > 0 ? c->wire : 1;
    int rc = a->traffic(c, &b, f);
    f->wire = 1;
    free(b.first);
    if (rc < 0) *why = "out of memory";
    return rc;
}

int rt_sg_collective_rounds(const rt_sg_call *c)
{
    const rt_coll_algo_def *a = rt_coll_algo_get(c->algo);
    return c->group.size < 2 || !a || !a->rounds ? 1 : a->rounds(c);
}
