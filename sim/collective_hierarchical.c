/* Hierarchical AllReduce: reduce-scatter inside the node (g ranks), AllReduce of the S/g
 * shard between nodes on each rail (ring of m), AllGather inside the node. Notation in
 * collective_terms.c. */
#include <math.h>

#include "collective_algo.h"
#include "collective_terms.h"

static int hier_check(const rt_topology *t, rt_coll_kind kind, const rt_coll_shape *shape,
                      const char **why)
{
    (void)t, (void)shape;
    if (kind == RT_COLL_ALLREDUCE) return 0;
    *why = "hierarchical implements only allreduce";
    return -1;
}

/* Pipelined over chunks like NCCL's NVLS-tree/CollNet, so NVLink and NIC phases overlap:
 * NVLink carries 2(g-1)/g x S per direction (RS out, AG out), the NIC 2(m-1)/m x S/g.
 * Latency: ring steps of both levels in sequence, 2(g-1) x a_up + 2(m-1) x a_net; with
 * protocols it runs Simple, whose base is added. */
static void hier_time(const rt_topology *t, const rt_coll_call *c, const rt_coll_shape *sh,
                      rt_coll_time *o)
{
    double S = c->bytes, g = sh->local, m = sh->nodes;
    double intra = 2.0 * (g - 1) / g * S / rt_coll_bw_up(t);
    double inter = m > 1 ? 2.0 * (m - 1) / m * (S / g) / rt_coll_bw_net(t, sh) : 0.0;
    o->transfer_s = fmax(intra, inter);
    o->latency_s = 2.0 * (g - 1) * t->node.scale_up_latency +
                   (m > 1 ? 2.0 * (m - 1) * rt_coll_lat_net(t, rt_coll_farthest(sh)) : 0.0);
    if (t->coll.has_protocols) {
        o->proto = RT_PROTO_SIMPLE;
        o->latency_s = rt_coll_proto_simple(t)->ring.base + o->latency_s;
    }
}

/* Ring reduce-scatter and all-gather inside each node (2(l-1)/l x S to the next member), and
 * a ring AllReduce of the S/l shard across nodes among members with equal local index
 * (2(m-1)/m x S/l to the same index on the next node). Pipelined: concurrent. */
static int hier_traffic(const rt_sg_call *c, const rt_sg_blocks *b, rt_sg_flowset *f)
{
    for (int i = 0; i < b->m; i++) {
        int len = rt_sg_block_len(b, i);
        for (int s = 0; s < len && len > 1; s++) {
            int from = rt_sg_member(c, b->first[i] + s);
            int to = rt_sg_member(c, b->first[i] + (s + 1) % len);
            double bytes = 2.0 * (len - 1) / len * rt_sg_size_of(c, from);
            if (rt_sg_flowset_add_pair(f, from, to, bytes) < 0) return -1;
        }
        int nb = (i + 1) % b->m;
        int l = len < rt_sg_block_len(b, nb) ? len : rt_sg_block_len(b, nb);
        for (int s = 0; s < l && b->m > 1; s++) {
            int from = rt_sg_member(c, b->first[i] + s), to = rt_sg_member(c, b->first[nb] + s);
            double bytes = 2.0 * (b->m - 1) / b->m * rt_sg_size_of(c, from) / len;
            if (rt_sg_flowset_add_pair(f, from, to, bytes) < 0) return -1;
        }
    }
    return 0;
}

static double hier_busbw(rt_coll_kind kind, int n)
{
    (void)kind;
    return 2.0 * (n - 1) / n;
}

const rt_coll_algo_def rt_coll_algo_hierarchical = {
    .id = RT_ALGO_HIERARCHICAL,
    .check = hier_check,
    .time = hier_time,
    .traffic = hier_traffic,
    .busbw_factor = hier_busbw,
};
