#include "comparison.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

double rt_cmp_rel_err(double pred, double meas)
{
    if (!isfinite(pred) || !isfinite(meas) || meas == 0) return NAN;
    return (pred - meas) / meas;
}

/* ---- ops ------------------------------------------------------------------------------ */

static int key_cmp(const rt_op_row *a, const rt_op_row *b)
{
    if (a->rank != b->rank) return a->rank < b->rank ? -1 : 1;
    int c = strcmp(a->name, b->name);
    return c ? c : strcmp(a->phase, b->phase);
}

static int row_cmp(const void *x, const void *y)
{
    const rt_op_row *a = x, *b = y;
    int c = key_cmp(a, b);
    return c ? c : (a->idx > b->idx) - (a->idx < b->idx);
}

/* Sorted by key, then file order: equal keys are numbered in the order they were written,
 * which is how repeated ops (one per microbatch, say) pair up between the two sides. */
static void number_occurrences(rt_ops *t)
{
    if (t->n > 0) qsort(t->row, (size_t)t->n, sizeof *t->row, row_cmp);
    for (long i = 0; i < t->n; i++)
        t->row[i].occ = i > 0 && !key_cmp(&t->row[i - 1], &t->row[i]) ? t->row[i - 1].occ + 1 : 0;
}

static void add_pair(rt_comparison *c, const rt_op_row *p, const rt_op_row *q)
{
    rt_cmp_pair *x = &c->pair[c->n_pair++];
    x->p = p;
    x->m = q;
    x->abs_err_s = fabs(p->dur - q->dur);
    x->rel = rt_cmp_rel_err(p->dur, q->dur);
}

static int join_cmp(const rt_op_row *a, const rt_op_row *b)
{
    int c = key_cmp(a, b);
    return c ? c : (a->occ > b->occ) - (a->occ < b->occ);
}

static void merge_join(rt_comparison *c, const rt_ops *p, const rt_ops *q)
{
    long i = 0, j = 0;
    while (i < p->n || j < q->n) {
        int k = i >= p->n ? 1 : j >= q->n ? -1 : join_cmp(&p->row[i], &q->row[j]);
        if (k == 0)
            add_pair(c, &p->row[i++], &q->row[j++]);
        else if (k < 0)
            c->pred_only[c->n_pred_only++] = &p->row[i++];
        else
            c->meas_only[c->n_meas_only++] = &q->row[j++];
    }
}

static int pair_by_file_order(const void *x, const void *y)
{
    const rt_cmp_pair *a = x, *b = y;
    return (a->p->idx > b->p->idx) - (a->p->idx < b->p->idx);
}

static int row_ptr_by_file_order(const void *x, const void *y)
{
    const rt_op_row *a = *(const rt_op_row *const *)x, *b = *(const rt_op_row *const *)y;
    return (a->idx > b->idx) - (a->idx < b->idx);
}

static int match_ops(rt_comparison *c)
{
    rt_ops *p = &c->pred_ops, *q = &c->meas_ops;
    number_occurrences(p);
    number_occurrences(q);
    c->pair = calloc((size_t)(p->n < q->n ? p->n : q->n) + 1, sizeof *c->pair);
    c->pred_only = calloc((size_t)p->n + 1, sizeof *c->pred_only);
    c->meas_only = calloc((size_t)q->n + 1, sizeof *c->meas_only);
    if (!c->pair || !c->pred_only || !c->meas_only) return -1;
    merge_join(c, p, q);
    qsort(c->pair, (size_t)c->n_pair, sizeof *c->pair, pair_by_file_order);
    qsort(c->pred_only, (size_t)c->n_pred_only, sizeof *c->pred_only, row_ptr_by_file_order);
    qsort(c->meas_only, (size_t)c->n_meas_only, sizeof *c->meas_only, row_ptr_by_file_order);
    return 0;
}

/* ---- phases --------------------------------------------------------------------------- */

