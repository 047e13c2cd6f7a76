/* rectwin plot roofline: the compute roofline (Williams et al. 2009) of the scenario's device,
 * one ceiling per dtype under the HBM slope, with every kernel launch of ops.csv placed by its
 * arithmetic intensity (FLOPs per byte of HBM traffic) and attained FLOP/s. */
#include <math.h>
#include <string.h>

#include "plot_kind.h"

static int is_placed(const rt_op_row *r)
{
    return !rt_plot_is_collective(r) && r->flops > 0 && r->bytes > 0 && r->dur > 0;
}

/* Blocks: 2 x side + group (embedding 0, dense 1); returns how many points each holds. */
static void write_points(FILE *f, const rt_plot_side *sd, int n_sides, long count[4],
                         rt_plot_range *x, rt_plot_range *y)
{
    for (int b = 0; b < 2 * n_sides; b++) {
        const rt_plot_side *d = &sd[b / 2];
        fprintf(f, "%s# %s %s ops: FLOP/byte, FLOP/s, op\n", b ? "\n\n" : "", d->label,
                b % 2 ? "dense" : "embedding");
        for (long i = 0; i < d->ops.n; i++) {
            const rt_op_row *r = &d->ops.row[i];
            if (!is_placed(r) || rt_plot_is_embedding(r) != !(b % 2)) continue;
            double ai = r->flops / r->bytes, perf = r->flops / r->dur;
            fprintf(f, "%.6g %.6g ", ai, perf);
            rt_plot_field(f, r->name);
            fputc('\n', f);
            rt_plot_range_add(x, ai);
            rt_plot_range_add(y, perf);
            count[b]++;
        }
        rt_plot_block_end(f, count[b]);
    }
}

static double peak_max(const rt_summary_hw *hw, rt_plot_range *x, rt_plot_range *y)
{
    double max = 0;
    for (int d = 0; d < RT_DT_COUNT; d++) {
        max = fmax(max, hw->peak_flops[d]);
        rt_plot_range_add(x, hw->peak_flops[d] / hw->hbm_bw); /* the ridge points */
        rt_plot_range_add(y, hw->peak_flops[d]);
    }
    return max;
}

/* Apart from the points' blue and red. */
static const char *const ceiling_colors[4] = {"#59a14f", "#b07aa1", "#f28e2b", "#9c755f"};

/* One ceiling per distinct peak: dtypes with the same peak share it ("bf16/fp16"). */
static void write_ceilings(FILE *gp, const rt_summary_hw *hw, int *n_elems)
{
    char si[32];
    rt_plot_next(gp, n_elems);
    fprintf(gp,
            "x * hbm_bw < peak_max ? x * hbm_bw : 1/0 with lines lw 2 lc rgb '#333333' "
            "title 'HBM %s'",
            rt_plot_si(hw->hbm_bw, "B/s", si, sizeof si));
    for (int d = 0, n = 0; d < RT_DT_COUNT; d++) {
        double peak = hw->peak_flops[d];
        int dup = 0;
        for (int e = 0; e < d; e++)
            dup |= hw->peak_flops[e] == peak;
        if (!(peak > 0) || dup) continue;
        char name[64] = "";
        for (int e = d; e < RT_DT_COUNT; e++)
            if (hw->peak_flops[e] == peak)
                snprintf(name + strlen(name), sizeof name - strlen(name), "%s%s", *name ? "/" : "",
                         rt_dtype_names[e]);
        rt_plot_next(gp, n_elems);
        fprintf(
            gp, "x * hbm_bw >= %.6g ? %.6g : 1/0 with lines lw 2 lc rgb '%s' title '%s peak %s'",
            peak, peak, ceiling_colors[n++ % 4], name, rt_plot_si(peak, "FLOP/s", si, sizeof si));
    }
}

