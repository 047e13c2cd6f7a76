/* Criteo TSV reader: one indexing pass at open, then seek + buffered line reads. */
#ifndef _POSIX_C_SOURCE /* fseeko and strdup, when built outside rectwin_core's definitions */
#define _POSIX_C_SOURCE 200809L
#endif
#define _FILE_OFFSET_BITS 64 /* files of the Criteo 1TB set exceed 2 GiB */

#include "criteo.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

/* Bytes asked of the file per read: a few batches' worth of lines, small enough that one
 * sample read at a random index does not pull in much more than it needs. */
#define READ_CHUNK (64 * 1024)
/* Counts below this take log1p from a table: most Criteo integer features are small. */
#define LOG_TABLE 1024

struct rt_criteo {
    FILE *f;
    char *path;
    int n_dense, n_cat;
    int64_t n_lines;
    int64_t *index;  /* index[k]: byte offset of line k * RT_CRITEO_STRIDE */
    size_t max_line; /* longest line that can be valid, line end excluded */
    char *buf;       /* file bytes [pos, len) not yet consumed */
    size_t cap, pos, len;
    int eof;
    int64_t line; /* line number of the line at buf + pos; -1: unknown, seek first */
    float log1p_small[LOG_TABLE];
    signed char hex[256]; /* value of a hex digit, -1 for other bytes */
    float *scratch_dense; /* open's check of the first and last lines writes here */
    uint64_t *scratch_cat;
};

static void say(FILE *err, const char *fmt, ...)
{
    if (!err) return;
    va_list ap;
    va_start(ap, fmt);
    vfprintf(err, fmt, ap);
    va_end(ap);
}

/* FILE:LINE:COL: message (LINE and COL 1-based). */
static void line_error(const rt_criteo *r, FILE *err, int64_t line, size_t col, const char *fmt,
                       ...)
{
    if (!err) return;
    fprintf(err, "%s:%lld:%zu: ", r->path, (long long)line + 1, col);
    va_list ap;
    va_start(ap, fmt);
    vfprintf(err, fmt, ap);
    va_end(ap);
    fputc('\n', err);
}

/* A field as it can be shown in a message whatever bytes it holds: printable ASCII as is,
 * other bytes as \xNN, cut after 24 bytes. */
typedef struct {
    char s[24 * 4 + 4];
} quoted;

static quoted quote(const char *s, size_t n)
{
    quoted q;
    size_t o = 0;
    for (size_t i = 0; i < n && i < 24; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c >= 0x20 && c < 0x7f && c != '\\') {
            q.s[o++] = (char)c;
        } else {
            static const char hex[] = "0123456789abcdef";
            q.s[o++] = '\\';
            q.s[o++] = 'x';
            q.s[o++] = hex[c >> 4];
            q.s[o++] = hex[c & 15];
        }
    }
    if (n > 24) q.s[o++] = '.', q.s[o++] = '.', q.s[o++] = '.';
    q.s[o] = '\0';
    return q;
}

