/* Traffic per algorithm. Notation as in collective_model.c: S the nccl-tests size of a
 * member, n members, m nodes, l members on a node. Members of an instance are ranks in
 * increasing order, so the members of one node are consecutive ("blocks"). */
#include "simgrid_collectives.h"

#include <stdlib.h>

typedef struct blocks {
    int n;      /* members */
    int m;      /* blocks (nodes) */
    int *first; /* [m + 1]: member index where block b starts */
} blocks;

static int member(const rt_sg_call *c, int k)
{
    return c->base + k * c->group.stride;
}

static int blocks_of(const rt_sg_call *c, blocks *b)
{
    int G = c->t->node.devices;
    b->n = c->group.size;
    b->first = malloc(sizeof(int) * (size_t)(b->n + 1));
    if (!b->first) return -1;
    b->m = 0;
    for (int k = 0; k < b->n; k++)
        if (k == 0 || member(c, k) / G != member(c, k - 1) / G) b->first[b->m++] = k;
    b->first[b->m] = b->n;
    return 0;
}

static int block_len(const blocks *b, int i)
{
    return b->first[i + 1] - b->first[i];
}

static double size_of(const rt_sg_call *c, int rank)
{
    return c->cost(c->ctx, rank)->bytes;
}

/* Direct AlltoAll(v): every member sends its per-peer bytes to every other member. */
static int direct(const rt_sg_call *c, rt_sg_flowset *f)
{
    int n = c->group.size;
    for (int a = 0; a < n; a++) {
        const rt_op_cost *cost = c->cost(c->ctx, member(c, a));
        double even = cost->bytes / n;
        for (int k = 0; k < n; k++) {
            if (k == a) continue;
            double bytes = cost->send ? (double)cost->send[k] : even;
            if (rt_sg_flowset_add_pair(f, member(c, a), member(c, k), bytes) < 0) return -1;
        }
    }
    return 0;
}

/* NCCL-style rings, one channel per member of a node (one channel inside a single node).
 * Channel ch enters every node at its member ch and leaves from member ch - 1, so the
 * channels spread the inter-node hops over the node's devices (and NICs). Each member sends
 * FACTOR x S / channels to its successor in every channel. A hop between nodes leaves
 * through the sender's own NIC and stays on its rail (NCCL builds rings that way, without
 * PXN): it is sent to the device of the next node with the sender's local index, and the
 * last step into the successor is not charged. */
static int ring(const rt_sg_call *c, const blocks *b, double factor, rt_sg_flowset *f)
{
    int channels = 1;
    if (b->m > 1) {
        channels = block_len(b, 0);
        for (int i = 1; i < b->m; i++)
            if (block_len(b, i) < channels) channels = block_len(b, i);
    }
    for (int ch = 0; ch < channels; ch++)
        for (int i = 0; i < b->m; i++) {
            int len = block_len(b, i);
            for (int s = 0; s < len; s++) {
                int from = member(c, b->first[i] + (ch + s) % len);
                int to;
                if (s + 1 < len)
                    to = member(c, b->first[i] + (ch + s + 1) % len);
                else {
                    int nb = (i + 1) % b->m;
                    to = member(c, b->first[nb] + ch % block_len(b, nb));
                }
                double bytes = factor * size_of(c, from) / channels;
                int G = c->t->node.devices;
                if (to / G != from / G) to = to / G * G + from % G;
                if (rt_sg_flowset_add_pair(f, from, to, bytes) < 0) return -1;
            }
        }
    return 0;
}

/* Both directions between A and B. */
static int exchange(rt_sg_flowset *f, int a, int b, double bytes)
{
    return rt_sg_flowset_add_pair(f, a, b, bytes) < 0 || rt_sg_flowset_add_pair(f, b, a, bytes) < 0
               ? -1
               : 0;
}

/* NCCL's tree: a chain inside each node (reduce up, broadcast down: S each way per edge) and
 * two complementary binary trees between nodes, each carrying S/2 per edge and direction,
 * split over the node's members with equal local index. */
