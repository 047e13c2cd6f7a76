/* One iteration's training batch on one rank, on the host: per-feature lengths and IDs, dense
 * features and labels. Iteration 0 is exactly the batch the graph was built from (the same
 * workload draw, so measured and predicted traffic are the same bytes); iteration k draws
 * with seed + k. Labels carry a planted signal: a fixed hashed weight per (feature, ID) and
 * per dense feature decides the label, so a model that learns sees its loss fall. Sequence
 * models predict the next item: from iteration 1 on, half of the tokens of every sequence
 * (chosen by a hash) are a fixed function of the token before, a signal the model can learn;
 * iteration 0 keeps the graph's draw untouched. With a data file (Criteo TSV layout), IDs,
 * dense features and labels come from the file instead. */
#ifndef RT_XBATCH_H
#define RT_XBATCH_H

#include <stdint.h>
#include <stdio.h>

#include "scenario.h"
#include "workload.h"

struct rt_criteo;

typedef struct rt_xbatch {
    int batch;           /* samples on this rank */
    double global_batch; /* samples over all ranks */
    int n_features;
    rt_feature_batch *f; /* [n_features]: lengths and IDs (owned) */
    float *dense;        /* batch x dense_features */
    float *labels;       /* batch */
} rt_xbatch;

/* Fills B for RANK at ITERATION. GRAPH_BATCH (the pipeline's workload, may be NULL) supplies
 * iteration 0; DATA (may be NULL) replaces the sampled IDs. Returns 0 or -1 (message on ERR). */
int rt_xbatch_make(rt_xbatch *b, const rt_scenario *s, const rt_workload *graph_batch, int rank,
                   int64_t iteration, struct rt_criteo *data, FILE *err);
void rt_xbatch_free(rt_xbatch *b);

#endif
