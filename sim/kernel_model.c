/* Calibrated kernel costs (kernel_model.h). A curve measured as bytes/s against bytes per
 * launch already holds the launch's fixed cost at small sizes; the dispatch cost is what the
 * runner adds around each op on top of it (its timing marks and the call), added once per
 * launch. Curves are taken from the run measured with the scenario's rank count on the
 * machine (core/calib.h rt_calib_run_for), so ranks sharing cores or memory bandwidth are in
 * the figures rather than in a factor; except with the topology's `node.cores`, where the
 * engine shares the cores itself (sim/simgrid_cores.c) and a kernel is priced at the rate of
 * one rank alone on one core: the run measured with 1 rank. */
#include "kernel_model.h"

#include <math.h>

#include "analytic.h"
#include "calib.h"
#include "workload.h"

static const rt_calib_run *kernel_run(const rt_topology *t)
{
    return rt_calib_run_for(t->calib, t->node.cores > 0 ? 1 : rt_topology_ranks(t));
}

static double roofline_flops(const rt_topology *t, rt_dtype dt, double flops)
{
    double peak = t->device.peak_flops[dt] > 0 ? t->device.peak_flops[dt]
                                                : t->device.peak_flops[RT_DT_FP32];
    return flops / (peak * t->device.eff_flops);
}

double rt_kernel_piece_time(const rt_scenario *s, rt_dtype dtype, const rt_piece *p)
{
    const rt_topology *t = &s->topology;
    const rt_calib_run *run = kernel_run(t);
    const rt_gemm_table *gt;
    const rt_curve *c;
    switch (p->kind) {
    case RT_PIECE_GEMM:
        gt = rt_calib_gemm(run, dtype);
        return gt ? p->amount / rt_gemm_table_rate(gt, p->m, p->n, p->k)
                  : roofline_flops(t, dtype, p->amount);
    case RT_PIECE_FLOPS:
        c = rt_calib_kernel_curve(run, (rt_calib_kernel)p->family, p->dim, 0);
        return c ? rt_curve_time_of_rate(c, p->amount) : roofline_flops(t, dtype, p->amount);
    default:
        c = rt_calib_kernel_curve(run, (rt_calib_kernel)p->family, p->dim, 0);
        return c ? rt_curve_time_of_rate(c, p->amount)
                 : p->amount / (t->device.hbm_bw * t->device.eff_hbm);
    }
}

/* The exchange's first table: the dim, pooling and optimizer of its curves. */
static const rt_table *unit_table(const rt_scenario *s, const rt_graph *g, const rt_op *o)
{
    if (o->unit < 0 || o->unit >= g->n_units || g->units[o->unit].n_features < 1) return NULL;
    int f = g->units[o->unit].features[0];
    return f >= 0 && f < s->model.n_tables ? &s->model.tables[f] : NULL;
}

/* An op without pieces as one launch on its family's curve (-1: no family, the roofline). */
static int family_of(const rt_graph *g, const rt_op *o, const rt_table *tb)
{
    static const rt_calib_kernel sparse[RT_OPT_COUNT] = {
        RT_CK_SPARSE_SGD, RT_CK_SPARSE_ADAGRAD, RT_CK_SPARSE_ROWWISE_ADAGRAD, RT_CK_SPARSE_ADAM};
    switch (o->kernel) {
    case RT_K_LOOKUP:
        return RT_CK_GATHER_POOL;
    case RT_K_SPARSE_UPDATE:
        return tb && tb->optimizer < RT_OPT_COUNT ? sparse[tb->optimizer] : RT_CK_SPARSE_SGD;
    case RT_K_UNIQUE:
        /* FusedRec's fused unique sorts hashed (category, ID) keys */
        return o->unit >= 0 && o->unit < g->n_units && g->units[o->unit].key_hash ? RT_CK_SORT
                                                                                   : RT_CK_UNIQUE;
    case RT_K_BUCKETIZE:
        return o->role == RT_ROLE_KEY_HASH ? RT_CK_ELEMENTWISE : RT_CK_PERMUTE;
    case RT_K_UNPERMUTE:
    case RT_K_PEER_PERMUTE:
    case RT_K_SHUFFLE:
        return RT_CK_PERMUTE;
    case RT_K_DENSE_UPDATE:
        return RT_CK_DENSE_ADAM;
    case RT_K_LOSS:
        return RT_CK_ELEMENTWISE;
    default:
        return -1;
    }
}

static double pooling_of(const rt_scenario *s, const rt_table *tb)
{
    if (!tb || tb->sequence) return 1;
    return s->workload.has_pooling ? rt_len_mean(&s->workload.pooling) : rt_len_mean(&tb->pooling);
}

int rt_kernel_time(const rt_scenario *s, const rt_graph *g, int op, int rep, double *out,
                   const char **why)
{
    const rt_topology *t = &s->topology;
    const rt_op *o = &g->ops[op];
    const rt_op_cost *c = rt_graph_cost(g, op, rep);
    if (!t->calib || o->kernel == RT_K_H2D) return rt_analytic_kernel_time(t, o, c, out, why);
    const rt_calib_run *run = kernel_run(t);
    if (t->node.cores > 0 && run->ranks != 1) {
        *why = "node.cores prices kernels at the rate of one rank alone, and the calibration has "
               "no 1-rank run; allowed: recalibrate with --ranks 1,..., or no node.cores";
        return -1;
    }
    double total = 0, launches = 0;
    if (c->n_pieces > 0) {
        for (int i = 0; i < c->n_pieces; i++) {
            total += c->pieces[i].count * rt_kernel_piece_time(s, o->dtype, &c->pieces[i]);
            launches += c->pieces[i].count;
        }
    } else {
        const rt_table *tb = unit_table(s, g, o);
        int fam = family_of(g, o, tb);
        const rt_curve *curve =
            fam >= 0 ? rt_calib_kernel_curve(run, (rt_calib_kernel)fam, tb ? tb->dim : 0,
                                             fam == RT_CK_GATHER_POOL ? pooling_of(s, tb) : 0)
                     : NULL;
        if (!curve) return rt_analytic_kernel_time(t, o, c, out, why);
        total = c->bytes > 0 ? rt_curve_time_of_rate(curve, c->bytes) : 0;
        launches = 1;
    }
    *out = total + launches * run->dispatch_s;
    if (!isfinite(*out) || *out < 0) {
        *why = "calibrated kernel cost is not a finite non-negative number";
        return -1;
    }
    return 0;
}
