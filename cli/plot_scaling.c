/* rectwin plot scaling: throughput and scaling efficiency against GPU count, one line per
 * plan (or per --by value), from a sweep table. Efficiency is per-GPU throughput relative to
 * the line's smallest GPU count: 1 is linear scaling. */
#include <stdlib.h>
#include <string.h>

#include "plot_kind.h"

enum { MAX_BY = 8, LABEL = 256 };

/* The columns read, by header name; the first present of each list is used. */
static const char *const gpu_cols[] = {"ranks", "gpus", NULL};
static const char *const sps_cols[] = {"samples_per_s", NULL};
static const char *const plan_cols[] = {"plan.name", "plan", NULL};

typedef struct point {
    long row;
    int line;
    double gpus, sps, eff;
} point;

typedef struct scaling {
    rt_sweep t;
    int gpu, sps, by[MAX_BY], n_by;
    point *pt;
    long n_pt, skipped;
    char (*label)[LABEL]; /* per line */
    int n_lines;
} scaling;

static void scaling_free(scaling *s)
{
    rt_sweep_free(&s->t);
    free(s->pt);
    free(s->label);
}

static int find_columns(scaling *s, const char *by, const char *path, FILE *err)
{
    s->gpu = rt_sweep_col_any(&s->t, gpu_cols);
    s->sps = rt_sweep_col_any(&s->t, sps_cols);
    if (s->gpu < 0 || s->sps < 0) {
        fprintf(err,
                "rectwin plot scaling: %s has no column '%s' (it reads the GPU count from "
                "'ranks' or 'gpus' and the throughput from 'samples_per_s')\n",
                path, s->gpu < 0 ? "ranks" : "samples_per_s");
        return -1;
    }
    if (by) {
        s->n_by = rt_sweep_by(&s->t, by, s->by, MAX_BY, "rectwin plot scaling", err);
        return s->n_by < 0 ? -1 : 0;
    }
    s->by[0] = rt_sweep_col_any(&s->t, plan_cols);
    s->n_by = s->by[0] >= 0;
    return 0;
}

static int line_of(scaling *s, long row)
{
    char label[LABEL];
    rt_sweep_label(&s->t, row, s->by, s->n_by, label, sizeof label);
    if (!s->n_by) snprintf(label, sizeof label, "all points");
    for (int i = 0; i < s->n_lines; i++)
        if (!strcmp(s->label[i], label)) return i;
    memcpy(s->label[s->n_lines], label, sizeof label);
    return s->n_lines++;
}

static int by_line_then_gpus(const void *x, const void *y)
{
    const point *a = x, *b = y;
    if (a->line != b->line) return a->line - b->line;
    return (a->gpus > b->gpus) - (a->gpus < b->gpus);
}

/* Rows without both numbers (failed points) are skipped and counted. */
static int collect(scaling *s)
{
    s->pt = calloc((size_t)s->t.n_rows + 1, sizeof *s->pt);
    s->label = calloc((size_t)s->t.n_rows + 1, sizeof *s->label);
    if (!s->pt || !s->label) return -1;
    for (long r = 0; r < s->t.n_rows; r++) {
        point *p = &s->pt[s->n_pt];
        if (rt_sweep_number(&s->t, r, s->gpu, &p->gpus) || !(p->gpus >= 1) ||
            rt_sweep_number(&s->t, r, s->sps, &p->sps) || !(p->sps > 0)) {
            s->skipped++;
            continue;
        }
        p->row = r;
        p->line = line_of(s, r);
        s->n_pt++;
    }
    qsort(s->pt, (size_t)s->n_pt, sizeof *s->pt, by_line_then_gpus);
    return 0;
}

/* Two points of a line at one GPU count would zigzag: the sweep varies something --by does
 * not name. */
static int check_unique(const scaling *s, const char *path, FILE *err)
{
    for (long i = 1; i < s->n_pt; i++) {
        const point *a = &s->pt[i - 1], *b = &s->pt[i];
        if (a->line != b->line || a->gpus != b->gpus) continue;
        int d = rt_sweep_differing(&s->t, a->row, b->row, s->by, s->n_by);
        fprintf(err,
                "rectwin plot scaling: %s: lines %d and %d are both '%s' at %g GPUs; name "
                "what tells them apart with --by",
                path, rt_sweep_line(&s->t, a->row), rt_sweep_line(&s->t, b->row), s->label[a->line],
                a->gpus);
        if (d >= 0) fprintf(err, " (they differ in '%s')", s->t.header.f[d].text);
        fputc('\n', err);
        return -1;
    }
    return 0;
}

