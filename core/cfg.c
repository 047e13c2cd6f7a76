#include "cfg.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <libfyaml.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

typedef struct set_node {
    struct fy_node *node;
    int index;
} set_node;

struct rt_cfg {
    struct fy_document *doc;
    struct fy_diag *diag;
    char *path;
    FILE *err;
    set_node *sets; /* nodes created by --set, for their locations */
    int n_sets, cap_sets;
};

/* Length of the line break at TEXT[I] (0: none): YAML's \n, \r and \r\n, and, when ANY_BREAK,
 * also the NEL, LS and PS of YAML 1.1. */
static size_t line_break(const char *text, size_t n, size_t i, int any_break)
{
    const unsigned char *t = (const unsigned char *)text;
    if (t[i] == '\n') return 1;
    if (t[i] == '\r') return i + 1 < n && t[i + 1] == '\n' ? 2 : 1;
    if (!any_break) return 0;
    if (t[i] == 0xc2 && i + 1 < n && t[i + 1] == 0x85) return 2;
    if (t[i] == 0xe2 && i + 2 < n && t[i + 1] == 0x80 && (t[i + 2] == 0xa8 || t[i + 2] == 0xa9))
        return 3;
    return 0;
}

/* Length of the UTF-8 sequence at T[I] when it encodes a character of YAML 1.2's c-printable
 * set (section 5.1: tab, LF, CR, 0x20-0x7e, NEL, 0xa0-0xd7ff, 0xe000-0xfffd,
 * 0x10000-0x10ffff), 0 when it does not. */
static size_t printable_char(const unsigned char *t, size_t n, size_t i)
{
    unsigned c = t[i];
    if (c < 0x80) return (c >= 0x20 && c < 0x7f) || c == '\t' || c == '\n' || c == '\r';
    size_t len = c >= 0xf0 ? 4 : c >= 0xe0 ? 3 : c >= 0xc0 ? 2 : 0;
    if (!len || c > 0xf4 || i + len > n) return 0;
    unsigned long cp = c & (0x7f >> len);
    for (size_t k = 1; k < len; k++) {
        if ((t[i + k] & 0xc0) != 0x80) return 0;
        cp = cp << 6 | (t[i + k] & 0x3f);
    }
    static const unsigned long least[] = {0, 0, 0x80, 0x800, 0x10000};
    if (cp < least[len]) return 0; /* overlong */
    int ok = cp == 0x85 || (cp >= 0xa0 && cp <= 0xd7ff) || (cp >= 0xe000 && cp <= 0xfffd) ||
             (cp >= 0x10000 && cp <= 0x10ffff);
    return ok ? len : 0;
}

static void guard_where(FILE *err, const char *where, int col0, int line, size_t col)
{
    if (col0) /* a one-line --set value: columns count from the assignment */
        fprintf(err, "%s:%zu: ", where, (size_t)col0 + col - 1);
    else
        fprintf(err, "%s:%d:%zu: ", where, line, col);
}

/* libfyaml 0.7.12 (Debian's) spins forever on a directive line with a byte it cannot decode
 * ("%\xff"), and dereferences a wild pointer on a NUL after a tab in a complex key ("? o:\t\0"):
 * text outside YAML's character set is refused before the parser sees it, as is a '%' line
 * that is not printable ASCII. Whether NEL, LS and PS break lines depends on the YAML
 * version, so both readings are covered: a line may start after any of them, and a directive
 * runs to the next \n or \r. */
int rt_cfg_guard(const char *text, size_t n, const char *where, int col0, FILE *err)
{
    const unsigned char *t = (const unsigned char *)text;
    int line = 1;
    for (size_t i = 0; i < n; line++) {
        size_t j = i, brk = 0;
        while (j < n && !(brk = line_break(text, n, j, 1)))
            j++;
        if (t[i] == '%') {
            for (size_t k = i; k < n && !line_break(text, n, k, 0); k++) {
                if ((t[k] >= 0x20 && t[k] < 0x7f) || t[k] == '\t') continue;
                guard_where(err, where, col0, line, k - i + 1);
                fprintf(err,
                        "a malformed YAML directive (byte 0x%02x); allowed: %%YAML or %%TAG "
                        "lines of printable ASCII\n",
                        t[k]);
                return -1;
            }
        }
        for (size_t k = i, len; k < j; k += len) {
            if ((len = printable_char(t, n, k))) continue;
            guard_where(err, where, col0, line, k - i + 1);
            fprintf(err,
                    "byte 0x%02x is not a character YAML allows; allowed: UTF-8 text without "
                    "control characters other than tab and line breaks\n",
                    t[k]);
            return -1;
        }
        i = j + (brk ? brk : 1);
    }
    return 0;
}

