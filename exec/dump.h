/* `--dump DIR`: the numbers the semantics tests compare across plans, as text that round-trips
 * fp32 exactly ("%.9g"): this rank's pooled embeddings and loss of the first iteration, and its
 * table shards after the last one. */
#ifndef RT_XDUMP_H
#define RT_XDUMP_H

#include <stdio.h>

#include "exec.h"

/* DIR/emb.RANK.txt: "table row v0 v1 ..." per pooled table and sample (row = rank x batch +
 * sample) and per sequence table and token (row = rank x 1e9 + token), and DIR/loss.RANK.txt. */
int rt_xdump_iteration(const rt_xexec *x, const char *dir, FILE *err);
/* DIR/table.RANK.txt: "table row col0 v0 v1 ..." for every row of every shard of this rank. */
int rt_xdump_tables(const rt_xexec *x, const char *dir, FILE *err);

#endif
