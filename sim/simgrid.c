/* Engine "simgrid": flow-level simulation of the op graph on a generated SimGrid platform
 * (sim/simgrid_platform.h). This file is the parent side: it checks the inputs, times the
 * kernels and resolves algorithms (so user errors are reported before anything starts),
 * writes the platform, runs the simulation (simgrid_run.c) in a child process and turns what
 * it reports into the result, the settings and links.csv.
 *
 * Why a child process: SimGrid's engine is process-wide and cannot be re-created, while a
 * process (a test, a sweep) may simulate many scenarios; the child also keeps SimGrid's own
 * memory out of ours. */
#define _DEFAULT_SOURCE /* MAP_ANONYMOUS */
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "analytic.h"
#include "cleanup.h"
#include "collective_policy.h"
#include "engine.h"
#include "json.h"
#include "kernel_model.h"
#include "simgrid.h"
#include "simgrid_cores.h"
#include "simgrid_run.h"

enum { RT_SG_PAIRS_MAX_RANKS = 256 };

typedef struct prep {
    rt_platform *p;
    int pairs;
    int *rep_of;
    double *kernel_s;
    rt_coll_algo *algo;
    char path[64];
    int have_path;
    int cleanup; /* the platform file's slot in core/cleanup.h */
} prep;

static void prep_free(prep *x)
{
    if (x->have_path) unlink(x->path);
    if (x->have_path) rt_cleanup_forget(x->cleanup);
    rt_platform_free(x->p);
    free(x->rep_of);
    free(x->kernel_s);
    free(x->algo);
}

static int fail(FILE *err, const char *why)
{
    fprintf(err, "simgrid: %s\n", why);
    return -1;
}

static int check_inputs(const rt_topology *t, const rt_graph *g, FILE *err)
{
    if (t->nodes < 1 || t->node.devices < 1)
        return fail(err, "topology needs at least one node of at least one device");
    if (g->world != rt_topology_ranks(t))
        return fail(err, "graph world size differs from nodes x devices of the topology");
    if (g->n_reps < 1) return fail(err, "graph has no representative ranks");
    for (int rep = 0; rep < g->n_reps; rep++)
        if (g->rep_rank[rep] < 0 || g->rep_rank[rep] >= g->world)
            return fail(err, "a representative rank is outside the world");
    for (int op = 0; op < g->n_ops; op++)
        if ((unsigned)g->ops[op].stream >= RT_STREAM_COUNT)
            return fail(err, "an op has an unknown stream");
    return 0;
}

/* A rank without costs uses representative rank * n_reps / world, the convention the plans
 * use for receive sizes; a representative uses its own. */
static void map_reps(const rt_graph *g, int *rep_of)
{
    for (int r = 0; r < g->world; r++)
        rep_of[r] = (int)((long)r * g->n_reps / g->world);
    for (int rep = 0; rep < g->n_reps; rep++)
        rep_of[g->rep_rank[rep]] = rep;
}

static void op_error(FILE *err, const rt_graph *g, int op, int rep, const char *why)
{
    fprintf(err, "simgrid: op %d '%s' (phase %s) on rank %d: %s\n", op,
            g->ops[op].name ? g->ops[op].name : "?", g->phases[g->ops[op].phase], g->rep_rank[rep],
            why);
}

/* Kernel durations and collective algorithms of every (op, representative). */
static int time_ops(const rt_scenario *s, const rt_graph *g, prep *x, FILE *err)
{
    const rt_topology *t = &s->topology;
    rt_coll_policy pol;
    rt_coll_policy_default(&pol);
    for (int op = 0; op < g->n_ops; op++) {
        const rt_op *o = &g->ops[op];
        for (int rep = 0; rep < g->n_reps; rep++) {
            long at = (long)op * g->n_reps + rep;
            const rt_op_cost *c = rt_graph_cost(g, op, rep);
            const char *why = NULL;
            x->algo[at] = RT_ALGO_AUTO;
            if (o->type == RT_OP_KERNEL) {
                if (rt_kernel_time(s, g, op, rep, &x->kernel_s[at], &why) == 0) continue;
                op_error(err, g, op, rep, why);
                return -1;
            }
            rt_coll_shape sh;
            rt_coll_shape_of(t, o->group, g->rep_rank[rep], &sh);
            x->algo[at] = rt_coll_policy_choose(&pol, t, o->coll, o->algo, &sh, c->bytes);
            rt_coll_call call = {o->coll,  x->algo[at], o->group, g->rep_rank[rep],
                                 c->bytes, c->send,     c->recv};
            rt_coll_time ct;
            if (rt_coll_model_time(t, &call, &ct, &why) == 0) continue;
            op_error(err, g, op, rep, why);
            return -1;
        }
    }
    return 0;
}

