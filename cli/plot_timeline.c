/* rectwin plot timeline: a Gantt chart of ops.csv, one row per (rank, stream), one colour per
 * phase, for when Perfetto is not at hand. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "plot_kind.h"

enum { DEFAULT_RANKS = 8, MAX_STREAMS = 16, ROW_PIXELS = 24 };

typedef struct timeline {
    const rt_ops *ops;
    long *rank; /* the ranks shown, ascending */
    int n_ranks;
    long n_all_ranks;
    const char *stream[MAX_STREAMS]; /* in display order: compute, comm, copy, then others */
    int n_streams;
    int *row; /* [rank index * MAX_STREAMS + stream]: row on the chart, -1 when empty */
    int n_rows;
    double end_s; /* the last op's end among the shown ranks */
} timeline;

static void timeline_free(timeline *t)
{
    free(t->rank);
    free(t->row);
}

static int cmp_long(const void *x, const void *y)
{
    long a = *(const long *)x, b = *(const long *)y;
    return (a > b) - (a < b);
}

/* The distinct ranks in ascending order; keeps the first MAX. */
static int pick_ranks(timeline *t, long max)
{
    const rt_ops *o = t->ops;
    long *all = malloc(((size_t)o->n + 1) * sizeof *all);
    if (!all) return -1;
    for (long i = 0; i < o->n; i++)
        all[i] = o->row[i].rank;
    qsort(all, (size_t)o->n, sizeof *all, cmp_long);
    long n = 0;
    for (long i = 0; i < o->n; i++)
        if (i == 0 || all[i] != all[n - 1]) all[n++] = all[i];
    t->n_all_ranks = n;
    t->n_ranks = (int)(n < max ? n : max);
    t->rank = all;
    return 0;
}

static int rank_index(const timeline *t, long rank)
{
    const long *hit = bsearch(&rank, t->rank, (size_t)t->n_ranks, sizeof *t->rank, cmp_long);
    return hit ? (int)(hit - t->rank) : -1;
}

static int stream_index(timeline *t, const char *name)
{
    for (int i = 0; i < t->n_streams; i++)
        if (!strcmp(t->stream[i], name)) return i;
    if (t->n_streams == MAX_STREAMS) return -1;
    t->stream[t->n_streams] = name;
    return t->n_streams++;
}

/* Rows for the (rank, stream) pairs that have ops, rank by rank. */
static int assign_rows(timeline *t)
{
    static const char *const order[] = {"compute", "comm", "sync_comm", "copy"};
    for (int i = 0; i < 4; i++)
        stream_index(t, order[i]);
    t->row = malloc(((size_t)t->n_ranks * MAX_STREAMS + 1) * sizeof *t->row);
    if (!t->row) return -1;
    for (int i = 0; i < t->n_ranks * MAX_STREAMS; i++)
        t->row[i] = -1;
    for (long i = 0; i < t->ops->n; i++) {
        const rt_op_row *r = &t->ops->row[i];
        int k = rank_index(t, r->rank), s = stream_index(t, *r->stream ? r->stream : "ops");
        if (k < 0 || s < 0) continue;
        t->row[k * MAX_STREAMS + s] = 0;
        if (r->end > t->end_s) t->end_s = r->end;
    }
    for (int k = 0; k < t->n_ranks; k++)
        for (int s = 0; s < t->n_streams; s++)
            if (t->row[k * MAX_STREAMS + s] == 0) t->row[k * MAX_STREAMS + s] = t->n_rows++ + 1;
    for (int i = 0; i < t->n_ranks * MAX_STREAMS; i++)
        t->row[i]--; /* rows from 0; -1 stays empty */
    return 0;
}

static int row_of(timeline *t, const rt_op_row *r)
{
    int k = rank_index(t, r->rank), s = stream_index(t, *r->stream ? r->stream : "ops");
    return k < 0 || s < 0 ? -1 : t->row[k * MAX_STREAMS + s];
}

/* One block per phase, in the order phases first appear; returns the blocks written and
 * the phase of each in NAMES. */
static int write_ops(timeline *t, FILE *f, double unit, const char **names)
{
    int blocks = 0;
    for (long i = 0; i < t->ops->n; i++) {
        const char *ph = t->ops->row[i].phase;
        int seen = 0;
        for (int b = 0; b < blocks && !seen; b++)
            seen = !strcmp(names[b], ph);
        if (seen || row_of(t, &t->ops->row[i]) < 0) continue;
        fprintf(f, "%s# phase %s: time (centre), row, half duration, half height\n",
                blocks ? "\n\n" : "", ph);
        for (long j = i; j < t->ops->n; j++) {
            const rt_op_row *r = &t->ops->row[j];
            int row = row_of(t, r);
            if (row >= 0 && !strcmp(r->phase, ph))
                fprintf(f, "%.9g %d %.9g 0.38\n", (r->start + r->end) / 2 / unit, row,
                        r->dur / 2 / unit);
        }
        names[blocks++] = ph;
    }
    return blocks;
}

