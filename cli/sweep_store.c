#include "sweep_store.h"

#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "atomic_file.h"
#include "cleanup.h"

static const char MAGIC[] = "rectwin-sweep-point 1";
static const char ID_MAGIC[] = "rectwin-sweep 1";

struct rt_sweep_store {
    char *dir;
    char *points_dir;
    char *csv;
    char host[128];
    uint64_t hash;
    long n_points;
};

/* ---- records ---------------------------------------------------------------------------- */

void rt_sweep_record_init(rt_sweep_record *r, long point)
{
    memset(r, 0, sizeof *r);
    r->point = point;
    r->ok = 1;
}

void rt_sweep_record_free(rt_sweep_record *r)
{
    for (int i = 0; i < r->n_fields; i++) {
        free(r->fields[i].name);
        free(r->fields[i].value);
    }
    free(r->fields);
    free(r->error);
    rt_sweep_record_init(r, r->point);
}

/* A copy of TEXT on one line: the point file is line- and tab-separated. */
static char *one_line(const char *text)
{
    size_t n = strlen(text);
    while (n && (text[n - 1] == '\n' || text[n - 1] == '\r'))
        n--;
    char *out = malloc(3 * n + 1), *o = out;
    if (!out) return NULL;
    for (size_t i = 0; i < n; i++) {
        if (text[i] == '\n') {
            memcpy(o, " | ", 3);
            o += 3;
        } else {
            *o++ = text[i] == '\t' || text[i] == '\r' ? ' ' : text[i];
        }
    }
    *o = '\0';
    return out;
}

int rt_sweep_record_text(rt_sweep_record *r, const char *name, const char *value)
{
    if (r->n_fields == r->cap_fields) {
        int cap = r->cap_fields ? 2 * r->cap_fields : 32;
        rt_sweep_field *f = realloc(r->fields, sizeof *f * (size_t)cap);
        if (!f) return -1;
        r->fields = f;
        r->cap_fields = cap;
    }
    rt_sweep_field *f = &r->fields[r->n_fields];
    f->name = one_line(name);
    f->value = one_line(value ? value : "");
    if (!f->name || !f->value) {
        free(f->name);
        free(f->value);
        return -1;
    }
    r->n_fields++;
    return 0;
}

int rt_sweep_record_number(rt_sweep_record *r, const char *name, double value)
{
    char buf[32];
    if (isnan(value)) {
        snprintf(buf, sizeof buf, "nan");
    } else {
        snprintf(buf, sizeof buf, "%.15g", value);
        if (strtod(buf, NULL) != value) snprintf(buf, sizeof buf, "%.17g", value);
    }
    return rt_sweep_record_text(r, name, buf);
}

int rt_sweep_record_fail(rt_sweep_record *r, const char *message)
{
    free(r->error);
    r->ok = 0;
    r->error = one_line(message && *message ? message : "failed (no message)");
    return r->error ? 0 : -1;
}

/* ---- temporary files ------------------------------------------------------------------ */

typedef struct tmp_file {
    FILE *f;
    char *tmp;
    int slot; /* in core/cleanup.h: a signal removes the temporary */
} tmp_file;

static int tmp_open(const rt_sweep_store *st, const char *path, tmp_file *t)
{
    size_t n = strlen(path) + strlen(st->host) + 40;
    t->f = NULL;
    t->slot = -1;
    if (!(t->tmp = malloc(n))) return -1;
    snprintf(t->tmp, n, "%s.tmp.%s.%ld", path, st->host, (long)getpid());
    t->slot = rt_cleanup_track(t->tmp);
    if ((t->f = fopen(t->tmp, "w"))) return 0;
    int e = errno;
    rt_cleanup_forget(t->slot);
    free(t->tmp);
    errno = e;
    return -1;
}

static void tmp_drop(tmp_file *t)
{
    if (t->f) fclose(t->f);
    remove(t->tmp);
    rt_cleanup_forget(t->slot);
    free(t->tmp);
}

/* Closes T and gives it the name PATH: by rename, or with EXCLUSIVE by link, which fails
 * (errno EEXIST) when PATH exists. 0 or -1 (errno set); the temporary is gone either way. */
static int tmp_commit(tmp_file *t, const char *path, int exclusive)
{
    int bad = ferror(t->f) | fflush(t->f);
    bad |= fclose(t->f);
    t->f = NULL;
    int rc = bad ? -1 : exclusive ? link(t->tmp, path) : rename(t->tmp, path);
    int e = bad ? EIO : errno;
    tmp_drop(t);
    errno = e;
    return rc;
}

