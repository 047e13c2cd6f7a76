#include "model.h"

#include <libfyaml.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cfg.h"

const char *const rt_optimizer_names[] = {"sgd", "adagrad", "rowwise_adagrad", "adam", NULL};
const char *const rt_layer_kind_names[] = {"mlp", "dot", "dcn", "hstu", "fuxi", "mmoe", NULL};
const char *const rt_id_dist_names[] = {"uniform", "zipf", NULL};
const char *const rt_len_dist_names[] = {"fixed", "lognormal", "empirical", NULL};

int rt_optimizer_state_floats(rt_optimizer o, int dim)
{
    switch (o) {
    case RT_OPT_SGD:
        return 0;
    case RT_OPT_ADAGRAD:
        return dim;
    case RT_OPT_ROWWISE_ADAGRAD:
        return 1;
    case RT_OPT_ADAM:
        return 2 * dim;
    default:
        return 0;
    }
}

static const char *const model_keys[] = {"name",    "source", "dense_features", "dense_dtype",
                                         "seq_len", "loss",   "negatives",      "defaults",
                                         "tables",  "layers", "training",       NULL};
static const char *const training_keys[] = {"dense_optimizer", "dense_lr", "sparse_lr", "beta1",
                                            "beta2",           "eps",      NULL};
static const char *const dense_optimizer_names[] = {"sgd", "adam", NULL};
static const char *const table_keys[] = {"name",      "rows",        "count",    "dim",     "dtype",
                                         "optimizer", "initializer", "sequence", "dynamic", "hash",
                                         "pooling",   "ids",         NULL};
static const char *const len_keys[] = {"kind", "mean",   "sigma",   "min",
                                       "max",  "values", "weights", NULL};
static const char *const id_keys[] = {"kind", "alpha", NULL};
static const char *const layer_keys[] = {
    "type",   "name",        "input", "sizes", "activation_last", "num_layers", "rank",
    "blocks", "heads",       "d_qk",  "d_v",   "d_model",         "ffn_mult",   "experts",
    "tasks",  "tower_sizes", NULL};
static const char *const loss_names[] = {"bce", "sampled_softmax", NULL};

int rt_len_spec_parse(rt_cfg *c, struct fy_node *map, rt_len_spec *l)
{
    if (rt_cfg_check_keys(c, map, len_keys)) return -1;
    int kind = l->kind;
    int64_t lo = l->min, hi = l->max;
    if (rt_cfg_get_enum(c, map, "kind", 0, rt_len_dist_names, &kind) < 0) return -1;
    l->kind = (rt_len_dist)kind;
    if (rt_cfg_get_double(c, map, "mean", l->kind != RT_LEN_EMPIRICAL, 0, 1e9, &l->mean) < 0)
        return -1;
    if (rt_cfg_get_double(c, map, "sigma", l->kind == RT_LEN_LOGNORMAL, 0, 10, &l->sigma) < 0)
        return -1;
    if (rt_cfg_get_int(c, map, "min", 0, 0, 1000000000, &lo) < 0) return -1;
    if (rt_cfg_get_int(c, map, "max", 0, 0, 1000000000, &hi) < 0) return -1;
    l->min = (int)lo;
    l->max = (int)hi;
    if (l->kind == RT_LEN_EMPIRICAL) {
        int nv = 0, nw = 0;
        if (rt_cfg_get_double_list(c, map, "values", 1, 0, 1e9, &l->values, &nv) < 0) return -1;
        if (rt_cfg_get_double_list(c, map, "weights", 1, 0, 1e300, &l->weights, &nw) < 0) return -1;
        if (nv != nw || nv == 0) {
            rt_cfg_error(c, map,
                         "values and weights must be non-empty and of equal length "
                         "(got %d and %d)",
                         nv, nw);
            return -1;
        }
        l->n_bins = nv;
        double total = 0;
        for (int i = 0; i < nw; i++)
            total += l->weights[i];
        if (!(total > 0)) { /* no bin could ever be drawn */
            rt_cfg_error(c, fy_node_mapping_lookup_by_string(map, "weights", FY_NT),
                         "the weights sum to %g; allowed: non-negative weights with a positive sum",
                         total);
            return -1;
        }
    } else if (l->kind == RT_LEN_FIXED && l->mean != (double)(long)l->mean) {
        rt_cfg_error(c, map, "a fixed length must be an integer, got %g", l->mean);
        return -1;
    }
    if (l->max && l->min > l->max) {
        rt_cfg_error(c, map, "min %d > max %d", l->min, l->max);
        return -1;
    }
    return 0;
}

