/* Kernels on shared host cores (simgrid_cores.h). */
#include "simgrid_cores.h"

#include <stdlib.h>

#include <simgrid/actor.h>
#include <simgrid/exec.h>
#include <simgrid/host.h>
#include <simgrid/mutex.h>

int rt_sg_cores_init(rt_sg_cores *c, const rt_topology *t, const rt_platform *p)
{
    *c = (rt_sg_cores){.shared = t->node.cores > 0};
    if (!c->shared) return 0;
    c->host = calloc((size_t)p->world, sizeof *c->host);
    c->busy = calloc((size_t)p->world, sizeof *c->busy);
    if (!c->host || !c->busy) return -1;
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
    }
    return 0;
}

int rt_sg_cores_kernel(rt_sg_cores *c, int rank, double seconds)
{
    if (!c->shared) {
        sg_actor_sleep_for(seconds);
        return 0;
    }
    if (!(seconds > 0)) return 0;
    sg_mutex_lock(c->busy[rank]);
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
    free(c->host);
    free(c->busy);
    *c = (rt_sg_cores){0};
}
