#include "result_read.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "atomic_file.h"
#include "csv_read.h"
#include "json_read.h"
#include "manifest.h"

const char *const rt_summary_metric_names[RT_SUMMARY_N_METRICS] = {
    "iteration_time_s", "samples_per_s",  "mfu",           "mbu",
    "comm_time_s",      "exposed_comm_s", "peak_hbm_bytes"};

/* ---- summary.json --------------------------------------------------------------------- */

void rt_summary_free(rt_summary *s)
{
    for (int i = 0; i < s->n_phases; i++)
        free(s->phase[i]);
    free(s->phase);
    free(s->phase_s);
    free(s->group);
    memset(s, 0, sizeof *s);
}

int rt_summary_phase(const rt_summary *s, const char *name)
{
    for (int i = 0; i < s->n_phases; i++)
        if (!strcmp(s->phase[i], name)) return i;
    return -1;
}

const rt_summary_group *rt_summary_group_of(const rt_summary *s, long op)
{
    for (int i = 0; i < s->n_groups; i++)
        if (s->group[i].op == op) return &s->group[i];
    return NULL;
}

/* The number under KEY of the mapping MAP into *OUT. Returns 0, 1 when KEY is absent and not
 * REQUIRED, or -1 with a located message. */
static int get_number(struct fy_node *map, const char *key, const char *what, int required,
                      double *out, const char *path, FILE *err)
{
    struct fy_node_pair *p = fy_node_mapping_lookup_pair_by_string(map, key, FY_NT);
    if (!p) {
        if (!required) return 1;
        fprintf(err, "%s: key '%s' is missing\n", path, what);
        return -1;
    }
    if (rt_jread_number(fy_node_pair_value(p), out)) {
        rt_jread_location(path, rt_jread_pair_location(p), err);
        fprintf(err, "key '%s': expected a number or null\n", what);
        return -1;
    }
    return 0;
}

static int read_metrics(rt_summary *s, struct fy_node *root, const char *path, FILE *err)
{
    for (int i = 0; i < RT_SUMMARY_N_METRICS; i++) {
        const char *k = rt_summary_metric_names[i];
        if (get_number(root, k, k, 1, &s->metric[i], path, err)) return -1;
    }
    return 0;
}

