/* rectwin compare: a predicted result directory against a measured one (DESIGN.md section 8).
 * Both hold the summary.json and ops.csv that core/result_write.c writes, whichever engine (sim
 * or exec) made them. The files come from other programs and other machines, so every field is
 * checked and every problem is reported as FILE:LINE:COL before anything is printed. */
#include <errno.h>
#include <libfyaml.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli_args.h"
#include "commands.h"
#include "json.h"
#include "manifest.h"

enum { N_METRICS = 7, DEFAULT_TOP = 10, MAX_TOP = 1000000 };

static const char *const metric_names[N_METRICS] = {
    "iteration_time_s", "samples_per_s",  "mfu",           "mbu",
    "comm_time_s",      "exposed_comm_s", "peak_hbm_bytes"};

/* ---- summary.json --------------------------------------------------------------------- */

typedef struct summary {
    char engine[64];
    double metric[N_METRICS]; /* NAN where the writer stored null (a non-finite value) */
    int n_phases;
    char **phase;
    double *phase_s;
} summary;

static void summary_free(summary *s)
{
    for (int i = 0; i < s->n_phases; i++)
        free(s->phase[i]);
    free(s->phase);
    free(s->phase_s);
    memset(s, 0, sizeof *s);
}

/* Regular files only: libfyaml reads a directory as an empty document, which would be
 * reported as malformed JSON instead of a wrong path. */
static FILE *open_regular(const char *path, FILE *err)
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

static void report_parse_error(struct fy_diag *diag, const char *path, FILE *err)
{
    void *it = NULL;
    struct fy_diag_error *e = fy_diag_errors_iterate(diag, &it);
    if (!e || !e->msg || e->line <= 0) {
        fprintf(err, "%s: not valid JSON\n", path);
        return;
    }
    size_t n = strlen(e->msg);
    while (n > 0 && (e->msg[n - 1] == '\n' || e->msg[n - 1] == '\r'))
        n--;
    fprintf(err, "%s:%d:%d: not valid JSON: %.*s\n", path, e->line, e->column > 0 ? e->column : 1,
            (int)n, e->msg);
}

/* A parsed JSON file. Documents loaded from a parser belong to it, so the three live and die
 * together. */
typedef struct json_file {
    struct fy_diag *diag;
    struct fy_parser *parser;
    struct fy_document *doc;
} json_file;

static void json_file_close(json_file *j)
{
    if (j->doc) fy_parse_document_destroy(j->parser, j->doc);
    if (j->parser) fy_parser_destroy(j->parser);
    if (j->diag) fy_diag_destroy(j->diag);
    memset(j, 0, sizeof *j);
}

static int json_parser_create(json_file *j)
{
    struct fy_diag_cfg dcfg;
    fy_diag_cfg_default(&dcfg);
    dcfg.colorize = false;
    j->diag = fy_diag_create(&dcfg);
    if (!j->diag) return -1;
    fy_diag_set_collect_errors(j->diag, true);
    /* JSON mode is forced: the name need not end in .json, and YAML-only syntax (comments,
     * unquoted strings, several documents) is an error rather than silently accepted. */
    struct fy_parse_cfg pcfg = {.flags = FYPCF_QUIET | FYPCF_COLLECT_DIAG | FYPCF_JSON_FORCE,
                                .diag = j->diag};
    j->parser = fy_parser_create(&pcfg);
    return j->parser ? 0 : -1;
}

/* Exactly one JSON value: the parser would otherwise stop after the first and ignore the rest
 * of the file. */
static int json_load_one(json_file *j, const char *path, FILE *f, FILE *err)
{
    if (fy_parser_set_input_fp(j->parser, path, f) != 0) {
        fprintf(err, "%s: cannot read\n", path);
        return -1;
    }
    j->doc = fy_parse_load_document(j->parser);
    struct fy_document *extra = j->doc ? fy_parse_load_document(j->parser) : NULL;
    if (extra) fy_parse_document_destroy(j->parser, extra);
    if (!j->doc || extra || fy_parser_get_stream_error(j->parser)) {
        report_parse_error(j->diag, path, err);
        return -1;
    }
    return 0;
}

static int json_file_open(json_file *j, const char *path, FILE *err)
{
    memset(j, 0, sizeof *j);
    FILE *f = open_regular(path, err);
    if (!f) return -1;
    int rc = json_parser_create(j);
    if (rc) fprintf(err, "%s: out of memory\n", path);
    if (!rc) rc = json_load_one(j, path, f, err);
    fclose(f);
    if (rc) json_file_close(j);
    return rc;
}

/* Prints "PATH:LINE:COL: " at NODE's first token, or "PATH: " when it has none. */
static void print_node_location(const char *path, struct fy_node *node, FILE *err)
{
    while (node && fy_node_get_type(node) != FYNT_SCALAR) {
        void *it = NULL;
        if (fy_node_get_type(node) == FYNT_MAPPING) {
            struct fy_node_pair *p = fy_node_mapping_iterate(node, &it);
            node = p ? fy_node_pair_key(p) : NULL;
        } else {
            node = fy_node_sequence_iterate(node, &it);
        }
    }
    struct fy_token *t = node ? fy_node_get_scalar_token(node) : NULL;
    const struct fy_mark *m = t ? fy_token_start_mark(t) : NULL;
    if (m)
        fprintf(err, "%s:%d:%d: ", path, m->line + 1, m->column + 1);
    else
        fprintf(err, "%s: ", path);
}

