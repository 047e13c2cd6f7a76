/* rectwin platform: the SimGrid platform the simgrid engine would simulate, as XML, for
 * inspection or for other SimGrid tools. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "atomic_file.h"
#include "cfg.h"
#include "cli_args.h"
#include "commands.h"
#include "simgrid_platform.h"

enum { RT_EXIT_USAGE = 2, RT_PAIR_ROUTES_AUTO_MAX = 256 };

static void usage(FILE *f)
{
    fputs("usage: rectwin platform TOPOLOGY --nodes H -o FILE.xml [--pair-routes auto|yes|no]\n"
          "Writes the SimGrid platform (XML, DTD 4.1) generated from the topology file for H\n"
          "nodes: hosts gpu-R, nvs-H, cpu-H, leaf-P-L (spine-P-S under scale_out.ecmp: hash;\n"
          "core-H-K, which only compute, under node.cores);\n"
          "SPLITDUPLEX links nvlink-R, nic-H-K, uplink-P-L (uplink-P-L-S per spine port under\n"
          "ecmp: hash; none under scale_out.family: rail_only; torus-N-K from node N's\n"
          "router, its leaf, to its + neighbour in dimension K under family: torus;\n"
          "local-G-R-S and global-I-J-R between routers under family: dragonfly), pcie-R (see\n"
          "sim/simgrid_platform.h, sim/fabric.h). Routes: every link segment, plus\n"
          "every device pair with --pair-routes yes (auto: up to 256 devices). A platform\n"
          "over 1 GiB of XML, or larger than the free space, is refused before writing.\n"
          "The topology's faults: list (topologies/README.md) is written: faulted links at\n"
          "their reduced bandwidth, one comment per fault.\n"
          "\nexample: rectwin platform topologies/dgx-h100.yaml --nodes 4 -o dgx4.xml\n",
          f);
}

typedef struct platform_args {
    const char *topology, *out;
    long nodes;
    int pair_routes; /* -1 auto */
} platform_args;

static int parse_args(platform_args *a, int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        const char *o = argv[i];
        if (!strcmp(o, "--help") || !strcmp(o, "-h")) return 1;
        if (o[0] != '-') {
            if (a->topology) break;
            a->topology = o;
            continue;
        }
        if (i + 1 >= argc) {
            fprintf(stderr, "rectwin platform: %s needs a value\n", o);
            return -1;
        }
        const char *v = argv[++i];
        char *end;
        if (!strcmp(o, "--nodes")) {
            errno = 0;
            a->nodes = strtol(v, &end, 10);
            if (errno || *end || end == v || a->nodes < 1 || a->nodes > (1L << 20)) {
                fprintf(stderr, "rectwin platform: --nodes '%s': expected an integer >= 1\n", v);
                return -1;
            }
        } else if (!strcmp(o, "-o") || !strcmp(o, "--out")) {
            a->out = v;
        } else if (!strcmp(o, "--pair-routes")) {
            a->pair_routes = !strcmp(v, "yes")    ? 1
                             : !strcmp(v, "no")   ? 0
                             : !strcmp(v, "auto") ? -1
                                                  : -2;
            if (a->pair_routes == -2) {
                fprintf(stderr, "rectwin platform: --pair-routes '%s': allowed: auto, yes, no\n",
                        v);
                return -1;
            }
        } else {
            static const char *const options[] = {"--nodes",       "-o",     "--out",
                                                  "--pair-routes", "--help", NULL};
            rt_cli_unknown("rectwin platform", "option", o, options);
            return -1;
        }
    }
    const char *missing = !a->topology ? "TOPOLOGY" : !a->nodes ? "--nodes" : !a->out ? "-o" : NULL;
    if (missing) {
        fprintf(stderr, "rectwin platform: %s is required (see --help)\n", missing);
        return -1;
    }
    return 0;
}

static int write_platform(const platform_args *a, const rt_topology *t)
{
    const char *why = NULL;
    rt_platform *p = rt_platform_new(t, (int)a->nodes, &why);
    if (!p) {
        fprintf(stderr, "rectwin platform: %s\n", why);
        return 1;
    }
    int pairs = a->pair_routes >= 0 ? a->pair_routes : p->world <= RT_PAIR_ROUTES_AUTO_MAX;
    char dir[4096];
    snprintf(dir, sizeof dir, "%s", a->out);
    char *slash = strrchr(dir, '/');
    if (slash)
        slash[slash == dir] = '\0';
    else
        snprintf(dir, sizeof dir, ".");
    rt_atomic_file f = {0};
    int rc = 1;
    if (rt_platform_check_size(p, pairs, dir, "rectwin platform", stderr) < 0) {
        /* refused before writing anything */
    } else if (rt_atomic_open(&f, a->out) < 0) {
        fprintf(stderr, "rectwin platform: cannot write '%s': %s\n", a->out, strerror(errno));
    } else if (rt_platform_write_xml(p, t, pairs, f.f) < 0 || rt_atomic_commit(&f) < 0) {
        fprintf(stderr, "rectwin platform: cannot write '%s' (disk full?)\n", a->out);
    } else {
        printf("%s: %d hosts, %d SPLITDUPLEX links, %s routes\n", a->out, p->n_hosts, p->n_links,
               pairs ? "segment and device-pair" : "segment");
        rc = 0;
    }
    if (rc && f.f) rt_atomic_abort(&f);
    rt_platform_free(p);
    return rc;
}

int rt_cmd_platform(int argc, char **argv)
{
    platform_args a = {.pair_routes = -1};
    int p = parse_args(&a, argc, argv);
    if (p != 0) {
        usage(p > 0 ? stdout : stderr);
        return p > 0 ? 0 : RT_EXIT_USAGE;
    }
    rt_cfg *cfg = rt_cfg_load(a.topology, stderr);
    if (!cfg) return 1;
    rt_topology t;
    memset(&t, 0, sizeof t);
    int rc = rt_topology_parse(cfg, rt_cfg_root(cfg), &t, 0) < 0 ? 1 : 0;
    t.nodes = (int)a.nodes;
    if (rc == 0) rc = rt_topology_check_faults(&t) < 0 ? 1 : write_platform(&a, &t);
    rt_topology_free(&t);
    rt_cfg_free(cfg);
    return rc;
}
