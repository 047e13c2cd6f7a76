/* family fat_tree_pods (Al-Fares et al., "A Scalable, Commodity Data Center Network
 * Architecture", SIGCOMM 2008): a 3-tier fat-tree per plane. Pods of radix/2 leaves (a k-ary
 * fat-tree's k/2 edge switches per pod) share an aggregation layer, the pods of a plane meet at
 * the core. Each layer is one host, its ports aggregated as balanced ECMP spreads flows:
 *   uplink-P-L   leaf L of plane P to its pod's aggregation, radix/2 ports x NIC bandwidth /
 *                oversubscription (as fat_tree's balanced uplink, uplink faults included);
 *   podlink-P-Q  pod Q's aggregation to the core of plane P, its radix/2 leaves' uplinks summed
 *                (radix/2 x radix/2 x NIC bandwidth / oversubscription) / pod_oversubscription:
 *                the taper of the core (1: non-blocking);
 * hosts pod-P-Q (aggregation) and core-P. Latency: switch_latency per uplink and per podlink,
 * so two leaves of one pod are 3 switches apart (leaf, aggregation, leaf) and of different pods
 * 5 (leaf, aggregation, core, aggregation, leaf), as levels: 2 counts them. Routes: leaf ->
 * pod -> leaf inside a pod, leaf -> pod -> core -> pod -> leaf across pods, one segment per
 * directed link. The analytic engine charges 2 x levels + 1 = 5 switches between any two
 * leaves and sees neither the pods nor the core taper: both show only in SimGrid. */
#include "fabric.h"

#include <limits.h>

static int lpp(const rt_platform *p) /* leaves per pod */
{
    return p->dims[0];
}
static int pods(const rt_platform *p)
{
    return p->dims[1];
}
static int uplink(const rt_platform *p, int plane, int leaf)
{
    return rt_fabric_link0(p) + plane * p->leaves + leaf;
}
static int podlink(const rt_platform *p, int plane, int q)
{
    return rt_fabric_link0(p) + p->planes * p->leaves + plane * pods(p) + q;
}
static int seg_leaf(const rt_platform *p, int plane, int leaf, rt_link_dir d)
{
    return rt_fabric_seg0(p) + (d * p->planes + plane) * p->leaves + leaf;
}
static int seg_pod(const rt_platform *p, int plane, int q, rt_link_dir d)
{
    return rt_fabric_seg0(p) + 2 * p->planes * p->leaves + (d * p->planes + plane) * pods(p) + q;
}
static int directed(int duplex, rt_link_dir d)
{
    return 2 * duplex + (int)d;
}
static int pod_host(const rt_platform *p, int plane, int q)
{
    return rt_fabric_host0(p) + plane * (pods(p) + 1) + q;
}
static int core_host(const rt_platform *p, int plane)
{
    return rt_fabric_host0(p) + plane * (pods(p) + 1) + pods(p);
}

static const char *layout(rt_platform *p, const rt_topology *t)
{
    if (t->net.levels != 2)
        return "scale_out.family fat_tree_pods needs levels: 2 (aggregation and core)";
    if (t->net.ecmp == RT_ECMP_HASH)
        return "scale_out.family fat_tree_pods spreads flows as balanced ECMP; allowed: ecmp: "
               "balanced";
    p->ports = rt_topology_spine_ports(t);
    p->up_ports = 1;
    p->ecmp_hash = 0;
    p->dims[0] = p->ports; /* leaves per pod: radix/2 */
    p->dims[1] = (p->leaves + p->dims[0] - 1) / p->dims[0];
    p->n_dims = 0;
    if ((long long)p->planes * (p->leaves + pods(p)) > INT_MAX / 8)
        return "scale_out.family fat_tree_pods: more than 2^28 links";
    p->n_up_hosts = p->planes * (pods(p) + 1);
    p->n_up_links = p->planes * (p->leaves + pods(p));
    p->n_cross = 2 * p->n_up_links;
    return NULL;
}

