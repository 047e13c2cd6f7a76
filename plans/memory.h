/* Per-device HBM feasibility, for every plan (called from plans/pipeline.c after the plan and
 * the overlap pass). Plans fill g->peak_hbm_bytes with their tables, optimizer state, AlltoAll
 * buffers and the dense side (plans/plan_common.c: weights and optimizer state, activations,
 * sampled-softmax negatives); this adds what only the overlap pass knows (the in-flight
 * batch's buffers), then refuses a plan that does not fit (plan.memory: refuse, the default)
 * or warns (plan.memory: warn), with the numbers of the fullest rank. */
#ifndef RT_MEMORY_H
#define RT_MEMORY_H

#include <stdio.h>

#include "graph.h"
#include "scenario.h"
#include "workload.h"

/* Bytes of the fullest representative rank, by component. */
typedef struct rt_memory_report {
    int rank;
    double total;    /* g->peak_hbm_bytes of that rank */
    double capacity; /* device HBM */
    double sparse;   /* embedding tables, optimizer state, the plan's exchange buffers */
    double weights;  /* dense weights, gradients, optimizer state */
    double activations;
    double negatives; /* sampled softmax */
    double overlap;   /* in-flight batch (pipeline, semi_async) */
} rt_memory_report;

/* Adds the overlap buffers to G's per-rep peak, then checks it against the device. Returns 0
 * (fits, or warned), or -1 after printing why the plan does not fit. */
int rt_memory_account(rt_graph *g, const rt_scenario *s, const rt_workload *w, FILE *err);

/* The fullest rank's components (after rt_memory_account). */
void rt_memory_report_of(const rt_graph *g, const rt_scenario *s, const rt_workload *w,
                         rt_memory_report *m);

/* One line per component, as in `rectwin plan`. */
void rt_memory_print(const rt_memory_report *m, FILE *out);

#endif
