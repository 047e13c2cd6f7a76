/* GEMM rate over an (m, n, k) grid, through the device's linear_fwd (y = x w^T, no bias, no
 * activation): the call rectwin-exec's dense layers make for every linear layer. The model
 * charges backward GEMMs (other transposes) at the rate of the same shape. The grid is every
 * power of 4 up to the largest size and the largest size itself, in all three dimensions, swept
 * --passes times (5; once with --quick). */
#include <stdlib.h>

#include "calibrate.h"

typedef struct gemm_arg {
    const float *x, *w;
    float *y;
    int64_t m, n, k;
} gemm_arg;

static int gemm_once(rt_xcal *c, void *p)
{
    gemm_arg *a = p;
    rt_kstatus st =
        c->dev->ops->linear_fwd(c->dev, a->x, a->m, a->k, a->n, a->w, NULL, RT_KACT_NONE, a->y);
    if (st == RT_K_OK) return 0;
    fprintf(stderr, "calibrate: rank %d: linear_fwd %lld x %lld x %lld failed (%d)\n", c->rank,
            (long long)a->m, (long long)a->n, (long long)a->k, (int)st);
    return -1;
}

static int grid(double max, double *v)
{
    int n = 0;
    for (double s = 1; s < max; s *= 4)
        v[n++] = s;
    v[n++] = max;
    return n;
}

static double fastest(const double *rate, int n)
{
    double best = rate[0];
    for (int i = 1; i < n; i++)
        best = rate[i] > best ? rate[i] : best;
    return best;
}

int rt_xcal_gemm(rt_xcal *c, const char *const *dtypes, int n_dtypes, double max_size)
{
    double axis[32];
    int na = grid(max_size, axis);
    size_t big = (size_t)max_size * (size_t)max_size * sizeof(float);
    gemm_arg a = {.x = rt_xcal_alloc(c, big, 0),
                  .w = rt_xcal_alloc(c, big, 0),
                  .y = rt_xcal_alloc(c, big, 1)};
    /* The grid is swept o.passes times and each point keeps its fastest (calibrate_time.c):
     * a point is one short measurement, and on a shared machine one pass can catch another
     * job's burst; passes minutes apart rarely all do. */
    const int passes = c->o.passes, pts = na * na * na;
    double *rate = malloc(sizeof *rate * (size_t)pts);
    double *all = malloc(sizeof *all * (size_t)(pts * passes));
    int rc = a.x && a.w && a.y && rate && all ? 0 : -1;
    for (int p = 0; p < passes && !rc; p++)
        for (int i = 0; i < na && !rc; i++)
            for (int j = 0; j < na && !rc; j++)
                for (int l = 0; l < na && !rc; l++) {
                    a.m = (int64_t)axis[i], a.n = (int64_t)axis[j], a.k = (int64_t)axis[l];
                    double t = 0;
                    rc = rt_xcal_time_kernel(c, gemm_once, &a, &t);
                    all[(long)((i * na + j) * na + l) * passes + p] =
                        2.0 * (double)a.m * (double)a.n * (double)a.k / t;
                }
    for (int q = 0; q < pts && !rc; q++)
        rate[q] = fastest(all + (long)q * passes, passes);
    for (int d = 0; d < n_dtypes && !rc && c->out; d++) {
        fprintf(c->out, "        - dtype: %s\n", dtypes[d]);
        rt_xcal_list(c, 10, "m", axis, na);
        rt_xcal_list(c, 10, "n", axis, na);
        rt_xcal_list(c, 10, "k", axis, na);
        rt_xcal_list(c, 10, "flops", rate, na * na * na);
    }
    if (c->log)
        fprintf(c->log, "calibrate: gemm %s%s, %d^3 shapes up to %g\n", dtypes[0],
                n_dtypes > 1 ? " (and the other dtypes: same kernels)" : "", na, max_size);
    free(rate);
    free(all);
    if (a.x) c->dev->ops->release(c->dev, (void *)a.x);
    if (a.w) c->dev->ops->release(c->dev, (void *)a.w);
    if (a.y) c->dev->ops->release(c->dev, a.y);
    return rc;
}