static int write_platform(const rt_topology *t, prep *x, FILE *err)
{
    const char *env = getenv("TMPDIR");
    const char *dir = env && *env && strlen(env) < 32 ? env : "/tmp";
    if (rt_platform_check_size(x->p, x->pairs, dir, "simgrid", err) < 0) return -1;
    snprintf(x->path, sizeof x->path, "%s/rectwin-platform-XXXXXX", dir);
    int fd = mkstemp(x->path);
    if (fd < 0) {
        fprintf(err, "simgrid: cannot create a temporary platform file: %s\n", strerror(errno));
        return -1;
    }
    x->have_path = 1;
    x->cleanup = rt_cleanup_track(x->path);
    FILE *f = fdopen(fd, "w");
    if (!f) {
        close(fd);
        return fail(err, "cannot write the temporary platform file");
    }
    int rc = rt_platform_write_xml(x->p, t, x->pairs, f);
    if (fclose(f) != 0 || rc < 0) return fail(err, "cannot write the temporary platform file");
    return 0;
}

static int prepare(const rt_scenario *s, const rt_graph *g, const rt_simgrid_settings *sg, prep *x,
                   FILE *err)
{
    const rt_topology *t = &s->topology;
    const char *why = NULL;
    size_t n = (size_t)g->n_ops * (size_t)g->n_reps + 1;
    memset(x, 0, sizeof *x);
    if (check_inputs(t, g, err) < 0) return -1;
    if (!(x->p = rt_platform_new(t, t->nodes, &why))) return fail(err, why);
    x->pairs = sg->flows == RT_SG_FLOWS_PAIRS ||
               (sg->flows == RT_SG_FLOWS_AUTO && g->world <= sg->pair_max_ranks);
    if (x->pairs && g->world > RT_SG_PAIRS_MAX_RANKS)
        return fail(err, "simgrid.flows: pairs runs one actor per device pair and is limited to "
                         "256 ranks; use flows: links (or auto) for larger worlds");
    x->rep_of = malloc(sizeof(int) * (size_t)g->world);
    x->kernel_s = calloc(n, sizeof(double));
    x->algo = calloc(n, sizeof(rt_coll_algo));
    if (!x->rep_of || !x->kernel_s || !x->algo) return fail(err, "out of memory");
    map_reps(g, x->rep_of);
    if (time_ops(s, g, x, err) < 0) return -1;
    return write_platform(t, x, err);
}

/* The outputs live in one anonymous shared mapping, laid out as rt_sg_out followed by its
 * arrays, so the child's writes are visible to the parent. */
typedef struct shared {
    void *base;
    size_t size;
    rt_sg_out *out;
} shared;