int rt_id_spec_parse(rt_cfg *c, struct fy_node *map, rt_id_spec *s)
{
    if (rt_cfg_check_keys(c, map, id_keys)) return -1;
    int kind = s->kind;
    if (rt_cfg_get_enum(c, map, "kind", 1, rt_id_dist_names, &kind) < 0) return -1;
    s->kind = (rt_id_dist)kind;
    if (rt_cfg_get_double(c, map, "alpha", s->kind == RT_DIST_ZIPF, 1e-3, 10, &s->alpha) < 0)
        return -1;
    return 0;
}

static void len_spec_copy(rt_len_spec *dst, const rt_len_spec *src)
{
    *dst = *src;
    if (src->n_bins) {
        dst->values = malloc(sizeof(double) * (size_t)src->n_bins);
        dst->weights = malloc(sizeof(double) * (size_t)src->n_bins);
        if (!dst->values || !dst->weights) abort();
        memcpy(dst->values, src->values, sizeof(double) * (size_t)src->n_bins);
        memcpy(dst->weights, src->weights, sizeof(double) * (size_t)src->n_bins);
    } else {
        dst->values = dst->weights = NULL;
    }
}

/* Table keys shared by `defaults` and each table entry. */
static int table_fields(rt_cfg *c, struct fy_node *map, rt_table *t)
{
    int64_t dim = t->dim;
    int dtype = t->dtype, opt = t->optimizer, ok = 1;
    if (rt_cfg_get_int(c, map, "dim", 0, 1, 65536, &dim) < 0) return -1;
    t->dim = (int)dim;
    if (rt_cfg_get_enum(c, map, "dtype", 0, rt_dtype_names, &dtype) < 0) return -1;
    t->dtype = (rt_dtype)dtype;
    if (rt_cfg_get_enum(c, map, "optimizer", 0, rt_optimizer_names, &opt) < 0) return -1;
    t->optimizer = (rt_optimizer)opt;
    if (rt_cfg_get_str(c, map, "initializer", 0, &t->initializer) < 0) return -1;
    if (rt_cfg_get_bool(c, map, "sequence", 0, &t->sequence) < 0) return -1;
    if (rt_cfg_get_bool(c, map, "dynamic", 0, &t->dynamic) < 0) return -1;
    struct fy_node *hash = rt_cfg_get_map(c, map, "hash", 0, &ok);
    if (!ok || (hash && rt_dyn_spec_parse(c, hash, &t->hash))) return -1;
    if (hash && !t->dynamic) {
        rt_cfg_error(c, hash, "hash describes a dynamic table; allowed: with dynamic: true");
        return -1;
    }
    struct fy_node *pool = rt_cfg_get_map(c, map, "pooling", 0, &ok);
    if (!ok) return -1;
    if (pool) {
        rt_len_spec l = {.kind = RT_LEN_FIXED, .mean = 1};
        if (rt_len_spec_parse(c, pool, &l)) {
            free(l.values);
            free(l.weights);
            return -1;
        }
        free(t->pooling.values);
        free(t->pooling.weights);
        t->pooling = l;
    }
    struct fy_node *ids = rt_cfg_get_map(c, map, "ids", 0, &ok);
    if (!ok) return -1;
    if (ids && rt_id_spec_parse(c, ids, &t->ids)) return -1;
    return 0;
}

static void table_clear(rt_table *t)
{
    free(t->name);
    free(t->initializer);
    free(t->pooling.values);
    free(t->pooling.weights);
}

