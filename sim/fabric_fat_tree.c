/* family fat_tree (the default): leaves of radix/2 ports down and radix/2 ports up to the
 * spines of their plane, `levels` switch levels above the leaf (latency: 2 x levels + 1
 * switches between leaves, 1 under one leaf).
 *   ecmp: balanced  uplink-P-L, the leaf's spine ports as one link of (radix/2 x NIC
 *                   bandwidth) / oversubscription; a leaf pair is one segment over the source
 *                   leaf's uplink UP and the destination's DOWN; a failed port shrinks it.
 *   ecmp: hash      uplink-P-L-S per uplink port, radix/2 / oversubscription of them at NIC
 *                   bandwidth each (oversubscription as fewer ports, as a leaf is cabled: the
 *                   same sum as balanced), spine hosts spine-P-S; a flow crosses leaf -> spine S ->
 * leaf with S its hash (rt_fabric_ecmp_port); failed ports (the leaf's first ports_down) are left
 *                   out of every route.
 * Three tiers (scale_out.pod_leaves >= 1, balanced only): leaves are grouped into pods of
 * pod_leaves consecutive leaves of a plane; a pod's spines (as many as a leaf's uplink ports,
 * radix/2 / oversubscription, each with pod_leaves ports down, one per leaf, and as many up)
 * join the plane's core layer. A pod's ports to the core are therefore its leaves' uplink
 * ports, pod_leaves x radix/2 / oversubscription, and core_oversubscription removes a share of
 * them: pod-uplink-P-Q carries pod_leaves x radix/2 x NIC bandwidth / (oversubscription x
 * core_oversubscription). The core layer is one host core-P, non-blocking (the aggregated
 * ECMP of balanced). Latency: the leaf uplink carries the pod spine (1 switch each way), the
 * pod uplink the core: a leaf pair of one pod crosses leaf, spine, leaf (3 switches), a pair
 * of two pods leaf, spine, core, spine, leaf (5); levels must be 2 (core/topology.c). A pod's
 * uplink is cabled for pod_leaves leaves even when the plane's last pod has fewer. */
#include <limits.h>
#include <math.h>

#include "fabric.h"

static int uplink(const rt_platform *p, int plane, int leaf, int s)
{
    return rt_fabric_link0(p) + (plane * p->leaves + leaf) * p->up_ports + s;
}
static int seg_leaves(const rt_platform *p, int plane, int from, int to)
{
    return rt_fabric_seg0(p) + (plane * p->leaves + from) * p->leaves + to;
}
static int seg_spine(const rt_platform *p, int plane, int leaf, int s, rt_link_dir d)
{
    return rt_fabric_seg0(p) + ((d * p->planes + plane) * p->leaves + leaf) * p->ports + s;
}
static int directed(int duplex, rt_link_dir d)
{
    return 2 * duplex + (int)d;
}

/* ecmp: hash: the failed ports of every leaf (the sum of its uplink entries' ports_down),
 * into p->down; -1 when a leaf would lose all of them. */
static int set_ports_down(rt_platform *p, const rt_topology *t)
{
    for (int i = 0; i < t->faults.n; i++) {
        const rt_fault *x = &t->faults.f[i];
        if (x->link != RT_FAULT_UPLINK || x->a >= p->planes || x->b >= p->leaves) continue;
        int *d = &p->down[x->a * p->leaves + x->b];
        *d += x->ports_down;
        if (*d >= p->ports) return -1;
    }
    return 0;
}

/* Three tiers: the pod uplink of POD of PLANE (after every leaf uplink), the segments from a
 * leaf up to the core and from the core down to a leaf (after the leaf pairs), the core host. */
static int pod_uplink(const rt_platform *p, int plane, int pod)
{
    return rt_fabric_link0(p) + p->planes * p->leaves + plane * p->pods + pod;
}
static int seg_core(const rt_platform *p, int plane, int leaf, rt_link_dir d)
{
    return rt_fabric_seg0(p) + p->planes * p->leaves * p->leaves +
           (d * p->planes + plane) * p->leaves + leaf;
}

