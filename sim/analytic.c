/* The analytic engine: closed-form op times and one pass of critical-path scheduling.
 *
 * Each (representative, stream) is an in-order queue, like a CUDA stream. An op starts when
 * its queue is free and its dependencies on the same representative have ended. A collective
 * also waits for its group: the representatives in the same group instance (same group base)
 * run together from the latest of their ready times and all end after the longest of their
 * durations (each member's record starts at its own ready time, its wait included); a
 * representative alone in its instance (statistical mode) keeps its own times.
 * Ops are stored in topological order, so one pass over them is enough. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "analytic.h"
#include "calib.h"
#include "cfg.h"
#include "collective_model.h"
#include "collective_policy.h"
#include "engine.h"
#include "json.h"
#include "kernel_model.h"

typedef struct member {
    int base;
    int rep;
} member;

/* Scratch space for one run, sized by the number of representatives. */
typedef struct sched {
    int n_reps;
    double *queue_free; /* [rep * RT_STREAM_COUNT + stream] */
    double *ready;
    double *dur;
    member *members;
    rt_coll_policy policy;
    const rt_scenario *scn;
} sched;

static void sched_free(sched *s)
{
    free(s->queue_free);
    free(s->ready);
    free(s->dur);
    free(s->members);
}

/* With calibration, every queue starts after the host's fixed work of a window (the runner's
 * origin mark and final sync, measured), as a measured op's start counts from that origin. */
static int sched_init(sched *s, const rt_scenario *scn, int n_reps)
{
    s->n_reps = n_reps;
    s->scn = scn;
    s->queue_free = calloc((size_t)n_reps * RT_STREAM_COUNT, sizeof(double));
    s->ready = calloc((size_t)n_reps, sizeof(double));
    s->dur = calloc((size_t)n_reps, sizeof(double));
    s->members = calloc((size_t)n_reps, sizeof(member));
    rt_coll_policy_default(&s->policy);
    const rt_topology *t = &scn->topology;
    const rt_calib_run *run = rt_calib_run_for(t->calib, rt_topology_ranks(t));
    for (long i = 0; run && s->queue_free && i < (long)n_reps * RT_STREAM_COUNT; i++)
        s->queue_free[i] = run->host_per_iteration_s;
    if (s->queue_free && s->ready && s->dur && s->members) return 0;
    sched_free(s);
    return -1;
}

static int by_base(const void *a, const void *b)
{
    const member *x = a, *y = b;
    if (x->base != y->base) return x->base < y->base ? -1 : 1;
    return (x->rep > y->rep) - (x->rep < y->rep);
}

static void op_error(FILE *err, const rt_graph *g, int op, int rep, const char *why)
{
    fprintf(err, "analytic: op %d '%s' (phase %s) on rank %d: %s\n", op,
            g->ops[op].name ? g->ops[op].name : "?", g->phases[g->ops[op].phase], g->rep_rank[rep],
            why);
}

/* max(FLOPs / (peak x eff_flops), bytes / (HBM bw x eff_hbm)) + launch overhead. */
int rt_analytic_kernel_time(const rt_topology *t, const rt_op *op, const rt_op_cost *c, double *out,
                            const char **why)
{
    const rt_device_spec *d = &t->device;
    double compute = 0.0;
    if (c->flops > 0) {
        double peak = (op->dtype >= 0 && op->dtype < RT_DT_COUNT) ? d->peak_flops[op->dtype] : 0;
        if (!(peak > 0)) {
            *why = "the device has no peak FLOP/s for this kernel's dtype";
            return -1;
        }
        compute = c->flops / (peak * d->eff_flops);
    }
    /* A host-to-device copy moves its bytes over the host link (PCIe), not HBM; the SimGrid
     * engine sends it over the platform's PCIe link, so both engines agree. */
    double memory = op->kernel == RT_K_H2D ? t->node.host_latency + c->bytes / t->node.host_bw
                                           : c->bytes / (d->hbm_bw * d->eff_hbm);
    *out = fmax(compute, memory) + d->launch_overhead;
    if (!isfinite(*out) || *out < 0) {
        *why = "kernel cost is not a finite non-negative number";
        return -1;
    }
    return 0;
}

