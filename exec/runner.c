/* The iteration loop. Ops run in the graph's order, which is topological. On CPU every op runs
 * to completion before the next one starts (strictly serialized): with one core per rank (or
 * fewer, under --oversubscribe) a thread per stream would only time-slice the same core, and
 * the timeline would show overlap that did not happen. On CUDA each op is enqueued on its
 * stream after waiting for the end marks of its dependencies on other streams, so comm and
 * compute overlap as the graph allows. */
#include "runner.h"

#include <mpi.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "dump.h"
#include "grad_accum.h"
#include "pipeline.h"
#include "state.h"
#include "watchdog.h"

static int start_mark(int op)
{
    return 1 + 2 * op;
}
static int end_mark(int op)
{
    return 2 + 2 * op;
}

/* Returns -1 for an injected failure of the op; dies or hangs for the other kinds. */
static int inject_fault(const rt_xrun_cfg *c, const rt_xexec *x, int op, FILE *err)
{
    if (!c->fault_kind || c->fault_rank != x->rank) return 0;
    const char *name = x->g->ops[op].name;
    if (!name || strcmp(name, c->fault_op)) return 0;
    fprintf(err, "exec: rank %d: injected fault '%s' at op '%s'\n", x->rank, c->fault_kind, name);
    fflush(err);
    if (!strcmp(c->fault_kind, "fail")) return -1;
    if (!strcmp(c->fault_kind, "die")) _Exit(9);
    for (;;) {
        struct timespec t = {1, 0};
        nanosleep(&t, NULL);
    }
}

static int run_op(rt_xexec *x, int op, FILE *err)
{
    const rt_op *o = &x->g->ops[op];
    switch (o->role) {
    case RT_ROLE_INPUT_H2D:
        if (rt_xexec_load_batch(x, err)) return -1;
        x->v.loaded = 1;
        return 0;
    case RT_ROLE_DENSE_FWD:
    case RT_ROLE_LOSS:
    case RT_ROLE_NEG_OFFLOAD:
    case RT_ROLE_NEG_FETCH:
    case RT_ROLE_DENSE_ALLREDUCE:
    case RT_ROLE_DENSE_UPDATE:
        return rt_xdense_run(x, op, err);
    case RT_ROLE_DENSE_BWD:
        if (rt_xdense_run(x, op, err)) return -1;
        /* The next window's dense backward overwrites the gradients this batch's sparse
         * backward reads: keep a copy when batches overlap. */
        return o->layer == 0 && x->s->plan.overlap != RT_OVERLAP_SYNC && !x->pad
                   ? rt_xexec_keep_grads(x, err)
                   : 0;
    case RT_ROLE_SEQ_PAD:
    case RT_ROLE_SEQ_UNPAD:
        return rt_xpad_run(x, op, err);
    default:
        return rt_xemb_run(x, op, err);
    }
}

/* The window: batch ids in flight are W + the ops' batch offsets (plans/overlap.h); a sync
 * graph's window is one iteration. */
typedef struct window {
    int lo_off, hi_off; /* smallest and largest batch offset */
    int has_h2d;        /* the graph uploads the next batch itself */
    int n_batches;
} window;

static window window_of(const rt_xexec *x, int batches)
{
    window w = {0, 0, 0, batches};
    for (int op = 0; op < x->g->n_ops; op++) {
        int o = x->g->ops[op].batch_offset;
        w.lo_off = o < w.lo_off ? o : w.lo_off, w.hi_off = o > w.hi_off ? o : w.hi_off;
        w.has_h2d |= x->g->ops[op].role == RT_ROLE_INPUT_H2D;
    }
    return w;
}

static int live(const window *w, int64_t id)
{
    return id >= 0 && id < w->n_batches;
}

/* Batches in flight: slot i % this holds batch i (accumulation's micro-batch slot is not one). */
static int batch_slots(const rt_xexec *x)
{
    return x->s->plan.overlap == RT_OVERLAP_SYNC ? 1 : x->n_slots;
}

/* Makes batch ID's slot the view; draws the batch on the host at its first use (untimed, as
 * a data loader would have it ready) and uploads it unless an H2D op of the graph does. */
static int use_batch(rt_xexec *x, const rt_xrun_cfg *c, const window *w, int64_t id, FILE *err)
{
    rt_xexec_use(x, (int)(id % batch_slots(x)));
    if (x->v.batch_id == id) return 0;
    rt_xbatch_free(&x->v.batch);
    x->v.batch_id = id, x->v.loaded = 0, x->v.have_grads = 0;
    if (rt_xbatch_make(&x->v.batch, x->s, c->graph_batch, x->rank, c->first_iteration + id, c->data,
                       err))
        return -1;
    if (w->has_h2d) return 0;
    if (rt_xexec_load_batch(x, err)) return -1;
    x->v.loaded = 1;
    return 0;
}

