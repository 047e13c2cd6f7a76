/* The op graph: one DAG per rank, SPMD. Every rank runs the same ops in the same order
 * (the structure is stored once); only the costs differ per rank, and they are stored for
 * the graph's representative ranks (all ranks in exact mode, a few in statistical mode).
 *
 * A collective's group is the set of ranks {base(r) + k * stride : 0 <= k < size}, where
 * base(r) = r - ((r / stride) % size) * stride. World: (N, 1); inside a node: (G, 1);
 * one rail across nodes: (H, G); HSP group of I consecutive ranks: (I, 1). */
#ifndef RT_GRAPH_H
#define RT_GRAPH_H

#include <stdint.h>

#include "dtype.h"

/* SYNC_COMM is a second communication stream for parameter-gradient synchronization (the
 * DDP process group's stream): a collective there may run while one on COMM (an embedding
 * AlltoAll) is in flight, as batch i's dense AllReduce does beside batch i+1's AlltoAll under
 * plan.overlap. Collectives on one stream run one after another. */
typedef enum {
    RT_STREAM_COMPUTE,
    RT_STREAM_COMM,
    RT_STREAM_COPY,
    RT_STREAM_SYNC_COMM,
    RT_STREAM_COUNT
} rt_stream;
typedef enum { RT_OP_KERNEL, RT_OP_COLLECTIVE } rt_op_type;

typedef enum {
    RT_K_BUCKETIZE, /* route IDs to owners */
    RT_K_UNIQUE,
    RT_K_LOOKUP,       /* gather + pool */
    RT_K_UNPERMUTE,    /* recovery gather back into the model's (sample, feature) layout */
    RT_K_PEER_PERMUTE, /* SPTT step (c): reorder rows into peer order */
    RT_K_SHUFFLE,      /* SPTT step (e): (features, peers) -> (peers, features) */
    RT_K_DENSE_FWD,
    RT_K_DENSE_BWD,
    RT_K_LOSS,
    RT_K_SPARSE_UPDATE, /* scatter-add + optimizer */
    RT_K_DENSE_UPDATE,
    RT_K_H2D,
    RT_K_HASH, /* dynamic table: probe and insert keys, grow the key structure, evict */
    RT_K_COUNT
} rt_kernel_kind;

typedef enum {
    RT_COLL_ALLTOALLV,
    RT_COLL_ALLREDUCE,
    RT_COLL_REDUCE_SCATTER,
    RT_COLL_ALLGATHER,
    RT_COLL_SENDRECV,
    RT_COLL_COUNT
} rt_coll_kind;

typedef enum {
    RT_ALGO_AUTO,
    RT_ALGO_DIRECT,
    RT_ALGO_RING,
    RT_ALGO_TREE,
    RT_ALGO_HIERARCHICAL,
    RT_ALGO_NVLS,
    RT_ALGO_COUNT
} rt_coll_algo;

typedef struct rt_group {
    int size;
    int stride;
} rt_group;

/* What an op does, for the executor (exec/): its role inside an embedding exchange (a "unit")
 * or inside the dense model. The simulation engines ignore it; rectwin-exec dispatches on it. */
typedef enum {
    RT_ROLE_NONE, /* not executable (a plan whose ops exec does not run yet) */
    RT_ROLE_KEY_HASH,
    RT_ROLE_UNIQUE_SEND, /* dedup stage 1, on the sender */
    RT_ROLE_ROUTE,       /* bucketize the IDs by owner and build the ID messages */
    RT_ROLE_IDS_A2A,
    RT_ROLE_CAT_A2A,
    RT_ROLE_UNIQUE_OWNER, /* dedup stage 2, on the owner */
    RT_ROLE_LOOKUP,
    RT_ROLE_OUT_A2A,
    RT_ROLE_RECOVER, /* embeddings back into the model's per-feature layout */
    RT_ROLE_GRAD_A2A,
    RT_ROLE_GRAD_SYNC, /* HSP: gradients of replicas of the same shard summed across groups */
    RT_ROLE_SPARSE_UPDATE,
    RT_ROLE_DENSE_FWD, /* layer `layer` */
    RT_ROLE_LOSS,
    RT_ROLE_DENSE_BWD, /* layer `layer` */
    RT_ROLE_DENSE_ALLREDUCE,
    RT_ROLE_DENSE_UPDATE,
    /* SPTT (DMT): the lookup output travels owner -> tower member -> peer. */
    RT_ROLE_PEER_PERMUTE, /* requester order -> (local index, tower) order */
    RT_ROLE_INTRA_A2A,    /* inside the tower, to the member with the requester's local index */
    RT_ROLE_INTRA_RS,     /* the same for row-wise pooled partial sums: a ReduceScatter */
    RT_ROLE_SHUFFLE,      /* (owners, peers, features) -> (peers, features) */
    RT_ROLE_PEER_A2A,     /* among ranks of equal local index, one per tower */
    RT_ROLE_PEER_GRAD_A2A,
    RT_ROLE_SHUFFLE_BWD,
    RT_ROLE_INTRA_GRAD_A2A,
    RT_ROLE_INTRA_AG,
    RT_ROLE_PERMUTE_BWD,
    RT_ROLE_INPUT_H2D, /* overlap: the next batch's IDs, lengths and dense features to the device */
    /* SPTT tower modules (plans/tower_module.h): after the shuffle, before the peer AlltoAll. */
    RT_ROLE_TM_FWD,
    RT_ROLE_TM_BWD,
    RT_ROLE_TM_ALLREDUCE, /* the module's parameter gradients summed inside the tower */
    RT_ROLE_TM_UPDATE,
    /* workload.sequence_layout padded: the sequence embeddings into a batch x max-length
     * layout before the dense layers, and their gradients back to the jagged rows after. */
    RT_ROLE_SEQ_PAD,
    RT_ROLE_SEQ_UNPAD,
    /* Dynamic tables (plans/dynamic.h): keys to rows through the hash table, inserting new
     * ones; with values in host memory the touched rows come in and go back over the host
     * link; eviction down to the capacity after the update. */
    RT_ROLE_HASH_PROBE,
    RT_ROLE_HASH_FETCH,
    RT_ROLE_HASH_WRITEBACK,
    RT_ROLE_HASH_EVICT,
    /* plan.negatives offload (plans/negatives.h): the per-query negative embeddings to host
     * memory, and back one segment at a time for the loss. */
    RT_ROLE_NEG_OFFLOAD,
    RT_ROLE_NEG_FETCH,
    RT_ROLE_COUNT
} rt_role;

