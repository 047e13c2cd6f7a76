/* Metrics of a timed op graph (DESIGN.md section 5). Works on any result, predicted or
 * measured: it only reads start/end times, the graph's costs and the scenario. */
#include "result.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

rt_result *rt_result_new(const rt_graph *g, const char *engine)
{
    rt_result *r = calloc(1, sizeof *r);
    if (!r) return NULL;
    size_t n = (size_t)g->n_ops * (size_t)g->n_reps;
    r->graph = g;
    r->n_phases = g->n_phases;
    r->start = calloc(n ? n : 1, sizeof(double));
    r->end = calloc(n ? n : 1, sizeof(double));
    r->algo = calloc(n ? n : 1, sizeof(rt_coll_algo));
    r->phase_s = calloc(g->n_phases ? (size_t)g->n_phases : 1, sizeof(double));
    if (!r->start || !r->end || !r->algo || !r->phase_s) {
        rt_result_free(r);
        return NULL;
    }
    snprintf(r->engine, sizeof r->engine, "%s", engine ? engine : "");
    return r;
}

void rt_result_free(rt_result *r)
{
    if (!r) return;
    free(r->start);
    free(r->end);
    free(r->algo);
    free(r->settings_json);
    for (int i = 0; i < r->n_files; i++) {
        free(r->files[i].name);
        free(r->files[i].text);
    }
    free(r->files);
    free(r->spread);
    free(r->phase_s);
    free(r);
}

int rt_result_add_file(rt_result *r, const char *name, char *text)
{
    for (int i = 0; i < r->n_files; i++)
        if (!strcmp(r->files[i].name, name)) {
            free(r->files[i].text);
            r->files[i].text = text;
            return 0;
        }
    rt_result_file *f = realloc(r->files, sizeof *f * (size_t)(r->n_files + 1));
    char *copy = strdup(name);
    if (f) r->files = f;
    if (!f || !copy) {
        free(copy);
        free(text);
        return -1;
    }
    r->files[r->n_files++] = (rt_result_file){copy, text};
    return 0;
}

static long at(const rt_graph *g, int op, int rep)
{
    return (long)op * g->n_reps + rep;
}

/* A kernel is memory-bound when its bytes term is at least its FLOPs term of the cost model. */
static int memory_bound(const rt_topology *t, const rt_op *op, const rt_op_cost *c)
{
    const rt_device_spec *d = &t->device;
    double mem = c->bytes / (d->hbm_bw * d->eff_hbm);
    double peak = d->peak_flops[op->dtype] * d->eff_flops;
    double flops = c->flops > 0 ? (peak > 0 ? c->flops / peak : INFINITY) : 0.0;
    return c->bytes > 0 && mem >= flops;
}

typedef struct interval {
    double lo, hi;
} interval;

static int by_lo(const void *a, const void *b)
{
    const interval *x = a, *y = b;
    return (x->lo > y->lo) - (x->lo < y->lo);
}

/* Sorts and merges IV in place; returns the number of disjoint intervals left. */
static int merge(interval *iv, int n)
{
    if (n == 0) return 0;
    qsort(iv, (size_t)n, sizeof *iv, by_lo);
    int k = 0;
    for (int i = 1; i < n; i++) {
        if (iv[i].lo <= iv[k].hi)
            iv[k].hi = fmax(iv[k].hi, iv[i].hi);
        else
            iv[++k] = iv[i];
    }
    return k + 1;
}

/* Length of the union of A minus the union of B (both merged, sorted, disjoint). */
static double uncovered(const interval *a, int na, const interval *b, int nb)
{
    double total = 0;
    int j = 0;
    for (int i = 0; i < na; i++) {
        double lo = a[i].lo, len = a[i].hi - a[i].lo;
        while (j < nb && b[j].hi <= lo)
            j++;
        for (int k = j; k < nb && b[k].lo < a[i].hi; k++)
            len -= fmin(b[k].hi, a[i].hi) - fmax(b[k].lo, lo);
        total += len;
    }
    return total;
}

/* Time during which REP runs a collective and no kernel. */
static double exposed_comm(const rt_result *r, int rep, interval *comm, interval *comp)
{
    const rt_graph *g = r->graph;
    int nc = 0, nk = 0;
    for (int op = 0; op < g->n_ops; op++) {
        interval iv = {r->start[at(g, op, rep)], r->end[at(g, op, rep)]};
        if (iv.hi <= iv.lo) continue;
        if (g->ops[op].type == RT_OP_COLLECTIVE)
            comm[nc++] = iv;
        else
            comp[nk++] = iv;
    }
    nc = merge(comm, nc);
    nk = merge(comp, nk);
    return uncovered(comm, nc, comp, nk);
}

/* Iteration: the latest end. Communication: the most any rank spends in collectives, its
 * waits for its groups included (a phase's time is taken the same way), so that it bounds
 * every rank's exposed communication. */
static void time_metrics(rt_result *r)
{
    const rt_graph *g = r->graph;
    double worst = 0;
    r->comm_time_s = 0;
    for (int rep = 0; rep < g->n_reps; rep++) {
        double comm = 0;
        for (int op = 0; op < g->n_ops; op++) {
            worst = fmax(worst, r->end[at(g, op, rep)]);
            if (g->ops[op].type == RT_OP_COLLECTIVE)
                comm += r->end[at(g, op, rep)] - r->start[at(g, op, rep)];
        }
        r->comm_time_s = fmax(r->comm_time_s, comm);
    }
    r->iteration_time_s = worst;
}