/* The whole file in a malloc'd buffer (for the parser to own); a FIFO, a directory or a device
 * is refused instead of read, which could block forever. */
static char *read_config(const char *path, size_t *len, FILE *err)
{
    enum { MAX_BYTES = 64 << 20 };
    int fd = open(path, O_RDONLY | O_NONBLOCK);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0) {
        fprintf(err, "%s: cannot open: %s\n", path, strerror(errno));
        if (fd >= 0) close(fd);
        return NULL;
    }
    if (!S_ISREG(st.st_mode) || st.st_size > MAX_BYTES) {
        fprintf(err, "%s: %s; allowed: a regular file of at most %d MiB\n", path,
                S_ISREG(st.st_mode) ? "too large" : "not a regular file", MAX_BYTES >> 20);
        close(fd);
        return NULL;
    }
    char *buf = malloc((size_t)st.st_size + 1);
    ssize_t got = buf ? read(fd, buf, (size_t)st.st_size) : -1;
    close(fd);
    if (got != (ssize_t)st.st_size) {
        fprintf(err, "%s: cannot read: %s\n", path, got < 0 ? strerror(errno) : "short read");
        free(buf);
        return NULL;
    }
    buf[got] = '\0';
    *len = (size_t)got;
    return buf;
}

/* libfyaml's message about a --set value, kept so that ours can carry it. */
typedef struct value_diag {
    char text[160];
} value_diag;

static void keep_value_diag(struct fy_diag *diag, void *user, const char *buf, size_t len)
{
    (void)diag;
    value_diag *v = user;
    if (v->text[0]) return; /* the first message is the cause */
    /* Drop libfyaml's "<memory-@0x...>:L:C: error: " prefix: our message locates the value. */
    const char *end = buf + len, *msg = buf;
    for (const char *p = buf; p + 7 <= end; p++) {
        if (!memcmp(p, "error: ", 7)) {
            msg = p + 7;
            break;
        }
    }
    const char *nl = memchr(msg, '\n', (size_t)(end - msg));
    snprintf(v->text, sizeof v->text, "%.*s", (int)((nl ? nl : end) - msg), msg);
}

/* A --set value as a node of C's document, or NULL with libfyaml's reason in WHY. Parsed as a
 * document of its own because fy_node_build_from_string reports errors on stderr, located in
 * an anonymous memory buffer. */
static struct fy_node *parse_value(rt_cfg *c, const char *text, value_diag *why)
{
    struct fy_diag_cfg dcfg;
    fy_diag_cfg_default(&dcfg);
    dcfg.fp = NULL;
    dcfg.output_fn = keep_value_diag;
    dcfg.user = why;
    dcfg.colorize = false;
    dcfg.show_source = dcfg.show_position = dcfg.show_type = dcfg.show_module = false;
    struct fy_diag *diag = fy_diag_create(&dcfg);
    if (!diag) return NULL;
    struct fy_parse_cfg pcfg = {.flags = FYPCF_QUIET | FYPCF_RESOLVE_DOCUMENT, .diag = diag};
    struct fy_document *d = fy_document_build_from_string(&pcfg, text, FY_NT);
    struct fy_node *root = d ? fy_document_root(d) : NULL;
    struct fy_node *copy = root ? fy_node_copy(c->doc, root) : NULL;
    if (d) fy_document_destroy(d);
    fy_diag_destroy(diag);
    return copy;
}

