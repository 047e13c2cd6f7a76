/* rectwin-calibrate: measures one machine with rectwin-exec's own device and comm backends,
 * so that calibration and execution time the same code, and writes the tables of
 * core/calib.h as one run of a topology's `calibration:` section. It runs under mpirun: every
 * rank measures its kernels at the same time as the others (the contention a run of that many
 * ranks sees), and the collectives run over the world and its power-of-two subgroups.
 *
 * One concept per file: calibrate_main.c (the command, the section's text), calibrate_time.c
 * (the timing harness), calibrate_gemm.c, calibrate_kernels.c (memory-bound and compute
 * kernels, dispatch and host cost), calibrate_comm.c (collectives). */
#ifndef RT_XCALIBRATE_H
#define RT_XCALIBRATE_H

#include <stddef.h>
#include <stdio.h>

#include "comm.h"
#include "device.h"

typedef struct rt_xcal_opts {
    int quick;        /* reduced grids and sizes, for CI */
    double max_bytes; /* largest collective message per rank */
    double target_s;  /* time one measurement point aims at */
    int min_reps, max_reps;
    int passes; /* sweeps of every family; each point keeps its fastest (see calibrate_time.c) */
} rt_xcal_opts;

typedef struct rt_xcal {
    rt_xdev *dev;
    rt_xcomm *comm;
    int rank, world;
    rt_xcal_opts o;
    FILE *out; /* rank 0: the run's YAML (the items under `runs:`), others NULL */
    FILE *log; /* progress (rank 0), or NULL */
    /* The passes: every pass makes the same timed calls in the same order; call I keeps the
     * fastest of its passes in best[I], and only the last pass writes (out is NULL before). */
    int pass;
    long call, n_best, cap_best; /* n_best: the first pass's calls; cap_best: best's size */
    double *best;
} rt_xcal;

/* One repetition of the measured operation; 0 or -1. */
typedef int (*rt_xcal_fn)(rt_xcal *c, void *arg);

/* Seconds of FN on this device: one untimed call, then a repetition count agreed by every rank
 * (so ranks measure at the same time) run between two device marks; the mean per call of each
 * rank, then the median over ranks; the fastest over the passes so far. Every rank calls it. */
int rt_xcal_time_kernel(rt_xcal *c, rt_xcal_fn fn, void *arg, double *seconds);
/* Seconds of a collective FN: ranks leave a barrier, time one call each; a repetition lasts
 * as long as its slowest rank; the median over repetitions; the fastest over the passes so
 * far. Every rank calls it. */
int rt_xcal_time_coll(rt_xcal *c, rt_xcal_fn fn, void *arg, double *seconds);

/* The median of V[0..N) (V is sorted in place). */
double rt_xcal_median(double *v, int n);

/* Writes "KEY: [v0, v1, ...]" at INDENT spaces to C->out (rank 0), eight values a line. */
void rt_xcal_list(rt_xcal *c, int indent, const char *key, const double *v, int n);

/* The scheduler's turn on this rank's CPU (calibrate_slice.c): two threads pinned to its first
 * allowed CPU spin for SPIN_S seconds; *SLICE_S receives the median length of their runs on it.
 * Returns 0, or -1 (no affinity on this system, or too few turns seen) with a line on LOG. */
int rt_xcal_core_slice(double spin_s, double *slice_s, FILE *log);

/* The parts of a run; each writes its YAML block on rank 0 and returns 0 or -1. */
int rt_xcal_overheads(rt_xcal *c);
/* The GEMM grid up to MAX_SIZE in each dimension, measured once on the device as it is opened
 * and written as the table of each dtype in DTYPES (N_DTYPES names): the caller opens the
 * device in each dtype's math mode, or once for all when it runs every mode in fp32. */
int rt_xcal_gemm(rt_xcal *c, const char *const *dtypes, int n_dtypes, double max_size);
int rt_xcal_kernels(rt_xcal *c);
int rt_xcal_collectives(rt_xcal *c);

/* Bytes of data a calibration cycles through so that no call finds what the calls before it
 * touched in cache: twice the device's last-level cache, and at least AT_LEAST. WHAT names the
 * data in the log line of a device that reports no cache size. */
size_t rt_xcal_cold_bytes(rt_xcal *c, size_t at_least, const char *what);

/* A device buffer of BYTES filled with small pseudo-random floats (or zeros), or NULL after a
 * message on stderr. */
void *rt_xcal_alloc(rt_xcal *c, size_t bytes, int zero);

#endif