static int push_table(rt_model *m, const rt_table *proto, const char *name)
{
    rt_table *nt = realloc(m->tables, sizeof *nt * (size_t)(m->n_tables + 1));
    if (!nt) return -1;
    m->tables = nt;
    rt_table *t = &m->tables[m->n_tables++];
    *t = *proto;
    t->name = strdup(name);
    t->initializer = strdup(proto->initializer ? proto->initializer : "uniform");
    len_spec_copy(&t->pooling, &proto->pooling);
    return 0;
}

/* Table names seen so far, hashed: models list up to hundreds of thousands of tables, and a
 * pairwise duplicate check is quadratic in them. Open addressing over indices into m->tables. */
typedef struct name_set {
    int *slot; /* -1: empty */
    size_t cap;
} name_set;

static uint64_t name_hash(const char *s)
{
    uint64_t h = 0xcbf29ce484222325ULL;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 0x100000001b3ULL;
    return h;
}

/* Index of the table called NAME, or -1. */
static int name_find(const name_set *ns, const rt_model *m, const char *name)
{
    for (size_t i = name_hash(name) & (ns->cap - 1);; i = (i + 1) & (ns->cap - 1)) {
        if (ns->slot[i] < 0) return -1;
        if (!strcmp(m->tables[ns->slot[i]].name, name)) return ns->slot[i];
    }
}

/* Adds table index T (its name is new); grows at half load. 0 or -1 (out of memory). */
static int name_add(name_set *ns, const rt_model *m, int t)
{
    if (2 * (size_t)(t + 1) > ns->cap) {
        name_set g = {malloc(sizeof(int) * (ns->cap ? 2 * ns->cap : 64)),
                      ns->cap ? 2 * ns->cap : 64};
        if (!g.slot) return -1;
        for (size_t i = 0; i < g.cap; i++)
            g.slot[i] = -1;
        for (int k = 0; k < t; k++)
            name_add(&g, m, k);
        free(ns->slot);
        *ns = g;
    }
    size_t i = name_hash(m->tables[t].name) & (ns->cap - 1);
    while (ns->slot[i] >= 0)
        i = (i + 1) & (ns->cap - 1);
    ns->slot[i] = t;
    return 0;
}

static int parse_tables(rt_cfg *c, struct fy_node *seq, const rt_table *defaults, rt_model *m)
{
    void *it = NULL;
    struct fy_node *item;
    name_set names = {NULL, 0};
    int failed = 0;
    for (int t = 0; t < m->n_tables && !failed; t++)
        failed = name_add(&names, m, t);
    while (!failed && (item = fy_node_sequence_iterate(seq, &it))) {
        if (rt_cfg_check_keys(c, item, table_keys)) {
            failed = 1;
            break;
        }
        rt_table t = *defaults;
        t.name = NULL;
        t.initializer = defaults->initializer ? strdup(defaults->initializer) : NULL;
        len_spec_copy(&t.pooling, &defaults->pooling);
        int64_t rows = 0, count = 1;
        int rc = rt_cfg_get_str(c, item, "name", 1, &t.name) < 0 ||
                 rt_cfg_get_int(c, item, "rows", 1, 1, INT64_MAX / 2, &rows) < 0 ||
                 rt_cfg_get_int(c, item, "count", 0, 1, 100000, &count) < 0 ||
                 table_fields(c, item, &t);
        t.rows = (uint64_t)rows;
        if (!rc && t.sequence && !m->seq_len) {
            rt_cfg_error(c, item, "a sequence table needs the model's seq_len to be set");
            rc = 1;
        }
        for (int64_t i = 0; !rc && i < count; i++) {
            char name[160];
            if (count > 1)
                snprintf(name, sizeof name, "%s_%lld", t.name, (long long)i);
            else
                snprintf(name, sizeof name, "%s", t.name);
            if (names.cap && name_find(&names, m, name) >= 0) {
                rt_cfg_error(c, item, "duplicate table name '%s'", name);
                rc = 1;
            }
            if (!rc && (push_table(m, &t, name) || name_add(&names, m, m->n_tables - 1))) rc = 1;
        }
        table_clear(&t);
        if (rc) failed = 1;
    }
    free(names.slot);
    return failed ? -1 : 0;
}

