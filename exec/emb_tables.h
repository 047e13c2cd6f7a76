/* This rank's embedding table shards: a block of rows and columns of one table, its optimizer
 * state, on the device. Values depend only on (seed, table, global row, global column), so a
 * table holds the same numbers whatever the plan, the sharding or the rank count: that is what
 * lets different plans be compared bit for bit. */
#ifndef RT_XEMB_TABLES_H
#define RT_XEMB_TABLES_H

#include <stdint.h>
#include <stdio.h>

#include "device.h"
#include "scenario.h"

typedef struct rt_xshard {
    int table;
    int col0, width;     /* columns [col0, col0 + width) */
    uint64_t row0, rows; /* rows [row0, row0 + rows), or the global rows in row_ids */
    uint64_t *row_ids;   /* ascending global rows of a hash-routed shard (owned), or NULL */
    rt_ktable t;         /* rows x width on the device */
    rt_kopt_state st;
    rt_koptim opt;
    struct rt_xdyn *dyn; /* dynamic table (emb_dynamic.h): t and st hold the working set */
} rt_xshard;

typedef struct rt_xtables {
    int n, cap;
    rt_xshard *shards;
    size_t bytes; /* device bytes of values and state */
} rt_xtables;

/* Allocates and initializes a shard of table TABLE: ROWS rows from ROW0, or, with ROW_IDS
 * (ascending, copied), exactly those global rows. Returns its index or -1 (message on ERR:
 * out of device memory with the bytes asked for). */
int rt_xtables_add(rt_xtables *ts, rt_xdev *d, const rt_scenario *s, int table, int col0, int width,
                   uint64_t row0, uint64_t rows, const uint64_t *row_ids, FILE *err);
/* Global row of local row R of shard SH. */
static inline uint64_t rt_xshard_global_row(const rt_xshard *sh, uint64_t r)
{
    return sh->row_ids ? sh->row_ids[r] : sh->row0 + r;
}
void rt_xtables_free(rt_xtables *ts, rt_xdev *d);

/* The initial value of element (row, col) of table TABLE (fp32, before dtype rounding). */
float rt_xtables_init_value(const rt_scenario *s, int table, uint64_t row, int col);

/* The sparse optimizer of table TABLE at update number STEP (1 for the first). */
rt_kopt rt_xtables_opt(const rt_scenario *s, int table, int64_t step);

#endif