rt_cfg *rt_cfg_load(const char *path, FILE *err)
{
    rt_cfg *c = calloc(1, sizeof *c);
    if (!c) return NULL;
    c->err = err;
    c->path = strdup(path);
    struct fy_diag_cfg dcfg;
    fy_diag_cfg_default(&dcfg);
    dcfg.fp = err;
    dcfg.colorize = false;
    c->diag = fy_diag_create(&dcfg);
    /* Resolving aliases at load makes an undefined one an error, not a literal "*name". */
    struct fy_parse_cfg pcfg = {.flags = FYPCF_QUIET | FYPCF_RESOLVE_DOCUMENT, .diag = c->diag};
    size_t len = 0;
    char *text = read_config(path, &len, err);
    if (!text || rt_cfg_guard(text, len, path, 0, err)) {
        free(text);
        rt_cfg_free(c);
        return NULL;
    }
    free(text);
    /* Parsed from the path, so libfyaml's own messages name the file. */
    c->doc = fy_document_build_from_file(&pcfg, path);
    if (!c->doc) {
        fprintf(err, "%s: not valid YAML (see the message above)\n", path);
        rt_cfg_free(c);
        return NULL;
    }
    if (!fy_document_root(c->doc) || fy_node_get_type(fy_document_root(c->doc)) != FYNT_MAPPING) {
        fprintf(err, "%s:1:1: the document must be a mapping of keys to values\n", path);
        rt_cfg_free(c);
        return NULL;
    }
    return c;
}

void rt_cfg_free(rt_cfg *c)
{
    if (!c) return;
    if (c->doc) fy_document_destroy(c->doc);
    if (c->diag) fy_diag_destroy(c->diag);
    free(c->sets);
    free(c->path);
    free(c);
}

struct fy_node *rt_cfg_root(rt_cfg *c)
{
    return fy_document_root(c->doc);
}
const char *rt_cfg_path(const rt_cfg *c)
{
    return c->path;
}
FILE *rt_cfg_err(rt_cfg *c)
{
    return c->err;
}

/* ---- locations ---------------------------------------------------------------------- */

static const struct fy_mark *node_mark(struct fy_node *n)
{
    while (n) {
        switch (fy_node_get_type(n)) {
        case FYNT_SCALAR: {
            struct fy_token *t = fy_node_get_scalar_token(n);
            return t ? fy_token_start_mark(t) : NULL;
        }
        case FYNT_MAPPING: {
            void *it = NULL;
            struct fy_node_pair *p = fy_node_mapping_iterate(n, &it);
            if (p) {
                n = fy_node_pair_key(p);
                continue;
            }
            break;
        }
        case FYNT_SEQUENCE: {
            void *it = NULL;
            struct fy_node *item = fy_node_sequence_iterate(n, &it);
            if (item) {
                n = item;
                continue;
            }
            break;
        }
        }
        return NULL;
    }
    return NULL;
}

static int set_index_of(rt_cfg *c, struct fy_node *n)
{
    for (struct fy_node *p = n; p; p = fy_node_get_parent(p))
        for (int i = 0; i < c->n_sets; i++)
            if (c->sets[i].node == p) return c->sets[i].index;
    return -1;
}

static void print_location(rt_cfg *c, struct fy_node *at)
{
    const struct fy_mark *m = at ? node_mark(at) : NULL;
    int set = at ? set_index_of(c, at) : -1;
    int col = m ? m->column + 1 : 1;
    if (set >= 0)
        fprintf(c->err, "--set:%d:%d: ", set, col);
    else if (m)
        fprintf(c->err, "%s:%d:%d: ", c->path, m->line + 1, col);
    else
        fprintf(c->err, "%s:1:1: ", c->path);
}

const char *rt_cfg_node_path(struct fy_node *node, char *buf, size_t size)
{
    char *p = node ? fy_node_get_path(node) : NULL;
    const char *src = p ? p : "";
    while (*src == '/')
        src++;
    size_t j = 0;
    for (; *src && j + 1 < size; src++)
        buf[j++] = *src == '/' ? '.' : *src;
    buf[j] = '\0';
    free(p);
    return buf;
}

void rt_cfg_error(rt_cfg *c, struct fy_node *at, const char *fmt, ...)
{
    print_location(c, at);
    char path[256];
    rt_cfg_node_path(at, path, sizeof path);
    if (path[0]) fprintf(c->err, "key '%s': ", path);
    va_list ap;
    va_start(ap, fmt);
    vfprintf(c->err, fmt, ap);
    va_end(ap);
    fputc('\n', c->err);
}

/* Error about KEY inside MAP, located at the value when present, else at the map. */
static void key_error(rt_cfg *c, struct fy_node *map, struct fy_node *val, const char *key,
                      const char *fmt, ...) __attribute__((format(printf, 5, 6)));
