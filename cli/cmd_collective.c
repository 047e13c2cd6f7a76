/* rectwin collective: the predicted time of one collective, reported like nccl-tests. It
 * builds a one-op graph and runs it through an engine, so every engine answers it alike. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cfg.h"
#include "cli_args.h"
#include "collective_model.h"
#include "commands.h"
#include "engines.h"
#include "json.h"
#include "units.h"

enum { RT_EXIT_USAGE = 2, RT_MAX_WORLD = 1 << 20 };

typedef struct coll_args {
    const char *topology;
    long nodes;
    long gpus; /* 0: the topology's node.devices */
    int op;    /* index into op_names */
    double bytes;
    const char *engine;
    rt_coll_algo algo;
    int json;
} coll_args;

static const char *const op_names[] = {"alltoall", "allreduce", "allgather", "reduce_scatter",
                                       NULL};
static const rt_coll_kind op_kinds[] = {RT_COLL_ALLTOALLV, RT_COLL_ALLREDUCE, RT_COLL_ALLGATHER,
                                        RT_COLL_REDUCE_SCATTER};

static void usage(FILE *f)
{
    fputs("usage: rectwin collective --topology FILE --nodes H [--gpus-per-node G]\n"
          "         --op alltoall|allreduce|allgather|reduce_scatter --bytes SIZE\n"
          "         [--engine simgrid|analytic] [--algo auto|ring|tree|hierarchical|nvls|direct]\n"
          "         [--json] [--help]\n"
          "Predicts one collective over all H x G ranks. SIZE is the nccl-tests size: plain\n"
          "bytes or a unit (64MiB, 1GB); for alltoall the per-rank send buffer, split evenly\n"
          "over the ranks. The default engine is the first listed (as for `rectwin sim`).\n"
          "\nexample: AlltoAll of 64 MiB per rank over 4 DGX H100 nodes (32 GPUs)\n"
          "  rectwin collective --topology topologies/dgx-h100.yaml --nodes 4 --op alltoall \\\n"
          "      --bytes 64MiB --engine analytic\n",
          f);
}

static int index_of(const char *const *names, const char *s)
{
    for (int i = 0; names[i]; i++)
        if (strcmp(names[i], s) == 0) return i;
    return -1;
}

static int parse_count(const char *opt, const char *v, long max, long *out)
{
    char *end;
    errno = 0;
    long x = strtol(v, &end, 10);
    if (errno || end == v || *end || x < 1 || x > max) {
        fprintf(stderr, "rectwin collective: %s '%s': expected an integer in [1, %ld]\n", opt, v,
                max);
        return -1;
    }
    *out = x;
    return 0;
}

/* One option with its value. Returns 0, or -1 after printing what was wrong. */
static int parse_option(coll_args *a, const char *opt, const char *v)
{
    const char *msg = NULL;
    int i;
    if (strcmp(opt, "--topology") == 0) {
        a->topology = v;
    } else if (strcmp(opt, "--nodes") == 0) {
        return parse_count(opt, v, RT_MAX_WORLD, &a->nodes);
    } else if (strcmp(opt, "--gpus-per-node") == 0) {
        return parse_count(opt, v, 4096, &a->gpus);
    } else if (strcmp(opt, "--op") == 0) {
        if ((a->op = index_of(op_names, v)) < 0) {
            fprintf(stderr,
                    "rectwin collective: --op '%s': allowed: alltoall, allreduce, "
                    "allgather, reduce_scatter\n",
                    v);
            return -1;
        }
    } else if (strcmp(opt, "--bytes") == 0) {
        if (rt_units_parse_size(v, &a->bytes, &msg) < 0) {
            fprintf(stderr, "rectwin collective: --bytes '%s': %s\n", v, msg ? msg : "bad size");
            return -1;
        }
    } else if (strcmp(opt, "--engine") == 0) {
        a->engine = v;
    } else if (strcmp(opt, "--algo") == 0) {
        if ((i = index_of(rt_coll_algo_names, v)) < 0) {
            fprintf(stderr,
                    "rectwin collective: --algo '%s': allowed: auto, ring, tree, "
                    "hierarchical, nvls, direct\n",
                    v);
            return -1;
        }
        a->algo = (rt_coll_algo)i;
    } else {
        static const char *const options[] = {"--topology", "--nodes",  "--gpus-per-node", "--op",
                                              "--bytes",    "--engine", "--algo",          "--json",
                                              "--help",     NULL};
        rt_cli_unknown("rectwin collective", "option", opt, options);
        return -1;
    }
    return 0;
}

/* Returns 0 to run, 1 for --help, -1 on a usage error. Accepts "--opt V" and "--opt=V". */
static int parse_args(coll_args *a, int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i];
        if (strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0) return 1;
        if (strcmp(arg, "--json") == 0) {
            a->json = 1;
            continue;
        }
        char opt[64];
        const char *eq = strchr(arg, '=');
        const char *v;
        if (eq && (size_t)(eq - arg) < sizeof opt) {
            snprintf(opt, sizeof opt, "%.*s", (int)(eq - arg), arg);
            v = eq + 1;
        } else {
            snprintf(opt, sizeof opt, "%s", arg);
            v = strncmp(arg, "--", 2) == 0 && i + 1 < argc ? argv[++i] : NULL;
        }
        if (!v || strncmp(opt, "--", 2) != 0) {
            fprintf(stderr, "rectwin collective: %s '%s' (see --help)\n",
                    strncmp(opt, "--", 2) ? "unexpected argument" : "missing value for", opt);
            return -1;
        }
        if (parse_option(a, opt, v) < 0) return -1;
    }
    const char *missing = !a->topology   ? "--topology"
                          : !a->nodes    ? "--nodes"
                          : a->op < 0    ? "--op"
                          : a->bytes < 0 ? "--bytes"
                                         : NULL;
    if (missing) {
        fprintf(stderr, "rectwin collective: %s is required (see --help)\n", missing);
        return -1;
    }
    return 0;
}

