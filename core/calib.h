/* Calibration tables of a topology (its optional `calibration:` section, written by
 * `rectwin calibrate`): what one machine measured with rectwin-exec's own device and comm
 * backends. Tables, not single numbers: GEMM rate over an (m, n, k) grid per dtype; achieved
 * bytes/s of memory-bound kernels against bytes per launch; FLOP/s of compute kernels that are
 * not GEMMs against FLOPs per launch; seconds of each collective against its size per group
 * size; the dispatch cost per op and the host cost per iteration.
 *
 * A machine is measured once per number of ranks running at the same time ("runs"): ranks that
 * share cores or memory bandwidth see other curves than a rank alone. rt_calib_run_for picks
 * the run a scenario uses.
 *
 * All values are in base units (bytes, seconds, bytes/s, FLOP/s). Curves are interpolated
 * linearly in log-log space (core/calib_interp.c, GSL). */
#ifndef RT_CALIB_H
#define RT_CALIB_H

#include <gsl/gsl_interp.h>

#include "dtype.h"

struct rt_cfg;
struct fy_node;

/* y against x, both > 0, x strictly increasing; log arrays and the GSL interpolator are built
 * at parse time. */
typedef struct rt_curve {
    int n;
    double *x, *y;
    double *lx, *ly;
    gsl_interp *interp; /* NULL when n < 2 */
} rt_curve;

/* Achieved FLOP/s of a GEMM on a full (m, n, k) grid; rate[(im * nn + in) * nk + ik]. */
typedef struct rt_gemm_table {
    rt_dtype dtype;
    int nm, nn, nk;
    double *m, *n, *k;
    double *rate;
    double *lm, *ln, *lk, *lrate; /* logs */
} rt_gemm_table;

/* Memory-bound kernel families (bytes/s against bytes per launch) and compute kernels that
 * are not GEMMs (FLOP/s against FLOPs per launch). The names are the YAML's. */
typedef enum {
    RT_CK_GATHER_POOL, /* embedding gather + pool (and sequence lookup) */
    RT_CK_SPARSE_SGD,  /* scatter + fused optimizer, one family per optimizer */
    RT_CK_SPARSE_ADAGRAD,
    RT_CK_SPARSE_ROWWISE_ADAGRAD,
    RT_CK_SPARSE_ADAM,
    RT_CK_UNIQUE,      /* unique with inverse */
    RT_CK_SORT,        /* radix sort of keys (bucketize by owner) */
    RT_CK_ELEMENTWISE, /* y += a x and other pointwise passes */
    RT_CK_PERMUTE,     /* row gather / scatter-add into another order */
    RT_CK_NORM,        /* layer norm */
    RT_CK_SOFTMAX,
    RT_CK_DENSE_ADAM, /* the dense optimizer step */
    RT_CK_SILU,       /* x sigmoid(x): a transcendental per element, compute-bound on a CPU */
    RT_CK_SILU_BWD,
    RT_CK_ATTENTION,       /* rate: jagged causal attention (HSTU) forward */
    RT_CK_ATTENTION_BWD,   /* rate: its backward */
    RT_CK_INTERACTION,     /* rate: DLRM pairwise dot interaction forward */
    RT_CK_INTERACTION_BWD, /* rate: its backward */
    RT_CK_SAMPLED_SOFTMAX, /* rate: sampled-softmax logits and their gradients */
    RT_CK_COUNT
} rt_calib_kernel;

typedef struct rt_kernel_curve {
    rt_calib_kernel kernel;
    int dim;     /* 0: not tagged */
    int pooling; /* 0: not tagged */
    rt_curve c;  /* x: bytes (or FLOPs) per launch; y: bytes/s (or FLOP/s) */
} rt_kernel_curve;

typedef enum {
    RT_CC_ALLTOALL,
    RT_CC_ALLREDUCE,
    RT_CC_ALLGATHER,
    RT_CC_REDUCE_SCATTER,
    RT_CC_SENDRECV,
    RT_CC_COUNT
} rt_calib_coll;

