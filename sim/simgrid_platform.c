#include "simgrid_platform.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statvfs.h>

/* Duplex link and segment index ranges, in the order the layout functions below use. */
static int nic_link(const rt_platform *p, int node, int k)
{
    return p->world + node * p->nics + k;
}
/* Uplink of leaf LEAF of plane PLANE to spine port S (S = 0 when balanced: one link). */
static int uplink(const rt_platform *p, int plane, int leaf, int s)
{
    return p->world + p->nodes * p->nics + (plane * p->leaves + leaf) * p->up_ports + s;
}
static int pcie_link(const rt_platform *p, int rank)
{
    return p->world + p->nodes * p->nics + p->planes * p->leaves * p->up_ports + rank;
}

static int seg_nvl(const rt_platform *p, int rank, rt_link_dir d)
{
    return d * p->world + rank;
}
static int seg_nic(const rt_platform *p, int node, int k, rt_link_dir d)
{
    return 2 * p->world + d * p->nodes * p->nics + node * p->nics + k;
}
static int seg_leaves(const rt_platform *p, int plane, int from, int to)
{
    return 2 * p->world + 2 * p->nodes * p->nics + (plane * p->leaves + from) * p->leaves + to;
}
/* ecmp: hash: leaf LEAF of plane PLANE to spine S (UP) or back (DOWN). */
static int seg_spine(const rt_platform *p, int plane, int leaf, int s, rt_link_dir d)
{
    return 2 * p->world + 2 * p->nodes * p->nics +
           ((d * p->planes + plane) * p->leaves + leaf) * p->ports + s;
}
/* Leaf-crossing segments: leaves^2 per plane (balanced), 2 x leaves x ports per plane (hash). */
static int n_cross(const rt_platform *p)
{
    return p->ecmp_hash ? 2 * p->planes * p->leaves * p->ports : p->planes * p->leaves * p->leaves;
}
static int seg_pcie_base(const rt_platform *p)
{
    return 2 * p->world + 2 * p->nodes * p->nics + n_cross(p);
}

static int plane_of(const rt_platform *p, int nic)
{
    return p->planes > 1 ? nic : 0;
}
static int leaf_of(const rt_platform *p, int node)
{
    return node / p->nodes_per_leaf;
}
/* The NIC a device uses, and the device a NIC is attached to (the first it serves). */
static int nic_of(const rt_platform *p, int local)
{
    return local * p->nics / p->devices;
}
static int nic_device(const rt_platform *p, int node, int k)
{
    return node * p->devices + (k * p->devices + p->nics - 1) / p->nics;
}

static void set_links(rt_platform *p, const rt_topology *t)
{
    double up = t->node.scale_up_bw * t->coll.eff_intra;
    double nic = t->net.nic_bw * t->coll.eff_inter;
    int ports = rt_topology_spine_ports(t);
    for (int r = 0; r < p->world; r++) {
        p->bw[r] = up * rt_faults_factor(&t->faults, RT_FAULT_NVLINK, r, 0, 0);
        p->lat[r] = t->node.scale_up_latency / 2;
        p->bw[pcie_link(p, r)] = t->node.host_bw;
        p->lat[pcie_link(p, r)] = t->node.host_latency;
    }
    /* One switch inside a leaf, 2 x levels + 1 across leaves: the NIC halves carry the leaf
     * switch, the uplinks the levels above it. */
    for (int h = 0; h < p->nodes; h++)
        for (int k = 0; k < p->nics; k++) {
            p->bw[nic_link(p, h, k)] = nic * rt_faults_factor(&t->faults, RT_FAULT_NIC, h, k, 0);
            p->lat[nic_link(p, h, k)] = (t->net.nic_latency + t->net.switch_latency) / 2;
        }
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
             * crosses it (rt_platform_path rehashes over the others). */
            double f = rt_faults_factor(&t->faults, RT_FAULT_UPLINK, pl, l, 0);
            for (int s = 0; s < ports; s++) {
                p->bw[uplink(p, pl, l, s)] = nic / t->net.oversubscription * f;
                p->lat[uplink(p, pl, l, s)] = t->net.levels * t->net.switch_latency;
            }
        }
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

