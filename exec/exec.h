/* The state of one rank of rectwin-exec while it runs a graph: the scenario and its graph, the
 * device and comm backends, this rank's table shards, the dense network, the batch of the
 * iteration and the buffers every exchange unit keeps between its ops. The executors of the
 * op roles (emb_exchange.c, dense_ops.c) read and write it; runner.c drives them in graph
 * order. */
#ifndef RT_XEXEC_H
#define RT_XEXEC_H

#include <stdint.h>
#include <stdio.h>

#include "batch.h"
#include "comm.h"
#include "dense_net.h"
#include "device.h"
#include "emb_tables.h"
#include "graph.h"
#include "scenario.h"

/* A grow-only device buffer. */
typedef struct rt_xbuf {
    void *p;
    size_t cap;
} rt_xbuf;

/* Reserves at least BYTES in B (contents are not kept). Returns 0 or -1 with the size on ERR. */
int rt_xbuf_reserve(rt_xdev *d, rt_xbuf *b, size_t bytes, FILE *err);
void rt_xbuf_free(rt_xdev *d, rt_xbuf *b);

/* Activation and index buffers of a tower module per exchange unit (emb_tower.c). */
#define RT_XTM_BUFS 14

/* One shard of a feature that one group member serves: entry e = (feature index i of the unit,
 * column shard c). Row-wise, every member serves every feature (c = 0). */
typedef struct rt_xentry {
    int i, c;
    int table;
    int width, col0; /* columns [col0, col0 + width) of the table */
    int sequence;
} rt_xentry;

/* Distinct values of one segment (a feature's IDs on the sender, a served entry's rows on the
 * owner) and the position of every input value among them: values[j] == uniq[inv[j]]. */
typedef struct rt_xuniq {
    int64_t n, n_uniq;
    uint64_t *uniq; /* host */
    int64_t *inv;   /* host */
    rt_xbuf uniq_dev, inv_dev;
} rt_xuniq;

/* An exchange unit on this rank. Send side: what this rank sends to each member; owner side:
 * what it serves. Counts are host arrays, buffers are device buffers. */
typedef struct rt_xunit {
    const rt_graph_unit *u;
    int G, k; /* group size and this rank's index */
    rt_xgroup *grp, *sync_grp;
    int n_entries;
    rt_xentry *entries;
    int *served;      /* [q * n_entries + e]: member q serves entry e */
    int64_t *n_to;    /* [q * n_entries + e]: IDs this rank sends to member q for entry e */
    int64_t *n_from;  /* [p * n_entries + e]: IDs member p sends this rank (as owner) */
    uint32_t **lens;  /* [i]: this rank's per-sample lengths of feature i (host, batch) */
    int64_t **pos_to; /* [q * n_features + i]: row-wise sequence: positions of the IDs sent */
    rt_xbuf *pos_dev; /* the same on the device */
    int *shard_of;    /* [e]: this rank's shard (rt_xtables index) of a served entry, -1 */
    size_t *recv_at;  /* [q * n_entries + e]: float offset of q's block in our receive buffer */
    size_t *send_at;  /* [p * n_entries + e]: float offset of p's block in our send buffer */
    /* Byte counts and displacements per member, for the four AlltoAlls. */
    size_t *ids_sc, *ids_sd, *ids_rc, *ids_rd;
    size_t *emb_sc, *emb_sd, *emb_rc, *emb_rd; /* owner -> requester direction */
    rt_xbuf ids_send, ids_recv, emb_send, emb_recv, grad_send, grad_recv;
    rt_xbuf msg32;       /* fp32 image of a message in a lower comm precision */
    const float *recv32; /* the received embedding blocks in fp32 (recovery) */
    /* Owner side, per served entry: IDs (local rows) and bag offsets over all members' bags. */
    rt_xbuf *own_ids, *own_offsets, *own_out, *own_grad;
    int64_t *own_n;    /* IDs per served entry */
    uint8_t *host_ids; /* host copy of the received ID messages */
    size_t host_ids_cap;
    int64_t *host_scratch;
    size_t host_scratch_cap;
    int parsed;    /* the owner side of this iteration's ID messages is decoded */
    int64_t *bsz;  /* [G]: each member's batch (sequence balancing moves samples) */
    int64_t *boff; /* [G + 1]: where each member's bags start among all members' bags */
    /* Dedup (plans/dedup.h). Stage 1, per feature i on the sender: distinct IDs (s1), the
     * batch's bag offsets and the bag of every ID, the distinct rows and their gradients. */
    rt_xuniq *s1;
    rt_xbuf *s1_offsets, *s1_bag, *s1_rows, *s1_grad;
    /* Stage 2, per served entry on the owner: distinct local rows (s2), the bag of every ID. */
    rt_xuniq *s2;
    rt_xbuf s2_bag, tmp_a, tmp_b;
    /* FusedRec's (category, ID) keys: [i] on the sender, [e] on the owner (host). */
    uint64_t **keys;
    /* Hash-routed row-wise shards ([e]): the ascending global rows this rank holds. */
    uint64_t **hrows;
    int64_t *hrows_n;
    int borrows_rows; /* slots other than 0 use slot 0's row lists */
    /* TFRA-fused: the per-feature counts travel in their own AlltoAll. */
    size_t *cat_sc, *cat_sd, *cat_rc, *cat_rd;
    rt_xbuf cat_send, cat_recv;
    /* SPTT: the tower and peer communicators, the float offsets of every block in the peer-
     * permuted, intra-tower-received and shuffled layouts ([N * n_entries]), the byte counts of
     * the intra-tower and peer AlltoAlls, and their buffers. */
    rt_xgroup *tower_grp, *peer_grp;
    size_t *perm_at, *intra_at, *shuf_at;
    size_t *isc, *isd, *irc, *ird, *psc, *psd, *prc, *prd;
    rt_xbuf perm, intra, shuf, g_shuf, g_intra, g_perm;
    size_t shuf_bytes; /* the shuffled layout's bytes (psc/prc are the peer AlltoAll's) */
    /* SPTT tower module (emb_tower.c): the peer AlltoAll's send buffer and the gradients it
     * brings back, the module's activations and its index maps, for batch size tm_b. */
    rt_xbuf tm_send, tm_gy;
    rt_xbuf tm_buf[RT_XTM_BUFS];
    int tm_b;
    /* HSP sparse sync, per served entry: host IDs and bags kept from the lookup, and the
     * (row, gradient) pairs of every group after the AllGather. */
    int64_t **own_host_ids, **own_host_bag;
    rt_xbuf sync_send, sync_recv, sync_inv, sync_bag, sync_tmp, sync_agg;
    rt_xbuf *sync_all_ids, *sync_all_grads;
    int64_t *sync_u, *sync_n;
} rt_xunit;

