/* The scheduler's turn on one CPU (the calibration's `core_slice`): two CPU-bound threads pinned
 * to the CPU this rank runs on spin side by side, each noting when it was off the CPU (a gap of
 * over 50 us between two clock reads); the median length of their runs on the CPU is how long
 * the scheduler lets one of two computing ranks keep a core (sim/simgrid_cores.c turns). */
#if defined(__linux__) && !defined(_GNU_SOURCE)
#define _GNU_SOURCE /* pthread_setaffinity_np, CPU_SET */
#endif
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "calibrate.h"
#include "cpu_bind.h"

#ifdef __linux__
#include <sched.h>
#endif

enum { MAX_RUNS = 1 << 16 };

typedef struct spinner {
    int cpu;
    double spin_s;
    double *runs;
    int n;
} spinner;

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static void *spin(void *arg)
{
    spinner *s = arg;
#ifdef __linux__
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(s->cpu, &set);
    if (pthread_setaffinity_np(pthread_self(), sizeof set, &set)) return NULL;
#endif
    double start = now_s(), last = start, run_start = start;
    while (last - start < s->spin_s) {
        double t = now_s();
        if (t - last > 50e-6) {
            /* the first run began before the other thread started: not a whole turn */
            if (run_start > start && s->n < MAX_RUNS) s->runs[s->n++] = last - run_start;
            run_start = t;
        }
        last = t;
    }
    return NULL;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int rt_xcal_core_slice(double spin_s, double *slice_s, FILE *log)
{
    *slice_s = 0;
#ifdef __linux__
    int cpus[RT_XBIND_MAX_CPUS];
    if (rt_xbind_allowed_cpus(cpus, log) < 1) return -1;
    int cpu = cpus[0];
    spinner s[2];
    double *runs = malloc(sizeof(double) * 2 * MAX_RUNS);
    if (!runs) return -1;
    for (int i = 0; i < 2; i++)
        s[i] = (spinner){cpu, spin_s, runs + (size_t)i * MAX_RUNS, 0};
    pthread_t th[2];
    int ok[2];
    for (int i = 0; i < 2; i++)
        ok[i] = pthread_create(&th[i], NULL, spin, &s[i]) == 0;
    for (int i = 0; i < 2; i++)
        if (ok[i]) pthread_join(th[i], NULL);
    int started = ok[0] + ok[1];
    /* both threads' runs, gathered after the first thread's */
    memmove(runs + s[0].n, s[1].runs, sizeof(double) * (size_t)s[1].n);
    int n = s[0].n + s[1].n;
    int rc = -1;
    if (started == 2 && n >= 10) {
        qsort(runs, (size_t)n, sizeof *runs, cmp_double);
        *slice_s = n % 2 ? runs[n / 2] : 0.5 * (runs[n / 2 - 1] + runs[n / 2]);
        rc = 0;
        if (log)
            fprintf(log,
                    "calibrate: core_slice %.3f ms (median of %d runs of two threads on cpu %d)\n",
                    *slice_s * 1e3, n, cpu);
    } else if (log) {
        fprintf(log, "calibrate: core_slice not measured: %d runs of two threads on cpu %d\n", n,
                cpu);
    }
    free(runs);
    return rc;
#else
    (void)spin_s, (void)log;
    return -1;
#endif
}
