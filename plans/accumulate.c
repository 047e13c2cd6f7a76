#include "accumulate.h"

#include <stdlib.h>
#include <string.h>

/* Ops of the once-per-step update: the sparse backward exchange and update, the dense
 * gradient sync and optimizer steps, and whatever depends on them. */
static int is_update_phase(const char *ph)
{
    static const char *const once[] = {"dense.allreduce", "dense.update", "dense.tm_allreduce",
                                       "dense.tm_update", NULL};
    if (!strncmp(ph, "emb.bwd", 7)) return 1;
    for (int i = 0; once[i]; i++)
        if (!strcmp(ph, once[i])) return 1;
    return 0;
}

static void classify(const rt_graph *g, int *once)
{
    for (int o = 0; o < g->n_ops; o++) {
        once[o] = is_update_phase(g->phases[g->ops[o].phase]);
        for (int d = 0; d < g->ops[o].n_deps && !once[o]; d++)
            once[o] = once[rt_graph_deps(g, o)[d]];
    }
}

void rt_accumulate_range(int64_t n, int m, int k, int64_t *lo, int64_t *hi)
{
    *lo = n * m / k, *hi = n * (m + 1) / k;
}

int rt_accumulate_micro_ops(const rt_graph *g, int k, int *micro)
{
    int *once = malloc(sizeof(int) * (size_t)(g->n_ops ? g->n_ops : 1)), n = 0;
    if (!once) return -1;
    classify(g, once);
    for (int o = 0; o < g->n_ops; o++)
        n += !once[o];
    /* compose() lays the micro-batches' ops out one micro-batch after another. */
    int per = k > 0 ? n / k : 0, j = 0;
    for (int o = 0; o < g->n_ops && per > 0; o++)
        micro[o] = once[o] ? -1 : j++ / per;
    free(once);
    return per > 0 && per * k == n ? 0 : -1;
}

/* Micro-batch M of K: samples [n m / k, n (m + 1) / k) of every rep's batch, as views into W. */
static rt_workload *slice(const rt_workload *w, int m, int k)
{
    rt_workload *v = malloc(sizeof *v);
    size_t n = (size_t)w->n_reps * (size_t)w->n_features;
    if (!v) return NULL;
    *v = *w;
    int64_t blo, bhi;
    rt_accumulate_range(w->batch, m, k, &blo, &bhi);
    v->batch = (int)(bhi - blo);
    v->batches = malloc(sizeof *v->batches * (n ? n : 1));
    if (!v->batches) {
        free(v);
        return NULL;
    }
    for (int r = 0; r < w->n_reps; r++)
        for (int f = 0; f < w->n_features; f++) {
            const rt_feature_batch *fb = rt_workload_batch(w, r, f);
            int64_t lo, hi;
            rt_accumulate_range(fb->batch, m, k, &lo, &hi);
            uint64_t off = 0, cnt = 0;
            for (int64_t i = 0; i < lo; i++)
                off += fb->lengths[i];
            for (int64_t i = lo; i < hi; i++)
                cnt += fb->lengths[i];
            v->batches[(long)r * w->n_features + f] = (rt_feature_batch){
                (int)(hi - lo), fb->lengths + lo, cnt, fb->ids ? fb->ids + off : NULL};
        }
    return v;
}

static void slice_free(rt_workload *v)
{
    if (v) free(v->batches);
    free(v);
}

/* A micro-batch's graph must be the whole batch's op for op: only the costs may differ. */
static int same_shape(const rt_graph *a, const rt_graph *b)
{
    if (a->n_ops != b->n_ops || a->n_units != b->n_units) return 0;
    for (int o = 0; o < a->n_ops; o++)
        if (a->ops[o].type != b->ops[o].type || a->ops[o].n_deps != b->ops[o].n_deps ||
            strcmp(a->phases[a->ops[o].phase], b->phases[b->ops[o].phase]))
            return 0;
    return 1;
}

static int copy_op(rt_graph *h, const rt_graph *g, int o, const int *deps, int nd)
{
    const rt_op *op = &g->ops[o];
    const char *name = op->name ? rt_graph_name(h, op->name) : NULL;
    int id = op->type == RT_OP_KERNEL
                 ? rt_graph_add_kernel(h, g->phases[op->phase], op->stream, op->kernel, op->dtype,
                                       name, deps, nd)
                 : rt_graph_add_collective(h, g->phases[op->phase], op->stream, op->coll, op->algo,
                                           op->group, name, deps, nd);
    rt_graph_set_role(h, id, op->role, op->unit, op->layer);
    for (int r = 0; r < g->n_reps; r++)
        rt_graph_copy_cost(h, id, g, o, r);
    return id;
}

