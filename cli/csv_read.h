/* A strict CSV reader (RFC 4180: quoted fields, "" for a quote, line breaks inside quotes)
 * for ops.csv and sweep tables. The whole file is read into one buffer and fields are decoded
 * in place; every error is reported as FILE:LINE:COL. */
#ifndef RT_CSV_READ_H
#define RT_CSV_READ_H

#include <stddef.h>
#include <stdio.h>

typedef struct rt_csv {
    const char *path;
    FILE *err;
    char *buf; /* the whole file; decoded fields are NUL-terminated inside it */
    size_t len, pos, line_start;
    int line;
} rt_csv;

typedef struct rt_csv_field {
    char *text;
    int line; /* a field after a quoted line break is on a later line than its record */
    size_t col;
} rt_csv_field;

typedef struct rt_csv_record {
    int n, cap;
    rt_csv_field *f;
    int line;
} rt_csv_record;

/* Reads PATH (a regular file). 0, or -1 with a message on ERR. */
int rt_csv_load(rt_csv *c, const char *path, FILE *err);
/* Frees the buffer, unless it was taken (set c->buf to NULL to keep it). */
void rt_csv_free(rt_csv *c);
void rt_csv_record_free(rt_csv_record *r);

/* One record (one line, or more when a quoted field holds line breaks) into R. 0 or -1. */
int rt_csv_record_read(rt_csv *c, rt_csv_record *r);
int rt_csv_at_end(const rt_csv *c);

/* Reads the header record into R and checks that no name appears twice. 0 or -1. */
int rt_csv_header(rt_csv *c, rt_csv_record *r);
/* Index of the header field NAME, or -1. */
int rt_csv_column(const rt_csv_record *header, const char *name);

/* Checks that a data record R has as many fields as the header (N) and is not an empty
 * line. 0, or -1 with a message. */
int rt_csv_check_width(const rt_csv *c, const rt_csv_record *r, int n);

/* Prints "PATH:LINE:COL: column 'NAME': WHAT, got 'TEXT'". */
void rt_csv_value_error(const rt_csv *c, const rt_csv_field *f, const char *name, const char *what);

#endif
