/* One embedding exchange: a set of features sharded over a rank group, as TorchRec does it.
 * Forward: bucketize, ID AlltoAll, lookup + pool, embedding AlltoAll, layout recovery.
 * Backward: gradient AlltoAll (mirror of the embedding AlltoAll), fused sparse update on the
 * owner. flat is one exchange over the world; fused is one per spec group (or per feature);
 * hsp is one over each replica group. Byte counts come from the sampled IDs.
 *
 * Deduplication (plans/dedup.h) changes what travels: with stage 1 the sender keeps the
 * inverse index and per-sample lengths, sends each distinct ID once with one 4-byte count per
 * feature shard, and the owner returns one row per distinct ID (pooling moves to the sender's
 * recovery gather); with stage 2 the owner reads and updates each distinct row once. Every
 * unique is a kernel op, one per unit (a table, a merged table or a fused group).
 *
 * Ops are added in three steps so a plan can interleave several exchanges on the in-order
 * comm stream (all ID AlltoAlls, then all lookups and embedding AlltoAlls, ...). */
#ifndef RT_EXCHANGE_H
#define RT_EXCHANGE_H

#include <stdint.h>

#include "dedup.h"
#include "dynamic.h"
#include "fusion.h"
#include "graph.h"
#include "scenario.h"
#include "sharding.h"
#include "workload.h"

/* FusedRec (seed 003) keeps equal IDs of different features of a fused group apart by hashing
 * (category, ID): TFRA-fused hashes on the sender, FusedRec defers it to the owner. */
typedef enum { RT_KEY_HASH_NONE, RT_KEY_HASH_SENDER, RT_KEY_HASH_RECEIVER } rt_key_hash;

typedef struct rt_exchange {
    /* Configuration, set by the plan. */
    const char *tag; /* appended to op names ("" for one exchange); static storage */
    int n_features;
    const int *features;        /* table indices (borrowed) */
    rt_group group;             /* the ranks the tables are sharded over */
    const rt_shard_map *shards; /* placement over group indices 0..group.size-1 (borrowed) */
    rt_dedup_mode dedup;
    int n_units;            /* unique kernels per stage; 0: one for the whole exchange */
    const int *unit_of;     /* [i]: unit of the i-th feature (borrowed; NULL with n_units 0) */
    rt_key_hash key_hash;   /* where the category-aware key hash runs, if anywhere */
    int category_msg;       /* per-feature counts in their own AlltoAll instead of the IDs' */
    int hash_rows;          /* row-wise: owner = hash(ID) mod group size instead of row blocks */
    const char *sort_phase; /* phase of the routing kernel; NULL: emb.fwd.bucketize */
    rt_fusion fusion;       /* how the owner's gathers launch (plans/fusion.h) */

    /* Traffic, per representative and group index q: what the rep sends to member q. */
    int G, R;
    uint64_t *n_ids;      /* IDs routed */
    uint64_t *seq_back;   /* sequence-embedding bytes member q returns */
    double *row_bytes;    /* table bytes member q reads for them */
    double *row_elems;    /* their elements (tables may differ in dtype) */
    double *upd_bytes;    /* table + optimizer-state bytes member q updates */
    uint64_t *lens_to;    /* [q] KJT length bytes per sample every sender sends member q (with
                           * stage-1 dedup: per batch, one count per shard) */
    uint64_t *pooled_out; /* [q] pooled-embedding bytes per requested sample member q returns */
    /* Per representative r and feature index i, at [r * n_features + i]: */
    uint64_t *uniq1;          /* distinct IDs on the sender (raw count without stage 1) */
    uint64_t *recv_ids;       /* IDs received as owner (counting each column shard) */
    double *uniq2;            /* distinct keys looked up as owner (stage 2; exact or expected) */
    double *rows_in, *upd_in; /* [r] owner bytes read / updated with stage 2 */
    double *elems_in;         /* [r] elements of rows_in */
    /* fusion none: the same traffic per feature, at [(r * G + q) * n_features + i]. */
    uint64_t *fi_ids, *fi_back;
    double *fi_rows;
    /* Dynamic tables (plans/dynamic.h): each dynamic feature's shard over the run ([i], NULL
     * when no feature is dynamic), and per representative and group index q what its dynamic
     * IDs cost member q: probe and insert bytes, IDs probed, row and state bytes touched. */
    rt_dyn_run *dyn;
    double *dyn_probe; /* probe and insert bytes of features whose keys are in HBM */
    double *dyn_ids;   /* IDs of features whose keys are in host memory */
    double *dyn_rows;  /* row + state bytes of features whose values are in host memory */

    /* Op ids, filled by the add functions; unit: the exchange's rt_graph_unit. */
    int unit;
    int bucketize, ids_a2a, lookup, out_a2a, unpermute, grad_a2a, update;
    int n_lookups;     /* lookup is the first of n_lookups (one per feature with fusion none) */
    int n_buckets;     /* bucketize is the first of n_buckets (one per feature with fusion none) */
    int hash, cat_a2a; /* -1 when absent */
    int uniq1_op, uniq2_op; /* first of n_units consecutive unique kernels, -1 when absent */
    /* Dynamic tables' ops, -1 when absent: the probe of keys in HBM, the probe of keys in host
     * memory (the IDs and rows found cross the host link), the rows of tables whose values
     * live in host memory fetched and written back, the eviction. */
    int probe, probe_host, fetch, writeback, evict;
} rt_exchange;

/* Routes every representative's IDs of the exchange's features. Returns 0 or -1 (out of
 * memory, message on ERR). */
int rt_exchange_route(rt_exchange *x, const rt_scenario *s, const rt_workload *w, FILE *err);
void rt_exchange_free(rt_exchange *x);

/* Adds bucketize + ID AlltoAll; AFTER (may be -1) orders the bucketize. */
void rt_exchange_add_ids(rt_exchange *x, rt_graph *g, const rt_scenario *s, int after);
/* Adds lookup + embedding AlltoAll + recovery. */
void rt_exchange_add_embeddings(rt_exchange *x, rt_graph *g, const rt_scenario *s);
/* Adds the gradient AlltoAll (after op AFTER, usually the last dense backward) + update. */
void rt_exchange_add_backward(rt_exchange *x, rt_graph *g, const rt_scenario *s, int after);

/* Dynamic tables after the update (a plan with its own backward calls it after its update):
 * the write-back of rows whose values live in host memory, then eviction. */
void rt_exchange_add_dynamic_bwd(rt_exchange *x, rt_graph *g, const rt_scenario *s);

/* Fills the exchange's op costs on representative R. */
void rt_exchange_fill(const rt_exchange *x, rt_graph *g, const rt_scenario *s, const rt_workload *w,
                      int r);

/* HBM the exchange needs on representative R's rank: its table shards with optimizer state,
 * and the AlltoAll buffers (IDs, embeddings, gradients). Call after rt_exchange_fill. */
double rt_exchange_memory(const rt_exchange *x, const rt_graph *g, const rt_scenario *s, int r,
                          int rank);

/* The representative whose sample stands for rank P (P itself in exact mode). */
static inline int rt_exchange_rep_of(const rt_workload *w, int p)
{
    return w->exact ? p : (int)((long)p * w->n_reps / w->world);
}

#endif