/* Seconds of one collective against its nccl-tests size (bytes per rank), group of RANKS. */
typedef struct rt_coll_curve {
    rt_calib_coll op;
    int ranks;
    rt_curve c;
} rt_coll_curve;

typedef struct rt_calib_run {
    int ranks;         /* ranks that ran at the same time on the measured machine */
    char *cpu_bind;    /* where the cpu device pinned them (rank 0's), NULL when not recorded */
    double core_slice; /* cpu device, 1 rank: the scheduler's turn on a shared core, 0: none */
    double dispatch_s;
    double host_per_iteration_s;
    int n_gemm;
    rt_gemm_table *gemm;
    int n_kernels;
    rt_kernel_curve *kernels;
    int n_colls;
    rt_coll_curve *colls;
} rt_calib_run;

typedef struct rt_calib {
    char *date, *host, *device, *backends, *libraries, *command;
    int n_runs;
    rt_calib_run *runs; /* sorted by ranks */
} rt_calib;

extern const char *const rt_calib_kernel_names[];
extern const char *const rt_calib_coll_names[];
/* 1 for the FLOP/s families (attention, interaction), 0 for bytes/s. */
int rt_calib_kernel_is_rate(rt_calib_kernel k);

/* Parses a `calibration:` mapping into a new rt_calib. Errors are located (file:line:col, key,
 * what is allowed): unsorted or non-positive curve points, a GEMM grid whose value count is
 * not m x n x k, unknown kernel or collective names, duplicate runs. NULL on error. */
rt_calib *rt_calib_parse(struct rt_cfg *cfg, struct fy_node *map);
void rt_calib_free(rt_calib *c);

/* The run a scenario of WORLD ranks uses: the one measured with WORLD ranks, else the largest
 * below it (a machine's contention does not grow past the ranks it holds), else the smallest. */
const rt_calib_run *rt_calib_run_for(const rt_calib *c, int world);

/* ---- interpolation (calib_interp.c) ---------------------------------------------------- */

/* Builds the log arrays and the GSL interpolator of C (points already validated). */
int rt_curve_prepare(rt_curve *c);
void rt_curve_free(rt_curve *c);
/* y(x), linear in log-log space between points, constant beyond the ends. */
double rt_curve_eval(const rt_curve *c, double x);

/* Seconds for BYTES through a bytes/s curve: below the smallest measured launch the time of
 * that launch (a launch costs at least its fixed part), above the largest the largest
 * launch's rate. The same for FLOP/s curves with FLOPs. */
double rt_curve_time_of_rate(const rt_curve *c, double amount);
/* Seconds of a collective of BYTES through a seconds curve: below the smallest size the
 * smallest size's time, above the largest size proportional to the bytes. */
double rt_curve_time_of_seconds(const rt_curve *c, double bytes);

int rt_gemm_table_prepare(rt_gemm_table *g);
void rt_gemm_table_free(rt_gemm_table *g);
/* Achieved FLOP/s at (M, N, K): trilinear in (log m, log n, log k) of log rate, each
 * coordinate clamped to the grid. */
double rt_gemm_table_rate(const rt_gemm_table *g, double m, double n, double k);

/* The table of DTYPE in RUN, or NULL. */
const rt_gemm_table *rt_calib_gemm(const rt_calib_run *run, rt_dtype dtype);
/* The curve of KERNEL nearest to (DIM, POOLING) in log distance (0 = no preference), or NULL. */
const rt_curve *rt_calib_kernel_curve(const rt_calib_run *run, rt_calib_kernel kernel, double dim,
                                      double pooling);
/* Seconds of collective OP on a group of RANKS of BYTES: the curve of that group size, else
 * log-linear between the nearest measured group sizes around it; -1 when RANKS is outside
 * the measured group sizes (the caller falls back to its model). */
double rt_calib_coll_time(const rt_calib_run *run, rt_calib_coll op, int ranks, double bytes);

#endif
