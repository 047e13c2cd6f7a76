#include "scenario.h"

#include <libfyaml.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cfg.h"

const char *const rt_sharding_names[] = {"table_wise", "row_wise", "column_wise", NULL};
const char *const rt_workload_mode_names[] = {"auto", "exact", "statistical", NULL};
const char *const rt_allreduce_names[] = {"auto", "ring", "tree", "hierarchical", "nvls", NULL};
const char *const rt_overlap_names[] = {"sync", "pipeline", "semi_async", NULL};
const char *const rt_balance_names[] = {"none", "dynamic_batching", "token_realloc", NULL};
const char *const rt_memory_policy_names[] = {"refuse", "warn", NULL};
const char *const rt_attention_names[] = {"fused", "unfused", NULL};
const char *const rt_seq_layout_names[] = {"jagged", "padded", NULL};

static const char *const scenario_keys[] = {"name", "description", "model", "topology",
                                            "plan", "workload",    NULL};
static const char *const workload_keys[] = {"batch_per_rank",
                                            "global_batch",
                                            "seed",
                                            "iterations",
                                            "mode",
                                            "exact_max_ranks",
                                            "reps",
                                            "id_bytes",
                                            "ids",
                                            "pooling",
                                            "seq_len",
                                            "warmup",
                                            "sequence_layout",
                                            "new_id_rate",
                                            NULL};
static const char *const precision_keys[] = {"dense", "embedding", "comm", NULL};

/* A file named in DOC: relative to DOC's directory first, then to the working directory. */
static char *resolve_path(const char *doc_path, const char *name)
{
    if (name[0] != '/') {
        const char *slash = strrchr(doc_path, '/');
        if (slash) {
            size_t dlen = (size_t)(slash - doc_path) + 1;
            char *p = malloc(dlen + strlen(name) + 1);
            if (!p) return NULL;
            memcpy(p, doc_path, dlen);
            strcpy(p + dlen, name);
            if (access(p, R_OK) == 0) return p;
            free(p);
        }
    }
    return strdup(name);
}

/* Loads the file named by SECTION.file, parses it with PARSE, then parses SECTION's other
 * keys over it as overrides. */
typedef int (*section_parser)(rt_cfg *c, struct fy_node *map, void *obj, int partial);

static int parse_model_cb(rt_cfg *c, struct fy_node *m, void *o, int p)
{
    return rt_model_parse(c, m, o, p);
}
static int parse_topo_cb(rt_cfg *c, struct fy_node *m, void *o, int p)
{
    return rt_topology_parse(c, m, o, p);
}

/* Copy of SECTION without the keys the scenario itself consumes, so the file's parser sees
 * only its own keys. Built as a fresh mapping in the scenario document. */
static int load_section(rt_scenario *s, rt_cfg *sc, struct fy_node *section, const char *what,
                        const char *const *own_keys, section_parser parse, void *obj, int slot,
                        FILE *err)
{
    char *file = NULL;
    if (rt_cfg_get_str(sc, section, "file", 1, &file) < 0) return -1;
    char *path = resolve_path(rt_cfg_path(sc), file);
    free(file);
    if (!path) return -1;
    rt_cfg *doc = rt_cfg_load(path, err);
    free(path);
    if (!doc) {
        rt_cfg_error(sc, fy_node_mapping_lookup_by_string(section, "file", FY_NT),
                     "cannot load the %s file", what);
        return -1;
    }
    s->docs[slot] = doc;
    if (parse(doc, rt_cfg_root(doc), obj, 0)) return -1;
    /* Overrides: the section's other keys, parsed as a partial file. The scenario's own keys
     * have been read by now; dropping them lets the file's parser check keys strictly. */
    struct fy_document *fyd = fy_node_document(section);
    for (int i = 0; own_keys[i]; i++) {
        if (!fy_node_mapping_lookup_by_string(section, own_keys[i], FY_NT)) continue;
        struct fy_node *k = fy_node_create_scalar_copy(fyd, own_keys[i], FY_NT);
        fy_node_free(fy_node_mapping_remove_by_key(section, k));
    }
    return parse(sc, section, obj, 1);
}