/* What one batch in flight owns: its host batch, its device inputs and recovered embeddings,
 * the exchanges' per-iteration state, and (overlap) a copy of its embedding gradients. */
typedef struct rt_xslot {
    int64_t batch_id; /* the batch it holds, -1: none */
    int loaded;       /* its inputs are on the device */
    rt_xbatch batch;
    float **emb; /* [table]: device embeddings the dense net consumes (in emb_buf) */
    rt_xbuf *emb_buf;
    rt_xbuf *grad_copy; /* [table]: overlap: the dense net's embedding gradients of this batch */
    int have_grads;
    float *d_dense, *d_labels;
    rt_xbuf dense_buf, label_buf;
    int64_t **d_offsets; /* [table]: sequence offsets on the device (in off_buf) and host */
    rt_xbuf *off_buf;
    int64_t **h_offsets;
    rt_xunit *units; /* [g->n_units] */
} rt_xslot;

/* Bytes an op really moved on this rank in the first iteration: a collective's per-member
 * sends and receives, a kernel's bytes by the graph's own accounting of the data it saw. */
typedef struct rt_xbytes {
    double bytes, recv_bytes;
    uint64_t *send, *recv; /* [group size], collectives only */
    int seen;
} rt_xbytes;

typedef struct rt_xexec {
    const rt_scenario *s;
    const rt_graph *g;
    rt_xdev *dev;
    rt_xcomm *comm;
    int rank, world;
    rt_xtables tables;
    rt_dnet *net;
    /* The model the dense net is built from: the scenario's, or with an SPTT tower module the
     * model whose pooled tables are the towers' outputs (emb_tower.c), as rt_tm_apply costs it.
     * x->v.emb and the embedding gradients are indexed by its tables. */
    const rt_model *net_model;
    struct rt_xtm *tm;       /* this rank's tower module, NULL without one */
    struct rt_xpad *pad;     /* workload.sequence_layout padded (seq_pad.c), NULL when jagged */
    struct rt_xaccum *accum; /* plan.grad_accum above 1 (grad_accum.c), NULL otherwise */
    /* The batch the running op works on: a copy of one of the slots, saved back after the op.
     * Sync plans have one batch in flight; overlap windows hold up to three. */
    rt_xslot v;
    int n_slots, cur;
    rt_xslot slots[3];
    rt_xgroup *world_grp;
    int n_groups; /* groups opened for collectives, by (size, stride) */
    rt_group *group_keys;
    rt_xgroup **groups;
    rt_xbytes *moved; /* [op], filled while `counting` */
    int counting;
    int64_t iteration;  /* sparse optimizer step counter base */
    char cpu_bind[128]; /* where rank 0 runs (cpu_bind.c), for summary.json */
    /* The core link's round trip before and after the timed iterations (core_link.h), for
     * summary.json; -1 where it was not timed. */
    double local_rtt_s[2];
} rt_xexec;

