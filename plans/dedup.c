#include "dedup.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cfg.h"

const char *const rt_dedup_names[] = {"none", "comm", "lookup", "two_stage", NULL};

/* Keys summed one by one at the head of a range, where a Zipf curve bends too much for the
 * integral; beyond it the midpoint rule is exact to better than 1e-6 relative. */
enum { HEAD_KEYS = 4096, TAIL_STEPS = 1024 };

int rt_dedup_parse(const rt_scenario *s, rt_dedup_mode dflt, rt_dedup_mode *out)
{
    int v = (int)dflt;
    if (rt_cfg_get_enum(s->plan.cfg, s->plan.node, "dedup", 0, rt_dedup_names, &v) < 0) return -1;
    *out = (rt_dedup_mode)v;
    return 0;
}

/* P(key drawn at least once in m draws) for a key of probability p. */
static double seen(double p, double m)
{
    return p >= 1 ? 1 : -expm1(m * log1p(-p));
}

/* Integral of x^-a over [x0, x1]. */
static double power_integral(double a, double x0, double x1)
{
    if (fabs(a - 1) < 1e-12) return log(x1 / x0);
    return (pow(x1, 1 - a) - pow(x0, 1 - a)) / (1 - a);
}

/* Sum of k^-a for integer k in [k0, k1]: exact over the first HEAD_KEYS, midpoint integral
 * after. */
static double power_sum(double a, uint64_t k0, uint64_t k1)
{
    if (k1 < k0) return 0;
    uint64_t head_end = k1 - k0 < HEAD_KEYS ? k1 : k0 + HEAD_KEYS - 1;
    double s = 0;
    for (uint64_t k = k0; k <= head_end; k++)
        s += pow((double)k, -a);
    if (head_end < k1) s += power_integral(a, (double)head_end + 0.5, (double)k1 + 0.5);
    return s;
}

/* Integral of seen(c x^-a, m) over [x0, x1], by Simpson's rule in u = ln x where the
 * integrand seen(c e^{-a u}, m) e^u is smooth. */
static double seen_integral(double c, double a, double m, double x0, double x1)
{
    double u0 = log(x0), h = (log(x1) - u0) / TAIL_STEPS, s = 0;
    for (int i = 0; i <= TAIL_STEPS; i++) {
        double u = u0 + i * h, x = exp(u);
        double w = (i == 0 || i == TAIL_STEPS) ? 1 : (i % 2 ? 4 : 2);
        s += w * seen(c * pow(x, -a), m) * x;
    }
    return s * h / 3;
}

double rt_dedup_expected_unique(rt_id_spec ids, uint64_t rows, uint64_t lo, uint64_t hi, double m)
{
    if (hi > rows) hi = rows;
    if (hi <= lo || m <= 0 || rows == 0) return 0;
    if (ids.kind != RT_DIST_ZIPF) return (double)(hi - lo) * seen(1.0 / (double)rows, m);
    double a = ids.alpha, c = 1 / power_sum(a, 1, rows);
    /* Key index i has Zipf rank i + 1. */
    uint64_t k0 = lo + 1, k1 = hi;
    uint64_t head_end = k1 - k0 < HEAD_KEYS ? k1 : k0 + HEAD_KEYS - 1;
    double u = 0;
    for (uint64_t k = k0; k <= head_end; k++)
        u += seen(c * pow((double)k, -a), m);
    if (head_end < k1) u += seen_integral(c, a, m, (double)head_end + 0.5, (double)k1 + 0.5);
    return u;
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

/* LSD radix sort over the bits the keys actually use: sampled IDs are below the table's row
 * count, so a 10^8-row table needs 3 passes of 11 bits instead of a comparison sort. */
static int radix_sort(uint64_t *a, uint64_t n)
{
    enum { BITS = 11, BUCKETS = 1 << BITS };
    uint64_t max = 0;
    for (uint64_t i = 0; i < n; i++)
        max |= a[i];
    uint64_t *tmp = malloc(sizeof(uint64_t) * (size_t)n);
    uint64_t *count = malloc(sizeof(uint64_t) * BUCKETS);
    if (!tmp || !count) {
        free(tmp), free(count);
        return -1;
    }
    uint64_t *src = a, *dst = tmp;
    for (int shift = 0; shift < 64 && (max >> shift); shift += BITS) {
        memset(count, 0, sizeof(uint64_t) * BUCKETS);
        for (uint64_t i = 0; i < n; i++)
            count[(src[i] >> shift) & (BUCKETS - 1)]++;
        for (uint64_t b = 0, sum = 0; b < BUCKETS; b++) {
            uint64_t c = count[b];
            count[b] = sum;
            sum += c;
        }
        for (uint64_t i = 0; i < n; i++)
            dst[count[(src[i] >> shift) & (BUCKETS - 1)]++] = src[i];
        uint64_t *t = src;
        src = dst, dst = t;
    }
    if (src != a) memcpy(a, src, sizeof(uint64_t) * (size_t)n);
    free(tmp), free(count);
    return 0;
}

uint64_t rt_dedup_count_sorted(uint64_t *ids, uint64_t n)
{
    if (n == 0) return 0;
    /* Short runs and an allocation failure take the comparison sort. */
    if (n < 256 || radix_sort(ids, n)) qsort(ids, (size_t)n, sizeof *ids, cmp_u64);
    uint64_t u = 1;
    for (uint64_t i = 1; i < n; i++)
        u += ids[i] != ids[i - 1];
    return u;
}