static const char *layout_pods(rt_platform *p, const rt_topology *t)
{
    if (p->ecmp_hash)
        return "pods route over aggregated spine and core links: ecmp: hash is not modeled "
               "with scale_out.pod_leaves; allowed: ecmp: balanced";
    if (t->net.pod_leaves > p->ports)
        return "pod_leaves exceeds radix/2 (a pod spine has one port down per leaf of its pod)";
    if (!(t->net.core_oversubscription >= 1)) return "core_oversubscription must be >= 1";
    p->pod_leaves = t->net.pod_leaves;
    p->pods = (p->leaves + p->pod_leaves - 1) / p->pod_leaves;
    p->up_ports = 1;
    if ((long long)p->planes * p->leaves * (p->leaves + 2) > INT_MAX / 2)
        return "more than 2^30 leaf-to-leaf route segments (leaves^2 per plane): raise "
               "scale_out.radix or lower the node count";
    p->n_up_hosts = p->planes; /* core-P */
    p->n_up_links = p->planes * (p->leaves + p->pods);
    p->n_cross = p->planes * p->leaves * (p->leaves + 2);
    return NULL;
}

static const char *layout(rt_platform *p, const rt_topology *t)
{
    p->ecmp_hash = t->net.ecmp == RT_ECMP_HASH;
    p->pods = 1;
    if (t->net.pod_leaves > 0) {
        p->ports = rt_topology_spine_ports(t);
        return layout_pods(p, t);
    }
    p->ports = rt_topology_spine_ports(t);
    if (p->ecmp_hash) {
        /* Oversubscription as fewer uplink ports at full speed, as a leaf is cabled: a
         * single flow still reaches its NIC's rate across the spine. */
        double up = p->ports / t->net.oversubscription;
        if (fabs(up - round(up)) > 1e-9 || round(up) < 1)
            return "ecmp: hash cables radix/2 / oversubscription uplink ports per leaf: it "
                   "must be a whole number >= 1; allowed: an oversubscription dividing radix/2";
        p->ports = (int)round(up);
    }
    p->up_ports = p->ecmp_hash ? p->ports : 1;
    if (!p->ecmp_hash && (long long)p->planes * p->leaves * p->leaves > INT_MAX / 2)
        return "more than 2^30 leaf-to-leaf route segments (leaves^2 per plane): raise "
               "scale_out.radix or lower the node count";
    if (p->ecmp_hash && (long long)p->planes * p->leaves * p->ports > INT_MAX / 8)
        return "ecmp: hash needs more than 2^28 leaf-to-spine links: lower the node count";
    if (p->ecmp_hash && set_ports_down(p, t) < 0)
        return "the uplink faults of one leaf take down all its spine ports (ports_down summed "
               "over its entries); allowed: fewer than its radix/2 / oversubscription uplink ports";
    p->n_up_hosts = p->ecmp_hash ? p->planes * p->ports : 0;
    p->n_up_links = p->planes * p->leaves * p->up_ports;
    p->n_cross =
        p->ecmp_hash ? 2 * p->planes * p->leaves * p->ports : p->planes * p->leaves * p->leaves;
    return NULL;
}

