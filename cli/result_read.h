/* Reading a result directory back: summary.json and ops.csv as core/result_write.c writes
 * them, whichever engine (sim or exec) made them. The files come from other programs and other
 * machines, so every field is checked and every problem is reported as FILE:LINE:COL. */
#ifndef RT_RESULT_READ_H
#define RT_RESULT_READ_H

#include <stdio.h>

#include "dtype.h"

enum { RT_SUMMARY_N_METRICS = 7 };
/* The headline metrics every summary.json must have, in the order of rt_summary.metric. */
extern const char *const rt_summary_metric_names[RT_SUMMARY_N_METRICS];
enum {
    RT_M_ITERATION_TIME,
    RT_M_SAMPLES_PER_S,
    RT_M_MFU,
    RT_M_MBU,
    RT_M_COMM_TIME,
    RT_M_EXPOSED_COMM,
    RT_M_PEAK_HBM
};

/* summary.json's "hardware" object: the device and fabric the result was computed for. */
typedef struct rt_summary_hw {
    int present; /* 0: written before rectwin recorded it */
    char device[64];
    double peak_flops[RT_DT_COUNT]; /* 0 where the device has no peak for the dtype */
    double hbm_bw, launch_overhead_s;
    int devices_per_node;
    double scale_up_bw, nic_bw_per_device, collective_latency_s;
} rt_summary_hw;

/* The ranks a collective op spans (core/graph.h rt_group). */
typedef struct rt_summary_group {
    long op;
    int size, stride;
} rt_summary_group;

typedef struct rt_summary {
    char engine[64];
    /* What the title of a plot names; "?" (or -1) when summary.json lacks them. */
    char scenario[128], topology[128], plan[64];
    long nodes, ranks;
    double metric[RT_SUMMARY_N_METRICS]; /* NAN where the writer stored null */
    int n_phases;
    char **phase;
    double *phase_s;
    rt_summary_hw hw;
    int n_groups;
    rt_summary_group *group;
} rt_summary;

/* Loads PATH into S. 0, or -1 with a message on ERR (S is then empty). */
int rt_summary_load(rt_summary *s, const char *path, FILE *err);
void rt_summary_free(rt_summary *s);
/* Index of phase NAME in S, or -1. */
int rt_summary_phase(const rt_summary *s, const char *name);
/* The group of collective op OP, or NULL when summary.json does not say. */
const rt_summary_group *rt_summary_group_of(const rt_summary *s, long op);

/* One row of ops.csv. Columns beyond the five every reader needs (rank, name, phase, start_s,
 * end_s) are optional: an absent text column reads as "", an absent number as NAN (op: -1). */
typedef struct rt_op_row {
    long rank, op;
    const char *name, *phase, *stream, *type; /* into the table's buffer */
    double start, end, dur;
    double flops, bytes;
    long idx; /* row number in file order */
    int occ;  /* occurrence of (rank, name, phase) in file order, from 0 (set by compare) */
} rt_op_row;

typedef struct rt_ops {
    char *buf; /* the whole file; fields are decoded in place and NUL-terminated */
    rt_op_row *row;
    long n;
    int has_op, has_stream, has_type, has_cost; /* optional columns present (cost: both) */
} rt_ops;

int rt_ops_load(rt_ops *t, const char *path, FILE *err);
void rt_ops_free(rt_ops *t);

/* DIR's summary.json and ops.csv, after checking DIR's manifest (a set an interrupted run
 * left mixed is refused). WHO prefixes the out-of-memory message. 0, or -1 with a message. */
int rt_result_dir_load(const char *dir, rt_summary *s, rt_ops *t, const char *who, FILE *err);

#endif
