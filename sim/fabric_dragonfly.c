/* family dragonfly (Kim et al., "Technology-Driven, Highly-Scalable Dragonfly Topology", ISCA
 * 2008): G = `groups` groups of a = `group_routers` routers; router r of group g is leaf
 * g x a + r (leaf-0-L), serving nodes / (G x a) nodes with all their NICs (one plane). Every
 * channel runs at one NIC's line rate (nic_bw x collective efficiency inter), as a Slingshot
 * Rosetta switch runs all its ports, to NICs, in the group and between groups, at 200 Gb/s
 * (De Sensi et al., "An In-Depth Analysis of the Slingshot Interconnect", SC 2020).
 *   local-G-R-S   routers R < S of group G, one channel (UP: R to S);
 *   global-I-J-R  the channels k of groups I < J with k mod a = R, joining router R of group I
 *                 to router R of group J (UP: I to J), as many channels of bandwidth as there
 *                 are such k among `global_links` (the pair's channels spread over the routers,
 *                 taken as balanced over the channels one link holds).
 * Minimal routing: within a group one local hop; between groups, from router R of group I to
 * router S of group J: to the gateway R' = R if router R holds a channel to J (R <
 * min(a, global_links)), else R mod global_links (a local hop), the global link R' to J, then
 * a local hop to S when R' != S. Latency: switch_latency per router-to-router link (the router
 * it enters). The analytic engine charges every cross-router pair 1 + the diameter: local-
 * global-local (3 hops) when global_links < a, global-local (2) otherwise, 1 with one group. */
#include "fabric.h"

#include <limits.h>

static int a_of(const rt_platform *p)
{
    return p->dims[1];
}
/* Global links per group pair: min(a, global_links). */
static int gl_of(const rt_platform *p)
{
    return p->dims[2] < p->dims[1] ? p->dims[2] : p->dims[1];
}
/* Index of the unordered pair (i < j) among N: i x (2N - i - 1) / 2 + j - i - 1. */
static int pair_index(int n, int i, int j)
{
    return i * (2 * n - i - 1) / 2 + j - i - 1;
}
static int n_local(const rt_platform *p)
{
    return p->dims[0] * (a_of(p) * (a_of(p) - 1) / 2);
}
static int local_link(const rt_platform *p, int g, int r, int s)
{
    int a = a_of(p);
    return g * (a * (a - 1) / 2) + pair_index(a, r < s ? r : s, r < s ? s : r);
}
static int global_link(const rt_platform *p, int i, int j, int r)
{
    int G = p->dims[0];
    return n_local(p) + pair_index(G, i < j ? i : j, i < j ? j : i) * gl_of(p) + r;
}
/* The segment crossing local-or-global link L from its lower end (UP) or upper end. */
static int seg_of(const rt_platform *p, int link, int up)
{
    return rt_fabric_seg0(p) + (up ? 0 : p->n_up_links) + link;
}
static int directed(int duplex, rt_link_dir d)
{
    return 2 * duplex + (int)d;
}
static int diameter(int groups, int a, int global_links)
{
    if (groups == 1) return a > 1;
    return (global_links < a) + 1 + (a > 1);
}

static const char *layout(rt_platform *p, const rt_topology *t)
{
    const rt_scale_out *n = &t->net;
    if (n->groups < 1 || n->group_routers < 1 || n->global_links < 1)
        return "scale_out.family dragonfly needs groups, group_routers and global_links >= 1";
    if (t->net.rail_optimized || p->planes != 1 ||
        (long long)p->leaves * p->nodes_per_leaf != p->nodes ||
        p->leaves != n->groups * n->group_routers)
        return "scale_out.family dragonfly needs rail_optimized: false and a node count that is "
               "a multiple of groups x group_routers";
    if (t->net.ecmp == RT_ECMP_HASH)
        return "scale_out.family dragonfly routes minimally; allowed: ecmp: balanced";
    long long a = n->group_routers, G = n->groups;
    long long links =
        G * (a * (a - 1) / 2) + G * (G - 1) / 2 * (n->global_links < a ? n->global_links : a);
    if (links > INT_MAX / 8) return "scale_out.family dragonfly: more than 2^28 links";
    p->dims[0] = n->groups, p->dims[1] = n->group_routers, p->dims[2] = n->global_links;
    p->n_dims = 0; /* dims holds the dragonfly's shape, not a torus */
    p->ports = p->up_ports = 0;
    p->ecmp_hash = 0;
    p->n_up_hosts = 0;
    p->n_up_links = (int)links;
    p->n_cross = 2 * p->n_up_links;
    return NULL;
}