static int hex_digit(unsigned char c)
{
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

/* Finds what is wrong with a line that parse_line rejected and says so on ERR. Kept apart from
 * parse_line, which only has to be fast and to reject exactly the lines this explains. Returns
 * 0 when the line is fine (then parse_line has a bug). */
static int diagnose(const rt_criteo *r, int64_t line, const char *s, size_t n, FILE *err)
{
    if (n > 0 && s[n - 1] == '\r') n--;
    /* Fields are counted before any is checked: a file written for another model (other
     * feature counts) then reads as what it is, not as a bad value in a shifted column. */
    size_t want = 1 + (size_t)r->n_dense + (size_t)r->n_cat, have = 1;
    for (const char *t = s, *end = s + n; (t = memchr(t, '\t', (size_t)(end - t))); t++)
        have++;
    if (have != want) {
        line_error(r, err, line, n + 1,
                   "%sexpected %zu tab-separated fields (label, %d integer, %d categorical), "
                   "found %zu",
                   n == 0 ? "empty line; " : "", want, r->n_dense, r->n_cat, have);
        return -1;
    }

    size_t p = 0; /* start of the current field */
    for (size_t f = 0; f < want; f++) {
        const char *tab = memchr(s + p, '\t', n - p);
        size_t e = tab ? (size_t)(tab - s) : n, len = e - p;
        const char *v = s + p;
        if (f == 0) {
            if (len != 1 || (v[0] != '0' && v[0] != '1')) {
                line_error(r, err, line, p + 1, "label must be 0 or 1, found '%s'",
                           quote(v, len).s);
                return -1;
            }
        } else if (f <= (size_t)r->n_dense) {
            int j = (int)f - 1;
            if (len > RT_CRITEO_INT_CHARS) {
                line_error(r, err, line, p + 1, "I%d: '%s' has more than %d characters", j + 1,
                           quote(v, len).s, RT_CRITEO_INT_CHARS);
                return -1;
            }
            size_t k = len > 0 && v[0] == '-';
            if (len > 0 && k == len) {
                line_error(r, err, line, p + 1, "I%d: '%s' is not an integer", j + 1,
                           quote(v, len).s);
                return -1;
            }
            /* 20 characters can exceed int64: the reader accepts what a writer of 64-bit
             * counts can produce, and nothing beyond it. */
            uint64_t x = 0, limit = (uint64_t)INT64_MAX + (k == 1);
            for (; k < len; k++) {
                unsigned d = (unsigned char)v[k] - (unsigned)'0';
                if (d > 9) {
                    line_error(r, err, line, p + k + 1, "I%d: '%s' is not an integer", j + 1,
                               quote(v, len).s);
                    return -1;
                }
                if (x > (limit - d) / 10) {
                    line_error(r, err, line, p + 1, "I%d: '%s' does not fit in 64 bits", j + 1,
                               quote(v, len).s);
                    return -1;
                }
                x = x * 10 + d;
            }
        } else {
            int c = (int)f - 1 - r->n_dense;
            if (len > RT_CRITEO_HEX_CHARS) {
                line_error(r, err, line, p + 1, "C%d: '%s' has more than %d hex digits", c + 1,
                           quote(v, len).s, RT_CRITEO_HEX_CHARS);
                return -1;
            }
            for (size_t k = 0; k < len; k++)
                if (hex_digit((unsigned char)v[k]) < 0) {
                    line_error(r, err, line, p + k + 1, "C%d: '%s' is not hexadecimal", c + 1,
                               quote(v, len).s);
                    return -1;
                }
        }
        p = e + 1;
    }
    return 0;
}

/* Whether the decimal digits [D, END) (19 or more: rare) fit in int64, or its negation. */
static int fits_int64(const char *d, const char *end, int neg)
{
    uint64_t x = 0, limit = (uint64_t)INT64_MAX + (neg != 0);
    for (; d < end; d++) {
        unsigned v = (unsigned)(*d - '0');
        if (x > (limit - v) / 10) return 0;
        x = x * 10 + v;
    }
    return 1;
}

/* Parses one line (without its '\n') of line number LINE into one sample, in a single pass
 * without calls: this loop is most of the reader's time. */
static int parse_line(const rt_criteo *r, int64_t line, const char *s, size_t n,
                      const uint64_t *rows, float *label, float *dense, uint64_t *cat, FILE *err)
{
    if (n > 0 && s[n - 1] == '\r') n--;
    const char *p = s, *end = s + n;
    if (n == 0 || (p[0] != '0' && p[0] != '1')) goto bad;
    *label = (float)(p[0] - '0');
    p++;
    for (int j = 0; j < r->n_dense; j++) {
        if (p == end || *p != '\t') goto bad;
        const char *v = ++p;
        int neg = p < end && *p == '-';
        p += neg;
        const char *digits = p;
        uint64_t x = 0; /* up to 19 digits cannot wrap */
        while (p < end && (unsigned)(*p - '0') <= 9)
            x = x * 10 + (unsigned)(*p++ - '0');
        if ((neg && p == digits) || p - v > RT_CRITEO_INT_CHARS ||
            (p - digits >= 19 && !fits_int64(digits, p, neg)))
            goto bad;
        /* Negative counts (Criteo's I2 has some) and missing ones carry no count. */
        if (neg) x = 0;
        dense[j] = x < LOG_TABLE ? r->log1p_small[x] : (float)log1p((double)x);
    }
    for (int c = 0; c < r->n_cat; c++) {
        if (p == end || *p != '\t') goto bad;
        const char *v = ++p;
        uint64_t h = 0;
        int d;
        while (p < end && (d = r->hex[(unsigned char)*p]) >= 0)
            h = h << 4 | (unsigned)d, p++;
        if (p - v > RT_CRITEO_HEX_CHARS) goto bad;
        /* At most 8 hex digits: h < 2^32, and when h >= rows the 32-bit division (several
         * times faster than the 64-bit one) is exact. */
        cat[c] = rows && h >= rows[c] ? (uint32_t)h % (uint32_t)rows[c] : h;
    }
    if (p == end) return 0;
bad:
    if (!diagnose(r, line, s, n, err))
        line_error(r, err, line, 1, "line rejected without a reason (a bug of the reader)");
    return -1;
}

/* The next line at buf + pos, refilling the buffer as needed. Returns 1 with the line (without
 * its '\n') in *S, *N; 0 at end of file; -1 on a read error or a line too long to be valid.
 * SKIP: only the line's end matters (*S, *N are not set), so no length is too long: a bad
 * line fails the reads that include it, not those that pass over it. */
static int next_line(rt_criteo *r, FILE *err, int skip, const char **s, size_t *n)
{
    for (;;) {
        char *start = r->buf + r->pos;
        size_t avail = r->len - r->pos;
        char *nl = avail ? memchr(start, '\n', avail) : NULL;
        /* Bounding lines bounds the buffer: a file of random bytes without line ends must
         * not make the reader allocate the whole file. Lines whose end is already buffered
         * are held to the same bound, so the message does not depend on buffer boundaries. */
        if (!skip && (nl ? (size_t)(nl - start) > r->max_line : avail > r->max_line)) {
            line_error(r, err, r->line, 1,
                       "line longer than %zu bytes, the most %d integer and %d categorical "
                       "features can take",
                       r->max_line, r->n_dense, r->n_cat);
            return -1;
        }
        if (nl || (r->eof && avail)) {
            size_t len = nl ? (size_t)(nl - start) : avail;
            if (!skip) *s = start, *n = len;
            r->pos += nl ? len + 1 : len;
            return 1;
        }
        if (r->eof) return 0;
        if (skip) avail = 0;
        memmove(r->buf, start, avail);
        r->pos = 0;
        r->len = avail;
        size_t room = r->cap - r->len, got = fread(r->buf + r->len, 1, room, r->f);
        if (got < room) {
            if (ferror(r->f)) {
                say(err, "%s: read error: %s\n", r->path, strerror(errno));
                return -1;
            }
            r->eof = 1;
        }
        r->len += got;
    }
}

/* Positions the buffer at line LINE (0 <= LINE < n_lines). */
static int seek_line(rt_criteo *r, int64_t line, FILE *err)
{
    /* Skipping forward is cheaper than a seek and a refill while it stays under the at most
     * RT_CRITEO_STRIDE - 1 lines that a seek to the index entry would skip anyway. */
    if (r->line < 0 || r->line > line || line - r->line >= RT_CRITEO_STRIDE) {
        int64_t block = line / RT_CRITEO_STRIDE;
        if (fseeko(r->f, (off_t)r->index[block], SEEK_SET) != 0) {
            say(err, "%s: seek error: %s\n", r->path, strerror(errno));
            r->line = -1;
            return -1;
        }
        r->pos = r->len = 0;
        r->eof = 0;
        r->line = block * RT_CRITEO_STRIDE;
    }
    while (r->line < line) {
        int rc = next_line(r, err, 1, NULL, NULL);
        if (rc <= 0) {
            if (rc == 0)
                line_error(r, err, r->line, 1,
                           "the file ended early (changed since it was opened?)");
            r->line = -1;
            return -1;
        }
        r->line++;
    }
    return 0;
}

/* Reads and parses line LINE into one sample. On an error the position is forgotten, so the
 * next read seeks rather than trusting a half-consumed buffer. */
static int read_sample(rt_criteo *r, int64_t line, const uint64_t *rows, float *label, float *dense,
                       uint64_t *cat, FILE *err)
{
    if (seek_line(r, line, err)) return -1;
    const char *s;
    size_t n;
    int rc = next_line(r, err, 0, &s, &n);
    if (rc == 0) line_error(r, err, line, 1, "the file ended early (changed since it was opened?)");
    if (rc <= 0 || parse_line(r, line, s, n, rows, label, dense, cat, err)) {
        r->line = -1;
        return -1;
    }
    r->line++;
    return 0;
}

/* One pass over the file: counts lines and records where every RT_CRITEO_STRIDE-th starts. */
static int build_index(rt_criteo *r, FILE *err)
{
    size_t cap = 1024, used = 1;
    r->index = malloc(cap * sizeof *r->index);
    if (!r->index) {
        say(err, "%s: out of memory for the line index\n", r->path);
        return -1;
    }
    r->index[0] = 0;
    int64_t bytes = 0, newlines = 0;
    char last = '\n';
    for (;;) {
        size_t got = fread(r->buf, 1, r->cap, r->f);
        if (got == 0) break;
        for (const char *t = r->buf, *end = r->buf + got; (t = memchr(t, '\n', (size_t)(end - t)));
             t++) {
            if (++newlines % RT_CRITEO_STRIDE) continue;
            if (used == cap) {
                if (cap > SIZE_MAX / 2 / sizeof *r->index) {
                    say(err, "%s: too many lines to index\n", r->path);
                    return -1;
                }
                int64_t *grown = realloc(r->index, cap * 2 * sizeof *r->index);
                if (!grown) {
                    say(err, "%s: out of memory for the line index\n", r->path);
                    return -1;
                }
                r->index = grown;
                cap *= 2;
            }
            r->index[used++] = bytes + (t - r->buf) + 1;
        }
        bytes += (int64_t)got;
        last = r->buf[got - 1];
    }
    if (ferror(r->f)) {
        say(err, "%s: read error: %s\n", r->path, strerror(errno));
        return -1;
    }
    if (bytes == 0) {
        say(err, "%s: empty file, no samples\n", r->path);
        return -1;
    }
    if ((int64_t)(off_t)bytes != bytes) {
        say(err, "%s: file too large to seek in on this system\n", r->path);
        return -1;
    }
    r->n_lines = newlines + (last != '\n');
    return 0;
}

rt_criteo *rt_criteo_open(const char *path, int n_dense, int n_cat, FILE *err)
{
    if (!path || n_dense < 0 || n_cat < 0 || n_dense > RT_CRITEO_MAX_FEATURES ||
        n_cat > RT_CRITEO_MAX_FEATURES) {
        say(err, "%s: cannot read %d integer and %d categorical features (0 to %d each)\n",
            path ? path : "(no path)", n_dense, n_cat, RT_CRITEO_MAX_FEATURES);
        return NULL;
    }
    rt_criteo *r = calloc(1, sizeof *r);
    if (!r || !(r->path = strdup(path))) {
        say(err, "%s: out of memory\n", path);
        free(r);
        return NULL;
    }
    r->n_dense = n_dense;
    r->n_cat = n_cat;
    r->line = -1;
    /* label + each field with its tab + a '\r' before the '\n' */
    r->max_line = 1 + (size_t)n_dense * (1 + RT_CRITEO_INT_CHARS) +
                  (size_t)n_cat * (1 + RT_CRITEO_HEX_CHARS) + 1;
    /* Room for a whole longest line plus a full chunk, so every refill makes progress. */
    r->cap = r->max_line + READ_CHUNK;
    r->buf = malloc(r->cap);
    r->scratch_dense = malloc(((size_t)n_dense + 1) * sizeof *r->scratch_dense);
    r->scratch_cat = malloc(((size_t)n_cat + 1) * sizeof *r->scratch_cat);
    if (!r->buf || !r->scratch_dense || !r->scratch_cat) {
        say(err, "%s: out of memory\n", path);
        rt_criteo_close(r);
        return NULL;
    }
    for (int x = 0; x < LOG_TABLE; x++)
        r->log1p_small[x] = (float)log1p((double)x);
    for (int c = 0; c < 256; c++)
        r->hex[c] = (signed char)hex_digit((unsigned char)c);
    r->f = fopen(path, "rb");
    if (!r->f) {
        say(err, "%s: %s\n", path, strerror(errno));
        rt_criteo_close(r);
        return NULL;
    }
    float label;
    if (build_index(r, err) ||
        read_sample(r, 0, NULL, &label, r->scratch_dense, r->scratch_cat, err) ||
        read_sample(r, r->n_lines - 1, NULL, &label, r->scratch_dense, r->scratch_cat, err)) {
        rt_criteo_close(r);
        return NULL;
    }
    return r;
}

void rt_criteo_close(rt_criteo *r)
{
    if (!r) return;
    if (r->f) fclose(r->f); /* read-only: nothing to lose on a failed close */
    free(r->path);
    free(r->index);
    free(r->buf);
    free(r->scratch_dense);
    free(r->scratch_cat);
    free(r);
}

int64_t rt_criteo_samples(const rt_criteo *r)
{
    return r ? r->n_lines : 0;
}

int rt_criteo_read(rt_criteo *r, int64_t first, int n, const uint64_t *rows, float *labels,
                   float *dense, uint64_t *cat, FILE *err)
{
    if (!r) {
        say(err, "rt_criteo_read: no reader\n");
        return -1;
    }
    if (first < 0 || n < 0 ||
        (n > 0 && (!labels || (r->n_dense > 0 && !dense) || (r->n_cat > 0 && !cat)))) {
        say(err, "%s: bad read request (first sample %lld, %d samples, %s outputs)\n", r->path,
            (long long)first, n, labels ? "with" : "without");
        return -1;
    }
    if (rows)
        for (int c = 0; c < r->n_cat; c++)
            if (rows[c] == 0) {
                say(err, "%s: table of C%d has 0 rows, no ID can index it\n", r->path, c + 1);
                return -1;
            }
    int64_t line = first % r->n_lines;
    for (int i = 0; i < n; i++) {
        /* No offset on a NULL output: that is undefined even when it is 0. */
        float *d = r->n_dense ? dense + (size_t)i * (size_t)r->n_dense : NULL;
        uint64_t *c = r->n_cat ? cat + (size_t)i * (size_t)r->n_cat : NULL;
        if (read_sample(r, line, rows, &labels[i], d, c, err)) return -1;
        if (++line == r->n_lines) line = 0;
    }
    return 0;
}
