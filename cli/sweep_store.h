/* Where a sweep's results live, designed for many writers on a shared filesystem (worker
 * processes, and mpirun ranks on several machines) and for being killed at any moment:
 *
 *   DIR/sweep.id            the hash of the expanded points; created once (link(2), which
 *                           fails on an existing name, so two ranks cannot both create it) and
 *                           checked by every later run: a changed sweep is refused, not mixed
 *   DIR/points/NNNNNNN      one small file per finished point (ok or error), written to a
 *                           temporary name and renamed, so a point file is whole or absent;
 *                           it names the hash and ends with "end", and anything else is
 *                           recomputed. Finished points are never written again: a rerun
 *                           skips them. Points are independent, so no two writers share a file
 *   DIR/sweep.csv           assembled from the point files only when every point has one,
 *                           through a temporary file and a rename. Any writer that finds the
 *                           set complete may assemble it: the content depends only on the
 *                           point files, so concurrent assemblies write the same bytes
 *
 * Temporary names are "<file>.tmp.<host>.<pid>": unique across machines, and a run removes
 * only the temporaries of its own host whose process is gone. */
#ifndef RT_SWEEP_STORE_H
#define RT_SWEEP_STORE_H

#include <stdint.h>
#include <stdio.h>

#include "sweep_spec.h"

/* One point's outcome: named fields (figures as text) or an error message. */
typedef struct rt_sweep_field {
    char *name;
    char *value;
} rt_sweep_field;

typedef struct rt_sweep_record {
    long point;
    int ok;
    char *error; /* one line, when !ok */
    int n_fields, cap_fields;
    rt_sweep_field *fields;
} rt_sweep_record;

void rt_sweep_record_init(rt_sweep_record *r, long point);
void rt_sweep_record_free(rt_sweep_record *r);
/* Appends a field (NAME and VALUE without tabs or line breaks; they are replaced). 0 or -1. */
int rt_sweep_record_text(rt_sweep_record *r, const char *name, const char *value);
/* A number in the shortest form that reads back exactly; NaN is written as "nan". */
int rt_sweep_record_number(rt_sweep_record *r, const char *name, double value);
/* Marks the point failed with MESSAGE (lines joined with " | "). 0 or -1. */
int rt_sweep_record_fail(rt_sweep_record *r, const char *message);

typedef struct rt_sweep_store rt_sweep_store;

/* Opens DIR (creating it) for the sweep of N_POINTS points with HASH; ABOUT (a few lines) goes
 * into a new sweep.id for readers. Refuses a DIR whose sweep.id has another hash or count.
 * Removes this host's temporaries of processes that no longer exist. NULL with a message. */
rt_sweep_store *rt_sweep_store_open(const char *dir, uint64_t hash, long n_points,
                                    const char *about, FILE *err);
void rt_sweep_store_free(rt_sweep_store *st);

/* Reads POINT's record into R (initialized here). 0, or -1 when it has none. */
int rt_sweep_store_get(const rt_sweep_store *st, long point, rt_sweep_record *r);
/* Writes R as its point's file, atomically. 0, or -1 with a message on ERR. */
int rt_sweep_store_put(const rt_sweep_store *st, const rt_sweep_record *r, FILE *err);

/* ",FIELD" as CSV: quoted only when it holds a separator, a quote or a line break. */
void rt_sweep_csv_field(FILE *f, const char *s);

/* The CSV's path (DIR/sweep.csv). */
const char *rt_sweep_store_csv_path(const rt_sweep_store *st);
/* When every point has a record: writes DIR/sweep.csv atomically with the columns point,
 * status, the swept keys of SPEC, the fields FIXED (NULL-terminated) in that order, any other
 * field in order of first appearance, and error; returns 0. Returns the number of points
 * without a record (writing nothing) when some are missing, -1 with a message on failure.
 * *FAILED: how many of the recorded points failed. */
long rt_sweep_store_write_csv(const rt_sweep_store *st, const rt_sweep_spec *spec,
                              const char *const *fixed, long *failed, FILE *err);

#endif
