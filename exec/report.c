#include "report.h"

#include <math.h>
#include <mpi.h>
#include <stdlib.h>
#include <string.h>

#include "check_mpi.h"
#include "emb_dynamic.h"

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

/* Host time of iteration IT outside the union of its ops' intervals. */
static double outside_ops(const rt_xtimes *t, int it, double *tmp)
{
    int n = t->n_ops, k = 0;
    for (int op = 0; op < n; op++)
        tmp[2 * k] = t->start[(size_t)it * n + op], tmp[2 * k + 1] = t->end[(size_t)it * n + op],
                k++;
    qsort(tmp, (size_t)k, 2 * sizeof(double), cmp_double);
    double covered = 0, lo = 0, hi = -1;
    for (int i = 0; i < k; i++) {
        if (tmp[2 * i] > hi) {
            if (hi > lo) covered += hi - lo;
            lo = tmp[2 * i], hi = tmp[2 * i + 1];
        } else if (tmp[2 * i + 1] > hi) {
            hi = tmp[2 * i + 1];
        }
    }
    if (hi > lo) covered += hi - lo;
    return fmax(0.0, t->wall[it] - covered);
}

/* This rank's per-op median start and end and the spread (max - min) of its duration
 * ([op][3]) over the measured iterations. */
static int local_medians(const rt_xtimes *t, int warmup, double *se, rt_xsummary *sum)
{
    int m = t->n_iter - warmup, n = t->n_ops;
    double *v = malloc(sizeof(double) * (size_t)(m > 0 ? m : 1) * 2);
    double *tmp = malloc(sizeof(double) * 2 * (size_t)(n ? n : 1));
    if (!v || !tmp || m <= 0) {
        free(v), free(tmp);
        return -1;
    }
    for (int op = 0; op < n; op++) {
        double *st = v, *du = v + m;
        for (int i = 0; i < m; i++) {
            size_t at = (size_t)(warmup + i) * n + op;
            st[i] = t->start[at], du[i] = t->end[at] - t->start[at];
        }
        double lo = INFINITY, hi = -INFINITY;
        for (int i = 0; i < m; i++)
            lo = fmin(lo, du[i]), hi = fmax(hi, du[i]);
        se[3 * op] = median(st, m);
        se[3 * op + 1] = se[3 * op] + median(du, m);
        se[3 * op + 2] = hi - lo;
    }
    double lo = INFINITY, hi = 0;
    for (int i = 0; i < m; i++) {
        v[i] = t->wall[warmup + i];
        lo = fmin(lo, v[i]), hi = fmax(hi, v[i]);
        v[m + i] = outside_ops(t, warmup + i, tmp);
    }
    sum->wall_spread_s = hi - lo;
    sum->wall_median_s = median(v, m);
    sum->overhead_s = median(v + m, m);
    free(v), free(tmp);
    return 0;
}

static int same(double a, double b)
{
    return fabs(a - b) <= 1e-9 * fmax(1.0, fmax(fabs(a), fabs(b)));
}

long rt_xreport_check_bytes(const rt_xexec *x, long *checked, FILE *err)
{
    const rt_graph *g = x->g;
    long bad = 0;
    *checked = 0;
    for (int op = 0; op < g->n_ops; op++) {
        const rt_xbytes *m = &x->moved[op];
        if (!m->seen) continue;
        const rt_op_cost *c = rt_graph_cost(g, op, x->rank);
        int ok = same(m->bytes, c->bytes);
        if (g->ops[op].coll == RT_COLL_ALLTOALLV && g->ops[op].type == RT_OP_COLLECTIVE) {
            ok = ok && same(m->recv_bytes, c->recv_bytes) && m->send && c->send;
            for (int k = 0; ok && k < g->ops[op].group.size; k++)
                ok = m->send[k] == c->send[k] && m->recv[k] == c->recv[k];
        }
        (*checked)++;
        if (ok) continue;
        if (bad++ < 5)
            fprintf(err,
                    "exec: rank %d: op %d '%s' (%s) moved %.0f B (recv %.0f), the graph says "
                    "%.0f B (recv %.0f)\n",
                    x->rank, op, g->ops[op].name ? g->ops[op].name : "?",
                    g->phases[g->ops[op].phase], m->bytes, m->recv_bytes, c->bytes, c->recv_bytes);
    }
    return bad;
}

static char *settings_json(const rt_xexec *x, const rt_xsummary *s, int warmup, int iters,
                           int batches)
{
    char *buf = malloc(1800);
    if (!buf) return NULL;
    char hash[320] = "", neg[320] = "", rtt[2][32];
    for (int i = 0; i < 2; i++) {
        if (x->local_rtt_s[i] >= 0)
            snprintf(rtt[i], sizeof rtt[i], "%.4g", x->local_rtt_s[i] * 1e6);
        else
            snprintf(rtt[i], sizeof rtt[i], "null");
    }
    if (s->neg_device > 0)
        snprintf(neg, sizeof neg,
                 ", \"negatives\": {\"device_bytes\": %.0f, \"host_bytes\": %.0f, "
                 "\"offloaded_bytes\": %.0f, \"fetched_bytes\": %.0f}",
                 s->neg_device, s->neg_host, s->neg_offloaded, s->neg_fetched);
    if (s->hash_slots)
        snprintf(hash, sizeof hash,
                 ", \"hash_tables\": {\"keys\": %ld, \"slots\": %ld, \"inserted\": %ld, "
                 "\"evicted\": %ld, \"doublings\": %ld}",
                 s->hash_keys, s->hash_slots, s->hash_inserted, s->hash_evicted, s->hash_grows);
    snprintf(buf, 1800,
             "{\"device\": \"%s\", \"comm\": \"%s\", \"ranks\": %d, \"warmup\": %d, "
             "\"iterations\": %d, \"batches_trained\": %d, \"timing\": \"median over "
             "iterations per op\", "
             "\"iteration_wall_median_s\": %.9g, \"iteration_wall_spread_s\": %.9g, "
             "\"framework_overhead_s\": %.9g, \"loss_first\": %.9g, \"loss_last\": %.9g, "
             "\"bytes_checked_ops\": %ld, \"bytes_mismatched_ops\": %ld, \"cpu_bind\": \"%s\", "
             "\"local_rtt_us\": [%s, %s]%s%s}",
             x->dev->ops->name, x->comm->ops->name, x->world, warmup, iters, batches,
             s->wall_median_s, s->wall_spread_s, s->overhead_s, s->loss_first, s->loss_last,
             s->bytes_checked, s->bytes_mismatched, x->cpu_bind, rtt[0], rtt[1], hash, neg);
    return buf;
}

