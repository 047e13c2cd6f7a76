#include "sweep_spec.h"

#include <libfyaml.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cfg.h"
#include "engines.h"

static const char *const sweep_keys[] = {"name", "description", "scenario", "engine", "out",
                                         "set",  "grid",        "zip",      NULL};

enum { MAX_ENGINES = 16 };

static void axis_free(rt_sweep_axis *a)
{
    int n = a->n_keys * a->n_values;
    for (int i = 0; a->assign && i < n; i++)
        free(a->assign[i]);
    for (int i = 0; a->shown && i < n; i++)
        free(a->shown[i]);
    for (int k = 0; a->keys && k < a->n_keys; k++) {
        free(a->keys[k]);
        free(a->where[k]);
    }
    free(a->assign);
    free(a->shown);
    free(a->keys);
    free(a->where);
}

void rt_sweep_spec_free(rt_sweep_spec *s)
{
    if (!s) return;
    for (int a = 0; a < s->n_axes; a++)
        axis_free(&s->axes[a]);
    for (int i = 0; i < s->n_base; i++)
        free(s->base[i]);
    free(s->axes);
    free(s->base);
    free(s->path);
    free(s->name);
    free(s->scenario);
    free(s->scenario_path);
    free(s->engine);
    free(s->out);
    free(s);
}

/* ---- values ----------------------------------------------------------------------------- */

/* The node as one line of YAML flow text: what --set parses back into the same value. */
static char *flow_text(struct fy_node *n)
{
    return fy_emit_node_to_string(n, FYECF_MODE_FLOW_ONELINE | FYECF_WIDTH_INF);
}

/* What a reader of the CSV wants to see: a scalar's own text (no YAML quotes), a collection's
 * flow text. */
static char *shown_text(struct fy_node *n)
{
    if (fy_node_get_type(n) != FYNT_SCALAR) return flow_text(n);
    size_t len = 0;
    const char *s = fy_node_get_scalar(n, &len);
    return strndup(s ? s : "", s ? len : 0);
}

/* A plain ~ or null: in a list of values, "do not set the key at this point" (a plan-specific
 * key, for instance, exists only under its plan). */
static int is_null(struct fy_node *n)
{
    size_t len = 0;
    const char *s = fy_node_get_type(n) == FYNT_SCALAR && fy_node_get_style(n) == FYNS_PLAIN
                        ? fy_node_get_scalar(n, &len)
                        : NULL;
    return s && ((len == 1 && *s == '~') || (len == 4 && !memcmp(s, "null", 4)));
}

static char *assignment(const char *key, struct fy_node *value)
{
    char *text = flow_text(value);
    if (!text) return NULL;
    size_t n = strlen(key) + strlen(text) + 2;
    char *a = malloc(n);
    if (a) snprintf(a, n, "%s=%s", key, text);
    free(text);
    return a;
}

/* ---- keys ------------------------------------------------------------------------------- */

static int key_char(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
           c == '-';
}

/* A swept key becomes "key=value" for --set, split at '.' and the first '=': only plain
 * segments survive that. */
static int valid_path(const char *p)
{
    int seg = 0;
    for (; *p; p++) {
        if (*p == '.') {
            if (!seg) return 0;
            seg = 0;
        } else if (key_char(*p)) {
            seg++;
        } else {
            return 0;
        }
    }
    return seg > 0;
}

/* "file:line:col" of KEY (a mapping key), into BUF. */
static const char *key_where(rt_cfg *c, struct fy_node *key, char *buf, size_t size)
{
    struct fy_token *t = key ? fy_node_get_scalar_token(key) : NULL;
    const struct fy_mark *m = t ? fy_token_start_mark(t) : NULL;
    snprintf(buf, size, "%s:%d:%d", rt_cfg_path(c), m ? m->line + 1 : 1, m ? m->column + 1 : 1);
    return buf;
}

/* An error about the value of KEY, placed at KEY: a key node's own path reads ".key(...)",
 * and an empty collection has no position (rt_cfg_error would say 1:1). */
static void at_key_error(rt_cfg *c, struct fy_node *key, struct fy_node *value, const char *fmt,
                         ...) __attribute__((format(printf, 4, 5)));