uint32_t rt_platform_ecmp_hash(int src, int dst, int flow)
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

int rt_platform_ecmp_port(const rt_platform *p, int plane, int from, int to, int src, int dst)
{
    int lo = p->down[plane * p->leaves + from];
    int lo_to = p->down[plane * p->leaves + to];
    if (lo_to > lo) lo = lo_to;
    return lo + (int)(rt_platform_ecmp_hash(src, dst, 0) % (uint32_t)(p->ports - lo));
}

rt_platform *rt_platform_new(const rt_topology *t, int nodes, const char **why)
{
    if (nodes < 1 || t->node.devices < 1 || t->net.nics_per_node < 1) {
        *why = "the platform needs nodes >= 1, node.devices >= 1 and scale_out.nics_per_node >= 1";
        return NULL;
    }
    if (t->net.nics_per_node > t->node.devices) {
        *why = "the platform attaches every NIC to a device: nics_per_node must be <= node.devices";
        return NULL;
    }
    if ((long)nodes * t->node.devices > (1L << 20)) {
        *why = "more than 2^20 devices";
        return NULL;
    }
    if (!(t->net.oversubscription >= 1) || !(t->coll.eff_intra > 0) || !(t->coll.eff_inter > 0)) {
        *why = "oversubscription must be >= 1 and collective efficiencies > 0";
        return NULL;
    }
    int npl = rt_topology_nodes_per_leaf(t);
    long long leaves = (nodes + npl - 1) / npl;
    if ((t->net.rail_optimized ? t->net.nics_per_node : 1) * leaves * leaves > INT_MAX / 2) {
        *why = "more than 2^30 leaf-to-leaf route segments (leaves^2 per plane): raise "
               "scale_out.radix or lower the node count";
        return NULL;
    }
    rt_platform *p = calloc(1, sizeof *p);
    if (!p) {
        *why = "out of memory";
        return NULL;
    }
    p->nodes = nodes;
    p->devices = t->node.devices;
    p->world = nodes * p->devices;
    p->nics = t->net.nics_per_node;
    p->planes = t->net.rail_optimized ? p->nics : 1;
    p->nodes_per_leaf = npl;
    p->leaves = (nodes + p->nodes_per_leaf - 1) / p->nodes_per_leaf;
    p->ecmp_hash = t->net.ecmp == RT_ECMP_HASH;
    p->ports = rt_topology_spine_ports(t);
    p->up_ports = p->ecmp_hash ? p->ports : 1;
    if (p->ecmp_hash && (long long)p->planes * p->leaves * p->ports > INT_MAX / 8) {
        rt_platform_free(p);
        *why = "ecmp: hash needs more than 2^28 leaf-to-spine links: lower the node count";
        return NULL;
    }
    p->n_hosts =
        p->world + 2 * nodes + p->planes * p->leaves + (p->ecmp_hash ? p->planes * p->ports : 0);
    p->n_links = 2 * p->world + nodes * p->nics + p->planes * p->leaves * p->up_ports;
    p->n_segments = seg_pcie_base(p) + 2 * p->world;
    double bf16 = t->device.peak_flops[RT_DT_BF16];
    p->gpu_speed = bf16 > 0 ? bf16 : t->device.peak_flops[RT_DT_FP32];
    if (!(p->gpu_speed > 0)) p->gpu_speed = 1e12;
    p->bw = calloc((size_t)p->n_links, sizeof(double));
    p->lat = calloc((size_t)p->n_links, sizeof(double));
    p->down = calloc((size_t)p->planes * (size_t)p->leaves, sizeof(int));
    if (!p->bw || !p->lat || !p->down) {
        rt_platform_free(p);
        *why = "out of memory";
        return NULL;
    }
    if (p->ecmp_hash && set_ports_down(p, t) < 0) {
        rt_platform_free(p);
        *why = "the uplink faults of one leaf take down all its spine ports (ports_down summed "
               "over its entries); allowed: fewer than radix/2";
        return NULL;
    }
    set_links(p, t);
    return p;
}