static int collective_time(const sched *s, const rt_topology *t, const rt_graph *g, int op, int rep,
                           double *out, rt_coll_algo *algo, const char **why)
{
    const rt_op *o = &g->ops[op];
    const rt_op_cost *c = rt_graph_cost(g, op, rep);
    int rank = g->rep_rank[rep];
    rt_coll_shape shape;
    rt_coll_shape_of(t, o->group, rank, &shape);
    *algo = rt_coll_policy_choose(&s->policy, t, o->coll, o->algo, &shape, c->bytes);
    rt_coll_call call = {.kind = o->coll,
                         .algo = *algo,
                         .group = o->group,
                         .rank = rank,
                         .bytes = c->bytes,
                         .send = c->send,
                         .recv = c->recv};
    rt_coll_time ct;
    if (rt_coll_model_time(t, &call, &ct, why) < 0) return -1;
    *out = ct.total_s;
    /* rectwin-exec's ID AlltoAll first exchanges the splits (one int64 per peer, TorchRec's
     * size exchange: exec/README.md); calibrated, that is one more small AlltoAll. */
    if (t->calib && o->role == RT_ROLE_IDS_A2A && o->group.size > 1) {
        const rt_calib_run *run = rt_calib_run_for(t->calib, rt_topology_ranks(t));
        double meta = rt_calib_coll_time(run, RT_CC_ALLTOALL, o->group.size, 8.0 * o->group.size);
        if (meta > 0) *out += meta;
    }
    return 0;
}

/* Ready time of OP on REP: its queue and its dependencies. */
static double ready_time(const sched *s, const rt_graph *g, const rt_result *r, int op, int rep)
{
    double ready = s->queue_free[rep * RT_STREAM_COUNT + g->ops[op].stream];
    const int *deps = rt_graph_deps(g, op);
    for (int i = 0; i < g->ops[op].n_deps; i++)
        ready = fmax(ready, r->end[(long)deps[i] * g->n_reps + rep]);
    return ready;
}

/* A group instance runs from its members' latest ready time for their longest duration.
 * Each member's record starts at its own ready time: a rank that arrives early waits inside
 * the collective, as rectwin-exec's marks and a profiler's trace time it. */
static void sync_groups(sched *s, const rt_graph *g, int op, rt_result *r)
{
    int R = s->n_reps;
    for (int rep = 0; rep < R; rep++)
        s->members[rep] = (member){rt_group_base(g->ops[op].group, g->rep_rank[rep]), rep};
    qsort(s->members, (size_t)R, sizeof(member), by_base);
    for (int lo = 0; lo < R;) {
        int hi = lo;
        double start = 0, dur = 0;
        while (hi < R && s->members[hi].base == s->members[lo].base) {
            start = fmax(start, s->ready[s->members[hi].rep]);
            dur = fmax(dur, s->dur[s->members[hi].rep]);
            hi++;
        }
        for (int k = lo; k < hi; k++) {
            long at = (long)op * R + s->members[k].rep;
            r->start[at] = s->ready[s->members[k].rep];
            r->end[at] = start + dur;
        }
        lo = hi;
    }
}

static int schedule_op(sched *s, const rt_topology *t, const rt_graph *g, int op, rt_result *r,
                       FILE *err)
{
    int R = s->n_reps;
    const rt_op *o = &g->ops[op];
    for (int rep = 0; rep < R; rep++) {
        const char *why = NULL;
        long at = (long)op * R + rep;
        s->ready[rep] = ready_time(s, g, r, op, rep);
        int rc = o->type == RT_OP_KERNEL
                     ? rt_kernel_time(s->scn, g, op, rep, &s->dur[rep], &why)
                     : collective_time(s, t, g, op, rep, &s->dur[rep], &r->algo[at], &why);
        if (rc < 0) {
            op_error(err, g, op, rep, why);
            return -1;
        }
        r->start[at] = s->ready[rep];
        r->end[at] = s->ready[rep] + s->dur[rep];
    }
    if (o->type == RT_OP_COLLECTIVE) sync_groups(s, g, op, r);
    for (int rep = 0; rep < R; rep++)
        s->queue_free[rep * RT_STREAM_COUNT + o->stream] = r->end[(long)op * R + rep];
    return 0;
}

