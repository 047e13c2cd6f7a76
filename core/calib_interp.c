/* Interpolation of calibration tables, linear in log-log space. Rates and times of kernels and
 * collectives follow power laws over sizes (a fixed cost dominates small launches, bandwidth
 * large ones), so straight lines between log points stay close to the measured curve with a
 * few points per decade, where linear interpolation would bend at every point. GSL does the
 * 1-D interpolation and the cell search of the GEMM grid. */
#include <math.h>
#include <stdlib.h>

#include <gsl/gsl_errno.h>

#include "calib.h"

static double *logs_of(const double *v, int n)
{
    double *l = malloc(sizeof *l * (size_t)(n > 0 ? n : 1));
    if (!l) return NULL;
    for (int i = 0; i < n; i++)
        l[i] = log(v[i]);
    return l;
}

int rt_curve_prepare(rt_curve *c)
{
    c->lx = logs_of(c->x, c->n);
    c->ly = logs_of(c->y, c->n);
    if (!c->lx || !c->ly) return -1;
    if (c->n < 2) return 0;
    c->interp = gsl_interp_alloc(gsl_interp_linear, (size_t)c->n);
    if (!c->interp) return -1;
    return gsl_interp_init(c->interp, c->lx, c->ly, (size_t)c->n) == GSL_SUCCESS ? 0 : -1;
}

void rt_curve_free(rt_curve *c)
{
    if (c->interp) gsl_interp_free(c->interp);
    free(c->x), free(c->y), free(c->lx), free(c->ly);
    c->x = c->y = c->lx = c->ly = NULL;
    c->interp = NULL;
    c->n = 0;
}

double rt_curve_eval(const rt_curve *c, double x)
{
    if (c->n < 1) return 0.0;
    if (c->n == 1 || !(x > c->x[0])) return c->y[0];
    if (x >= c->x[c->n - 1]) return c->y[c->n - 1];
    /* gsl_interp_eval (not _e) would call the GSL error handler, which aborts by default;
     * x is inside the range here, so the _e variant cannot fail. */
    double ly = 0;
    if (gsl_interp_eval_e(c->interp, c->lx, c->ly, log(x), NULL, &ly) != GSL_SUCCESS)
        return c->y[0];
    return exp(ly);
}

double rt_curve_time_of_rate(const rt_curve *c, double amount)
{
    if (c->n < 1 || !(amount > 0)) return 0.0;
    if (amount <= c->x[0]) return c->x[0] / c->y[0];
    return amount / rt_curve_eval(c, amount);
}

double rt_curve_time_of_seconds(const rt_curve *c, double bytes)
{
    if (c->n < 1) return 0.0;
    if (!(bytes > c->x[0])) return c->y[0];
    if (bytes >= c->x[c->n - 1]) return c->y[c->n - 1] * bytes / c->x[c->n - 1];
    return rt_curve_eval(c, bytes);
}

int rt_gemm_table_prepare(rt_gemm_table *g)
{
    g->lm = logs_of(g->m, g->nm);
    g->ln = logs_of(g->n, g->nn);
    g->lk = logs_of(g->k, g->nk);
    g->lrate = logs_of(g->rate, g->nm * g->nn * g->nk);
    return g->lm && g->ln && g->lk && g->lrate ? 0 : -1;
}

void rt_gemm_table_free(rt_gemm_table *g)
{
    free(g->m), free(g->n), free(g->k), free(g->rate);
    free(g->lm), free(g->ln), free(g->lk), free(g->lrate);
    g->m = g->n = g->k = g->rate = g->lm = g->ln = g->lk = g->lrate = NULL;
}

/* Cell [*lo, *lo + 1] of the log axis A (N points) holding log(V), and the weight of the upper
 * point; V is clamped to the axis, a one-point axis has weight 0. */
static void axis_cell(const double *a, int n, double v, int *lo, double *w)
{
    *lo = 0, *w = 0.0;
    if (n < 2) return;
    double lv = v > 0 ? log(v) : a[0];
    if (lv <= a[0]) return;
    if (lv >= a[n - 1]) {
        *lo = n - 2, *w = 1.0;
        return;
    }
    *lo = (int)gsl_interp_bsearch(a, lv, 0, (size_t)(n - 1));
    if (*lo > n - 2) *lo = n - 2;
    *w = (lv - a[*lo]) / (a[*lo + 1] - a[*lo]);
}

double rt_gemm_table_rate(const rt_gemm_table *g, double m, double n, double k)
{
    int im, in, ik;
    double wm, wn, wk;
    axis_cell(g->lm, g->nm, m, &im, &wm);
    axis_cell(g->ln, g->nn, n, &in, &wn);
    axis_cell(g->lk, g->nk, k, &ik, &wk);
    double acc = 0.0;
    for (int a = 0; a < 2; a++)
        for (int b = 0; b < 2; b++)
            for (int c = 0; c < 2; c++) {
                double w = (a ? wm : 1 - wm) * (b ? wn : 1 - wn) * (c ? wk : 1 - wk);
                if (w == 0.0) continue;
                int i = im + a, j = in + b, l = ik + c;
                acc += w * g->lrate[((long)i * g->nn + j) * g->nk + l];
            }
    return exp(acc);
}

const rt_gemm_table *rt_calib_gemm(const rt_calib_run *run, rt_dtype dtype)
{
    for (int i = 0; run && i < run->n_gemm; i++)
        if (run->gemm[i].dtype == dtype) return &run->gemm[i];
    return NULL;
}

static double log_gap(double a, double b)
{
    return a > 0 && b > 0 ? fabs(log(a / b)) : 0.0;
}

const rt_curve *rt_calib_kernel_curve(const rt_calib_run *run, rt_calib_kernel kernel, double dim,
                                      double pooling)
{
    const rt_curve *best = NULL;
    double best_d = INFINITY;
    for (int i = 0; run && i < run->n_kernels; i++) {
        const rt_kernel_curve *k = &run->kernels[i];
        if (k->kernel != kernel) continue;
        double d = log_gap(k->dim, dim) + log_gap(k->pooling, pooling);
        if (d < best_d) best = &k->c, best_d = d;
    }
    return best;
}

static const rt_curve *coll_curve(const rt_calib_run *run, rt_calib_coll op, int ranks)
{
    for (int i = 0; i < run->n_colls; i++)
        if (run->colls[i].op == op && run->colls[i].ranks == ranks) return &run->colls[i].c;
    return NULL;
}

double rt_calib_coll_time(const rt_calib_run *run, rt_calib_coll op, int ranks, double bytes)
{
    if (!run) return -1;
    const rt_curve *exact = coll_curve(run, op, ranks);
    if (exact) return rt_curve_time_of_seconds(exact, bytes);
    /* The nearest measured group sizes below and above. */
    int lo = 0, hi = 0;
    for (int i = 0; i < run->n_colls; i++) {
        const rt_coll_curve *c = &run->colls[i];
        if (c->op != op) continue;
        if (c->ranks < ranks && c->ranks > lo) lo = c->ranks;
        if (c->ranks > ranks && (!hi || c->ranks < hi)) hi = c->ranks;
    }
    if (!lo || !hi) return -1;
    double tl = rt_curve_time_of_seconds(coll_curve(run, op, lo), bytes);
    double th = rt_curve_time_of_seconds(coll_curve(run, op, hi), bytes);
    double w = log((double)ranks / lo) / log((double)hi / lo);
    return exp((1 - w) * log(tl) + w * log(th));
}
