/* Criteo TSV reader: a generated 100-line file (missing fields, negative and 64-bit counts,
 * short and upper-case hashes, "\r\n" lines, no final line end) parses to the values it was
 * written from at any offset, wrapping around; malformed lines fail with FILE:LINE:COL; random
 * and mutated files only ever give errors. */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "criteo.h"

#define ND 13
#define NC 26
#define NF (1 + ND + NC)
#define LINES 100

static char *tmpdir(void)
{
    char *d = strdup("/tmp/rt_test_criteo_XXXXXX");
    assert_non_null(d);
    assert_non_null(mkdtemp(d));
    return d;
}

static void rm_rf(char *dir)
{
    char cmd[512];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    assert_int_equal(system(cmd), 0);
    free(dir);
}

static char *path_in(const char *dir, const char *name)
{
    char *p = malloc(strlen(dir) + strlen(name) + 2);
    assert_non_null(p);
    sprintf(p, "%s/%s", dir, name);
    return p;
}

static void write_bytes(const char *path, const char *bytes, size_t n)
{
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(bytes, 1, n, f), n);
    assert_int_equal(fclose(f), 0);
}

/* Error text capture. */
typedef struct {
    char *text;
    size_t len;
    FILE *f;
} capture;

static FILE *cap_open(capture *c)
{
    c->text = NULL;
    c->len = 0;
    c->f = open_memstream(&c->text, &c->len);
    assert_non_null(c->f);
    return c->f;
}

static char *cap_close(capture *c)
{
    assert_int_equal(fclose(c->f), 0);
    return c->text;
}

/* ---- the known values of the generated file ---- */

static int label_of(int i)
{
    return (i * 7) % 3 == 0;
}

static int int_missing(int i, int j)
{
    return (i + 2 * j) % 7 == 0;
}

static int64_t int_value(int i, int j)
{
    if (i == 3 && j == 0) return INT64_MAX;
    if (i == 4 && j == 1) return INT64_MIN;
    if ((i + j) % 5 == 0) return -(int64_t)(i + j + 1);
    if ((i * 13 + j) % 17 == 0) return (int64_t)1 << (10 + (i + j) % 40); /* past the table */
    if (j == 12) return 1023 + i % 3; /* both sides of the log table's end */
    return (int64_t)((i * 31 + j * 7) % 300);
}

static int cat_missing(int i, int c)
{
    return (i + c) % 11 == 0;
}

static uint64_t cat_value(int i, int c)
{
    if (i == 7 && c == 5) return 0xffffffffu;
    if (i == 8 && c == 5) return 0;
    if (i == 9 && c == 6) return 65536; /* equal to its table's size: ID 0 */
    return (uint32_t)((uint32_t)i * 2654435761u ^ (uint32_t)(c + 1) * 40503u * 2246822519u);
}

static const uint64_t ROWS[NC] = {1,        2,        UINT64_MAX, (uint64_t)1 << 40,
                                  3,        1000,     65536,      99991,
                                  7,        1u << 31, 12345,      100,
                                  1000000,  17,       256,        4096,
                                  33,       5,        100003,     11,
                                  1u << 20, 77,       88,         99,
                                  1 << 24,  10};

/* The fields of line I as text: I fields in decimal, C fields as %08x, %08X or %x. */
static void fields_of(int i, char f[NF][32])
{
    snprintf(f[0], 32, "%d", label_of(i));
    for (int j = 0; j < ND; j++) {
        if (int_missing(i, j))
            f[1 + j][0] = '\0';
        else
            snprintf(f[1 + j], 32, "%lld", (long long)int_value(i, j));
    }
    for (int c = 0; c < NC; c++) {
        char *s = f[1 + ND + c];
        unsigned v = (unsigned)cat_value(i, c);
        if (cat_missing(i, c))
            s[0] = '\0';
        else if (i % 4 == 1)
            snprintf(s, 32, "%08X", v);
        else if (i % 4 == 2)
            snprintf(s, 32, "%x", v);
        else
            snprintf(s, 32, "%08x", v);
    }
}