static int tree(const rt_sg_call *c, const blocks *b, rt_sg_flowset *f)
{
    for (int i = 0; i < b->m; i++)
        for (int s = 0; s + 1 < block_len(b, i); s++) {
            int a = member(c, b->first[i] + s), z = member(c, b->first[i] + s + 1);
            if (exchange(f, a, z, size_of(c, a)) < 0) return -1;
        }
    for (int tr = 0; tr < 2 && b->m > 1; tr++)
        for (int v = 1; v < b->m; v++) {
            int child = tr ? b->m - 1 - v : v, parent = tr ? b->m - 1 - (v - 1) / 2 : (v - 1) / 2;
            int l = block_len(b, child) < block_len(b, parent) ? block_len(b, child)
                                                               : block_len(b, parent);
            for (int s = 0; s < l; s++) {
                int a = member(c, b->first[child] + s), z = member(c, b->first[parent] + s);
                if (exchange(f, a, z, size_of(c, a) / 2 / l) < 0) return -1;
            }
        }
    return 0;
}

/* Hierarchical: ring reduce-scatter and all-gather inside each node (2(l-1)/l x S to the
 * next member), and a ring AllReduce of the S/l shard across nodes among members with equal
 * local index (2(m-1)/m x S/l to the same index on the next node). Pipelined: concurrent. */
static int hierarchical(const rt_sg_call *c, const blocks *b, rt_sg_flowset *f)
{
    for (int i = 0; i < b->m; i++) {
        int len = block_len(b, i);
        for (int s = 0; s < len && len > 1; s++) {
            int from = member(c, b->first[i] + s), to = member(c, b->first[i] + (s + 1) % len);
            if (rt_sg_flowset_add_pair(f, from, to, 2.0 * (len - 1) / len * size_of(c, from)) < 0)
                return -1;
        }
        int nb = (i + 1) % b->m;
        int l = len < block_len(b, nb) ? len : block_len(b, nb);
        for (int s = 0; s < l && b->m > 1; s++) {
            int from = member(c, b->first[i] + s), to = member(c, b->first[nb] + s);
            double bytes = 2.0 * (b->m - 1) / b->m * size_of(c, from) / len;
            if (rt_sg_flowset_add_pair(f, from, to, bytes) < 0) return -1;
        }
    }
    return 0;
}

/* NVLS inside one node, on each member's NVSwitch port: AllReduce pushes (g-1)/g x S and
 * multicasts S/g out, and pulls S/g and receives (g-1)/g x S in (S each way); AllGather
 * sends S/g up and receives (g-1)/g x S; ReduceScatter the reverse. */
static int nvls(const rt_sg_call *c, rt_sg_flowset *f)
{
    int g = c->group.size;
    for (int k = 0; k < g; k++) {
        int r = member(c, k);
        double S = size_of(c, r), up = S, down = S;
        if (c->kind == RT_COLL_ALLGATHER) up = S / g, down = (g - 1.0) / g * S;
        if (c->kind == RT_COLL_REDUCE_SCATTER) up = (g - 1.0) / g * S, down = S / g;
        /* Device rank r's NVLink up and down segments are r and world + r. */
        if (rt_sg_flowset_add_segment(f, r, up) < 0 ||
            rt_sg_flowset_add_segment(f, f->p->world + r, down) < 0)
            return -1;
    }
    return 0;
}

int rt_sg_collective_traffic(const rt_sg_call *c, rt_sg_flowset *f, const char **why)
{
    if (c->group.size < 2) return 0;
    blocks b = {0};
    if (blocks_of(c, &b) < 0) {
        *why = "out of memory";
        return -1;
    }
    int rc;
    int n = c->group.size;
    switch (c->algo) {
    case RT_ALGO_DIRECT:
        rc = direct(c, f);
        break;
    case RT_ALGO_RING:
        rc = ring(c, &b, (c->kind == RT_COLL_ALLREDUCE ? 2.0 : 1.0) * (n - 1) / n, f);
        break;
    case RT_ALGO_TREE:
        rc = tree(c, &b, f);
        break;
    case RT_ALGO_HIERARCHICAL:
        rc = hierarchical(c, &b, f);
        break;
    case RT_ALGO_NVLS:
        rc = nvls(c, f);
        break;
    default:
        *why = "algorithm not resolved";
        free(b.first);
        return -1;
    }
    free(b.first);
    if (rc < 0) *why = "out of memory";
    return rc;
}