static void key_error(rt_cfg *c, struct fy_node *map, struct fy_node *val, const char *key,
                      const char *fmt, ...)
{
    print_location(c, val ? val : map);
    char path[256];
    rt_cfg_node_path(map, path, sizeof path);
    fprintf(c->err, "key '%s%s%s': ", path, path[0] ? "." : "", key);
    va_list ap;
    va_start(ap, fmt);
    vfprintf(c->err, fmt, ap);
    va_end(ap);
    fputc('\n', c->err);
}

/* ---- lookups ------------------------------------------------------------------------ */

static int is_null_scalar(struct fy_node *v)
{
    if (fy_node_get_type(v) != FYNT_SCALAR) return 0;
    size_t len;
    const char *s = fy_node_get_scalar(v, &len);
    return s && ((len == 1 && s[0] == '~') || (len == 4 && memcmp(s, "null", 4) == 0));
}

/* Value of KEY in MAP, NULL when absent. Absent-but-required reports the error. */
static struct fy_node *lookup(rt_cfg *c, struct fy_node *map, const char *key, int required,
                              int *missing)
{
    struct fy_node *v = map ? fy_node_mapping_lookup_by_string(map, key, FY_NT) : NULL;
    if (v && is_null_scalar(v)) v = NULL;
    *missing = v == NULL;
    if (!v && required) key_error(c, map, NULL, key, "missing; this key is required");
    return v;
}

static const char *scalar_text(rt_cfg *c, struct fy_node *map, struct fy_node *v, const char *key,
                               const char *expected, char *buf, size_t size)
{
    if (fy_node_get_type(v) != FYNT_SCALAR) {
        key_error(c, map, v, key, "expected %s, got a %s", expected,
                  fy_node_get_type(v) == FYNT_MAPPING ? "mapping" : "sequence");
        return NULL;
    }
    size_t len;
    const char *s = fy_node_get_scalar(v, &len);
    if (!s || len + 1 > size) {
        key_error(c, map, v, key, "expected %s", expected);
        return NULL;
    }
    memcpy(buf, s, len);
    buf[len] = '\0';
    return buf;
}

int rt_cfg_check_keys(rt_cfg *c, struct fy_node *map, const char *const *allowed)
{
    if (!map) return 0;
    if (fy_node_get_type(map) != FYNT_MAPPING) {
        rt_cfg_error(c, map, "expected a mapping");
        return -1;
    }
    void *it = NULL;
    struct fy_node_pair *p;
    while ((p = fy_node_mapping_iterate(map, &it))) {
        struct fy_node *k = fy_node_pair_key(p);
        size_t len;
        const char *s =
            k && fy_node_get_type(k) == FYNT_SCALAR ? fy_node_get_scalar(k, &len) : NULL;
        int ok = 0;
        for (int i = 0; s && allowed[i]; i++)
            if (strlen(allowed[i]) == len && memcmp(allowed[i], s, len) == 0) ok = 1;
        if (!ok) {
            char name[128];
            snprintf(name, sizeof name, "%.*s", s ? (int)(len < 100 ? len : 100) : 1, s ? s : "?");
            print_location(c, k);
            char path[256];
            rt_cfg_node_path(map, path, sizeof path);
            fprintf(c->err, "unknown key '%s%s%s'; allowed here: ", path, path[0] ? "." : "", name);
            for (int i = 0; allowed[i]; i++)
                fprintf(c->err, "%s%s", i ? ", " : "", allowed[i]);
            fputc('\n', c->err);
            return -1;
        }
    }
    return 0;
}

static int parse_int_text(const char *s, int64_t *out)
{
    errno = 0;
    char *end = NULL;
    long long v = strtoll(s, &end, 10);
    if (end == s || *end || errno == ERANGE) return -1;
    *out = v;
    return 0;
}

static int parse_double_text(const char *s, double *out)
{
    errno = 0;
    char *end = NULL;
    double v = strtod(s, &end);
    if (end == s || *end || errno == ERANGE || !isfinite(v)) return -1;
    for (const char *p = s; *p; p++)
        if (!strchr("0123456789.eE+-", *p)) return -1;
    *out = v;
    return 0;
}