static int parse_workload(rt_cfg *c, struct fy_node *w, rt_workload_cfg *wl, int ranks)
{
    int ok = 1, mode = RT_MODE_AUTO, layout = RT_SEQ_JAGGED;
    int64_t b = 0, gb = 0, seed = 1, iters = 1, warmup = 2, emax = 256, reps = 8, idb = 8;
    if (rt_cfg_check_keys(c, w, workload_keys)) return -1;
    int has_b = rt_cfg_get_int(c, w, "batch_per_rank", 0, 1, 1 << 24, &b);
    int has_gb = rt_cfg_get_int(c, w, "global_batch", 0, 1, (int64_t)1 << 40, &gb);
    if (has_b < 0 || has_gb < 0) return -1;
    if (has_b == 1 && has_gb == 1) {
        rt_cfg_error(c, w, "give batch_per_rank or global_batch");
        return -1;
    }
    if (has_gb == 0) {
        struct fy_node *v = fy_node_mapping_lookup_by_string(w, "global_batch", FY_NT);
        if (gb % ranks) {
            rt_cfg_error(c, v, "%lld is not divisible by the %d ranks; allowed: a multiple of %d",
                         (long long)gb, ranks, ranks);
            return -1;
        }
        if (has_b == 0 && b * ranks != gb) {
            rt_cfg_error(c, v, "global_batch %lld != batch_per_rank %lld x %d ranks", (long long)gb,
                         (long long)b, ranks);
            return -1;
        }
        b = gb / ranks;
    }
    if (rt_cfg_get_int(c, w, "seed", 0, 0, INT64_MAX, &seed) < 0 ||
        rt_cfg_get_int(c, w, "iterations", 0, 1, 1000000, &iters) < 0 ||
        rt_cfg_get_int(c, w, "warmup", 0, 0, 1000000, &warmup) < 0 ||
        rt_cfg_get_enum(c, w, "mode", 0, rt_workload_mode_names, &mode) < 0 ||
        rt_cfg_get_int(c, w, "exact_max_ranks", 0, 1, 1 << 20, &emax) < 0 ||
        rt_cfg_get_int(c, w, "reps", 0, 1, 1024, &reps) < 0 ||
        rt_cfg_get_int(c, w, "id_bytes", 0, 4, 8, &idb) < 0 ||
        rt_cfg_get_enum(c, w, "sequence_layout", 0, rt_seq_layout_names, &layout) < 0)
        return -1;
    if (idb != 4 && idb != 8) {
        rt_cfg_error(c, fy_node_mapping_lookup_by_string(w, "id_bytes", FY_NT),
                     "%lld; allowed: 4, 8", (long long)idb);
        return -1;
    }
    wl->batch_per_rank = (int)b;
    wl->seed = (uint64_t)seed;
    wl->iterations = (int)iters;
    wl->warmup = (int)warmup;
    wl->mode = (rt_workload_mode)mode;
    wl->exact_max_ranks = (int)emax;
    wl->reps = (int)reps;
    wl->id_bytes = (int)idb;
    wl->seq_layout = (rt_seq_layout)layout;
    struct fy_node *ids = rt_cfg_get_map(c, w, "ids", 0, &ok);
    if (!ok) return -1;
    if (ids) {
        wl->has_ids = 1;
        if (rt_id_spec_parse(c, ids, &wl->ids)) return -1;
    }
    struct fy_node *pool = rt_cfg_get_map(c, w, "pooling", 0, &ok);
    if (!ok) return -1;
    if (pool) {
        wl->has_pooling = 1;
        wl->pooling.kind = RT_LEN_FIXED;
        if (rt_len_spec_parse(c, pool, &wl->pooling)) return -1;
    }
    struct fy_node *sl = rt_cfg_get_map(c, w, "seq_len", 0, &ok);
    if (!ok) return -1;
    if (sl) {
        wl->has_seq_len = 1;
        wl->seq_len.kind = RT_LEN_FIXED;
        if (rt_len_spec_parse(c, sl, &wl->seq_len)) return -1;
    }
    if (rt_cfg_get_double(c, w, "new_id_rate", 0, 0, 1, &wl->new_id_rate) < 0) return -1;
    if (wl->batch_per_rank <= 0) {
        rt_cfg_error(c, w, "batch_per_rank (or global_batch) is required");
        return -1;
    }
    return 0;
}

static int parse_plan_schedule(rt_cfg *c, struct fy_node *p, rt_plan_cfg *pc);

