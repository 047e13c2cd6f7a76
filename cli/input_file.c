#include "input_file.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* Regular files only: libfyaml reads a directory as an empty document, which would be
 * reported as malformed JSON instead of a wrong path. */
FILE *rt_input_open(const char *path, FILE *err)
{
    struct stat st;
    if (stat(path, &st) != 0) {
        fprintf(err, "%s: cannot open: %s\n", path, strerror(errno));
        return NULL;
    }
    if (!S_ISREG(st.st_mode)) {
        fprintf(err, "%s: not a regular file\n", path);
        return NULL;
    }
    FILE *f = fopen(path, "r");
    if (!f) fprintf(err, "%s: cannot open: %s\n", path, strerror(errno));
    return f;
}

char *rt_input_slurp(FILE *f, size_t *len)
{
    size_t cap = 1 << 16, n = 0;
    char *buf = malloc(cap);
    while (buf) {
        n += fread(buf + n, 1, cap - n - 1, f);
        if (ferror(f)) break;
        if (n + 1 < cap) {
            buf[n] = '\0';
            *len = n;
            return buf;
        }
        char *bigger = cap <= SIZE_MAX / 2 ? realloc(buf, cap * 2) : NULL;
        if (!bigger) break;
        buf = bigger;
        cap *= 2;
    }
    free(buf);
    return NULL;
}