/* The embedding gradient of TABLE for the running op's batch. */
const float *rt_xexec_emb_grad(const rt_xexec *x, int table);

/* The communicator of this rank's instance of G (opened on first use, collectively). */
rt_xgroup *rt_xexec_group(rt_xexec *x, rt_group g, FILE *err);

/* Records bytes moved by OP (accumulated over calls within one op). */
void rt_xexec_count(rt_xexec *x, int op, double bytes, double recv_bytes);
void rt_xexec_count_peers(rt_xexec *x, int op, const size_t *send, const size_t *recv, int n);

/* Executors, by role: 0 or -1 with the op and the reason on ERR. */
int rt_xemb_setup(rt_xexec *x, FILE *err);
void rt_xemb_free(rt_xexec *x);
int rt_xemb_run(rt_xexec *x, int op, FILE *err);
/* Dedup and key hashing (emb_dedup.c): the KEY_HASH, UNIQUE_SEND and UNIQUE_OWNER ops. */
int rt_xemb_key_hash(rt_xexec *x, rt_xunit *xu, int op, FILE *err);
int rt_xemb_unique(rt_xexec *x, rt_xunit *xu, int op, FILE *err);
void rt_xuniq_free(rt_xdev *d, rt_xuniq *u);
/* Distinct values of NSEG segments (VALS[s], N[s] values), on the host by a sort of (segment,
 * value) records, or of (KEYS[s][j], segment) when KEYS (the hashed keys) is not NULL. Fills
 * OUT[s] (host arrays: distinct values, inverse index) and uploads them to D. rectwin-calibrate
 * times the same function. */
int rt_xuniq_segments(rt_xdev *d, int nseg, const uint64_t *const *vals, const int64_t *n,
                      uint64_t *const *keys, rt_xuniq *const *out, FILE *err);
/* Decodes the received ID messages into per-entry index lists once per iteration. */
int rt_xemb_parse(rt_xexec *x, rt_xunit *xu, int op, FILE *err);
/* Float offsets of every (member, served entry) block of the embedding messages, both ways,
 * from the parsed counts: emb_sc/sd (owner -> member) and emb_rc/rd (member -> this rank). */
void rt_xemb_layout(rt_xexec *x, rt_xunit *xu);
/* SPTT's tower transform (emb_sptt.c): setup and the ops between lookup and recovery. */
int rt_xsptt_setup(rt_xexec *x, rt_xunit *xu, FILE *err);
void rt_xsptt_free(rt_xexec *x, rt_xunit *xu);
int rt_xsptt_run(rt_xexec *x, rt_xunit *xu, int op, FILE *err);
/* HSP's cross-group gradient sync of one unit (emb_sync.c). */
int rt_xemb_sync(rt_xexec *x, rt_xunit *xu, int op, FILE *err);
/* Served entry E's gradient rows from every member, contiguous in bag order (own_grad[e]). */
int rt_xemb_gather_grad(rt_xexec *x, rt_xunit *xu, int e, FILE *err);
int rt_xdense_run(rt_xexec *x, int op, FILE *err);
/* The padded sequence layout (seq_pad.c): SEQ_PAD and SEQ_UNPAD ops, and the padded inputs
 * the dense net reads instead of the jagged ones (B unchanged when jagged). */
typedef struct rt_xpad rt_xpad;
int rt_xpad_open(rt_xexec *x, FILE *err);
void rt_xpad_free(rt_xexec *x);
int rt_xpad_run(rt_xexec *x, int op, FILE *err);
int rt_xpad_batch(const rt_xexec *x, rt_dnet_batch *b);
/* SPTT tower modules (emb_tower.c). open: before the slots and the dense net, sets net_model
 * (and tm when the graph has a tower module), refusing kinds it cannot run. */
int rt_xtm_open(rt_xexec *x, FILE *err);
void rt_xtm_close(rt_xexec *x);
/* The TM_FWD, TM_BWD, TM_ALLREDUCE and TM_UPDATE ops. */
int rt_xtm_run(rt_xexec *x, rt_xunit *xu, int op, FILE *err);
/* Sets the peer AlltoAll's counts (psc/psd/prc/prd) to the towers' module outputs. */
void rt_xtm_layout(const rt_xexec *x, rt_xunit *xu);
/* The dense net's gradients of the tower outputs, in fp32 at BASE in the peer receive layout. */
int rt_xtm_pack_grads(rt_xexec *x, rt_xunit *xu, float *base, int op, FILE *err);
/* The received tower outputs (fp32 at RECV, the peer receive layout) into x->v.emb. */
int rt_xtm_assemble(rt_xexec *x, rt_xunit *xu, const float *recv, int op, FILE *err);
void rt_xtm_free_unit(rt_xexec *x, rt_xunit *xu);

#endif
