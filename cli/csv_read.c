#include "csv_read.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "input_file.h"

static void csv_error(const rt_csv *c, size_t at, const char *what)
{
    fprintf(c->err, "%s:%d:%zu: %s\n", c->path, c->line, at - c->line_start + 1, what);
}

int rt_csv_load(rt_csv *c, const char *path, FILE *err)
{
    memset(c, 0, sizeof *c);
    c->path = path;
    c->err = err;
    c->line = 1;
    FILE *f = rt_input_open(path, err);
    if (!f) return -1;
    errno = 0;
    c->buf = rt_input_slurp(f, &c->len);
    if (!c->buf) fprintf(err, "%s: cannot read: %s\n", path, errno ? strerror(errno) : "error");
    fclose(f);
    return c->buf ? 0 : -1;
}

void rt_csv_free(rt_csv *c)
{
    free(c->buf);
    c->buf = NULL;
}

void rt_csv_record_free(rt_csv_record *r)
{
    free(r->f);
    memset(r, 0, sizeof *r);
}

int rt_csv_at_end(const rt_csv *c)
{
    return c->pos >= c->len;
}

static void csv_newline(rt_csv *c)
{
    c->line++;
    c->line_start = c->pos;
}

/* Consumes the separator after a field: 0 for ',', 1 for the end of the record (a line break
 * or the end of the file), -1 on anything else. */
static int csv_separator(rt_csv *c)
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
static int csv_quoted(rt_csv *c, char **w)
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

static int csv_plain(rt_csv *c, char **w)
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
static int csv_field(rt_csv *c, char **text, size_t *col)
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

static int record_push(rt_csv_record *r, char *text, int line, size_t col)
{
    if (r->n == r->cap) {
        int cap = r->cap ? 2 * r->cap : 16;
        rt_csv_field *f = realloc(r->f, (size_t)cap * sizeof *f);
        if (!f) return -1;
        r->f = f;
        r->cap = cap;
    }
    r->f[r->n++] = (rt_csv_field){text, line, col};
    return 0;
}

int rt_csv_record_read(rt_csv *c, rt_csv_record *r)
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

int rt_csv_header(rt_csv *c, rt_csv_record *r)
{
    if (c->len == 0) {
        fprintf(c->err, "%s:1:1: empty file; expected the header line\n", c->path);
        return -1;
    }
    if (rt_csv_record_read(c, r)) return -1;
    for (int i = 0; i < r->n; i++) {
        const rt_csv_field *f = &r->f[i];
        for (int j = 0; j < i; j++)
            if (!strcmp(f->text, r->f[j].text)) {
                fprintf(c->err, "%s:%d:%zu: column '%s' appears twice in the header\n", c->path,
                        f->line, f->col, f->text);
                return -1;
            }
    }
    return 0;
}

int rt_csv_column(const rt_csv_record *header, const char *name)
{
    for (int i = 0; i < header->n; i++)
        if (!strcmp(header->f[i].text, name)) return i;
    return -1;
}

int rt_csv_check_width(const rt_csv *c, const rt_csv_record *r, int n)
{
    if (r->n == 1 && !*r->f[0].text) {
        fprintf(c->err, "%s:%d:1: empty line\n", c->path, r->line);
        return -1;
    }
    if (r->n != n) {
        fprintf(c->err, "%s:%d:1: row has %d fields, the header has %d\n", c->path, r->line, r->n,
                n);
        return -1;
    }
    return 0;
}

void rt_csv_value_error(const rt_csv *c, const rt_csv_field *f, const char *name, const char *what)
{
    fprintf(c->err, "%s:%d:%zu: column '%s': %s, got '%s'\n", c->path, f->line, f->col, name, what,
            f->text);
}