/* Removes DIR's temporaries of this host whose process no longer exists. */
static void remove_stale(const rt_sweep_store *st, const char *dir)
{
    DIR *d = opendir(dir);
    if (!d) return;
    size_t hl = strlen(st->host);
    struct dirent *e;
    while ((e = readdir(d))) {
        const char *t = strstr(e->d_name, ".tmp.");
        if (!t || strncmp(t + 5, st->host, hl) || t[5 + hl] != '.') continue;
        char *end;
        long pid = strtol(t + 6 + hl, &end, 10);
        if (*end || pid <= 0 || kill((pid_t)pid, 0) == 0 || errno != ESRCH) continue;
        char *path = rt_path_join(dir, e->d_name);
        if (path) unlink(path);
        free(path);
    }
    closedir(d);
}

/* ---- sweep.id ----------------------------------------------------------------------------- */

static int read_id(const char *path, uint64_t *hash, long *n_points)
{
    FILE *f = fopen(path, "r");
    if (!f) return -1;
    char magic[64] = "";
    int ok = fgets(magic, sizeof magic, f) && !strncmp(magic, ID_MAGIC, strlen(ID_MAGIC)) &&
             fscanf(f, "hash %" SCNx64 " points %ld", hash, n_points) == 2;
    fclose(f);
    return ok ? 0 : -1;
}

/* Creates DIR/sweep.id unless it exists, then checks that it describes this sweep. */
static int claim_id(const rt_sweep_store *st, const char *about, FILE *err)
{
    char *path = rt_path_join(st->dir, "sweep.id");
    tmp_file t;
    int rc = -1;
    if (!path || tmp_open(st, path, &t) < 0) {
        fprintf(err, "rectwin sweep: cannot write in '%s': %s\n", st->dir, strerror(errno));
        free(path);
        return -1;
    }
    fprintf(t.f, "%s\nhash %016" PRIx64 "\npoints %ld\n%s", ID_MAGIC, st->hash, st->n_points,
            about);
    if (tmp_commit(&t, path, 1) < 0 && errno != EEXIST) {
        fprintf(err, "rectwin sweep: cannot write '%s': %s\n", path, strerror(errno));
    } else {
        uint64_t hash = 0;
        long n = 0;
        if (read_id(path, &hash, &n) < 0)
            fprintf(err, "rectwin sweep: '%s' is not a sweep id file; remove it or use --out\n",
                    path);
        else if (hash != st->hash || n != st->n_points)
            fprintf(err,
                    "rectwin sweep: '%s' holds another sweep (%ld points, hash %016" PRIx64
                    "; this one: %ld points, hash %016" PRIx64
                    "): the scenario, engine, set, grid, zip or --set changed. Use --out DIR "
                    "for a new directory, or remove '%s' to start over\n",
                    st->dir, n, hash, st->n_points, st->hash, st->dir);
        else
            rc = 0;
    }
    free(path);
    return rc;
}

/* ---- opening ------------------------------------------------------------------------------ */

static void host_name(char *buf, size_t size)
{
    if (gethostname(buf, size) != 0) snprintf(buf, size, "host");
    buf[size - 1] = '\0';
    for (char *p = buf; *p; p++) /* a file-name part, found again by remove_stale */
        if (*p == '/' || *p == '.' || *p <= ' ') *p = '_';
    if (!buf[0]) snprintf(buf, size, "host");
}

rt_sweep_store *rt_sweep_store_open(const char *dir, uint64_t hash, long n_points,
                                    const char *about, FILE *err)
{
    rt_sweep_store *st = calloc(1, sizeof *st);
    if (!st) return NULL;
    st->hash = hash;
    st->n_points = n_points;
    host_name(st->host, sizeof st->host);
    st->dir = strdup(dir);
    st->points_dir = rt_path_join(dir, "points");
    st->csv = rt_path_join(dir, "sweep.csv");
    if (!st->dir || !st->points_dir || !st->csv) {
        fprintf(err, "rectwin sweep: out of memory\n");
        rt_sweep_store_free(st);
        return NULL;
    }
    if (rt_mkdir_p(st->points_dir) < 0) {
        fprintf(err, "rectwin sweep: cannot create '%s': %s\n", st->points_dir, strerror(errno));
        rt_sweep_store_free(st);
        return NULL;
    }
    remove_stale(st, st->dir);
    remove_stale(st, st->points_dir);
    if (claim_id(st, about, err) < 0) {
        rt_sweep_store_free(st);
        return NULL;
    }
    return st;
}

void rt_sweep_store_free(rt_sweep_store *st)
{
    if (!st) return;
    free(st->dir);
    free(st->points_dir);
    free(st->csv);
    free(st);
}

