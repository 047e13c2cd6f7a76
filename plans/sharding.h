/* Where each table's rows and columns live: table-wise (greedy balanced placement),
 * row-wise (contiguous row blocks on every rank) or column-wise (column shards placed
 * greedily). Shared by every plan that shards tables over a group of ranks. */
#ifndef RT_SHARDING_H
#define RT_SHARDING_H

#include <stdint.h>

#include "scenario.h"

typedef struct rt_shard_map {
    rt_sharding kind;
    int ranks; /* group size the tables are sharded over */
    int n_tables;
    int col_shards;  /* column-wise: shards per table (1 otherwise) */
    int *owner;      /* table-wise: [t]; column-wise: [t * col_shards + c] */
    uint64_t *block; /* row-wise: rows per rank for table t (ceil(rows / ranks)) */
    double *load;    /* per rank: the balancing cost placed on it */
} rt_shard_map;

/* Builds the placement of the tables in FEATURES (all tables when NULL) over RANKS ranks.
 * Greedy (longest processing time first) on the expected lookup bytes per sample: mean IDs x
 * dim. Tables outside FEATURES get no owner (-1). Returns -1 after printing the error: row-wise
 * over more ranks than a table has rows (file:line:col of plan.sharding), or out of memory. */
int rt_shard_map_build(const rt_scenario *s, int ranks, const int *features, int n_features,
                       rt_shard_map *m);
void rt_shard_map_free(rt_shard_map *m);

/* Width of table T's columns held by rank R (0 when it holds none). */
int rt_shard_dim(const rt_shard_map *m, const rt_scenario *s, int t, int r);
/* Rows of table T held by rank R. */
uint64_t rt_shard_rows(const rt_shard_map *m, const rt_scenario *s, int t, int r);

#endif