static int mean_loss(const rt_xtimes *t, int it, double *out)
{
    double l = t->loss[it];
    RT_MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, &l, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD));
    int world;
    RT_MPI_CHECK(MPI_Comm_size(MPI_COMM_WORLD, &world));
    *out = l / world;
    return 0;
}

static int hash_stats(const rt_xexec *x, rt_xsummary *sum)
{
    long h[5] = {0, 0, 0, 0, 0};
    for (int i = 0; i < x->tables.n; i++) {
        const rt_xdyn *dy = x->tables.shards[i].dyn;
        if (!dy) continue;
        h[0] += (long)rt_khash_size(dy->h), h[1] += (long)rt_khash_slots(dy->h);
        h[2] += (long)dy->inserted, h[3] += (long)dy->evicted, h[4] += (long)dy->grows;
    }
    RT_MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, h, 5, MPI_LONG, MPI_SUM, MPI_COMM_WORLD));
    sum->hash_keys = h[0], sum->hash_slots = h[1], sum->hash_inserted = h[2];
    sum->hash_evicted = h[3], sum->hash_grows = h[4];
    return 0;
}

static int neg_stats(const rt_xexec *x, rt_xsummary *sum)
{
    const rt_xneg *g = x->net ? rt_dnet_negatives(x->net) : NULL;
    rt_xneg_bytes b = g ? rt_xneg_stats(g) : (rt_xneg_bytes){0};
    double v[4] = {b.device_held, b.host_held, b.offloaded, b.prefetched + b.fetched};
    RT_MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, v, 4, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD));
    sum->neg_device = v[0], sum->neg_host = v[1], sum->neg_offloaded = v[2];
    sum->neg_fetched = v[3];
    return 0;
}

static int gather(rt_xexec *x, const rt_xtimes *t, int warmup, rt_xsummary *sum, double *all)
{
    int n = x->g->n_ops;
    double *se = malloc(sizeof(double) * 3 * (size_t)(n ? n : 1));
    if (!se) return -1;
    if (local_medians(t, warmup, se, sum)) {
        free(se);
        return -1;
    }
    int rc = MPI_Gather(se, 3 * n, MPI_DOUBLE, all, 3 * n, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    free(se);
    if (rc != MPI_SUCCESS) return -1;
    double stats[3] = {(double)x->dev->bytes_peak, sum->overhead_s, sum->wall_median_s};
    RT_MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, stats, 3, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD));
    sum->peak_bytes = stats[0], sum->overhead_s = stats[1], sum->wall_median_s = stats[2];
    long cnt[2];
    cnt[1] = rt_xreport_check_bytes(x, &cnt[0], stderr);
    RT_MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, cnt, 2, MPI_LONG, MPI_SUM, MPI_COMM_WORLD));
    sum->bytes_checked = cnt[0], sum->bytes_mismatched = cnt[1];
    if (hash_stats(x, sum) || neg_stats(x, sum)) return -1;
    if (mean_loss(t, 0, &sum->loss_first) || mean_loss(t, t->n_iter - 1, &sum->loss_last))
        return -1;
    return 0;
}

int rt_xreport(rt_xexec *x, const rt_xtimes *t, int warmup, rt_xsummary *sum, rt_result **out,
               FILE *err)
{
    const rt_graph *g = x->g;
    int n = g->n_ops, W = x->world;
    *out = NULL;
    memset(sum, 0, sizeof *sum);
    double *all = x->rank == 0 ? malloc(sizeof(double) * 3 * (size_t)n * (size_t)W + 1) : NULL;
    if (x->rank == 0 && !all) {
        fprintf(err, "exec: out of host memory gathering timings\n");
        return -1;
    }
    if (gather(x, t, warmup, sum, all)) {
        fprintf(err, "exec: rank %d: gathering the measurements failed\n", x->rank);
        free(all);
        return -1;
    }
    if (x->rank != 0) return 0;
    rt_result *r = rt_result_new(g, "exec");
    if (!r) {
        free(all);
        fprintf(err, "exec: out of host memory for the result\n");
        return -1;
    }
    r->spread = calloc((size_t)n * (size_t)W + 1, sizeof(double));
    if (!r->spread) {
        free(all), rt_result_free(r);
        fprintf(err, "exec: out of host memory for the result\n");
        return -1;
    }
    for (int rank = 0; rank < W; rank++)
        for (int op = 0; op < n; op++) {
            long k = (long)op * g->n_reps + rank;
            const double *v = &all[((size_t)rank * n + op) * 3];
            r->start[k] = v[0], r->end[k] = v[1], r->spread[k] = v[2];
        }
    free(all);
    rt_result_finish(r, x->s);
    r->peak_hbm_bytes = sum->peak_bytes; /* measured, not the plan's accounting */
    r->settings_json = settings_json(x, sum, warmup, t->n_iter - warmup, t->batches);
    *out = r;
    return 0;
}
