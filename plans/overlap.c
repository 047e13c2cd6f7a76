#include "overlap.h"

#include <stdlib.h>
#include <string.h>

enum { CLS_F, CLS_D, CLS_B };

static int phase_is(const rt_graph *g, int op, const char *prefix)
{
    return strncmp(g->phases[g->ops[op].phase], prefix, strlen(prefix)) == 0;
}

/* F: emb.fwd ops and their ancestors; B: emb.bwd ops and their descendants. */
static int classify(const rt_graph *g, int *cls, FILE *err)
{
    int n = g->n_ops;
    char *f = calloc((size_t)n, 1), *b = calloc((size_t)n, 1);
    if (!f || !b) {
        free(f), free(b);
        fprintf(err, "overlap: out of memory\n");
        return -1;
    }
    for (int o = n - 1; o >= 0; o--) {
        if (phase_is(g, o, "emb.fwd")) f[o] = 1;
        if (f[o])
            for (int d = 0; d < g->ops[o].n_deps; d++)
                f[rt_graph_deps(g, o)[d]] = 1;
    }
    for (int o = 0; o < n; o++) {
        b[o] = phase_is(g, o, "emb.bwd");
        for (int d = 0; d < g->ops[o].n_deps && !b[o]; d++)
            b[o] = b[rt_graph_deps(g, o)[d]];
    }
    int rc = 0;
    for (int o = 0; o < n; o++) {
        if (f[o] && b[o]) {
            fprintf(err,
                    "overlap: op '%s' (phase %s) is both in the sparse forward and after the "
                    "sparse backward; this plan's graph cannot be overlapped across iterations\n",
                    g->ops[o].name ? g->ops[o].name : "?", g->phases[g->ops[o].phase]);
            rc = -1;
            break;
        }
        cls[o] = f[o] ? CLS_F : b[o] ? CLS_B : CLS_D;
    }
    free(f), free(b);
    return rc;
}

/* The window's dependency lists, in CSR form over the plan's ops plus the H2D op (id n). */
typedef struct window {
    int n;   /* ops in the window (plan ops + the optional H2D) */
    int h2d; /* id of the H2D op, -1 when absent */
    int *cls, *prio;
    int *dep_at, *deps;
    int *stream;
} window;

static void window_free(window *w)
{
    free(w->cls), free(w->prio), free(w->dep_at), free(w->deps), free(w->stream);
}

static int is_sink_of_b(const rt_graph *g, const int *cls, int o)
{
    if (cls[o] != CLS_B) return 0;
    for (int p = o + 1; p < g->n_ops; p++) {
        if (cls[p] != CLS_B) continue;
        for (int d = 0; d < g->ops[p].n_deps; d++)
            if (rt_graph_deps(g, p)[d] == o) return 0;
    }
    return 1;
}

static int keeps_dep(rt_overlap mode, int from_cls, int to_cls)
{
    if (from_cls == to_cls) return 1;
    /* The pipeline window holds D and B of the same batch. */
    return mode == RT_OVERLAP_PIPELINE && from_cls == CLS_B && to_cls == CLS_D;
}

/* Fills W->deps: kept plan deps, F lookups after B's sinks, F roots after the H2D. Called
 * twice: first to count (W->deps NULL), then to fill. */
static int window_deps(const rt_graph *g, window *w, rt_overlap mode, const int *sinks, int n_sinks)
{
    int k = 0, n = g->n_ops;
    for (int o = 0; o < w->n; o++) {
        if (w->deps) w->dep_at[o] = k;
        if (o == n) continue; /* the H2D op depends on nothing */
        int kept = 0;
        for (int d = 0; d < g->ops[o].n_deps; d++) {
            int dep = rt_graph_deps(g, o)[d];
            if (!keeps_dep(mode, w->cls[o], w->cls[dep])) continue;
            if (w->deps) w->deps[k] = dep;
            k++, kept++;
        }
        if (w->cls[o] != CLS_F) continue;
        if (g->ops[o].type == RT_OP_KERNEL && g->ops[o].kernel == RT_K_LOOKUP)
            for (int i = 0; i < n_sinks; i++, k++)
                if (w->deps) w->deps[k] = sinks[i];
        if (!kept && w->h2d >= 0) {
            if (w->deps) w->deps[k] = w->h2d;
            k++;
        }
    }
    if (w->deps) w->dep_at[w->n] = k;
    return k;
}