/* Joins fields with tabs into OUT; returns the length. */
static size_t join(char f[][32], int n, char *out)
{
    size_t o = 0;
    for (int k = 0; k < n; k++) {
        if (k) out[o++] = '\t';
        size_t l = strlen(f[k]);
        memcpy(out + o, f[k], l);
        o += l;
    }
    out[o] = '\0';
    return o;
}

static void good_line(int i, char *out)
{
    char f[NF][32];
    fields_of(i, f);
    join(f, NF, out);
}

/* The 100-line file: every 13th line ends "\r\n", the last line has no line end. */
static char *write_known(const char *dir)
{
    char *path = path_in(dir, "known.tsv");
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    for (int i = 0; i < LINES; i++) {
        char line[1024];
        good_line(i, line);
        const char *end = i == LINES - 1 ? "" : i % 13 == 0 ? "\r\n" : "\n";
        assert_true(fprintf(f, "%s%s", line, end) > 0);
    }
    assert_int_equal(fclose(f), 0);
    return path;
}

/* Checks one sample read against line I of the known file. */
static void check_sample(int i, float label, const float *dense, const uint64_t *cat,
                         const uint64_t *rows)
{
    assert_true(label == (float)label_of(i));
    for (int j = 0; j < ND; j++) {
        int64_t x = int_missing(i, j) ? 0 : int_value(i, j);
        float want = (float)log1p((double)(x > 0 ? x : 0));
        if (dense[j] != want)
            fail_msg("line %d I%d: %.9g, want %.9g", i + 1, j + 1, dense[j], want);
    }
    for (int c = 0; c < NC; c++) {
        uint64_t h = cat_missing(i, c) ? 0 : cat_value(i, c);
        uint64_t want = rows ? h % rows[c] : h;
        if (cat[c] != want)
            fail_msg("line %d C%d: %llu, want %llu", i + 1, c + 1, (unsigned long long)cat[c],
                     (unsigned long long)want);
    }
}

/* Reads N samples from FIRST and checks each against its line. */
static void read_and_check(rt_criteo *r, int64_t first, int n, const uint64_t *rows)
{
    float *labels = malloc((size_t)n * sizeof *labels);
    float *dense = malloc((size_t)n * ND * sizeof *dense);
    uint64_t *cat = malloc((size_t)n * NC * sizeof *cat);
    assert_true(labels && dense && cat);
    capture c;
    int rc = rt_criteo_read(r, first, n, rows, labels, dense, cat, cap_open(&c));
    char *msg = cap_close(&c);
    if (rc) fail_msg("read(%lld, %d): %s", (long long)first, n, msg);
    assert_int_equal(msg[0], '\0');
    free(msg);
    for (int k = 0; k < n; k++)
        check_sample((int)((first + k) % LINES), labels[k], dense + (size_t)k * ND,
                     cat + (size_t)k * NC, rows);
    free(labels);
    free(dense);
    free(cat);
}

static void test_known_values(void **state)
{
    (void)state;
    char *dir = tmpdir();
    char *path = write_known(dir);
    capture c;
    rt_criteo *r = rt_criteo_open(path, ND, NC, cap_open(&c));
    char *msg = cap_close(&c);
    if (!r) fail_msg("open: %s", msg);
    free(msg);
    assert_int_equal(rt_criteo_samples(r), LINES);

    read_and_check(r, 0, LINES, ROWS);
    read_and_check(r, 0, LINES, NULL); /* raw hashes */
    read_and_check(r, 95, 10, ROWS);   /* wraps past the unterminated last line */
    read_and_check(r, 1000000007LL * 100 + 37, 250, ROWS); /* wraps twice */
    read_and_check(r, INT64_MAX - 5, 3, ROWS);
    read_and_check(r, 99, 1, ROWS);
    read_and_check(r, 64, 1, ROWS); /* an index entry's first line */
    read_and_check(r, 63, 2, ROWS);
    /* Two ranks reading disjoint slices of a global batch of 16, for many iterations. */
    for (int it = 0; it < 40; it++)
        for (int rank = 0; rank < 2; rank++)
            read_and_check(r, it * 16 + rank * 8, 8, ROWS);
    /* Backwards, so every read seeks. */
    for (int first = 99; first >= 0; first -= 7)
        read_and_check(r, first, 3, ROWS);
    /* Random offsets and sizes. */
    uint64_t s = 12345;
    for (int k = 0; k < 300; k++) {
        s = s * 6364136223846793005u + 1442695040888963407u;
        int64_t first = (int64_t)(s >> 33) % 1000;
        int n = (int)((s >> 13) % 130) + 1;
        read_and_check(r, first, n, ROWS);
    }
    read_and_check(r, 5, 0, ROWS);
    rt_criteo_close(r);
    free(path);
    rm_rf(dir);
}

