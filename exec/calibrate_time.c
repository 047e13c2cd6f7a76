/* The timing harness of rectwin-calibrate: the device's own timing marks (CUDA events on GPU,
 * the monotonic clock on CPU), as rectwin-exec's runner puts them around each op.
 *
 * A kernel's time is its sustained time: the marks go around a loop of repetitions, not each
 * call. Ranks that share cores are time-sliced by the OS; a call shorter than a slice often
 * runs whole at the speed of an idle core, and a median of single calls would report that
 * speed while the rank's wall clock pays for the slices it waited. Over a loop of many slices
 * the mean is what a rank gets. Collectives start together from a barrier and are timed one by
 * one; their median drops the repetitions another job on a shared machine interrupted.
 *
 * Every point keeps the fastest of its passes. Another tenant of the host only ever slows a
 * point down, and it does so in episodes of a quarter second to seconds (a single-thread GEMM
 * on the 2-vCPU development machine ran below 85 % of its best rate, down to half of it, in 22 %
 * of the quarter seconds of a 90-s probe, in episodes of up to 3.5 s:
 * experiments/measurements/cpu/noise-probe/), longer than one point's loop; passes over a whole
 * family, minutes apart, rarely all fall in one. The fastest is the machine's own rate, the
 * quantity the validation compares with a run's fastest repeat. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "calibrate.h"
#include "check_mpi.h"

enum { MARK_START = 1, MARK_END = 2 };

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double rt_xcal_median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* SECONDS becomes the fastest this call got over the passes so far. Every rank makes the same
 * calls, so every rank takes the same branch; a failure (out of memory, a pass with more calls
 * than the first) is agreed, so no rank is left waiting in the next barrier. */
static int keep_fastest(rt_xcal *c, double *seconds)
{
    long i = c->call++;
    int rc = 0;
    if (c->pass == 0) {
        if (i >= c->cap_best) {
            long cap = c->cap_best ? 2 * c->cap_best : 1024;
            double *b = realloc(c->best, sizeof *b * (size_t)cap);
            if (b) c->best = b, c->cap_best = cap;
        }
        if (i < c->cap_best)
            c->best[i] = *seconds, c->n_best = i + 1;
        else
            rc = -1, fprintf(stderr, "calibrate: out of memory for the passes' best times\n");
    } else if (i >= c->n_best) {
        rc = -1;
        fprintf(stderr, "calibrate: pass %d made more timed calls than the first\n", c->pass + 1);
    } else {
        if (*seconds < c->best[i]) c->best[i] = *seconds;
        *seconds = c->best[i];
    }
    int any = rc;
    RT_MPI_CHECK(MPI_Allreduce(&rc, &any, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD));
    return any;
}

static int one_call(rt_xcal *c, rt_xcal_fn fn, void *arg, double *dt)
{
    rt_xdev *d = c->dev;
    if (d->ops->mark(d, MARK_START) || fn(c, arg) || d->ops->mark(d, MARK_END) || d->ops->sync(d))
        return -1;
    *dt = d->ops->mark_seconds(d, MARK_END) - d->ops->mark_seconds(d, MARK_START);
    return 0;
}

/* Repetitions every rank runs: enough for target_s at the slowest rank's first call. */
static int agree_reps(rt_xcal *c, double first, int *reps)
{
    double slowest = first;
    RT_MPI_CHECK(MPI_Allreduce(&first, &slowest, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD));
    double want = slowest > 0 ? ceil(c->o.target_s / slowest) : c->o.max_reps;
    *reps = want < c->o.min_reps ? c->o.min_reps : want > c->o.max_reps ? c->o.max_reps : (int)want;
    return 0;
}

/* REPS calls of FN between one pair of marks; the mean per call. */
static int loop_calls(rt_xcal *c, rt_xcal_fn fn, void *arg, int reps, double *mean)
{
    rt_xdev *d = c->dev;
    if (d->ops->mark(d, MARK_START)) return -1;
    for (int i = 0; i < reps; i++)
        if (fn(c, arg)) return -1;
    if (d->ops->mark(d, MARK_END) || d->ops->sync(d)) return -1;
    *mean = (d->ops->mark_seconds(d, MARK_END) - d->ops->mark_seconds(d, MARK_START)) / reps;
    return 0;
}

