/* A predicted result directory against a measured one (DESIGN.md section 8): ops matched by
 * (rank, name, phase), phases by name, relative errors and MAPEs. `rectwin compare` prints it,
 * `rectwin plot compare` draws it. */
#ifndef RT_COMPARISON_H
#define RT_COMPARISON_H

#include <stdio.h>

#include "result_read.h"

typedef struct rt_cmp_pair {
    const rt_op_row *p, *m;
    double abs_err_s, rel;
} rt_cmp_pair;

typedef struct rt_cmp_phase {
    const char *name;
    double pred, meas; /* NAN when the phase is absent on that side */
    double rel;
} rt_cmp_phase;

typedef struct rt_comparison {
    const char *pred_dir, *meas_dir; /* set by the caller */
    rt_summary pred, meas;
    rt_ops pred_ops, meas_ops;
    rt_cmp_pair *pair; /* in the predicted file's order */
    const rt_op_row **pred_only, **meas_only;
    long n_pair, n_pred_only, n_meas_only;
    rt_cmp_phase *phases; /* the predicted phases in their order, then the measured-only */
    int n_phases;
    const rt_cmp_pair **worst; /* the n_worst largest |predicted - measured| in seconds */
    long n_worst;
    double ops_mape, phases_mape; /* percent; NAN when nothing had a relative error */
    long ops_mape_n, phases_mape_n;
} rt_comparison;

/* (pred - meas) / meas; NAN when undefined: a measured 0, or a value missing on either side. */
double rt_cmp_rel_err(double pred, double meas);

/* Loads both directories of C and compares them, keeping the TOP worst ops. WHO prefixes the
 * messages that name no file. 0, or -1 with a message on ERR. */
int rt_comparison_run(rt_comparison *c, long top, const char *who, FILE *err);
void rt_comparison_free(rt_comparison *c);

#endif
