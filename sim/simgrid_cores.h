/* Kernels of CPU-device ranks on their node's shared host cores (the topology's `node.cores`).
 * Without the key every kernel sleeps its time, as each device computes on its own. With it,
 * each rank is pinned to one core, as rectwin-exec's cpu device pins its ranks (consecutive
 * ranks in blocks, exec/cpu_bind.c: ranks 0 and 1 of 4 on core 0 of 2), and a kernel that takes
 * t seconds alone is an execution of t x core speed FLOPs on that core, a one-core host
 * ("core-N-K", simgrid_platform.c): the ranks computing on a core split it evenly, so two ranks
 * on one core each take twice their time while a rank alone on the other takes its own. A rank
 * waiting in a collective executes nothing and takes no core: Open MPI, oversubscribed, yields
 * while it waits (measured: experiments/measurements/cpu/core-sharing/). Pinned in blocks, the
 * ranks that leave a collective together share a core, so none of them is held in the
 * collective while another computes (experiments/measurements/cpu/stagger/). A rank is one
 * thread, as rectwin-exec's cpu device: its kernels run one at a time whatever their stream.
 * With `node.cores_nodes` K, the ranks of K consecutive nodes share the first one's cores: K
 * nodes emulated on one machine, whose collectives still run between nodes.
 *
 * With `node.core_slice` s, the ranks of a core take turns instead of splitting it at every
 * instant, as the host's scheduler runs them: a rank that computes holds its core for up to s
 * (across kernels: exec's rank does not stop between ops), then queues behind the core's other
 * ranks; a rank that waits (in a collective, or for another stream) gives its core up; and a rank
 * whose collective has completed needs its core back to return from it, so it leaves the
 * collective only when its core-mate's turn ends. Two ranks with equal work on one core then end
 * up to s apart, and the first to leave a collective computes while the other is still in it,
 * as measured (experiments/measurements/cpu/stagger/). */
#ifndef RT_SIMGRID_CORES_H
#define RT_SIMGRID_CORES_H

#include <simgrid/forward.h>

#include "simgrid_platform.h"
#include "topology.h"

typedef struct rt_sg_cores {
    int shared;       /* the topology sets node.cores */
    sg_host_t *host;  /* [rank] the core it is pinned to */
    sg_mutex_t *busy; /* [rank] held while one of its kernels runs */
    double slice;     /* node.core_slice: turns of this length; 0: even sharing */
    sg_sem_t *turn;   /* [rank] its core's token (slice > 0; shared by the core's ranks) */
    int *holding;     /* [rank] holds its core's token */
    double *used;     /* [rank] seconds of its current turn used */
    int *active;      /* [rank] its stream actors that do not wait */
} rt_sg_cores;

/* The turn a core's ranks take: the topology's node.core_slice, else the one its calibration
 * measured (the 1-rank run's core_slice), else 0 (even sharing). */
double rt_sg_cores_slice(const rt_topology *t);

/* Looks each rank's core host up; ACTORS: the stream actors of each rank. Returns 0, or -1 when a
 * SimGrid handle could not be made or memory ran out. Call it inside the simulation. */
int rt_sg_cores_init(rt_sg_cores *c, const rt_topology *t, const rt_platform *p, int actors);

/* Runs a kernel of RANK that takes SECONDS alone on one core. Returns 0, or -1 when SimGrid
 * reports a failed execution. */
int rt_sg_cores_kernel(rt_sg_cores *c, int rank, double seconds);

/* One of RANK's stream actors starts to wait (a collective, or an op on another stream), or
 * ends: with turns, the rank gives its core up once all of its actors wait. */
void rt_sg_cores_wait(rt_sg_cores *c, int rank);

/* The actor that waited goes on (its dependency is done). */
void rt_sg_cores_go(rt_sg_cores *c, int rank);

/* The actor's collective has completed: it goes on, and with turns the rank takes its core
 * back before it returns from the collective (the time it waits is the collective's). */
void rt_sg_cores_resume(rt_sg_cores *c, int rank);

void rt_sg_cores_free(rt_sg_cores *c, int world);

#endif