int rt_xcal_time_kernel(rt_xcal *c, rt_xcal_fn fn, void *arg, double *seconds)
{
    double first = 0;
    int reps = 0;
    if (one_call(c, fn, arg, &first) || agree_reps(c, first, &reps)) return -1;
    double *t = malloc(sizeof *t * (size_t)c->world);
    if (!t) return -1;
    RT_MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    double mine = 0;
    int rc = loop_calls(c, fn, arg, reps, &mine);
    if (rc) mine = -1;
    /* Every rank's median; a rank that failed sends -1 and every rank learns of it. */
    if (MPI_Allgather(&mine, 1, MPI_DOUBLE, t, 1, MPI_DOUBLE, MPI_COMM_WORLD) != MPI_SUCCESS) {
        free(t);
        fprintf(stderr, "calibrate: MPI_Allgather of kernel times failed\n");
        return -1;
    }
    for (int r = 0; r < c->world; r++)
        if (t[r] < 0) rc = -1;
    *seconds = rc ? 0 : rt_xcal_median(t, c->world);
    free(t);
    return rc ? rc : keep_fastest(c, seconds);
}

int rt_xcal_time_coll(rt_xcal *c, rt_xcal_fn fn, void *arg, double *seconds)
{
    double first = 0;
    int reps = 0;
    RT_MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    if (one_call(c, fn, arg, &first) || agree_reps(c, first, &reps)) return -1;
    double *t = malloc(sizeof *t * (size_t)reps * 2);
    if (!t) return -1;
    int rc = 0;
    for (int i = 0; i < reps && !rc; i++) {
        /* Each repetition starts together, so a call's time is its own, not a wait for late
         * ranks; the graph's engines charge arrival skew separately. */
        if (MPI_Barrier(MPI_COMM_WORLD) != MPI_SUCCESS) rc = -1;
        if (!rc) rc = one_call(c, fn, arg, &t[i]);
    }
    if (rc) t[0] = -1;
    if (MPI_Allreduce(t, t + reps, reps, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD) != MPI_SUCCESS) {
        free(t);
        fprintf(stderr, "calibrate: MPI_Allreduce of collective times failed\n");
        return -1;
    }
    *seconds = rt_xcal_median(t + reps, reps);
    free(t);
    int any = rc;
    RT_MPI_CHECK(MPI_Allreduce(&rc, &any, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD));
    return any ? any : keep_fastest(c, seconds);
}

void rt_xcal_list(rt_xcal *c, int indent, const char *key, const double *v, int n)
{
    if (!c->out) return;
    /* A flow sequence may span lines: eight values a line keeps a 343-point grid readable. */
    fprintf(c->out, "%*s%s: [", indent, "", key);
    int cont = indent + (int)strlen(key) + 3;
    for (int i = 0; i < n; i++) {
        if (i && i % 8 == 0)
            fprintf(c->out, ",\n%*s", cont, "");
        else if (i)
            fprintf(c->out, ", ");
        fprintf(c->out, "%.6g", v[i]);
    }
    fprintf(c->out, "]\n");
}

size_t rt_xcal_cold_bytes(rt_xcal *c, size_t at_least, const char *what)
{
    size_t cache = c->dev->ops->cache_bytes ? c->dev->ops->cache_bytes(c->dev) : 0;
    if (!cache && c->log && c->pass == 0)
        fprintf(c->log,
                "calibrate: the device reports no cache size; %s cycle through %zu bytes only, "
                "and may be found in cache\n",
                what, at_least);
    return 2 * cache > at_least ? 2 * cache : at_least;
}

void *rt_xcal_alloc(rt_xcal *c, size_t bytes, int zero)
{
    rt_xdev *d = c->dev;
    size_t n = bytes / sizeof(float);
    void *p = d->ops->alloc(d, bytes ? bytes : sizeof(float));
    float *h = zero ? NULL : malloc(sizeof *h * (n ? n : 1));
    if (!p || (!zero && !h)) {
        fprintf(stderr, "calibrate: rank %d: out of memory for %zu bytes\n", c->rank, bytes);
        free(h);
        if (p) d->ops->release(d, p);
        return NULL;
    }
    int rc = 0;
    if (zero) {
        rc = d->ops->zero(d, p, bytes);
    } else {
        /* Small values of both signs: optimizer and softmax kernels stay finite over many
         * repetitions, and no denormals slow a kernel down. */
        uint32_t s = 0x9e3779b9u ^ (uint32_t)c->rank;
        for (size_t i = 0; i < n; i++) {
            s = s * 1664525u + 1013904223u;
            h[i] = ((float)(s >> 8) / 16777216.0f - 0.5f) * 0.02f;
        }
        rc = bytes ? d->ops->copy(d, p, h, n * sizeof(float), RT_XCOPY_H2D) : 0;
    }
    free(h);
    if (rc) {
        fprintf(stderr, "calibrate: rank %d: cannot fill a device buffer\n", c->rank);
        d->ops->release(d, p);
        return NULL;
    }
    return p;
}