static void set_links(rt_platform *p, const rt_topology *t)
{
    double ch = t->net.nic_bw * t->coll.eff_inter;
    int a = a_of(p), gl = p->dims[2], l0 = rt_fabric_link0(p);
    for (int i = 0; i < p->n_up_links; i++) {
        int k = i - n_local(p), r = k >= 0 ? k % gl_of(p) : 0;
        /* global: the pair's channels k' with k' mod a == r */
        int channels = k < 0 ? 1 : gl / a + (r < gl % a); /* 1 when gl < a (r < gl) */
        p->bw[l0 + i] = channels * ch;
        p->lat[l0 + i] = t->net.switch_latency;
    }
}

static int route(const rt_platform *p, int plane, int from, int to, int src, int dst, int *segs)
{
    (void)plane, (void)src, (void)dst;
    int a = a_of(p), gi = from / a, ri = from % a, gj = to / a, rj = to % a, n = 0;
    if (gi == gj) {
        segs[n++] = seg_of(p, local_link(p, gi, ri, rj), ri < rj);
        return n;
    }
    int gw = ri < gl_of(p) ? ri : ri % gl_of(p);
    if (gw != ri) segs[n++] = seg_of(p, local_link(p, gi, ri, gw), ri < gw);
    segs[n++] = seg_of(p, global_link(p, gi, gj, gw), gi < gj);
    if (gw != rj) segs[n++] = seg_of(p, local_link(p, gj, gw, rj), gw < rj);
    return n;
}

/* The two ends (leaf indices) of duplex link L, lower end first. */
static void ends(const rt_platform *p, int l, int *lo, int *hi)
{
    int a = a_of(p), G = p->dims[0];
    if (l < n_local(p)) {
        int per = a * (a - 1) / 2, g = l / per, k = l % per, r = 0;
        while (k >= a - r - 1)
            k -= a - r - 1, r++;
        *lo = g * a + r;
        *hi = g * a + r + 1 + k;
        return;
    }
    int k = l - n_local(p), r = k % gl_of(p), pair = k / gl_of(p), i = 0;
    while (pair >= G - i - 1)
        pair -= G - i - 1, i++;
    *lo = i * a + r;
    *hi = (i + 1 + pair) * a + r;
}

static int segment(const rt_platform *p, int seg, int *src, int *dst, int *links)
{
    int L = p->n_up_links, l = seg % L, lo, hi;
    rt_link_dir d = seg < L ? RT_DIR_UP : RT_DIR_DOWN;
    ends(p, l, &lo, &hi);
    *src = rt_platform_leaf(p, 0, d == RT_DIR_UP ? lo : hi);
    *dst = rt_platform_leaf(p, 0, d == RT_DIR_UP ? hi : lo);
    links[0] = directed(rt_fabric_link0(p) + l, d);
    return 1;
}

static int segment_used(const rt_platform *p, int seg)
{
    (void)p, (void)seg; /* every local and global link is on some minimal route */
    return 1;
}

static void link_name(const rt_platform *p, int link, char *buf, size_t size)
{
    int lo, hi, a = a_of(p);
    ends(p, link, &lo, &hi);
    if (link < n_local(p))
        snprintf(buf, size, "local-%d-%d-%d", lo / a, lo % a, hi % a);
    else
        snprintf(buf, size, "global-%d-%d-%d", lo / a, hi / a, lo % a);
}

static void comment(const rt_platform *p, FILE *f)
{
    fprintf(f,
            "<!-- scale_out.family dragonfly: %d groups x %d routers, %d global channels per "
            "group pair;\n     leaf-0-L is router L mod %d of group L / %d; local-G-R-S joins "
            "routers R < S of group G,\n     global-I-J-R router R of groups I < J; minimal "
            "routing local-global-local. -->\n",
            p->dims[0], p->dims[1], p->dims[2], p->dims[1], p->dims[1]);
}

static int switches(const rt_topology *t, int cross_leaf)
{
    const rt_scale_out *n = &t->net;
    return cross_leaf ? 1 + diameter(n->groups, n->group_routers, n->global_links) : 1;
}

const rt_fabric rt_fabric_dragonfly = {
    .family = RT_FAMILY_DRAGONFLY,
    .layout = layout,
    .set_links = set_links,
    .route = route,
    .segment = segment,
    .segment_used = segment_used,
    .link_name = link_name,
    .comment = comment,
    .switches = switches,
};