/* Scalar text of NODE copied into BUF; NULL when NODE is not a scalar or does not fit. */
static const char *scalar_copy(struct fy_node *node, char *buf, size_t size)
{
    size_t len = 0;
    const char *s = fy_node_get_type(node) == FYNT_SCALAR ? fy_node_get_scalar(node, &len) : NULL;
    if (!s || len + 1 > size) return NULL;
    memcpy(buf, s, len);
    buf[len] = '\0';
    return buf;
}

/* A JSON number, or null, which rt_json writes for a non-finite value and which is read back as
 * NAN so that its errors print as n/a. Quoted numbers are strings and are rejected. */
static int node_number(struct fy_node *node, double *out)
{
    char buf[64];
    if (!node || fy_node_get_style(node) != FYNS_PLAIN || !scalar_copy(node, buf, sizeof buf))
        return -1;
    if (!strcmp(buf, "null")) {
        *out = NAN;
        return 0;
    }
    char *end;
    double x = strtod(buf, &end); /* an underflow to a denormal or 0 is still a number */
    if (end == buf || *end || !isfinite(x)) return -1;
    *out = x;
    return 0;
}

/* The value, or the key when the value has no token of its own (an empty object). */
static struct fy_node *pair_location(struct fy_node_pair *p)
{
    struct fy_node *v = fy_node_pair_value(p);
    return v && fy_node_get_type(v) == FYNT_SCALAR ? v : fy_node_pair_key(p);
}

static int read_metrics(summary *s, struct fy_node *root, const char *path, FILE *err)
{
    for (int i = 0; i < N_METRICS; i++) {
        struct fy_node_pair *p =
            fy_node_mapping_lookup_pair_by_string(root, metric_names[i], FY_NT);
        if (!p) {
            fprintf(err, "%s: key '%s' is missing\n", path, metric_names[i]);
            return -1;
        }
        if (node_number(fy_node_pair_value(p), &s->metric[i])) {
            print_node_location(path, pair_location(p), err);
            fprintf(err, "key '%s': expected a number or null\n", metric_names[i]);
            return -1;
        }
    }
    return 0;
}

static int add_phase(summary *s, const char *name, size_t len, double seconds, const char *path,
                     FILE *err)
{
    char *copy = malloc(len + 1);
    if (!copy) {
        fprintf(err, "%s: out of memory\n", path);
        return -1;
    }
    memcpy(copy, name, len);
    copy[len] = '\0';
    s->phase[s->n_phases] = copy;
    s->phase_s[s->n_phases++] = seconds;
    return 0;
}

static int read_phase_pair(summary *s, struct fy_node_pair *p, const char *path, FILE *err)
{
    struct fy_node *k = fy_node_pair_key(p);
    size_t len = 0;
    const char *name = k && fy_node_get_type(k) == FYNT_SCALAR ? fy_node_get_scalar(k, &len) : NULL;
    if (!name || len == 0 || memchr(name, '\0', len)) {
        print_node_location(path, k, err);
        fprintf(err, "key 'phases': phase names must be non-empty strings\n");
        return -1;
    }
    double seconds;
    if (node_number(fy_node_pair_value(p), &seconds)) {
        print_node_location(path, pair_location(p), err);
        fprintf(err, "key 'phases.%.*s': expected a number of seconds or null\n", (int)len, name);
        return -1;
    }
    return add_phase(s, name, len, seconds, path, err);
}

static int read_phases(summary *s, struct fy_node *root, const char *path, FILE *err)
{
    struct fy_node_pair *pp = fy_node_mapping_lookup_pair_by_string(root, "phases", FY_NT);
    struct fy_node *ph = pp ? fy_node_pair_value(pp) : NULL;
    if (!pp) {
        fprintf(err, "%s: key 'phases' is missing\n", path);
        return -1;
    }
    if (!ph || fy_node_get_type(ph) != FYNT_MAPPING) {
        print_node_location(path, fy_node_pair_key(pp), err);
        fprintf(err, "key 'phases': expected an object of phase: seconds\n");
        return -1;
    }
    int n = fy_node_mapping_item_count(ph);
    s->phase = calloc(n > 0 ? (size_t)n : 1, sizeof *s->phase);
    s->phase_s = calloc(n > 0 ? (size_t)n : 1, sizeof *s->phase_s);
    if (n < 0 || !s->phase || !s->phase_s) {
        fprintf(err, "%s: out of memory\n", path);
        return -1;
    }
    void *it = NULL;
    struct fy_node_pair *p;
    while (s->n_phases < n && (p = fy_node_mapping_iterate(ph, &it)))
        if (read_phase_pair(s, p, path, err)) return -1;
    return 0;
}

/* The engine name is shown only to label the columns, so an odd one is not an error. */
static void read_engine(summary *s, struct fy_node *root)
{
    struct fy_node *v = fy_node_mapping_lookup_by_string(root, "engine", FY_NT);
    if (!v || !scalar_copy(v, s->engine, sizeof s->engine)) memcpy(s->engine, "?", 2);
}

static int summary_load(summary *s, const char *path, FILE *err)
{
    memset(s, 0, sizeof *s);
    json_file j;
    if (json_file_open(&j, path, err)) return -1;
    int rc = -1;
    struct fy_node *root = fy_document_root(j.doc);
    if (!root || fy_node_get_type(root) != FYNT_MAPPING) {
        print_node_location(path, root, err);
        fprintf(err, "expected a JSON object at the top\n");
    } else if (!read_metrics(s, root, path, err) && !read_phases(s, root, path, err)) {
        read_engine(s, root);
        rc = 0;
    }
    json_file_close(&j);
    return rc;
}

