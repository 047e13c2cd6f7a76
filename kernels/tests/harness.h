/* A tiny test harness for the kernel tests: checks collect failures in a context that is passed
 * around, and a splitmix64 generator gives reproducible random inputs. cmocka is not used
 * because the GPU image has no Debian packages. */
#ifndef RT_KTEST_HARNESS_H
#define RT_KTEST_HARNESS_H

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

typedef struct {
    int checks;
    int failures;
} rt_tctx;

typedef struct {
    uint64_t s;
} rt_trng;

static inline int rt_tcheck_at(rt_tctx *t, int ok, const char *what, const char *file, int line)
{
    t->checks++;
    if (!ok) {
        t->failures++;
        if (t->failures <= 20) fprintf(stderr, "%s:%d: check failed: %s\n", file, line, what);
    }
    return ok;
}

#define RT_TCHECK(t, cond) rt_tcheck_at((t), (cond) ? 1 : 0, #cond, __FILE__, __LINE__)

/* Compares n floats against double references with |got - want| <= atol + rtol |want|;
 * reports the first mismatch under the given label. */
static inline int rt_tclose_at(rt_tctx *t, const char *label, const float *got, const double *want,
                               int64_t n, double rtol, double atol, const char *file, int line)
{
    for (int64_t i = 0; i < n; i++) {
        const double g = got[i], w = want[i];
        if (!(fabs(g - w) <= atol + rtol * fabs(w))) {
            char msg[256];
            snprintf(msg, sizeof msg, "%s[%lld] = %.9g, want %.9g", label, (long long)i, g, w);
            return rt_tcheck_at(t, 0, msg, file, line);
        }
    }
    return rt_tcheck_at(t, 1, label, file, line);
}

#define RT_TCLOSE(t, label, got, want, n, rtol, atol)                                              \
    rt_tclose_at((t), (label), (got), (want), (n), (rtol), (atol), __FILE__, __LINE__)

static inline int rt_treport(const rt_tctx *t, const char *name)
{
    printf("%s: %d checks, %d failures\n", name, t->checks, t->failures);
    return t->failures ? 1 : 0;
}

static inline uint64_t rt_trand(rt_trng *r)
{
    uint64_t z = (r->s += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

/* Uniform in [lo, hi). */
static inline float rt_tuniform(rt_trng *r, float lo, float hi)
{
    return lo + (hi - lo) * (float)(rt_trand(r) >> 40) * (1.0f / 16777216.0f);
}

/* Uniform integer in [0, n). */
static inline int64_t rt_tbelow(rt_trng *r, int64_t n)
{
    return (int64_t)(rt_trand(r) % (uint64_t)n);
}

static inline void rt_tfill(rt_trng *r, float *x, int64_t n, float lo, float hi)
{
    for (int64_t i = 0; i < n; i++)
        x[i] = rt_tuniform(r, lo, hi);
}

/* Random jagged offsets for nseg segments of length 0 .. max_len, with every third segment
 * empty when allow_empty; returns the total. */
static inline int64_t rt_toffsets(rt_trng *r, int64_t *offsets, int64_t nseg, int64_t max_len,
                                  int allow_empty)
{
    offsets[0] = 0;
    for (int64_t s = 0; s < nseg; s++) {
        int64_t len = rt_tbelow(r, max_len + 1);
        if (allow_empty && s % 3 == 1)
            len = 0;
        else if (!allow_empty && len == 0)
            len = 1;
        offsets[s + 1] = offsets[s] + len;
    }
    return offsets[nseg];
}

/* malloc that never returns NULL for a test: aborts the test binary instead. */
static inline void *rt_talloc(size_t bytes)
{
    void *p = malloc(bytes ? bytes : 1);
    if (!p) {
        fprintf(stderr, "test: out of memory (%zu bytes)\n", bytes);
        exit(2);
    }
    return p;
}

#endif
