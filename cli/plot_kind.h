/* The kinds of `rectwin plot`: one rt_plot_kind each (plot_roofline.c, ...), listed in
 * cmd_plot.c's table. A kind reads its inputs and writes the body of the gnuplot script and its
 * data files into an rt_plot that cmd_plot.c opened and finishes. Helpers the kinds share are
 * here too (plot_common.c). */
#ifndef RT_PLOT_KIND_H
#define RT_PLOT_KIND_H

#include <stdio.h>

#include "plot_gnuplot.h"
#include "result_read.h"
#include "sweep_read.h"

enum { RT_PLOT_MAX_INPUTS = 64 };

/* Options beyond -o and --size that a kind takes. */
enum { RT_PLOT_OPT_MEASURED = 1, RT_PLOT_OPT_BY = 2, RT_PLOT_OPT_RANKS = 4 };

typedef struct rt_plot_args {
    const char *input[RT_PLOT_MAX_INPUTS];
    int n_inputs;
    const char *measured; /* --measured DIR, or NULL */
    const char *by;       /* --by COL[,COL...], or NULL */
    long ranks;           /* --ranks N (0: the kind's default) */
} rt_plot_args;

typedef struct rt_plot_kind {
    const char *name;
    const char *args;    /* positional arguments and options, for the usage line */
    const char *summary; /* what it draws, in one line */
    const char *help;    /* what it reads and how it draws it */
    const char *example;
    int min_inputs, max_inputs;
    unsigned options; /* RT_PLOT_OPT_* */
    int width, height;
    /* Writes the script body and data of A into P. 0, or -1 with a message on ERR. */
    int (*draw)(const rt_plot_args *a, rt_plot *p, FILE *err);
} rt_plot_kind;

extern const rt_plot_kind rt_plot_roofline, rt_plot_bwroofline, rt_plot_scaling, rt_plot_breakdown,
    rt_plot_compare, rt_plot_timeline;

/* ---- shared by the kinds (plot_common.c) ---------------------------------------------- */

/* The title naming WHAT, the scenario, plan, engine (or "ENGINE vs MEAS_ENGINE" when MEAS is
 * not NULL) and the topology with its nodes and ranks, as a gnuplot string in BUF. */
const char *rt_plot_title_text(char *buf, size_t size, const char *what, const rt_summary *s,
                               const rt_summary *meas);
/* Writes `set title` with that title. */
void rt_plot_title(rt_plot *p, const char *what, const rt_summary *s, const rt_summary *meas);

/* The same for a sweep table at PATH: scenario, engine and topology from its columns of those
 * names where it has them (from the first row), and the file's name. */
const char *rt_plot_sweep_title_text(char *buf, size_t size, const char *what, const rt_sweep *t,
                                     const char *path);

/* A result directory drawn as one side of a plot: predicted, or measured (--measured). */
typedef struct rt_plot_side {
    const char *label;
    rt_summary s;
    rt_ops ops;
    int loaded;
} rt_plot_side;
/* Loads DIR, whose ops.csv must have the flops and bytes columns. 0, or -1 with a message. */
int rt_plot_side_load(rt_plot_side *d, const char *dir, const char *label, const char *who,
                      FILE *err);
void rt_plot_side_free(rt_plot_side *d);
/* Embedding ops (phases emb.*), drawn apart from dense ones. */
int rt_plot_is_embedding(const rt_op_row *r);

/* A collective (from ops.csv's type, or its stream when the file has no type column). */
int rt_plot_is_collective(const rt_op_row *r);
/* A phase that communicates, by its name (emb.fwd.out_a2a, dense.allreduce, ...), for sweep
 * tables that carry no ops. */
int rt_plot_is_comm_phase(const char *phase);

/* The I-th colour of the palette the kinds share, as "#rrggbb". */
const char *rt_plot_color(int i);

/* Starts the next element of a plot command in GP: "plot " before the first (*N == 0), a
 * comma and a continued line before the others; counts them in *N. The caller ends the
 * command with a new line. */
void rt_plot_next(FILE *gp, int *n);

/* Ends a block of a data file that held COUNT points: an empty block would merge with the
 * next one and shift every later `index`, so it gets a placeholder (NaN, never drawn). */
void rt_plot_block_end(FILE *f, long count);

/* X with an SI prefix and UNIT ("989 TFLOP/s", "3.35 TB/s") in BUF. */
const char *rt_plot_si(double x, const char *unit, char *buf, size_t size);

/* The extent of positive values, for log axes. */
typedef struct rt_plot_range {
    double lo, hi; /* 0 while empty */
} rt_plot_range;
void rt_plot_range_add(rt_plot_range *r, double x);
/* Writes "set AXISrange [lo:hi]" for a log axis: the range widened by a factor PAD on both
 * sides and rounded out to powers of ten; [1:10] when empty. */
void rt_plot_range_log(FILE *gp, const char *axis, rt_plot_range r, double pad);

/* Seconds per display unit for times up to MAX_S, and the unit's name ("s", "ms", "us"). */
double rt_plot_time_unit(double max_s, const char **name);

#endif
