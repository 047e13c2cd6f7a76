/* Kernels on shared host cores (simgrid_cores.h). */
#include "simgrid_cores.h"

#include "calib.h"

#include <stdlib.h>

#include <simgrid/actor.h>
#include <simgrid/exec.h>
#include <simgrid/host.h>
#include <simgrid/mutex.h>
#include <simgrid/semaphore.h>

double rt_sg_cores_slice(const rt_topology *t)
{
    const rt_calib_run *alone = t->calib ? rt_calib_run_for(t->calib, 1) : NULL;
    return t->node.core_slice > 0 ? t->node.core_slice : alone ? alone->core_slice : 0;
}

int rt_sg_cores_init(rt_sg_cores *c, const rt_topology *t, const rt_platform *p, int actors)
{
    *c = (rt_sg_cores){.shared = t->node.cores > 0, .slice = rt_sg_cores_slice(t)};
    if (!c->shared) return 0;
    c->host = calloc((size_t)p->world, sizeof *c->host);
    c->busy = calloc((size_t)p->world, sizeof *c->busy);
    c->turn = calloc((size_t)p->world, sizeof *c->turn);
    c->holding = calloc((size_t)p->world, sizeof *c->holding);
    c->used = calloc((size_t)p->world, sizeof *c->used);
    c->active = calloc((size_t)p->world, sizeof *c->active);
    if (!c->host || !c->busy || !c->turn || !c->holding || !c->used || !c->active) return -1;
    int span = p->cores_span, cores = t->node.cores;
    for (int r = 0; r < p->world; r++) {
        /* rectwin-exec's placement: the set's ranks pinned in blocks (exec/cpu_bind.c) */
        int head = r / p->devices / span * span;
        int nodes = span < p->nodes - head ? span : p->nodes - head;
        int core = rt_core_block(r - head * p->devices, nodes * p->devices, cores);
        char name[64];
        rt_platform_core_name(p, head, core, name, sizeof name);
        c->host[r] = sg_host_by_name(name);
        if (!c->host[r] || !(c->busy[r] = sg_mutex_init())) return -1;
        c->active[r] = actors;
        /* one turn token per core: a core's ranks are consecutive (blocks) */
        if (c->slice > 0 && r > 0 && c->host[r - 1] == c->host[r])
            c->turn[r] = c->turn[r - 1];
        else if (c->slice > 0 && !(c->turn[r] = sg_sem_init(1)))
            return -1;
    }
    return 0;
}

/* Turns: the rank holds its core's token while it computes, for at most one slice at a time
 * (the token queue is first come, first served), and gives it back when it waits. */
static void take_core(rt_sg_cores *c, int rank)
{
    if (c->holding[rank]) return;
    sg_sem_acquire(c->turn[rank]);
    c->holding[rank] = 1, c->used[rank] = 0;
}

static void give_core(rt_sg_cores *c, int rank)
{
    if (!c->holding[rank]) return;
    c->holding[rank] = 0;
    sg_sem_release(c->turn[rank]);
}

static void run_in_turns(rt_sg_cores *c, int rank, double seconds)
{
    while (seconds > 0) {
        take_core(c, rank);
        double run = c->slice - c->used[rank];
        if (run > seconds) run = seconds;
        sg_actor_sleep_for(run);
        seconds -= run, c->used[rank] += run;
        if (c->used[rank] >= c->slice) give_core(c, rank); /* slice over: queue again */
    }
}

/* A rank waits when every one of its stream actors waits: only then does its core go to the
 * others (exec's rank is one thread; an actor that waits while another of the rank's actors
 * computes is that thread's later op). */
void rt_sg_cores_wait(rt_sg_cores *c, int rank)
{
    if (!c->shared || !(c->slice > 0)) return;
    if (--c->active[rank] > 0) return;
    sg_actor_yield(); /* an actor of the rank woken at this instant goes on first */
    if (c->active[rank] == 0 && sg_mutex_try_lock(c->busy[rank])) {
        give_core(c, rank);
        sg_mutex_unlock(c->busy[rank]);
    }
}

void rt_sg_cores_go(rt_sg_cores *c, int rank)
{
    if (c->shared && c->slice > 0) c->active[rank]++;
}

void rt_sg_cores_resume(rt_sg_cores *c, int rank)
{
    if (!c->shared || !(c->slice > 0)) return;
    c->active[rank]++;
    /* a kernel of the rank that runs or awaits the core already takes it for the rank */
    if (!sg_mutex_try_lock(c->busy[rank])) return;
    take_core(c, rank);
    sg_mutex_unlock(c->busy[rank]);
}

int rt_sg_cores_kernel(rt_sg_cores *c, int rank, double seconds)
{
    if (!c->shared) {
        sg_actor_sleep_for(seconds);
        return 0;
    }
    if (!(seconds > 0)) return 0;
    sg_mutex_lock(c->busy[rank]);
    if (c->slice > 0) {
        run_in_turns(c, rank, seconds);
        sg_mutex_unlock(c->busy[rank]);
        return 0;
    }
    sg_exec_t e = sg_actor_exec_init(seconds * sg_host_get_speed(c->host[rank]));
    int rc = -1;
    if (e) {
        sg_exec_set_host(e, c->host[rank]);
        sg_exec_start(e);
        rc = sg_exec_wait(e) == SG_OK ? 0 : -1;
    }
    sg_mutex_unlock(c->busy[rank]);
    return rc;
}

void rt_sg_cores_free(rt_sg_cores *c, int world)
{
    for (int r = 0; c->busy && r < world; r++)
        if (c->busy[r]) sg_mutex_destroy(c->busy[r]);
    for (int r = 0; c->turn && r < world; r++)
        if (c->turn[r] && (r == 0 || c->turn[r - 1] != c->turn[r])) sg_sem_destroy(c->turn[r]);
    free(c->host);
    free(c->busy);
    free(c->turn);
    free(c->holding);
    free(c->used);
    free(c->active);
    *c = (rt_sg_cores){0};
}