static int parse_inputs(rt_cfg *c, struct fy_node *layer, rt_model *m, rt_layer *l)
{
    int ok = 1;
    struct fy_node *seq = rt_cfg_get_seq(c, layer, "input", 0, &ok);
    if (!ok) return -1;
    if (!seq) return 0;
    int n = fy_node_sequence_item_count(seq);
    l->inputs = calloc((size_t)n + 1, sizeof(rt_src));
    if (!l->inputs) return -1;
    void *it = NULL;
    struct fy_node *item;
    while ((item = fy_node_sequence_iterate(seq, &it))) {
        size_t len;
        const char *s =
            fy_node_get_type(item) == FYNT_SCALAR ? fy_node_get_scalar(item, &len) : NULL;
        rt_src src = {RT_SRC_LAYER, -1};
        if (!s) {
            rt_cfg_error(c, item, "expected an input name");
            return -1;
        }
        if (len == 5 && !memcmp(s, "dense", 5))
            src.kind = RT_SRC_DENSE;
        else if (len == 10 && !memcmp(s, "embeddings", 10))
            src.kind = RT_SRC_EMBEDDINGS;
        else if (len == 8 && !memcmp(s, "sequence", 8))
            src.kind = RT_SRC_SEQUENCE;
        else
            for (int j = 0; j < m->n_layers; j++)
                if (strlen(m->layers[j].name) == len && !memcmp(m->layers[j].name, s, len))
                    src.layer = j;
        if (src.kind == RT_SRC_LAYER && src.layer < 0) {
            rt_cfg_error(c, item,
                         "unknown input '%.*s'; allowed: dense, embeddings, sequence, or "
                         "the name of an earlier layer",
                         (int)len, s);
            return -1;
        }
        l->inputs[l->n_inputs++] = src;
    }
    return 0;
}

static int to_int_array(const int64_t *v, int n, int **out)
{
    *out = malloc(sizeof(int) * (size_t)(n ? n : 1));
    if (!*out) return -1;
    for (int i = 0; i < n; i++)
        (*out)[i] = (int)v[i];
    return 0;
}