static int shared_map(shared *sh, const rt_graph *g, const rt_platform *p)
{
    size_t n = (size_t)g->n_ops * (size_t)g->n_reps, links = 2 * (size_t)p->n_links;
    size_t head = (sizeof(rt_sg_out) + 15) / 16 * 16;
    sh->size = head + (2 * n + links) * sizeof(double);
    sh->base = mmap(NULL, sh->size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (sh->base == MAP_FAILED) return -1;
    sh->out = sh->base;
    double *d = (double *)((char *)sh->base + head);
    sh->out->start = d;
    sh->out->end = d + n;
    sh->out->link_bytes = d + 2 * n;
    sh->out->status = -1;
    snprintf(sh->out->msg, sizeof sh->out->msg, "the simulation did not report");
    return 0;
}

static int simulate(const rt_sg_job *job, FILE *err)
{
    fflush(NULL);
    pid_t parent = getpid();
    pid_t pid = fork();
    if (pid < 0) return fail(err, "cannot start the simulation process (fork failed)");
    if (pid == 0) {
        /* The simulation dies with its parent, whatever kills the parent. */
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (getppid() != parent) _Exit(3); /* the parent died before prctl took effect */
        int rc = rt_sg_simulate(job);
        fflush(NULL);
        _Exit(rc == 0 ? 0 : 3);
    }
    rt_cleanup_child(pid);
    int status = 0;
    while (waitpid(pid, &status, 0) < 0)
        if (errno != EINTR) {
            rt_cleanup_child(0);
            return fail(err, "lost the simulation process");
        }
    rt_cleanup_child(0);
    if (WIFSIGNALED(status)) {
        fprintf(err,
                "simgrid: the simulation process died of signal %d (SimGrid's message, "
                "if any, is above)\n",
                WTERMSIG(status));
        return -1;
    }
    if (WEXITSTATUS(status) != 0 || job->out->status != 0) {
        fprintf(err, "simgrid: %s\n", job->out->msg);
        return -1;
    }
    return 0;
}

static char *settings_json(const rt_topology *t, const rt_simgrid_settings *sg, const prep *x,
                           const rt_sg_out *o)
{
    rt_coll_policy pol;
    rt_coll_policy_default(&pol);
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (!f) return NULL;
    rt_json j;
    rt_json_init(&j, f, 0);
    rt_json_begin_object(&j, NULL);
    rt_json_string(&j, "network_model", rt_sg_model_names[sg->model]);
    rt_json_number(&j, "tcp_gamma_bytes", sg->tcp_gamma);
    rt_json_bool(&j, "crosstraffic", sg->crosstraffic);
    rt_json_number(&j, "weight_s", sg->weight_s);
    rt_json_number(&j, "bandwidth_factor", sg->bandwidth_factor);
    rt_json_string(&j, "flows", x->pairs ? "pairs" : "links");
    rt_json_string(&j, "collective_steps", rt_sg_steps_names[sg->collective_steps]);
    rt_json_int(&j, "chunks", sg->chunks);
    rt_json_number(&j, "flows_simulated", (double)o->flows);
    rt_json_number(&j, "simulated_time_s", o->sim_time);
    rt_json_string(&j, "kernel_model",
                   "max(flops/(peak*eff_flops), bytes/(hbm_bw*eff_hbm)) + launch");
    if (t->calib)
        rt_json_string(&j, "calibration",
                       "kernels: each launch on its measured curve + dispatch (kernel_model.c); "
                       "a collective with a measured curve lasts its measured time, no flows");
    if (t->node.cores > 0) {
        rt_json_int(&j, "host_cores", t->node.cores);
        rt_json_int(&j, "host_cores_nodes", rt_topology_cores_nodes(t));
        rt_json_string(&j, "core_sharing",
                       "each rank's kernels execute on the host core it is pinned to, "
                       "consecutive ranks in blocks as rectwin-exec pins them "
                       "(simgrid_cores.c), priced at one rank alone (the 1-rank calibration "
                       "run); a rank waiting in a collective takes no core; with core_slice_s, "
                       "a core's ranks take turns of that length, else they share it evenly");
        rt_json_number(&j, "core_slice_s", rt_sg_cores_slice(t));
    }
    rt_json_string(&j, "link_latency",
                   "the topology's, simulated on the platform's links (as rectwin platform "
                   "writes them); the network model weights a flow's share of a link by its "
                   "route latency");
    rt_json_string(&j, "collective_latency",
                   "one round of flows pays its route latencies; the engine adds the "
                   "analytic latency beyond them (base, further steps; collective_model.c)");
    rt_json_string(&j, "representatives",
                   "every rank simulated; non-representatives use rank*n_reps/world's costs");
    rt_json_begin_object(&j, "platform");
    rt_json_int(&j, "hosts", x->p->n_hosts);
    rt_json_int(&j, "duplex_links", x->p->n_links);
    rt_json_int(&j, "planes", x->p->planes);
    rt_json_int(&j, "leaves_per_plane", x->p->leaves);
    rt_json_int(&j, "nodes_per_leaf", x->p->nodes_per_leaf);
    rt_json_number(&j, "eff_intra", t->coll.eff_intra);
    rt_json_number(&j, "eff_inter", t->coll.eff_inter);
    rt_json_number(&j, "oversubscription", t->net.oversubscription);
    rt_json_string(&j, "ecmp", rt_ecmp_names[t->net.ecmp]);
    rt_json_string(&j, "family", rt_family_names[t->net.family]);
    if (t->net.pod_leaves > 0) {
        rt_json_int(&j, "pod_leaves", t->net.pod_leaves);
        rt_json_number(&j, "core_oversubscription", t->net.core_oversubscription);
    }
    rt_json_end_object(&j);
    rt_faults_json(&j, &t->faults, t->net.ecmp == RT_ECMP_HASH ? 0 : rt_topology_spine_ports(t),
                   "the platform's links carry bandwidth x (1 - background) x (ports - "
                   "ports_down) / ports of their healthy bandwidth (a tenant's traffic as a "
                   "reserved share, exact for a constant-rate tenant, where a competing flow "
                   "would take a max-min share that depends on how many flows it meets); "
                   "every flow crossing a faulted link is slowed by max-min sharing; run with "
                   "network/optim:Full (SimGrid's lazy updates overran a degraded link); under "
                   "scale_out.ecmp: hash each spine port keeps bandwidth x (1 - background) "
                   "(the factor) and the leaf's first ports_down ports leave every route");
    rt_json_begin_object(&j, "policy");
    rt_json_number(&j, "tree_max_bytes", pol.tree_max_bytes);
    rt_json_number(&j, "nvls_min_bytes", pol.nvls_min_bytes);
    rt_json_end_object(&j);
    rt_json_end_object(&j);
    if (fclose(f) != 0) {
        free(buf);
        return NULL;
    }
    return buf;
}

typedef struct link_row {
    int link; /* directed */
    double util;
} link_row;

static int by_util(const void *a, const void *b)
{
    const link_row *x = a, *y = b;
    if (x->util != y->util) return x->util > y->util ? -1 : 1;
    return (x->link > y->link) - (x->link < y->link);
}

/* The most loaded directed links: bytes, time busy at full bandwidth, and that time's share
 * of the simulated iteration. */
static char *links_csv(const rt_platform *p, const rt_sg_out *o, int top)
{
    int n = 2 * p->n_links, used = 0;
    link_row *rows = malloc(sizeof *rows * (size_t)(n ? n : 1));
    char *buf = NULL, name[64];
    size_t len = 0;
    FILE *f = rows ? open_memstream(&buf, &len) : NULL;
    if (!f) {
        free(rows);
        return NULL;
    }
    for (int l = 0; l < n; l++) {
        if (!(o->link_bytes[l] > 0)) continue;
        double busy = o->link_bytes[l] / p->bw[l / 2];
        rows[used++] = (link_row){l, o->sim_time > 0 ? busy / o->sim_time : 0};
    }
    qsort(rows, (size_t)used, sizeof *rows, by_util);
    fputs("link,direction,bandwidth_Bps,bytes,busy_s,utilization\n", f);
    for (int i = 0; i < used && i < top; i++) {
        int l = rows[i].link;
        rt_platform_link_name(p, l / 2, name, sizeof name);
        fprintf(f, "%s,%s,%.6g,%.17g,%.9g,%.6f\n", name, l % 2 == RT_DIR_UP ? "up" : "down",
                p->bw[l / 2], o->link_bytes[l], o->link_bytes[l] / p->bw[l / 2], rows[i].util);
    }
    free(rows);
    if (fclose(f) != 0) {
        free(buf);
        return NULL;
    }
    return buf;
}

static int collect(const rt_scenario *scn, const rt_simgrid_settings *sg, const rt_graph *g,
                   const prep *x, const rt_sg_out *o, rt_result *r, FILE *err)
{
    size_t n = (size_t)g->n_ops * (size_t)g->n_reps;
    memcpy(r->start, o->start, n * sizeof(double));
    memcpy(r->end, o->end, n * sizeof(double));
    memcpy(r->algo, x->algo, n * sizeof(rt_coll_algo));
    free(r->settings_json);
    r->settings_json = settings_json(&scn->topology, sg, x, o);
    char *csv = links_csv(x->p, o, sg->links_top);
    if (!r->settings_json || !csv || rt_result_add_file(r, "links.csv", csv) < 0)
        return fail(err, "out of memory");
    return 0;
}

int rt_simgrid_run(const rt_scenario *scn, const rt_graph *g, const rt_simgrid_settings *sg,
                   rt_result *r, FILE *err)
{
    const rt_topology *t = &scn->topology;
    prep x;
    shared sh = {0};
    int rc = prepare(scn, g, sg, &x, err);
    if (rc == 0 && shared_map(&sh, g, x.p) < 0) rc = fail(err, "cannot map shared memory");
    if (rc == 0) {
        rt_sg_job job = {.t = t,
                         .sg = sg,
                         .g = g,
                         .p = x.p,
                         .platform_path = x.path,
                         .pairs = x.pairs,
                         .rep_of = x.rep_of,
                         .kernel_s = x.kernel_s,
                         .algo = x.algo,
                         .out = sh.out};
        rc = simulate(&job, err);
        if (rc == 0) rc = collect(scn, sg, g, &x, sh.out, r, err);
    }
    if (sh.base && sh.base != MAP_FAILED) munmap(sh.base, sh.size);
    prep_free(&x);
    return rc;
}

static int simgrid_run(const rt_scenario *scn, const rt_graph *g, rt_result *r, FILE *err)
{
    rt_simgrid_settings sg;
    if (rt_simgrid_settings_load(&scn->topology, &sg) < 0) return -1;
    return rt_simgrid_run(scn, g, &sg, r, err);
}

const rt_engine rt_engine_simgrid = {
    .name = "simgrid",
    .description = "SimGrid flow-level simulation on a platform generated from the topology "
                   "(roofline kernels; collectives as flows by algorithm)",
    .run = simgrid_run,
};