/* Bad requests fail without touching the file position's correctness. */
static void test_bad_requests(void **state)
{
    (void)state;
    char *dir = tmpdir();
    char *path = write_known(dir);
    rt_criteo *r = rt_criteo_open(path, ND, NC, stderr);
    assert_non_null(r);
    float labels[4], dense[4 * ND];
    uint64_t cat[4 * NC], rows[NC];
    memcpy(rows, ROWS, sizeof rows);

    capture c;
    assert_int_equal(rt_criteo_read(r, -1, 4, ROWS, labels, dense, cat, cap_open(&c)), -1);
    char *msg = cap_close(&c);
    assert_non_null(strstr(msg, "bad read request"));
    free(msg);
    assert_int_equal(rt_criteo_read(r, 0, -1, ROWS, labels, dense, cat, cap_open(&c)), -1);
    free(cap_close(&c));
    assert_int_equal(rt_criteo_read(r, 0, 4, ROWS, labels, NULL, cat, cap_open(&c)), -1);
    free(cap_close(&c));
    rows[7] = 0;
    assert_int_equal(rt_criteo_read(r, 0, 4, rows, labels, dense, cat, cap_open(&c)), -1);
    msg = cap_close(&c);
    assert_non_null(strstr(msg, "C8 has 0 rows"));
    free(msg);
    assert_int_equal(rt_criteo_read(NULL, 0, 4, ROWS, labels, dense, cat, cap_open(&c)), -1);
    free(cap_close(&c));
    read_and_check(r, 10, 4, ROWS);
    rt_criteo_close(r);
    rt_criteo_close(NULL);

    /* Opening: missing file, empty file, bad feature counts. */
    char *none = path_in(dir, "none.tsv");
    assert_null(rt_criteo_open(none, ND, NC, cap_open(&c)));
    msg = cap_close(&c);
    assert_true(strncmp(msg, none, strlen(none)) == 0);
    assert_non_null(strstr(msg, "No such file"));
    free(msg);
    char *empty = path_in(dir, "empty.tsv");
    write_bytes(empty, "", 0);
    assert_null(rt_criteo_open(empty, ND, NC, cap_open(&c)));
    msg = cap_close(&c);
    assert_true(strncmp(msg, empty, strlen(empty)) == 0);
    assert_non_null(strstr(msg, "empty file"));
    free(msg);
    assert_null(rt_criteo_open(path, -1, NC, cap_open(&c)));
    free(cap_close(&c));
    assert_null(rt_criteo_open(path, ND, RT_CRITEO_MAX_FEATURES + 1, cap_open(&c)));
    free(cap_close(&c));
    /* The model's feature counts do not match the file's. */
    assert_null(rt_criteo_open(path, 13, 25, cap_open(&c)));
    msg = cap_close(&c);
    char want[600];
    snprintf(want, sizeof want, "%s:1:", path);
    assert_true(strncmp(msg, want, strlen(want)) == 0);
    assert_non_null(strstr(msg, "expected 39 tab-separated fields (label, 13 integer, 25 "
                                "categorical), found 40"));
    free(msg);
    /* Directories open under POSIX but do not read. */
    assert_null(rt_criteo_open(dir, ND, NC, cap_open(&c)));
    msg = cap_close(&c);
    assert_true(strlen(msg) > 0);
    free(msg);
    /* Fewer features: a file of label-only lines, "\r\n" included, no final line end. */
    char *small = path_in(dir, "small.tsv");
    write_bytes(small, "1\r\n0\n1", 6);
    r = rt_criteo_open(small, 0, 0, stderr);
    assert_non_null(r);
    assert_int_equal(rt_criteo_samples(r), 3);
    assert_int_equal(rt_criteo_read(r, 2, 4, NULL, labels, NULL, NULL, stderr), 0);
    assert_true(labels[0] == 1 && labels[1] == 1 && labels[2] == 0 && labels[3] == 1);
    rt_criteo_close(r);
    free(small);
    free(none);
    free(empty);
    free(path);
    rm_rf(dir);
}

