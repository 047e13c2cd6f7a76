/* A result directory's manifest: written last, after every result file is in place, with each
 * file's size and FNV-1a hash, so a reader can tell a complete set of one run from a set that
 * an interrupted run left half replaced (new summary.json beside an old ops.csv). */
#ifndef RT_MANIFEST_H
#define RT_MANIFEST_H

#include <stdio.h>

/* Removes DIR/manifest.json: the set is about to change. 0, or -1 (message on ERR). */
int rt_manifest_retract(const char *dir, FILE *err);
/* Writes DIR/manifest.json (atomically) for the N files NAMES of DIR. 0 or -1. */
int rt_manifest_write(const char *dir, const char *const *names, int n, FILE *err);
/* Checks DIR's files against DIR/manifest.json: 0 when they match, -1 (with what is wrong on
 * ERR) when they do not, 1 (with a note) when DIR has no manifest. */
int rt_manifest_check(const char *dir, FILE *err);

#endif
