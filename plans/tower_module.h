/* Tower modules (DMT, seed 004, section 3.2 and 4): a small dense module per tower that runs
 * after SPTT's shuffle (step e), on the tower's pooled embeddings of every peer's samples, and
 * compresses them by a ratio R before the cross-host peer AlltoAll (step f).
 *
 * - linear (DLRM-style): a linear combination of the tower's F features into n = ceil(F / R)
 *   feature vectors, then a projection on the embedding dimension (d -> d) of each of them.
 *   The output stays d wide, so DLRM's dot interaction still pairs it with the bottom MLP.
 * - crossnet (DCN-style): a small low-rank CrossNet on the flattened tower input (width W),
 *   then a linear projection W -> ceil(W / R).
 *
 * The global interaction then sees the towers' outputs instead of the raw embeddings, so the
 * model's dense layers are re-costed (rt_tm_apply). Sequence features are not compressed. */
#ifndef RT_TOWER_MODULE_H
#define RT_TOWER_MODULE_H

#include <stdio.h>

#include "model.h"

typedef enum { RT_TM_NONE, RT_TM_LINEAR, RT_TM_CROSSNET, RT_TM_COUNT } rt_tm_kind;

typedef struct rt_tm_spec {
    rt_tm_kind kind;
    double compression; /* R >= 1 */
    int cross_layers;   /* crossnet: cross layers (default 1) */
    int cross_rank;     /* crossnet: low rank (0 = the output width) */
} rt_tm_spec;

/* One tower module's shape and per-sample cost (forward FLOPs; backward is 2x, as for every
 * layer in models/model_cost.c). Elements, not bytes, for the byte fields. */
typedef struct rt_tm_cost {
    int in_features; /* pooled features of the tower */
    double in_elems; /* their summed width */
    int out_vectors; /* vectors handed to the global interaction */
    int out_width;   /* width of each */
    double fwd_flops;
    double fwd_elems; /* minimum activation elements read + written, forward */
    double act_elems; /* activations kept for backward */
    double params;
} rt_tm_cost;

extern const char *const rt_tm_kind_names[];

/* Cost of the tower module SPEC on the pooled tables of M listed in FEATURES. Returns 0, or -1
 * with a message on ERR (linear needs pooled features of one width). */
int rt_tm_cost_of(const rt_tm_spec *spec, const rt_model *m, const int *features, int n,
                  rt_tm_cost *c, FILE *err);

/* Re-costs M as the DMT model: the layers that read 'embeddings' read every tower's module
 * output instead, and the tower modules' FLOPs, bytes, activations and parameters are added to
 * the model totals. TOWER_OF[f] is table f's tower, in [0, N_TOWERS). Recomputes M's costs
 * from scratch first, so applying twice gives the same model. Fills TM[t] when not NULL and
 * *TM_PARAMS with the parameters of all towers' modules. Returns 0 or -1 (message on ERR). */
int rt_tm_apply(rt_model *m, const rt_tm_spec *spec, const int *tower_of, int n_towers,
                rt_tm_cost *tm, double *tm_params, FILE *err);

#endif