/* ---- ops.csv -------------------------------------------------------------------------- */

typedef struct op_row {
    long rank;
    const char *name, *phase; /* into the table's buffer */
    double dur;
    long idx; /* row number in file order */
    int occ;  /* occurrence of (rank, name, phase) in file order, from 0 */
} op_row;

typedef struct op_table {
    char *buf; /* the whole file; fields are decoded in place and NUL-terminated */
    op_row *row;
    long n;
} op_table;

static void op_table_free(op_table *t)
{
    free(t->buf);
    free(t->row);
    memset(t, 0, sizeof *t);
}

/* Reader state. Fields are decoded in place: a decoded field is never longer than its text. */
typedef struct csv {
    const char *path;
    FILE *err;
    char *buf;
    size_t len, pos, line_start;
    int line;
} csv;

static void csv_error(const csv *c, size_t at, const char *what)
{
    fprintf(c->err, "%s:%d:%zu: %s\n", c->path, c->line, at - c->line_start + 1, what);
}

static char *slurp(FILE *f, size_t *len)
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

static int csv_load(csv *c, const char *path, FILE *err)
{
    memset(c, 0, sizeof *c);
    c->path = path;
    c->err = err;
    c->line = 1;
    FILE *f = open_regular(path, err);
    if (!f) return -1;
    errno = 0;
    c->buf = slurp(f, &c->len);
    if (!c->buf) fprintf(err, "%s: cannot read: %s\n", path, errno ? strerror(errno) : "error");
    fclose(f);
    return c->buf ? 0 : -1;
}

static void csv_newline(csv *c)
{
    c->line++;
    c->line_start = c->pos;
}

/* Consumes the separator after a field: 0 for ',', 1 for the end of the record (a line break
 * or the end of the file), -1 on anything else. */
static int csv_separator(csv *c)
{
    if (c->pos >= c->len) return 1;
    char ch = c->buf[c->pos];
    if (ch == ',') {
        c->pos++;
        return 0;
    }
    if (ch == '\r' && c->pos + 1 < c->len && c->buf[c->pos + 1] == '\n') c->pos++;
    if (c->buf[c->pos] != '\n') {
        csv_error(c, c->pos,
                  ch == '\r' ? "carriage return without a line feed"
                             : "expected ',' or the end of the line");
        return -1;
    }
    c->pos++;
    csv_newline(c);
    return 1;
}

/* A quoted field: "" stands for one quote, line breaks are data. W is where text goes. */
static int csv_quoted(csv *c, char **w)
{
    size_t open = c->pos++;
    int open_line = c->line;
    size_t open_start = c->line_start;
    for (;;) {
        if (c->pos >= c->len) {
            c->line = open_line;
            c->line_start = open_start;
            csv_error(c, open, "quoted field is never closed");
            return -1;
        }
        char ch = c->buf[c->pos++];
        if (ch == '"' && (c->pos >= c->len || c->buf[c->pos] != '"')) return 0;
        if (ch == '"') c->pos++;
        if (ch == '\0') {
            csv_error(c, c->pos - 1, "NUL byte in the file");
            return -1;
        }
        *(*w)++ = ch;
        if (ch == '\n') csv_newline(c);
    }
}

static int csv_plain(csv *c, char **w)
{
    for (; c->pos < c->len; c->pos++) {
        char ch = c->buf[c->pos];
        if (ch == ',' || ch == '\n' || ch == '\r') return 0;
        if (ch == '"' || ch == '\0') {
            csv_error(c, c->pos, ch ? "quote inside an unquoted field" : "NUL byte in the file");
            return -1;
        }
        *(*w)++ = ch;
    }
    return 0;
}

/* Reads one field into *TEXT (in place) and its column into *COL. Returns 0 (more fields
 * follow), 1 (last of its record) or -1 (message printed). */
static int csv_field(csv *c, char **text, size_t *col)
{
    *col = c->pos - c->line_start + 1;
    char *w = c->buf + c->pos;
    *text = w;
    int rc = c->pos < c->len && c->buf[c->pos] == '"' ? csv_quoted(c, &w) : csv_plain(c, &w);
    if (rc < 0) return -1;
    rc = csv_separator(c);
    *w = '\0'; /* after the separator was read: W may point at it */
    return rc;
}

typedef struct csv_field_at {
    char *text;
    int line; /* a field after a quoted line break is on a later line than its record */
    size_t col;
} csv_field_at;

typedef struct csv_record {
    int n, cap;
    csv_field_at *f;
    int line;
} csv_record;

static int record_push(csv_record *r, char *text, int line, size_t col)
{
    if (r->n == r->cap) {
        int cap = r->cap ? 2 * r->cap : 16;
        csv_field_at *f = realloc(r->f, (size_t)cap * sizeof *f);
        if (!f) return -1;
        r->f = f;
        r->cap = cap;
    }
    r->f[r->n++] = (csv_field_at){text, line, col};
    return 0;
}

/* One record (one line, or more when a quoted field holds line breaks). */
static int csv_record_read(csv *c, csv_record *r)
{
    r->n = 0;
    r->line = c->line;
    for (;;) {
        char *text;
        size_t col;
        int line = c->line;
        int rc = csv_field(c, &text, &col);
        if (rc < 0) return -1;
        if (record_push(r, text, line, col)) {
            fprintf(c->err, "%s: out of memory\n", c->path);
            return -1;
        }
        if (rc == 1) return 0;
    }
}

