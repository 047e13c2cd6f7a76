/* family torus: a 2D or 3D torus of routers (`scale_out.dims`, their product = nodes), one
 * router per node: the node's leaf host (leaf-0-N), which holds all its NICs (one plane,
 * rail_optimized false). Node N sits at coordinates c_k = (N / (D_0 x ... x D_{k-1})) mod D_k.
 *   torus-N-K   duplex link from router N to its + neighbour in dimension K (wraparound), UP
 *               in the + direction; bandwidth per direction nics_per_node x nic_bw x
 *               collective efficiency inter / (2 x dimensions): the router passes on what its
 *               NICs inject, spread evenly over its 2 x dimensions torus ports (a non-blocking
 *               router, as fat_tree's 1:1 leaf; no figure beyond the topology's); latency one
 *               switch_latency (the router it enters). nics_per_node >= 2 x dimensions, so
 *               that one flow at its NIC's rate fits one torus link and the analytic engine
 *               (which charges the NIC rate) holds for an uncongested flow.
 * Routing: dimension order (dimension 0 first), each dimension the shorter way round, a tie
 * (distance D/2) the + way. A dimension of 2 routers has its two nodes joined twice (both +
 * links); routes use only the link of the node at coordinate 0 (the + way from 0, the - way
 * from 1), since SimGrid holds one route per host pair: the other is written but never
 * crossed. A segment is one directed torus link (router to router); a route has as many as
 * hops, at most the diameter sum(floor(D_k / 2)).
 * The analytic engine charges every cross-node pair the diameter's 1 + diameter routers
 * (switches()): a step of a collective waits for its farthest pair. Link sharing on the torus
 * (several flows on one router-to-router link) shows only in the SimGrid engine. */
#include "fabric.h"

_Static_assert(RT_PLATFORM_MAX_PATH - 4 == 12, "layout()'s message names 12 torus links");

static int stride(const rt_platform *p, int k)
{
    int s = 1;
    for (int i = 0; i < k; i++)
        s *= p->dims[i];
    return s;
}
static int coord(const rt_platform *p, int node, int k)
{
    return node / stride(p, k) % p->dims[k];
}
/* The node one step from NODE in dimension K, the + (STEP 1) or - (-1) way. */
static int neighbour(const rt_platform *p, int node, int k, int step)
{
    int c = coord(p, node, k), D = p->dims[k];
    return node + ((c + step + D) % D - c) * stride(p, k);
}
static int directed(int duplex, rt_link_dir d)
{
    return 2 * duplex + (int)d;
}
static int diameter(const int *dims, int n)
{
    int hops = 0;
    for (int k = 0; k < n; k++)
        hops += dims[k] / 2;
    return hops;
}

static const char *layout(rt_platform *p, const rt_topology *t)
{
    if (t->net.n_dims < 2 || t->net.n_dims > 3)
        return "scale_out.family torus needs dims: [x, y] or [x, y, z]";
    long long prod = 1;
    for (int k = 0; k < t->net.n_dims; k++)
        prod *= t->net.dims[k];
    if (prod != p->nodes)
        return "scale_out.family torus: the product of dims must be the node count (one router "
               "per node)";
    if (t->net.rail_optimized || p->planes != 1 || p->nodes_per_leaf != 1)
        return "scale_out.family torus needs rail_optimized: false (one router per node)";
    if (t->net.nics_per_node < 2 * t->net.n_dims)
        return "scale_out.family torus needs nics_per_node >= 2 x dimensions (a torus link "
               "carries the node's NIC bandwidth / (2 x dimensions))";
    if (t->net.ecmp == RT_ECMP_HASH)
        return "scale_out.family torus routes by dimension order; allowed: ecmp: balanced";
    if (diameter(t->net.dims, t->net.n_dims) > RT_PLATFORM_MAX_PATH - 4)
        return "scale_out.family torus: a route would cross more than 12 torus links "
               "(sum of floor(dims/2)); allowed: a torus of diameter <= 12";
    p->n_dims = t->net.n_dims;
    for (int k = 0; k < p->n_dims; k++)
        p->dims[k] = t->net.dims[k];
    p->ports = p->up_ports = 0;
    p->ecmp_hash = 0;
    p->n_up_hosts = 0;
    p->n_up_links = p->nodes * p->n_dims;
    p->n_cross = 2 * p->n_up_links;
    return NULL;
}

static void set_links(rt_platform *p, const rt_topology *t)
{
    for (int i = 0; i < p->n_up_links; i++) {
        p->bw[rt_fabric_link0(p) + i] =
            t->net.nics_per_node * t->net.nic_bw * t->coll.eff_inter / (2 * p->n_dims);
        p->lat[rt_fabric_link0(p) + i] = t->net.switch_latency;
    }
}

static int route(const rt_platform *p, int plane, int from, int to, int src, int dst, int *segs)
{
    (void)plane, (void)src, (void)dst;
    int n = 0, cur = from, L = p->n_up_links;
    for (int k = 0; k < p->n_dims; k++) {
        int D = p->dims[k], a = coord(p, cur, k), d = (coord(p, to, k) - a + D) % D;
        if (d == 0) continue;
        int plus = D == 2 ? a == 0 : d <= D - d;
        for (int h = 0; h < (plus ? d : D - d); h++) {
            int next = neighbour(p, cur, k, plus ? 1 : -1);
            int owner = plus ? cur : next; /* the + link of the lower end */
            segs[n++] = rt_fabric_seg0(p) + (plus ? 0 : L) + owner * p->n_dims + k;
            cur = next;
        }
    }
    return n;
}

static int segment(const rt_platform *p, int seg, int *src, int *dst, int *links)
{
    int L = p->n_up_links, i = seg % L, node = i / p->n_dims, k = i % p->n_dims;
    rt_link_dir d = seg < L ? RT_DIR_UP : RT_DIR_DOWN;
    int a = rt_platform_leaf(p, 0, node), b = rt_platform_leaf(p, 0, neighbour(p, node, k, 1));
    *src = d == RT_DIR_UP ? a : b;
    *dst = d == RT_DIR_UP ? b : a;
    links[0] = directed(rt_fabric_link0(p) + i, d);
    return 1;
}

static int segment_used(const rt_platform *p, int seg)
{
    int i = seg % p->n_up_links, node = i / p->n_dims, k = i % p->n_dims;
    return p->dims[k] != 2 || coord(p, node, k) == 0;
}

static void link_name(const rt_platform *p, int link, char *buf, size_t size)
{
    snprintf(buf, size, "torus-%d-%d", link / p->n_dims, link % p->n_dims);
}

static void comment(const rt_platform *p, FILE *f)
{
    fprintf(f, "<!-- scale_out.family torus %d", p->dims[0]);
    for (int k = 1; k < p->n_dims; k++)
        fprintf(f, "x%d", p->dims[k]);
    fputs(": leaf-0-N is node N's router, torus-N-K joins it to its + neighbour in dimension "
          "K\n     (UP: the + way); dimension-order routing, the shorter way round (a tie the + "
          "way; in a\n     dimension of 2 only the link of coordinate 0 is routed). -->\n",
          f);
}

static int switches(const rt_topology *t, int cross_leaf)
{
    return cross_leaf ? 1 + diameter(t->net.dims, t->net.n_dims) : 1;
}

const rt_fabric rt_fabric_torus = {
    .family = RT_FAMILY_TORUS,
    .layout = layout,
    .set_links = set_links,
    .route = route,
    .segment = segment,
    .segment_used = segment_used,
    .link_name = link_name,
    .comment = comment,
    .switches = switches,
};
