/* Tower Partitioner (DMT, seed 004, section 3.3): features into balanced, meaningful towers.
 *
 * 1. affinity A (n x n, symmetric, in [0, 1]: |cosine| of feature statistics or a given file);
 * 2. distance: coherent D = 1 - A (similar features end up close, so in one tower);
 *    diverse D = A (dissimilar features end up close, so every tower mixes them);
 * 3. embedding in `dims` dimensions: classical MDS (GSL eigen-decomposition of the double-centred
 *    squared distances), refined by minimizing the stress sum_{i<j} (|x_i - x_j| - D_ij)^2 with
 *    GSL's BFGS;
 * 4. balanced constrained k-means: every group has between lo and hi members with
 *    hi <= max_min_factor x lo, the partition with the least within-group squared distance over
 *    seeded k-means++ restarts. */
#ifndef RT_PARTITIONER_H
#define RT_PARTITIONER_H

#include <stdint.h>
#include <stdio.h>

#include "model.h"

typedef enum { RT_PART_COHERENT, RT_PART_DIVERSE, RT_PART_COUNT } rt_part_strategy;

typedef struct rt_partition_opts {
    int groups; /* k */
    rt_part_strategy strategy;
    double max_min_factor; /* largest group <= factor x smallest group (>= 1) */
    int dims;              /* embedding dimensions (the paper uses 2) */
    uint64_t seed;
    int restarts; /* k-means++ restarts (0 = 16) */
} rt_partition_opts;

extern const char *const rt_part_strategy_names[];

/* Partitions N features with affinity A (row-major n x n) into opts->groups groups; GROUP[i] is
 * feature i's group. Returns 0, or -1 with a message on ERR (bad sizes, a factor too tight for
 * n and k, out of memory). */
int rt_partition(const double *a, int n, const rt_partition_opts *o, int *group, FILE *err);

/* Group-size bounds for N items in K groups under FACTOR: the most even split, widened to
 * hi = floor(factor x lo) when that is looser. Returns -1 when no split satisfies the factor. */
int rt_partition_bounds(int n, int k, double factor, int *lo, int *hi);

/* Step 3 alone: coordinates (n x dims, row-major) whose distances approximate D. Returns the
 * final stress (sum of squared residuals), or -1 on failure. */
double rt_partition_embed(const double *d, int n, int dims, double *x, FILE *err);

/* Step 4 alone on coordinates X (n x dims). Returns the within-group sum of squared distances
 * to the group means, or -1 when the bounds are infeasible. */
double rt_partition_kmeans(const double *x, int n, int dims, int k, int lo, int hi, uint64_t seed,
                           int restarts, int *group);

/* Affinity of the model's tables from their statistics: each table is described by
 * (log10 rows, dim, 1 + log2 mean IDs per sample, Zipf alpha of its IDs (0 for uniform),
 * sequence flag), each coordinate divided by its largest value over the tables; A_ij = |cosine|
 * of the two vectors and A_ii = 1. A proxy: DMT computes it from trained embeddings.
 * POOLING/IDS override every pooled table's distributions when not NULL. */
void rt_partition_model_affinity(const rt_model *m, const rt_len_spec *pooling,
                                 const rt_id_spec *ids, double *a);

/* Reads a square CSV matrix of numbers (comma or whitespace separated, '#' comments, an
 * optional header line of names is skipped). *A is malloc'd. Returns 0 or -1 with a message
 * naming the file and line. */
int rt_partition_read_csv(const char *path, double **a, int *n, FILE *err);

/* Reads a tower assignment CSV: lines "feature,tower" (feature: table name or index), '#'
 * comments, an optional "feature,tower" header. Fills TOWER_OF[f] for every table of M;
 * every table must appear once and towers must be 0..n_towers-1, each non-empty. */
int rt_partition_read_assignment(const char *path, const rt_model *m, int n_towers, int *tower_of,
                                 FILE *err);

#endif
