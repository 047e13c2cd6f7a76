/* ID deduplication (MTGRBoost, seed 000, section 4.3; FusedRec, seed 003, segment unique).
 * Stage 1 removes duplicate IDs on the sender before the ID AlltoAll, so fewer IDs and fewer
 * embedding rows cross the network; stage 2 removes the duplicates that the AlltoAll brings
 * together from different senders, so the owner reads and updates each row once.
 *
 * Counts are exact whenever the IDs are at hand (a representative's own batch; every rank in
 * exact mode). A statistical workload does not sample every sender, so the owner's stage-2
 * count is the expected number of distinct keys among the m draws all senders route to it:
 * E[U] = sum_k 1 - (1 - p_k)^m over the keys it owns. */
#ifndef RT_DEDUP_H
#define RT_DEDUP_H

#include <stdint.h>

#include "model.h"
#include "scenario.h"

typedef enum {
    RT_DEDUP_NONE,
    RT_DEDUP_COMM,      /* stage 1 only: unique on the sender */
    RT_DEDUP_LOOKUP,    /* stage 2 only: unique on the owner */
    RT_DEDUP_TWO_STAGE, /* both */
    RT_DEDUP_COUNT
} rt_dedup_mode;

extern const char *const rt_dedup_names[];

static inline int rt_dedup_stage1(rt_dedup_mode m)
{
    return m == RT_DEDUP_COMM || m == RT_DEDUP_TWO_STAGE;
}
static inline int rt_dedup_stage2(rt_dedup_mode m)
{
    return m == RT_DEDUP_LOOKUP || m == RT_DEDUP_TWO_STAGE;
}

/* Reads the plan key `dedup` (absent: DFLT). Returns 0 or -1 (message with file:line:col). */
int rt_dedup_parse(const rt_scenario *s, rt_dedup_mode dflt, rt_dedup_mode *out);

/* Expected distinct keys among M independent draws from IDS over ROWS keys, counting only
 * keys with index in [LO, HI). Zipf: exact sum over the head of the range, integral over its
 * tail, so the cost does not grow with the vocabulary. */
double rt_dedup_expected_unique(rt_id_spec ids, uint64_t rows, uint64_t lo, uint64_t hi, double m);

/* Distinct values in IDS[0..N) (sorted in place). */
uint64_t rt_dedup_count_sorted(uint64_t *ids, uint64_t n);

/* Minimum HBM bytes of a hash-based unique over N keys of ID_BYTES giving U distinct keys:
 * read every key, touch one slot per key in the hash table, write the distinct keys and a
 * 4-byte inverse index per key. */
static inline double rt_dedup_unique_bytes(double n, double u, int id_bytes)
{
    return n * (2.0 * id_bytes + 4) + u * id_bytes;
}

/* Stable 64-bit mix used to route IDs by hash (FusedRec's rankwise sort by hash(ID)). */
static inline uint64_t rt_dedup_hash(uint64_t x)
{
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdull;
    x ^= x >> 33;
    x *= 0xc4ceb9fe1a85ec53ull;
    x ^= x >> 33;
    return x;
}

#endif