void rt_platform_free(rt_platform *p)
{
    if (!p) return;
    free(p->bw);
    free(p->lat);
    free(p->down);
    free(p);
}

void rt_platform_host_name(const rt_platform *p, int host, char *buf, size_t size)
{
    if (host < p->world)
        snprintf(buf, size, "gpu-%d", host);
    else if (host < p->world + p->nodes)
        snprintf(buf, size, "nvs-%d", host - p->world);
    else if (host < p->world + 2 * p->nodes)
        snprintf(buf, size, "cpu-%d", host - p->world - p->nodes);
    else if (host < rt_platform_spine(p, 0, 0)) {
        int i = host - p->world - 2 * p->nodes;
        snprintf(buf, size, "leaf-%d-%d", i / p->leaves, i % p->leaves);
    } else {
        int i = host - rt_platform_spine(p, 0, 0);
        snprintf(buf, size, "spine-%d-%d", i / p->ports, i % p->ports);
    }
}

void rt_platform_link_name(const rt_platform *p, int link, char *buf, size_t size)
{
    int nic0 = p->world, up0 = nic0 + p->nodes * p->nics;
    int pcie0 = up0 + p->planes * p->leaves * p->up_ports;
    if (link < nic0)
        snprintf(buf, size, "nvlink-%d", link);
    else if (link < up0)
        snprintf(buf, size, "nic-%d-%d", (link - nic0) / p->nics, (link - nic0) % p->nics);
    else if (link < pcie0 && !p->ecmp_hash)
        snprintf(buf, size, "uplink-%d-%d", (link - up0) / p->leaves, (link - up0) % p->leaves);
    else if (link < pcie0) {
        int i = (link - up0) / p->ports;
        snprintf(buf, size, "uplink-%d-%d-%d", i / p->leaves, i % p->leaves,
                 (link - up0) % p->ports);
    } else
        snprintf(buf, size, "pcie-%d", link - pcie0);
}

static int directed(int duplex, rt_link_dir d)
{
    return 2 * duplex + (int)d;
}

int rt_platform_segment(const rt_platform *p, int seg, int *src, int *dst, int *links)
{
    int W = p->world, NK = p->nodes * p->nics;
    if (seg < 2 * W) {
        rt_link_dir d = seg < W ? RT_DIR_UP : RT_DIR_DOWN;
        int r = seg % W, nvs = rt_platform_nvs(p, r / p->devices);
        *src = d == RT_DIR_UP ? r : nvs;
        *dst = d == RT_DIR_UP ? nvs : r;
        links[0] = directed(r, d);
        return 1;
    }
    seg -= 2 * W;
    if (seg < 2 * NK) {
        rt_link_dir d = seg < NK ? RT_DIR_UP : RT_DIR_DOWN;
        int node = (seg % NK) / p->nics, k = (seg % NK) % p->nics;
        int dev = nic_device(p, node, k);
        int leaf = rt_platform_leaf(p, plane_of(p, k), leaf_of(p, node));
        *src = d == RT_DIR_UP ? dev : leaf;
        *dst = d == RT_DIR_UP ? leaf : dev;
        links[0] = directed(nic_link(p, node, k), d);
        return 1;
    }
    seg -= 2 * NK;
    if (p->ecmp_hash && seg < n_cross(p)) {
        int half = p->planes * p->leaves * p->ports;
        rt_link_dir d = seg < half ? RT_DIR_UP : RT_DIR_DOWN;
        int i = seg % half, s = i % p->ports, leaf = (i / p->ports) % p->leaves;
        int plane = i / p->ports / p->leaves;
        int lh = rt_platform_leaf(p, plane, leaf), sh = rt_platform_spine(p, plane, s);
        *src = d == RT_DIR_UP ? lh : sh;
        *dst = d == RT_DIR_UP ? sh : lh;
        links[0] = directed(uplink(p, plane, leaf, s), d);
        return 1;
    }
    int LL = p->leaves * p->leaves;
    if (!p->ecmp_hash && seg < p->planes * LL) {
        int plane = seg / LL, from = (seg % LL) / p->leaves, to = seg % p->leaves;
        *src = rt_platform_leaf(p, plane, from);
        *dst = rt_platform_leaf(p, plane, to);
        links[0] = directed(uplink(p, plane, from, 0), RT_DIR_UP);
        links[1] = directed(uplink(p, plane, to, 0), RT_DIR_DOWN);
        return 2;
    }
    seg -= n_cross(p);
    rt_link_dir d = seg < W ? RT_DIR_UP : RT_DIR_DOWN;
    int r = seg % W, cpu = rt_platform_cpu(p, r / p->devices);
    *src = d == RT_DIR_UP ? r : cpu;
    *dst = d == RT_DIR_UP ? cpu : r;
    links[0] = directed(pcie_link(p, r), d);
    return 1;
}

