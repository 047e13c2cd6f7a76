/* A sweep table: the CSV that `rectwin sweep` writes, one row per point with the swept keys
 * (dotted scenario paths such as topology.nodes, plan.name) and the summary figures
 * (samples_per_s, iteration_time_s, phase.<phase>_s, ...). Any CSV with a header will do: the
 * plots find their columns by name. */
#ifndef RT_SWEEP_READ_H
#define RT_SWEEP_READ_H

#include <stdio.h>

#include "csv_read.h"

typedef struct rt_sweep {
    rt_csv c;
    rt_csv_record header;
    int n_cols;
    long n_rows;
    rt_csv_field *cell; /* [row * n_cols + col] */
} rt_sweep;

/* Loads PATH; every row must have as many fields as the header. 0, or -1 with a message. */
int rt_sweep_load(rt_sweep *t, const char *path, FILE *err);
void rt_sweep_free(rt_sweep *t);

/* Index of column NAME, or -1. */
int rt_sweep_col(const rt_sweep *t, const char *name);
/* The first of the NULL-terminated NAMES that is a column, or -1. */
int rt_sweep_col_any(const rt_sweep *t, const char *const *names);
const char *rt_sweep_text(const rt_sweep *t, long row, int col);
/* The line of the file where ROW starts (the header is line 1). */
int rt_sweep_line(const rt_sweep *t, long row);
/* The cell as a finite number: 0, or -1 when it is empty or not a number (a failed point). */
int rt_sweep_number(const rt_sweep *t, long row, int col, double *out);

/* The phase a column holds, in BUF: `phase.<phase>_s` (what rectwin sweep writes) or
 * `phases.<phase>` (the keys of summary.json); NULL when NAME is no phase column. */
const char *rt_sweep_phase(const char *name, char *buf, size_t size);

/* Parses "--by COL[,COL...]" into COLS (at most MAX): every name must be a column, an unknown
 * one is reported (on stderr, as every unknown name is) with the closest column. Returns the
 * count, or -1. */
int rt_sweep_by(const rt_sweep *t, const char *by, int *cols, int max, const char *who, FILE *err);
/* The values of COLS in ROW joined by " / ", in BUF. */
const char *rt_sweep_label(const rt_sweep *t, long row, const int *cols, int n, char *buf,
                           size_t size);
/* The column of a swept key whose value differs between rows A and B (a dotted name that is
 * not a summary figure), other than those in COLS; -1 when none. Helps name what --by lacks. */
int rt_sweep_differing(const rt_sweep *t, long a, long b, const int *cols, int n);

#endif
