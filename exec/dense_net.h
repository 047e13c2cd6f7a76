/* The dense model of rectwin-exec: the model file's typed layers (mlp, dot, dcn, hstu, fuxi,
 * mmoe) as real parameters on a device, run one layer at a time so every layer is its own op
 * of the graph (DENSE_FWD / DENSE_BWD with the layer index), plus the loss and the optimizer.
 * Data parallel: every rank holds the same parameters (initialized from the seed), gradients
 * live in one flat fp32 buffer that the graph's dense AllReduce sums over the ranks. */
#ifndef RT_XDENSE_NET_H
#define RT_XDENSE_NET_H

#include <stdint.h>
#include <stdio.h>

#include "device.h"
#include "model.h"

typedef struct rt_dnet rt_dnet;

/* Hyper-parameters of the dense side (the model file's `training` section). */
typedef struct rt_dnet_opt {
    rt_koptim kind; /* RT_KOPT_SGD or RT_KOPT_ADAM */
    float lr, beta1, beta2, eps;
} rt_dnet_opt;

/* One iteration's inputs on this rank, all device pointers owned by the caller, valid from
 * rt_dnet_set_batch until the iteration's last backward. */
typedef struct rt_dnet_batch {
    int batch;           /* samples on this rank */
    double global_batch; /* samples over all ranks: gradients are those of the global mean loss */
    const float *dense;  /* batch x dense_features (NULL when the model has none) */
    /* [table]: a pooled table's batch x dim embeddings, or a sequence table's n_ids x dim
     * token embeddings in sample order. */
    float *const *emb;
    /* [table]: sequence tables only (NULL for pooled): offsets[batch + 1] on the device and
     * on the host (h_offsets), the tokens of each sample. */
    const int64_t *const *offsets;
    const int64_t *const *h_offsets;
    const float *labels; /* CTR: batch labels in {0, 1}; unused by sampled softmax */
} rt_dnet_batch;

/* Builds the network of M (costs already computed by models/model_cost.c) for at most
 * MAX_BATCH samples and MAX_TOKENS tokens per rank. Returns NULL with the reason on ERR: an
 * unsupported layer or loss, or out of device memory (with the bytes asked for). */
rt_dnet *rt_dnet_new(const rt_model *m, rt_xdev *d, int max_batch, int64_t max_tokens,
                     uint64_t seed, rt_dnet_opt opt, FILE *err);
void rt_dnet_free(rt_dnet *n);

int rt_dnet_set_batch(rt_dnet *n, const rt_dnet_batch *b, FILE *err);
/* Layer L forward / backward (backward in reverse order, after the loss). */
int rt_dnet_forward(rt_dnet *n, int layer, FILE *err);
int rt_dnet_loss(rt_dnet *n, FILE *err);
int rt_dnet_backward(rt_dnet *n, int layer, FILE *err);
/* The loss of the last rt_dnet_loss (mean over this rank's samples or tokens); syncs. */
double rt_dnet_loss_value(rt_dnet *n);
/* d(global mean loss) / d(emb[table]) after the backward of the layer that consumes it: the
 * shape of emb[table]; device memory owned by the net. */
const float *rt_dnet_emb_grad(const rt_dnet *n, int table);
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