/* One embedding exchange as the executor needs it: which tables, over which ranks, placed how,
 * with which dedup. Plans record one per exchange (plans/exchange.c); the ops of the exchange
 * name it by index. Arrays are owned by the graph. */
typedef struct rt_graph_unit {
    int n_features;
    int *features; /* table indices */
    rt_group group;
    int sharding;    /* rt_sharding (core/scenario.h) */
    int col_shards;  /* 1 unless column-wise */
    int n_tables;    /* of the model: owner and block are indexed by table */
    int *owner;      /* [table * col_shards + c]: group index holding the shard, -1: none */
    uint64_t *block; /* row-wise: rows per group member, [table] */
    int hash_rows;   /* row-wise owner = hash(ID) mod group size */
    int dedup_send;  /* stage-1 unique on the sender */
    int dedup_owner; /* stage-2 unique on the owner */
    int key_hash;    /* 0 none, 1 on the sender, 2 on the owner (FusedRec) */
    int category_msg;
    int n_kunits; /* unique kernels per stage (0: one) and the unit of each feature */
    int *kunit_of;
    rt_group sync;   /* HSP: the replicas of a shard ({1, 1}: none) */
    int sync_sparse; /* HSP: (index, value) AllGather instead of an AllReduce of union rows */
    /* SPTT: towers of tower_size consecutive ranks (0: no towers); tower_of[table]. The group is
     * the world, owner[] holds world ranks, and a row-wise ID's owner is
     * tower_of[table] x tower_size + ID / block[table]. */
    int tower_size;
    int *tower_of;
    /* SPTT tower module (plans/tower_module.h rt_tm_spec): tm_kind is an rt_tm_kind (0: none),
     * kept as an int because core does not see the plans. */
    int tm_kind;
    double tm_compression;
    int tm_cross_layers, tm_cross_rank;
    /* plan.fusion (plans/fusion.h) as an int: 0 unset, 1 one gather per feature, 2 one fused
     * gather over every table the owner serves, writing the message in place. */
    int fusion;
} rt_graph_unit;

typedef struct rt_op {
    rt_op_type type;
    rt_stream stream;
    int phase;        /* index into rt_graph.phases */
    const char *name; /* static string */
    rt_dtype dtype;   /* kernel: compute dtype (selects peak FLOP/s) */
    rt_kernel_kind kernel;
    rt_coll_kind coll;
    rt_coll_algo algo;
    rt_group group;
    int n_deps;
    int deps_at; /* first dependency in rt_graph.deps */
    rt_role role;
    int unit;  /* index into rt_graph.units, -1 when the op belongs to none */
    int layer; /* dense layer of a DENSE_FWD / DENSE_BWD op; the feature (index in the unit)
                * of a per-feature LOOKUP; -1 otherwise */
    /* Overlap windows (plans/overlap.h) hold ops of several batches: this op works on batch
     * i + batch_offset of window i (+1: the next batch's sparse forward; -1: semi-async's
     * previous sparse backward; 0 otherwise). */
    int batch_offset;
} rt_op;