/* A 10-line file whose line BAD (0-based) is LINE; reading all of it must fail with
 * PATH:BAD+1:COL and WHAT in the message (COL 0: not checked). */
static void expect_bad_line(const char *dir, int bad, const char *line, size_t n, size_t col,
                            const char *what)
{
    char *path = path_in(dir, "bad.tsv");
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    for (int i = 0; i < 10; i++) {
        char good[1024];
        good_line(i, good);
        if (i == bad)
            assert_int_equal(fwrite(line, 1, n, f), n);
        else
            assert_true(fputs(good, f) >= 0);
        assert_true(fputc('\n', f) == '\n');
    }
    assert_int_equal(fclose(f), 0);

    char prefix[600];
    if (col)
        snprintf(prefix, sizeof prefix, "%s:%d:%zu: ", path, bad + 1, col);
    else
        snprintf(prefix, sizeof prefix, "%s:%d:", path, bad + 1);
    capture c;
    rt_criteo *r = rt_criteo_open(path, ND, NC, cap_open(&c));
    char *msg = cap_close(&c);
    if (bad == 0 || bad == 9) {
        /* The first and last lines are checked at open. */
        assert_null(r);
    } else {
        if (!r) fail_msg("open: %s", msg);
        free(msg);
        float labels[10], dense[10 * ND];
        uint64_t cat[10 * NC];
        /* Lines before the bad one read fine; a read that covers it fails ... */
        assert_int_equal(rt_criteo_read(r, 0, bad, ROWS, labels, dense, cat, stderr), 0);
        assert_int_equal(rt_criteo_read(r, 0, 10, ROWS, labels, dense, cat, cap_open(&c)), -1);
        msg = cap_close(&c);
        /* ... and the reader recovers for the lines after it. */
        assert_int_equal(rt_criteo_read(r, bad + 1, 9 - bad, ROWS, labels, dense, cat, stderr), 0);
        for (int k = 0; k < 9 - bad; k++)
            check_sample(bad + 1 + k, labels[k], dense + k * ND, cat + k * NC, ROWS);
        rt_criteo_close(r);
    }
    if (strncmp(msg, prefix, strlen(prefix)) != 0 || !strstr(msg, what))
        fail_msg("got '%s', want '%s...%s'", msg, prefix, what);
    free(msg);
    assert_int_equal(remove(path), 0);
    free(path);
}

