/* A sweep file: a base scenario, an engine, and the points to run it at.
 *
 *   name: nic-nodes                        # optional: the file name without .yaml
 *   scenario: ../dlrm-criteo.yaml          # relative to the sweep file
 *   engine: analytic                       # optional: the default engine
 *   out: results/sweeps/nic-nodes          # optional (this default), relative to the cwd
 *   set: {workload.mode: statistical}      # optional: overrides of every point's base
 *   grid:                                  # cartesian product, the first key slowest
 *     topology.nodes: [8, 64]
 *     topology.scale_out.nic_bw: [400Gbps, 800Gbps]
 *   zip:                                   # optional: lists of equal length that vary
 *     - {plan.name: [flat, hsp], plan.sharding: [table_wise, row_wise]}   # together
 *
 * A point applies the base overrides, then one value of every axis (a grid key or a zip
 * group), as --set assignments to the scenario. A value ~ leaves its key as the base has it
 * (for keys that exist only with some values of another, like plan.hosts_per_tower). */
#ifndef RT_SWEEP_SPEC_H
#define RT_SWEEP_SPEC_H

#include <stdint.h>
#include <stdio.h>

/* One dimension of the product: a grid key (one key) or a zip group (several keys). */
typedef struct rt_sweep_axis {
    int n_keys;
    char **keys;   /* dotted paths */
    char **where;  /* [key]: "file:line:col" of the key in the sweep file, for messages */
    int n_values;  /* of every key */
    char **assign; /* [key * n_values + v]: "path=value" as --set takes it */
    char **shown;  /* [key * n_values + v]: the value as the CSV shows it */
} rt_sweep_axis;

typedef struct rt_sweep_spec {
    char *path;          /* the sweep file */
    char *name;          /* plain file name: the default output directory's last part */
    char *scenario;      /* as written in the file (part of the hash) */
    char *scenario_path; /* resolved against the sweep file's directory */
    char *engine;        /* NULL: the default engine */
    char *out;           /* NULL: results/sweeps/<name> */
    int n_base;
    char **base; /* "path=value" of the file's set section */
    int n_axes;
    rt_sweep_axis *axes;
    long n_points;
} rt_sweep_spec;

enum { RT_SWEEP_MAX_POINTS = 1000000, RT_SWEEP_MAX_KEYS = 64 };

/* Loads and validates PATH. NULL after "file:line:col: what is wrong; allowed: ..." on ERR. */
rt_sweep_spec *rt_sweep_spec_load(const char *path, FILE *err);
void rt_sweep_spec_free(rt_sweep_spec *s);

/* The n_keys of every axis, in axis order: the swept columns of the CSV. */
int rt_sweep_n_keys(const rt_sweep_spec *s);

/* The value index of every axis at POINT (mixed radix, the last axis fastest), into VALUE. */
void rt_sweep_point_values(const rt_sweep_spec *s, long point, int *value);

/* The assignments of the point whose axes take the values VALUE, into OUT (at most
 * rt_sweep_n_keys entries; pointers into S): one per key, except the keys whose value there is
 * ~ (left as the base has them). Returns how many. */
int rt_sweep_assign(const rt_sweep_spec *s, const int *value, const char **out);
/* The same for POINT. */
int rt_sweep_point_assign(const rt_sweep_spec *s, long point, const char **out);
/* POINT's values as the CSV shows them (~: empty), into OUT (rt_sweep_n_keys entries). */
void rt_sweep_point_shown(const rt_sweep_spec *s, long point, const char **out);
/* The swept paths, in column order, into OUT (rt_sweep_n_keys entries). */
void rt_sweep_keys(const rt_sweep_spec *s, const char **out);

/* FNV-1a over what defines the points: the scenario as written, ENGINE, the base overrides,
 * EXTRA (command-line --set) and every point's assignments. Not the file's layout or
 * comments, and not the contents of the files the scenario names. */
uint64_t rt_sweep_hash(const rt_sweep_spec *s, const char *engine, const char *const *extra,
                       int n_extra);

/* Refuses an EXTRA assignment whose path the sweep varies (it would be overridden at every
 * point). 0, or -1 with "--set:N: ..." on ERR. */
int rt_sweep_check_extra(const rt_sweep_spec *s, const char *const *extra, int n_extra, FILE *err);

#endif
