/* The timing harness of rectwin-calibrate: the device's own timing marks around each call (CUDA
 * events on GPU, the monotonic clock on CPU), as rectwin-exec's runner puts them around each
 * op. Medians, not means: a shared machine's preemptions are outliers in one direction. */
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

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
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

int rt_xcal_time_kernel(rt_xcal *c, rt_xcal_fn fn, void *arg, double *seconds)
{
    double first = 0;
    int reps = 0;
    if (one_call(c, fn, arg, &first) || agree_reps(c, first, &reps)) return -1;
    double *t = malloc(sizeof *t * (size_t)(reps > c->world ? reps : c->world));
    if (!t) return -1;
    int rc = 0;
    RT_MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    for (int i = 0; i < reps && !rc; i++)
        rc = one_call(c, fn, arg, &t[i]);
    double mine = rc ? -1 : median(t, reps);
    /* Every rank's median; a rank that failed sends -1 and every rank learns of it. */
    if (MPI_Allgather(&mine, 1, MPI_DOUBLE, t, 1, MPI_DOUBLE, MPI_COMM_WORLD) != MPI_SUCCESS) {
        free(t);
        fprintf(stderr, "calibrate: MPI_Allgather of kernel times failed\n");
        return -1;
    }
    for (int r = 0; r < c->world; r++)
        if (t[r] < 0) rc = -1;
    *seconds = rc ? 0 : median(t, c->world);
    free(t);
    return rc;
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
    *seconds = median(t + reps, reps);
    free(t);
    int any = rc;
    RT_MPI_CHECK(MPI_Allreduce(&rc, &any, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD));
    return any;
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