static int window_build(const rt_graph *g, rt_overlap mode, const int *cls, window *w)
{
    int n = g->n_ops;
    memset(w, 0, sizeof *w);
    w->h2d = mode == RT_OVERLAP_PIPELINE ? n : -1;
    w->n = n + (w->h2d >= 0);
    w->cls = malloc(sizeof(int) * (size_t)w->n);
    w->prio = malloc(sizeof(int) * (size_t)w->n);
    w->stream = malloc(sizeof(int) * (size_t)w->n);
    w->dep_at = malloc(sizeof(int) * (size_t)(w->n + 1));
    int *sinks = malloc(sizeof(int) * (size_t)(n ? n : 1)), n_sinks = 0;
    if (!w->cls || !w->prio || !w->stream || !w->dep_at || !sinks) goto oom;
    /* Emission order among ready ops: the batch whose work the others wait for goes first. */
    static const int prio_pipeline[] = {[CLS_F] = 0, [CLS_D] = 1, [CLS_B] = 2};
    static const int prio_semi[] = {[CLS_B] = 0, [CLS_F] = 1, [CLS_D] = 2};
    const int *prio = mode == RT_OVERLAP_PIPELINE ? prio_pipeline : prio_semi;
    for (int o = 0; o < n; o++) {
        w->cls[o] = cls[o];
        w->prio[o] = prio[cls[o]];
        int sparse = cls[o] == CLS_F || (mode == RT_OVERLAP_SEMI_ASYNC && cls[o] == CLS_B);
        int moved =
            sparse && g->ops[o].type == RT_OP_KERNEL && g->ops[o].stream == RT_STREAM_COMPUTE;
        /* Batch i's dense collectives go to the gradient-sync stream: they are not ordered
         * after batch i+1's (or i-1's) embedding exchanges on the comm stream, only by their
         * dependencies, as DDP's AllReduce runs on its own process group's stream. */
        int sync = cls[o] == CLS_D && g->ops[o].type == RT_OP_COLLECTIVE;
        w->stream[o] = moved ? RT_STREAM_COPY : sync ? RT_STREAM_SYNC_COMM : (int)g->ops[o].stream;
        if (is_sink_of_b(g, cls, o)) sinks[n_sinks++] = o;
    }
    if (w->h2d >= 0) w->cls[n] = CLS_F, w->prio[n] = -1, w->stream[n] = RT_STREAM_COPY;
    int total = window_deps(g, w, mode, sinks, n_sinks);
    w->deps = malloc(sizeof(int) * (size_t)(total ? total : 1));
    if (!w->deps) goto oom;
    window_deps(g, w, mode, sinks, n_sinks);
    free(sinks);
    return 0;
oom:
    free(sinks);
    window_free(w);
    return -1;
}

/* Topological order; among ready ops the lowest (priority, plan order) first. It fixes the
 * order of every in-order stream queue. */
static int window_order(const window *w, int *order)
{
    int *left = malloc(sizeof(int) * (size_t)w->n);
    char *done = calloc((size_t)w->n, 1);
    if (!left || !done) {
        free(left), free(done);
        return -1;
    }
    for (int o = 0; o < w->n; o++)
        left[o] = w->dep_at[o + 1] - w->dep_at[o];
    for (int k = 0; k < w->n; k++) {
        int best = -1;
        for (int o = 0; o < w->n; o++) {
            if (done[o] || left[o]) continue;
            if (best < 0 || w->prio[o] < w->prio[best]) best = o;
        }
        order[k] = best;
        done[best] = 1;
        for (int o = 0; o < w->n; o++)
            for (int d = w->dep_at[o]; d < w->dep_at[o + 1]; d++)
                if (w->deps[d] == best) left[o]--;
    }
    free(left), free(done);
    return 0;
}

/* Input bytes batch i+1 copies to the device on rep R: IDs, KJT lengths, dense features. */
static double input_bytes(const rt_scenario *s, const rt_workload *w, int r)
{
    double bytes = 0;
    for (int f = 0; f < w->n_features; f++) {
        const rt_feature_batch *fb = rt_workload_batch(w, r, f);
        bytes += (double)fb->n_ids * s->workload.id_bytes + 4.0 * fb->batch;
    }
    int b = w->n_features ? rt_workload_batch(w, r, 0)->batch : w->batch;
    return bytes + 4.0 * b * s->model.dense_features;
}

