/* The kernels a layer's forward or backward launches, as rectwin-exec's dense net runs them
 * (exec/dense_net.c): GEMMs with their shapes, pointwise passes, norms, softmax, concatenation
 * and gradient routing as bytes of a calibrated family, attention and the dot interaction as
 * FLOPs. The analytic and SimGrid engines cost each on its own calibrated curve.
 *
 * These are the executed FLOPs, not the model's useful FLOPs (models/model_cost.c, MFU): the
 * backward of a GEMM is two GEMMs; attention's backward recomputes the scores and forms five
 * products where the forward forms two (2.5x, not 2x); the dot interaction computes each pair
 * once. Pointwise bytes follow the calibration's counting (exec/calibrate_kernels.c). */
#ifndef RT_LAYER_OPS_H
#define RT_LAYER_OPS_H

#include "graph.h"
#include "model.h"

/* Writes the pieces of layer LAYER of M (costs computed) for ROWS rows (samples, or tokens for
 * a per-token layer) whose sequences hold PAIRS causal (query, key) pairs in all, forward or
 * BACKWARD, into OUT (CAP entries); OUT NULL only counts. UNFUSED: attention as separate
 * kernels (plan.attention, core/scenario.h) whose score matrices round-trip HBM: the pieces of
 * rt_layer_score_passes. Returns the number of pieces, or -1 when CAP is too small. */
int rt_layer_pieces(const rt_model *m, int layer, int backward, double rows, double pairs,
                    int unfused, rt_piece *out, int cap);

/* Unfused attention: the passes over an n x n score-shaped matrix (one element per causal
 * (query, key) pair, per head, per channel) that a fused kernel keeps on chip, summed over the
 * layer's blocks; 0 for a layer without attention. Times pairs x element bytes: the HBM bytes
 * unfused adds. Per HSTU block and head, forward 4 (the scores GEMM writes S; the bias + SiLU
 * pass reads S and writes P; the P x V GEMM reads P), backward 7 (dP = dO V^T written; dV =
 * P^T dO reads P; the SiLU backward reads dP and S and writes dS; dQ = dS K and dK = dS^T Q
 * read dS each). FuXi adds, per position or time channel (weights silu(bias), no scores),
 * forward 2 (P written, read by P x V) and backward 3 (dP written; read by dV's product and
 * by the bias gradient's reduction). */
double rt_layer_score_passes(const rt_layer *l, int backward);

/* The loss's launches for OUTS outputs (samples, or tokens) of a rank, each against NEG
 * sampled negatives of width DIM (NEG 0: binary cross-entropy), into OUT as above. */
int rt_loss_pieces(const rt_model *m, double outs, double neg, int dim, rt_piece *out, int cap);

#endif