static int check_inputs(const rt_topology *t, const rt_graph *g, FILE *err)
{
    const char *bad = NULL;
    if (t->nodes < 1 || t->node.devices < 1)
        bad = "topology needs at least one node of at least one device";
    else if (g->world != rt_topology_ranks(t))
        bad = "graph world size differs from nodes x devices of the topology";
    else if (!(t->device.hbm_bw > 0) || !(t->device.eff_hbm > 0) || !(t->device.eff_flops > 0))
        bad = "device hbm_bw and efficiencies must be > 0";
    else if (g->n_reps < 1)
        bad = "graph has no representative ranks";
    for (int rep = 0; !bad && rep < g->n_reps; rep++)
        if (g->rep_rank[rep] < 0 || g->rep_rank[rep] >= g->world)
            bad = "a representative rank is outside the world";
    for (int op = 0; !bad && op < g->n_ops; op++)
        if ((unsigned)g->ops[op].stream >= RT_STREAM_COUNT) bad = "an op has an unknown stream";
    if (!bad) return 0;
    fprintf(err, "analytic: %s\n", bad);
    return -1;
}

static char *settings_json(const rt_topology *t, const rt_coll_policy *p)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (!f) return NULL;
    rt_json j;
    rt_json_init(&j, f, 0);
    rt_json_begin_object(&j, NULL);
    const rt_calib_run *run = rt_calib_run_for(t->calib, rt_topology_ranks(t));
    rt_json_string(&j, "kernel_model",
                   run ? "calibration tables: each launch on its measured curve + dispatch"
                       : "max(flops/(peak*eff_flops), bytes/(hbm_bw*eff_hbm)) + launch");
    if (run) {
        /* which measurement priced this prediction */
        rt_json_begin_object(&j, "calibration");
        rt_json_string(&j, "date", t->calib->date);
        rt_json_string(&j, "host", t->calib->host);
        rt_json_string(&j, "device", t->calib->device);
        rt_json_int(&j, "run_ranks", run->ranks);
        /* node.cores (>= devices here): kernels on the 1-rank run, kernel_model.c */
        if (t->node.cores > 0) rt_json_int(&j, "kernel_run_ranks", 1);
        rt_json_number(&j, "dispatch_s", run->dispatch_s);
        rt_json_number(&j, "host_per_iteration_s", run->host_per_iteration_s);
        rt_json_end_object(&j);
    }
    rt_json_number(&j, "eff_flops", t->device.eff_flops);
    rt_json_number(&j, "eff_hbm", t->device.eff_hbm);
    rt_json_number(&j, "launch_overhead_s", t->device.launch_overhead);
    rt_json_string(&j, "collective_model", "alpha-beta per algorithm (sim/collective_model.c)");
    rt_json_number(&j, "eff_intra", t->coll.eff_intra);
    rt_json_number(&j, "eff_inter", t->coll.eff_inter);
    rt_json_number(&j, "base_latency_s", t->coll.base_latency);
    rt_json_number(&j, "scale_up_latency_s", t->node.scale_up_latency);
    rt_json_number(&j, "nic_latency_s", t->net.nic_latency);
    rt_json_number(&j, "switch_latency_s", t->net.switch_latency);
    rt_json_number(&j, "oversubscription", t->net.oversubscription);
    rt_json_int(&j, "nodes_per_leaf", rt_topology_nodes_per_leaf(t));
    rt_json_string(&j, "ecmp",
                   t->net.ecmp == RT_ECMP_BALANCED
                       ? "balanced"
                       : "balanced assumed (scale_out.ecmp: hash is simulated by the simgrid "
                         "engine only: a closed form cannot know which flows collide)");
    rt_json_string(&j, "family", rt_family_names[t->net.family]);
    if (t->net.family == RT_FAMILY_TORUS || t->net.family == RT_FAMILY_DRAGONFLY)
        rt_json_string(&j, "family_model",
                       "NIC bandwidth and the diameter's latency; sharing of router-to-router "
                       "links is simulated by the simgrid engine only");
    if (t->net.pod_leaves > 0) {
        rt_json_int(&j, "pod_leaves", t->net.pod_leaves);
        rt_json_number(&j, "core_oversubscription", t->net.core_oversubscription);
    }
    rt_json_number(&j, "per_message_cost_s", 0.0);
    rt_faults_json(&j, &t->faults, rt_topology_spine_ports(t),
                   "each collective runs its formula with the NVLink, NIC and uplink "
                   "bandwidths of the slowest faulted link of each class its members use "
                   "(exact for rings and even AlltoAlls whose bottleneck is that link, "
                   "pessimistic for uneven traffic and for members that do not cross it); "
                   "not modelled: contention with other groups on the faulted link and "
                   "PXN traffic on a faulted NVLink port (use the simgrid engine)");
    rt_json_begin_object(&j, "policy");
    rt_json_number(&j, "tree_max_bytes", p->tree_max_bytes);
    rt_json_number(&j, "nvls_min_bytes", p->nvls_min_bytes);
    rt_json_end_object(&j);
    rt_json_end_object(&j);
    if (fclose(f) != 0) {
        free(buf);
        return NULL;
    }
    return buf;
}

