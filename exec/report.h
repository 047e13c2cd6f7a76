/* From per-rank timings to one measured result: per op the median start and duration over
 * the measured iterations, gathered on rank 0 into an rt_result in the simulator's format
 * (engine "exec"); and the byte check of the first iteration against the graph. */
#ifndef RT_XREPORT_H
#define RT_XREPORT_H

#include <stdio.h>

#include "exec.h"
#include "result.h"
#include "runner.h"

typedef struct rt_xsummary {
    double loss_first, loss_last;         /* mean over ranks */
    double overhead_s;                    /* median host time per iteration outside every op */
    double wall_median_s, wall_spread_s;  /* iteration wall time: median, max - min */
    double peak_bytes;                    /* max over ranks of device bytes allocated */
    long bytes_checked, bytes_mismatched; /* ops, summed over ranks */
    /* Dynamic tables, summed over ranks and shards: live keys and key slots at the end, keys
     * inserted and evicted, doublings of key structures. */
    long hash_keys, hash_slots, hash_inserted, hash_evicted, hash_grows;
    /* Per-query negatives (plan.negatives), max over ranks: device and host bytes held for
     * them (the device's part of peak_bytes) and bytes moved to and from the host by the last
     * iteration; all 0 with shared negatives. */
    double neg_device, neg_host, neg_offloaded, neg_fetched;
} rt_xsummary;

/* Collective over every rank. On rank 0, *OUT receives the result (others get NULL). */
int rt_xreport(rt_xexec *x, const rt_xtimes *t, int warmup, rt_xsummary *sum, rt_result **out,
               FILE *err);

/* Compares what each op moved in the first iteration with the graph's bytes for this rank;
 * prints up to a few mismatches on ERR; returns the number of mismatching ops and sets
 * *CHECKED. */
long rt_xreport_check_bytes(const rt_xexec *x, long *checked, FILE *err);

#endif
