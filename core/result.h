/* Timed op graph (predicted or measured) and the metrics derived from it. Written as
 * summary.json, ops.csv and trace.json (DESIGN.md section 6) by core/result_write.c. */
#ifndef RT_RESULT_H
#define RT_RESULT_H

#include "graph.h"
#include "scenario.h"

typedef struct rt_result {
    const rt_graph *graph;
    /* [op * n_reps + rep], seconds from iteration start. A collective starts when the rank
     * reaches it, so an early member's wait for its group is part of its duration: what
     * rectwin-exec's marks and a profiler measure. */
    double *start;
    double *end;
    rt_coll_algo *algo; /* [op * n_reps + rep]: algorithm a collective ran; AUTO for kernels */
    char engine[32];
    char *settings_json; /* engine settings as a JSON object text (owned), may be NULL */
    /* Files an engine writes beside the three every engine writes (the simgrid engine's
     * links.csv): rt_result_add_file; rt_result_write writes them. */
    struct rt_result_file *files;
    int n_files;
    /* Measured results only (NULL otherwise): per [op * n_reps + rep], the spread (max - min)
     * of the op's duration over the timed iterations; ops.csv gets a spread_s column. */
    double *spread;

    /* Derived by rt_result_finish(). */
    double iteration_time_s;
    double samples_per_s;
    double mfu;
    double mbu;            /* memory-bound ops: min bytes / (time x HBM bw) */
    double mbu_sparse;     /* same, emb.* phases only */
    double comm_time_s;    /* sum of collective durations (waits included), largest rank */
    double exposed_comm_s; /* time in a collective (waits for the group included) and no
                            * compute, on the rank where it is longest */
    double peak_hbm_bytes;
    int n_phases;
    double *phase_s; /* per phase: summed op durations, slowest rank */
} rt_result;

rt_result *rt_result_new(const rt_graph *g, const char *engine);
void rt_result_free(rt_result *r);

/* An engine's own output file: NAME (a plain file name) with TEXT. */
typedef struct rt_result_file {
    char *name;
    char *text;
} rt_result_file;

/* Adds (or replaces) file NAME; R takes TEXT (malloc'ed) in every case. Returns 0, or -1 out
 * of memory. */
int rt_result_add_file(rt_result *r, const char *name, char *text);

/* Computes the derived metrics from start/end and the scenario. */
void rt_result_finish(rt_result *r, const rt_scenario *s);

/* Writes DIR/summary.json, DIR/ops.csv, DIR/trace.json and the engine's own files (creating
 * DIR), each through a temporary file renamed into place. Returns 0 or -1 with a message on ERR. */
int rt_result_write(const rt_result *r, const rt_scenario *s, const char *dir, FILE *err);

/* One-screen human summary. */
void rt_result_print(const rt_result *r, const rt_scenario *s, FILE *out);

#endif