static int parse_plan_common(rt_cfg *c, struct fy_node *p, rt_plan_cfg *pc, const rt_model *m)
{
    int ok = 1, e;
    int64_t cs = 0;
    if (rt_cfg_get_str(c, p, "name", 1, &pc->name) < 0) return -1;
    e = RT_SHARD_TABLE;
    if (rt_cfg_get_enum(c, p, "sharding", 0, rt_sharding_names, &e) < 0) return -1;
    pc->sharding = (rt_sharding)e;
    if (rt_cfg_get_int(c, p, "column_shards", 0, 0, 65536, &cs) < 0) return -1;
    pc->column_shards = (int)cs;
    pc->dense_dtype = m->dense_dtype;
    pc->embedding_dtype = m->n_tables ? m->tables[0].dtype : RT_DT_FP32;
    pc->comm_dtype = RT_DT_FP32;
    struct fy_node *prec = rt_cfg_get_map(c, p, "precision", 0, &ok);
    if (!ok) return -1;
    if (prec) {
        int d = pc->dense_dtype, em = pc->embedding_dtype, cm = pc->comm_dtype;
        if (rt_cfg_check_keys(c, prec, precision_keys) ||
            rt_cfg_get_enum(c, prec, "dense", 0, rt_dtype_names, &d) < 0 ||
            rt_cfg_get_enum(c, prec, "embedding", 0, rt_dtype_names, &em) < 0 ||
            rt_cfg_get_enum(c, prec, "comm", 0, rt_dtype_names, &cm) < 0)
            return -1;
        pc->dense_dtype = (rt_dtype)d;
        pc->embedding_dtype = (rt_dtype)em;
        pc->embedding_dtype_set =
            fy_node_mapping_lookup_by_string(prec, "embedding", FY_NT) != NULL;
        pc->comm_dtype = (rt_dtype)cm;
    }
    e = RT_AR_AUTO;
    if (rt_cfg_get_enum(c, p, "dense_allreduce", 0, rt_allreduce_names, &e) < 0) return -1;
    pc->dense_allreduce = (rt_allreduce_algo)e;
    pc->negatives = rt_neg_cfg_default();
    if (rt_neg_cfg_parse(c, p, m, &pc->negatives)) return -1;
    return parse_plan_schedule(c, p, pc);
}

/* The keys that shape how iterations run, common to every plan. */
static int parse_plan_schedule(rt_cfg *c, struct fy_node *p, rt_plan_cfg *pc)
{
    int ov = RT_OVERLAP_SYNC, bal = RT_BALANCE_NONE, mem = RT_MEMORY_REFUSE, at = RT_ATTN_FUSED;
    int64_t target = 0, accum = 1;
    if (rt_cfg_get_int(c, p, "grad_accum", 0, 1, 1 << 20, &accum) < 0 ||
        rt_cfg_get_enum(c, p, "overlap", 0, rt_overlap_names, &ov) < 0 ||
        rt_cfg_get_enum(c, p, "balance", 0, rt_balance_names, &bal) < 0 ||
        rt_cfg_get_int(c, p, "token_target", 0, 0, INT64_MAX, &target) < 0 ||
        rt_cfg_get_enum(c, p, "memory", 0, rt_memory_policy_names, &mem) < 0 ||
        rt_cfg_get_enum(c, p, "attention", 0, rt_attention_names, &at) < 0)
        return -1;
    pc->attention = (rt_attention)at;
    pc->overlap = (rt_overlap)ov;
    pc->balance = (rt_balance)bal;
    pc->token_target = target;
    pc->memory = (rt_memory_policy)mem;
    pc->grad_accum = (int)accum;
    pc->node = p;
    pc->cfg = c;
    return 0;
}

/* New IDs are fresh 64-bit keys past every table's rows: they need 8-byte IDs, a dynamic
 * table to insert them, and an owner found without a row block (table- or column-wise, or
 * FusedRec's hash routing); SPTT's lookup prices no hash table. */
