/* Where a CPU-device rank runs: the local ranks (those of one machine) split the CPUs the launcher
 * let them use in consecutive blocks, as the cuda device gives each local rank its own GPU.
 *
 * Why pin at all: unpinned, the kernel's load balancer decides per iteration which ranks share a
 * core, and with more ranks than cores that decides the timeline. A rank that waits in an Open
 * MPI collective polls and yields; the scheduler then keeps a computing rank on the core and
 * starves the poller, so when the two ranks that leave a collective first sit on different
 * cores, the other two wait until they stop computing (measured with 4 ranks on 2 cores:
 * experiments/measurements/cpu/stagger/). Pinned in blocks, ranks r and r + 1 share a core, the
 * partners that leave together compute on one core, and every run shows the same timeline: the
 * one the SimGrid engine's `node.cores` model draws (sim/simgrid_cores.c). */
#ifndef RT_XCPU_BIND_H
#define RT_XCPU_BIND_H

#include <stddef.h>
#include <stdio.h>

typedef enum { RT_XBIND_BLOCK, RT_XBIND_NONE } rt_xbind;

/* "block" or "none". Returns 0, or -1 with what is allowed on ERR. */
int rt_xbind_parse(const char *s, rt_xbind *out, const char *who, FILE *err);

/* The CPUs the calling thread may run on, in increasing order, into CPUS (room for
 * RT_XBIND_MAX_CPUS). Returns their count, or -1 with the reason on ERR. */
enum { RT_XBIND_MAX_CPUS = 1024 };
int rt_xbind_allowed_cpus(int *cpus, FILE *err);

/* Pins the calling process, local rank LOCAL_RANK of LOCAL_SIZE, to its block of the CPUs it may
 * run on now. A launcher that already bound the rank to one CPU keeps its choice. DESC (may be
 * NULL) receives what was done ("block: 4 local ranks on 2 cpus, rank 0 on cpu 0"). Returns 0,
 * or -1 with the reason on ERR. */
int rt_xbind_apply(rt_xbind policy, int local_rank, int local_size, char *desc, size_t desc_size,
                   FILE *err);

#endif
