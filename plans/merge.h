/* Automatic table merging (MTGRBoost, seed 000, section 4.2): tables that can share one
 * storage and one update kernel (equal dim, optimizer and dtype) become one merged table. A
 * merged table's IDs carry the table index in their high bits, ID = (i << (63 - k)) | x with
 * k = ceil(log2(m + 1)) for m merged tables and the top bit left 0, so equal raw IDs of
 * different tables stay different keys: a unique over the merged table counts exactly what
 * per-table uniques would, in one kernel instead of m. */
#ifndef RT_MERGE_H
#define RT_MERGE_H

#include <stdint.h>
#include <stdio.h>

#include "scenario.h"

/* Units of a list of features: merged tables, or one unit per feature without merging. */
typedef struct rt_merge_map {
    int n_units;
    int *unit_of;   /* [i]: unit of the i-th listed feature */
    int *slot;      /* [i]: its table index inside the unit (the i of the encoding) */
    int *unit_size; /* [u]: tables in unit u */
} rt_merge_map;

/* Identifier bits for M merged tables: ceil(log2(M + 1)). */
int rt_merge_bits(int m);

/* Encodes raw ID X of table I in a merged table with K identifier bits into *ID. Returns -1
 * when X does not fit in the 63 - K low bits or I does not fit in K bits. */
int rt_merge_encode(int i, int k, uint64_t x, uint64_t *id);

/* Reads the plan key `merge` (absent: 0). Returns 0 or -1 (message with file:line:col). */
int rt_merge_parse(const rt_scenario *s, int *merge);

/* Groups the N tables FEATURES into units: with MERGE, tables of equal (dim, optimizer,
 * dtype) share one, in order of first appearance; otherwise one unit per table. Refuses,
 * with a message on ERR, a merged table whose row count does not fit the encoding. */
int rt_merge_build(const rt_scenario *s, const int *features, int n, int merge, rt_merge_map *m,
                   FILE *err);
void rt_merge_free(rt_merge_map *m);

#endif
