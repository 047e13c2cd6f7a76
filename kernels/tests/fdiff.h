/* Central finite differences of a double-precision scalar function of one packed parameter
 * vector: the reference for kernel backward passes. */
#ifndef RT_KTEST_FDIFF_H
#define RT_KTEST_FDIFF_H

#include <stdint.h>

typedef double (*rt_tscalar_fn)(const double *params, const void *ctx);

/* grad[i] = (f(p + h e_i) - f(p - h e_i)) / 2h for i in [0, n). p is restored. */
static inline void rt_tfdiff(rt_tscalar_fn f, double *p, int64_t n, const void *ctx, double *grad)
{
    const double h = 1e-5;
    for (int64_t i = 0; i < n; i++) {
        const double keep = p[i];
        p[i] = keep + h;
        const double up = f(p, ctx);
        p[i] = keep - h;
        const double down = f(p, ctx);
        p[i] = keep;
        grad[i] = (up - down) / (2 * h);
    }
}

#endif