static void test_malformed(void **state)
{
    (void)state;
    char *dir = tmpdir();
    char f[NF + 1][32], line[2048];
    size_t n;

    fields_of(5, f);
    n = join(f, NF - 1, line);
    expect_bad_line(dir, 5, line, n, n + 1,
                    "expected 40 tab-separated fields (label, 13 integer, 26 categorical), "
                    "found 39");
    fields_of(5, f);
    strcpy(f[NF], "0");
    n = join(f, NF + 1, line);
    expect_bad_line(dir, 5, line, n, n + 1, "found 41");
    expect_bad_line(dir, 5, "", 0, 1, "empty line; expected 40");

    fields_of(6, f);
    strcpy(f[0], "2");
    n = join(f, NF, line);
    expect_bad_line(dir, 6, line, n, 1, "label must be 0 or 1, found '2'");
    f[0][0] = '\0';
    n = join(f, NF, line);
    expect_bad_line(dir, 6, line, n, 1, "label must be 0 or 1, found ''");
    strcpy(f[0], "01");
    n = join(f, NF, line);
    expect_bad_line(dir, 6, line, n, 1, "found '01'");

    /* label "0", I1 "5", I2 "12a": the 'a' is at column 7. */
    fields_of(2, f);
    strcpy(f[0], "0");
    strcpy(f[1], "5");
    strcpy(f[2], "12a");
    n = join(f, NF, line);
    expect_bad_line(dir, 2, line, n, 7, "I2: '12a' is not an integer");
    strcpy(f[2], "+5");
    n = join(f, NF, line);
    expect_bad_line(dir, 2, line, n, 5, "I2: '+5' is not an integer");
    strcpy(f[2], "-");
    n = join(f, NF, line);
    expect_bad_line(dir, 2, line, n, 5, "I2: '-' is not an integer");
    strcpy(f[2], "1.5");
    n = join(f, NF, line);
    expect_bad_line(dir, 2, line, n, 6, "not an integer");
    strcpy(f[2], "9223372036854775808");
    n = join(f, NF, line);
    expect_bad_line(dir, 2, line, n, 5, "I2: '9223372036854775808' does not fit in 64 bits");
    strcpy(f[2], "-9223372036854775809");
    n = join(f, NF, line);
    expect_bad_line(dir, 2, line, n, 5, "does not fit in 64 bits");
    strcpy(f[2], "000000000000000000001");
    n = join(f, NF, line);
    expect_bad_line(dir, 2, line, n, 5, "has more than 20 characters");
    strcpy(f[2], "1\r");
    n = join(f, NF, line);
    expect_bad_line(dir, 2, line, n, 6, "I2: '1\\x0d' is not an integer");

    /* C1 starts after the label and 13 I fields. */
    fields_of(3, f);
    strcpy(f[0], "1");
    for (int j = 1; j <= ND; j++)
        strcpy(f[j], "7");
    size_t c1 = 1 + 2 * ND + 1 + 1;
    strcpy(f[1 + ND], "zz123456");
    n = join(f, NF, line);
    expect_bad_line(dir, 3, line, n, c1, "C1: 'zz123456' is not hexadecimal");
    strcpy(f[1 + ND], "12g4");
    n = join(f, NF, line);
    expect_bad_line(dir, 3, line, n, c1 + 2, "C1: '12g4' is not hexadecimal");
    strcpy(f[1 + ND], "0x12");
    n = join(f, NF, line);
    expect_bad_line(dir, 3, line, n, c1 + 1, "not hexadecimal");
    strcpy(f[1 + ND], "123456789");
    n = join(f, NF, line);
    expect_bad_line(dir, 3, line, n, c1, "C1: '123456789' has more than 8 hex digits");
    strcpy(f[1 + ND], "ab\001cd");
    n = join(f, NF, line);
    expect_bad_line(dir, 3, line, n, c1 + 2, "C1: 'ab\\x01cd' is not hexadecimal");
    /* A NUL byte is a byte like any other. */
    strcpy(f[1 + ND], "abXcd");
    n = join(f, NF, line);
    line[c1 + 1] = '\0';
    expect_bad_line(dir, 3, line, n, c1 + 2, "C1: 'ab\\x00cd' is not hexadecimal");

    /* A line longer than any valid one. */
    char long_line[8192];
    memset(long_line, 'a', sizeof long_line);
    expect_bad_line(dir, 4, long_line, sizeof long_line, 1, "line longer than");

    /* The first and last lines fail at open. */
    expect_bad_line(dir, 0, "2", 1, 2, "expected 40");
    expect_bad_line(dir, 9, "x", 1, 2, "expected 40");
    rm_rf(dir);
}

/* MSG is "PATH:LINE:COL: what", LINE in 1..LINES, and not the reader's own-bug report. */
static void assert_located(const char *msg, const char *path, int64_t lines)
{
    size_t pl = strlen(path);
    long long line = 0;
    size_t col = 0;
    int used = 0;
    if (strncmp(msg, path, pl) != 0 || sscanf(msg + pl, ":%lld:%zu: %n", &line, &col, &used) != 2 ||
        used == 0 || line < 1 || line > lines || col < 1 || strstr(msg, "without a reason"))
        fail_msg("not located in %s: '%s'", path, msg);
}