/* One launch (or COUNT equal launches) inside a kernel op, as a framework runs it: a dense
 * layer is several GEMMs, pointwise passes, norms and attention pieces, and each is costed on
 * its own calibrated curve (core/calib.h) when the topology has one. A GEMM is (m, n, k) with
 * 2mnk FLOPs; a BYTES piece moves AMOUNT bytes, counted as the calibration of its FAMILY counts
 * them; a FLOPS piece does AMOUNT FLOPs of a compute kernel that is not a GEMM. */
typedef enum { RT_PIECE_GEMM, RT_PIECE_BYTES, RT_PIECE_FLOPS } rt_piece_kind;
typedef struct rt_piece {
    rt_piece_kind kind;
    int family; /* BYTES, FLOPS: an rt_calib_kernel (core/calib.h) */
    int dim;    /* the curve's dim tag (0: any) */
    double m, n, k;
    double amount; /* per launch */
    double count;  /* launches */
} rt_piece;

/* The cost of one op on one representative rank.
 * Kernel: flops and the minimum HBM bytes read + written.
 * Collective: `bytes` is the nccl-tests size of the buffer (AllReduce/AllGather output/
 * ReduceScatter input, per rank); for alltoallv `send`/`recv` hold the bytes to and from each
 * group member (index k = position in the group), and `bytes` their send total. */
typedef struct rt_op_cost {
    double flops;
    double bytes;
    double recv_bytes;
    uint64_t *send;
    uint64_t *recv;
    int n_pieces; /* kernel: its launches (0: one launch of flops and bytes) */
    rt_piece *pieces;
} rt_op_cost;

typedef struct rt_graph {
    int world;
    int n_reps;
    int *rep_rank;      /* rank id of each representative */
    double *rep_weight; /* how many ranks each representative stands for (sums to world) */
    int n_ops, cap_ops;
    rt_op *ops;
    int n_deps, cap_deps;
    int *deps;
    rt_op_cost *costs; /* [op * n_reps + rep] */
    int n_phases, cap_phases;
    char **phases;
    double *peak_hbm_bytes;        /* per rep, from the plan's memory accounting */
    double model_flops;            /* useful FLOPs of one iteration, all ranks */
    struct rt_graph_chunk *chunks; /* arena for per-peer arrays */
    int n_names, cap_names;
    char **names; /* op names composed at build time, owned */
    int n_units;
    rt_graph_unit *units;
} rt_graph;

rt_graph *rt_graph_new(int world, int n_reps, const int *rep_rank, const double *rep_weight);
void rt_graph_free(rt_graph *g);

/* Interns a phase name ("emb.fwd.ids_a2a") and returns its index. */
int rt_graph_phase(rt_graph *g, const char *name);

int rt_graph_add_kernel(rt_graph *g, const char *phase, rt_stream stream, rt_kernel_kind kind,
                        rt_dtype dtype, const char *name, const int *deps, int n_deps);
int rt_graph_add_collective(rt_graph *g, const char *phase, rt_stream stream, rt_coll_kind kind,
                            rt_coll_algo algo, rt_group group, const char *name, const int *deps,
                            int n_deps);

static inline rt_op_cost *rt_graph_cost(const rt_graph *g, int op, int rep)
{
    return &g->costs[(long)op * g->n_reps + rep];
}
static inline const int *rt_graph_deps(const rt_graph *g, int op)
{
    return g->deps + g->ops[op].deps_at;
}

/* Marks OP with its executor role, exchange unit (-1: none) and dense layer (-1: none). */
void rt_graph_set_role(rt_graph *g, int op, rt_role role, int unit, int layer);
/* Records a deep copy of U (its arrays included) and returns its index. */
int rt_graph_add_unit(rt_graph *g, const rt_graph_unit *u);

/* A copy of NAME owned by the graph, for op names composed at build time. */
const char *rt_graph_name(rt_graph *g, const char *name);

/* Zeroed per-peer byte array of N entries owned by the graph. */
uint64_t *rt_graph_peer_bytes(rt_graph *g, int n);
/* Zeroed array of N pieces owned by the graph. */
rt_piece *rt_graph_pieces(rt_graph *g, int n);
/* Copies op OP_FROM's cost on rep R in FROM (per-peer arrays and pieces included) into op OP_TO
 * of TO, whose arena then owns the copies; both ops have the same group. */
void rt_graph_copy_cost(rt_graph *to, int op_to, const rt_graph *from, int op_from, int r);

/* Group membership helpers. */
static inline int rt_group_base(rt_group gr, int rank)
{
    return rank - ((rank / gr.stride) % gr.size) * gr.stride;
}
static inline int rt_group_member(rt_group gr, int rank, int k)
{
    return rt_group_base(gr, rank) + k * gr.stride;
}
static inline int rt_group_index(rt_group gr, int rank)
{
    return (rank / gr.stride) % gr.size;
}

extern const char *const rt_stream_names[];
extern const char *const rt_kernel_kind_names[];
extern const char *const rt_coll_kind_names[];
extern const char *const rt_coll_algo_names[];
extern const char *const rt_role_names[];

#endif