/* A one-op graph: the collective over the whole world. Ranks 0 and world-1 represent it:
 * they sit under the first and the last leaf, which differ when the last leaf is partly
 * filled (more of its traffic crosses leaves); the engine gives the call the slower one's
 * duration, as the whole group waits for it. */
static rt_graph *one_op_graph(const coll_args *a, int world)
{
    int reps[2] = {0, world - 1};
    int n_reps = world > 1 ? 2 : 1;
    double weight[2] = {world / (double)n_reps, world / (double)n_reps};
    rt_graph *g = rt_graph_new(world, n_reps, reps, weight);
    if (!g) return NULL;
    rt_coll_kind kind = op_kinds[a->op];
    rt_group all = {world, 1};
    int op = rt_graph_add_collective(g, "collective", RT_STREAM_COMM, kind, a->algo, all,
                                     op_names[a->op], NULL, 0);
    for (int rep = 0; rep < n_reps; rep++) {
        rt_op_cost *c = rt_graph_cost(g, op, rep);
        c->bytes = a->bytes;
        if (kind != RT_COLL_ALLTOALLV) continue;
        uint64_t per_peer = (uint64_t)(a->bytes / world);
        c->send = rt_graph_peer_bytes(g, world);
        c->recv = rt_graph_peer_bytes(g, world);
        for (int k = 0; k < world; k++)
            c->send[k] = c->recv[k] = per_peer;
        c->bytes = c->recv_bytes = (double)per_peer * world;
    }
    return g;
}

static void report(const coll_args *a, const rt_result *r, int world, FILE *out)
{
    double t = r->end[0] - r->start[0];
    double algbw = t > 0 ? a->bytes / t / 1e9 : 0;
    double busbw = algbw * rt_coll_busbw_factor(op_kinds[a->op], r->algo[0], world);
    const char *algo = rt_coll_algo_names[r->algo[0]];
    if (!a->json) {
        fprintf(out, "%s of %.0f bytes over %d ranks (%s, engine %s)\n", op_names[a->op], a->bytes,
                world, algo, r->engine);
        fprintf(out, "  time_s      %.6e\n  algbw_GBps  %.3f\n  busbw_GBps  %.3f\n", t, algbw,
                busbw);
        return;
    }
    rt_json j;
    rt_json_init(&j, out, 1);
    rt_json_begin_object(&j, NULL);
    rt_json_string(&j, "op", op_names[a->op]);
    rt_json_number(&j, "bytes", a->bytes);
    rt_json_int(&j, "ranks", world);
    rt_json_string(&j, "algo", algo);
    rt_json_string(&j, "engine", r->engine);
    rt_json_number(&j, "time_s", t);
    rt_json_number(&j, "algbw_GBps", algbw);
    rt_json_number(&j, "busbw_GBps", busbw);
    rt_json_raw(&j, "settings", r->settings_json);
    rt_json_end_object(&j);
    rt_json_finish(&j);
}

static int run(const coll_args *a, const rt_engine *engine, rt_scenario *s)
{
    int world = rt_topology_ranks(&s->topology);
    rt_graph *g = one_op_graph(a, world);
    rt_result *r = g ? rt_result_new(g, engine->name) : NULL;
    int rc = 1;
    if (!r)
        fprintf(stderr, "rectwin collective: out of memory\n");
    else if (engine->run(s, g, r, stderr) == 0) {
        report(a, r, world, stdout);
        rc = 0;
    }
    rt_result_free(r);
    rt_graph_free(g);
    return rc;
}

int rt_cmd_collective(int argc, char **argv)
{
    coll_args a = {.op = -1, .bytes = -1, .engine = rt_engines[0]->name, .algo = RT_ALGO_AUTO};
    int p = parse_args(&a, argc, argv);
    if (p != 0) {
        usage(p > 0 ? stdout : stderr);
        return p > 0 ? 0 : RT_EXIT_USAGE;
    }
    const rt_engine *engine = rt_engine_find(a.engine);
    if (!engine) {
        fprintf(stderr, "rectwin collective: --engine '%s': allowed:", a.engine);
        for (int i = 0; rt_engines[i]; i++)
            fprintf(stderr, " %s", rt_engines[i]->name);
        fputc('\n', stderr);
        return RT_EXIT_USAGE;
    }
    rt_cfg *cfg = rt_cfg_load(a.topology, stderr);
    if (!cfg) return 1;
    rt_scenario s;
    memset(&s, 0, sizeof s);
    s.name = "collective";
    int rc = rt_topology_parse(cfg, rt_cfg_root(cfg), &s.topology, 0) < 0 ? 1 : 0;
    if (rc == 0) {
        s.topology.nodes = (int)a.nodes;
        if (a.gpus) s.topology.node.devices = (int)a.gpus;
        if ((long)s.topology.nodes * s.topology.node.devices > RT_MAX_WORLD) {
            fprintf(stderr, "rectwin collective: at most %d ranks\n", RT_MAX_WORLD);
            rc = RT_EXIT_USAGE;
        } else if (rt_topology_check_faults(&s.topology) < 0) {
            rc = 1;
        }
    }
    if (rc == 0) rc = run(&a, engine, &s);
    rt_topology_free(&s.topology);
    rt_cfg_free(cfg);
    return rc;
}
