/* Checkpoints of rectwin-exec (`--checkpoint DIR`, `--resume DIR`): the embedding shards with
 * their sparse optimizer state, the dense parameters with theirs, and the iteration to run
 * next. A checkpoint names rows by (table, global row, column range), never by rank or shard,
 * so a run saved at N ranks resumes at M ranks under any plan and sharding of the same model
 * (MTGRBoost, seed 000, resumes its jobs on another GPU count).
 *
 * DIR/shard.R.bin, one per rank R at save (host byte order, recorded in meta.json):
 *   file header  "RTXCKSH1" (8 bytes), u32 format version, i32 rank, i32 world, i32 shards
 *   per shard    i32 table, i32 col0, i32 width, i32 dtype (0 fp32, 1 fp16, 2 bf16: the
 *                storage type of the values), i32 optimizer (0 sgd, 1 adagrad, 2 row-wise
 *                adagrad, 3 adam), i32 0, u64 rows; then per row:
 *                u64 global row, width values in the stored dtype (raw bytes, so a save and
 *                load in the same dtype is exact), the row's optimizer state as fp32: none
 *                (sgd), width sums of squares (adagrad), one mean of squares (row-wise
 *                adagrad), width first moments then width second moments (adam).
 *   Replicated shards (HSP keeps a full copy of every table per group) are written once, by
 *   the lowest rank holding them.
 * DIR/dense.bin: "RTXCKDN1", u32 version, i32 optimizer (0 sgd, 3 adam), i64 parameters N,
 *   i64 dense optimizer steps taken, N fp32 parameters, then Adam's N m and N v.
 * DIR/meta.json: format version, scenario, model and its tables (rows, dim, optimizer), world
 *   size at save, next_iteration (the first iteration a resumed run runs), seed, global
 *   batch, embedding dtype, byte order, and the size and FNV-1a 64 checksum of every file.
 *
 * A save writes DIR.tmp.<pid of rank 0> and swaps it into place only when every file is
 * written and synced, so DIR is always either the previous checkpoint or the new one. */
#ifndef RT_XCHECKPOINT_H
#define RT_XCHECKPOINT_H

#include <stdio.h>

#include "exec.h"

/* Collective over MPI_COMM_WORLD: saves the state after iteration x->iteration. Returns 0, or
 * -1 on every rank when any rank failed (the lowest failing rank's reason on ERR); DIR is
 * then left as it was. */
int rt_xckpt_save(const rt_xexec *x, const char *dir, FILE *err);

/* Collective: loads DIR into X, freshly opened for the same model with any rank count, plan
 * and sharding, and sets x->iteration to the last iteration the checkpoint had run (the next
 * one to run is x->iteration + 1). Every rank reads every shard file and keeps the rows its
 * own shards hold; columns are copied where the saved and the current column ranges overlap.
 * Returns -1 on every rank when any failed: a corrupt or foreign file (named), another model,
 * a row missing or present twice, a row-wise Adagrad table sharded by other columns. */
int rt_xckpt_load(rt_xexec *x, const char *dir, FILE *err);

#endif