static void at_key_error(rt_cfg *c, struct fy_node *key, struct fy_node *value, const char *fmt,
                         ...)
{
    char where[4096], path[256];
    rt_cfg_node_path(value, path, sizeof path);
    fprintf(rt_cfg_err(c), "%s: key '%s': ", key_where(c, key, where, sizeof where), path);
    va_list ap;
    va_start(ap, fmt);
    vfprintf(rt_cfg_err(c), fmt, ap);
    va_end(ap);
    fputc('\n', rt_cfg_err(c));
}

/* The key of PAIR as a malloc'd string after checking it is a key path. */
static char *pair_key(rt_cfg *c, struct fy_node_pair *pair)
{
    struct fy_node *k = fy_node_pair_key(pair);
    size_t len = 0;
    const char *s = k && fy_node_get_type(k) == FYNT_SCALAR ? fy_node_get_scalar(k, &len) : NULL;
    char *key = s ? strndup(s, len) : NULL;
    if (!key || !valid_path(key)) {
        at_key_error(c, k, fy_node_pair_value(pair),
                     "'%s' is not a key path; allowed: path.to.key of letters, digits, '_' "
                     "and '-' (the keys --set takes)",
                     key ? key : "?");
        free(key);
        return NULL;
    }
    return key;
}

/* Every key the sweep sets so far (base and axes), to refuse one set twice. */
static int key_taken(const rt_sweep_spec *s, const char *key)
{
    size_t len = strlen(key);
    for (int i = 0; i < s->n_base; i++)
        if (!strncmp(s->base[i], key, len) && s->base[i][len] == '=') return 1;
    for (int a = 0; a < s->n_axes; a++)
        for (int k = 0; k < s->axes[a].n_keys; k++)
            if (!strcmp(s->axes[a].keys[k], key)) return 1;
    return 0;
}

static int check_new_key(rt_cfg *c, const rt_sweep_spec *s, struct fy_node_pair *pair,
                         const char *key)
{
    if (!key_taken(s, key)) return 0;
    at_key_error(c, fy_node_pair_key(pair), fy_node_pair_value(pair),
                 "'%s' is set twice (in set, grid or zip); allowed: each key once", key);
    return -1;
}

/* ---- sections ----------------------------------------------------------------------------- */

static int parse_base(rt_cfg *c, struct fy_node *root, rt_sweep_spec *s)
{
    int ok = 1;
    struct fy_node *map = rt_cfg_get_map(c, root, "set", 0, &ok);
    if (!map) return ok ? 0 : -1;
    int n = fy_node_mapping_item_count(map);
    s->base = calloc(n ? (size_t)n : 1, sizeof *s->base);
    if (!s->base) return -1;
    void *it = NULL;
    struct fy_node_pair *pair;
    while ((pair = fy_node_mapping_iterate(map, &it))) {
        char *key = pair_key(c, pair);
        if (!key || check_new_key(c, s, pair, key)) {
            free(key);
            return -1;
        }
        s->base[s->n_base] = assignment(key, fy_node_pair_value(pair));
        free(key);
        if (!s->base[s->n_base++]) return -1;
    }
    return 0;
}

static rt_sweep_axis *new_axis(rt_sweep_spec *s, int n_keys, int n_values)
{
    rt_sweep_axis *grown = realloc(s->axes, sizeof *grown * (size_t)(s->n_axes + 1));
    if (!grown) return NULL;
    s->axes = grown;
    rt_sweep_axis *a = &s->axes[s->n_axes++];
    memset(a, 0, sizeof *a);
    size_t n = (size_t)n_keys * (size_t)n_values;
    a->keys = calloc((size_t)n_keys, sizeof *a->keys);
    a->where = calloc((size_t)n_keys, sizeof *a->where);
    a->assign = calloc(n ? n : 1, sizeof *a->assign);
    a->shown = calloc(n ? n : 1, sizeof *a->shown);
    if (!a->keys || !a->where || !a->assign || !a->shown) return NULL;
    a->n_values = n_values;
    return a;
}

/* The values of one key: a non-empty sequence. Returns its length, or -1 after an error. */
static int value_list(rt_cfg *c, struct fy_node_pair *pair)
{
    struct fy_node *v = fy_node_pair_value(pair);
    int n = v && fy_node_get_type(v) == FYNT_SEQUENCE ? fy_node_sequence_item_count(v) : -1;
    if (n > 0) return n;
    if (n == 0)
        at_key_error(c, fy_node_pair_key(pair), v,
                     "the list of values is empty; allowed: a list of values [a, b, ...]");
    else
        rt_cfg_error(c, v ? v : fy_node_pair_key(pair),
                     "expected a list of values; allowed: a list of values [a, b, ...]");
    return -1;
}

