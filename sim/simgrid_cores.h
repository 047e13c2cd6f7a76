/* Kernels of CPU-device ranks on their node's shared host cores (the topology's `node.cores`).
 * Without the key every kernel sleeps its time, as each device computes on its own. With it,
 * a kernel that takes t seconds alone on one core is an execution of t x core speed FLOPs on
 * the node's host ("cpu-N", `node.cores` cores): SimGrid's CPU model gives each execution at
 * most one core and splits the cores evenly among the executions running on the host, so 4
 * ranks computing on 2 cores each take twice their time and 2 of them once. A rank waiting in
 * a collective executes nothing and takes no core: Open MPI, oversubscribed, yields while it
 * waits (measured: experiments/measurements/cpu/core-sharing/). A rank is one thread, as
 * rectwin-exec's cpu device: its kernels run one at a time whatever their stream. With
 * `node.cores_nodes` K, the ranks of K consecutive nodes compute on the first one's host: K
 * nodes emulated on one machine, whose collectives still run between nodes. */
#ifndef RT_SIMGRID_CORES_H
#define RT_SIMGRID_CORES_H

#include <simgrid/forward.h>

#include "simgrid_platform.h"
#include "topology.h"

typedef struct rt_sg_cores {
    int shared;       /* the topology sets node.cores */
    sg_host_t *host;  /* [rank] its node's cpu host */
    sg_mutex_t *busy; /* [rank] held while one of its kernels runs */
} rt_sg_cores;

/* Looks the node hosts up in HOSTS (the platform's hosts, by index). Returns 0, or -1 when a
 * SimGrid handle could not be made or memory ran out. Call it inside the simulation. */
int rt_sg_cores_init(rt_sg_cores *c, const rt_topology *t, const rt_platform *p,
                     const sg_host_t *hosts);

/* Runs a kernel of RANK that takes SECONDS alone on one core. Returns 0, or -1 when SimGrid
 * reports a failed execution. */
int rt_sg_cores_kernel(rt_sg_cores *c, int rank, double seconds);

void rt_sg_cores_free(rt_sg_cores *c, int world);

#endif
