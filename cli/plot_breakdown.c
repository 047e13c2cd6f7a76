/* rectwin plot breakdown: one bar per result directory (a plan, say) or per sweep point, its
 * phases stacked (seconds summed over the phase's ops on the slowest rank, as summary.json
 * reports them), communication phases hatched; beside it the exposed communication, and a
 * mark at the iteration time. Overlapped phases make a stack taller than the iteration. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "plot_kind.h"

enum { MAX_BY = 8, LABEL = 256 };

typedef struct bar {
    char label[LABEL];
    double *phase_s; /* [phase], 0 where the point has none */
    double exposed_s, iteration_s;
} bar;

typedef struct breakdown {
    char **phase; /* names, in order of first appearance */
    int *comm;    /* [phase]: the phase communicates */
    int n_phases, cap_phases;
    bar *bar;
    int n_bars;
    char title[2048];
    rt_summary first; /* result directories: the first one's labels (it owns nothing) */
    char plans[256];
    int plans_differ;
} breakdown;

static void breakdown_free(breakdown *b)
{
    for (int i = 0; i < b->n_phases; i++)
        free(b->phase[i]);
    for (int i = 0; i < b->n_bars; i++)
        free(b->bar[i].phase_s);
    free(b->phase);
    free(b->comm);
    free(b->bar);
}

/* Index of phase NAME, added when new (COMM says whether it communicates). -1: no memory. */
static int phase_index(breakdown *b, const char *name, int comm)
{
    for (int i = 0; i < b->n_phases; i++)
        if (!strcmp(b->phase[i], name)) return b->comm[i] |= comm, i;
    if (b->n_phases == b->cap_phases) {
        int cap = b->cap_phases ? 2 * b->cap_phases : 32;
        char **p = realloc(b->phase, (size_t)cap * sizeof *p);
        if (p) b->phase = p;
        int *c = p ? realloc(b->comm, (size_t)cap * sizeof *c) : NULL;
        if (!c) return -1;
        b->comm = c;
        b->cap_phases = cap;
    }
    if (!(b->phase[b->n_phases] = strdup(name))) return -1;
    b->comm[b->n_phases] = comm;
    return b->n_phases++;
}

/* Bars hold a slot for every phase any bar may have: at most MAX_PHASES. */
enum { MAX_PHASES = 256 };

static bar *new_bar(breakdown *b, int max_bars)
{
    if (!b->bar) b->bar = calloc((size_t)max_bars, sizeof *b->bar);
    if (!b->bar) return NULL;
    bar *r = &b->bar[b->n_bars];
    r->phase_s = calloc(MAX_PHASES, sizeof *r->phase_s);
    if (!r->phase_s) return NULL;
    b->n_bars++;
    return r;
}

static int set_phase(breakdown *b, bar *r, const char *name, int comm, double seconds)
{
    int i = phase_index(b, name, comm);
    if (i < 0 || i >= MAX_PHASES) return -1;
    r->phase_s[i] = isfinite(seconds) ? seconds : 0;
    return 0;
}

/* ---- bars from result directories ----------------------------------------------------- */

/* Phases whose ops are collectives: from ops.csv, not from names. */
static int phase_communicates(const rt_ops *ops, const char *phase)
{
    for (long i = 0; i < ops->n; i++)
        if (!strcmp(ops->row[i].phase, phase) && rt_plot_is_collective(&ops->row[i])) return 1;
    return 0;
}

/* The first directory's scenario, engine and topology; its plan, or every bar's plan when
 * they differ. */
static void title_dirs(breakdown *b, const rt_summary *s)
{
    if (b->n_bars == 1) {
        b->first = *s;
        b->first.phase = NULL; /* the labels only: S owns the rest */
        b->first.phase_s = NULL;
        b->first.group = NULL;
        b->first.n_phases = b->first.n_groups = 0;
    }
    size_t len = strlen(b->plans);
    snprintf(b->plans + len, sizeof b->plans - len, "%s%s", len ? ", " : "", s->plan);
    b->plans_differ |= strcmp(s->plan, b->first.plan) != 0;
    rt_summary t = b->first;
    if (b->plans_differ) snprintf(t.plan, sizeof t.plan, "%.*s", (int)sizeof t.plan - 1, b->plans);
    rt_plot_title_text(b->title, sizeof b->title, "Breakdown", &t, NULL);
}