/* ---- ops.csv columns ------------------------------------------------------------------ */

enum { COL_RANK, COL_NAME, COL_PHASE, COL_START, COL_END, N_COLS };
static const char *const col_names[N_COLS] = {"rank", "name", "phase", "start_s", "end_s"};

typedef struct ops_reader {
    csv c;
    csv_record rec;
    int n_fields;
    int col[N_COLS]; /* field index of each needed column */
} ops_reader;

/* Columns are found by header name so that writers may add or reorder columns. */
static int read_header(ops_reader *o)
{
    if (o->c.len == 0) {
        fprintf(o->c.err, "%s:1:1: empty file; expected the header line\n", o->c.path);
        return -1;
    }
    if (csv_record_read(&o->c, &o->rec)) return -1;
    o->n_fields = o->rec.n;
    for (int k = 0; k < N_COLS; k++)
        o->col[k] = -1;
    for (int i = 0; i < o->rec.n; i++) {
        const csv_field_at *f = &o->rec.f[i];
        for (int j = 0; j < i; j++)
            if (!strcmp(f->text, o->rec.f[j].text)) {
                fprintf(o->c.err, "%s:%d:%zu: column '%s' appears twice in the header\n", o->c.path,
                        f->line, f->col, f->text);
                return -1;
            }
        for (int k = 0; k < N_COLS; k++)
            if (!strcmp(f->text, col_names[k])) o->col[k] = i;
    }
    for (int k = 0; k < N_COLS; k++)
        if (o->col[k] < 0) {
            fprintf(o->c.err,
                    "%s:1:1: header lacks the column '%s' (needed: rank, name, phase, "
                    "start_s, end_s)\n",
                    o->c.path, col_names[k]);
            return -1;
        }
    return 0;
}

static int parse_rank(const char *s, long *out)
{
    char *end;
    errno = 0;
    long v = (*s >= '0' && *s <= '9') ? strtol(s, &end, 10) : -1;
    if (v < 0 || *end || errno == ERANGE || v > INT_MAX) return -1;
    *out = v;
    return 0;
}

static int parse_seconds(const char *s, double *out)
{
    char *end;
    double v =
        (*s == '-' || *s == '+' || *s == '.' || (*s >= '0' && *s <= '9')) ? strtod(s, &end) : NAN;
    if (isnan(v) || *end || !isfinite(v)) return -1;
    *out = v;
    return 0;
}

static void value_error(ops_reader *o, int k, const char *what)
{
    const csv_field_at *f = &o->rec.f[o->col[k]];
    fprintf(o->c.err, "%s:%d:%zu: column '%s': %s, got '%s'\n", o->c.path, f->line, f->col,
            col_names[k], what, f->text);
}

/* Text of the needed column K in the current record. */
static const char *field(const ops_reader *o, int k)
{
    return o->rec.f[o->col[k]].text;
}

static int parse_row(ops_reader *o, op_row *row)
{
    if (o->rec.n == 1 && !*o->rec.f[0].text) {
        fprintf(o->c.err, "%s:%d:1: empty line\n", o->c.path, o->rec.line);
        return -1;
    }
    if (o->rec.n != o->n_fields) {
        fprintf(o->c.err, "%s:%d:1: row has %d fields, the header has %d\n", o->c.path, o->rec.line,
                o->rec.n, o->n_fields);
        return -1;
    }
    double start, end;
    if (parse_rank(field(o, COL_RANK), &row->rank)) {
        value_error(o, COL_RANK, "expected a rank (an integer >= 0)");
        return -1;
    }
    if (!*field(o, COL_PHASE)) {
        value_error(o, COL_PHASE, "expected a phase name");
        return -1;
    }
    if (parse_seconds(field(o, COL_START), &start)) {
        value_error(o, COL_START, "expected a finite number of seconds");
        return -1;
    }
    if (parse_seconds(field(o, COL_END), &end) || end < start) {
        value_error(o, COL_END, "expected a finite number of seconds >= start_s");
        return -1;
    }
    row->name = field(o, COL_NAME);
    row->phase = field(o, COL_PHASE);
    row->dur = end - start;
    return 0;
}

static int push_row(op_table *t, long *cap, const op_row *row)
{
    if (t->n == *cap) {
        long n = *cap ? 2 * *cap : 1024;
        op_row *r =
            (size_t)n <= SIZE_MAX / sizeof *r ? realloc(t->row, (size_t)n * sizeof *r) : NULL;
        if (!r) return -1;
        t->row = r;
        *cap = n;
    }
    t->row[t->n] = *row;
    t->row[t->n].idx = t->n;
    t->n++;
    return 0;
}

static int read_rows(ops_reader *o, op_table *t)
{
    long cap = 0;
    while (o->c.pos < o->c.len) {
        op_row row = {0};
        if (csv_record_read(&o->c, &o->rec) || parse_row(o, &row)) return -1;
        if (push_row(t, &cap, &row)) {
            fprintf(o->c.err, "%s: out of memory\n", o->c.path);
            return -1;
        }
    }
    return 0;
}

static int ops_load(op_table *t, const char *path, FILE *err)
{
    memset(t, 0, sizeof *t);
    ops_reader o = {0};
    int rc = csv_load(&o.c, path, err);
    if (!rc) rc = read_header(&o);
    if (!rc) rc = read_rows(&o, t);
    t->buf = o.c.buf;
    free(o.rec.f);
    if (rc) op_table_free(t);
    return rc;
}

