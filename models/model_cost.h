/* Per-layer cost arithmetic: FLOPs, minimum HBM bytes, stored activations and parameters of
 * every layer of a parsed rt_model. The conventions are written at the top of model_cost.c and
 * in models/README.md. */
#ifndef RT_MODEL_COST_H
#define RT_MODEL_COST_H

#include <stdio.h>

#include "model.h"

/* Resolves every layer's input shape and fills the rt_layer and rt_model cost fields (per-sample
 * polynomials in the token count L, see rt_poly), dense_params and embedding_params. Returns 0,
 * or -1 after printing "model NAME: layer NAME: what is wrong" to ERR (for example a dot over
 * vectors of unequal width, an input naming a later layer, a sequence input without sequence
 * tables, an mlp with no sizes). */
int rt_model_compute_costs(rt_model *m, FILE *err);

#endif