int rt_platform_path(const rt_platform *p, int src, int dst, int *segs)
{
    int G = p->devices, A = src / G, B = dst / G, i = src % G, j = dst % G, n = 0;
    if (src == dst) return 0;
    if (A == B) {
        segs[n++] = seg_nvl(p, src, RT_DIR_UP);
        segs[n++] = seg_nvl(p, dst, RT_DIR_DOWN);
        return n;
    }
    int k_out = nic_of(p, i), k_in = nic_of(p, j);
    if (p->planes > 1) {
        /* PXN: hop over NVLink to the local device on the destination's rail. */
        if (i != j) {
            segs[n++] = seg_nvl(p, src, RT_DIR_UP);
            segs[n++] = seg_nvl(p, A * G + j, RT_DIR_DOWN);
        }
        k_out = k_in;
    }
    segs[n++] = seg_nic(p, A, k_out, RT_DIR_UP);
    int la = leaf_of(p, A), lb = leaf_of(p, B), plane = plane_of(p, k_in);
    if (la != lb && p->ecmp_hash) {
        int s = rt_platform_ecmp_port(p, plane, la, lb, src, dst);
        segs[n++] = seg_spine(p, plane, la, s, RT_DIR_UP);
        segs[n++] = seg_spine(p, plane, lb, s, RT_DIR_DOWN);
    } else if (la != lb)
        segs[n++] = seg_leaves(p, plane, la, lb);
    segs[n++] = seg_nic(p, B, k_in, RT_DIR_DOWN);
    return n;
}

int rt_platform_pcie_segment(const rt_platform *p, int rank, int to_host)
{
    return seg_pcie_base(p) + (to_host ? 0 : p->world) + rank;
}

double rt_platform_segment_latency(const rt_platform *p, int seg)
{
    int s, d, links[2];
    int n = rt_platform_segment(p, seg, &s, &d, links);
    double lat = 0;
    for (int i = 0; i < n; i++)
        lat += p->lat[links[i] / 2];
    return lat;
}

static void write_link_ctn(const rt_platform *p, FILE *f, int directed_link)
{
    char name[64];
    rt_platform_link_name(p, directed_link / 2, name, sizeof name);
    fprintf(f, "<link_ctn id=\"%s\" direction=\"%s\"/>", name,
            directed_link % 2 == RT_DIR_UP ? "UP" : "DOWN");
}

static void write_route(const rt_platform *p, FILE *f, int src, int dst, const int *links, int n)
{
    char a[64], b[64];
    rt_platform_host_name(p, src, a, sizeof a);
    rt_platform_host_name(p, dst, b, sizeof b);
    fprintf(f, "  <route src=\"%s\" dst=\"%s\" symmetrical=\"NO\">", a, b);
    for (int i = 0; i < n; i++)
        write_link_ctn(p, f, links[i]);
    fputs("</route>\n", f);
}

static int segment_used(const rt_platform *p, int seg)
{
    int LL = p->leaves * p->leaves, base = 2 * p->world + 2 * p->nodes * p->nics;
    if (seg < base || seg >= base + n_cross(p)) return 1;
    if (p->ecmp_hash) { /* a single leaf has no crossings; no route uses a failed port */
        int i = (seg - base) % (p->planes * p->leaves * p->ports);
        return p->leaves > 1 && i % p->ports >= p->down[i / p->ports];
    }
    int i = (seg - base) % LL;
    return i / p->leaves != i % p->leaves; /* no leaf-to-itself segment */
}