/* Fills key K of axis A from PAIR (the key checked, the value a list of n_values). */
static int fill_key(rt_cfg *c, rt_sweep_spec *s, rt_sweep_axis *a, int k, struct fy_node_pair *pair)
{
    char *key = pair_key(c, pair);
    if (!key || check_new_key(c, s, pair, key)) {
        free(key);
        return -1;
    }
    char where[4096];
    a->keys[k] = key;
    a->n_keys = k + 1; /* the key is in place: the next key is checked against it */
    a->where[k] = strdup(key_where(c, fy_node_pair_key(pair), where, sizeof where));
    if (!a->where[k]) return -1;
    void *it = NULL;
    struct fy_node *item;
    for (int v = 0; (item = fy_node_sequence_iterate(fy_node_pair_value(pair), &it)); v++) {
        int unset = is_null(item); /* the key keeps the base's value at this point */
        a->assign[k * a->n_values + v] = unset ? NULL : assignment(key, item);
        a->shown[k * a->n_values + v] = unset ? strdup("") : shown_text(item);
        if ((!unset && !a->assign[k * a->n_values + v]) || !a->shown[k * a->n_values + v])
            return -1;
    }
    return 0;
}

static int parse_grid(rt_cfg *c, struct fy_node *root, rt_sweep_spec *s)
{
    int ok = 1;
    struct fy_node *map = rt_cfg_get_map(c, root, "grid", 0, &ok);
    if (!map) return ok ? 0 : -1;
    if (fy_node_mapping_item_count(map) == 0) {
        at_key_error(c, fy_node_mapping_lookup_key_by_string(root, "grid", FY_NT), map,
                     "the grid is empty; allowed: a mapping of path.to.key: [values]");
        return -1;
    }
    void *it = NULL;
    struct fy_node_pair *pair;
    while ((pair = fy_node_mapping_iterate(map, &it))) {
        int n = value_list(c, pair);
        rt_sweep_axis *a = n > 0 ? new_axis(s, 1, n) : NULL;
        if (!a || fill_key(c, s, a, 0, pair)) return -1;
    }
    return 0;
}

/* One zip group: keys whose lists have one length, varying together. */
static int parse_zip_group(rt_cfg *c, struct fy_node *group, rt_sweep_spec *s)
{
    int n_keys = fy_node_get_type(group) == FYNT_MAPPING ? fy_node_mapping_item_count(group) : 0;
    if (n_keys == 0) {
        rt_cfg_error(c, group,
                     "expected a non-empty mapping; allowed: {path.to.key: [values], ...} with "
                     "lists of one length");
        return -1;
    }
    void *it = NULL;
    struct fy_node_pair *pair = fy_node_mapping_iterate(group, &it);
    int n = value_list(c, pair);
    rt_sweep_axis *a = n > 0 ? new_axis(s, n_keys, n) : NULL;
    if (!a) return -1;
    for (int k = 0; pair; k++, pair = fy_node_mapping_iterate(group, &it)) {
        int len = value_list(c, pair);
        if (len < 0) return -1;
        if (len != n) {
            rt_cfg_error(c, fy_node_pair_value(pair),
                         "%d values where the group's first list has %d; allowed: lists of one "
                         "length (they vary together)",
                         len, n);
            return -1;
        }
        if (fill_key(c, s, a, k, pair)) return -1;
    }
    return 0;
}

static int parse_zip(rt_cfg *c, struct fy_node *root, rt_sweep_spec *s)
{
    int ok = 1;
    struct fy_node *seq = rt_cfg_get_seq(c, root, "zip", 0, &ok);
    if (!seq) return ok ? 0 : -1;
    if (fy_node_sequence_item_count(seq) == 0) {
        at_key_error(c, fy_node_mapping_lookup_key_by_string(root, "zip", FY_NT), seq,
                     "the zip list is empty; allowed: a list of {path: [values], ...}");
        return -1;
    }
    void *it = NULL;
    struct fy_node *group;
    while ((group = fy_node_sequence_iterate(seq, &it)))
        if (parse_zip_group(c, group, s)) return -1;
    return 0;
}

