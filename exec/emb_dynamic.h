/* A dynamic table shard in rectwin-exec: the kernels' hash table (kernels.h rt_khash) holds
 * every key of the shard with its row and optimizer state side by side; value chunks never
 * move when the key structure doubles. Each batch, the keys that reach the owner are probed
 * (new ones inserted and initialized as a static table's row of that number would be), and
 * the distinct rows touched form the shard's working set: a dense table the lookup and the
 * fused sparse update run on, copied from the hash rows and written back after the update.
 * So a dynamic table with no new IDs trains exactly like the static table it replaces.
 *
 * The CPU backend only (the hash rows are host memory); plans flat and fused (no key hash,
 * no row hashing), without HSP sync, towers or overlap: exec refuses the rest. */
#ifndef RT_XEMB_DYNAMIC_H
#define RT_XEMB_DYNAMIC_H

#include <stdint.h>
#include <stdio.h>

#include "device.h"
#include "scenario.h"

struct rt_xshard;

typedef struct rt_xdyn {
    rt_khash *h;
    int s0, s1;        /* optimizer state floats per row in each slot */
    int64_t *ws;       /* hash rows of the working set, ascending */
    int64_t n_ws, cap; /* working-set rows; rows allocated for the dense copies */
    int64_t *scratch;  /* host scratch for probing */
    int64_t scratch_n;
    /* Counted over the run, for summary.json: keys inserted and evicted, doublings seen. */
    int64_t inserted, evicted, grows;
} rt_xdyn;

/* Creates the hash table of shard SH of a dynamic table and inserts its ROWS keys from ROW0
 * with their initial values; the shard's dense copies start empty. 0 or -1 (message on ERR). */
int rt_xdyn_create(struct rt_xshard *sh, rt_xdev *d, const rt_scenario *s, uint64_t row0,
                   uint64_t rows, FILE *err);
void rt_xdyn_free(struct rt_xshard *sh, rt_xdev *d);

/* Probes the N keys in IDS (inserting new ones) and replaces each by its working-set index;
 * the working set becomes the distinct rows touched. 0 or -1 (message on ERR). */
int rt_xdyn_probe(struct rt_xshard *sh, const rt_scenario *s, int64_t *ids, int64_t n, FILE *err);
/* Copies the working set's rows and state into the shard's dense table (allocated to fit). */
int rt_xdyn_fetch(struct rt_xshard *sh, rt_xdev *d, FILE *err);
/* Copies the dense table and state back into the hash rows. */
void rt_xdyn_write_back(struct rt_xshard *sh);
/* Evicts down to CAPACITY keys by POLICY (LRU or LFU counters of the kernel). */
int rt_xdyn_evict(struct rt_xshard *sh, const rt_scenario *s, FILE *err);

#endif