/* ---- matching ------------------------------------------------------------------------- */

static int key_cmp(const op_row *a, const op_row *b)
{
    if (a->rank != b->rank) return a->rank < b->rank ? -1 : 1;
    int c = strcmp(a->name, b->name);
    return c ? c : strcmp(a->phase, b->phase);
}

static int row_cmp(const void *x, const void *y)
{
    const op_row *a = x, *b = y;
    int c = key_cmp(a, b);
    return c ? c : (a->idx > b->idx) - (a->idx < b->idx);
}

/* Sorted by key, then file order: equal keys are numbered in the order they were written,
 * which is how repeated ops (one per microbatch, say) pair up between the two sides. */
static void number_occurrences(op_table *t)
{
    if (t->n > 0) qsort(t->row, (size_t)t->n, sizeof *t->row, row_cmp);
    for (long i = 0; i < t->n; i++)
        t->row[i].occ = i > 0 && !key_cmp(&t->row[i - 1], &t->row[i]) ? t->row[i - 1].occ + 1 : 0;
}

typedef struct op_pair {
    const op_row *p, *m;
    double abs_err_s, rel;
} op_pair;

typedef struct matching {
    op_pair *pair;
    const op_row **pred_only, **meas_only;
    long n_pair, n_pred_only, n_meas_only;
} matching;

static void matching_free(matching *m)
{
    free(m->pair);
    free(m->pred_only);
    free(m->meas_only);
    memset(m, 0, sizeof *m);
}

/* NAN when the relative error is undefined: a measured 0, or a value missing on either side. */
static double rel_err(double pred, double meas)
{
    if (!isfinite(pred) || !isfinite(meas) || meas == 0) return NAN;
    return (pred - meas) / meas;
}

static void add_pair(matching *m, const op_row *p, const op_row *q)
{
    op_pair *x = &m->pair[m->n_pair++];
    x->p = p;
    x->m = q;
    x->abs_err_s = fabs(p->dur - q->dur);
    x->rel = rel_err(p->dur, q->dur);
}

static int join_cmp(const op_row *a, const op_row *b)
{
    int c = key_cmp(a, b);
    return c ? c : (a->occ > b->occ) - (a->occ < b->occ);
}

static void merge_join(matching *m, const op_table *p, const op_table *q)
{
    long i = 0, j = 0;
    while (i < p->n || j < q->n) {
        int c = i >= p->n ? 1 : j >= q->n ? -1 : join_cmp(&p->row[i], &q->row[j]);
        if (c == 0)
            add_pair(m, &p->row[i++], &q->row[j++]);
        else if (c < 0)
            m->pred_only[m->n_pred_only++] = &p->row[i++];
        else
            m->meas_only[m->n_meas_only++] = &q->row[j++];
    }
}

static int pair_by_file_order(const void *x, const void *y)
{
    const op_pair *a = x, *b = y;
    return (a->p->idx > b->p->idx) - (a->p->idx < b->p->idx);
}

static int row_ptr_by_file_order(const void *x, const void *y)
{
    const op_row *a = *(const op_row *const *)x, *b = *(const op_row *const *)y;
    return (a->idx > b->idx) - (a->idx < b->idx);
}

static int match_ops(matching *m, op_table *p, op_table *q, FILE *err)
{
    memset(m, 0, sizeof *m);
    number_occurrences(p);
    number_occurrences(q);
    m->pair = calloc((size_t)(p->n < q->n ? p->n : q->n) + 1, sizeof *m->pair);
    m->pred_only = calloc((size_t)p->n + 1, sizeof *m->pred_only);
    m->meas_only = calloc((size_t)q->n + 1, sizeof *m->meas_only);
    if (!m->pair || !m->pred_only || !m->meas_only) {
        fprintf(err, "rectwin compare: out of memory\n");
        return -1;
    }
    merge_join(m, p, q);
    qsort(m->pair, (size_t)m->n_pair, sizeof *m->pair, pair_by_file_order);
    qsort(m->pred_only, (size_t)m->n_pred_only, sizeof *m->pred_only, row_ptr_by_file_order);
    qsort(m->meas_only, (size_t)m->n_meas_only, sizeof *m->meas_only, row_ptr_by_file_order);
    return 0;
}

/* ---- phases --------------------------------------------------------------------------- */

typedef struct phase_row {
    const char *name;
    double pred, meas; /* NAN when the phase is absent on that side */
    double rel;
} phase_row;

static int find_phase(const summary *s, const char *name)
{
    for (int i = 0; i < s->n_phases; i++)
        if (!strcmp(s->phase[i], name)) return i;
    return -1;
}

/* The predicted phases in their order, then the phases only the measurement has. */
static phase_row *match_phases(const summary *p, const summary *m, int *n)
{
    phase_row *rows = calloc((size_t)p->n_phases + (size_t)m->n_phases + 1, sizeof *rows);
    if (!rows) return NULL;
    *n = 0;
    for (int i = 0; i < p->n_phases; i++) {
        int k = find_phase(m, p->phase[i]);
        rows[(*n)++] = (phase_row){p->phase[i], p->phase_s[i], k >= 0 ? m->phase_s[k] : NAN, 0};
    }
    for (int k = 0; k < m->n_phases; k++)
        if (find_phase(p, m->phase[k]) < 0)
            rows[(*n)++] = (phase_row){m->phase[k], NAN, m->phase_s[k], 0};
    for (int i = 0; i < *n; i++)
        rows[i].rel = rel_err(rows[i].pred, rows[i].meas);
    return rows;
}