int rt_cfg_get_int(rt_cfg *c, struct fy_node *map, const char *key, int required, int64_t min,
                   int64_t max, int64_t *out)
{
    int missing;
    struct fy_node *v = lookup(c, map, key, required, &missing);
    if (!v) return required ? -1 : 1;
    char buf[64];
    const char *s = scalar_text(c, map, v, key, "an integer", buf, sizeof buf);
    int64_t x;
    if (!s) return -1;
    if (parse_int_text(s, &x)) {
        key_error(c, map, v, key, "'%s' is not an integer; allowed: integers in [%lld, %lld]", s,
                  (long long)min, (long long)max);
        return -1;
    }
    if (x < min || x > max) {
        key_error(c, map, v, key, "%lld is out of range; allowed: [%lld, %lld]", (long long)x,
                  (long long)min, (long long)max);
        return -1;
    }
    *out = x;
    return 0;
}

int rt_cfg_get_double(rt_cfg *c, struct fy_node *map, const char *key, int required, double min,
                      double max, double *out)
{
    int missing;
    struct fy_node *v = lookup(c, map, key, required, &missing);
    if (!v) return required ? -1 : 1;
    char buf[64];
    const char *s = scalar_text(c, map, v, key, "a number", buf, sizeof buf);
    double x;
    if (!s) return -1;
    if (parse_double_text(s, &x)) {
        key_error(c, map, v, key, "'%s' is not a number; allowed: numbers in [%g, %g]", s, min,
                  max);
        return -1;
    }
    if (x < min || x > max) {
        key_error(c, map, v, key, "%g is out of range; allowed: [%g, %g]", x, min, max);
        return -1;
    }
    *out = x;
    return 0;
}

int rt_cfg_get_unit(rt_cfg *c, struct fy_node *map, const char *key, int required,
                    rt_unit_kind kind, double min, double max, double *out)
{
    int missing;
    struct fy_node *v = lookup(c, map, key, required, &missing);
    if (!v) return required ? -1 : 1;
    char buf[64];
    const char *s = scalar_text(c, map, v, key, "a number with a unit", buf, sizeof buf);
    if (!s) return -1;
    const char *msg = NULL;
    double x;
    if (rt_units_parse(s, kind, &x, &msg)) {
        key_error(c, map, v, key, "'%s': %s; allowed units: %s", s, msg, rt_units_allowed(kind));
        return -1;
    }
    if (x < min || x > max) {
        key_error(c, map, v, key, "'%s' is out of range; allowed: [%g, %g] in base units", s, min,
                  max);
        return -1;
    }
    *out = x;
    return 0;
}

int rt_cfg_get_bool(rt_cfg *c, struct fy_node *map, const char *key, int required, int *out)
{
    int missing;
    struct fy_node *v = lookup(c, map, key, required, &missing);
    if (!v) return required ? -1 : 1;
    char buf[16];
    const char *s = scalar_text(c, map, v, key, "true or false", buf, sizeof buf);
    if (!s) return -1;
    if (strcmp(s, "true") == 0)
        *out = 1;
    else if (strcmp(s, "false") == 0)
        *out = 0;
    else {
        key_error(c, map, v, key, "'%s' is not a boolean; allowed: true, false", s);
        return -1;
    }
    return 0;
}

int rt_cfg_get_str(rt_cfg *c, struct fy_node *map, const char *key, int required, char **out)
{
    int missing;
    struct fy_node *v = lookup(c, map, key, required, &missing);
    if (!v) return required ? -1 : 1;
    char buf[4096];
    const char *s = scalar_text(c, map, v, key, "a string", buf, sizeof buf);
    if (!s) return -1;
    char *d = strdup(s);
    if (!d) return -1;
    free(*out);
    *out = d;
    return 0;
}

int rt_cfg_get_enum(rt_cfg *c, struct fy_node *map, const char *key, int required,
                    const char *const *names, int *out)
{
    int missing;
    struct fy_node *v = lookup(c, map, key, required, &missing);
    if (!v) return required ? -1 : 1;
    char buf[128];
    const char *s = scalar_text(c, map, v, key, "a name", buf, sizeof buf);
    if (!s) return -1;
    for (int i = 0; names[i]; i++)
        if (strcmp(names[i], s) == 0) {
            *out = i;
            return 0;
        }
    print_location(c, v);
    char path[256];
    rt_cfg_node_path(map, path, sizeof path);
    fprintf(c->err, "key '%s%s%s': unknown value '%s'; allowed: ", path, path[0] ? "." : "", key,
            s);
    for (int i = 0; names[i]; i++)
        fprintf(c->err, "%s%s", i ? ", " : "", names[i]);
    fputc('\n', c->err);
    return -1;
}

