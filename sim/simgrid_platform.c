#include "simgrid_platform.h"

#include "fabric.h"

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
static int pcie_link(const rt_platform *p, int rank)
{
    return rt_fabric_link0(p) + p->n_up_links + rank;
}

static int seg_nvl(const rt_platform *p, int rank, rt_link_dir d)
{
    return d * p->world + rank;
}
static int seg_nic(const rt_platform *p, int node, int k, rt_link_dir d)
{
    return 2 * p->world + d * p->nodes * p->nics + node * p->nics + k;
}
static int seg_pcie_base(const rt_platform *p)
{
    return rt_fabric_seg0(p) + p->n_cross;
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
    p->fabric->set_links(p, t);
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
    p->fabric = rt_fabric_of(t);
    p->down = calloc((size_t)p->planes * (size_t)p->leaves, sizeof(int));
    if (!p->down) {
        rt_platform_free(p);
        *why = "out of memory";
        return NULL;
    }
    const char *no = p->fabric->layout(p, t);
    if (no) {
        rt_platform_free(p);
        *why = no;
        return NULL;
    }
    p->n_hosts = rt_fabric_host0(p) + p->n_up_hosts;
    p->n_links = 2 * p->world + nodes * p->nics + p->n_up_links;
    p->n_segments = seg_pcie_base(p) + 2 * p->world;
    double bf16 = t->device.peak_flops[RT_DT_BF16];
    p->gpu_speed = bf16 > 0 ? bf16 : t->device.peak_flops[RT_DT_FP32];
    if (!(p->gpu_speed > 0)) p->gpu_speed = 1e12;
    p->cores = t->node.cores;
    p->cores_span = rt_topology_cores_nodes(t);
    p->bw = calloc((size_t)p->n_links, sizeof(double));
    p->lat = calloc((size_t)p->n_links, sizeof(double));
    if (!p->bw || !p->lat) {
        rt_platform_free(p);
        *why = "out of memory";
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
    else if (host < rt_fabric_host0(p)) {
        int i = host - p->world - 2 * p->nodes;
        snprintf(buf, size, "leaf-%d-%d", i / p->leaves, i % p->leaves);
    } else
        p->fabric->host_name(p, host - rt_fabric_host0(p), buf, size);
}

void rt_platform_link_name(const rt_platform *p, int link, char *buf, size_t size)
{
    int nic0 = p->world, up0 = nic0 + p->nodes * p->nics;
    int pcie0 = up0 + p->n_up_links;
    if (link < nic0)
        snprintf(buf, size, "nvlink-%d", link);
    else if (link < up0)
        snprintf(buf, size, "nic-%d-%d", (link - nic0) / p->nics, (link - nic0) % p->nics);
    else if (link < pcie0)
        p->fabric->link_name(p, link - up0, buf, size);
    else
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
    if (seg < p->n_cross) return p->fabric->segment(p, seg, src, dst, links);
    seg -= p->n_cross;
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
    int la = leaf_of(p, A), lb = leaf_of(p, B);
    if (la != lb) n += p->fabric->route(p, plane_of(p, k_in), la, lb, src, dst, segs + n);
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
    int base = rt_fabric_seg0(p);
    if (seg < base || seg >= base + p->n_cross) return 1;
    return p->fabric->segment_used(p, seg - base);
}

static void write_pair_routes(const rt_platform *p, FILE *f)
{
    int links[RT_PLATFORM_MAX_LINKS], segs[RT_PLATFORM_MAX_PATH];
    for (int s = 0; s < p->world; s++)
        for (int d = 0; d < p->world; d++) {
            int n = 0, ns = rt_platform_path(p, s, d, segs), hs, hd;
            for (int i = 0; i < ns; i++)
                n += rt_platform_segment(p, segs[i], &hs, &hd, links + n);
            if (ns) write_route(p, f, s, d, links, n);
        }
}

void rt_platform_core_name(const rt_platform *p, int node, int core, char *buf, size_t size)
{
    snprintf(buf, size, "core-%d-%d", node / p->cores_span * p->cores_span, core);
}

/* node.cores: each set of shared cores as one-core hosts, so that a rank pinned to a core
 * shares that core only (sim/simgrid_cores.c). They compute and have no routes. */
static void write_core_hosts(const rt_platform *p, FILE *f)
{
    char name[64];
    for (int n = 0; p->cores > 0 && n < p->nodes; n += p->cores_span)
        for (int k = 0; k < p->cores; k++) {
            rt_platform_core_name(p, n, k, name, sizeof name);
            fprintf(f, "  <host id=\"%s\" speed=\"1e9f\"/>\n", name);
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
    write_core_hosts(p, f);
    if (p->fabric->comment) p->fabric->comment(p, f);
    for (int i = 0; i < t->faults.n; i++) {
        const rt_fault *x = &t->faults.f[i];
        if (p->ecmp_hash && x->link == RT_FAULT_UPLINK) {
            fprintf(f,
                    "<!-- fault: uplink %d %d keeps %.6g of each port's bandwidth (bandwidth "
                    "%.6g, background %.6g)",
                    x->a, x->b, rt_fault_factor(x, 0), x->bandwidth, x->background);
            if (x->ports_down > 0)
                fprintf(f, "; its ports 0..%d are down: no route crosses them", x->ports_down - 1);
            fputs(" -->\n", f);
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
    int links[RT_PLATFORM_MAX_LINKS], segs[RT_PLATFORM_MAX_PATH], hs, hd, n = 0;
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