/* Mean absolute percentage error from the summed |relative errors| of USED values; NAN when
 * no value had one. */
static double mape(double sum_abs, long used)
{
    return used ? 100.0 * sum_abs / (double)used : NAN;
}

/* ---- the comparison ------------------------------------------------------------------- */

typedef struct comparison {
    const char *pred_dir, *meas_dir;
    summary pred, meas;
    op_table pred_ops, meas_ops;
    matching ops;
    phase_row *phases;
    int n_phases;
    const op_pair **worst;
    long n_worst;
    double ops_mape, phases_mape;
    long ops_mape_n, phases_mape_n;
} comparison;

static void comparison_free(comparison *c)
{
    summary_free(&c->pred);
    summary_free(&c->meas);
    op_table_free(&c->pred_ops);
    op_table_free(&c->meas_ops);
    matching_free(&c->ops);
    free(c->phases);
    free(c->worst);
}

static int worse_first(const void *x, const void *y)
{
    const op_pair *a = *(const op_pair *const *)x, *b = *(const op_pair *const *)y;
    if (a->abs_err_s != b->abs_err_s) return a->abs_err_s < b->abs_err_s ? 1 : -1;
    return (a->p->idx > b->p->idx) - (a->p->idx < b->p->idx);
}

/* Worst by seconds, not by percent: a 10x error on a 1 us op matters less than 5% on the
 * embedding AlltoAll, and a measured 0 has no percent error at all. */
static int pick_worst(comparison *c, long top)
{
    long n = c->ops.n_pair;
    c->worst = calloc((size_t)n + 1, sizeof *c->worst);
    if (!c->worst) return -1;
    for (long i = 0; i < n; i++)
        c->worst[i] = &c->ops.pair[i];
    qsort(c->worst, (size_t)n, sizeof *c->worst, worse_first);
    c->n_worst = top < n ? top : n;
    return 0;
}

static void add_abs_error(double rel, double *sum, long *used)
{
    if (isnan(rel)) return;
    *sum += fabs(rel);
    (*used)++;
}

static void summarize_errors(comparison *c)
{
    double ops = 0, phases = 0;
    for (long i = 0; i < c->ops.n_pair; i++)
        add_abs_error(c->ops.pair[i].rel, &ops, &c->ops_mape_n);
    for (int i = 0; i < c->n_phases; i++)
        add_abs_error(c->phases[i].rel, &phases, &c->phases_mape_n);
    c->ops_mape = mape(ops, c->ops_mape_n);
    c->phases_mape = mape(phases, c->phases_mape_n);
}

static char *join_path(const char *dir, const char *name)
{
    size_t n = strlen(dir) + strlen(name) + 2;
    char *p = malloc(n);
    if (p) snprintf(p, n, "%s/%s", dir, name);
    return p;
}

static int load_dir(const char *dir, summary *s, op_table *t, FILE *err)
{
    char *json = join_path(dir, "summary.json"), *ops = join_path(dir, "ops.csv");
    int rc = -1;
    if (!json || !ops)
        fprintf(err, "rectwin compare: out of memory\n");
    else
        rc = rt_manifest_check(dir, err) < 0 || summary_load(s, json, err) || ops_load(t, ops, err)
                 ? -1
                 : 0;
    free(json);
    free(ops);
    return rc;
}

static int compare(comparison *c, long top, FILE *err)
{
    if (load_dir(c->pred_dir, &c->pred, &c->pred_ops, err) ||
        load_dir(c->meas_dir, &c->meas, &c->meas_ops, err) ||
        match_ops(&c->ops, &c->pred_ops, &c->meas_ops, err))
        return -1;
    c->phases = match_phases(&c->pred, &c->meas, &c->n_phases);
    if (!c->phases || pick_worst(c, top)) {
        fprintf(err, "rectwin compare: out of memory\n");
        return -1;
    }
    summarize_errors(c);
    return 0;
}

/* ---- text output ---------------------------------------------------------------------- */

static const char *pct(double rel, char *buf, size_t size)
{
    if (isnan(rel)) return "n/a";
    snprintf(buf, size, "%+.2f%%", 100.0 * rel);
    return buf;
}

static const char *num(double x, char *buf, size_t size)
{
    if (isnan(x)) return "-";
    snprintf(buf, size, "%.6e", x);
    return buf;
}

static void print_headline(const comparison *c)
{
    char a[32], b[32], e[32];
    printf("%-20s %14s %14s %10s\n", "metric", "predicted", "measured", "error");
    for (int i = 0; i < N_METRICS; i++) {
        double p = c->pred.metric[i], m = c->meas.metric[i];
        printf("%-20s %14s %14s %10s\n", metric_names[i], num(p, a, sizeof a), num(m, b, sizeof b),
               pct(rel_err(p, m), e, sizeof e));
    }
}

static void print_phases(const comparison *c)
{
    char a[32], b[32], e[32];
    printf("\n%-20s %14s %14s %10s\n", "phase", "predicted s", "measured s", "error");
    for (int i = 0; i < c->n_phases; i++) {
        const phase_row *r = &c->phases[i];
        printf("%-20s %14s %14s %10s\n", r->name, num(r->pred, a, sizeof a),
               num(r->meas, b, sizeof b), pct(r->rel, e, sizeof e));
    }
}

