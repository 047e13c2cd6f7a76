#include "fuzz_input.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void rt_fuzz_split(const uint8_t *data, size_t size, rt_fuzz_segments *out)
{
    const char *p = (const char *)data, *end = p + size;
    size_t sep = strlen(RT_FUZZ_SEP);
    out->n = 0;
    while (out->n < RT_FUZZ_MAX_SEGMENTS - 1) {
        const char *hit = NULL;
        for (const char *q = p; q + sep <= end; q++) {
            if (!memcmp(q, RT_FUZZ_SEP, sep)) {
                hit = q;
                break;
            }
        }
        if (!hit) break;
        out->at[out->n] = p;
        out->len[out->n++] = (size_t)(hit - p);
        p = hit + sep;
    }
    out->at[out->n] = p;
    out->len[out->n++] = (size_t)(end - p);
}

/* libFuzzer's entry point has no context argument, so the scratch directory is the one piece
 * of process state the harness keeps. */
static char scratch[256];

static void remove_scratch(void)
{
    static const char *const names[] = {"s.yaml", "m.yaml", "t.yaml", "w.csv"};
    char path[512];
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        snprintf(path, sizeof path, "%s/%s", scratch, names[i]);
        unlink(path);
    }
    rmdir(scratch);
}

const char *rt_fuzz_dir(void)
{
    if (scratch[0]) return scratch;
    const char *base = getenv("TMPDIR");
    snprintf(scratch, sizeof scratch, "%s/rectwin-fuzz-XXXXXX", base && *base ? base : "/tmp");
    if (!mkdtemp(scratch)) {
        perror("rt_fuzz_dir: mkdtemp");
        abort();
    }
    atexit(remove_scratch);
    return scratch;
}

void rt_fuzz_write(const char *name, const char *data, size_t len, char *path, size_t path_size)
{
    snprintf(path, path_size, "%s/%s", rt_fuzz_dir(), name);
    FILE *f = fopen(path, "wb");
    if (!f || (len && fwrite(data, 1, len, f) != len) || fclose(f)) {
        perror(path);
        abort();
    }
}

void *rt_fuzz_devnull(void)
{
    static FILE *devnull;
    if (getenv("RT_FUZZ_VERBOSE")) return stderr; /* to triage why inputs are refused */
    if (!devnull && !(devnull = fopen("/dev/null", "w"))) abort();
    return devnull;
}
