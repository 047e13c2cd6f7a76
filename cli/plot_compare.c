/* rectwin plot compare: predicted against measured seconds, the iteration and then every
 * phase, as pairs of bars on a log axis with the relative error above each pair: what
 * `rectwin compare` prints (cli/comparison.c computes both). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "comparison.h"
#include "plot_kind.h"

/* The groups: the iteration, then the phases. */
static void group_at(const rt_comparison *c, int g, const char **name, double *pred, double *meas,
                     double *rel)
{
    if (g == 0) {
        *name = "iteration";
        *pred = c->pred.metric[RT_M_ITERATION_TIME];
        *meas = c->meas.metric[RT_M_ITERATION_TIME];
        *rel = rt_cmp_rel_err(*pred, *meas);
        return;
    }
    const rt_cmp_phase *ph = &c->phases[g - 1];
    *name = ph->name;
    *pred = ph->pred;
    *meas = ph->meas;
    *rel = ph->rel;
}

/* Blocks 0 and 1: predicted and measured bars (x, y centre, half width, half height from
 * FLOOR); block 2: error labels (x, y, text). */
static void write_data(const rt_comparison *c, FILE *f, double unit, double floor)
{
    int n = c->n_phases + 1;
    for (int side = 0; side < 2; side++) {
        fprintf(f, "%s# %s seconds: x, y centre, half width, half height\n", side ? "\n\n" : "",
                side ? "measured" : "predicted");
        long drawn = 0;
        for (int g = 0; g < n; g++) {
            const char *name;
            double v[2], rel;
            group_at(c, g, &name, &v[0], &v[1], &rel);
            double y = v[side] / unit;
            if (!(y > floor)) continue;
            fprintf(f, "%g %.9g 0.18 %.9g\n", g + (side ? 0.2 : -0.2), (y + floor) / 2,
                    (y - floor) / 2);
            drawn++;
        }
        rt_plot_block_end(f, drawn);
    }
    fprintf(f, "\n\n# error = (predicted - measured) / measured: x, y, label\n");
    for (int g = 0; g < n; g++) {
        const char *name;
        double p, m, rel;
        group_at(c, g, &name, &p, &m, &rel);
        double top = fmax(isfinite(p) ? p : 0, isfinite(m) ? m : 0) / unit;
        char label[32] = "n/a";
        if (isfinite(rel)) snprintf(label, sizeof label, "%+.1f%%", 100 * rel);
        fprintf(f, "%d %.9g \"%s\"\n", g, top > floor ? top * 1.35 : floor * 1.35, label);
    }
}

static void range(const rt_comparison *c, double unit, double *lo, double *hi)
{
    rt_plot_range r = {0};
    for (int g = 0; g <= c->n_phases; g++) {
        const char *name;
        double p, m, rel;
        group_at(c, g, &name, &p, &m, &rel);
        rt_plot_range_add(&r, p / unit);
        rt_plot_range_add(&r, m / unit);
    }
    *lo = r.lo > 0 ? pow(10, floor(log10(r.lo / 2))) : 1e-3;
    *hi = r.hi > 0 ? pow(10, ceil(log10(r.hi * 1.6))) : 1;
}

static void write_xtics(const rt_comparison *c, FILE *gp)
{
    fprintf(gp, "set xtics scale 0 rotate by 30 right (");
    for (int g = 0; g <= c->n_phases; g++) {
        const char *name;
        double p, m, rel;
        group_at(c, g, &name, &p, &m, &rel);
        fprintf(gp, "%s", g ? ", " : "");
        rt_plot_string(gp, name);
        fprintf(gp, " %d", g);
    }
    fprintf(gp, ")\nset xrange [-0.6:%d.6]\n", c->n_phases);
}

static void write_script(const rt_comparison *c, rt_plot *p, FILE *data, const char *file)
{
    double max = fmax(c->pred.metric[RT_M_ITERATION_TIME], c->meas.metric[RT_M_ITERATION_TIME]);
    const char *unit_name;
    double unit = rt_plot_time_unit(isfinite(max) ? max : 1, &unit_name), lo, hi;
    range(c, unit, &lo, &hi);
    write_data(c, data, unit, lo);
    char what[128] = "Predicted vs measured";
    if (isfinite(c->phases_mape))
        snprintf(what, sizeof what, "Predicted vs measured (MAPE over phases %.1f%%)",
                 c->phases_mape);
    rt_plot_title(p, what, &c->pred, &c->meas);
    FILE *gp = rt_plot_script(p);
    fprintf(gp,
            "set logscale y\nset yrange [%.3g:%.3g]\nset ylabel 'time (%s)'\n"
            "set format y '%%g'\nset grid ytics lc rgb '#e5e5e5'\n"
            "set arrow from 0.5, graph 0 to 0.5, graph 1 nohead dt 2 lc rgb '#999999'\n"
            "set key top right\nset style fill solid 0.9 border lc rgb '#ffffff'\n",
            lo, hi, unit_name);
    write_xtics(c, gp);
    fprintf(gp,
            "plot \\\n  %s index 0 using 1:2:3:4 with boxxyerror lc rgb '#4e79a7' title "
            "'predicted (%s)', \\\n",
            file, c->pred.engine);
    fprintf(gp,
            "  %s index 1 using 1:2:3:4 with boxxyerror lc rgb '#f28e2b' title "
            "'measured (%s)', \\\n",
            file, c->meas.engine);
    fprintf(gp,
            "  %s index 2 using 1:2:3 with labels font 'Sans,9' title 'error = (pred - meas) "
            "/ meas'\n",
            file);
}

static int draw(const rt_plot_args *a, rt_plot *p, FILE *err)
{
    rt_comparison c = {.pred_dir = a->input[0], .meas_dir = a->input[1]};
    char file[512];
    FILE *data;
    int rc = -1;
    if (rt_comparison_run(&c, 0, "rectwin plot compare", err) == 0 &&
        (data = rt_plot_data(p, "bars", file, sizeof file))) {
        if (!p->size_given && c.n_phases > 12) p->width += 45 * (c.n_phases - 12);
        write_script(&c, p, data, file);
        rc = 0;
    }
    rt_comparison_free(&c);
    return rc;
}

const rt_plot_kind rt_plot_compare = {
    .name = "compare",
    .args = "PRED_DIR MEAS_DIR",
    .summary = "predicted vs measured bars per phase with error labels (as rectwin compare)",
    .help = "Reads both result directories as 'rectwin compare' does. One pair of bars for the\n"
            "iteration time, then one per phase (seconds summed over the phase's ops, slowest\n"
            "rank), on a log axis; above each pair the relative error (predicted - measured) /\n"
            "measured, n/a where the measured value is 0 or missing. The title gives the MAPE\n"
            "over phases.",
    .example =
        "rectwin plot compare results/exec-cpu/analytic results/exec-cpu/exec -o compare.png",
    .min_inputs = 2,
    .max_inputs = 2,
    .options = 0,
    .width = 1100,
    .height = 600,
    .draw = draw,
};
