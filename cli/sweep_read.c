#include "sweep_read.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cli_args.h"

static int grow(rt_sweep *t, long *cap)
{
    if (t->n_rows < *cap) return 0;
    long n = *cap ? 2 * *cap : 64;
    size_t bytes = (size_t)n * (size_t)t->n_cols * sizeof *t->cell;
    if ((size_t)n > SIZE_MAX / ((size_t)t->n_cols * sizeof *t->cell)) return -1;
    rt_csv_field *c = realloc(t->cell, bytes);
    if (!c) return -1;
    t->cell = c;
    *cap = n;
    return 0;
}

static int read_rows(rt_sweep *t)
{
    rt_csv_record rec = {0};
    long cap = 0;
    int rc = 0;
    while (!rc && !rt_csv_at_end(&t->c)) {
        rc = rt_csv_record_read(&t->c, &rec) || rt_csv_check_width(&t->c, &rec, t->n_cols);
        if (!rc && grow(t, &cap)) {
            fprintf(t->c.err, "%s: out of memory\n", t->c.path);
            rc = -1;
        }
        if (!rc)
            memcpy(&t->cell[t->n_rows++ * t->n_cols], rec.f, (size_t)t->n_cols * sizeof *rec.f);
    }
    rt_csv_record_free(&rec);
    return rc ? -1 : 0;
}

int rt_sweep_load(rt_sweep *t, const char *path, FILE *err)
{
    memset(t, 0, sizeof *t);
    int rc = rt_csv_load(&t->c, path, err) || rt_csv_header(&t->c, &t->header) ? -1 : 0;
    t->n_cols = t->header.n;
    if (!rc) rc = read_rows(t);
    if (!rc && t->n_rows == 0) {
        fprintf(err, "%s: no rows after the header\n", path);
        rc = -1;
    }
    if (rc) rt_sweep_free(t);
    return rc;
}

void rt_sweep_free(rt_sweep *t)
{
    rt_csv_free(&t->c);
    rt_csv_record_free(&t->header);
    free(t->cell);
    memset(t, 0, sizeof *t);
}

int rt_sweep_col(const rt_sweep *t, const char *name)
{
    return rt_csv_column(&t->header, name);
}

int rt_sweep_col_any(const rt_sweep *t, const char *const *names)
{
    for (int i = 0; names[i]; i++)
        if (rt_sweep_col(t, names[i]) >= 0) return rt_sweep_col(t, names[i]);
    return -1;
}

const char *rt_sweep_text(const rt_sweep *t, long row, int col)
{
    return t->cell[row * t->n_cols + col].text;
}

int rt_sweep_line(const rt_sweep *t, long row)
{
    return t->cell[row * t->n_cols].line;
}

int rt_sweep_number(const rt_sweep *t, long row, int col, double *out)
{
    const char *s = rt_sweep_text(t, row, col);
    char *end;
    double x = *s ? strtod(s, &end) : NAN;
    if (!*s || *end || !isfinite(x)) return -1;
    *out = x;
    return 0;
}

static int by_one(const rt_sweep *t, const char *name, const char *who)
{
    int col = rt_sweep_col(t, name);
    if (col >= 0) return col;
    const char **names = malloc(((size_t)t->n_cols + 1) * sizeof *names);
    if (!names) return -1;
    for (int i = 0; i < t->n_cols; i++)
        names[i] = t->header.f[i].text;
    names[t->n_cols] = NULL;
    char what[600];
    snprintf(what, sizeof what, "column of %s", t->c.path);
    rt_cli_unknown(who, what, name, names);
    free(names);
    return -1;
}

int rt_sweep_by(const rt_sweep *t, const char *by, int *cols, int max, const char *who, FILE *err)
{
    int n = 0;
    for (const char *s = by; *s;) {
        const char *comma = strchr(s, ',');
        size_t len = comma ? (size_t)(comma - s) : strlen(s);
        char name[256];
        if (n == max || len == 0 || len >= sizeof name) {
            fprintf(err, "%s: --by '%s': expected 1 to %d column names separated by commas\n", who,
                    by, max);
            return -1;
        }
        memcpy(name, s, len);
        name[len] = '\0';
        if ((cols[n++] = by_one(t, name, who)) < 0) return -1;
        s += len + (comma != NULL);
    }
    return n;
}

const char *rt_sweep_phase(const char *name, char *buf, size_t size)
{
    size_t len = strlen(name);
    if (!strncmp(name, "phases.", 7) && len > 7) {
        snprintf(buf, size, "%s", name + 7);
        return buf;
    }
    if (!strncmp(name, "phase.", 6) && len > 8 && !strcmp(name + len - 2, "_s")) {
        snprintf(buf, size, "%.*s", (int)(len - 8), name + 6);
        return buf;
    }
    return NULL;
}

const char *rt_sweep_label(const rt_sweep *t, long row, const int *cols, int n, char *buf,
                           size_t size)
{
    buf[0] = '\0';
    for (int i = 0; i < n; i++) {
        size_t len = strlen(buf);
        snprintf(buf + len, size - len, "%s%s", i ? " / " : "", rt_sweep_text(t, row, cols[i]));
    }
    return buf;
}

int rt_sweep_differing(const rt_sweep *t, long a, long b, const int *cols, int n)
{
    for (int c = 0; c < t->n_cols; c++) {
        const char *name = t->header.f[c].text;
        int used = 0;
        for (int i = 0; i < n; i++)
            used |= cols[i] == c;
        char phase[128];
        if (used || !strchr(name, '.') || rt_sweep_phase(name, phase, sizeof phase)) continue;
        if (strcmp(rt_sweep_text(t, a, c), rt_sweep_text(t, b, c))) return c;
    }
    return -1;
}