static struct fy_node *get_typed(rt_cfg *c, struct fy_node *map, const char *key, int required,
                                 int *ok, enum fy_node_type type, const char *what)
{
    int missing;
    struct fy_node *v = lookup(c, map, key, required, &missing);
    if (!v) {
        if (required) *ok = 0;
        return NULL;
    }
    if (fy_node_get_type(v) != type) {
        key_error(c, map, v, key, "expected a %s", what);
        *ok = 0;
        return NULL;
    }
    return v;
}

struct fy_node *rt_cfg_get_map(rt_cfg *c, struct fy_node *map, const char *key, int required,
                               int *ok)
{
    return get_typed(c, map, key, required, ok, FYNT_MAPPING, "mapping (key: value pairs)");
}

struct fy_node *rt_cfg_get_seq(rt_cfg *c, struct fy_node *map, const char *key, int required,
                               int *ok)
{
    return get_typed(c, map, key, required, ok, FYNT_SEQUENCE, "sequence ([a, b, ...])");
}

int rt_cfg_node_int(rt_cfg *c, struct fy_node *node, int64_t min, int64_t max, int64_t *out)
{
    char buf[64];
    size_t len;
    const char *s = fy_node_get_type(node) == FYNT_SCALAR ? fy_node_get_scalar(node, &len) : NULL;
    int64_t x;
    if (!s || len >= sizeof buf) {
        rt_cfg_error(c, node, "expected an integer");
        return -1;
    }
    memcpy(buf, s, len);
    buf[len] = '\0';
    if (parse_int_text(buf, &x) || x < min || x > max) {
        rt_cfg_error(c, node, "'%s' is not an integer in [%lld, %lld]", buf, (long long)min,
                     (long long)max);
        return -1;
    }
    *out = x;
    return 0;
}

int rt_cfg_node_double(rt_cfg *c, struct fy_node *node, double min, double max, double *out)
{
    char buf[64];
    size_t len;
    const char *s = fy_node_get_type(node) == FYNT_SCALAR ? fy_node_get_scalar(node, &len) : NULL;
    double x;
    if (!s || len >= sizeof buf) {
        rt_cfg_error(c, node, "expected a number");
        return -1;
    }
    memcpy(buf, s, len);
    buf[len] = '\0';
    if (parse_double_text(buf, &x) || x < min || x > max) {
        rt_cfg_error(c, node, "'%s' is not a number in [%g, %g]", buf, min, max);
        return -1;
    }
    *out = x;
    return 0;
}

int rt_cfg_get_int_list(rt_cfg *c, struct fy_node *map, const char *key, int required, int64_t min,
                        int64_t max, int64_t **out, int *n)
{
    int ok = 1;
    struct fy_node *seq = rt_cfg_get_seq(c, map, key, required, &ok);
    if (!seq) return ok ? 1 : -1;
    int count = fy_node_sequence_item_count(seq);
    int64_t *v = calloc(count ? (size_t)count : 1, sizeof *v);
    if (!v) return -1;
    void *it = NULL;
    struct fy_node *item;
    int i = 0;
    while ((item = fy_node_sequence_iterate(seq, &it)))
        if (rt_cfg_node_int(c, item, min, max, &v[i++])) {
            free(v);
            return -1;
        }
    free(*out);
    *out = v;
    *n = count;
    return 0;
}

int rt_cfg_get_double_list(rt_cfg *c, struct fy_node *map, const char *key, int required,
                           double min, double max, double **out, int *n)
{
    int ok = 1;
    struct fy_node *seq = rt_cfg_get_seq(c, map, key, required, &ok);
    if (!seq) return ok ? 1 : -1;
    int count = fy_node_sequence_item_count(seq);
    double *v = calloc(count ? (size_t)count : 1, sizeof *v);
    if (!v) return -1;
    void *it = NULL;
    struct fy_node *item;
    int i = 0;
    while ((item = fy_node_sequence_iterate(seq, &it)))
        if (rt_cfg_node_double(c, item, min, max, &v[i++])) {
            free(v);
            return -1;
        }
    free(*out);
    *out = v;
    *n = count;
    return 0;
}

/* ---- --set overrides ---------------------------------------------------------------- */