static rt_graph *window_graph(const rt_graph *g, const window *win, const int *order,
                              const rt_scenario *s, const rt_workload *w)
{
    rt_graph *h = rt_graph_new(g->world, g->n_reps, g->rep_rank, g->rep_weight);
    int *id = malloc(sizeof(int) * (size_t)win->n),
        *deps = malloc(sizeof(int) * (size_t)(win->n + 1));
    if (!h || !id || !deps) {
        rt_graph_free(h), free(id), free(deps);
        return NULL;
    }
    int max_deps = 0;
    for (int o = 0; o < win->n; o++)
        if (win->dep_at[o + 1] - win->dep_at[o] > max_deps)
            max_deps = win->dep_at[o + 1] - win->dep_at[o];
    int *dl = realloc(deps, sizeof(int) * (size_t)(max_deps + 1));
    if (!dl) {
        rt_graph_free(h), free(id), free(deps);
        return NULL;
    }
    deps = dl;
    for (int k = 0; k < win->n; k++) {
        int o = order[k], nd = 0;
        for (int d = win->dep_at[o]; d < win->dep_at[o + 1]; d++)
            deps[nd++] = id[win->deps[d]];
        if (o == win->h2d) {
            id[o] = rt_graph_add_kernel(h, "input.h2d", RT_STREAM_COPY, RT_K_H2D, RT_DT_FP32,
                                        "input_h2d", deps, nd);
            for (int r = 0; r < h->n_reps; r++)
                rt_graph_cost(h, id[o], r)->bytes = input_bytes(s, w, r);
            rt_graph_set_role(h, id[o], RT_ROLE_INPUT_H2D, -1, -1);
            h->ops[id[o]].batch_offset = 1;
            continue;
        }
        const rt_op *op = &g->ops[o];
        const char *name = op->name ? rt_graph_name(h, op->name) : NULL;
        rt_stream st = (rt_stream)win->stream[o];
        id[o] = op->type == RT_OP_KERNEL
                    ? rt_graph_add_kernel(h, g->phases[op->phase], st, op->kernel, op->dtype, name,
                                          deps, nd)
                    : rt_graph_add_collective(h, g->phases[op->phase], st, op->coll, op->algo,
                                              op->group, name, deps, nd);
        rt_graph_set_role(h, id[o], op->role, op->unit, op->layer);
        h->ops[id[o]].batch_offset =
            win->cls[o] == CLS_F                                               ? 1
            : win->cls[o] == CLS_B && s->plan.overlap == RT_OVERLAP_SEMI_ASYNC ? -1
                                                                               : 0;
        for (int r = 0; r < h->n_reps; r++)
            rt_graph_copy_cost(h, id[o], g, o, r);
    }
    for (int u = 0; u < g->n_units; u++)
        rt_graph_add_unit(h, &g->units[u]);
    memcpy(h->peak_hbm_bytes, g->peak_hbm_bytes, sizeof(double) * (size_t)g->n_reps);
    h->model_flops = g->model_flops;
    free(id), free(deps);
    return h;
}

int rt_overlap_apply(rt_graph **g, const rt_scenario *s, const rt_workload *w, FILE *err)
{
    rt_overlap mode = s->plan.overlap;
    if (mode == RT_OVERLAP_SYNC) return 0;
    const rt_graph *old = *g;
    int *cls = malloc(sizeof(int) * (size_t)(old->n_ops ? old->n_ops : 1));
    if (!cls) {
        fprintf(err, "overlap: out of memory\n");
        return -1;
    }
    if (classify(old, cls, err)) {
        free(cls);
        return -1;
    }
    window win;
    int rc = -1;
    if (window_build(old, mode, cls, &win) == 0) {
        int *order = malloc(sizeof(int) * (size_t)win.n);
        rt_graph *h =
            order && window_order(&win, order) == 0 ? window_graph(old, &win, order, s, w) : NULL;
        if (h) {
            rt_graph_free(*g);
            *g = h;
            rc = 0;
        }
        free(order);
        window_free(&win);
    }
    if (rc) fprintf(err, "overlap: out of memory building the %s window\n", rt_overlap_names[mode]);
    free(cls);
    return rc;
}

double rt_overlap_buffer_bytes(const rt_graph *g, const rt_scenario *s, int r)
{
    if (s->plan.overlap == RT_OVERLAP_SYNC) return 0;
    double bytes = 0;
    for (int o = 0; o < g->n_ops; o++) {
        const rt_op_cost *c = rt_graph_cost(g, o, r);
        if (phase_is(g, o, "input.h2d"))
            bytes += c->bytes;
        else if (phase_is(g, o, "emb.fwd") && g->ops[o].type == RT_OP_COLLECTIVE)
            bytes += c->bytes + c->recv_bytes;
    }
    return bytes;
}
