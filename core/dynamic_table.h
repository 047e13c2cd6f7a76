/* The storage of a dynamic (hash) embedding table, the model's `hash` map of a table with
 * `dynamic: true` (seed 000 section 4.1, seed 001's IDMap + Blocks): a key structure of (key,
 * row) slots kept under a load factor and doubled when it would pass it, value chunks that are
 * added and never moved, optional eviction by LRU or LFU counters, and the offload of the keys
 * or the values to host memory. */
#ifndef RT_DYNAMIC_TABLE_H
#define RT_DYNAMIC_TABLE_H

#include <stdint.h>

struct rt_cfg;
struct fy_node;

typedef enum { RT_EVICT_NONE, RT_EVICT_LRU, RT_EVICT_LFU, RT_EVICT_COUNT } rt_evict;
typedef enum { RT_OFFLOAD_NONE, RT_OFFLOAD_KEYS, RT_OFFLOAD_VALUES, RT_OFFLOAD_COUNT } rt_offload;

typedef struct rt_dyn_spec {
    double load_factor; /* the key structure doubles when the next key would pass it */
    int64_t chunk_rows; /* rows per value chunk */
    rt_evict eviction;  /* after the update, down to capacity keys */
    uint64_t capacity;  /* keys per shard kept by eviction (0 with eviction none) */
    rt_offload offload; /* what lives in host memory, reached over the host link */
} rt_dyn_spec;

extern const char *const rt_evict_names[];
extern const char *const rt_offload_names[];

/* Bytes of one key slot (64-bit key, 64-bit row) and of a row's metadata (owner key, LRU
 * stamp, LFU count), as kernels/cpu/hash_table.c lays them out. */
#define RT_DYN_SLOT_BYTES 16
#define RT_DYN_META_BYTES 24

/* The defaults: load 0.75, chunks of 65536 rows, no eviction, nothing offloaded. */
rt_dyn_spec rt_dyn_spec_default(void);

/* Parses the `hash` map MAP over *SPEC (keys not given keep their value); 0 or -1 with a
 * located message. */
int rt_dyn_spec_parse(struct rt_cfg *c, struct fy_node *map, rt_dyn_spec *spec);

#endif