static int remember_set(rt_cfg *c, struct fy_node *n, int index)
{
    if (c->n_sets == c->cap_sets) {
        int nc = c->cap_sets ? 2 * c->cap_sets : 8;
        set_node *s = realloc(c->sets, sizeof *s * (size_t)nc);
        if (!s) return -1;
        c->sets = s;
        c->cap_sets = nc;
    }
    c->sets[c->n_sets++] = (set_node){n, index};
    return 0;
}

/* The value of the plain scalar key KEY in MAP, by text: fy_node_mapping_lookup_by_string
 * would parse KEY as YAML and report failures on stderr. */
static struct fy_node *lookup_key(struct fy_node *map, const char *key)
{
    void *it = NULL;
    struct fy_node_pair *pair;
    while ((pair = fy_node_mapping_iterate(map, &it))) {
        struct fy_node *k = fy_node_pair_key(pair);
        size_t len;
        const char *text = k ? fy_node_get_scalar(k, &len) : NULL;
        if (text && len == strlen(key) && !memcmp(text, key, len)) return fy_node_pair_value(pair);
    }
    return NULL;
}

/* Scenario keys are identifiers; anything else in a --set path is a typo or garbage. */
static int is_key_name(const char *s)
{
    if (!*s) return 0;
    for (; *s; s++)
        if (!isalnum((unsigned char)*s) && *s != '_' && *s != '-') return 0;
    return 1;
}

int rt_cfg_set(rt_cfg *c, const char *assignment, int index)
{
    const char *eq = strchr(assignment, '=');
    if (!eq || eq == assignment) {
        fprintf(c->err, "--set:%d:1: '%s' is not of the form path.to.key=value\n", index,
                assignment);
        return -1;
    }
    size_t plen = (size_t)(eq - assignment);
    char *path = strndup(assignment, plen);
    if (!path) return -1;
    struct fy_node *map = rt_cfg_root(c);
    int rc = -1;
    char *save = NULL;
    char *part = strtok_r(path, ".", &save);
    while (part) {
        char *next = strtok_r(NULL, ".", &save);
        if (!is_key_name(part)) {
            fprintf(c->err,
                    "--set:%d:%d: '%s' is not a key name; allowed: letters, digits, '_' and '-'\n",
                    index, (int)(part - path) + 1, part);
            goto out;
        }
        if (fy_node_get_type(map) != FYNT_MAPPING) {
            fprintf(c->err, "--set:%d:1: '%.*s': '%s' is inside a value that is not a mapping\n",
                    index, (int)plen, assignment, part);
            goto out;
        }
        struct fy_node *value;
        if (next) {
            value = lookup_key(map, part);
            if (!value || is_null_scalar(value)) {
                value = fy_node_create_mapping(c->doc);
                if (!value) goto out;
                struct fy_node *k = fy_node_create_scalar_copy(c->doc, part, FY_NT);
                struct fy_node_pair *pair = fy_node_mapping_lookup_pair(map, k);
                if (pair) {
                    fy_node_pair_set_value(pair, value);
                    fy_node_free(k);
                } else if (fy_node_mapping_append(map, k, value) || remember_set(c, k, index)) {
                    goto out;
                }
                if (remember_set(c, value, index)) goto out;
            }
            map = value;
        } else {
            char where[32];
            snprintf(where, sizeof where, "--set:%d", index);
            if (rt_cfg_guard(eq + 1, strlen(eq + 1), where, (int)plen + 2, c->err)) goto out;
            value_diag why = {{0}};
            value = eq[1] ? parse_value(c, eq + 1, &why) : NULL;
            if (!value) {
                fprintf(c->err, "--set:%d:%d: '%s': the value is not valid YAML%s%s\n", index,
                        (int)plen + 2, assignment, why.text[0] ? ": " : "", why.text);
                goto out;
            }
            struct fy_node *k = fy_node_create_scalar_copy(c->doc, part, FY_NT);
            struct fy_node_pair *pair = fy_node_mapping_lookup_pair(map, k);
            if (pair) {
                fy_node_pair_set_value(pair, value);
                fy_node_free(k);
            } else if (fy_node_mapping_append(map, k, value)) {
                goto out;
            } else if (remember_set(c, k, index)) { /* a new key is located at its --set too */
                goto out;
            }
            if (remember_set(c, value, index)) goto out;
        }
        part = next;
    }
    rc = 0;
out:
    free(path);
    return rc;
}