/* A second, plain parser of one line (strtoll, strtoull) to check the reader against. */
static int ref_parse(const char *s, size_t n, int nd, int nc, const uint64_t *rows, float *label,
                     float *dense, uint64_t *cat)
{
    if (n > 0 && s[n - 1] == '\r') n--;
    int f = 0;
    for (size_t p = 0;; f++) {
        const char *tab = memchr(s + p, '\t', n - p);
        size_t e = tab ? (size_t)(tab - s) : n, len = e - p;
        char v[32];
        if (f > nd + nc || len > 20) return -1;
        memcpy(v, s + p, len);
        v[len] = '\0';
        if (f == 0) {
            if (len != 1 || (v[0] != '0' && v[0] != '1')) return -1;
            *label = (float)atoi(v);
        } else if (f <= nd) {
            long long x = 0;
            if (len) {
                for (size_t k = v[0] == '-'; k < len; k++)
                    if (v[k] < '0' || v[k] > '9') return -1;
                if (strcmp(v, "-") == 0) return -1;
                errno = 0;
                x = strtoll(v, NULL, 10);
                if (errno == ERANGE) return -1;
            }
            dense[f - 1] = (float)log1p((double)(x > 0 ? x : 0));
        } else {
            if (len > 8) return -1;
            for (size_t k = 0; k < len; k++)
                if (!strchr("0123456789abcdefABCDEF", v[k]) || v[k] == '\0') return -1;
            uint64_t h = len ? strtoull(v, NULL, 16) : 0;
            cat[f - 1 - nd] = h % rows[f - 1 - nd];
        }
        if (!tab) break;
        p = e + 1;
    }
    return f == nd + nc ? 0 : -1;
}

/* Whatever the BYTES of PATH, open and read return NULL or -1 with FILE: or FILE:LINE:COL:
 * first; each line reads as the plain parser says. */
static void fuzz_one(const char *path, const char *bytes, size_t size, int nd, int nc, uint64_t *s)
{
    write_bytes(path, bytes, size);
    capture c;
    rt_criteo *r = rt_criteo_open(path, nd, nc, cap_open(&c));
    char *msg = cap_close(&c);
    if (!r) {
        if (strstr(msg, ": empty file"))
            assert_true(strncmp(msg, path, strlen(path)) == 0 && size == 0);
        else
            assert_located(msg, path, INT64_MAX);
        free(msg);
        return;
    }
    free(msg);
    int64_t total = rt_criteo_samples(r);
    assert_true(total >= 1);
    int n = (int)(total < 300 ? total : 300) + 3;
    float *labels = malloc((size_t)n * sizeof *labels);
    float *dense = malloc((size_t)n * ((size_t)nd + 1) * sizeof *dense);
    uint64_t *cat = malloc((size_t)n * ((size_t)nc + 1) * sizeof *cat);
    assert_true(labels && dense && cat);
    uint64_t rows[NC];
    for (int k = 0; k < NC; k++)
        rows[k] = (uint64_t)k + 1;
    for (int rep = 0; rep < 4; rep++) {
        *s = *s * 6364136223846793005u + 1442695040888963407u;
        int64_t first = rep == 0 ? 0 : (int64_t)(*s >> 35);
        int rc = rt_criteo_read(r, first, rep == 0 ? n : (int)(*s % (uint64_t)n), rows, labels,
                                dense, cat, cap_open(&c));
        msg = cap_close(&c);
        if (rc) {
            assert_int_equal(rc, -1);
            assert_located(msg, path, total);
        } else {
            assert_int_equal(msg[0], '\0');
        }
        free(msg);
    }

    /* Line by line against the plain parser. */
    int64_t line = 0;
    for (size_t p = 0; p < size; line++) {
        const char *nl = memchr(bytes + p, '\n', size - p);
        size_t e = nl ? (size_t)(nl - bytes) : size;
        float rl, rd[ND];
        uint64_t rc_[NC];
        int want = ref_parse(bytes + p, e - p, nd, nc, rows, &rl, rd, rc_);
        int rc = rt_criteo_read(r, line, 1, rows, labels, dense, cat, cap_open(&c));
        msg = cap_close(&c);
        if (rc != want)
            fail_msg("line %lld: reader %d, plain parser %d (%s)", (long long)line + 1, rc, want,
                     msg);
        if (rc) {
            char at[600];
            snprintf(at, sizeof at, "%s:%lld:", path, (long long)line + 1);
            assert_true(strncmp(msg, at, strlen(at)) == 0);
            assert_located(msg, path, total);
        } else {
            assert_true(labels[0] == rl);
            assert_memory_equal(dense, rd, (size_t)nd * sizeof *rd);
            assert_memory_equal(cat, rc_, (size_t)nc * sizeof *rc_);
        }
        free(msg);
        p = e + 1;
    }
    assert_int_equal(line, total);
    free(labels);
    free(dense);
    free(cat);
    rt_criteo_close(r);
}

