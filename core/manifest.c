#include "manifest.h"

#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "atomic_file.h"

enum { RT_MANIFEST_MAX = 16 };

/* Size and FNV-1a 64 of a file; -1 when it cannot be read. */
static int digest(const char *path, long long *bytes, uint64_t *hash)
{
    FILE *f = fopen(path, "rb");
    if (!f) return -1;
    uint64_t h = 0xcbf29ce484222325ULL;
    long long n = 0;
    unsigned char buf[1 << 16];
    size_t got;
    while ((got = fread(buf, 1, sizeof buf, f)) > 0) {
        for (size_t i = 0; i < got; i++)
            h = (h ^ buf[i]) * 0x100000001b3ULL;
        n += (long long)got;
    }
    int bad = ferror(f);
    fclose(f);
    if (bad) return -1;
    *bytes = n, *hash = h;
    return 0;
}

int rt_manifest_retract(const char *dir, FILE *err)
{
    char *path = rt_path_join(dir, "manifest.json");
    int rc = path && (remove(path) == 0 || errno == ENOENT) ? 0 : -1;
    if (rc) fprintf(err, "cannot remove '%s/manifest.json': %s\n", dir, strerror(errno));
    free(path);
    return rc;
}

int rt_manifest_write(const char *dir, const char *const *names, int n, FILE *err)
{
    char *path = rt_path_join(dir, "manifest.json");
    rt_atomic_file a = {0};
    if (!path || rt_atomic_open(&a, path) < 0) {
        fprintf(err, "cannot write '%s/manifest.json': %s\n", dir, strerror(errno));
        free(path);
        return -1;
    }
    /* One file per line, so the reader needs no JSON parser. */
    fputs("{\"files\": {\n", a.f);
    int rc = 0;
    for (int i = 0; i < n && rc == 0; i++) {
        char *p = rt_path_join(dir, names[i]);
        long long bytes;
        uint64_t h;
        rc = p && digest(p, &bytes, &h) == 0 ? 0 : -1;
        if (rc == 0)
            fprintf(a.f, "  \"%s\": {\"bytes\": %lld, \"fnv1a64\": \"%016" PRIx64 "\"}%s\n",
                    names[i], bytes, h, i + 1 < n ? "," : "");
        else
            fprintf(err, "cannot read back '%s/%s'\n", dir, names[i]);
        free(p);
    }
    fputs("}}\n", a.f);
    if (rc == 0 && rt_atomic_commit(&a) < 0) {
        fprintf(err, "cannot write '%s/manifest.json' (disk full?)\n", dir);
        rc = -1;
    }
    if (rc) rt_atomic_abort(&a);
    free(path);
    return rc;
}

static int check_line(const char *dir, const char *line, FILE *err)
{
    char name[128];
    long long bytes, got_bytes;
    char hex[17];
    if (sscanf(line, " \"%127[^\"]\": {\"bytes\": %lld, \"fnv1a64\": \"%16[0-9a-f]\"}", name,
               &bytes, hex) != 3)
        return 1; /* not a file line */
    char *p = rt_path_join(dir, name);
    uint64_t h;
    int rc = p && digest(p, &got_bytes, &h) == 0 ? 0 : -1;
    char want[17];
    if (rc == 0) snprintf(want, sizeof want, "%016" PRIx64, h);
    if (rc || got_bytes != bytes || strcmp(want, hex)) {
        fprintf(err,
                "%s/%s: not the file its manifest.json names (another run's, or half "
                "written): rerun to get a consistent result set\n",
                dir, name);
        rc = -1;
    }
    free(p);
    return rc;
}

int rt_manifest_check(const char *dir, FILE *err)
{
    char *path = rt_path_join(dir, "manifest.json");
    FILE *f = path ? fopen(path, "r") : NULL;
    if (!f) { /* hand-assembled, older, or interrupted: say so, let the reader decide */
        fprintf(err,
                "note: %s has no manifest.json: it cannot be told from a set an interrupted run "
                "left mixed\n",
                dir);
        free(path);
        return 1;
    }
    char line[512];
    int rc = 0, files = 0;
    while (rc == 0 && fgets(line, sizeof line, f)) {
        int r = check_line(dir, line, err);
        if (r < 0) rc = -1;
        files += r == 0;
    }
    fclose(f);
    free(path);
    if (rc == 0 && files == 0) {
        fprintf(err, "%s/manifest.json: lists no file\n", dir);
        rc = -1;
    }
    return rc;
}
