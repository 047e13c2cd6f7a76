/* How a retrieval model's sampled negatives are held (the plan's `negatives` map; TurboGR,
 * seed 002 section 4.3): asynchronous offload of the negative embeddings to host memory with a
 * segmented, double-buffered fetch back for the logits; fp16 storage of the negative
 * embeddings; intra-batch logit sharing with expansion factor k (k x negatives logits per
 * token, no extra lookups). */
#ifndef RT_NEGATIVES_H
#define RT_NEGATIVES_H

struct rt_cfg;
struct fy_node;
struct rt_model;

typedef struct rt_neg_cfg {
    int per_query; /* the map is present: every output token samples its own negatives */
    int offload;   /* negative embeddings live in host memory between gather and logits */
    int segment;   /* output tokens per fetched segment (two segments resident) */
    int fp16;      /* negative embeddings stored in fp16 (else the dense dtype) */
    int expansion; /* k: logits per token = k x negatives (1: no sharing) */
} rt_neg_cfg;

/* Defaults: no offload, segments of 100 tokens (the paper's example), dense dtype, k = 1. */
rt_neg_cfg rt_neg_cfg_default(void);

/* Parses the plan's `negatives` map, if present, into *OUT; refused for a model without
 * sampled negatives. 0 or -1 with a located message. */
int rt_neg_cfg_parse(struct rt_cfg *c, struct fy_node *plan, const struct rt_model *m,
                     rt_neg_cfg *out);

#endif
