/* Shared by the fuzz targets: splitting one fuzz input into files and --set lines, and the
 * scratch directory the scenario loader reads them from. */
#ifndef RT_FUZZ_INPUT_H
#define RT_FUZZ_INPUT_H

#include <stddef.h>
#include <stdint.h>

/* Segments of an input are separated by this line; a YAML comment, so seeds stay readable. */
#define RT_FUZZ_SEP "\n#@@\n"

enum { RT_FUZZ_MAX_SEGMENTS = 16 };

typedef struct rt_fuzz_segments {
    int n;
    const char *at[RT_FUZZ_MAX_SEGMENTS];
    size_t len[RT_FUZZ_MAX_SEGMENTS];
} rt_fuzz_segments;

/* Splits DATA at RT_FUZZ_SEP into at most RT_FUZZ_MAX_SEGMENTS segments (the last keeps the
 * rest). */
void rt_fuzz_split(const uint8_t *data, size_t size, rt_fuzz_segments *out);

/* The process's scratch directory (created on first use, removed at exit). */
const char *rt_fuzz_dir(void);

/* Writes LEN bytes to rt_fuzz_dir()/NAME and returns the full path in PATH. Aborts on I/O
 * errors: they are the harness's, not the code under test's. */
void rt_fuzz_write(const char *name, const char *data, size_t len, char *path, size_t path_size);

/* A stream that swallows the messages of rejected inputs (stderr with RT_FUZZ_VERBOSE set). */
void *rt_fuzz_devnull(void);

#endif
