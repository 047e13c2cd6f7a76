/* Strict YAML configuration access over libfyaml.
 *
 * Every getter validates type, range and unit, and on error prints
 *   file:line:col: key 'a.b.c': what is wrong; allowed: ...
 * to the error stream of the rt_cfg and returns -1. Nodes created by --set carry the
 * location "--set:N:col" of the N-th override instead of a file position. */
#ifndef RT_CFG_H
#define RT_CFG_H

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>

#include "units.h"

struct fy_document;
struct fy_node;

typedef struct rt_cfg rt_cfg;

/* Loads FILE. Returns NULL after printing file:line:col on a YAML syntax error. ERR is where
 * messages go (stderr in the CLI, a memstream in tests). */
rt_cfg *rt_cfg_load(const char *path, FILE *err);
void rt_cfg_free(rt_cfg *cfg);

struct fy_node *rt_cfg_root(rt_cfg *cfg);
const char *rt_cfg_path(const rt_cfg *cfg);
FILE *rt_cfg_err(rt_cfg *cfg);

/* Applies one "path.to.key=value" override to this document (creating maps on the way).
 * INDEX numbers the override for error locations. The value is parsed as a YAML flow scalar
 * or flow collection. */
int rt_cfg_set(rt_cfg *cfg, const char *assignment, int index);
/* Rejects YAML text (N bytes) that the shipped libfyaml cannot parse without hanging: a
 * directive line ('%') with bytes other than printable ASCII. WHERE names the input in the
 * message printed on ERR: WHERE:LINE:COL, or for a one-line --set value whose first byte is
 * column COL0 of the assignment, WHERE:COL. Returns 0 or -1. */
int rt_cfg_guard(const char *text, size_t n, const char *where, int col0, FILE *err);

/* Prints "loc: key 'PATH.KEY': message" where loc is the node's location. */
void rt_cfg_error(rt_cfg *cfg, struct fy_node *at, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* The dotted path of NODE from the root ("topology.scale_out.nic_bw"), into BUF. */
const char *rt_cfg_node_path(struct fy_node *node, char *buf, size_t size);

/* Rejects keys of MAP that are not in ALLOWED (NULL-terminated); lists the allowed ones.
 * Returns -1 on the first unknown key, -1 also when MAP is not a mapping. */
int rt_cfg_check_keys(rt_cfg *cfg, struct fy_node *map, const char *const *allowed);

/* Getters. KEY is looked up in mapping MAP. When the key is absent: if REQUIRED, it is an
 * error; otherwise *OUT is left untouched and the getter returns 1. Returns 0 when set. */
int rt_cfg_get_int(rt_cfg *cfg, struct fy_node *map, const char *key, int required, int64_t min,
                   int64_t max, int64_t *out);
int rt_cfg_get_double(rt_cfg *cfg, struct fy_node *map, const char *key, int required, double min,
                      double max, double *out);
int rt_cfg_get_unit(rt_cfg *cfg, struct fy_node *map, const char *key, int required,
                    rt_unit_kind kind, double min, double max, double *out);
int rt_cfg_get_bool(rt_cfg *cfg, struct fy_node *map, const char *key, int required, int *out);
/* *OUT is a malloc'd copy owned by the caller. */
int rt_cfg_get_str(rt_cfg *cfg, struct fy_node *map, const char *key, int required, char **out);
/* NAMES is NULL-terminated; *OUT is the index of the matching name. */
int rt_cfg_get_enum(rt_cfg *cfg, struct fy_node *map, const char *key, int required,
                    const char *const *names, int *out);
/* Integer list, every element in [min, max]; *OUT malloc'd, *N its length. */
int rt_cfg_get_int_list(rt_cfg *cfg, struct fy_node *map, const char *key, int required,
                        int64_t min, int64_t max, int64_t **out, int *n);
/* Double list, every element in [min, max]. */
int rt_cfg_get_double_list(rt_cfg *cfg, struct fy_node *map, const char *key, int required,
                           double min, double max, double **out, int *n);

/* Sub-nodes: NULL when absent (an error only if REQUIRED, then *ok is set to 0). The node must
 * be a mapping (resp. sequence) or it is an error. */
struct fy_node *rt_cfg_get_map(rt_cfg *cfg, struct fy_node *map, const char *key, int required,
                               int *ok);
struct fy_node *rt_cfg_get_seq(rt_cfg *cfg, struct fy_node *map, const char *key, int required,
                               int *ok);

/* Same getters on a scalar node itself (sequence items). */
int rt_cfg_node_int(rt_cfg *cfg, struct fy_node *node, int64_t min, int64_t max, int64_t *out);
int rt_cfg_node_double(rt_cfg *cfg, struct fy_node *node, double min, double max, double *out);

#endif
