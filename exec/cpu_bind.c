/* Pinning CPU-device ranks to their block of CPUs (cpu_bind.h). */
#if defined(__linux__) && !defined(_GNU_SOURCE)
#define _GNU_SOURCE /* sched_getaffinity, sched_setaffinity, CPU_SET */
#endif
#include "cpu_bind.h"

#include <errno.h>
#include <string.h>

#include "topology.h"

#ifdef __linux__
#include <sched.h>
_Static_assert(CPU_SETSIZE <= RT_XBIND_MAX_CPUS, "room for every CPU of a cpu_set_t");
#endif

int rt_xbind_parse(const char *s, rt_xbind *out, const char *who, FILE *err)
{
    if (!strcmp(s, "block"))
        *out = RT_XBIND_BLOCK;
    else if (!strcmp(s, "none"))
        *out = RT_XBIND_NONE;
    else {
        fprintf(err,
                "%s: --cpu-bind '%s'; allowed: block (local ranks pinned in consecutive "
                "blocks of the CPUs they may use), none (the kernel places them)\n",
                who, s);
        return -1;
    }
    return 0;
}

#ifdef __linux__
int rt_xbind_allowed_cpus(int *cpus, FILE *err)
{
    cpu_set_t set;
    CPU_ZERO(&set);
    if (sched_getaffinity(0, sizeof set, &set)) {
        fprintf(err, "exec: sched_getaffinity: %s\n", strerror(errno));
        return -1;
    }
    int n = 0;
    for (int c = 0; c < CPU_SETSIZE; c++)
        if (CPU_ISSET(c, &set)) cpus[n++] = c;
    return n;
}

int rt_xbind_apply(rt_xbind policy, int local_rank, int local_size, char *desc, size_t desc_size,
                   FILE *err)
{
    char none[8];
    if (!desc) desc = none, desc_size = sizeof none;
    if (policy == RT_XBIND_NONE) {
        snprintf(desc, desc_size, "none");
        return 0;
    }
    int cpus[RT_XBIND_MAX_CPUS];
    int n = rt_xbind_allowed_cpus(cpus, err);
    if (n < 0) return -1;
    if (n == 1) { /* the launcher bound this rank: its choice stands */
        snprintf(desc, desc_size, "block: bound by the launcher to cpu %d", cpus[0]);
        return 0;
    }
    int first = rt_core_block(local_rank, local_size, n);
    int last = local_size > n ? first : rt_core_block(local_rank + 1, local_size, n) - 1;
    cpu_set_t set;
    CPU_ZERO(&set);
    for (int i = first; i <= last; i++)
        CPU_SET(cpus[i], &set);
    if (sched_setaffinity(0, sizeof set, &set)) {
        fprintf(err, "exec: sched_setaffinity (local rank %d to cpus %d-%d): %s\n", local_rank,
                cpus[first], cpus[last], strerror(errno));
        return -1;
    }
    int at = snprintf(desc, desc_size, "block: %d local ranks on %d cpus, local rank %d on cpu %d",
                      local_size, n, local_rank, cpus[first]);
    if (last > first && at > 0 && (size_t)at < desc_size)
        snprintf(desc + at, desc_size - (size_t)at, "-%d", cpus[last]);
    return 0;
}
#else
int rt_xbind_allowed_cpus(int *cpus, FILE *err)
{
    (void)cpus;
    if (err) fprintf(err, "exec: no CPU affinity on this system\n");
    return -1;
}

int rt_xbind_apply(rt_xbind policy, int local_rank, int local_size, char *desc, size_t desc_size,
                   FILE *err)
{
    (void)policy, (void)local_rank, (void)local_size, (void)err;
    if (desc) snprintf(desc, desc_size, "none (no CPU affinity on this system)");
    return 0;
}
#endif