static int one_window(rt_xexec *x, const rt_xrun_cfg *c, const window *win, rt_xwatchdog *wd, int w,
                      FILE *err)
{
    const rt_graph *g = x->g;
    rt_xdev *d = x->dev;
    rt_xdev_on(d, RT_STREAM_COMPUTE);
    if (d->ops->mark(d, 0)) return -1;
    for (int op = 0; op < g->n_ops; op++) {
        const rt_op *o = &g->ops[op];
        int64_t id = (int64_t)w + o->batch_offset;
        if (!live(win, id)) continue;
        if (use_batch(x, c, win, id, err)) return -1;
        x->iteration = c->first_iteration + id;
        /* Iteration 0 is the graph's own batch: its bytes are checked. */
        x->counting = x->iteration == 0;
        rt_xdev_on(d, o->stream);
        for (int k = 0; k < o->n_deps; k++) {
            int dep = rt_graph_deps(g, op)[k];
            if (g->ops[dep].stream != o->stream && d->ops->wait_mark(d, end_mark(dep))) return -1;
        }
        rt_xwatchdog_enter(wd, op);
        if (inject_fault(c, x, op, err) || d->ops->mark(d, start_mark(op)) ||
            (x->accum && rt_xaccum_enter(x, op, err)) || run_op(x, op, err) ||
            (x->accum && rt_xaccum_leave(x, op, err)) || d->ops->mark(d, end_mark(op))) {
            fprintf(err, "exec: rank %d: window %d stopped at op %d '%s' (batch %lld)\n", x->rank,
                    w, op, o->name ? o->name : "?", (long long)id);
            return -1;
        }
    }
    x->counting = 0;
    rt_xwatchdog_enter(wd, -1);
    return d->ops->sync(d);
}

static int alloc_times(rt_xtimes *t, int n_iter, int n_ops)
{
    memset(t, 0, sizeof *t);
    t->n_iter = n_iter, t->n_ops = n_ops;
    size_t n = (size_t)n_iter * (size_t)n_ops;
    t->start = calloc(n ? n : 1, sizeof(double));
    t->end = calloc(n ? n : 1, sizeof(double));
    t->wall = calloc((size_t)n_iter, sizeof(double));
    t->loss = calloc((size_t)n_iter, sizeof(double));
    return t->start && t->end && t->wall && t->loss ? 0 : -1;
}

void rt_xtimes_free(rt_xtimes *t)
{
    free(t->start), free(t->end), free(t->wall), free(t->loss);
    memset(t, 0, sizeof *t);
}

/* Records window W's marks as timing I. */
static void record(rt_xexec *x, rt_xtimes *t, int i, double wall)
{
    int n = x->g->n_ops;
    t->wall[i] = wall;
    for (int op = 0; op < n; op++) {
        t->start[(size_t)i * n + op] = x->dev->ops->mark_seconds(x->dev, start_mark(op));
        t->end[(size_t)i * n + op] = x->dev->ops->mark_seconds(x->dev, end_mark(op));
    }
    t->loss[i] = rt_xaccum_loss(x);
}

/* Windows -hi_off .. batches - 1 - lo_off run every batch through every op; the ones in which
 * every op has a live batch (the steady state) are timed. */
int rt_xrun(rt_xexec *x, const rt_xrun_cfg *c, rt_xtimes *t, FILE *err)
{
    int n_ops = x->g->n_ops, timed = c->warmup + c->iterations;
    window probe = window_of(x, 0);
    window win = window_of(x, timed + probe.hi_off - probe.lo_off);
    if (alloc_times(t, timed, n_ops)) {
        fprintf(err, "exec: out of host memory for %d iterations x %d ops of timings\n", timed,
                n_ops);
        return -1;
    }
    rt_xwatchdog *wd = rt_xwatchdog_start(x->g, x->comm, c->op_timeout_s);
    if (!wd) return -1;
    t->batches = win.n_batches;
    int rc = 0, i = 0;
    for (int w = -win.hi_off; w < win.n_batches - win.lo_off && !rc; w++) {
        /* Every batch of the window is drawn and, without an H2D op, uploaded first. */
        for (int off = win.lo_off; off <= win.hi_off && !rc; off++)
            if (live(&win, (int64_t)w + off)) rc = use_batch(x, c, &win, (int64_t)w + off, err);
        if (rc || (rc = x->dev->ops->sync(x->dev))) break;
        /* Ranks start each window together so their timelines share an origin. */
        rt_xwatchdog_step(wd, "the barrier before a window");
        MPI_Barrier(MPI_COMM_WORLD);
        rt_xwatchdog_enter(wd, -1);
        double t0 = rt_pipeline_now();
        rc = one_window(x, c, &win, wd, w, err);
        double wall = rt_pipeline_now() - t0;
        if (rc) break;
        if (live(&win, (int64_t)w + win.lo_off) && live(&win, (int64_t)w + win.hi_off) && i < timed)
            record(x, t, i++, wall);
        if (w == 0 && c->dump_dir) { /* batch 0's embeddings and loss are final here */
            rt_xexec_use(x, 0);
            rc = rt_xdump_iteration(x, c->dump_dir, err);
        }
    }
    rt_xexec_use(x, -1);
    rt_xwatchdog_stop(wd);
    return rc ? -1 : 0;
}