static void write_pair_routes(const rt_platform *p, FILE *f)
{
    int links[2 * RT_PLATFORM_MAX_PATH], segs[RT_PLATFORM_MAX_PATH];
    for (int s = 0; s < p->world; s++)
        for (int d = 0; d < p->world; d++) {
            int n = 0, ns = rt_platform_path(p, s, d, segs), hs, hd;
            for (int i = 0; i < ns; i++)
                n += rt_platform_segment(p, segs[i], &hs, &hd, links + n);
            if (ns) write_route(p, f, s, d, links, n);
        }
}

int rt_platform_write_xml(const rt_platform *p, const rt_topology *t, int pair_routes, FILE *f)
{
    char name[64];
    fputs("<?xml version='1.0'?>\n"
          "<!DOCTYPE platform SYSTEM \"https://simgrid.org/simgrid.dtd\">\n",
          f);
    fprintf(f,
            "<!-- rectwin platform: topology '%s', %d nodes x %d devices.\n"
            "     Bandwidths are the topology's datasheet figures times its collective\n"
            "     efficiencies (intra %.3g, inter %.3g); see sim/simgrid_platform.h. -->\n",
            t->name ? t->name : "?", p->nodes, p->devices, t->coll.eff_intra, t->coll.eff_inter);
    fputs("<platform version=\"4.1\">\n<zone id=\"rectwin\" routing=\"Full\">\n", f);
    for (int h = 0; h < p->n_hosts; h++) {
        rt_platform_host_name(p, h, name, sizeof name);
        fprintf(f, "  <host id=\"%s\" speed=\"%.17gf\"/>\n", name,
                h < p->world ? p->gpu_speed : 1e9);
    }
    if (p->ecmp_hash)
        fprintf(f,
                "<!-- ecmp: hash: uplink-P-L-S joins leaf L of plane P to spine S; a flow between "
                "devices s and d of\n     leaves A and B takes spine lo + hash(s, d, 0) mod "
                "(ports - lo), lo = max failed ports of A, B. -->\n");
    for (int i = 0; i < t->faults.n; i++) {
        const rt_fault *x = &t->faults.f[i];
        if (p->ecmp_hash && x->link == RT_FAULT_UPLINK) {
            fprintf(f,
                    "<!-- fault: uplink %d %d keeps %.6g of each port's bandwidth (bandwidth "
                    "%.6g, background %.6g); its ports 0..%d are down: no route crosses them "
                    "-->\n",
                    x->a, x->b, rt_fault_factor(x, 0), x->bandwidth, x->background,
                    x->ports_down - 1);
            continue;
        }
        fprintf(f,
                "<!-- fault: %s %d %d keeps %.6g of its bandwidth (bandwidth %.6g, "
                "background %.6g) -->\n",
                rt_fault_link_names[x->link], x->a, x->b,
                rt_fault_factor(x, rt_topology_spine_ports(t)), x->bandwidth, x->background);
    }
    for (int l = 0; l < p->n_links; l++) {
        rt_platform_link_name(p, l, name, sizeof name);
        fprintf(f,
                "  <link id=\"%s\" bandwidth=\"%.17gBps\" latency=\"%.17gs\" "
                "sharing_policy=\"SPLITDUPLEX\"/>\n",
                name, p->bw[l], p->lat[l]);
    }
    int links[2];
    for (int s = 0; s < p->n_segments; s++) {
        int hs, hd, n = rt_platform_segment(p, s, &hs, &hd, links);
        if (segment_used(p, s)) write_route(p, f, hs, hd, links, n);
    }
    if (pair_routes) write_pair_routes(p, f);
    fputs("</zone>\n</platform>\n", f);
    fflush(f);
    return ferror(f) ? -1 : 0;
}

/* Writes element I of one kind of the platform XML to F (the sampler below). */
typedef void (*element_writer)(const rt_platform *p, FILE *f, long long i);

static void sample_host(const rt_platform *p, FILE *f, long long h)
{
    char name[64];
    rt_platform_host_name(p, (int)h, name, sizeof name);
    fprintf(f, "  <host id=\"%s\" speed=\"%.17gf\"/>\n", name, h < p->world ? p->gpu_speed : 1e9);
}