static int add_dir(breakdown *b, const char *dir, int n_dirs, FILE *err)
{
    rt_summary s;
    rt_ops ops;
    if (rt_result_dir_load(dir, &s, &ops, "rectwin plot breakdown", err)) return -1;
    bar *r = new_bar(b, n_dirs);
    int rc = r ? 0 : -1;
    for (int i = 0; r && !rc && i < s.n_phases; i++)
        rc = set_phase(b, r, s.phase[i], phase_communicates(&ops, s.phase[i]), s.phase_s[i]);
    if (rc)
        fprintf(err, "rectwin plot breakdown: out of memory or more than %d phases\n", MAX_PHASES);
    if (r) {
        snprintf(r->label, sizeof r->label, "%s", s.plan);
        r->exposed_s = s.metric[RT_M_EXPOSED_COMM];
        r->iteration_s = s.metric[RT_M_ITERATION_TIME];
    }
    if (!rc) title_dirs(b, &s);
    rt_summary_free(&s);
    rt_ops_free(&ops);
    return rc;
}

/* Bars are named by plan; where two share a plan, by their directory as given. */
static void label_dirs(breakdown *b, const rt_plot_args *a)
{
    for (int i = 0; i < b->n_bars; i++)
        for (int j = 0; j < b->n_bars; j++)
            if (i != j && !strcmp(b->bar[i].label, b->bar[j].label)) {
                for (int k = 0; k < b->n_bars; k++)
                    snprintf(b->bar[k].label, LABEL, "%s", a->input[k]);
                return;
            }
}

static int from_dirs(breakdown *b, const rt_plot_args *a, FILE *err)
{
    for (int i = 0; i < a->n_inputs; i++)
        if (add_dir(b, a->input[i], a->n_inputs, err)) return -1;
    label_dirs(b, a);
    return 0;
}

/* ---- bars from a sweep table ---------------------------------------------------------- */

/* Without --by: the plan and every swept key (a dotted column, not a phase) that varies. */
static int default_by(const rt_sweep *t, int *cols)
{
    int n = 0;
    for (int c = 0; c < t->n_cols && n < MAX_BY; c++) {
        const char *name = t->header.f[c].text;
        char phase[128];
        if (!strchr(name, '.') || rt_sweep_phase(name, phase, sizeof phase)) continue;
        int varies = !strcmp(name, "plan.name");
        for (long r = 1; r < t->n_rows && !varies; r++)
            varies = strcmp(rt_sweep_text(t, r, c), rt_sweep_text(t, 0, c)) != 0;
        if (varies) cols[n++] = c;
    }
    return n;
}

/* A row whose phases are not all numbers (a failed point) is skipped. */
static int add_row(breakdown *b, const rt_sweep *t, long row, const int *by, int n_by)
{
    int n = 0;
    double x;
    char phase[128];
    for (int c = 0; c < t->n_cols; c++) {
        const char *name = t->header.f[c].text;
        if (!rt_sweep_phase(name, phase, sizeof phase)) continue;
        if (rt_sweep_number(t, row, c, &x) == 0)
            n++;
        else if (*rt_sweep_text(t, row, c))
            return 0;
    }
    bar *r = n ? new_bar(b, (int)t->n_rows) : NULL;
    if (!n) return 0;
    if (!r) return -1;
    for (int c = 0; c < t->n_cols; c++) {
        const char *name = t->header.f[c].text;
        if (rt_sweep_phase(name, phase, sizeof phase) && !rt_sweep_number(t, row, c, &x) &&
            set_phase(b, r, phase, rt_plot_is_comm_phase(phase), x))
            return -1;
    }
    int e = rt_sweep_col(t, "exposed_comm_s"), it = rt_sweep_col(t, "iteration_time_s");
    r->exposed_s = e >= 0 && !rt_sweep_number(t, row, e, &x) ? x : NAN;
    r->iteration_s = it >= 0 && !rt_sweep_number(t, row, it, &x) ? x : NAN;
    rt_sweep_label(t, row, by, n_by, r->label, sizeof r->label);
    if (!n_by) snprintf(r->label, sizeof r->label, "line %d", rt_sweep_line(t, row));
    return 0;
}