static void write_axes(timeline *t, FILE *gp, const char *unit_name, double unit)
{
    fprintf(gp, "set xlabel 'time from the start of the iteration (%s)'\n", unit_name);
    fprintf(gp, "set xrange [0:%.9g]\nset yrange [%d.5:-0.5]\n", t->end_s / unit * 1.02,
            t->n_rows - 1);
    fprintf(gp, "set ytics scale 0 (");
    int first = 1;
    for (int k = 0; k < t->n_ranks; k++)
        for (int s = 0; s < t->n_streams; s++) {
            int row = t->row[k * MAX_STREAMS + s];
            if (row < 0) continue;
            char label[128];
            snprintf(label, sizeof label, "rank %ld %s", t->rank[k], t->stream[s]);
            fprintf(gp, "%s", first ? "" : ", ");
            rt_plot_string(gp, label);
            fprintf(gp, " %d", row);
            first = 0;
        }
    fprintf(gp, ")\nset grid xtics lc rgb '#dddddd'\nset mxtics\n");
    /* A line between ranks: rows of one rank belong together. */
    for (int k = 1; k < t->n_ranks; k++) {
        int row = t->row[k * MAX_STREAMS];
        for (int s = 0; row < 0 && s < t->n_streams; s++)
            row = t->row[k * MAX_STREAMS + s];
        fprintf(gp,
                "set arrow from graph 0, first %d.5 to graph 1, first %d.5 nohead lc "
                "rgb '#999999' dt 2\n",
                row - 1, row - 1);
    }
}

static void write_plot(timeline *t, rt_plot *p, const rt_summary *s, FILE *data, const char *file,
                       const char **names)
{
    const char *unit_name;
    double unit = rt_plot_time_unit(t->end_s, &unit_name);
    int blocks = write_ops(t, data, unit, names);
    /* Room for the rows, and for the legend in one column. */
    if (!p->size_given)
        p->height = 150 + ROW_PIXELS * (t->n_rows > blocks ? t->n_rows : blocks * 2 / 3);
    char what[96];
    snprintf(what, sizeof what, "Timeline (ranks %ld-%ld of %ld)", t->rank[0],
             t->rank[t->n_ranks - 1], t->n_all_ranks);
    rt_plot_title(p, what, s, NULL);
    FILE *gp = rt_plot_script(p);
    write_axes(t, gp, unit_name, unit);
    fprintf(gp, "set key outside right top title 'phase'\nset style fill solid 1.0 noborder\n");
    int n = 0;
    for (int b = 0; b < blocks; b++) {
        rt_plot_next(gp, &n);
        fprintf(gp, "%s index %d using 1:2:3:4 with boxxyerror lc rgb '%s' title ", file, b,
                rt_plot_color(b));
        rt_plot_string(gp, names[b]);
    }
    fputc('\n', gp);
}

static int draw(const rt_plot_args *a, rt_plot *p, FILE *err)
{
    rt_summary s;
    rt_ops ops;
    if (rt_result_dir_load(a->input[0], &s, &ops, "rectwin plot timeline", err)) return -1;
    timeline t = {.ops = &ops};
    const char **names = malloc(((size_t)ops.n + 1) * sizeof *names);
    char file[512];
    FILE *data;
    int rc = -1;
    if (!names || pick_ranks(&t, a->ranks ? a->ranks : DEFAULT_RANKS) || assign_rows(&t)) {
        fprintf(err, "rectwin plot timeline: out of memory\n");
    } else if (t.n_rows == 0) {
        fprintf(err, "rectwin plot timeline: %s/ops.csv has no ops\n", a->input[0]);
    } else if ((data = rt_plot_data(p, "ops", file, sizeof file))) {
        write_plot(&t, p, &s, data, file, names);
        rc = 0;
    }
    free(names);
    timeline_free(&t);
    rt_summary_free(&s);
    rt_ops_free(&ops);
    return rc;
}

const rt_plot_kind rt_plot_timeline = {
    .name = "timeline",
    .args = "RESULT_DIR [--ranks N]",
    .summary = "a Gantt chart of ops.csv: one row per rank and stream, one colour per phase",
    .help = "Reads RESULT_DIR/summary.json and ops.csv (from rectwin sim or rectwin-exec).\n"
            "Each op is a bar from its start to its end, on the row of its rank and stream\n"
            "(compute, comm, copy); rows of the first N ranks (--ranks, default 8).",
    .example = "rectwin plot timeline results/dlrm-criteo/simgrid --ranks 4 -o timeline.png",
    .min_inputs = 1,
    .max_inputs = 1,
    .options = RT_PLOT_OPT_RANKS,
    .width = 1100,
    .height = 500,
    .draw = draw,
};