static int parse_layer(rt_cfg *c, struct fy_node *item, rt_model *m, rt_layer *l)
{
    if (rt_cfg_check_keys(c, item, layer_keys)) return -1;
    int kind = 0;
    if (rt_cfg_get_enum(c, item, "type", 1, rt_layer_kind_names, &kind) < 0) return -1;
    l->kind = (rt_layer_kind)kind;
    if (rt_cfg_get_str(c, item, "name", 1, &l->name) < 0) return -1;
    for (int j = 0; j < m->n_layers; j++)
        if (strcmp(m->layers[j].name, l->name) == 0) {
            rt_cfg_error(c, item, "duplicate layer name '%s'", l->name);
            return -1;
        }
    if (parse_inputs(c, item, m, l)) return -1;
    int64_t *v = NULL;
    int n = 0;
    int need_sizes = l->kind == RT_LAYER_MLP || l->kind == RT_LAYER_MMOE;
    int r = rt_cfg_get_int_list(c, item, "sizes", need_sizes, 1, 1 << 20, &v, &n);
    if (r < 0) return -1;
    if (r == 0 && (n == 0 || to_int_array(v, n, &l->sizes))) {
        free(v);
        rt_cfg_error(c, item, "'sizes' must be a non-empty list");
        return -1;
    }
    l->n_sizes = r == 0 ? n : 0;
    free(v);
    v = NULL;
    l->activation_last = !(l->n_sizes && l->sizes[l->n_sizes - 1] == 1);
    if (rt_cfg_get_bool(c, item, "activation_last", 0, &l->activation_last) < 0) return -1;
    int is_seq = l->kind == RT_LAYER_HSTU || l->kind == RT_LAYER_FUXI;
    int64_t x;
#define INT_KEY(key, field, req, lo, hi)                                                           \
    x = l->field;                                                                                  \
    if (rt_cfg_get_int(c, item, key, req, lo, hi, &x) < 0) return -1;                              \
    l->field = (int)x;
    INT_KEY("num_layers", num_layers, l->kind == RT_LAYER_DCN, 1, 1000)
    INT_KEY("rank", rank, l->kind == RT_LAYER_DCN, 1, 1 << 20)
    INT_KEY("blocks", num_layers, is_seq, 1, 1000)
    INT_KEY("heads", heads, is_seq, 1, 1024)
    INT_KEY("d_qk", d_qk, is_seq, 1, 1 << 16)
    INT_KEY("d_v", d_v, is_seq, 1, 1 << 16)
    INT_KEY("d_model", d_model, 0, 0, 1 << 20)
    INT_KEY("ffn_mult", ffn_mult, l->kind == RT_LAYER_FUXI, 1, 64)
    INT_KEY("experts", experts, l->kind == RT_LAYER_MMOE, 1, 1024)
    INT_KEY("tasks", tasks, l->kind == RT_LAYER_MMOE, 1, 1024)
#undef INT_KEY
    r = rt_cfg_get_int_list(c, item, "tower_sizes", 0, 1, 1 << 20, &v, &n);
    if (r < 0) return -1;
    if (r == 0 && to_int_array(v, n, &l->tower_sizes)) {
        free(v);
        return -1;
    }
    l->n_tower_sizes = r == 0 ? n : 0;
    free(v);
    return 0;
}

static int parse_layers(rt_cfg *c, struct fy_node *seq, rt_model *m)
{
    void *it = NULL;
    struct fy_node *item;
    while ((item = fy_node_sequence_iterate(seq, &it))) {
        rt_layer *nl = realloc(m->layers, sizeof *nl * (size_t)(m->n_layers + 1));
        if (!nl) return -1;
        m->layers = nl;
        rt_layer l = {0};
        int rc = parse_layer(c, item, m, &l);
        m->layers[m->n_layers++] = l; /* kept even on error so rt_model_free releases it */
        if (rc) return -1;
    }
    return 0;
}

/* Defaults: Adam at 1e-3 for the dense part (the usual DLRM/HSTU recipes' order), plain
 * learning rate 0.01 for the tables' own optimizers. */
static int parse_training(rt_cfg *c, struct fy_node *map, rt_model *m, int partial)
{
    rt_training *t = &m->training;
    if (!partial)
        *t = (rt_training){.dense_optimizer = RT_OPT_ADAM,
                           .dense_lr = 1e-3,
                           .sparse_lr = 0.01,
                           .beta1 = 0.9,
                           .beta2 = 0.999,
                           .eps = 1e-8};
    int ok = 1;
    struct fy_node *tm = rt_cfg_get_map(c, map, "training", 0, &ok);
    if (!ok) return -1;
    if (!tm) return 0;
    if (rt_cfg_check_keys(c, tm, training_keys)) return -1;
    int e = t->dense_optimizer == RT_OPT_ADAM;
    if (rt_cfg_get_enum(c, tm, "dense_optimizer", 0, dense_optimizer_names, &e) < 0) return -1;
    t->dense_optimizer = e ? RT_OPT_ADAM : RT_OPT_SGD;
    if (rt_cfg_get_double(c, tm, "dense_lr", 0, 0, 1e6, &t->dense_lr) < 0 ||
        rt_cfg_get_double(c, tm, "sparse_lr", 0, 0, 1e6, &t->sparse_lr) < 0 ||
        rt_cfg_get_double(c, tm, "beta1", 0, 0, 0.999999, &t->beta1) < 0 ||
        rt_cfg_get_double(c, tm, "beta2", 0, 0, 0.999999, &t->beta2) < 0 ||
        rt_cfg_get_double(c, tm, "eps", 0, 1e-30, 1, &t->eps) < 0)
        return -1;
    return 0;
}