static int count_points(rt_cfg *c, struct fy_node *root, rt_sweep_spec *s)
{
    if (s->n_axes == 0) {
        rt_cfg_error(c, root, "nothing is swept; allowed: a 'grid' and/or a 'zip' section");
        return -1;
    }
    if (rt_sweep_n_keys(s) > RT_SWEEP_MAX_KEYS) {
        rt_cfg_error(c, root, "%d swept keys; allowed: at most %d", rt_sweep_n_keys(s),
                     RT_SWEEP_MAX_KEYS);
        return -1;
    }
    s->n_points = 1;
    for (int a = 0; a < s->n_axes; a++) {
        s->n_points *= s->axes[a].n_values;
        if (s->n_points > RT_SWEEP_MAX_POINTS) {
            rt_cfg_error(c, root, "more than %d points; allowed: at most %d (split the sweep)",
                         RT_SWEEP_MAX_POINTS, RT_SWEEP_MAX_POINTS);
            return -1;
        }
    }
    return 0;
}

/* ---- top level ------------------------------------------------------------------------- */

static int plain_name(const char *name)
{
    int ok = *name && strcmp(name, ".") && strcmp(name, "..");
    for (const char *p = name; ok && *p; p++)
        ok = key_char(*p) || *p == '.';
    return ok;
}

/* The name: the file's, or the sweep file's base name without its extension. */
static int parse_name(rt_cfg *c, struct fy_node *root, rt_sweep_spec *s)
{
    if (rt_cfg_get_str(c, root, "name", 0, &s->name) < 0) return -1;
    if (!s->name) {
        const char *slash = strrchr(s->path, '/');
        const char *base = slash ? slash + 1 : s->path;
        const char *dot = strrchr(base, '.');
        s->name = strndup(base, dot && dot != base ? (size_t)(dot - base) : strlen(base));
        if (!s->name) return -1;
    }
    if (plain_name(s->name)) return 0;
    rt_cfg_error(c, fy_node_mapping_lookup_by_string(root, "name", FY_NT),
                 "'%s' is not a plain file name (it names the output directory); allowed: "
                 "letters, digits, '-', '_' and '.'",
                 s->name);
    return -1;
}

/* The scenario, relative to the sweep file's directory unless absolute. */
static int parse_scenario(rt_cfg *c, struct fy_node *root, rt_sweep_spec *s)
{
    if (rt_cfg_get_str(c, root, "scenario", 1, &s->scenario) < 0) return -1;
    const char *slash = strrchr(s->path, '/');
    size_t dlen = s->scenario[0] != '/' && slash ? (size_t)(slash - s->path) + 1 : 0;
    size_t n = dlen + strlen(s->scenario) + 1;
    if (!(s->scenario_path = malloc(n))) return -1;
    snprintf(s->scenario_path, n, "%.*s%s", (int)dlen, s->path, s->scenario);
    if (access(s->scenario_path, R_OK) == 0) return 0;
    rt_cfg_error(c, fy_node_mapping_lookup_by_string(root, "scenario", FY_NT),
                 "cannot read '%s'; allowed: a scenario file, relative to the sweep file",
                 s->scenario_path);
    return -1;
}

static int parse_engine(rt_cfg *c, struct fy_node *root, rt_sweep_spec *s)
{
    const char *names[MAX_ENGINES + 1];
    int n = 0;
    for (; rt_engines[n] && n < MAX_ENGINES; n++)
        names[n] = rt_engines[n]->name;
    names[n] = NULL;
    int which = -1;
    int rc = rt_cfg_get_enum(c, root, "engine", 0, names, &which);
    if (rc < 0) return -1;
    if (rc == 0 && !(s->engine = strdup(names[which]))) return -1;
    return 0;
}

static int parse(rt_cfg *c, rt_sweep_spec *s)
{
    struct fy_node *root = rt_cfg_root(c);
    if (rt_cfg_check_keys(c, root, sweep_keys)) return -1;
    if (parse_name(c, root, s) || parse_scenario(c, root, s) || parse_engine(c, root, s)) return -1;
    if (rt_cfg_get_str(c, root, "out", 0, &s->out) < 0) return -1;
    if (s->out && !s->out[0]) {
        rt_cfg_error(c, fy_node_mapping_lookup_by_string(root, "out", FY_NT),
                     "empty; allowed: a directory");
        return -1;
    }
    if (parse_base(c, root, s) || parse_grid(c, root, s) || parse_zip(c, root, s)) return -1;
    return count_points(c, root, s);
}