static int from_sweep(breakdown *b, const rt_plot_args *a, FILE *err)
{
    rt_sweep t;
    const char *path = a->input[0], *who = "rectwin plot breakdown";
    if (rt_sweep_load(&t, path, err)) return -1;
    int by[MAX_BY],
        n_by = a->by ? rt_sweep_by(&t, a->by, by, MAX_BY, who, err) : default_by(&t, by);
    int rc = n_by < 0 ? -1 : 0;
    for (long r = 0; !rc && r < t.n_rows; r++)
        if ((rc = add_row(b, &t, r, by, n_by)))
            fprintf(err, "%s: out of memory or more than %d phases\n", who, MAX_PHASES);
    if (!rc && b->n_bars == 0) {
        fprintf(err, "%s: %s has no row with phase.<phase>_s (or phases.<phase>) columns of seconds\n", who, path);
        rc = -1;
    }
    rt_plot_sweep_title_text(b->title, sizeof b->title, "Breakdown", &t, path);
    rt_sweep_free(&t);
    return rc;
}

/* ---- drawing -------------------------------------------------------------------------- */

static double max_height(const breakdown *b)
{
    double max = 0;
    for (int i = 0; i < b->n_bars; i++) {
        double sum = 0;
        for (int p = 0; p < b->n_phases; p++)
            sum += b->bar[i].phase_s[p];
        max = fmax(max, fmax(sum, fmax(b->bar[i].iteration_s, b->bar[i].exposed_s)));
    }
    return max;
}

/* Blocks: one per phase (boxes), then exposed comm (boxes), then the iteration marks. */
static void write_data(const breakdown *b, FILE *f, double unit, double *bottom)
{
    for (int p = 0; p < b->n_phases; p++) {
        fprintf(f, "%s# %s: x, y centre, half width, half height\n", p ? "\n\n" : "", b->phase[p]);
        for (int i = 0; i < b->n_bars; i++) {
            double h = b->bar[i].phase_s[p] / unit;
            fprintf(f, "%d %.9g 0.27 %.9g\n", i, bottom[i] + h / 2, h / 2);
            bottom[i] += h;
        }
    }
    fprintf(f, "\n\n# exposed communication: x, y centre, half width, half height\n");
    for (int i = 0; i < b->n_bars; i++) {
        double e = b->bar[i].exposed_s / unit;
        fprintf(f, "%g %.9g 0.07 %.9g\n", i + 0.37, e / 2, e / 2);
    }
    fprintf(f, "\n\n# iteration time: x, y, length\n");
    for (int i = 0; i < b->n_bars; i++)
        fprintf(f, "%g %.9g 0.9\n", i - 0.45, b->bar[i].iteration_s / unit);
}

static void write_xtics(const breakdown *b, FILE *gp)
{
    size_t longest = 0;
    for (int i = 0; i < b->n_bars; i++)
        longest = strlen(b->bar[i].label) > longest ? strlen(b->bar[i].label) : longest;
    fprintf(gp, "set xtics scale 0 %s(",
            longest > 10 || b->n_bars > 8 ? "rotate by 30 right " : "");
    for (int i = 0; i < b->n_bars; i++) {
        fprintf(gp, "%s", i ? ", " : "");
        rt_plot_string(gp, b->bar[i].label);
        fprintf(gp, " %d", i);
    }
    fprintf(gp, ")\nset xrange [-0.7:%d.7]\n", b->n_bars - 1);
}

/* Communication phases are tinted and hatched in their colour, compute phases solid. */
static void write_phase(const breakdown *b, FILE *gp, int *n, const char *file, int ph)
{
    /* The colour comes before the fill style, whose "border lc" would take it otherwise. */
    const char *color = rt_plot_color(ph);
    if (b->comm[ph]) {
        rt_plot_next(gp, n);
        fprintf(gp,
                "%s index %d using 1:2:3:4 with boxxyerror lc rgb '%s' fs transparent solid "
                "0.3 noborder notitle",
                file, ph, color);
    }
    rt_plot_next(gp, n);
    fprintf(gp, "%s index %d using 1:2:3:4 with boxxyerror lc rgb '%s' %s title ", file, ph, color,
            b->comm[ph] ? "fs transparent pattern 4 border"
                        : "fs solid 0.9 border lc rgb '#ffffff'");
    char title[300];
    snprintf(title, sizeof title, "%s%s", b->phase[ph], b->comm[ph] ? " (comm)" : "");
    rt_plot_string(gp, title);
}