static void write_data(scaling *s, FILE *f)
{
    for (int line = 0, i = 0; line < s->n_lines; line++) {
        fprintf(f, "%s# %s: GPUs, samples/s, scaling efficiency\n", line ? "\n\n" : "",
                s->label[line]);
        const point *base = &s->pt[i];
        for (; i < s->n_pt && s->pt[i].line == line; i++) {
            point *p = &s->pt[i];
            p->eff = (p->sps / p->gpus) / (base->sps / base->gpus);
            fprintf(f, "%.9g %.9g %.6g\n", p->gpus, p->sps, p->eff);
        }
    }
}

static double max_eff(const scaling *s)
{
    double max = 1;
    for (long i = 0; i < s->n_pt; i++)
        if (s->pt[i].eff > max) max = s->pt[i].eff;
    return max;
}

static void write_panel(const scaling *s, FILE *gp, const char *file, int eff)
{
    fprintf(gp, "set title '%s'\nset xlabel 'GPUs (ranks)'\n",
            eff ? "scaling efficiency (per-GPU throughput / the smallest run)" : "throughput");
    if (eff)
        fprintf(gp,
                "unset logscale y\nset ylabel 'scaling efficiency'\nset format y '%%.1f'\n"
                "set yrange [0:%.3g]\nset key center right opaque\n",
                max_eff(s) * 1.15);
    else
        fprintf(gp, "set logscale y\nset ylabel 'samples/s'\nset format y '%%.0s %%c'\n"
                    "set key top left\n");
    int n = 0;
    if (eff) {
        rt_plot_next(gp, &n);
        fprintf(gp, "1 with lines dt 2 lc rgb '#777777' title 'linear scaling'");
    }
    for (int line = 0; line < s->n_lines; line++) {
        rt_plot_next(gp, &n);
        fprintf(gp, "%s index %d using 1:%d with linespoints lw 2 pt 7 lc rgb '%s' title ", file,
                line, eff ? 3 : 2, rt_plot_color(line));
        rt_plot_string(gp, s->label[line]);
    }
    fputc('\n', gp);
}

static void write_script(const scaling *s, rt_plot *p, const char *file, const char *path)
{
    FILE *gp = rt_plot_script(p);
    char title[2048];
    fprintf(gp, "set multiplot layout 1, 2 title %s font 'Sans,11'\n",
            rt_plot_sweep_title_text(title, sizeof title, "Scaling", &s->t, path));
    fprintf(gp, "set logscale x 2\nset format x '%%g'\nset grid lc rgb '#e5e5e5'\n"
                "set offsets graph 0.05, graph 0.05, 0, 0\n");
    write_panel(s, gp, file, 0);
    write_panel(s, gp, file, 1);
    fprintf(gp, "unset multiplot\n");
}

static int draw(const rt_plot_args *a, rt_plot *p, FILE *err)
{
    scaling s = {0};
    const char *path = a->input[0];
    char file[512];
    FILE *data;
    int rc = -1;
    if (rt_sweep_load(&s.t, path, err) || find_columns(&s, a->by, path, err)) {
    } else if (collect(&s)) {
        fprintf(err, "rectwin plot scaling: out of memory\n");
    } else if (s.n_pt == 0) {
        fprintf(err, "rectwin plot scaling: %s: no row has both a GPU count and samples_per_s\n",
                path);
    } else if (!check_unique(&s, path, err) &&
               (data = rt_plot_data(p, "lines", file, sizeof file))) {
        write_data(&s, data);
        write_script(&s, p, file, path);
        if (s.skipped)
            fprintf(err,
                    "rectwin plot scaling: %ld rows without a GPU count or samples_per_s "
                    "(failed points?) are not drawn\n",
                    s.skipped);
        rc = 0;
    }
    scaling_free(&s);
    return rc;
}

const rt_plot_kind rt_plot_scaling = {
    .name = "scaling",
    .args = "SWEEP.csv [--by COL[,COL...]]",
    .summary = "samples/s and scaling efficiency against GPU count, one line per plan",
    .help = "Reads a sweep table (rectwin sweep, or any CSV with a header) by column name:\n"
            "the GPU count from 'ranks' (else 'gpus'), the throughput from 'samples_per_s',\n"
            "one line per value of 'plan.name' (else 'plan'; --by names other columns, e.g.\n"
            "--by plan.name,topology.scale_out.nic_bw). Rows whose GPU count or samples_per_s\n"
            "is empty or not a number (failed points) are left out. Efficiency is samples/s per\n"
            "GPU over that of the line's smallest GPU count. The title names the columns\n"
            "'scenario', 'engine' and 'topology' when the table has them.",
    .example = "rectwin plot scaling sweep.csv --by plan.name -o scaling.png",
    .min_inputs = 1,
    .max_inputs = 1,
    .options = RT_PLOT_OPT_BY,
    .width = 1300,
    .height = 550,
    .draw = draw,
};