static void sample_link(const rt_platform *p, FILE *f, long long l)
{
    char name[64];
    rt_platform_link_name(p, (int)l, name, sizeof name);
    fprintf(f,
            "  <link id=\"%s\" bandwidth=\"%.17gBps\" latency=\"%.17gs\" "
            "sharing_policy=\"SPLITDUPLEX\"/>\n",
            name, p->bw[l], p->lat[l]);
}

static void sample_segment(const rt_platform *p, FILE *f, long long s)
{
    int links[2], hs, hd, n = rt_platform_segment(p, (int)s, &hs, &hd, links);
    if (segment_used(p, (int)s)) write_route(p, f, hs, hd, links, n);
}

static void sample_pair(const rt_platform *p, FILE *f, long long i)
{
    int links[2 * RT_PLATFORM_MAX_PATH], segs[RT_PLATFORM_MAX_PATH], hs, hd, n = 0;
    int s = (int)(i / p->world), d = (int)(i % p->world);
    int ns = rt_platform_path(p, s, d, segs);
    for (int k = 0; k < ns; k++)
        n += rt_platform_segment(p, segs[k], &hs, &hd, links + n);
    if (ns) write_route(p, f, s, d, links, n);
}

/* Bytes of N elements, from up to SAMPLES of them spread evenly (a multiplicative stride mixes
 * intra- and inter-node pairs). */
static double sampled_bytes(const rt_platform *p, FILE *f, element_writer w, long long n)
{
    enum { SAMPLES = 2048 };
    if (n <= 0) return 0;
    long long k_max = n < SAMPLES ? n : SAMPLES;
    long before = ftell(f);
    for (long long k = 0; k < k_max; k++)
        w(p, f,
          n <= SAMPLES ? k
                       : (long long)((unsigned long long)k * 2654435761u % (unsigned long long)n));
    fflush(f);
    return (double)(ftell(f) - before) * ((double)n / (double)k_max);
}

double rt_platform_xml_bytes(const rt_platform *p, int pair_routes)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (!f) return INFINITY; /* cannot tell: treat as too large rather than guess */
    double bytes = 700;      /* the prologue and epilogue */
    bytes += sampled_bytes(p, f, sample_host, p->n_hosts);
    bytes += sampled_bytes(p, f, sample_link, p->n_links);
    bytes += sampled_bytes(p, f, sample_segment, p->n_segments);
    if (pair_routes) bytes += sampled_bytes(p, f, sample_pair, (long long)p->world * p->world);
    fclose(f);
    free(buf);
    return bytes;
}

int rt_platform_check_size(const rt_platform *p, int pair_routes, const char *dir, const char *who,
                           FILE *err)
{
    double bytes = rt_platform_xml_bytes(p, pair_routes);
    const double gib = 1024.0 * 1024 * 1024;
    if (bytes > RT_PLATFORM_MAX_XML_BYTES) {
        fprintf(err,
                "%s: the SimGrid platform of %d nodes would be about %.1f GiB of XML (%d "
                "hosts, %d links, %d route segments%s); allowed: at most %.0f GiB: fewer "
                "nodes, a larger scale_out.radix (fewer leaves)%s, or the analytic engine\n",
                who, p->nodes, bytes / gib, p->n_hosts, p->n_links, p->n_segments,
                pair_routes ? " and a route per device pair" : "", RT_PLATFORM_MAX_XML_BYTES / gib,
                pair_routes ? ", segment routes only" : "");
        return -1;
    }
    struct statvfs fs;
    if (dir && statvfs(dir, &fs) == 0) {
        double free_bytes = (double)fs.f_bavail * (double)fs.f_frsize;
        if (bytes > free_bytes) {
            fprintf(err,
                    "%s: the SimGrid platform would be about %.2f GiB of XML but %s has %.2f "
                    "GiB free; allowed: free space or fewer nodes\n",
                    who, bytes / gib, dir, free_bytes / gib);
            return -1;
        }
    }
    return 0;
}