static void set_links(rt_platform *p, const rt_topology *t)
{
    double leaf_bw = p->ports * t->net.nic_bw * t->coll.eff_inter / t->net.oversubscription;
    double taper = t->net.pod_oversubscription > 1 ? t->net.pod_oversubscription : 1;
    for (int pl = 0; pl < p->planes; pl++) {
        for (int l = 0; l < p->leaves; l++) {
            p->bw[uplink(p, pl, l)] =
                leaf_bw * rt_faults_factor(&t->faults, RT_FAULT_UPLINK, pl, l, p->ports);
            p->lat[uplink(p, pl, l)] = t->net.switch_latency;
        }
        for (int q = 0; q < pods(p); q++) {
            p->bw[podlink(p, pl, q)] = lpp(p) * leaf_bw / taper;
            p->lat[podlink(p, pl, q)] = t->net.switch_latency;
        }
    }
}

static int route(const rt_platform *p, int plane, int from, int to, int src, int dst, int *segs)
{
    (void)src, (void)dst;
    int n = 0, qa = from / lpp(p), qb = to / lpp(p);
    segs[n++] = seg_leaf(p, plane, from, RT_DIR_UP);
    if (qa != qb) {
        segs[n++] = seg_pod(p, plane, qa, RT_DIR_UP);
        segs[n++] = seg_pod(p, plane, qb, RT_DIR_DOWN);
    }
    segs[n++] = seg_leaf(p, plane, to, RT_DIR_DOWN);
    return n;
}

static int segment(const rt_platform *p, int seg, int *src, int *dst, int *links)
{
    int PL = p->planes * p->leaves;
    if (seg < 2 * PL) {
        rt_link_dir d = seg < PL ? RT_DIR_UP : RT_DIR_DOWN;
        int i = seg % PL, plane = i / p->leaves, leaf = i % p->leaves;
        int lh = rt_platform_leaf(p, plane, leaf), ph = pod_host(p, plane, leaf / lpp(p));
        *src = d == RT_DIR_UP ? lh : ph;
        *dst = d == RT_DIR_UP ? ph : lh;
        links[0] = directed(uplink(p, plane, leaf), d);
        return 1;
    }
    seg -= 2 * PL;
    int PQ = p->planes * pods(p);
    rt_link_dir d = seg < PQ ? RT_DIR_UP : RT_DIR_DOWN;
    int i = seg % PQ, plane = i / pods(p), q = i % pods(p);
    int ph = pod_host(p, plane, q), ch = core_host(p, plane);
    *src = d == RT_DIR_UP ? ph : ch;
    *dst = d == RT_DIR_UP ? ch : ph;
    links[0] = directed(podlink(p, plane, q), d);
    return 1;
}

static int segment_used(const rt_platform *p, int seg)
{
    /* no crossing with a single leaf; no core crossing with a single pod */
    return seg < 2 * p->planes * p->leaves ? p->leaves > 1 : pods(p) > 1;
}

static void host_name(const rt_platform *p, int host, char *buf, size_t size)
{
    int plane = host / (pods(p) + 1), q = host % (pods(p) + 1);
    if (q < pods(p))
        snprintf(buf, size, "pod-%d-%d", plane, q);
    else
        snprintf(buf, size, "core-%d", plane);
}

static void link_name(const rt_platform *p, int link, char *buf, size_t size)
{
    int PL = p->planes * p->leaves;
    if (link < PL)
        snprintf(buf, size, "uplink-%d-%d", link / p->leaves, link % p->leaves);
    else
        snprintf(buf, size, "podlink-%d-%d", (link - PL) / pods(p), (link - PL) % pods(p));
}

static void comment(const rt_platform *p, FILE *f)
{
    fprintf(f,
            "<!-- scale_out.family fat_tree_pods: pods of %d leaves; uplink-P-L joins leaf L to "
            "pod-P-(L / %d),\n     podlink-P-Q pod Q to core-P; routes leaf-pod-leaf inside a "
            "pod, leaf-pod-core-pod-leaf across. -->\n",
            lpp(p), lpp(p));
}

static int switches(const rt_topology *t, int cross_leaf)
{
    return cross_leaf ? 2 * t->net.levels + 1 : 1;
}

const rt_fabric rt_fabric_fat_tree_pods = {
    .family = RT_FAMILY_FAT_TREE_PODS,
    .layout = layout,
    .set_links = set_links,
    .route = route,
    .segment = segment,
    .segment_used = segment_used,
    .host_name = host_name,
    .link_name = link_name,
    .comment = comment,
    .switches = switches,
};