/* "name", or "name#k" for the k-th (from 1) repeat of a (rank, name, phase) key. */
static const char *op_label(const op_row *r, char *buf, size_t size)
{
    if (r->occ == 0) return r->name[0] ? r->name : "(unnamed)";
    snprintf(buf, size, "%s#%d", r->name[0] ? r->name : "(unnamed)", r->occ + 1);
    return buf;
}

static void print_op_pair(const op_pair *x, int with_abs)
{
    char l[256], a[32], b[32], d[32], e[32];
    printf("%5ld  %-28s %-20s %14s %14s", x->p->rank, op_label(x->p, l, sizeof l), x->p->phase,
           num(x->p->dur, a, sizeof a), num(x->m->dur, b, sizeof b));
    if (with_abs) printf(" %14s", num(x->abs_err_s, d, sizeof d));
    printf(" %10s\n", pct(x->rel, e, sizeof e));
}

static void print_ops(const comparison *c)
{
    printf("\nops: %ld matched by (rank, name, phase), repeats in file order; %ld unmatched "
           "(listed at the end)\n",
           c->ops.n_pair, c->ops.n_pred_only + c->ops.n_meas_only);
    printf("%5s  %-28s %-20s %14s %14s %10s\n", "rank", "op", "phase", "predicted s", "measured s",
           "error");
    for (long i = 0; i < c->ops.n_pair; i++)
        print_op_pair(&c->ops.pair[i], 0);
}

static void print_mape(const char *what, double value, long used, long total)
{
    char e[32];
    if (isnan(value))
        snprintf(e, sizeof e, "n/a");
    else
        snprintf(e, sizeof e, "%.2f%%", value);
    printf("MAPE over %s: %s (%ld of %ld", what, e, used, total);
    printf(total > used ? "; the others have no relative error: measured 0 or missing)\n" : ")\n");
}

static void print_worst(const comparison *c)
{
    printf("\nworst %ld ops by |predicted - measured|\n", c->n_worst);
    printf("%5s  %-28s %-20s %14s %14s %14s %10s\n", "rank", "op", "phase", "predicted s",
           "measured s", "abs error s", "error");
    for (long i = 0; i < c->n_worst; i++)
        print_op_pair(c->worst[i], 1);
}

static void print_unmatched_side(const char *side, const op_row *const *rows, long n)
{
    char l[256], a[32];
    for (long i = 0; i < n; i++)
        printf("  %-9s %5ld  %-28s %-20s %14s\n", side, rows[i]->rank,
               op_label(rows[i], l, sizeof l), rows[i]->phase, num(rows[i]->dur, a, sizeof a));
}

static void print_unmatched(const comparison *c)
{
    printf("\nunmatched ops: %ld predicted only, %ld measured only\n", c->ops.n_pred_only,
           c->ops.n_meas_only);
    print_unmatched_side("predicted", c->ops.pred_only, c->ops.n_pred_only);
    print_unmatched_side("measured", c->ops.meas_only, c->ops.n_meas_only);
}

static void print_text(const comparison *c)
{
    printf("predicted: %s (engine %s)\nmeasured:  %s (engine %s)\n", c->pred_dir, c->pred.engine,
           c->meas_dir, c->meas.engine);
    printf("error = (predicted - measured) / measured\n\n");
    print_headline(c);
    print_phases(c);
    print_ops(c);
    printf("\n");
    print_mape("ops", c->ops_mape, c->ops_mape_n, c->ops.n_pair);
    print_mape("phases", c->phases_mape, c->phases_mape_n, c->n_phases);
    print_worst(c);
    print_unmatched(c);
}

/* ---- JSON output ---------------------------------------------------------------------- */

static void json_op_key(rt_json *j, const op_row *r)
{
    rt_json_int(j, "rank", r->rank);
    rt_json_string(j, "name", r->name);
    rt_json_string(j, "phase", r->phase);
    rt_json_int(j, "occurrence", r->occ + 1); /* as "name#k" in the text */
}

static void json_headline(rt_json *j, const comparison *c)
{
    rt_json_begin_object(j, "headline");
    for (int i = 0; i < N_METRICS; i++) {
        double p = c->pred.metric[i], m = c->meas.metric[i];
        rt_json_begin_object(j, metric_names[i]);
        rt_json_number(j, "pred", p);
        rt_json_number(j, "meas", m);
        rt_json_number(j, "rel_err", rel_err(p, m));
        rt_json_end_object(j);
    }
    rt_json_end_object(j);
}

static void json_phases(rt_json *j, const comparison *c)
{
    rt_json_begin_array(j, "phases");
    for (int i = 0; i < c->n_phases; i++) {
        rt_json_begin_object(j, NULL);
        rt_json_string(j, "phase", c->phases[i].name);
        rt_json_number(j, "pred", c->phases[i].pred);
        rt_json_number(j, "meas", c->phases[i].meas);
        rt_json_number(j, "rel_err", c->phases[i].rel);
        rt_json_end_object(j);
    }
    rt_json_end_array(j);
}

static void json_worst(rt_json *j, const comparison *c)
{
    rt_json_begin_array(j, "worst_ops");
    for (long i = 0; i < c->n_worst; i++) {
        const op_pair *x = c->worst[i];
        rt_json_begin_object(j, NULL);
        json_op_key(j, x->p);
        rt_json_number(j, "pred", x->p->dur);
        rt_json_number(j, "meas", x->m->dur);
        rt_json_number(j, "abs_err_s", x->abs_err_s);
        rt_json_number(j, "rel_err", x->rel);
        rt_json_end_object(j);
    }
    rt_json_end_array(j);
}