/* Micro-batch m's ops; its first ops wait for micro-batch m - 1's last (PREV_SINKS). */
static void add_micro(rt_graph *h, const rt_graph *g, const int *once, int *id, int *deps,
                      const int *prev_sinks, int n_prev)
{
    for (int o = 0; o < g->n_ops; o++) {
        if (once[o]) continue;
        int nd = 0;
        for (int d = 0; d < g->ops[o].n_deps; d++)
            deps[nd++] = id[rt_graph_deps(g, o)[d]];
        if (!nd)
            for (int i = 0; i < n_prev; i++)
                deps[nd++] = prev_sinks[i];
        id[o] = copy_op(h, g, o, deps, nd);
    }
}

/* Ops of the micro-batch part no other micro-batch op depends on, as ids in H. */
static int sinks(const rt_graph *g, const int *once, const int *id, int *out)
{
    int n = 0;
    for (int o = 0; o < g->n_ops; o++) {
        if (once[o]) continue;
        int used = 0;
        for (int p = o + 1; p < g->n_ops && !used; p++)
            for (int d = 0; d < g->ops[p].n_deps && !used; d++)
                used = !once[p] && rt_graph_deps(g, p)[d] == o;
        if (!used) out[n++] = id[o];
    }
    return n;
}

static rt_graph *compose(const rt_graph *full, rt_graph *const *micro, int k)
{
    int n = full->n_ops, max_deps = 0;
    for (int o = 0; o < n; o++)
        max_deps = full->ops[o].n_deps > max_deps ? full->ops[o].n_deps : max_deps;
    int *once = malloc(sizeof(int) * (size_t)(n ? n : 1)),
        *id = malloc(sizeof(int) * (size_t)(n ? n : 1));
    int *snk = malloc(sizeof(int) * (size_t)(n ? n : 1));
    int *deps = malloc(sizeof(int) * (size_t)(n + max_deps + 1));
    rt_graph *h = rt_graph_new(full->world, full->n_reps, full->rep_rank, full->rep_weight);
    if (!once || !id || !snk || !deps || !h) {
        free(once), free(id), free(snk), free(deps), rt_graph_free(h);
        return NULL;
    }
    classify(full, once);
    int n_snk = 0;
    for (int m = 0; m < k; m++) {
        add_micro(h, micro[m], once, id, deps, snk, n_snk);
        n_snk = sinks(micro[m], once, id, snk);
    }
    /* The update once, after the last micro-batch, at the whole batch's costs. */
    for (int o = 0; o < n; o++) {
        if (!once[o]) continue;
        int nd = 0;
        for (int d = 0; d < full->ops[o].n_deps; d++)
            deps[nd++] = id[rt_graph_deps(full, o)[d]];
        id[o] = copy_op(h, full, o, deps, nd);
    }
    for (int u = 0; u < full->n_units; u++)
        rt_graph_add_unit(h, &full->units[u]);
    memcpy(h->peak_hbm_bytes, full->peak_hbm_bytes, sizeof(double) * (size_t)full->n_reps);
    h->model_flops = full->model_flops;
    free(once), free(id), free(snk), free(deps);
    return h;
}

rt_graph *rt_accumulate_build(const rt_plan *plan, const rt_scenario *s, const void *opts,
                              const rt_workload *w, FILE *err)
{
    int k = s->plan.grad_accum;
    rt_graph *full = plan->build(s, opts, w, err);
    if (k <= 1 || !full) return full;
    rt_graph **micro = calloc((size_t)k, sizeof *micro);
    rt_graph *h = NULL;
    int m = 0;
    for (; micro && m < k; m++) {
        rt_workload *v = slice(w, m, k);
        micro[m] = v ? plan->build(s, opts, v, err) : NULL;
        slice_free(v);
        if (!micro[m]) break;
        if (!same_shape(full, micro[m])) {
            fprintf(err,
                    "grad_accum: plan %s builds another graph for micro-batch %d of %d; "
                    "allowed: plans whose graph does not depend on the batch\n",
                    s->plan.name, m, k);
            break;
        }
    }
    if (micro && m == k && !(h = compose(full, micro, k)))
        fprintf(err, "grad_accum: out of memory composing %d micro-batches\n", k);
    for (int i = 0; micro && i < k; i++)
        rt_graph_free(micro[i]);
    free(micro);
    rt_graph_free(full);
    return h;
}