static int check_new_ids(const rt_scenario *s, rt_cfg *c, struct fy_node *root)
{
    if (s->workload.new_id_rate <= 0) return 0;
    struct fy_node *w = fy_node_mapping_lookup_by_string(root, "workload", FY_NT);
    struct fy_node *at = w ? fy_node_mapping_lookup_by_string(w, "new_id_rate", FY_NT) : NULL;
    int dynamic = 0;
    for (int i = 0; i < s->model.n_tables; i++)
        dynamic |= s->model.tables[i].dynamic;
    const char *why = !dynamic ? "the model has no dynamic table to insert them"
                      : s->workload.id_bytes != 8
                          ? "new keys are 64-bit, but workload.id_bytes is 4"
                      : !strcmp(s->plan.name, "sptt") ? "plan sptt does not price hash tables"
                      : s->plan.sharding == RT_SHARD_ROW && strcmp(s->plan.name, "fused")
                          ? "a new key has no row block under row_wise sharding"
                          : NULL;
    if (!why) return 0;
    char msg[240];
    snprintf(msg, sizeof msg, "%s (model '%s')", why, s->model.name);
    rt_cfg_error(c, at ? at : root,
                 "new_id_rate %g: %s; allowed: 0, or dynamic tables with id_bytes 8 under flat, "
                 "fused or hsp with table_wise or column_wise sharding (fused: any)",
                 s->workload.new_id_rate, msg);
    return -1;
}

/* Combinations no single key can judge. */
static int validate(rt_scenario *s, rt_cfg *c, struct fy_node *root)
{
    if (check_new_ids(s, c, root)) return -1;
    struct fy_node *plan = fy_node_mapping_lookup_by_string(root, "plan", FY_NT);
    const rt_plan_cfg *p = &s->plan;
    if (s->topology.device.peak_flops[p->dense_dtype] <= 0) {
        rt_cfg_error(c, plan, "dense precision %s is not supported by device %s (no peak_flops.%s)",
                     rt_dtype_name(p->dense_dtype), s->topology.device.name,
                     rt_dtype_name(p->dense_dtype));
        return -1;
    }
    for (int i = 0; i < s->model.n_tables; i++) {
        const rt_table *t = &s->model.tables[i];
        if (p->sharding == RT_SHARD_COLUMN) {
            int shards = p->column_shards ? p->column_shards : (t->dim >= 64 ? t->dim / 32 : 1);
            if (shards > t->dim || t->dim % shards) {
                rt_cfg_error(c, fy_node_mapping_lookup_by_string(plan, "column_shards", FY_NT),
                             "%d column shards do not divide table '%s' of dim %d; allowed: a "
                             "divisor of every table's dim",
                             shards, t->name, t->dim);
                return -1;
            }
        }
        if (t->sequence && !s->model.seq_len) {
            rt_cfg_error(c, root, "table '%s' is a sequence feature but model.seq_len is 0",
                         t->name);
            return -1;
        }
    }
    if (p->balance != RT_BALANCE_NONE && !s->model.seq_len) {
        rt_cfg_error(c, fy_node_mapping_lookup_by_string(plan, "balance", FY_NT),
                     "%s balances jagged sequences, but model '%s' has none (seq_len 0); "
                     "allowed: none",
                     rt_balance_names[p->balance], s->model.name);
        return -1;
    }
    struct fy_node *ga = fy_node_mapping_lookup_by_string(plan, "grad_accum", FY_NT);
    if (p->grad_accum > s->workload.batch_per_rank) {
        rt_cfg_error(c, ga, "%d micro-batches of a %d-sample batch; allowed: 1..%d", p->grad_accum,
                     s->workload.batch_per_rank, s->workload.batch_per_rank);
        return -1;
    }
    if (p->grad_accum > 1 && p->overlap != RT_OVERLAP_SYNC) {
        rt_cfg_error(c, ga,
                     "gradient accumulation runs its micro-batches in one step, overlap %s runs "
                     "steps into each other; allowed: grad_accum 1 with overlap, or overlap: sync",
                     rt_overlap_names[p->overlap]);
        return -1;
    }
    if (s->workload.seq_layout == RT_SEQ_PADDED && !s->model.seq_len) {
        struct fy_node *wl = fy_node_mapping_lookup_by_string(root, "workload", FY_NT);
        rt_cfg_error(c, fy_node_mapping_lookup_by_string(wl, "sequence_layout", FY_NT),
                     "padded pads sequence features, but model '%s' has none (seq_len 0); "
                     "allowed: jagged",
                     s->model.name);
        return -1;
    }
    if (p->token_target && p->balance != RT_BALANCE_DYNAMIC_BATCHING) {
        rt_cfg_error(c, fy_node_mapping_lookup_by_string(plan, "token_target", FY_NT),
                     "token_target is the per-rank target of balance: dynamic_batching; allowed "
                     "only with it");
        return -1;
    }
    return 0;
}

