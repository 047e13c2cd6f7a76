/* Sampled ID batches. Each (rank, feature) stream has its own GSL RNG seeded from
 * (seed, rank, feature), so a rank's batch is the same whether it is sampled in exact mode
 * (every rank) or as a representative in statistical mode. */
#ifndef RT_WORKLOAD_H
#define RT_WORKLOAD_H

#include <stdint.h>

#include <gsl/gsl_rng.h>

#include "scenario.h"

typedef struct rt_feature_batch {
    int batch;         /* samples */
    uint32_t *lengths; /* IDs per sample (pooling factor or sequence length) */
    uint64_t n_ids;
    uint64_t *ids; /* row indices in [0, rows) (raw keys for dynamic tables) */
} rt_feature_batch;

typedef struct rt_workload {
    int world;
    int n_reps;
    int *rep_rank;
    double *rep_weight;
    int n_features;
    int batch;
    int exact;                 /* every rank sampled */
    rt_feature_batch *batches; /* [rep * n_features + f] */
} rt_workload;

rt_workload *rt_workload_sample(const rt_scenario *s, FILE *err);
/* One rank's batch (out[n_tables]) drawn with SEED instead of the scenario's: rectwin-exec
 * draws iteration k's batch with seed + k. Free with rt_feature_batches_free. */
int rt_workload_sample_rank(const rt_scenario *s, uint64_t seed, int rank, rt_feature_batch *out,
                            FILE *err);
void rt_feature_batches_free(rt_feature_batch *b, int n);
void rt_workload_free(rt_workload *w);

static inline const rt_feature_batch *rt_workload_batch(const rt_workload *w, int rep, int f)
{
    return &w->batches[(long)rep * w->n_features + f];
}

/* Zipf(alpha) over {0..n-1} by rejection-inversion: O(1) per draw, no table of size n. */
typedef struct rt_zipf {
    uint64_t n;
    double alpha;
    double h_x1, h_n, s;
} rt_zipf;
void rt_zipf_init(rt_zipf *z, uint64_t n, double alpha);

uint64_t rt_zipf_draw(const rt_zipf *z, gsl_rng *rng);

/* Draws one length from SPEC. */
int rt_len_draw(const rt_len_spec *spec, gsl_rng *rng);
/* Expected value of SPEC after clamping (for statistical accounting). */
double rt_len_mean(const rt_len_spec *spec);

#endif