rt_sweep_spec *rt_sweep_spec_load(const char *path, FILE *err)
{
    rt_sweep_spec *s = calloc(1, sizeof *s);
    if (!s || !(s->path = strdup(path))) {
        fprintf(err, "%s: out of memory\n", path);
        rt_sweep_spec_free(s);
        return NULL;
    }
    rt_cfg *c = rt_cfg_load(path, err);
    if (!c || parse(c, s)) {
        rt_cfg_free(c);
        rt_sweep_spec_free(s);
        return NULL;
    }
    rt_cfg_free(c);
    return s;
}

/* ---- points ---------------------------------------------------------------------------- */

int rt_sweep_n_keys(const rt_sweep_spec *s)
{
    int n = 0;
    for (int a = 0; a < s->n_axes; a++)
        n += s->axes[a].n_keys;
    return n;
}

void rt_sweep_point_values(const rt_sweep_spec *s, long point, int *value)
{
    for (int a = s->n_axes - 1; a >= 0; a--) {
        value[a] = (int)(point % s->axes[a].n_values);
        point /= s->axes[a].n_values;
    }
}

int rt_sweep_assign(const rt_sweep_spec *s, const int *value, const char **out)
{
    int n = 0;
    for (int a = 0; a < s->n_axes; a++) {
        const rt_sweep_axis *ax = &s->axes[a];
        for (int k = 0; k < ax->n_keys; k++)
            if (ax->assign[k * ax->n_values + value[a]])
                out[n++] = ax->assign[k * ax->n_values + value[a]];
    }
    return n;
}

int rt_sweep_point_assign(const rt_sweep_spec *s, long point, const char **out)
{
    int v[RT_SWEEP_MAX_KEYS];
    rt_sweep_point_values(s, point, v);
    return rt_sweep_assign(s, v, out);
}

void rt_sweep_point_shown(const rt_sweep_spec *s, long point, const char **out)
{
    int v[RT_SWEEP_MAX_KEYS], col = 0;
    rt_sweep_point_values(s, point, v);
    for (int a = 0; a < s->n_axes; a++) {
        const rt_sweep_axis *ax = &s->axes[a];
        for (int k = 0; k < ax->n_keys; k++)
            out[col++] = ax->shown[k * ax->n_values + v[a]];
    }
}

void rt_sweep_keys(const rt_sweep_spec *s, const char **out)
{
    int col = 0;
    for (int a = 0; a < s->n_axes; a++)
        for (int k = 0; k < s->axes[a].n_keys; k++)
            out[col++] = s->axes[a].keys[k];
}

static uint64_t fnv(uint64_t h, const char *text)
{
    /* The terminating NUL is hashed too, so ("ab", "c") and ("a", "bc") differ. */
    const unsigned char *p = (const unsigned char *)text;
    do {
        h ^= *p;
        h *= 1099511628211ULL;
    } while (*p++);
    return h;
}

uint64_t rt_sweep_hash(const rt_sweep_spec *s, const char *engine, const char *const *extra,
                       int n_extra)
{
    uint64_t h = fnv(14695981039346656037ULL, "rectwin-sweep-points 1");
    h = fnv(fnv(h, s->scenario), engine);
    for (int i = 0; i < s->n_base; i++)
        h = fnv(h, s->base[i]);
    h = fnv(h, "--set");
    for (int i = 0; i < n_extra; i++)
        h = fnv(h, extra[i]);
    const char *assign[RT_SWEEP_MAX_KEYS];
    for (long p = 0; p < s->n_points; p++) {
        int n = rt_sweep_point_assign(s, p, assign);
        h = fnv(h, "point");
        for (int k = 0; k < n; k++)
            h = fnv(h, assign[k]);
    }
    return h;
}

int rt_sweep_check_extra(const rt_sweep_spec *s, const char *const *extra, int n_extra, FILE *err)
{
    for (int i = 0; i < n_extra; i++) {
        const char *eq = strchr(extra[i], '=');
        char *key = eq ? strndup(extra[i], (size_t)(eq - extra[i])) : NULL;
        int taken = key && key_taken(s, key);
        free(key);
        if (!taken) continue;
        fprintf(err,
                "--set:%d:1: '%s': the sweep file sets this key (set, grid or zip); allowed: "
                "keys the sweep does not set\n",
                i + 1, extra[i]);
        return -1;
    }
    return 0;
}