static void set_links(rt_platform *p, const rt_topology *t)
{
    double nic = t->net.nic_bw * t->coll.eff_inter;
    int ports = p->ports;
    /* With pods, each tier carries its own switch: the leaf uplink the pod's spine, the pod
     * uplink the core (levels is 2). */
    double up_lat = (p->pod_leaves > 0 ? 1 : t->net.levels) * t->net.switch_latency;
    for (int pl = 0; pl < p->planes; pl++)
        for (int q = 0; q < (p->pod_leaves > 0 ? p->pods : 0); q++) {
            p->bw[pod_uplink(p, pl, q)] = p->pod_leaves * ports * nic /
                                          (t->net.oversubscription * t->net.core_oversubscription);
            p->lat[pod_uplink(p, pl, q)] = t->net.switch_latency;
        }
    for (int pl = 0; pl < p->planes; pl++)
        for (int l = 0; l < p->leaves; l++) {
            if (!p->ecmp_hash) {
                p->bw[uplink(p, pl, l, 0)] =
                    ports * nic / t->net.oversubscription *
                    rt_faults_factor(&t->faults, RT_FAULT_UPLINK, pl, l, ports);
                p->lat[uplink(p, pl, l, 0)] = up_lat;
                continue;
            }
            /* One link per spine port; a failed port stays in the table but no route
             * crosses it (route rehashes over the others). */
            double f = rt_faults_factor(&t->faults, RT_FAULT_UPLINK, pl, l, 0);
            for (int s = 0; s < ports; s++) {
                p->bw[uplink(p, pl, l, s)] = nic * f;
                p->lat[uplink(p, pl, l, s)] = t->net.levels * t->net.switch_latency;
            }
        }
}

uint32_t rt_fabric_ecmp_hash(int src, int dst, int flow)
{
    /* FNV-1a (32 bit: offset basis 2166136261, prime 16777619) over the 12 bytes of the
     * three values, least significant byte first, then MurmurHash3's 32-bit finalizer
     * (fmix32): FNV-1a's low bit is the parity of the input bytes' low bits, so taken mod a
     * power of two (the usual port count) it alone would not spread flows. */
    uint32_t v[3] = {(uint32_t)src, (uint32_t)dst, (uint32_t)flow}, h = 2166136261u;
    for (int i = 0; i < 3; i++)
        for (int b = 0; b < 4; b++) {
            h ^= (v[i] >> (8 * b)) & 0xffu;
            h *= 16777619u;
        }
    h ^= h >> 16;
    h *= 0x85ebca6bu;
    h ^= h >> 13;
    h *= 0xc2b2ae35u;
    h ^= h >> 16;
    return h;
}

int rt_fabric_ecmp_port(const rt_platform *p, int plane, int from, int to, int src, int dst)
{
    int lo = p->down[plane * p->leaves + from];
    int lo_to = p->down[plane * p->leaves + to];
    if (lo_to > lo) lo = lo_to;
    return lo + (int)(rt_fabric_ecmp_hash(src, dst, 0) % (uint32_t)(p->ports - lo));
}

static int route(const rt_platform *p, int plane, int from, int to, int src, int dst, int *segs)
{
    if (p->pod_leaves > 0 && from / p->pod_leaves != to / p->pod_leaves) {
        segs[0] = seg_core(p, plane, from, RT_DIR_UP);
        segs[1] = seg_core(p, plane, to, RT_DIR_DOWN);
        return 2;
    }
    if (!p->ecmp_hash) {
        segs[0] = seg_leaves(p, plane, from, to);
        return 1;
    }
    int s = rt_fabric_ecmp_port(p, plane, from, to, src, dst);
    segs[0] = seg_spine(p, plane, from, s, RT_DIR_UP);
    segs[1] = seg_spine(p, plane, to, s, RT_DIR_DOWN);
    return 2;
}