static int match_phases(rt_comparison *c)
{
    const rt_summary *p = &c->pred, *m = &c->meas;
    c->phases = calloc((size_t)p->n_phases + (size_t)m->n_phases + 1, sizeof *c->phases);
    if (!c->phases) return -1;
    int n = 0;
    for (int i = 0; i < p->n_phases; i++) {
        int k = rt_summary_phase(m, p->phase[i]);
        c->phases[n++] =
            (rt_cmp_phase){p->phase[i], p->phase_s[i], k >= 0 ? m->phase_s[k] : NAN, 0};
    }
    for (int k = 0; k < m->n_phases; k++)
        if (rt_summary_phase(p, m->phase[k]) < 0)
            c->phases[n++] = (rt_cmp_phase){m->phase[k], NAN, m->phase_s[k], 0};
    for (int i = 0; i < n; i++)
        c->phases[i].rel = rt_cmp_rel_err(c->phases[i].pred, c->phases[i].meas);
    c->n_phases = n;
    return 0;
}

/* ---- errors --------------------------------------------------------------------------- */

static int worse_first(const void *x, const void *y)
{
    const rt_cmp_pair *a = *(const rt_cmp_pair *const *)x, *b = *(const rt_cmp_pair *const *)y;
    if (a->abs_err_s != b->abs_err_s) return a->abs_err_s < b->abs_err_s ? 1 : -1;
    return (a->p->idx > b->p->idx) - (a->p->idx < b->p->idx);
}

/* Worst by seconds, not by percent: a 10x error on a 1 us op matters less than 5% on the
 * embedding AlltoAll, and a measured 0 has no percent error at all. */
static int pick_worst(rt_comparison *c, long top)
{
    long n = c->n_pair;
    c->worst = calloc((size_t)n + 1, sizeof *c->worst);
    if (!c->worst) return -1;
    for (long i = 0; i < n; i++)
        c->worst[i] = &c->pair[i];
    qsort(c->worst, (size_t)n, sizeof *c->worst, worse_first);
    c->n_worst = top < n ? top : n;
    return 0;
}

/* Mean absolute percentage error from the summed |relative errors| of USED values; NAN when
 * no value had one. */
static double mape(double sum_abs, long used)
{
    return used ? 100.0 * sum_abs / (double)used : NAN;
}

static void add_abs_error(double rel, double *sum, long *used)
{
    if (isnan(rel)) return;
    *sum += fabs(rel);
    (*used)++;
}

static void summarize_errors(rt_comparison *c)
{
    double ops = 0, phases = 0;
    for (long i = 0; i < c->n_pair; i++)
        add_abs_error(c->pair[i].rel, &ops, &c->ops_mape_n);
    for (int i = 0; i < c->n_phases; i++)
        add_abs_error(c->phases[i].rel, &phases, &c->phases_mape_n);
    c->ops_mape = mape(ops, c->ops_mape_n);
    c->phases_mape = mape(phases, c->phases_mape_n);
}

/* ---- the comparison ------------------------------------------------------------------- */

void rt_comparison_free(rt_comparison *c)
{
    rt_summary_free(&c->pred);
    rt_summary_free(&c->meas);
    rt_ops_free(&c->pred_ops);
    rt_ops_free(&c->meas_ops);
    free(c->pair);
    free(c->pred_only);
    free(c->meas_only);
    free(c->phases);
    free(c->worst);
    const char *pred_dir = c->pred_dir, *meas_dir = c->meas_dir;
    memset(c, 0, sizeof *c);
    c->pred_dir = pred_dir;
    c->meas_dir = meas_dir;
}

int rt_comparison_run(rt_comparison *c, long top, const char *who, FILE *err)
{
    if (rt_result_dir_load(c->pred_dir, &c->pred, &c->pred_ops, who, err) ||
        rt_result_dir_load(c->meas_dir, &c->meas, &c->meas_ops, who, err))
        return -1;
    if (match_ops(c) || match_phases(c) || pick_worst(c, top)) {
        fprintf(err, "%s: out of memory\n", who);
        return -1;
    }
    summarize_errors(c);
    return 0;
}
