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
#include "state.h"
#include "watchdog.h"

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int start_mark(int op)
{
    return 1 + 2 * op;
}
static int end_mark(int op)
{
    return 2 + 2 * op;
}

static void inject_fault(const rt_xrun_cfg *c, const rt_xexec *x, int op)
{
    if (!c->fault_kind || c->fault_rank != x->rank) return;
    const char *name = x->g->ops[op].name;
    if (!name || strcmp(name, c->fault_op)) return;
    fprintf(stderr, "exec: rank %d: injected fault '%s' at op '%s'\n", x->rank, c->fault_kind,
            name);
    fflush(stderr);
    if (!strcmp(c->fault_kind, "die")) _Exit(9);
    for (;;) {
        struct timespec t = {1, 0};
        nanosleep(&t, NULL);
    }
}

static int run_op(rt_xexec *x, int op, FILE *err)
{
    switch (x->g->ops[op].role) {
    case RT_ROLE_DENSE_FWD:
    case RT_ROLE_LOSS:
    case RT_ROLE_DENSE_BWD:
    case RT_ROLE_DENSE_ALLREDUCE:
    case RT_ROLE_DENSE_UPDATE:
        return rt_xdense_run(x, op, err);
    default:
        return rt_xemb_run(x, op, err);
    }
}

static int one_iteration(rt_xexec *x, const rt_xrun_cfg *c, rt_xwatchdog *wd, int64_t it, FILE *err)
{
    const rt_graph *g = x->g;
    rt_xdev *d = x->dev;
    rt_xdev_on(d, RT_STREAM_COMPUTE);
    if (d->ops->mark(d, 0)) return -1;
    for (int op = 0; op < g->n_ops; op++) {
        const rt_op *o = &g->ops[op];
        rt_xdev_on(d, o->stream);
        for (int k = 0; k < o->n_deps; k++) {
            int dep = rt_graph_deps(g, op)[k];
            if (g->ops[dep].stream != o->stream && d->ops->wait_mark(d, end_mark(dep))) return -1;
        }
        rt_xwatchdog_enter(wd, op);
        inject_fault(c, x, op);
        if (d->ops->mark(d, start_mark(op)) || run_op(x, op, err) ||
            d->ops->mark(d, end_mark(op))) {
            fprintf(err, "exec: rank %d: iteration %lld stopped at op %d '%s'\n", x->rank,
                    (long long)it, op, o->name ? o->name : "?");
            return -1;
        }
    }
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

int rt_xrun(rt_xexec *x, const rt_xrun_cfg *c, rt_xtimes *t, FILE *err)
{
    int n_iter = c->warmup + c->iterations, n_ops = x->g->n_ops;
    if (alloc_times(t, n_iter, n_ops)) {
        fprintf(err, "exec: out of host memory for %d iterations x %d ops of timings\n", n_iter,
                n_ops);
        return -1;
    }
    rt_xwatchdog *wd = rt_xwatchdog_start(x->g, x->comm, c->op_timeout_s);
    if (!wd) return -1;
    int rc = 0;
    for (int i = 0; i < n_iter && !rc; i++) {
        int64_t it = c->first_iteration + i; /* the batch and the optimizer step follow it */
        rt_xbatch_free(&x->batch);
        rc = rt_xbatch_make(&x->batch, x->s, c->graph_batch, x->rank, it, c->data, err) ||
             rt_xexec_load_batch(x, err) || x->dev->ops->sync(x->dev);
        if (rc) break;
        x->iteration = it;
        x->counting = it == 0; /* iteration 0 is the graph's own batch: its bytes are checked */
        /* Ranks start each iteration together so their timelines share an origin. */
        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = now();
        rc = one_iteration(x, c, wd, it, err);
        t->wall[i] = now() - t0;
        if (rc) break;
        for (int op = 0; op < n_ops; op++) {
            t->start[(size_t)i * n_ops + op] = x->dev->ops->mark_seconds(x->dev, start_mark(op));
            t->end[(size_t)i * n_ops + op] = x->dev->ops->mark_seconds(x->dev, end_mark(op));
        }
        t->loss[i] = rt_dnet_loss_value(x->net);
        if (i == 0 && c->dump_dir && rt_xdump_iteration(x, c->dump_dir, err)) rc = -1;
    }
    x->counting = 0;
    rt_xwatchdog_stop(wd);
    return rc ? -1 : 0;
}
