/* The probe sequence of the dynamic hash table, shared by the CPU and CUDA implementations so
 * both follow the same probe sequences. Double hashing with an odd step visits all 2^n slots
 * (MTGRBoost, Theorem 1); tying the step to the key avoids the clustering of linear probing. */
#ifndef RT_KHASH_PROBE_H
#define RT_KHASH_PROBE_H

#include "kernels.h"

static inline RT_KHD uint64_t rt_khash_home(int64_t key, uint64_t mask)
{
    return rt_kmix64((uint64_t)key) & mask;
}

static inline RT_KHD uint64_t rt_khash_step(int64_t key, uint64_t mask)
{
    return (rt_kmix64((uint64_t)key ^ 0x9e3779b97f4a7c15ULL) & mask) | 1u;
}

/* Initial value j of a new row: uniform in [-scale, scale), a pure function of (seed, key). */
static inline RT_KHD float rt_khash_init_value(uint64_t seed, int64_t key, int64_t j, float scale)
{
    const uint64_t mixed_key = rt_kmix64((uint64_t)key + (uint64_t)j * 0x9e3779b97f4a7c15ULL);
    const uint64_t u = rt_kmix64(seed ^ mixed_key);
    const float unit = (float)(u >> 40) * (1.0f / 16777216.0f);
    return (2.0f * unit - 1.0f) * scale;
}

#endif
