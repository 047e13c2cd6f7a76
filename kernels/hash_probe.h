/* The probe sequence of the dynamic hash table, shared by the CPU and CUDA implementations so
 * both place every key in the same slot. Double hashing with an odd step visits all 2^n slots
 * (MTGRBoost, Theorem 1); tying the step to the key avoids the clustering of linear probing. */
#ifndef RT_KHASH_PROBE_H
#define RT_KHASH_PROBE_H

#include <stdint.h>

#ifdef __CUDACC__
#define RT_KHD __host__ __device__
#else
#define RT_KHD
#endif

static inline RT_KHD uint64_t rt_khash_mix(uint64_t x)
{
    x ^= x >> 30;
    x *= 0xbf58476d1ce4e5b9ULL;
    x ^= x >> 27;
    x *= 0x94d049bb133111ebULL;
    x ^= x >> 31;
    return x;
}

static inline RT_KHD uint64_t rt_khash_home(int64_t key, uint64_t mask)
{
    return rt_khash_mix((uint64_t)key) & mask;
}

static inline RT_KHD uint64_t rt_khash_step(int64_t key, uint64_t mask)
{
    return (rt_khash_mix((uint64_t)key ^ 0x9e3779b97f4a7c15ULL) & mask) | 1u;
}

/* Initial value j of a new row: uniform in [-scale, scale), a pure function of (seed, key). */
static inline RT_KHD float rt_khash_init_value(uint64_t seed, int64_t key, int64_t j, float scale)
{
    const uint64_t u = rt_khash_mix(seed ^ rt_khash_mix((uint64_t)key + (uint64_t)j * 0x9e3779b97f4a7c15ULL));
    const float unit = (float)(u >> 40) * (1.0f / 16777216.0f);
    return (2.0f * unit - 1.0f) * scale;
}

#endif
