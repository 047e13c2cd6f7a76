/* A recommendation model: embedding tables (one per sparse feature) and a dense architecture
 * of typed layers. core/model.c parses it; models/model_cost.c fills in the per-layer costs. */
#ifndef RT_MODEL_H
#define RT_MODEL_H

#include <stdint.h>

#include "dtype.h"
#include "dynamic_table.h"

struct rt_cfg;
struct fy_node;

typedef enum { RT_DIST_UNIFORM, RT_DIST_ZIPF, RT_DIST_COUNT } rt_id_dist;
typedef enum { RT_LEN_FIXED, RT_LEN_LOGNORMAL, RT_LEN_EMPIRICAL, RT_LEN_COUNT } rt_len_dist;
typedef enum {
    RT_OPT_SGD,
    RT_OPT_ADAGRAD,
    RT_OPT_ROWWISE_ADAGRAD,
    RT_OPT_ADAM,
    RT_OPT_COUNT
} rt_optimizer;

/* Distribution of a per-sample count: pooling factor (IDs per sample) or sequence length. */
typedef struct rt_len_spec {
    rt_len_dist kind;
    double mean;  /* fixed: the value; lognormal: the mean of the length */
    double sigma; /* lognormal: sigma of log(length) */
    int min, max; /* clamp, inclusive; max also bounds padding */
    int n_bins;   /* empirical: values[i] with weight[i] */
    double *values;
    double *weights;
} rt_len_spec;

typedef struct rt_id_spec {
    rt_id_dist kind;
    double alpha; /* zipf exponent, > 0 */
} rt_id_spec;

typedef struct rt_table {
    char *name;
    uint64_t rows;    /* vocabulary; for dynamic tables the expected number of live keys */
    int dynamic;      /* hash table keyed by raw 64-bit IDs */
    rt_dyn_spec hash; /* dynamic: the key structure and value chunks (core/dynamic_table.h) */
    int dim;
    int sequence; /* 1: un-pooled, one embedding per ID (sequence feature) */
    rt_dtype dtype;
    rt_optimizer optimizer;
    char *initializer;
    rt_len_spec pooling; /* IDs per sample */
    rt_id_spec ids;
} rt_table;

typedef enum {
    RT_LAYER_MLP,
    RT_LAYER_DOT,  /* DLRM pairwise dot interaction */
    RT_LAYER_DCN,  /* DCN-v2 low-rank cross network */
    RT_LAYER_HSTU, /* stack of HSTU blocks over a jagged sequence */
    RT_LAYER_FUXI, /* stack of FuXi blocks over a jagged sequence */
    RT_LAYER_MMOE, /* multi-gate mixture of experts with per-task towers */
    RT_LAYER_COUNT
} rt_layer_kind;

/* Where a layer's input comes from. */
typedef enum { RT_SRC_DENSE, RT_SRC_EMBEDDINGS, RT_SRC_SEQUENCE, RT_SRC_LAYER } rt_src_kind;
typedef struct rt_src {
    rt_src_kind kind;
    int layer; /* RT_SRC_LAYER: index of an earlier layer */
} rt_src;

/* Per-sample cost as a polynomial in the sample's token count L (1 for non-sequence models):
 * value = c[0] + c[1] * L + c[2] * L^2. */
typedef struct rt_poly {
    double c[3];
} rt_poly;

typedef struct rt_layer {
    rt_layer_kind kind;
    char *name;
    int n_inputs;
    rt_src *inputs; /* default: the previous layer, or dense features for the first */

    int n_sizes;
    int *sizes;          /* mlp widths; mmoe expert widths */
    int activation_last; /* mlp: activation after the last linear (default 1 except when width 1) */
    int num_layers;      /* dcn: cross layers; hstu/fuxi: blocks */
    int rank;            /* dcn: low rank */
    int heads;           /* hstu/fuxi */
    int d_qk, d_v;       /* hstu/fuxi: per-head dims */
    int d_model;         /* hstu/fuxi: token width (0 = input width) */
    int ffn_mult;        /* fuxi: FFN hidden = ffn_mult * d_model */
    int experts, tasks;
    int n_tower_sizes;
    int *tower_sizes; /* mmoe per-task tower widths */

    /* Filled by models/model_cost.c. */
    int in_vectors, in_width; /* input as in_vectors vectors of in_width (flattened: product) */
    int per_token;            /* works per token of the sequence (else per sample) */
    int needs_dx;             /* some input receives a gradient (not only dense features) */
    int out_vectors, out_width;
    rt_poly fwd_flops, bwd_flops; /* per sample */
    rt_poly fwd_bytes, bwd_bytes; /* minimum HBM bytes per sample, dense dtype */
    rt_poly act_bytes;            /* activations kept for backward, per sample */
    double params;
    double aux_params; /* trained, not in params: relative attention bias tables */
} rt_layer;

/* How rectwin-exec trains the model (the model file's optional `training` section): the dense
 * optimizer and the learning rates; each table's sparse optimizer is its own `optimizer`. */
typedef struct rt_training {
    rt_optimizer dense_optimizer; /* sgd or adam */
    double dense_lr, sparse_lr;
    double beta1, beta2, eps; /* Adam, Adagrad (eps) */
} rt_training;

typedef struct rt_model {
    char *name;
    char *source; /* where the configuration comes from */
    int dense_features;
    int seq_len; /* nominal tokens per sample for sequence models (0 = not a sequence model) */
    rt_dtype dense_dtype;
    int n_tables;
    rt_table *tables;
    int n_layers;
    rt_layer *layers;
    char *loss;    /* "bce" or "sampled_softmax" */
    int negatives; /* sampled softmax negatives per token */
    rt_training training;

    /* Filled by models/model_cost.c. */
    rt_poly fwd_flops, bwd_flops, fwd_bytes, bwd_bytes, act_bytes;
    double dense_params;
    double aux_params;       /* trained dense parameters the papers' sizes leave out */
    double embedding_params; /* sum rows x dim */
} rt_model;

extern const char *const rt_optimizer_names[];
extern const char *const rt_layer_kind_names[];
extern const char *const rt_id_dist_names[];
extern const char *const rt_len_dist_names[];

/* Parses a model mapping. With PARTIAL, keys may be absent (used for scenario overrides on top
 * of a model file); otherwise required keys must be there. Returns 0 or -1 (message printed). */
int rt_model_parse(struct rt_cfg *cfg, struct fy_node *map, rt_model *m, int partial);
void rt_model_free(rt_model *m);

/* Parse a length distribution ({kind, mean, sigma, min, max, values, weights}) or an ID
 * distribution ({kind, alpha}) mapping over the current values of *L / *S. */
int rt_len_spec_parse(struct rt_cfg *c, struct fy_node *map, rt_len_spec *l);
int rt_id_spec_parse(struct rt_cfg *c, struct fy_node *map, rt_id_spec *s);

/* Optimizer state floats per row of width DIM. */
int rt_optimizer_state_floats(rt_optimizer o, int dim);

static inline double rt_poly_eval(rt_poly p, double L)
{
    return p.c[0] + p.c[1] * L + p.c[2] * L * L;
}

#endif