static int segment(const rt_platform *p, int seg, int *src, int *dst, int *links)
{
    if (p->ecmp_hash) {
        int half = p->planes * p->leaves * p->ports;
        rt_link_dir d = seg < half ? RT_DIR_UP : RT_DIR_DOWN;
        int i = seg % half, s = i % p->ports, leaf = (i / p->ports) % p->leaves;
        int plane = i / p->ports / p->leaves;
        int lh = rt_platform_leaf(p, plane, leaf), sh = rt_fabric_spine(p, plane, s);
        *src = d == RT_DIR_UP ? lh : sh;
        *dst = d == RT_DIR_UP ? sh : lh;
        links[0] = directed(uplink(p, plane, leaf, s), d);
        return 1;
    }
    int LL = p->leaves * p->leaves;
    if (seg >= p->planes * LL) { /* pods: leaf <-> core */
        int i = seg - p->planes * LL, half = p->planes * p->leaves;
        rt_link_dir d = i < half ? RT_DIR_UP : RT_DIR_DOWN;
        int plane = (i % half) / p->leaves, leaf = i % p->leaves;
        int lh = rt_platform_leaf(p, plane, leaf), core = rt_fabric_host0(p) + plane;
        int up = directed(uplink(p, plane, leaf, 0), d);
        int pod = directed(pod_uplink(p, plane, leaf / p->pod_leaves), d);
        *src = d == RT_DIR_UP ? lh : core;
        *dst = d == RT_DIR_UP ? core : lh;
        links[0] = d == RT_DIR_UP ? up : pod;
        links[1] = d == RT_DIR_UP ? pod : up;
        return 2;
    }
    int plane = seg / LL, from = (seg % LL) / p->leaves, to = seg % p->leaves;
    *src = rt_platform_leaf(p, plane, from);
    *dst = rt_platform_leaf(p, plane, to);
    links[0] = directed(uplink(p, plane, from, 0), RT_DIR_UP);
    links[1] = directed(uplink(p, plane, to, 0), RT_DIR_DOWN);
    return 2;
}

static int segment_used(const rt_platform *p, int seg)
{
    if (p->ecmp_hash) { /* a single leaf has no crossings; no route uses a failed port */
        int i = seg % (p->planes * p->leaves * p->ports);
        return p->leaves > 1 && i % p->ports >= p->down[i / p->ports];
    }
    int LL = p->leaves * p->leaves;
    if (seg >= p->planes * LL) return p->pods > 1; /* pods: leaf <-> core */
    int i = seg % LL, from = i / p->leaves, to = i % p->leaves;
    if (from == to) return 0; /* no leaf-to-itself segment */
    return p->pod_leaves == 0 || from / p->pod_leaves == to / p->pod_leaves;
}

static void host_name(const rt_platform *p, int host, char *buf, size_t size)
{
    if (p->pod_leaves > 0) {
        snprintf(buf, size, "core-%d", host);
        return;
    }
    snprintf(buf, size, "spine-%d-%d", host / p->ports, host % p->ports);
}

static void link_name(const rt_platform *p, int link, char *buf, size_t size)
{
    if (p->pod_leaves > 0 && link >= p->planes * p->leaves) {
        int i = link - p->planes * p->leaves;
        snprintf(buf, size, "pod-uplink-%d-%d", i / p->pods, i % p->pods);
        return;
    }
    if (!p->ecmp_hash) {
        snprintf(buf, size, "uplink-%d-%d", link / p->leaves, link % p->leaves);
        return;
    }
    int i = link / p->ports;
    snprintf(buf, size, "uplink-%d-%d-%d", i / p->leaves, i % p->leaves, link % p->ports);
}

static void comment(const rt_platform *p, FILE *f)
{
    if (p->pod_leaves > 0)
        fprintf(f,
                "<!-- three-tier fat_tree: pods of %d leaves (%d per plane); pod-uplink-P-Q "
                "joins pod Q of plane P to its\n     core core-P; leaves of one pod meet over "
                "their uplinks (3 switches), of two pods over core-P (5). -->\n",
                p->pod_leaves, p->pods);
    if (!p->ecmp_hash) return;
    fprintf(f, "<!-- ecmp: hash: uplink-P-L-S joins leaf L of plane P to spine S; a flow between "
               "devices s and d of\n     leaves A and B takes spine lo + hash(s, d, 0) mod "
               "(ports - lo), lo = max failed ports of A, B. -->\n");
}

/* CROSS_LEAF 2: between pods (pod_leaves >= 1, where levels is 2). */
static int switches(const rt_topology *t, int cross_leaf)
{
    if (!cross_leaf) return 1;
    if (t->net.pod_leaves > 0) return cross_leaf > 1 ? 5 : 3;
    return 2 * t->net.levels + 1;
}

const rt_fabric rt_fabric_fat_tree = {
    .family = RT_FAMILY_FAT_TREE,
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