static void json_unmatched_side(rt_json *j, const char *key, const op_row *const *rows, long n)
{
    rt_json_begin_array(j, key);
    for (long i = 0; i < n; i++) {
        rt_json_begin_object(j, NULL);
        json_op_key(j, rows[i]);
        rt_json_number(j, "dur_s", rows[i]->dur);
        rt_json_end_object(j);
    }
    rt_json_end_array(j);
}

static void print_json(const comparison *c)
{
    rt_json j;
    rt_json_init(&j, stdout, 1);
    rt_json_begin_object(&j, NULL);
    rt_json_string(&j, "pred_dir", c->pred_dir);
    rt_json_string(&j, "meas_dir", c->meas_dir);
    rt_json_string(&j, "pred_engine", c->pred.engine);
    rt_json_string(&j, "meas_engine", c->meas.engine);
    json_headline(&j, c);
    json_phases(&j, c);
    rt_json_int(&j, "ops_matched", c->ops.n_pair);
    rt_json_number(&j, "ops_mape", c->ops_mape);
    rt_json_number(&j, "phases_mape", c->phases_mape);
    json_worst(&j, c);
    rt_json_begin_object(&j, "unmatched");
    json_unmatched_side(&j, "pred_only", c->ops.pred_only, c->ops.n_pred_only);
    json_unmatched_side(&j, "meas_only", c->ops.meas_only, c->ops.n_meas_only);
    rt_json_end_object(&j);
    rt_json_end_object(&j);
    rt_json_finish(&j);
}

/* ---- command line --------------------------------------------------------------------- */

static void usage(FILE *f)
{
    fprintf(f,
            "usage: rectwin compare PRED_DIR MEAS_DIR [--json] [--top N]\n"
            "\n"
            "Compares two result directories (summary.json and ops.csv, from 'rectwin sim' or\n"
            "rectwin-exec): headline metrics, per-phase seconds and per-op durations\n"
            "(end_s - start_s), with error = (predicted - measured) / measured; n/a where\n"
            "the measured value is 0 or missing. Ops are matched by (rank, name, phase), a\n"
            "repeated key by order of appearance (shown as name#2, name#3, ...); ops on one\n"
            "side only are counted and listed.\n"
            "Then MAPE over ops and over phases, and the N ops with the largest\n"
            "|predicted - measured| in seconds.\n"
            "  --json    one JSON object: headline, phases, ops_mape, phases_mape (percent),\n"
            "            worst_ops, unmatched; rel_err values are fractions, not percent;\n"
            "            n/a is null; occurrence counts repeats of an op's key from 1\n"
            "  --top N   how many worst ops to list (default %d)\n"
            "\nexample: a prediction against a 4-rank CPU run of the same scenario\n"
            "  rectwin compare results/exec-cpu/analytic results/exec-cpu/exec --top 5\n",
            DEFAULT_TOP);
}

static int parse_top(const char *v, long *top)
{
    char *end;
    errno = 0;
    long n = v && *v >= '0' && *v <= '9' ? strtol(v, &end, 10) : -1;
    if (n < 0 || *end || errno == ERANGE || n > MAX_TOP) {
        fprintf(stderr, "rectwin compare: --top needs an integer in [0, %d], got '%s'\n", MAX_TOP,
                v ? v : "");
        return -1;
    }
    *top = n;
    return 0;
}

typedef struct compare_args {
    const char *dir[2];
    int n_dirs, json;
    long top;
} compare_args;

/* Returns -1 to go on, else the exit status (0 after --help, 2 on bad usage). */
static int parse_args(int argc, char **argv, compare_args *a)
{
    *a = (compare_args){.top = DEFAULT_TOP};
    for (int i = 1; i < argc; i++) {
        const char *s = argv[i];
        if (!strcmp(s, "--help") || !strcmp(s, "-h")) {
            usage(stdout);
            return 0;
        } else if (!strcmp(s, "--json")) {
            a->json = 1;
        } else if (!strcmp(s, "--top") || !strncmp(s, "--top=", 6)) {
            const char *v = s[5] == '=' ? s + 6 : i + 1 < argc ? argv[++i] : NULL;
            if (parse_top(v, &a->top)) return 2;
        } else if (s[0] == '-') {
            static const char *const options[] = {"--json", "--top", "--help", NULL};
            rt_cli_unknown("rectwin compare", "option", s, options);
            return 2;
        } else if (a->n_dirs == 2) {
            fprintf(stderr, "rectwin compare: unexpected argument '%s'\n", s);
            usage(stderr);
            return 2;
        } else {
            a->dir[a->n_dirs++] = s;
        }
    }
    if (a->n_dirs == 2) return -1;
    usage(stderr);
    return 2;
}

int rt_cmd_compare(int argc, char **argv)
{
    compare_args a;
    int rc = parse_args(argc, argv, &a);
    if (rc >= 0) return rc;
    comparison c = {.pred_dir = a.dir[0], .meas_dir = a.dir[1]};
    rc = compare(&c, a.top, stderr) ? 1 : 0;
    if (rc == 0) {
        if (a.json)
            print_json(&c);
        else
            print_text(&c);
        if (fflush(stdout) != 0 || ferror(stdout)) {
            fprintf(stderr, "rectwin compare: cannot write the output: %s\n", strerror(errno));
            rc = 1;
        }
    }
    comparison_free(&c);
    return rc;
}
