/* Tree AllReduce (NCCL: a chain inside each node, a double binary tree between nodes,
 * pipelined). Notation in collective_terms.c. */
#include <math.h>

#include "collective_algo.h"
#include "collective_channels.h"
#include "collective_terms.h"

static int tree_check(const rt_topology *t, rt_coll_kind kind, const rt_coll_shape *shape,
                      const char **why)
{
    (void)t, (void)shape;
    if (kind == RT_COLL_ALLREDUCE) return 0;
    *why = "tree implements only allreduce";
    return -1;
}

/* Reduce goes up while broadcast comes down. In the chain a device forwards S up and S down:
 * 2S per direction over NVLink. Between nodes each tree carries S/2; a node is interior (two
 * children) in one tree and a leaf in the other, so per direction it moves S up + S down =
 * 2S, spread over its g devices' NICs. Latency: the chain twice and the tree depth twice. */
static void tree_time(const rt_topology *t, const rt_coll_call *c, const rt_coll_shape *sh,
                      rt_coll_time *o)
{
    double S = c->bytes, g = sh->local;
    int m = sh->nodes;
    double intra = g > 1 ? 2.0 * S / rt_coll_bw_up(t) : 0.0;
    double inter = m > 1 ? 2.0 * S / (g * rt_coll_bw_net(t, sh)) : 0.0;
    o->transfer_s = fmax(intra, inter);
    double depth = m > 1 ? ceil(log2((double)m)) : 0.0;
    o->latency_s = 2.0 * ((g - 1) * t->node.scale_up_latency +
                          depth * rt_coll_lat_net(t, rt_coll_farthest(sh)));
    if (t->coll.has_protocols) rt_coll_proto_fastest(t, sh, c->kind, RT_ALGO_TREE, c->bytes, o);
    /* With `channels:`, a small call runs on fewer channels (collective_channels.c). */
    rt_coll_channel_ramp(t, c, sh->size, RT_ALGO_TREE, o);
}

/* Both directions between A and B. */
static int exchange(rt_sg_flowset *f, int a, int b, double bytes)
{
    return rt_sg_flowset_add_pair(f, a, b, bytes) < 0 || rt_sg_flowset_add_pair(f, b, a, bytes) < 0
               ? -1
               : 0;
}

/* The chain inside each node (reduce up, broadcast down: S each way per edge) and two
 * complementary binary trees between nodes, each carrying S/2 per edge and direction, split
 * over the node's members with equal local index. */
static int tree_traffic(const rt_sg_call *c, const rt_sg_blocks *b, rt_sg_flowset *f)
{
    for (int i = 0; i < b->m; i++)
        for (int s = 0; s + 1 < rt_sg_block_len(b, i); s++) {
            int a = rt_sg_member(c, b->first[i] + s), z = rt_sg_member(c, b->first[i] + s + 1);
            if (exchange(f, a, z, rt_sg_size_of(c, a)) < 0) return -1;
        }
    for (int tr = 0; tr < 2 && b->m > 1; tr++)
        for (int v = 1; v < b->m; v++) {
            int child = tr ? b->m - 1 - v : v, parent = tr ? b->m - 1 - (v - 1) / 2 : (v - 1) / 2;
            int l = rt_sg_block_len(b, child) < rt_sg_block_len(b, parent)
                        ? rt_sg_block_len(b, child)
                        : rt_sg_block_len(b, parent);
            for (int s = 0; s < l; s++) {
                int a = rt_sg_member(c, b->first[child] + s);
                int z = rt_sg_member(c, b->first[parent] + s);
                if (exchange(f, a, z, rt_sg_size_of(c, a) / 2 / l) < 0) return -1;
            }
        }
    return 0;
}

static double tree_busbw(rt_coll_kind kind, int n)
{
    (void)kind;
    return 2.0 * (n - 1) / n;
}

const rt_coll_algo_def rt_coll_algo_tree = {
    .id = RT_ALGO_TREE,
    .check = tree_check,
    .time = tree_time,
    .traffic = tree_traffic,
    .busbw_factor = tree_busbw,
};