static void phase_metrics(rt_result *r)
{
    const rt_graph *g = r->graph;
    for (int p = 0; p < r->n_phases; p++)
        r->phase_s[p] = 0;
    for (int rep = 0; rep < g->n_reps; rep++) {
        for (int p = 0; p < r->n_phases; p++) {
            double sum = 0;
            for (int op = 0; op < g->n_ops; op++)
                if (g->ops[op].phase == p) sum += r->end[at(g, op, rep)] - r->start[at(g, op, rep)];
            r->phase_s[p] = fmax(r->phase_s[p], sum);
        }
    }
}

static void exposure_metrics(rt_result *r)
{
    const rt_graph *g = r->graph;
    size_t n = g->n_ops ? (size_t)g->n_ops : 1;
    interval *comm = malloc(n * sizeof *comm), *comp = malloc(n * sizeof *comp);
    r->exposed_comm_s = 0;
    if (comm && comp)
        for (int rep = 0; rep < g->n_reps; rep++)
            r->exposed_comm_s = fmax(r->exposed_comm_s, exposed_comm(r, rep, comm, comp));
    else
        r->exposed_comm_s = NAN; /* reported as null rather than as a wrong zero */
    free(comm);
    free(comp);
}

/* MBU = sum of min bytes of memory-bound kernels / (sum of their durations x HBM bw),
 * both weighted by how many ranks each representative stands for. */
static void bandwidth_metrics(rt_result *r, const rt_topology *t)
{
    const rt_graph *g = r->graph;
    double bytes = 0, time = 0, sp_bytes = 0, sp_time = 0;
    for (int op = 0; op < g->n_ops; op++) {
        const rt_op *o = &g->ops[op];
        if (o->type != RT_OP_KERNEL) continue;
        int sparse = strncmp(g->phases[o->phase], "emb.", 4) == 0;
        for (int rep = 0; rep < g->n_reps; rep++) {
            const rt_op_cost *c = rt_graph_cost(g, op, rep);
            if (!memory_bound(t, o, c)) continue;
            double w = g->rep_weight[rep];
            double d = r->end[at(g, op, rep)] - r->start[at(g, op, rep)];
            bytes += w * c->bytes;
            time += w * d;
            if (sparse) {
                sp_bytes += w * c->bytes;
                sp_time += w * d;
            }
        }
    }
    double bw = t->device.hbm_bw;
    r->mbu = time > 0 && bw > 0 ? bytes / (time * bw) : 0;
    r->mbu_sparse = sp_time > 0 && bw > 0 ? sp_bytes / (sp_time * bw) : 0;
}

void rt_result_finish(rt_result *r, const rt_scenario *s)
{
    const rt_graph *g = r->graph;
    time_metrics(r);
    phase_metrics(r);
    exposure_metrics(r);
    r->peak_hbm_bytes = 0;
    for (int rep = 0; rep < g->n_reps; rep++)
        if (g->peak_hbm_bytes) r->peak_hbm_bytes = fmax(r->peak_hbm_bytes, g->peak_hbm_bytes[rep]);
    r->samples_per_s = r->mfu = r->mbu = r->mbu_sparse = 0;
    if (!s) return;
    double it = r->iteration_time_s;
    if (it > 0) r->samples_per_s = (double)s->workload.batch_per_rank * g->world / it;
    double peak = s->topology.device.peak_flops[s->plan.dense_dtype];
    if (it > 0 && peak > 0) r->mfu = g->model_flops / (it * g->world * peak);
    bandwidth_metrics(r, &s->topology);
}

/* Seconds in the unit a reader expects: us below 1 ms, ms below 1 s. */
static void fmt_time(char *buf, size_t n, double s)
{
    if (!isfinite(s))
        snprintf(buf, n, "n/a");
    else if (fabs(s) < 1e-3)
        snprintf(buf, n, "%.2f us", s * 1e6);
    else if (fabs(s) < 1.0)
        snprintf(buf, n, "%.3f ms", s * 1e3);
    else
        snprintf(buf, n, "%.3f s", s);
}

static void fmt_bytes(char *buf, size_t n, double b)
{
    const char *unit[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    int u = 0;
    while (b >= 1024 && u < 4) {
        b /= 1024;
        u++;
    }
    snprintf(buf, n, "%.2f %s", b, unit[u]);
}

void rt_result_print(const rt_result *r, const rt_scenario *s, FILE *out)
{
    char a[32], b[32];
    const rt_graph *g = r->graph;
    fprintf(out, "%s: %s on %d ranks (engine %s)\n", s && s->name ? s->name : "result",
            s && s->plan.name ? s->plan.name : "-", g->world, r->engine);
    fmt_time(a, sizeof a, r->iteration_time_s);
    fprintf(out, "  iteration time   %s\n", a);
    fprintf(out, "  samples/s        %.4g\n", r->samples_per_s);
    fprintf(out, "  MFU              %.2f %%\n", 100 * r->mfu);
    fprintf(out, "  MBU              %.2f %% (sparse %.2f %%)\n", 100 * r->mbu,
            100 * r->mbu_sparse);
    fmt_time(a, sizeof a, r->comm_time_s);
    fmt_time(b, sizeof b, r->exposed_comm_s);
    fprintf(out, "  comm             %s (exposed %s)\n", a, b);
    fmt_bytes(a, sizeof a, r->peak_hbm_bytes);
    fprintf(out, "  peak HBM         %s\n", a);
    fprintf(out, "  %-24s %12s %8s\n", "phase", "time", "% iter");
    for (int p = 0; p < r->n_phases; p++) {
        fmt_time(a, sizeof a, r->phase_s[p]);
        double pct = r->iteration_time_s > 0 ? 100 * r->phase_s[p] / r->iteration_time_s : 0;
        fprintf(out, "  %-24s %12s %7.1f%%\n", g->phases[p], a, pct);
    }
}
