/* A scenario: model + topology (+ node count) + plan + workload, loaded from YAML with
 * --set overrides applied, and validated. */
#ifndef RT_SCENARIO_H
#define RT_SCENARIO_H

#include <stdint.h>
#include <stdio.h>

#include "model.h"
#include "negatives.h"
#include "topology.h"

struct rt_cfg;
struct fy_node;

typedef enum { RT_SHARD_TABLE, RT_SHARD_ROW, RT_SHARD_COLUMN, RT_SHARD_COUNT } rt_sharding;
typedef enum { RT_MODE_AUTO, RT_MODE_EXACT, RT_MODE_STATISTICAL, RT_MODE_COUNT } rt_workload_mode;
typedef enum {
    RT_AR_AUTO,
    RT_AR_RING,
    RT_AR_TREE,
    RT_AR_HIERARCHICAL,
    RT_AR_NVLS,
    RT_AR_COUNT
} rt_allreduce_algo;
/* How consecutive iterations overlap (plans/overlap.c): none, MTGRBoost's copy/dispatch/compute
 * pipeline, or TurboGR's semi-async sparse forward (staleness 1). */
typedef enum {
    RT_OVERLAP_SYNC,
    RT_OVERLAP_PIPELINE,
    RT_OVERLAP_SEMI_ASYNC,
    RT_OVERLAP_COUNT
} rt_overlap;
/* Sequence balancing of jagged batches across ranks (plans/balance.c). */
typedef enum {
    RT_BALANCE_NONE,
    RT_BALANCE_DYNAMIC_BATCHING,
    RT_BALANCE_TOKEN_REALLOC,
    RT_BALANCE_COUNT
} rt_balance;
/* How sequence features reach the dense layers: jagged (real tokens only) or padded to the
 * longest sequence of each rank's batch, the baseline the jagged operators of seeds 000 and
 * 002 remove. */
typedef enum { RT_SEQ_JAGGED, RT_SEQ_PADDED, RT_SEQ_LAYOUT_COUNT } rt_seq_layout;
/* What to do with a plan whose per-device HBM exceeds the device (plans/memory.c). */
typedef enum { RT_MEMORY_REFUSE, RT_MEMORY_WARN, RT_MEMORY_COUNT } rt_memory_policy;

/* How the HSTU/FuXi attention runs (MTGRBoost, seed 000): one fused kernel whose n x n scores
 * never leave on-chip memory, or separate kernels (scores GEMM, bias + SiLU pass, scores x V)
 * whose score matrices round-trip HBM (models/layer_ops.h). */
typedef enum { RT_ATTN_FUSED, RT_ATTN_UNFUSED } rt_attention;

/* Plan keys common to every plan. Plan-specific keys stay in `node` and are parsed and
 * validated by the plan itself (plans/plan.h). */
typedef struct rt_plan_cfg {
    char *name;
    rt_sharding sharding;
    int column_shards;        /* column-wise: shards per table (0 = as many as fit dim/32) */
    rt_dtype dense_dtype;     /* dense compute precision */
    rt_dtype embedding_dtype; /* table storage (the first table's when not given) */
    int embedding_dtype_set;  /* precision.embedding given: every table in embedding_dtype */
    rt_dtype comm_dtype;      /* embedding and gradient AlltoAll payload */
    rt_allreduce_algo dense_allreduce;
    rt_overlap overlap;
    rt_balance balance;
    int64_t token_target; /* balance: tokens per rank (0 = the mean over ranks) */
    rt_memory_policy memory;
    int grad_accum;         /* micro-batches per optimizer step (plans/accumulate.h); 1: none */
    rt_attention attention; /* fused (default) or unfused attention kernels */
    rt_neg_cfg negatives;   /* sampled negatives: offload, fp16, logit sharing (core/negatives.h) */
    struct fy_node *node;   /* the plan mapping, for plan-specific keys */
    struct rt_cfg *cfg;     /* the document that node belongs to */
} rt_plan_cfg;

typedef struct rt_workload_cfg {
    int batch_per_rank;
    uint64_t seed;
    int iterations; /* rectwin-exec: iterations timed, after `warmup` untimed ones */
    int warmup;
    rt_workload_mode mode;
    int exact_max_ranks; /* auto: exact up to this many ranks, statistical above */
    int reps;            /* statistical: representative ranks sampled */
    int has_ids;         /* override every table's ID distribution */
    rt_id_spec ids;
    int has_pooling; /* override every pooled table's pooling distribution */
    rt_len_spec pooling;
    int has_seq_len; /* override sequence tables' lengths */
    rt_len_spec seq_len;
    int id_bytes; /* bytes per ID on the wire: 4 or 8 */
    rt_seq_layout seq_layout;
    /* Fraction of a dynamic table's IDs that are keys never seen before: each is inserted by
     * the owner's hash table (core/dynamic_table.h), so the tables grow during training. */
    double new_id_rate;
} rt_workload_cfg;

typedef struct rt_scenario {
    char *name;
    char *path;
    rt_model model;
    rt_topology topology;
    rt_plan_cfg plan;
    rt_workload_cfg workload;
    struct rt_cfg *docs[3]; /* scenario, model file, topology file: kept for locations */
} rt_scenario;

/* Loads PATH, applies the N_SETS "--set k=v" overrides in order, loads the model and
 * topology files it names (relative to the scenario's directory, then to the current
 * directory), and validates the whole. Prints file:line:col messages to ERR and returns NULL
 * on any error. */
rt_scenario *rt_scenario_load(const char *path, const char *const *sets, int n_sets, FILE *err);
void rt_scenario_free(rt_scenario *s);

/* Storage dtype of table T: each table's own `dtype` (seed 000 keeps hot tables in fp32 and
 * cold ones in fp16), unless plan.precision.embedding sets one for all. */
static inline rt_dtype rt_scenario_table_dtype(const rt_scenario *s, int t)
{
    return s->plan.embedding_dtype_set ? s->plan.embedding_dtype : s->model.tables[t].dtype;
}

static inline int rt_scenario_ranks(const rt_scenario *s)
{
    return rt_topology_ranks(&s->topology);
}

extern const char *const rt_sharding_names[];
extern const char *const rt_workload_mode_names[];
extern const char *const rt_allreduce_names[];
extern const char *const rt_overlap_names[];
extern const char *const rt_balance_names[];
extern const char *const rt_memory_policy_names[];
extern const char *const rt_attention_names[];
extern const char *const rt_seq_layout_names[];

#endif
