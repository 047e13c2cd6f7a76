#include "watchdog.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "pipeline.h"

struct rt_xwatchdog {
    const rt_graph *g;
    rt_xcomm *c;
    double limit;
    atomic_int op;
    const char *_Atomic what; /* a watched step that is no op of the graph, or NULL */
    _Atomic double since;
    atomic_int stop;
    pthread_t thread;
};

static void *watch(void *arg)
{
    rt_xwatchdog *w = arg;
    struct timespec tick = {0, 50 * 1000 * 1000};
    while (!atomic_load(&w->stop)) {
        nanosleep(&tick, NULL);
        int op = atomic_load(&w->op);
        const char *what = atomic_load(&w->what);
        double t = rt_pipeline_now() - atomic_load(&w->since);
        if ((op < 0 && !what) || t < w->limit) continue;
        if (op >= 0) {
            const rt_op *o = &w->g->ops[op];
            fprintf(stderr,
                    "exec: rank %d: op %d '%s' (phase %s) has not finished after %.1f s: a peer "
                    "died or the collective hangs; aborting every rank\n",
                    w->c->rank, op, o->name ? o->name : "?", w->g->phases[o->phase], t);
        } else {
            fprintf(stderr,
                    "exec: rank %d: %s has not finished after %.1f s: a peer died or stopped; "
                    "aborting every rank\n",
                    w->c->rank, what, t);
        }
        fflush(stderr);
        w->c->ops->abort(w->c, 3);
        _Exit(3); /* abort should not return; never let a rank linger */
    }
    return NULL;
}

rt_xwatchdog *rt_xwatchdog_start(const rt_graph *g, rt_xcomm *c, double limit_s)
{
    rt_xwatchdog *w = calloc(1, sizeof *w);
    if (!w) {
        fprintf(stderr, "exec: out of memory starting the watchdog\n");
        return NULL;
    }
    w->g = g, w->c = c, w->limit = limit_s;
    atomic_init(&w->op, -1);
    atomic_init(&w->what, NULL);
    atomic_init(&w->since, rt_pipeline_now());
    atomic_init(&w->stop, 0);
    if (pthread_create(&w->thread, NULL, watch, w)) {
        fprintf(stderr, "exec: cannot start the watchdog thread\n");
        free(w);
        return NULL;
    }
    return w;
}

void rt_xwatchdog_enter(rt_xwatchdog *w, int op)
{
    atomic_store(&w->since, rt_pipeline_now());
    atomic_store(&w->what, NULL);
    atomic_store(&w->op, op);
}

void rt_xwatchdog_step(rt_xwatchdog *w, const char *what)
{
    atomic_store(&w->since, rt_pipeline_now());
    atomic_store(&w->op, -1);
    atomic_store(&w->what, what);
}

void rt_xwatchdog_stop(rt_xwatchdog *w)
{
    if (!w) return;
    atomic_store(&w->stop, 1);
    pthread_join(w->thread, NULL);
    free(w);
}