static int write_script(const breakdown *b, rt_plot *p, FILE *data, const char *file)
{
    const char *unit_name;
    double unit = rt_plot_time_unit(max_height(b), &unit_name);
    double *bottom = calloc((size_t)b->n_bars, sizeof *bottom);
    if (!bottom) return -1;
    write_data(b, data, unit, bottom);
    free(bottom);
    FILE *gp = rt_plot_script(p);
    fprintf(gp, "set title %s font 'Sans,11'\n", b->title);
    fprintf(gp,
            "set ylabel 'time per iteration (%s): phases summed over ops, slowest rank'\n"
            "set yrange [0:*]\nset grid ytics lc rgb '#e5e5e5'\n"
            "set key outside right top\n",
            unit_name);
    write_xtics(b, gp);
    int n = 0;
    for (int ph = 0; ph < b->n_phases; ph++)
        write_phase(b, gp, &n, file, ph);
    rt_plot_next(gp, &n);
    fprintf(gp,
            "%s index %d using 1:2:3:4 with boxxyerror fs solid 1.0 noborder lc rgb "
            "'#c00000' title 'exposed comm'",
            file, b->n_phases);
    rt_plot_next(gp, &n);
    fprintf(gp,
            "%s index %d using 1:2:3:(0) with vectors nohead lw 3 lc rgb '#000000' title "
            "'iteration time'\n",
            file, b->n_phases + 1);
    return 0;
}

static int is_dir(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

static int draw(const rt_plot_args *a, rt_plot *p, FILE *err)
{
    breakdown b = {0};
    char file[512];
    FILE *data;
    int sweep = !is_dir(a->input[0]), rc = -1;
    if (sweep && a->n_inputs > 1)
        fprintf(err, "rectwin plot breakdown: one sweep table, or result directories\n");
    else if (!sweep && a->by)
        fprintf(err, "rectwin plot breakdown: --by names columns of a sweep table, not of "
                     "result directories\n");
    else if (!(sweep ? from_sweep(&b, a, err) : from_dirs(&b, a, err)) &&
             (data = rt_plot_data(p, "bars", file, sizeof file))) {
        if (!p->size_given && b.n_bars > 8) p->width += 40 * (b.n_bars - 8);
        rc = write_script(&b, p, data, file);
        if (rc) fprintf(err, "rectwin plot breakdown: out of memory\n");
    }
    breakdown_free(&b);
    return rc;
}

const rt_plot_kind rt_plot_breakdown = {
    .name = "breakdown",
    .args = "RESULT_DIR... | SWEEP.csv [--by COL[,COL...]]",
    .summary = "stacked per-phase time per plan or per sweep point, exposed comm marked",
    .help = "From result directories: one bar each, named by its plan, with the phases of its\n"
            "summary.json; a phase with a collective in ops.csv counts as communication.\n"
            "From a sweep table: one bar per row, its phases from the columns 'phase.<phase>_s'\n"
            "(as rectwin sweep writes them; 'phases.<phase>' too), named by the --by columns\n"
            "(default: 'plan.name' and every other dotted column whose value varies; an empty\n"
            "cell is a phase the point does not have); a phase named like a collective (a2a, allreduce, allgather,\n"
            "reduce_scatter, sync) counts as communication. Communication phases are hatched;\n"
            "the red bar beside each stack is the exposed communication ('exposed_comm_s') and\n"
            "the black mark the iteration time ('iteration_time_s').",
    .example = "rectwin plot breakdown results/flat results/fused results/hsp -o breakdown.png",
    .min_inputs = 1,
    .max_inputs = RT_PLOT_MAX_INPUTS,
    .options = RT_PLOT_OPT_BY,
    .width = 1100,
    .height = 600,
    .draw = draw,
};
