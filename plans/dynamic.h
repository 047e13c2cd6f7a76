/* What a dynamic (hash) embedding table costs on the shard that owns it (core/dynamic_table.h):
 * the key structure's growth over a run as new keys arrive, the load its probes run at, the
 * expected probes per key, and the memory of keys, values and metadata. plans/exchange.c turns
 * this into the probe, fetch, write-back and eviction ops of an exchange. */
#ifndef RT_PLAN_DYNAMIC_H
#define RT_PLAN_DYNAMIC_H

#include <stdint.h>

#include "dynamic_table.h"

/* One shard of a dynamic table over a run of `iterations` batches. */
typedef struct rt_dyn_run {
    double keys0;       /* live keys at the start (the table's rows held by the shard) */
    double slots0;      /* key slots at the start */
    double load;        /* mean load (live keys / slots) the iterations' probes see */
    int grows;          /* doublings of the key structure during the run */
    double grow_bytes;  /* key slots read and written by those doublings, per iteration */
    double keys_end;    /* live keys at the end (after eviction) */
    double slots_end;   /* key slots at the end */
    double rows_handed; /* value rows ever handed out (evicted rows are reused) */
    double chunks_end;  /* value chunks at the end, the kernel's spare one included */
    double live_evict;  /* mean live keys the eviction scans, per iteration */
    double evicted;     /* mean keys evicted per iteration */
} rt_dyn_run;

/* Slots the key structure starts with to hold KEYS under LOAD_FACTOR: the smallest power of
 * two, at least 16 (the kernel's minimum), with keys <= load_factor x slots. */
double rt_dyn_initial_slots(double keys, double load_factor);

/* The run of a shard starting with KEYS0 keys and receiving NEW_PER_ITER new keys per
 * iteration for ITERATIONS iterations. A doubling of S slots reads the S old slots and writes
 * the 2S new ones (16 bytes each); no value row is copied, value chunks are only added.
 * Eviction runs after each iteration's inserts. Tombstones of evicted keys are not modelled:
 * the kernel counts them against the load and rebuilds at equal size when they dominate. */
rt_dyn_run rt_dyn_simulate(const rt_dyn_spec *spec, double keys0, double new_per_iter,
                           int iterations);

/* Expected slots probed by a key present (hit) or absent (miss, then inserted) at load A
 * under the kernel's double hashing, by the uniform-probing approximation (Knuth, TAOCP
 * vol. 3, section 6.4, Algorithm D and eqs. (54)-(55)): hit (1/a) ln(1/(1-a)), miss 1/(1-a). */
double rt_dyn_probes_hit(double a);
double rt_dyn_probes_miss(double a);

/* HBM bytes of a shard at the end of RUN, for rows of VALUE_BYTES (embedding row and optimizer
 * state): key slots unless offloaded to the host, value chunks and their row metadata unless
 * the values are. */
double rt_dyn_memory(const rt_dyn_spec *spec, const rt_dyn_run *run, double value_bytes);

#endif
