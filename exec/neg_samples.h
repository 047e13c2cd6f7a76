/* Per-query sampled negatives of exec's sampled softmax, with the plan's `negatives` map
 * (core/negatives.h; TurboGR, seed 002 section 4.3; priced by plans/negatives.c). Every query
 * (output token with a next token) gets its own `negatives` token embeddings of the rank's
 * batch, at real-token positions drawn by a fixed hash of (seed, query, j), gathered into a
 * queries x negatives x dim tensor: the HBM the paper's section is about.
 *   dtype: the tensor is stored in fp16 (else in the dense dtype) and read back as fp32;
 *   expansion k: query i also scores the negatives of queries i+1 .. i+k-1 (wrapping), k x
 *     negatives logits from the same gathers, and the softmax runs over 1 + k x negatives;
 *   offload: the gather goes through a device segment to a host buffer (neg.offload); the loss
 *     fetches it back `segment` queries at a time into two device segments, the next one
 *     while the current is scored (neg.fetch), once for the logits and once for their
 *     backward (dq = dlogits x negatives), so two segments are all the device holds.
 * The loss always walks the negatives in segments of ascending queries, resident or fetched,
 * so offload changes where the tensor lives and not one bit of the result. The kernels are
 * kernels/cpu/neg_logits.c and kernels/cuda/neg_logits.cu. */
#ifndef RT_XNEG_SAMPLES_H
#define RT_XNEG_SAMPLES_H

#include <stdint.h>
#include <stdio.h>

#include "device.h"
#include "negatives.h"

typedef struct rt_xneg rt_xneg;

/* Bytes: held for the negatives (device: tensor or two segments, staging, logits, indices;
 * host: the offload buffer) and moved by the last iteration's copies. */
typedef struct rt_xneg_bytes {
    double device_held, host_held;
    double offloaded;  /* device to host, by the gather */
    double prefetched; /* host to device, the first segment before the loss */
    double fetched;    /* host to device, inside the loss */
} rt_xneg_bytes;

/* For at most MAX_Q queries of NNEG negatives of DIM floats, stored as STORED (fp32, fp16 or
 * bf16). NULL with the reason on ERR. */
rt_xneg *rt_xneg_new(rt_xdev *d, const rt_neg_cfg *c, rt_kdtype stored, int64_t max_q, int64_t nneg,
                     int64_t dim, uint64_t seed, FILE *err);
void rt_xneg_free(rt_xneg *g);
int rt_xneg_offloads(const rt_xneg *g);

/* Draws the negatives of NQ queries among the real tokens of the batch (host offsets H of
 * BATCH samples, VALID real tokens each or NULL). */
int rt_xneg_sample(rt_xneg *g, const int64_t *h, const int64_t *valid, int batch, int64_t nq,
                   FILE *err);
/* Gathers them from the T x dim token embeddings TOK (to the host when offloaded). */
int rt_xneg_gather(rt_xneg *g, const float *tok, int64_t tokens, FILE *err);
/* Offloaded: the first segment into the first device segment before the loss. */
int rt_xneg_prefetch(rt_xneg *g, FILE *err);
/* The softmax over [q.pos, k x negatives logits] of each query (Q and POS nq x dim): LOSS (a
 * device float) the mean over queries; DQ and DPOS the gradients of SCALE x the sum over
 * queries, and the negatives' gradients added into DTOK (T x dim). */
int rt_xneg_loss(rt_xneg *g, const float *q, const float *pos, float scale, float *loss, float *dq,
                 float *dpos, float *dtok, int64_t tokens, FILE *err);
rt_xneg_bytes rt_xneg_stats(const rt_xneg *g);

#endif