static int add_phase(rt_summary *s, const char *name, size_t len, double seconds, const char *path,
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

static int read_phase_pair(rt_summary *s, struct fy_node_pair *p, const char *path, FILE *err)
{
    struct fy_node *k = fy_node_pair_key(p);
    size_t len = 0;
    const char *name = k && fy_node_get_type(k) == FYNT_SCALAR ? fy_node_get_scalar(k, &len) : NULL;
    if (!name || len == 0 || memchr(name, '\0', len)) {
        rt_jread_location(path, k, err);
        fprintf(err, "key 'phases': phase names must be non-empty strings\n");
        return -1;
    }
    double seconds;
    if (rt_jread_number(fy_node_pair_value(p), &seconds)) {
        rt_jread_location(path, rt_jread_pair_location(p), err);
        fprintf(err, "key 'phases.%.*s': expected a number of seconds or null\n", (int)len, name);
        return -1;
    }
    return add_phase(s, name, len, seconds, path, err);
}

static int read_phases(rt_summary *s, struct fy_node *root, const char *path, FILE *err)
{
    struct fy_node_pair *pp = fy_node_mapping_lookup_pair_by_string(root, "phases", FY_NT);
    struct fy_node *ph = pp ? fy_node_pair_value(pp) : NULL;
    if (!pp) {
        fprintf(err, "%s: key 'phases' is missing\n", path);
        return -1;
    }
    if (!ph || fy_node_get_type(ph) != FYNT_MAPPING) {
        rt_jread_location(path, fy_node_pair_key(pp), err);
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

/* Names are shown only in labels and titles, so an odd one is not an error. */
static void read_label(struct fy_node *map, const char *key, char *buf, size_t size)
{
    struct fy_node *v = fy_node_mapping_lookup_by_string(map, key, FY_NT);
    if (!v || !rt_jread_scalar(v, buf, size) || !strcmp(buf, "null")) snprintf(buf, size, "?");
}

static long read_count(struct fy_node *map, const char *key)
{
    double x;
    struct fy_node *v = fy_node_mapping_lookup_by_string(map, key, FY_NT);
    if (!v || rt_jread_number(v, &x) || !(x >= 0 && x <= INT_MAX) || x != floor(x)) return -1;
    return (long)x;
}

static void read_labels(rt_summary *s, struct fy_node *root)
{
    read_label(root, "engine", s->engine, sizeof s->engine);
    read_label(root, "scenario", s->scenario, sizeof s->scenario);
    read_label(root, "topology", s->topology, sizeof s->topology);
    read_label(root, "plan", s->plan, sizeof s->plan);
    s->nodes = read_count(root, "nodes");
    s->ranks = read_count(root, "ranks");
}

/* ---- summary.json: hardware and collective groups (optional) ---------------------------- */

static int read_peaks(rt_summary_hw *hw, struct fy_node *hwn, const char *path, FILE *err)
{
    struct fy_node *pf = fy_node_mapping_lookup_by_string(hwn, "peak_flops", FY_NT);
    if (!pf || fy_node_get_type(pf) != FYNT_MAPPING) {
        rt_jread_location(path, pf ? pf : hwn, err);
        fprintf(err, "key 'hardware.peak_flops': expected an object of dtype: FLOP/s\n");
        return -1;
    }
    for (int d = 0; d < RT_DT_COUNT; d++) {
        char what[64];
        snprintf(what, sizeof what, "hardware.peak_flops.%s", rt_dtype_names[d]);
        if (get_number(pf, rt_dtype_names[d], what, 0, &hw->peak_flops[d], path, err) < 0)
            return -1;
        if (!(hw->peak_flops[d] > 0)) hw->peak_flops[d] = 0;
    }
    return 0;
}

static int read_hardware(rt_summary_hw *hw, struct fy_node *root, const char *path, FILE *err)
{
    struct fy_node *n = fy_node_mapping_lookup_by_string(root, "hardware", FY_NT);
    if (!n) return 0;
    if (fy_node_get_type(n) != FYNT_MAPPING) {
        rt_jread_location(path, n, err);
        fprintf(err, "key 'hardware': expected an object\n");
        return -1;
    }
    static const char *const keys[] = {"hbm_bw", "launch_overhead_s", "scale_up_bw",
                                       "nic_bw_per_device", "collective_latency_s"};
    double *out[] = {&hw->hbm_bw, &hw->launch_overhead_s, &hw->scale_up_bw, &hw->nic_bw_per_device,
                     &hw->collective_latency_s};
    for (int i = 0; i < 5; i++) {
        char what[64];
        snprintf(what, sizeof what, "hardware.%s", keys[i]);
        if (get_number(n, keys[i], what, 1, out[i], path, err)) return -1;
    }
    if (read_peaks(hw, n, path, err)) return -1;
    read_label(n, "device", hw->device, sizeof hw->device);
    long dev = read_count(n, "devices_per_node");
    hw->devices_per_node = dev > 0 ? (int)dev : 1;
    hw->present = 1;
    return 0;
}

static int read_group(rt_summary_group *g, struct fy_node *item, const char *path, FILE *err)
{
    long op = fy_node_get_type(item) == FYNT_MAPPING ? read_count(item, "op") : -1;
    long size = op >= 0 ? read_count(item, "size") : -1;
    long stride = size >= 1 ? read_count(item, "stride") : -1;
    if (stride < 1) {
        rt_jread_location(path, item, err);
        fprintf(err, "key 'collective_groups': expected objects of integers op, size >= 1, "
                     "stride >= 1\n");
        return -1;
    }
    *g = (rt_summary_group){op, (int)size, (int)stride};
    return 0;
}

static int read_groups(rt_summary *s, struct fy_node *root, const char *path, FILE *err)
{
    struct fy_node *n = fy_node_mapping_lookup_by_string(root, "collective_groups", FY_NT);
    if (!n) return 0;
    int count = fy_node_get_type(n) == FYNT_SEQUENCE ? fy_node_sequence_item_count(n) : -1;
    if (count < 0) {
        rt_jread_location(path, n, err);
        fprintf(err, "key 'collective_groups': expected an array\n");
        return -1;
    }
    s->group = calloc((size_t)count + 1, sizeof *s->group);
    if (!s->group) {
        fprintf(err, "%s: out of memory\n", path);
        return -1;
    }
    void *it = NULL;
    struct fy_node *item;
    while (s->n_groups < count && (item = fy_node_sequence_iterate(n, &it)))
        if (read_group(&s->group[s->n_groups++], item, path, err)) return -1;
    return 0;
}

int rt_summary_load(rt_summary *s, const char *path, FILE *err)
{
    memset(s, 0, sizeof *s);
    rt_jread j;
    if (rt_jread_open(&j, path, err)) return -1;
    int rc = -1;
    struct fy_node *root = fy_document_root(j.doc);
    if (!root || fy_node_get_type(root) != FYNT_MAPPING) {
        rt_jread_location(path, root, err);
        fprintf(err, "expected a JSON object at the top\n");
    } else if (!read_metrics(s, root, path, err) && !read_phases(s, root, path, err) &&
               !read_hardware(&s->hw, root, path, err) && !read_groups(s, root, path, err)) {
        read_labels(s, root);
        rc = 0;
    }
    rt_jread_close(&j);
    if (rc) rt_summary_free(s);
    return rc;
}

/* ---- ops.csv -------------------------------------------------------------------------- */

enum { COL_RANK, COL_NAME, COL_PHASE, COL_START, COL_END, N_NEEDED };
enum { COL_OP = N_NEEDED, COL_STREAM, COL_TYPE, COL_FLOPS, COL_BYTES, N_COLS };
static const char *const col_names[N_COLS] = {"rank", "name",   "phase", "start_s", "end_s",
                                              "op",   "stream", "type",  "flops",   "bytes"};

typedef struct ops_reader {
    rt_csv c;
    rt_csv_record rec;
    int n_fields;
    int col[N_COLS]; /* field index of each column, -1 when an optional one is absent */
} ops_reader;

/* Columns are found by header name so that writers may add or reorder columns. */
static int read_header(ops_reader *o)
{
    if (rt_csv_header(&o->c, &o->rec)) return -1;
    o->n_fields = o->rec.n;
    for (int k = 0; k < N_COLS; k++)
        o->col[k] = rt_csv_column(&o->rec, col_names[k]);
    for (int k = 0; k < N_NEEDED; k++)
        if (o->col[k] < 0) {
            fprintf(o->c.err,
                    "%s:1:1: header lacks the column '%s' (needed: rank, name, phase, "
                    "start_s, end_s)\n",
                    o->c.path, col_names[k]);
            return -1;
        }
    return 0;
}

static int parse_count(const char *s, long *out)
{
    char *end;
    errno = 0;
    long v = (*s >= '0' && *s <= '9') ? strtol(s, &end, 10) : -1;
    if (v < 0 || *end || errno == ERANGE || v > INT_MAX) return -1;
    *out = v;
    return 0;
}

static int parse_number(const char *s, double *out)
{
    char *end;
    double v =
        (*s == '-' || *s == '+' || *s == '.' || (*s >= '0' && *s <= '9')) ? strtod(s, &end) : NAN;
    if (isnan(v) || *end || !isfinite(v)) return -1;
    *out = v;
    return 0;
}

static rt_csv_field *field_at(ops_reader *o, int k)
{
    return &o->rec.f[o->col[k]];
}

/* Text of column K in the current record; "" when the column is absent. */
static const char *text(ops_reader *o, int k)
{
    return o->col[k] >= 0 ? field_at(o, k)->text : "";
}

static int fail(ops_reader *o, int k, const char *what)
{
    rt_csv_value_error(&o->c, field_at(o, k), col_names[k], what);
    return -1;
}

static int parse_times(ops_reader *o, rt_op_row *row)
{
    if (parse_number(text(o, COL_START), &row->start))
        return fail(o, COL_START, "expected a finite number of seconds");
    if (parse_number(text(o, COL_END), &row->end) || row->end < row->start)
        return fail(o, COL_END, "expected a finite number of seconds >= start_s");
    row->dur = row->end - row->start;
    return 0;
}

static int parse_optional(ops_reader *o, rt_op_row *row)
{
    row->op = -1;
    row->flops = row->bytes = NAN;
    if (o->col[COL_OP] >= 0 && parse_count(text(o, COL_OP), &row->op))
        return fail(o, COL_OP, "expected an op index (an integer >= 0)");
    int k[2] = {COL_FLOPS, COL_BYTES};
    double *out[2] = {&row->flops, &row->bytes};
    for (int i = 0; i < 2; i++)
        if (o->col[k[i]] >= 0 && (parse_number(text(o, k[i]), out[i]) || *out[i] < 0))
            return fail(o, k[i], "expected a finite number >= 0");
    row->stream = text(o, COL_STREAM);
    row->type = text(o, COL_TYPE);
    return 0;
}

static int parse_row(ops_reader *o, rt_op_row *row)
{
    if (rt_csv_check_width(&o->c, &o->rec, o->n_fields)) return -1;
    if (parse_count(text(o, COL_RANK), &row->rank))
        return fail(o, COL_RANK, "expected a rank (an integer >= 0)");
    if (!*text(o, COL_PHASE)) return fail(o, COL_PHASE, "expected a phase name");
    if (parse_times(o, row) || parse_optional(o, row)) return -1;
    row->name = text(o, COL_NAME);
    row->phase = text(o, COL_PHASE);
    return 0;
}

static int push_row(rt_ops *t, long *cap, const rt_op_row *row)
{
    if (t->n == *cap) {
        long n = *cap ? 2 * *cap : 1024;
        rt_op_row *r =
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

static int read_rows(ops_reader *o, rt_ops *t)
{
    long cap = 0;
    while (!rt_csv_at_end(&o->c)) {
        rt_op_row row = {0};
        if (rt_csv_record_read(&o->c, &o->rec) || parse_row(o, &row)) return -1;
        if (push_row(t, &cap, &row)) {
            fprintf(o->c.err, "%s: out of memory\n", o->c.path);
            return -1;
        }
    }
    return 0;
}

void rt_ops_free(rt_ops *t)
{
    free(t->buf);
    free(t->row);
    memset(t, 0, sizeof *t);
}

int rt_ops_load(rt_ops *t, const char *path, FILE *err)
{
    memset(t, 0, sizeof *t);
    ops_reader o = {0};
    int rc = rt_csv_load(&o.c, path, err);
    if (!rc) rc = read_header(&o);
    if (!rc) rc = read_rows(&o, t);
    t->buf = o.c.buf;
    t->has_op = o.col[COL_OP] >= 0;
    t->has_stream = o.col[COL_STREAM] >= 0;
    t->has_type = o.col[COL_TYPE] >= 0;
    t->has_cost = o.col[COL_FLOPS] >= 0 && o.col[COL_BYTES] >= 0;
    rt_csv_record_free(&o.rec);
    if (rc) rt_ops_free(t);
    return rc;
}

/* ---- a result directory --------------------------------------------------------------- */

static int check_dir(const char *dir, const char *who, FILE *err)
{
    struct stat st;
    if (stat(dir, &st) != 0) {
        fprintf(err, "%s: %s: %s\n", who, dir, strerror(errno));
        return -1;
    }
    if (S_ISDIR(st.st_mode)) return 0;
    fprintf(err, "%s: %s: not a result directory (one with summary.json and ops.csv)\n", who, dir);
    return -1;
}

int rt_result_dir_load(const char *dir, rt_summary *s, rt_ops *t, const char *who, FILE *err)
{
    char *json = rt_path_join(dir, "summary.json"), *ops = rt_path_join(dir, "ops.csv");
    int rc = -1;
    memset(s, 0, sizeof *s);
    memset(t, 0, sizeof *t);
    if (!json || !ops)
        fprintf(err, "%s: out of memory\n", who);
    else if (check_dir(dir, who, err) == 0 && rt_manifest_check(dir, err) >= 0 &&
             !rt_summary_load(s, json, err))
        rc = rt_ops_load(t, ops, err) ? -1 : 0;
    if (rc) rt_summary_free(s);
    free(json);
    free(ops);
    return rc;
}