static void write_plot(rt_plot *p, const rt_plot_side *sd, int n_sides, FILE *data,
                       const char *file)
{
    const rt_summary_hw *hw = &sd[0].s.hw;
    long count[4] = {0};
    rt_plot_range x = {0}, y = {0};
    write_points(data, sd, n_sides, count, &x, &y);
    double max = peak_max(hw, &x, &y);
    FILE *gp = rt_plot_script(p);
    fprintf(gp,
            "set logscale xy\nset grid xtics ytics mxtics mytics lc rgb '#e5e5e5'\n"
            "set xlabel 'arithmetic intensity (FLOP per byte of HBM traffic)'\n"
            "set ylabel 'attained performance (FLOP/s)'\n"
            "set format x '%%g'\nset format y '%%.0s %%cFLOP/s'\n"
            "set key outside right top\n"
            "hbm_bw = %.6g  # bytes/s\npeak_max = %.6g  # FLOP/s\nset samples 2000\n",
            hw->hbm_bw, max);
    rt_plot_range_log(gp, "x", x, 2);
    rt_plot_range_log(gp, "y", y, 2);
    int n_elems = 0;
    write_ceilings(gp, hw, &n_elems);
    static const char *const group[2] = {"embedding", "dense"};
    static const int shape[2][2] = {{7, 5}, {6, 4}}; /* [side][group]: filled, then open */
    for (int b = 0; b < 2 * n_sides; b++) {
        if (!count[b]) continue;
        rt_plot_next(gp, &n_elems);
        fprintf(gp,
                "%s index %d using 1:2 with points pt %d ps 0.8 lc rgb '%s' title "
                "'%s %s ops (%ld)'",
                file, b, shape[b / 2][b % 2], b % 2 ? "#e15759" : "#4e79a7", sd[b / 2].label,
                group[b % 2], count[b]);
    }
    fputc('\n', gp);
}

/* Kernel launches with no FLOPs cannot be placed on a log axis: they are counted, and the
 * bandwidth roofline is where they are drawn. */
static void note_unplaced(rt_plot *p, const rt_plot_side *d)
{
    long n = 0;
    for (long i = 0; i < d->ops.n; i++)
        n += !rt_plot_is_collective(&d->ops.row[i]) && !is_placed(&d->ops.row[i]);
    if (n)
        fprintf(rt_plot_script(p),
                "set label 1 'not shown: %ld %s kernel launches without FLOPs or time (see "
                "bwroofline)' at graph 0.02, graph 0.96 font 'Sans,9'\n",
                n, d->label);
}

static int draw(const rt_plot_args *a, rt_plot *p, FILE *err)
{
    rt_plot_side sd[2] = {{0}};
    int n = a->measured ? 2 : 1, rc = -1;
    char file[512];
    FILE *data;
    const char *who = "rectwin plot roofline";
    if (rt_plot_side_load(&sd[0], a->input[0], "predicted", who, err) ||
        (a->measured && rt_plot_side_load(&sd[1], a->measured, "measured", who, err))) {
    } else if (!sd[0].s.hw.present) {
        fprintf(err,
                "rectwin plot: %s/summary.json has no 'hardware' object (it was written "
                "by an older rectwin): run rectwin sim again\n",
                a->input[0]);
    } else if ((data = rt_plot_data(p, "ops", file, sizeof file))) {
        rt_plot_title(p, "Roofline", &sd[0].s, a->measured ? &sd[1].s : NULL);
        note_unplaced(p, &sd[0]);
        write_plot(p, sd, n, data, file);
        rc = 0;
    }
    rt_plot_side_free(&sd[0]);
    rt_plot_side_free(&sd[1]);
    return rc;
}

const rt_plot_kind rt_plot_roofline = {
    .name = "roofline",
    .args = "RESULT_DIR [--measured DIR]",
    .summary = "compute roofline of the device with every kernel launch, predicted and measured",
    .help = "Ceilings: the device's peak FLOP/s per dtype and its HBM bandwidth, from\n"
            "RESULT_DIR/summary.json ('hardware'). Points: every kernel launch of ops.csv with\n"
            "FLOPs, at x = flops / bytes (arithmetic intensity) and y = flops / (end_s -\n"
            "start_s); embedding and dense ops apart; with --measured, DIR's launches too\n"
            "(open marks). Collectives and launches without FLOPs are left to bwroofline.",
    .example = "rectwin plot roofline results/exec-cpu/analytic --measured results/exec-cpu/exec "
               "-o roofline.png",
    .min_inputs = 1,
    .max_inputs = 1,
    .options = RT_PLOT_OPT_MEASURED,
    .width = 1100,
    .height = 650,
    .draw = draw,
};