/* `node.cores` below the node's devices: ranks take turns on the cores, and how fast an op runs
 * depends on how many of its node's ranks compute at that moment (a rank waiting in an MPI
 * collective yields its core: experiments/measurements/cpu/core-sharing/). A closed-form queue
 * per rank cannot see that; a static "devices / cores times slower" would charge every op the
 * worst case that the measurement shows does not hold, so the engine refuses. */
static int check_cores(const rt_topology *t, FILE *err)
{
    const rt_node_spec *n = &t->node;
    int sharing = n->devices * rt_topology_cores_nodes(t); /* devices on one set of cores */
    if (n->cores <= 0 || n->cores >= sharing) return 0;
    static const char what[] =
        "%d host cores for %d devices (node.devices x node.cores_nodes): the analytic engine "
        "cannot share cores among ranks over time; allowed: --engine simgrid (simulates the "
        "sharing), node.cores >= the devices sharing them, or no node.cores (each rank priced "
        "on the curve measured with all ranks running)";
    if (n->cores_cfg && n->cores_at)
        rt_cfg_error(n->cores_cfg, n->cores_at, what, n->cores, sharing);
    else {
        fprintf(err, "analytic: topology node.cores: ");
        fprintf(err, what, n->cores, sharing);
        fputc('\n', err);
    }
    return -1;
}

static int analytic_run(const rt_scenario *scn, const rt_graph *g, rt_result *r, FILE *err)
{
    const rt_topology *t = &scn->topology;
    if (check_cores(t, err) < 0 || check_inputs(t, g, err) < 0) return -1;
    sched s;
    if (sched_init(&s, scn, g->n_reps) < 0) {
        fprintf(err, "analytic: out of memory\n");
        return -1;
    }
    int rc = 0;
    for (int op = 0; op < g->n_ops && rc == 0; op++)
        rc = schedule_op(&s, t, g, op, r, err);
    if (rc == 0) {
        free(r->settings_json);
        r->settings_json = settings_json(t, &s.policy);
        if (!r->settings_json) {
            fprintf(err, "analytic: out of memory\n");
            rc = -1;
        }
    }
    sched_free(&s);
    return rc;
}

const rt_engine rt_engine_analytic = {
    .name = "analytic",
    .description = "closed-form op times (roofline kernels, alpha-beta collectives) and a "
                   "critical path over streams and group synchronization",
    .run = analytic_run,
};
