/* Reading JSON files written by rectwin (summary.json) with libfyaml, with errors located as
 * FILE:LINE:COL. */
#ifndef RT_JSON_READ_H
#define RT_JSON_READ_H

#include <libfyaml.h>
#include <stddef.h>
#include <stdio.h>

/* A parsed JSON file. Documents loaded from a parser belong to it, so the three live and die
 * together. */
typedef struct rt_jread {
    struct fy_diag *diag;
    struct fy_parser *parser;
    struct fy_document *doc;
} rt_jread;

/* Parses PATH, which must hold exactly one JSON value. 0, or -1 with a message on ERR. */
int rt_jread_open(rt_jread *j, const char *path, FILE *err);
void rt_jread_close(rt_jread *j);

/* Prints "PATH:LINE:COL: " at NODE's first token, or "PATH: " when it has none. */
void rt_jread_location(const char *path, struct fy_node *node, FILE *err);

/* Scalar text of NODE copied into BUF; NULL when NODE is not a scalar or does not fit. */
const char *rt_jread_scalar(struct fy_node *node, char *buf, size_t size);

/* A JSON number into *OUT, or null (which rt_json writes for a non-finite value) as NAN.
 * Quoted numbers are strings: -1. */
int rt_jread_number(struct fy_node *node, double *out);

/* Where to point at a key's value: the value, or the key when the value has no token of its
 * own (an empty object). */
struct fy_node *rt_jread_pair_location(struct fy_node_pair *p);

#endif