int rt_model_parse(rt_cfg *c, struct fy_node *map, rt_model *m, int partial)
{
    if (rt_cfg_check_keys(c, map, model_keys)) return -1;
    int req = !partial, ok = 1;
    int64_t x;
    int e;
    if (rt_cfg_get_str(c, map, "name", req, &m->name) < 0) return -1;
    if (rt_cfg_get_str(c, map, "source", req, &m->source) < 0) return -1;
    x = m->dense_features;
    if (rt_cfg_get_int(c, map, "dense_features", req, 0, 1 << 20, &x) < 0) return -1;
    m->dense_features = (int)x;
    e = m->dense_dtype;
    if (rt_cfg_get_enum(c, map, "dense_dtype", 0, rt_dtype_names, &e) < 0) return -1;
    m->dense_dtype = (rt_dtype)e;
    x = m->seq_len;
    if (rt_cfg_get_int(c, map, "seq_len", 0, 0, 1 << 24, &x) < 0) return -1;
    m->seq_len = (int)x;
    e = m->loss && !strcmp(m->loss, "sampled_softmax");
    if (rt_cfg_get_enum(c, map, "loss", 0, loss_names, &e) < 0) return -1;
    free(m->loss);
    m->loss = strdup(loss_names[e]);
    x = m->negatives;
    if (rt_cfg_get_int(c, map, "negatives", 0, 0, 1 << 20, &x) < 0) return -1;
    m->negatives = (int)x;

    if (parse_training(c, map, m, partial)) return -1;

    rt_table defaults = {.dim = 128,
                         .dtype = RT_DT_FP32,
                         .optimizer = RT_OPT_ROWWISE_ADAGRAD,
                         .hash = rt_dyn_spec_default(),
                         .pooling = {.kind = RT_LEN_FIXED, .mean = 1},
                         .ids = {.kind = RT_DIST_UNIFORM}};
    struct fy_node *dmap = rt_cfg_get_map(c, map, "defaults", 0, &ok);
    if (!ok) return -1;
    if (dmap) {
        static const char *const default_keys[] = {
            "dim",     "dtype", "optimizer", "initializer", "sequence",
            "dynamic", "hash",  "pooling",   "ids",         NULL};
        if (rt_cfg_check_keys(c, dmap, default_keys) || table_fields(c, dmap, &defaults)) {
            table_clear(&defaults);
            return -1;
        }
    }
    struct fy_node *tables = rt_cfg_get_seq(c, map, "tables", req, &ok);
    int rc = 0;
    if (!ok)
        rc = -1;
    else if (tables) {
        if (partial) {
            rt_cfg_error(c, tables,
                         "tables cannot be overridden from a scenario; edit the model file");
            rc = -1;
        } else {
            rc = parse_tables(c, tables, &defaults, m);
        }
    }
    table_clear(&defaults);
    if (rc) return -1;
    struct fy_node *layers = rt_cfg_get_seq(c, map, "layers", req, &ok);
    if (!ok) return -1;
    if (layers) {
        if (partial) {
            rt_cfg_error(c, layers,
                         "layers cannot be overridden from a scenario; edit the model file");
            return -1;
        }
        if (parse_layers(c, layers, m)) return -1;
    }
    if (!partial && (m->n_tables == 0 || m->n_layers == 0)) {
        rt_cfg_error(c, map, "a model needs at least one table and one layer");
        return -1;
    }
    return 0;
}

void rt_model_free(rt_model *m)
{
    if (!m) return;
    for (int i = 0; i < m->n_tables; i++)
        table_clear(&m->tables[i]);
    free(m->tables);
    for (int i = 0; i < m->n_layers; i++) {
        free(m->layers[i].name);
        free(m->layers[i].inputs);
        free(m->layers[i].sizes);
        free(m->layers[i].tower_sizes);
    }
    free(m->layers);
    free(m->name);
    free(m->source);
    free(m->loss);
    memset(m, 0, sizeof *m);
}