const char *rt_sweep_store_csv_path(const rt_sweep_store *st)
{
    return st->csv;
}

/* ---- point files -------------------------------------------------------------------------- */

static char *point_path(const rt_sweep_store *st, long point)
{
    char name[32];
    snprintf(name, sizeof name, "%07ld", point);
    return rt_path_join(st->points_dir, name);
}

int rt_sweep_store_put(const rt_sweep_store *st, const rt_sweep_record *r, FILE *err)
{
    char *path = point_path(st, r->point);
    tmp_file t;
    if (!path || tmp_open(st, path, &t) < 0) {
        fprintf(err, "rectwin sweep: cannot write point %ld in '%s': %s\n", r->point,
                st->points_dir, strerror(errno));
        free(path);
        return -1;
    }
    fprintf(t.f, "%s\nsweep %016" PRIx64 "\npoint %ld\nstatus %s\n", MAGIC, st->hash, r->point,
            r->ok ? "ok" : "error");
    for (int i = 0; i < r->n_fields; i++)
        fprintf(t.f, "f\t%s\t%s\n", r->fields[i].name, r->fields[i].value);
    if (!r->ok) fprintf(t.f, "e\t%s\n", r->error ? r->error : "");
    fputs("end\n", t.f);
    int rc = tmp_commit(&t, path, 0);
    if (rc < 0) fprintf(err, "rectwin sweep: cannot write '%s': %s\n", path, strerror(errno));
    free(path);
    return rc;
}

/* One line of a point file into R; 1 at "end", 0 to go on, -1 when malformed. */
static int parse_line(char *line, int n, const rt_sweep_store *st, rt_sweep_record *r)
{
    size_t len = strlen(line);
    if (len && line[len - 1] == '\n') line[--len] = '\0';
    if (n == 0) return strcmp(line, MAGIC) ? -1 : 0;
    if (n == 1)
        return !strncmp(line, "sweep ", 6) && strtoull(line + 6, NULL, 16) == st->hash ? 0 : -1;
    if (n == 2) return !strncmp(line, "point ", 6) && atol(line + 6) == r->point ? 0 : -1;
    if (n == 3) {
        r->ok = !strcmp(line, "status ok");
        return r->ok || !strcmp(line, "status error") ? 0 : -1;
    }
    if (!strcmp(line, "end")) return 1;
    if (!strncmp(line, "e\t", 2)) return rt_sweep_record_fail(r, line + 2);
    char *tab = !strncmp(line, "f\t", 2) ? strchr(line + 2, '\t') : NULL;
    if (!tab) return -1;
    *tab = '\0';
    return rt_sweep_record_text(r, line + 2, tab + 1);
}

int rt_sweep_store_get(const rt_sweep_store *st, long point, rt_sweep_record *r)
{
    rt_sweep_record_init(r, point);
    char *path = point_path(st, point);
    FILE *f = path ? fopen(path, "r") : NULL;
    free(path);
    if (!f) return -1;
    char *line = NULL;
    size_t cap = 0;
    int rc = -1;
    for (int n = 0; getline(&line, &cap, f) >= 0; n++) {
        rc = parse_line(line, n, st, r);
        if (rc) break;
    }
    free(line);
    fclose(f);
    if (rc == 1 && (r->ok || r->error)) return 0; /* whole: it reached "end" */
    rt_sweep_record_free(r);
    return -1;
}

/* ---- the CSV ------------------------------------------------------------------------------ */

void rt_sweep_csv_field(FILE *f, const char *s)
{
    fputc(',', f);
    if (!strpbrk(s, ",\"\n\r")) {
        fputs(s, f);
        return;
    }
    fputc('"', f);
    for (; *s; s++) {
        if (*s == '"') fputc('"', f);
        fputc(*s, f);
    }
    fputc('"', f);
}

/* The columns after the swept keys: FIXED, then every other field name in order of first
 * appearance. */
typedef struct columns {
    int n, cap;
    char **names;
} columns;

static void columns_free(columns *c)
{
    for (int i = 0; i < c->n; i++)
        free(c->names[i]);
    free(c->names);
}

/* Index of NAME in C or -1. Records list their fields in column order, so the search starts
 * where the previous one ended (*HINT) and a whole record costs one comparison per field. */
static int find_name(char *const *names, int n, const char *name, int *hint)
{
    for (int k = 0; k < n; k++) {
        int i = (*hint + k) % n;
        if (!strcmp(names[i], name)) {
            *hint = i + 1;
            return i;
        }
    }
    return -1;
}