static void test_fuzz(void **state)
{
    (void)state;
    char *dir = tmpdir();
    char *path = path_in(dir, "fuzz.tsv");
    static const char alphabet[] = "\t\t\t\n\n\r01-2359aAfFgx ";
    uint64_t s = 2024;
    char *bytes = malloc(70000);
    assert_non_null(bytes);

    /* Random bytes, mostly from the characters the layout uses, few features so that some
     * lines are valid. Every other file starts and ends with a valid line, so that it opens
     * and the reads get into the random lines. */
    for (int k = 0; k < 600; k++) {
        s = s * 6364136223846793005u + 1442695040888963407u;
        int nd = (int)((s >> 20) % 3), nc = (int)((s >> 24) % 3);
        char valid[32] = "1";
        for (int j = 0; j < nd; j++)
            strcat(valid, "\t5");
        for (int c = 0; c < nc; c++)
            strcat(valid, "\tab");
        size_t n = (size_t)(s >> 40) % (k % 50 == 0 ? 60000 : 3000), vl = strlen(valid);
        if (k % 2) memcpy(bytes, valid, vl), bytes[vl] = '\n';
        for (size_t i = k % 2 ? vl + 1 : 0; i < n; i++) {
            s = s * 6364136223846793005u + 1442695040888963407u;
            unsigned b = (unsigned)(s >> 56);
            bytes[i] = b < 40 ? (char)(s >> 40) : alphabet[(s >> 33) % (sizeof alphabet - 1)];
        }
        if (k % 2) n = n > vl + 1 ? n : vl + 1, bytes[n] = '\n', memcpy(bytes + n + 1, valid, vl);
        fuzz_one(path, bytes, k % 2 ? n + 1 + vl : n, nd, nc, &s);
    }

    /* The known file with a few bytes changed: mostly valid, errors anywhere. */
    char *known = write_known(dir);
    FILE *f = fopen(known, "rb");
    assert_non_null(f);
    size_t size = fread(bytes, 1, 70000, f);
    assert_true(size > 0 && size < 70000);
    assert_int_equal(fclose(f), 0);
    char *mutated = malloc(size + 64);
    assert_non_null(mutated);
    for (int k = 0; k < 400; k++) {
        memcpy(mutated, bytes, size);
        s = s * 6364136223846793005u + 1442695040888963407u;
        size_t n = size;
        for (int m = 0; m < 1 + (int)(s >> 60); m++) {
            s = s * 6364136223846793005u + 1442695040888963407u;
            size_t at = (size_t)(s >> 20) % n;
            char b = (s >> 59) < 4 ? (char)(s >> 8) : alphabet[(s >> 40) % (sizeof alphabet - 1)];
            if ((s >> 62) == 0 && n > 1) /* delete */
                memmove(mutated + at, mutated + at + 1, --n - at);
            else
                mutated[at] = b;
        }
        fuzz_one(path, mutated, n, ND, NC, &s);
    }
    free(mutated);
    free(bytes);
    free(known);
    free(path);
    rm_rf(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_known_values),
        cmocka_unit_test(test_bad_requests),
        cmocka_unit_test(test_malformed),
        cmocka_unit_test(test_fuzz),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
