/* Helpers the plot kinds share (plot_kind.h). */
#include <math.h>
#include <string.h>

#include "plot_kind.h"

const char *rt_plot_title_text(char *buf, size_t size, const char *what, const rt_summary *s,
                               const rt_summary *meas)
{
    char engine[160], ranks[96] = "", title[1024];
    if (meas && strcmp(meas->engine, s->engine))
        snprintf(engine, sizeof engine, "%s vs %s", s->engine, meas->engine);
    else
        snprintf(engine, sizeof engine, "%s", s->engine);
    if (s->nodes > 0 && s->ranks > 0)
        snprintf(ranks, sizeof ranks, ", %ld nodes, %ld ranks", s->nodes, s->ranks);
    else if (s->ranks > 0)
        snprintf(ranks, sizeof ranks, ", %ld ranks", s->ranks);
    snprintf(title, sizeof title, "%s: %s (plan%s %s), engine %s, topology %s%s", what, s->scenario,
             strchr(s->plan, ',') ? "s" : "", s->plan, engine, s->topology, ranks);
    return rt_plot_quote(buf, size, title);
}

void rt_plot_title(rt_plot *p, const char *what, const rt_summary *s, const rt_summary *meas)
{
    char title[2048];
    fprintf(rt_plot_script(p), "set title %s font 'Sans,11'\n",
            rt_plot_title_text(title, sizeof title, what, s, meas));
}

const char *rt_plot_sweep_title_text(char *buf, size_t size, const char *what, const rt_sweep *t,
                                     const char *path)
{
    static const char *const keys[] = {"scenario", "engine", "topology"};
    char title[1024];
    int w = snprintf(title, sizeof title, "%s:", what);
    for (int i = 0; i < 3; i++) {
        int col = rt_sweep_col(t, keys[i]);
        const char *v = col >= 0 ? rt_sweep_text(t, 0, col) : "";
        if (*v && w > 0 && (size_t)w < sizeof title)
            w += snprintf(title + w, sizeof title - (size_t)w, "%s%s %s", i ? ", " : "",
                          i ? keys[i] : "", v);
    }
    const char *name = strrchr(path, '/');
    if (w > 0 && (size_t)w < sizeof title)
        snprintf(title + w, sizeof title - (size_t)w, " (sweep %s)", name ? name + 1 : path);
    return rt_plot_quote(buf, size, title);
}

int rt_plot_side_load(rt_plot_side *d, const char *dir, const char *label, const char *who,
                      FILE *err)
{
    d->label = label;
    if (rt_result_dir_load(dir, &d->s, &d->ops, who, err)) return -1;
    d->loaded = 1;
    if (d->ops.has_cost) return 0;
    fprintf(err, "%s: %s/ops.csv has no flops and bytes columns\n", who, dir);
    return -1;
}

void rt_plot_side_free(rt_plot_side *d)
{
    if (d->loaded) {
        rt_summary_free(&d->s);
        rt_ops_free(&d->ops);
    }
    d->loaded = 0;
}

int rt_plot_is_embedding(const rt_op_row *r)
{
    return !strncmp(r->phase, "emb", 3);
}

static const char *const collectives[] = {"alltoallv", "allreduce", "reduce_scatter",
                                          "allgather", "sendrecv",  NULL};

int rt_plot_is_collective(const rt_op_row *r)
{
    if (!*r->type) return !strcmp(r->stream, "comm");
    for (int i = 0; collectives[i]; i++)
        if (!strcmp(r->type, collectives[i])) return 1;
    return 0;
}

int rt_plot_is_comm_phase(const char *phase)
{
    static const char *const marks[] = {"a2a",  "allreduce", "allgather", "reduce_scatter",
                                        "sync", "sendrecv",  NULL};
    const char *last = strrchr(phase, '.');
    last = last ? last + 1 : phase;
    for (int i = 0; marks[i]; i++)
        if (strstr(last, marks[i])) return 1;
    return 0;
}

/* Distinguishable in colour and in grey (the Tableau 10, then darker and lighter variants). */
static const char *const palette[] = {"#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#76b7b2",
                                      "#edc948", "#b07aa1", "#ff9da7", "#9c755f", "#bab0ac",
                                      "#1f4e79", "#a0522d", "#2e7d32", "#7f7f00", "#00838f",
                                      "#b8860b", "#6a1b9a", "#c2185b", "#5d4037", "#616161"};

const char *rt_plot_color(int i)
{
    int n = (int)(sizeof palette / sizeof palette[0]);
    return palette[((i % n) + n) % n];
}

double rt_plot_time_unit(double max_s, const char **name)
{
    if (max_s >= 1) {
        *name = "s";
        return 1;
    }
    if (max_s >= 1e-3) {
        *name = "ms";
        return 1e-3;
    }
    *name = "us";
    return 1e-6;
}

const char *rt_plot_si(double x, const char *unit, char *buf, size_t size)
{
    static const char prefix[] = " kMGTPE";
    int k = 0;
    while (k < 6 && fabs(x) >= 999.5) {
        x /= 1000;
        k++;
    }
    if (k)
        snprintf(buf, size, "%.3g %c%s", x, prefix[k], unit);
    else
        snprintf(buf, size, "%.3g %s", x, unit);
    return buf;
}

void rt_plot_range_add(rt_plot_range *r, double x)
{
    if (!(x > 0) || !isfinite(x)) return;
    if (r->lo == 0 || x < r->lo) r->lo = x;
    if (x > r->hi) r->hi = x;
}

void rt_plot_range_log(FILE *gp, const char *axis, rt_plot_range r, double pad)
{
    double lo = r.lo > 0 ? pow(10, floor(log10(r.lo / pad))) : 1;
    double hi = r.hi > 0 ? pow(10, ceil(log10(r.hi * pad))) : 10;
    if (hi <= lo) hi = lo * 10;
    fprintf(gp, "set %srange [%.3g:%.3g]\n", axis, lo, hi);
}

void rt_plot_next(FILE *gp, int *n)
{
    fputs((*n)++ ? ", \\\n  " : "plot \\\n  ", gp);
}

void rt_plot_block_end(FILE *f, long count)
{
    if (count == 0) fputs("NaN NaN\n", f);
}