/* The name becomes a directory under results/: a plain file name, never a path. */
static int check_name(rt_cfg *c, struct fy_node *root, const char *name)
{
    int ok = *name && strcmp(name, ".") && strcmp(name, "..");
    for (const char *p = name; ok && *p; p++)
        ok = (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
             *p == '-' || *p == '_' || *p == '.';
    if (ok) return 0;
    rt_cfg_error(c, fy_node_mapping_lookup_by_string(root, "name", FY_NT),
                 "'%s' is not a plain file name; allowed: letters, digits, '-', '_' and '.'", name);
    return -1;
}

/* Ranks are ints everywhere: nodes x devices must fit, with room for per-rank arrays. */
enum { RT_MAX_RANKS = 1 << 24 };

static int check_ranks(rt_cfg *c, struct fy_node *topo, const rt_scenario *s)
{
    int64_t ranks = (int64_t)s->topology.nodes * s->topology.node.devices;
    if (ranks <= RT_MAX_RANKS) return 0;
    rt_cfg_error(c, fy_node_mapping_lookup_by_string(topo, "nodes", FY_NT),
                 "%d nodes x %d devices = %lld ranks; allowed: at most %d ranks", s->topology.nodes,
                 s->topology.node.devices, (long long)ranks, RT_MAX_RANKS);
    return -1;
}

rt_scenario *rt_scenario_load(const char *path, const char *const *sets, int n_sets, FILE *err)
{
    rt_scenario *s = calloc(1, sizeof *s);
    if (!s) return NULL;
    s->path = strdup(path);
    rt_cfg *c = rt_cfg_load(path, err);
    s->docs[0] = c;
    if (!c) goto fail;
    for (int i = 0; i < n_sets; i++)
        if (rt_cfg_set(c, sets[i], i + 1)) goto fail;
    struct fy_node *root = rt_cfg_root(c);
    int ok = 1;
    if (rt_cfg_check_keys(c, root, scenario_keys)) goto fail;
    if (rt_cfg_get_str(c, root, "name", 1, &s->name) < 0) goto fail;
    struct fy_node *model = rt_cfg_get_map(c, root, "model", 1, &ok);
    struct fy_node *topo = ok ? rt_cfg_get_map(c, root, "topology", 1, &ok) : NULL;
    struct fy_node *plan = ok ? rt_cfg_get_map(c, root, "plan", 1, &ok) : NULL;
    struct fy_node *wl = ok ? rt_cfg_get_map(c, root, "workload", 1, &ok) : NULL;
    if (!ok) goto fail;

    static const char *const model_own[] = {"file", NULL};
    static const char *const topo_own[] = {"file", "nodes", NULL};
    int64_t nodes = 0;
    if (rt_cfg_get_int(c, topo, "nodes", 1, 1, 1 << 20, &nodes) < 0) goto fail;
    if (load_section(s, c, model, "model", model_own, parse_model_cb, &s->model, 1, err)) goto fail;
    if (load_section(s, c, topo, "topology", topo_own, parse_topo_cb, &s->topology, 2, err))
        goto fail;
    s->topology.nodes = (int)nodes;
    if (check_name(c, root, s->name) || check_ranks(c, topo, s) ||
        rt_topology_check_faults(&s->topology))
        goto fail;
    if (parse_plan_common(c, plan, &s->plan, &s->model)) goto fail;
    if (parse_workload(c, wl, &s->workload, rt_scenario_ranks(s))) goto fail;
    if (validate(s, c, root)) goto fail;
    return s;
fail:
    rt_scenario_free(s);
    return NULL;
}

void rt_scenario_free(rt_scenario *s)
{
    if (!s) return;
    rt_model_free(&s->model);
    rt_topology_free(&s->topology);
    free(s->plan.name);
    free(s->workload.pooling.values);
    free(s->workload.pooling.weights);
    free(s->workload.seq_len.values);
    free(s->workload.seq_len.weights);
    for (int i = 0; i < 3; i++)
        rt_cfg_free(s->docs[i]);
    free(s->name);
    free(s->path);
    free(s);
}
