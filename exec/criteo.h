/* Reader of real click logs in the Criteo TSV layout (Kaggle Display Advertising Challenge,
 * Criteo 1TB), so that rectwin-exec can train on them instead of its synthetic batches.
 *
 * One sample per line: `label \t I1 .. In \t C1 .. Cm`, '\n' line ends ("\r\n" and a last line
 * without a line end are accepted). label is 0 or 1; I fields are decimal integers (counts, may
 * be negative or empty); C fields are categorical hashes of 1 to 8 hex digits (may be empty).
 * Anything else is an error that names FILE:LINE:COL; no input makes the reader crash.
 *
 * Opening indexes the file in one pass (the start of every RT_CRITEO_STRIDE-th line), so reads
 * at any sample index cost one seek and at most RT_CRITEO_STRIDE - 1 skipped lines, while the
 * index of a 200 M line file stays a few tens of MB. Not thread-safe: one reader per thread. */
#ifndef RT_CRITEO_H
#define RT_CRITEO_H

#include <stdint.h>
#include <stdio.h>

/* Lines per index entry. */
#define RT_CRITEO_STRIDE 64
/* Longest I field (sign and digits) and C field (hex digits) accepted. */
#define RT_CRITEO_INT_CHARS 20
#define RT_CRITEO_HEX_CHARS 8
/* Most integer or categorical features per line. */
#define RT_CRITEO_MAX_FEATURES 65536

typedef struct rt_criteo rt_criteo;

/* Opens PATH for a model with N_DENSE integer features and N_CAT categorical ones (DLRM on
 * Criteo: 13 and 26). Indexes the file and checks that its first and last lines parse, so a
 * layout that does not match the model fails here rather than mid-training. Returns NULL with
 * the reason on ERR (unreadable file, empty file, first or last line malformed, ...). */
rt_criteo *rt_criteo_open(const char *path, int n_dense, int n_cat, FILE *err);
void rt_criteo_close(rt_criteo *r);

/* Samples (lines) in the file; at least 1. */
int64_t rt_criteo_samples(const rt_criteo *r);

/* Reads the N samples that start at sample FIRST (0-based line number, any value >= 0: reads
 * wrap around at the end of the file, so any number of iterations can run; ranks read disjoint
 * slices of a global batch with first = iteration * global_batch + rank * batch). Fills
 * labels[n] (0 or 1), dense[n * n_dense] = log(1 + max(x, 0)) (missing x = 0) and
 * cat[n * n_cat] = the hash (missing = 0) modulo rows[c] (ROWS: the model's table sizes, so
 * that IDs index the tables; NULL keeps the raw hashes). Returns 0, or -1 with FILE:LINE:COL
 * and what is wrong on ERR (bad label, non-numeric field, wrong field count, hex too long, a
 * zero table size, an I/O error, ...); the outputs are then partly written. */
int rt_criteo_read(rt_criteo *r, int64_t first, int n, const uint64_t *rows, float *labels,
                   float *dense, uint64_t *cat, FILE *err);

#endif