static int columns_add(columns *c, const char *name, int *hint)
{
    if (find_name(c->names, c->n, name, hint) >= 0) return 0;
    if (c->n == c->cap) {
        int cap = c->cap ? 2 * c->cap : 64;
        char **grown = realloc(c->names, sizeof *grown * (size_t)cap);
        if (!grown) return -1;
        c->names = grown;
        c->cap = cap;
    }
    return (c->names[c->n++] = strdup(name)) ? 0 : (c->n--, -1);
}

/* Pass one: the points without a record, the failed ones, and the columns. */
static long survey(const rt_sweep_store *st, const char *const *fixed, columns *cols, long *failed)
{
    long missing = 0;
    int hint = 0;
    for (int i = 0; fixed[i]; i++)
        if (columns_add(cols, fixed[i], &hint)) return -1;
    for (long p = 0; p < st->n_points; p++) {
        rt_sweep_record r;
        if (rt_sweep_store_get(st, p, &r) < 0) {
            missing++;
            continue;
        }
        *failed += !r.ok;
        hint = 0;
        for (int i = 0; i < r.n_fields; i++)
            if (columns_add(cols, r.fields[i].name, &hint)) missing = -1;
        rt_sweep_record_free(&r);
        if (missing < 0) return -1;
    }
    return missing;
}

static const char *field_of(const rt_sweep_record *r, const char *name, int *hint)
{
    int n = r->n_fields;
    for (int k = 0; k < n; k++) {
        int i = (*hint + k) % n;
        if (!strcmp(r->fields[i].name, name)) {
            *hint = i + 1;
            return r->fields[i].value;
        }
    }
    return "";
}

static void write_header(FILE *f, const rt_sweep_spec *spec, const columns *cols)
{
    const char *keys[RT_SWEEP_MAX_KEYS];
    int nk = rt_sweep_n_keys(spec);
    rt_sweep_keys(spec, keys);
    fputs("point", f);
    rt_sweep_csv_field(f, "status");
    for (int k = 0; k < nk; k++)
        rt_sweep_csv_field(f, keys[k]);
    for (int i = 0; i < cols->n; i++)
        rt_sweep_csv_field(f, cols->names[i]);
    rt_sweep_csv_field(f, "error");
    fputc('\n', f);
}

static void write_row(FILE *f, const rt_sweep_spec *spec, const columns *cols,
                      const rt_sweep_record *r)
{
    const char *shown[RT_SWEEP_MAX_KEYS];
    int nk = rt_sweep_n_keys(spec);
    rt_sweep_point_shown(spec, r->point, shown);
    fprintf(f, "%ld", r->point);
    rt_sweep_csv_field(f, r->ok ? "ok" : "error");
    for (int k = 0; k < nk; k++)
        rt_sweep_csv_field(f, shown[k]);
    int hint = 0;
    for (int i = 0; i < cols->n; i++) {
        const char *v = field_of(r, cols->names[i], &hint);
        rt_sweep_csv_field(f, strcmp(v, "nan") ? v : ""); /* an undefined figure is an empty cell */
    }
    rt_sweep_csv_field(f, r->ok ? "" : r->error);
    fputc('\n', f);
}

static int write_rows(const rt_sweep_store *st, const rt_sweep_spec *spec, const columns *cols,
                      FILE *f)
{
    write_header(f, spec, cols);
    for (long p = 0; p < st->n_points; p++) {
        rt_sweep_record r;
        if (rt_sweep_store_get(st, p, &r) < 0) return -1; /* removed since the survey */
        write_row(f, spec, cols, &r);
        rt_sweep_record_free(&r);
    }
    return 0;
}

long rt_sweep_store_write_csv(const rt_sweep_store *st, const rt_sweep_spec *spec,
                              const char *const *fixed, long *failed, FILE *err)
{
    columns cols = {0};
    *failed = 0;
    long missing = survey(st, fixed, &cols, failed);
    if (missing != 0) {
        columns_free(&cols);
        if (missing < 0) fprintf(err, "rectwin sweep: out of memory assembling the CSV\n");
        return missing;
    }
    tmp_file t;
    long rc = -1;
    if (tmp_open(st, st->csv, &t) < 0) {
        fprintf(err, "rectwin sweep: cannot write '%s': %s\n", st->csv, strerror(errno));
    } else if (write_rows(st, spec, &cols, t.f) < 0) {
        fprintf(err, "rectwin sweep: a point file of '%s' went away while the CSV was written\n",
                st->points_dir);
        tmp_drop(&t);
    } else if (tmp_commit(&t, st->csv, 0) < 0) {
        fprintf(err, "rectwin sweep: cannot write '%s': %s\n", st->csv, strerror(errno));
    } else {
        rc = 0;
    }
    columns_free(&cols);
    return rc;
}
