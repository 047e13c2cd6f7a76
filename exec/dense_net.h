/* The dense model of rectwin-exec: the model file's typed layers (mlp, dot, dcn, hstu, fuxi,
 * mmoe) as real parameters on a device, run one layer at a time so every layer is its own op
 * of the graph (DENSE_FWD / DENSE_BWD with the layer index), plus the loss (bce or sampled
 * softmax) and the optimizer. Layers over the jagged sequence input work per token.
 * Data parallel: every rank holds the same parameters (initialized from the seed), gradients
 * live in one flat fp32 buffer that the graph's dense AllReduce sums over the ranks. */
#ifndef RT_XDENSE_NET_H
#define RT_XDENSE_NET_H

#include <stdint.h>
#include <stdio.h>

#include "device.h"
#include "model.h"
#include "neg_samples.h"

typedef struct rt_dnet rt_dnet;

/* Hyper-parameters of the dense side (the model file's `training` section). */
typedef struct rt_dnet_opt {
    rt_koptim kind; /* RT_KOPT_SGD or RT_KOPT_ADAM */
    float lr, beta1, beta2, eps;
    /* plan.attention unfused: HSTU blocks run the device's attn_unfused_* (separate kernels
     * over materialized scores) instead of the fused hstu_attn_* */
    int attn_unfused;
} rt_dnet_opt;

/* One iteration's inputs on this rank, all device pointers owned by the caller, valid from
 * rt_dnet_set_batch until the iteration's last backward. */
typedef struct rt_dnet_batch {
    int batch;           /* samples on this rank */
    double global_batch; /* samples over all ranks: the gradients' normalizer (emb_grad) */
    const float *dense;  /* batch x dense_features (NULL when the model has none) */
    /* [table]: a pooled table's batch x dim embeddings, or a sequence table's n_ids x dim
     * token embeddings in sample order. */
    float *const *emb;
    /* [table]: sequence tables only (NULL for pooled): offsets[batch + 1] on the device and
     * on the host (h_offsets), the tokens of each sample. Every sequence table must have the
     * same lengths: a token is one embedding of each. */
    const int64_t *const *offsets;
    const int64_t *const *h_offsets;
    /* Host: the real tokens of each sample when the offsets are those of a padded layout
     * (workload.sequence_layout padded: each sample's real tokens first, then padding); NULL
     * when every token is real. The loss reads real tokens only, and causal attention never
     * lets a real token see a later padded one, so padding changes the work, not the result. */
    const int64_t *h_valid;
    const float *labels; /* CTR: batch labels in {0, 1}; unused by sampled softmax */
} rt_dnet_batch;

/* Builds the network of M (costs already computed by models/model_cost.c) for at most
 * MAX_BATCH samples and MAX_TOKENS tokens per rank (a bound on the tokens of one batch: a
 * sequence table's n_ids; 0 when no layer works per token). Per-token layers (hstu, fuxi and
 * what reads them) size their activations by it. Returns NULL with the reason on ERR: an
 * unsupported layer or loss, or out of device memory (with the bytes asked for). */
rt_dnet *rt_dnet_new(const rt_model *m, rt_xdev *d, int max_batch, int64_t max_tokens,
                     uint64_t seed, rt_dnet_opt opt, FILE *err);
void rt_dnet_free(rt_dnet *n);

int rt_dnet_set_batch(rt_dnet *n, const rt_dnet_batch *b, FILE *err);
/* Layer L forward / backward (backward in reverse order, after the loss). */
int rt_dnet_forward(rt_dnet *n, int layer, FILE *err);
int rt_dnet_loss(rt_dnet *n, FILE *err);
int rt_dnet_backward(rt_dnet *n, int layer, FILE *err);
/* The loss of the last rt_dnet_loss, on this rank: bce, the mean over its samples (and tasks);
 * sampled softmax, the mean over its target tokens (each token but the last of its sequence).
 * Syncs. */
double rt_dnet_loss_value(rt_dnet *n);
/* d(global objective) / d(emb[table]) once the loss and the backward of every layer that
 * consumes the table have run: the shape of emb[table], so batch x dim for a pooled table and
 * n_ids x dim (the batch's tokens) for a sequence table, which receives the sampled-softmax
 * gradient of its positive and negative token embeddings plus that of the layer inputs. Device
 * memory owned by the net. The global objective: bce, the mean over all ranks' samples;
 * sampled softmax, the sum over all ranks' target tokens divided by global_batch (per sample,
 * see dense_net.c). */
const float *rt_dnet_emb_grad(const rt_dnet *n, int table);
/* The matmul-class FLOPs (a multiply-add is 2, models/model_cost.c's convention) layer L's last
 * forward ran, counted by the net as it launched them; NAN for a bad index. Tests compare it
 * with the sum over samples of the layer's fwd_flops polynomial. */
double rt_dnet_layer_flops(const rt_dnet *n, int layer);
/* Tokens of the current batch (0 for a model without sequence tables). */
int64_t rt_dnet_tokens(const rt_dnet *n);
/* Sampled softmax with the plan's negatives map C (C->per_query): per-query negatives
 * (neg_samples.h) stored as STORED, instead of in-batch negatives shared by all queries. C
 * must outlive N. Before the first batch. */
int rt_dnet_set_negatives(rt_dnet *n, const rt_neg_cfg *c, rt_kdtype stored, FILE *err);
/* Per-query negatives (NULL when they are shared): the neg.offload op gathers them to the
 * host, the neg.fetch op brings the first segment back before the loss. */
int rt_dnet_neg_offload(rt_dnet *n, FILE *err);
int rt_dnet_neg_prefetch(rt_dnet *n, FILE *err);
const rt_xneg *rt_dnet_negatives(const rt_dnet *n);
/* The flat fp32 gradient buffer (all parameters) for the AllReduce, and its length. */
float *rt_dnet_grads(rt_dnet *n, int64_t *len);
/* Optimizer step on the summed gradients. */
int rt_dnet_update(rt_dnet *n, FILE *err);

/* Parameters: the flat fp32 weights (device) and their count, for checkpoints and tests. */
float *rt_dnet_params(rt_dnet *n, int64_t *len);
/* Optimizer state (Adam m and v, each `len` floats; NULL for SGD) and the step counter. */
float *rt_dnet_opt_state(rt_dnet *n, int which);
int64_t *rt_dnet_step(rt_dnet *n);

#endif
