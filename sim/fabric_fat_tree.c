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
 *                   out of every route. */
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

static const char *layout(rt_platform *p, const rt_topology *t)
{
    p->ecmp_hash = t->net.ecmp == RT_ECMP_HASH;
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
    for (int pl = 0; pl < p->planes; pl++)
        for (int l = 0; l < p->leaves; l++) {
            if (!p->ecmp_hash) {
                p->bw[uplink(p, pl, l, 0)] =
                    ports * nic / t->net.oversubscription *
                    rt_faults_factor(&t->faults, RT_FAULT_UPLINK, pl, l, ports);
                p->lat[uplink(p, pl, l, 0)] = t->net.levels * t->net.switch_latency;
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
    int i = seg % (p->leaves * p->leaves);
    return i / p->leaves != i % p->leaves; /* no leaf-to-itself segment */
}

static void host_name(const rt_platform *p, int host, char *buf, size_t size)
{
    snprintf(buf, size, "spine-%d-%d", host / p->ports, host % p->ports);
}

static void link_name(const rt_platform *p, int link, char *buf, size_t size)
{
    if (!p->ecmp_hash) {
        snprintf(buf, size, "uplink-%d-%d", link / p->leaves, link % p->leaves);
        return;
    }
    int i = link / p->ports;
    snprintf(buf, size, "uplink-%d-%d-%d", i / p->leaves, i % p->leaves, link % p->ports);
}

static void comment(const rt_platform *p, FILE *f)
{
    if (!p->ecmp_hash) return;
    fprintf(f, "<!-- ecmp: hash: uplink-P-L-S joins leaf L of plane P to spine S; a flow between "
               "devices s and d of\n     leaves A and B takes spine lo + hash(s, d, 0) mod "
               "(ports - lo), lo = max failed ports of A, B. -->\n");
}

static int switches(const rt_topology *t, int cross_leaf)
{
    return cross_leaf ? 2 * t->net.levels + 1 : 1;
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
