#include "exchange.h"

#include <stdlib.h>
#include <string.h>

#include "plan_common.h"

void rt_exchange_free(rt_exchange *x)
{
    free(x->n_ids), free(x->seq_back), free(x->row_bytes), free(x->upd_bytes);
    free(x->lens_to), free(x->pooled_out);
    free(x->uniq1), free(x->recv_ids), free(x->uniq2), free(x->rows_in), free(x->upd_in);
    free(x->row_elems), free(x->elems_in);
    free(x->fi_ids), free(x->fi_back), free(x->fi_rows);
    x->fi_ids = x->fi_back = NULL;
    x->fi_rows = NULL;
    free(x->dyn), free(x->dyn_probe), free(x->dyn_ids), free(x->dyn_rows);
    x->row_elems = x->elems_in = NULL;
    x->dyn = NULL, x->dyn_probe = x->dyn_ids = x->dyn_rows = NULL;
    x->n_ids = x->seq_back = x->lens_to = x->pooled_out = x->uniq1 = x->recv_ids = NULL;
    x->row_bytes = x->upd_bytes = x->uniq2 = x->rows_in = x->upd_in = NULL;
}

static const rt_id_spec *id_spec(const rt_scenario *s, int f)
{
    return s->workload.has_ids ? &s->workload.ids : &s->model.tables[f].ids;
}

/* Row-wise owner of ID of table F: its row block, or FusedRec's hash(ID) mod group size. */
static long row_owner(const rt_exchange *x, int f, uint64_t id)
{
    if (x->hash_rows) return (long)(rt_dedup_hash(id) % (uint64_t)x->G);
    return (long)(id / x->shards->block[f]);
}

/* Per-destination counts of the IDs of feature F that rep sends: every ID, or with stage 1
 * every distinct ID once. SCRATCH holds FB->n_ids IDs. Returns the distinct count (the raw
 * count without stage 1); row-wise counts land in CNT[q], table- and column-wise need none. */
static uint64_t count_sent(const rt_exchange *x, int f, const rt_feature_batch *fb,
                           uint64_t *scratch, uint64_t *cnt)
{
    int rows = x->shards->kind == RT_SHARD_ROW;
    if (!rt_dedup_stage1(x->dedup)) {
        if (rows)
            for (uint64_t i = 0; i < fb->n_ids; i++)
                cnt[row_owner(x, f, fb->ids[i])]++;
        return fb->n_ids;
    }
    memcpy(scratch, fb->ids, sizeof(uint64_t) * (size_t)fb->n_ids);
    uint64_t u = rt_dedup_count_sorted(scratch, fb->n_ids);
    if (rows)
        for (uint64_t i = 0; i < fb->n_ids; i++)
            if (i == 0 || scratch[i] != scratch[i - 1]) cnt[row_owner(x, f, scratch[i])]++;
    return u;
}

/* With fusion none, what one feature adds to one (rep, member) cell: IDs, returned sequence
 * bytes, table bytes read. */
static void per_feature(rt_exchange *x, long at, uint64_t ids, uint64_t back, double rows)
{
    if (!x->fi_ids) return;
    x->fi_ids[at] += ids;
    x->fi_back[at] += back;
    x->fi_rows[at] += rows;
}

/* What one dynamic ID of feature I costs the member Q holding WIDTH of its columns: its key in
 * and row out, the slots probed at the run's load (a miss for a new key, which is then
 * inserted: slot, row metadata, initial row and optimizer state) and the LRU/LFU counters
 * read and written. */
static void dyn_cost(rt_exchange *x, const rt_scenario *s, int i, long at, int width, int is_new)
{
    const rt_table *tb = &s->model.tables[x->features[i]];
    const rt_dyn_run *run = &x->dyn[i];
    double state = rt_optimizer_state_floats(tb->optimizer, width) * 4.0;
    double row = width * (double)rt_dtype_bytes(rt_scenario_table_dtype(s, x->features[i])) + state;
    double probe = is_new ? rt_dyn_probes_miss(run->load) : rt_dyn_probes_hit(run->load);
    if (tb->hash.offload == RT_OFFLOAD_KEYS)
        x->dyn_ids[at] += 1;
    else
        x->dyn_probe[at] += s->workload.id_bytes + 8 + probe * RT_DYN_SLOT_BYTES + 32 +
                            (is_new ? RT_DYN_SLOT_BYTES + RT_DYN_META_BYTES + row : 0);
    if (tb->hash.offload == RT_OFFLOAD_VALUES) x->dyn_rows[at] += row;
}

/* The dynamic IDs of the I-th feature that rep R sends: IDS (N of them, sorted with repeats
 * when DISTINCT, each sent once then). */
static void route_dynamic(rt_exchange *x, const rt_scenario *s, int i, const uint64_t *ids,
                          uint64_t n, int distinct, int r)
{
    const rt_shard_map *sm = x->shards;
    int f = x->features[i];
    const rt_table *tb = &s->model.tables[f];
    long base = (long)r * x->G;
    for (uint64_t k = 0; k < n; k++) {
        if (distinct && k > 0 && ids[k] == ids[k - 1]) continue;
        int is_new = ids[k] >= tb->rows;
        if (sm->kind == RT_SHARD_ROW) {
            dyn_cost(x, s, i, base + row_owner(x, f, ids[k]), tb->dim, is_new);
            continue;
        }
        for (int c = 0; c < sm->col_shards; c++)
            dyn_cost(x, s, i, base + sm->owner[f * sm->col_shards + c], tb->dim / sm->col_shards,
                     is_new);
    }
}

/* Each dynamic feature's shard over the run: the keys it starts with (its rows) and the new
 * keys it receives per iteration (the rate times the group's mean IDs of the feature, spread
 * over the members under row-wise hashing). Returns 0 or -1 (out of memory). */
static int dyn_runs(rt_exchange *x, const rt_scenario *s, const rt_workload *w)
{
    int any = 0;
    for (int i = 0; i < x->n_features; i++)
        any |= s->model.tables[x->features[i]].dynamic;
    if (!any) return 0;
    size_t rg = (size_t)x->R * (size_t)x->G;
    x->dyn = calloc((size_t)x->n_features, sizeof *x->dyn);
    x->dyn_probe = calloc(rg, sizeof(double));
    x->dyn_ids = calloc(rg, sizeof(double));
    x->dyn_rows = calloc(rg, sizeof(double));
    if (!x->dyn || !x->dyn_probe || !x->dyn_ids || !x->dyn_rows) return -1;
    int iters = s->workload.warmup + s->workload.iterations;
    for (int i = 0; i < x->n_features; i++) {
        const rt_table *tb = &s->model.tables[x->features[i]];
        if (!tb->dynamic) continue;
        double mean = 0;
        for (int r = 0; r < x->R; r++)
            mean += (double)rt_workload_batch(w, r, x->features[i])->n_ids / x->R;
        int spread = x->shards->kind == RT_SHARD_ROW ? x->G : 1;
        double keys0 = (double)tb->rows / spread;
        double fresh = s->workload.new_id_rate * mean * x->G / spread;
        x->dyn[i] = rt_dyn_simulate(&tb->hash, keys0, fresh, iters);
    }
    return 0;
}

/* Adds the IDs of the I-th feature in FB, sent by rep R, to the traffic they cause. SENT, when
 * not NULL, receives the IDs sent to each group index. */
static void route_feature(rt_exchange *x, const rt_scenario *s, int i, const rt_feature_batch *fb,
                          int r, uint64_t *scratch, uint64_t *cnt, uint32_t *sent)
{
    const rt_shard_map *sm = x->shards;
    int f = x->features[i];
    const rt_table *tb = &s->model.tables[f];
    long base = (long)r * x->G;
    int per_row = tb->sequence || rt_dedup_stage1(x->dedup); /* one returned row per sent ID */
    double tbytes = (double)rt_dtype_bytes(rt_scenario_table_dtype(s, f));
    double cb = (double)rt_dtype_bytes(s->plan.comm_dtype);
    double state = rt_optimizer_state_floats(tb->optimizer, tb->dim) * 4.0 * 2; /* read + write */
    memset(cnt, 0, sizeof(uint64_t) * (size_t)x->G);
    uint64_t u = count_sent(x, f, fb, scratch, cnt);
    x->uniq1[(long)r * x->n_features + i] = u;
    if (tb->dynamic) {
        int distinct = rt_dedup_stage1(x->dedup);
        route_dynamic(x, s, i, distinct ? scratch : fb->ids, fb->n_ids, distinct, r);
    }
    if (sm->kind == RT_SHARD_ROW) {
        double row = tb->dim * tbytes;
        double upd = tb->dim * (2 * tbytes + cb) + state;
        uint64_t back = per_row ? (uint64_t)(tb->dim * cb) : 0;
        for (int q = 0; q < x->G; q++) {
            per_feature(x, (base + q) * x->n_features + i, cnt[q], cnt[q] * back,
                        (double)cnt[q] * row);
            x->n_ids[base + q] += cnt[q];
            x->row_bytes[base + q] += (double)cnt[q] * row;
            x->row_elems[base + q] += (double)cnt[q] * tb->dim;
            x->upd_bytes[base + q] += (double)cnt[q] * upd;
            x->seq_back[base + q] += cnt[q] * back;
            if (sent) sent[q] += (uint32_t)cnt[q];
        }
        return;
    }
    /* Table-wise and column-wise: every ID of the feature goes to each shard's owner. */
    int width = tb->dim / sm->col_shards;
    double n = (double)u;
    for (int c = 0; c < sm->col_shards; c++) {
        long q = base + sm->owner[f * sm->col_shards + c];
        per_feature(x, q * x->n_features + i, u, per_row ? u * (uint64_t)(width * cb) : 0,
                    n * width * tbytes);
        x->n_ids[q] += u;
        x->row_bytes[q] += n * width * tbytes;
        x->row_elems[q] += n * width;
        x->upd_bytes[q] += n * (width * (2 * tbytes + cb) + state / sm->col_shards);
        if (per_row) x->seq_back[q] += u * (uint64_t)(width * cb);
        if (sent) sent[q - base] += (uint32_t)u;
    }
}

/* Columns of table F that group member Q holds. Hash-routed rows (FusedRec) land on every
 * member, whatever the row blocks of the shard map say. */
static int owner_width(const rt_exchange *x, const rt_scenario *s, int f, int q)
{
    if (x->hash_rows && x->shards->kind == RT_SHARD_ROW) return s->model.tables[f].dim;
    return rt_shard_dim(x->shards, s, f, q);
}

static void per_owner_constants(rt_exchange *x, const rt_scenario *s)
{
    size_t cb = rt_dtype_bytes(s->plan.comm_dtype);
    int dedup = rt_dedup_stage1(x->dedup);
    for (int q = 0; q < x->G; q++)
        for (int i = 0; i < x->n_features; i++) {
            int f = x->features[i];
            int w = owner_width(x, s, f, q);
            if (!w) continue;
            /* KJT lengths: one uint32 per sample for every feature shard q serves; deduplicated
             * IDs need only one count per feature shard (the sender keeps the lengths). */
            int shard_w = x->shards->kind == RT_SHARD_COLUMN
                              ? s->model.tables[f].dim / x->shards->col_shards
                              : w;
            x->lens_to[q] += 4 * (uint64_t)(w / shard_w);
            if (!s->model.tables[f].sequence && !dedup) x->pooled_out[q] += (uint64_t)w * cb;
        }
}

/* Group indices holding a shard of table F, each once; returns how many. */
static int shard_owners(const rt_exchange *x, int f, int *out)
{
    const rt_shard_map *sm = x->shards;
    int n = 0;
    for (int c = 0; c < sm->col_shards; c++) {
        int q = sm->owner[f * sm->col_shards + c], seen = 0;
        for (int j = 0; j < n; j++)
            seen |= out[j] == q;
        if (!seen) out[n++] = q;
    }
    return n;
}

/* Exact stage-2 counts (every rank sampled): the distinct IDs of the I-th feature that reach
 * each owner from all members of its group instance. */
static int exact_owner_unique(rt_exchange *x, const rt_workload *w, int i)
{
    int f = x->features[i], W = w->world, rows = x->shards->kind == RT_SHARD_ROW;
    int *owners = malloc(sizeof(int) * (size_t)x->shards->col_shards);
    uint64_t *cnt = calloc((size_t)W + 1, sizeof(uint64_t));
    if (!owners || !cnt) goto oom;
    int n_own = rows ? 0 : shard_owners(x, f, owners);
    for (int p = 0; p < W; p++) {
        const rt_feature_batch *fb = rt_workload_batch(w, p, f);
        if (!rows)
            for (int j = 0; j < n_own; j++)
                cnt[rt_group_member(x->group, p, owners[j])] += fb->n_ids;
        else
            for (uint64_t k = 0; k < fb->n_ids; k++)
                cnt[rt_group_member(x->group, p, (int)row_owner(x, f, fb->ids[k]))]++;
    }
    uint64_t total = 0;
    for (int rr = 0; rr <= W; rr++) {
        uint64_t c = cnt[rr];
        cnt[rr] = total; /* now the start of receiver rr's slice */
        total += c;
    }
    uint64_t *buf = malloc(sizeof(uint64_t) * (size_t)(total ? total : 1));
    uint64_t *fill = malloc(sizeof(uint64_t) * (size_t)W);
    if (!buf || !fill) {
        free(buf), free(fill);
        goto oom;
    }
    memcpy(fill, cnt, sizeof(uint64_t) * (size_t)W);
    for (int p = 0; p < W; p++) {
        const rt_feature_batch *fb = rt_workload_batch(w, p, f);
        for (uint64_t k = 0; k < fb->n_ids; k++) {
            if (rows) {
                buf[fill[rt_group_member(x->group, p, (int)row_owner(x, f, fb->ids[k]))]++] =
                    fb->ids[k];
                continue;
            }
            for (int j = 0; j < n_own; j++)
                buf[fill[rt_group_member(x->group, p, owners[j])]++] = fb->ids[k];
        }
    }
    for (int rr = 0; rr < W; rr++)
        x->uniq2[(long)rr * x->n_features + i] =
            (double)rt_dedup_count_sorted(buf + cnt[rr], cnt[rr + 1] - cnt[rr]);
    free(buf), free(fill), free(owners), free(cnt);
    return 0;
oom:
    free(owners), free(cnt);
    return -1;
}

/* Expected stage-2 count on rep R for the I-th feature, from the raw draws M of its group. */
static double expected_owner_unique(const rt_exchange *x, const rt_scenario *s, int r, int rank,
                                    int i, double m)
{
    int f = x->features[i], k = rt_group_index(x->group, rank);
    const rt_table *tb = &s->model.tables[f];
    if (!owner_width(x, s, f, k)) return 0;
    if (x->shards->kind != RT_SHARD_ROW)
        return rt_dedup_expected_unique(*id_spec(s, f), tb->rows, 0, tb->rows, m);
    if (x->hash_rows)
        return rt_dedup_expected_unique(*id_spec(s, f), tb->rows, 0, tb->rows, m) / x->G;
    uint64_t blk = x->shards->block[f];
    (void)r;
    return rt_dedup_expected_unique(*id_spec(s, f), tb->rows, blk * (uint64_t)k,
                                    blk * (uint64_t)(k + 1), m);
}

/* Owner-side totals with stage 2: received IDs per feature from SENT ([r][i][q]), distinct
 * keys (exact or expected), and the bytes the lookup and the update then move. */
static int owner_side(rt_exchange *x, const rt_scenario *s, const rt_workload *w,
                      const uint32_t *sent)
{
    int n = x->n_features, G = x->G;
    if (w->exact)
        for (int i = 0; i < n; i++)
            if (exact_owner_unique(x, w, i)) return -1;
    double cb = (double)rt_dtype_bytes(s->plan.comm_dtype);
    /* Owners of the same key range see the same estimate: remember the last one per feature. */
    double *memo_m = malloc(sizeof(double) * (size_t)(n ? n : 1)),
           *memo_u = malloc(sizeof(double) * (size_t)(n ? n : 1));
    if (!memo_m || !memo_u) {
        free(memo_m), free(memo_u);
        return -1;
    }
    for (int i = 0; i < n; i++)
        memo_m[i] = -1;
    int range_free = x->shards->kind != RT_SHARD_ROW || x->hash_rows;
    for (int r = 0; r < x->R; r++) {
        int rank = w->rep_rank[r], k = rt_group_index(x->group, rank);
        for (int i = 0; i < n; i++) {
            int f = x->features[i];
            const rt_table *tb = &s->model.tables[f];
            long ri = (long)r * n + i;
            double raw = 0;
            for (int q = 0; q < G; q++) {
                int from = rt_exchange_rep_of(w, rt_group_member(x->group, rank, q));
                x->recv_ids[ri] += sent[((long)from * n + i) * G + k];
                raw += (double)rt_workload_batch(w, from, f)->n_ids;
            }
            int width = owner_width(x, s, f, k);
            int shard_w =
                x->shards->kind == RT_SHARD_COLUMN ? tb->dim / x->shards->col_shards : tb->dim;
            int copies = width / shard_w;
            if (!w->exact && copies) {
                if (!range_free || memo_m[i] != raw)
                    memo_u[i] = expected_owner_unique(x, s, r, rank, i, raw);
                memo_m[i] = raw;
                x->uniq2[ri] = memo_u[i];
            }
            /* An estimate never exceeds the keys that actually arrive. */
            if (copies && x->uniq2[ri] * copies > (double)x->recv_ids[ri])
                x->uniq2[ri] = (double)x->recv_ids[ri] / copies;
            double state = rt_optimizer_state_floats(tb->optimizer, tb->dim) * 4.0 * 2;
            double u = x->uniq2[ri], tbytes = (double)rt_dtype_bytes(rt_scenario_table_dtype(s, f));
            x->rows_in[r] += u * width * tbytes;
            x->elems_in[r] += u * width;
            x->upd_in[r] += (double)x->recv_ids[ri] * shard_w * cb +
                            u * (width * 2 * tbytes + copies * state / x->shards->col_shards);
        }
    }
    free(memo_m), free(memo_u);
    return 0;
}

int rt_exchange_route(rt_exchange *x, const rt_scenario *s, const rt_workload *w, FILE *err)
{
    x->G = x->group.size;
    x->R = w->n_reps;
    size_t rg = (size_t)x->R * (size_t)x->G, rn = (size_t)x->R * (size_t)x->n_features;
    int stage2 = rt_dedup_stage2(x->dedup);
    uint64_t max_ids = 1;
    for (int r = 0; r < x->R; r++)
        for (int i = 0; i < x->n_features; i++) {
            uint64_t n = rt_workload_batch(w, r, x->features[i])->n_ids;
            if (n > max_ids) max_ids = n;
        }
    x->n_ids = calloc(rg, sizeof(uint64_t));
    x->seq_back = calloc(rg, sizeof(uint64_t));
    x->row_bytes = calloc(rg, sizeof(double));
    x->row_elems = calloc(rg, sizeof(double));
    x->elems_in = calloc((size_t)x->R, sizeof(double));
    x->upd_bytes = calloc(rg, sizeof(double));
    x->lens_to = calloc((size_t)x->G, sizeof(uint64_t));
    x->pooled_out = calloc((size_t)x->G, sizeof(uint64_t));
    x->uniq1 = calloc(rn ? rn : 1, sizeof(uint64_t));
    x->recv_ids = calloc(rn ? rn : 1, sizeof(uint64_t));
    x->uniq2 = calloc(rn ? rn : 1, sizeof(double));
    x->rows_in = calloc((size_t)x->R, sizeof(double));
    x->upd_in = calloc((size_t)x->R, sizeof(double));
    if (x->fusion == RT_FUSION_NONE) {
        x->fi_ids = calloc(rg * (size_t)x->n_features + 1, sizeof(uint64_t));
        x->fi_back = calloc(rg * (size_t)x->n_features + 1, sizeof(uint64_t));
        x->fi_rows = calloc(rg * (size_t)x->n_features + 1, sizeof(double));
        if (!x->fi_ids || !x->fi_back || !x->fi_rows) goto oom_early;
    }
    uint64_t *scratch =
        rt_dedup_stage1(x->dedup) ? malloc(sizeof(uint64_t) * (size_t)max_ids) : NULL;
    uint64_t *cnt = malloc(sizeof(uint64_t) * (size_t)x->G);
    uint32_t *sent = stage2 ? calloc(rn * (size_t)x->G, sizeof(uint32_t)) : NULL;
    if (!x->n_ids || !x->seq_back || !x->row_bytes || !x->upd_bytes || !x->lens_to ||
        !x->pooled_out || !x->uniq1 || !x->recv_ids || !x->uniq2 || !x->rows_in || !x->upd_in ||
        !x->row_elems || !x->elems_in || !cnt || (rt_dedup_stage1(x->dedup) && !scratch) ||
        (stage2 && !sent))
        goto oom;
    if (dyn_runs(x, s, w)) goto oom;
    per_owner_constants(x, s);
    for (int r = 0; r < x->R; r++)
        for (int i = 0; i < x->n_features; i++)
            route_feature(x, s, i, rt_workload_batch(w, r, x->features[i]), r, scratch, cnt,
                          sent ? sent + ((size_t)r * x->n_features + i) * x->G : NULL);
    if (stage2 && owner_side(x, s, w, sent)) goto oom;
    free(scratch), free(cnt), free(sent);
    return 0;
oom:
    free(scratch), free(cnt), free(sent);
oom_early:
    fprintf(err, "exchange: out of memory for %d x %d traffic matrices\n", x->R, x->G);
    rt_exchange_free(x);
    return -1;
}

/* Op names live as long as the graph: compose them into static storage per exchange tag. */
static const char *op_name(const rt_exchange *x, const char *base, char *buf, size_t n)
{
    if (!x->tag || !x->tag[0]) return base;
    snprintf(buf, n, "%s.%s", base, x->tag);
    return buf;
}

static int n_units(const rt_exchange *x)
{
    return x->n_units > 0 ? x->n_units : 1;
}

/* One unique kernel per unit, chained after *PREV; returns the first. */
static int add_uniques(const rt_exchange *x, rt_graph *g, const char *phase, const char *base,
                       int *prev)
{
    char b[96], nb[112];
    int first = -1;
    for (int u = 0; u < n_units(x); u++) {
        const char *name = op_name(x, base, b, sizeof b);
        if (n_units(x) > 1) snprintf(nb, sizeof nb, "%s.%d", name, u), name = nb;
        int op = rt_graph_add_kernel(g, phase, RT_STREAM_COMPUTE, RT_K_UNIQUE, RT_DT_FP32,
                                     rt_graph_name(g, name), prev, *prev >= 0);
        if (first < 0) first = op;
        *prev = op;
    }
    return first;
}

/* Records the exchange in the graph for the executor: features, group, placement, dedup. */
static void add_unit(rt_exchange *x, rt_graph *g, const rt_scenario *s)
{
    const rt_shard_map *sm = x->shards;
    rt_graph_unit u = {.n_features = x->n_features,
                       .features = (int *)x->features,
                       .group = x->group,
                       .sharding = (int)sm->kind,
                       .col_shards = sm->col_shards > 0 ? sm->col_shards : 1,
                       .n_tables = s->model.n_tables,
                       .owner = sm->owner,
                       .block = sm->block,
                       .hash_rows = x->hash_rows,
                       .dedup_send = rt_dedup_stage1(x->dedup),
                       .dedup_owner = rt_dedup_stage2(x->dedup),
                       .key_hash = (int)x->key_hash,
                       .category_msg = x->category_msg,
                       .n_kunits = x->n_units,
                       .kunit_of = (int *)x->unit_of,
                       .sync = {1, 1},
                       .fusion = (int)x->fusion};
    x->unit = rt_graph_add_unit(g, &u);
}

static void mark(rt_graph *g, int op, rt_role role, const rt_exchange *x)
{
    if (op >= 0) rt_graph_set_role(g, op, role, x->unit, -1);
}

/* Marks the N consecutive unique kernels from FIRST. */
static void mark_uniques(rt_graph *g, int first, int n, rt_role role, const rt_exchange *x)
{
    for (int k = 0; first >= 0 && k < n; k++)
        mark(g, first + k, role, x);
}

/* The sender's routing after PREV (may be -1): one bucketize op, or with fusion none one per
 * feature, chained, each named for its table and carrying the feature's index in `layer`
 * (seed 001 table 1 fuses these ID passes: unfused, each feature pays its own launch and reads
 * and writes only its own IDs). Returns the last. */
static int add_buckets(rt_exchange *x, rt_graph *g, const rt_scenario *s, int prev)
{
    char b[96], nb[200];
    int per = x->fusion == RT_FUSION_NONE;
    x->n_buckets = per ? x->n_features : 1;
    for (int i = 0; i < x->n_buckets; i++) {
        const char *name = op_name(x, "bucketize_ids", b, sizeof b);
        if (per) snprintf(nb, sizeof nb, "%s.%s", name, s->model.tables[x->features[i]].name);
        int op = rt_graph_add_kernel(g, x->sort_phase ? x->sort_phase : "emb.fwd.bucketize",
                                     RT_STREAM_COMPUTE, RT_K_BUCKETIZE, RT_DT_FP32,
                                     rt_graph_name(g, per ? nb : name), &prev, prev >= 0);
        if (!i) x->bucketize = op;
        rt_graph_set_role(g, op, RT_ROLE_ROUTE, x->unit, per ? i : -1);
        prev = op;
    }
    return prev;
}

void rt_exchange_add_ids(rt_exchange *x, rt_graph *g, const rt_scenario *s, int after)
{
    char b[96];
    int prev = after;
    add_unit(x, g, s);
    x->hash = x->cat_a2a = x->uniq1_op = x->uniq2_op = -1;
    if (x->key_hash == RT_KEY_HASH_SENDER)
        prev = x->hash = rt_graph_add_kernel(
            g, "emb.fwd.hash", RT_STREAM_COMPUTE, RT_K_BUCKETIZE, RT_DT_FP32,
            rt_graph_name(g, op_name(x, "hash_keys", b, sizeof b)), &prev, prev >= 0);
    if (rt_dedup_stage1(x->dedup))
        x->uniq1_op = add_uniques(x, g, "emb.fwd.unique", "unique_ids", &prev);
    int last = add_buckets(x, g, s, prev);
    x->ids_a2a = rt_graph_add_collective(
        g, "emb.fwd.ids_a2a", RT_STREAM_COMM, RT_COLL_ALLTOALLV, RT_ALGO_AUTO, x->group,
        rt_graph_name(g, op_name(x, "ids_alltoall", b, sizeof b)), &last, 1);
    if (x->category_msg)
        x->cat_a2a = rt_graph_add_collective(
            g, "emb.fwd.category_a2a", RT_STREAM_COMM, RT_COLL_ALLTOALLV, RT_ALGO_AUTO, x->group,
            rt_graph_name(g, op_name(x, "category_alltoall", b, sizeof b)), &last, 1);
    mark(g, x->hash, RT_ROLE_KEY_HASH, x);
    mark_uniques(g, x->uniq1_op, n_units(x), RT_ROLE_UNIQUE_SEND, x);
    mark(g, x->ids_a2a, RT_ROLE_IDS_A2A, x);
    mark(g, x->cat_a2a, RT_ROLE_CAT_A2A, x);
}

/* The owner's gathers after PREV: one op, or with fusion none one per feature, in order, each
 * named for its table and carrying the feature's index in `layer`. */
static void add_lookups(rt_exchange *x, rt_graph *g, const rt_scenario *s, int prev)
{
    char b[96], nb[200];
    int per = x->fusion == RT_FUSION_NONE;
    x->n_lookups = per ? x->n_features : 1;
    for (int i = 0; i < x->n_lookups; i++) {
        int deps[2] = {i ? x->lookup + i - 1 : prev, x->cat_a2a};
        const char *name = op_name(x, "embedding_lookup", b, sizeof b);
        if (per) snprintf(nb, sizeof nb, "%s.%s", name, s->model.tables[x->features[i]].name);
        int op = rt_graph_add_kernel(g, "emb.fwd.lookup", RT_STREAM_COMPUTE, RT_K_LOOKUP,
                                     s->plan.embedding_dtype, rt_graph_name(g, per ? nb : name),
                                     deps, !i && x->cat_a2a >= 0 ? 2 : 1);
        if (!i) x->lookup = op;
        rt_graph_set_role(g, op, RT_ROLE_LOOKUP, x->unit, per ? i : -1);
    }
}

/* Whether some dynamic feature of the exchange keeps its OFFLOAD part in host memory, or
 * (NONE) its keys in HBM; EVICT: whether some dynamic feature evicts. */
static int dyn_any(const rt_exchange *x, const rt_scenario *s, rt_offload offload, int evict)
{
    for (int i = 0; x->dyn && i < x->n_features; i++) {
        const rt_table *tb = &s->model.tables[x->features[i]];
        if (!tb->dynamic) continue;
        if (evict                        ? tb->hash.eviction != RT_EVICT_NONE
            : offload == RT_OFFLOAD_NONE ? tb->hash.offload != RT_OFFLOAD_KEYS
                                         : tb->hash.offload == offload)
            return 1;
    }
    return 0;
}

/* Dynamic tables between the ID AlltoAll and the lookup: the probe (and insertion) of the
 * received keys, in HBM or in host memory, then the rows of host-resident values. */
static void add_dynamic_fwd(rt_exchange *x, rt_graph *g, const rt_scenario *s, int *prev)
{
    char b[96];
    x->probe = x->probe_host = x->fetch = x->writeback = x->evict = -1;
    if (dyn_any(x, s, RT_OFFLOAD_NONE, 0))
        *prev = x->probe =
            rt_graph_add_kernel(g, "emb.fwd.probe", RT_STREAM_COMPUTE, RT_K_HASH, RT_DT_FP32,
                                rt_graph_name(g, op_name(x, "hash_probe", b, sizeof b)), prev, 1);
    if (dyn_any(x, s, RT_OFFLOAD_KEYS, 0))
        *prev = x->probe_host = rt_graph_add_kernel(
            g, "emb.fwd.probe", RT_STREAM_COPY, RT_K_H2D, RT_DT_FP32,
            rt_graph_name(g, op_name(x, "hash_probe_host", b, sizeof b)), prev, 1);
    if (dyn_any(x, s, RT_OFFLOAD_VALUES, 0))
        *prev = x->fetch = rt_graph_add_kernel(
            g, "emb.fwd.fetch", RT_STREAM_COPY, RT_K_H2D, RT_DT_FP32,
            rt_graph_name(g, op_name(x, "hash_fetch_rows", b, sizeof b)), prev, 1);
    mark(g, x->probe, RT_ROLE_HASH_PROBE, x);
    mark(g, x->probe_host, RT_ROLE_HASH_PROBE, x);
    mark(g, x->fetch, RT_ROLE_HASH_FETCH, x);
}

void rt_exchange_add_dynamic_bwd(rt_exchange *x, rt_graph *g, const rt_scenario *s)
{
    char b[96];
    int prev = x->update;
    if (dyn_any(x, s, RT_OFFLOAD_VALUES, 0))
        prev = x->writeback = rt_graph_add_kernel(
            g, "emb.bwd.writeback", RT_STREAM_COPY, RT_K_H2D, RT_DT_FP32,
            rt_graph_name(g, op_name(x, "hash_write_back_rows", b, sizeof b)), &prev, 1);
    if (dyn_any(x, s, RT_OFFLOAD_NONE, 1))
        x->evict =
            rt_graph_add_kernel(g, "emb.bwd.evict", RT_STREAM_COMPUTE, RT_K_HASH, RT_DT_FP32,
                                rt_graph_name(g, op_name(x, "hash_evict", b, sizeof b)), &prev, 1);
    mark(g, x->writeback, RT_ROLE_HASH_WRITEBACK, x);
    mark(g, x->evict, RT_ROLE_HASH_EVICT, x);
}

void rt_exchange_add_embeddings(rt_exchange *x, rt_graph *g, const rt_scenario *s)
{
    char b[96];
    int prev = x->ids_a2a;
    if (x->key_hash == RT_KEY_HASH_RECEIVER)
        prev = x->hash =
            rt_graph_add_kernel(g, "emb.fwd.hash", RT_STREAM_COMPUTE, RT_K_BUCKETIZE, RT_DT_FP32,
                                rt_graph_name(g, op_name(x, "hash_keys", b, sizeof b)), &prev, 1);
    add_dynamic_fwd(x, g, s, &prev);
    if (rt_dedup_stage2(x->dedup))
        x->uniq2_op = add_uniques(x, g, "emb.fwd.global_unique", "global_unique", &prev);
    add_lookups(x, g, s, prev);
    int last = x->lookup + x->n_lookups - 1;
    x->out_a2a = rt_graph_add_collective(
        g, "emb.fwd.out_a2a", RT_STREAM_COMM, RT_COLL_ALLTOALLV, RT_ALGO_AUTO, x->group,
        rt_graph_name(g, op_name(x, "embedding_alltoall", b, sizeof b)), &last, 1);
    x->unpermute = rt_graph_add_kernel(
        g, "emb.fwd.unpermute", RT_STREAM_COMPUTE, RT_K_UNPERMUTE, RT_DT_FP32,
        rt_graph_name(g, op_name(x, "embedding_recovery", b, sizeof b)), &x->out_a2a, 1);
    if (x->key_hash == RT_KEY_HASH_RECEIVER) mark(g, x->hash, RT_ROLE_KEY_HASH, x);
    mark_uniques(g, x->uniq2_op, n_units(x), RT_ROLE_UNIQUE_OWNER, x);
    mark(g, x->out_a2a, RT_ROLE_OUT_A2A, x);
    mark(g, x->unpermute, RT_ROLE_RECOVER, x);
}

void rt_exchange_add_backward(rt_exchange *x, rt_graph *g, const rt_scenario *s, int after)
{
    char b[96];
    x->grad_a2a = rt_graph_add_collective(
        g, "emb.bwd.grad_a2a", RT_STREAM_COMM, RT_COLL_ALLTOALLV, RT_ALGO_AUTO, x->group,
        rt_graph_name(g, op_name(x, "gradient_alltoall", b, sizeof b)), &after, 1);
    x->update = rt_graph_add_kernel(
        g, "emb.bwd.update", RT_STREAM_COMPUTE, RT_K_SPARSE_UPDATE, s->plan.embedding_dtype,
        rt_graph_name(g, op_name(x, "sparse_update", b, sizeof b)), &x->grad_a2a, 1);
    mark(g, x->grad_a2a, RT_ROLE_GRAD_A2A, x);
    mark(g, x->update, RT_ROLE_SPARSE_UPDATE, x);
    rt_exchange_add_dynamic_bwd(x, g, s);
}

/* Unique kernel costs of one stage on rep R: per unit, N keys in and U distinct out. */
static void fill_uniques(const rt_exchange *x, rt_graph *g, int first, int r, const double *n,
                         const double *u, int idb)
{
    for (int k = 0; k < n_units(x); k++) {
        double nk = 0, uk = 0;
        for (int i = 0; i < x->n_features; i++)
            if (!x->unit_of || x->unit_of[i] == k) nk += n[i], uk += u[i];
        rt_graph_cost(g, first + k, r)->bytes = rt_dedup_unique_bytes(nk, uk, idb);
    }
}

/* Sender-side costs that dedup adds: the key hash, the stage-1 uniques and the recovery
 * gather through I_s and I_u that expands distinct rows back to every ID and pools them. */
static void fill_sender(const rt_exchange *x, rt_graph *g, const rt_scenario *s,
                        const rt_workload *w, int r, double sent_ids)
{
    int n = x->n_features, idb = s->workload.id_bytes;
    double cb = (double)rt_dtype_bytes(s->plan.comm_dtype);
    double raw[n ? n : 1], uq[n ? n : 1], total = 0, out = 0;
    for (int i = 0; i < n; i++) {
        const rt_table *tb = &s->model.tables[x->features[i]];
        raw[i] = (double)rt_workload_batch(w, r, x->features[i])->n_ids;
        uq[i] = (double)x->uniq1[(long)r * n + i];
        total += raw[i];
        const rt_feature_batch *fb = rt_workload_batch(w, r, x->features[i]);
        out += (tb->sequence ? raw[i] : (double)fb->batch) * tb->dim * cb;
    }
    if (x->key_hash == RT_KEY_HASH_SENDER) rt_graph_cost(g, x->hash, r)->bytes = total * (idb + 8);
    if (x->uniq1_op >= 0) fill_uniques(x, g, x->uniq1_op, r, raw, uq, idb);
    if (rt_dedup_stage1(x->dedup)) {
        rt_op_cost *un = rt_graph_cost(g, x->unpermute, r);
        un->bytes = rt_graph_cost(g, x->out_a2a, r)->recv_bytes + 4 * total + 4 * sent_ids + out;
        un->flops = out / cb; /* one add per pooled element */
    }
}

/* Owner-side costs with stage 2: distinct rows read and updated once. */
static void fill_owner_stage2(const rt_exchange *x, rt_graph *g, const rt_scenario *s, int r,
                              double in_ids, double out_bytes)
{
    int n = x->n_features, idb = s->workload.id_bytes;
    double recv[n ? n : 1], uq[n ? n : 1], keys = 0;
    for (int i = 0; i < n; i++) {
        recv[i] = (double)x->recv_ids[(long)r * n + i];
        uq[i] = x->uniq2[(long)r * n + i];
        keys += uq[i];
    }
    fill_uniques(x, g, x->uniq2_op, r, recv, uq, idb);
    rt_op_cost *lk = rt_graph_cost(g, x->lookup, r), *up = rt_graph_cost(g, x->update, r);
    /* Read each distinct key and row once; expand through the 4-byte inverse to every ID. */
    lk->bytes = keys * idb + 4 * in_ids + x->rows_in[r] + out_bytes;
    up->bytes = keys * idb + 4 * in_ids + x->upd_in[r];
    up->flops = 4 * x->elems_in[r];
}

/* Column shards of table F member K holds (each its own hash table), and their width. */
static int shard_copies(const rt_exchange *x, const rt_scenario *s, int f, int k, int *shard_w)
{
    const rt_table *tb = &s->model.tables[f];
    int width = owner_width(x, s, f, k);
    *shard_w = x->shards->kind == RT_SHARD_COLUMN ? tb->dim / x->shards->col_shards : tb->dim;
    return width / *shard_w;
}

/* Dynamic tables on rep R: what every member sends it to probe, the run's doublings and
 * evictions of the shards it holds. */
static void fill_dynamic(const rt_exchange *x, rt_graph *g, const rt_scenario *s,
                         const rt_workload *w, int r)
{
    if (!x->dyn) return;
    int G = x->G, rank = w->rep_rank[r], k = rt_group_index(x->group, rank);
    double probe = 0, ids = 0, rows = 0, grow = 0, evict = 0;
    for (int q = 0; q < G; q++) {
        long from = (long)rt_exchange_rep_of(w, rt_group_member(x->group, rank, q)) * G + k;
        probe += x->dyn_probe[from], ids += x->dyn_ids[from], rows += x->dyn_rows[from];
    }
    for (int i = 0; i < x->n_features; i++) {
        const rt_table *tb = &s->model.tables[x->features[i]];
        int shard_w, copies = tb->dynamic ? shard_copies(x, s, x->features[i], k, &shard_w) : 0;
        const rt_dyn_run *run = &x->dyn[i];
        if (tb->hash.offload != RT_OFFLOAD_KEYS) grow += copies * run->grow_bytes;
        evict += copies * (run->live_evict * RT_DYN_META_BYTES +
                           run->evicted * (RT_DYN_SLOT_BYTES + RT_DYN_META_BYTES));
    }
    if (x->probe >= 0) rt_graph_cost(g, x->probe, r)->bytes = probe + grow;
    if (x->probe_host >= 0)
        rt_graph_cost(g, x->probe_host, r)->bytes = ids * (s->workload.id_bytes + 8);
    if (x->fetch >= 0) rt_graph_cost(g, x->fetch, r)->bytes = rows;
    if (x->writeback >= 0) rt_graph_cost(g, x->writeback, r)->bytes = rows;
    if (x->evict >= 0) rt_graph_cost(g, x->evict, r)->bytes = evict;
}

/* KJT length bytes a sender with a batch of B samples sends member Q: a 4-byte length per
 * sample of every feature shard Q serves, or one 4-byte count per shard with stage-1 dedup. */
static uint64_t lens_bytes(const rt_exchange *x, int q, uint64_t b)
{
    return rt_dedup_stage1(x->dedup) ? x->lens_to[q] : x->lens_to[q] * b;
}

/* Fusion none: feature i's gather on rep R reads its IDs and rows, writes its rows into an
 * fp32 buffer and copies them into the embedding message (the round trip). */
static void fill_per_feature(const rt_exchange *x, rt_graph *g, const rt_scenario *s,
                             const rt_workload *w, int r)
{
    int G = x->G, n = x->n_features, rank = w->rep_rank[r];
    int k = rt_group_index(x->group, rank), idb = s->workload.id_bytes;
    double cb = (double)rt_dtype_bytes(s->plan.comm_dtype);
    for (int i = 0; i < n; i++) {
        int f = x->features[i];
        const rt_table *tb = &s->model.tables[f];
        int w_k = owner_width(x, s, f, k);
        double pooled = !tb->sequence && !rt_dedup_stage1(x->dedup) ? w_k * cb : 0;
        double in = 0, rows = 0, out = 0;
        for (int q = 0; q < G; q++) {
            int from_rep = rt_exchange_rep_of(w, rt_group_member(x->group, rank, q));
            long at = ((long)from_rep * G + k) * n + i;
            in += (double)x->fi_ids[at];
            rows += x->fi_rows[at];
            out += pooled * rt_plan_rep_batch(w, from_rep) + (double)x->fi_back[at];
        }
        rt_op_cost *c = rt_graph_cost(g, x->lookup + i, r);
        c->bytes = in * idb + rows + out + rt_fusion_round_trip(out / cb);
        c->flops = rows / (double)rt_dtype_bytes(rt_scenario_table_dtype(s, f));
    }
}

void rt_exchange_fill(const rt_exchange *x, rt_graph *g, const rt_scenario *s, const rt_workload *w,
                      int r)
{
    uint64_t bm = (uint64_t)rt_plan_rep_batch(w, r); /* sequence balancing moves samples */
    int G = x->G, rank = w->rep_rank[r];
    int k = rt_group_index(x->group, rank); /* this rank's index in its group */
    int idb = s->workload.id_bytes;
    long mine = (long)r * G;
    rt_op_cost *ids = rt_graph_cost(g, x->ids_a2a, r), *out = rt_graph_cost(g, x->out_a2a, r);
    rt_op_cost *grad = rt_graph_cost(g, x->grad_a2a, r);
    rt_op_cost *cat = x->cat_a2a >= 0 ? rt_graph_cost(g, x->cat_a2a, r) : NULL;
    ids->send = rt_graph_peer_bytes(g, G), ids->recv = rt_graph_peer_bytes(g, G);
    out->send = rt_graph_peer_bytes(g, G), out->recv = rt_graph_peer_bytes(g, G);
    if (cat) cat->send = rt_graph_peer_bytes(g, G), cat->recv = rt_graph_peer_bytes(g, G);
    double in_ids = 0, rows = 0, elems = 0, upd = 0, sent_ids = 0;
    for (int q = 0; q < G; q++) {
        /* Member q receives what its own representative sends to index k. */
        long from = (long)rt_exchange_rep_of(w, rt_group_member(x->group, rank, q)) * G + k;
        /* The per-feature counts ride with the IDs, or in their own message (TFRA-fused). */
        uint64_t bq = (uint64_t)rt_plan_rep_batch(
            w, rt_exchange_rep_of(w, rt_group_member(x->group, rank, q)));
        uint64_t lq = lens_bytes(x, q, bm), lk = lens_bytes(x, k, bq);
        uint64_t lens_to = cat ? 0 : lq, lens_from = cat ? 0 : lk;
        ids->send[q] = x->n_ids[mine + q] * (uint64_t)idb + lens_to;
        ids->recv[q] = x->n_ids[from] * (uint64_t)idb + lens_from;
        out->send[q] = x->pooled_out[k] * bq + x->seq_back[from];
        out->recv[q] = x->pooled_out[q] * bm + x->seq_back[mine + q];
        in_ids += (double)x->n_ids[from];
        rows += x->row_bytes[from];
        elems += x->row_elems[from];
        upd += x->upd_bytes[from];
        sent_ids += (double)x->n_ids[mine + q];
        ids->bytes += (double)ids->send[q], ids->recv_bytes += (double)ids->recv[q];
        out->bytes += (double)out->send[q], out->recv_bytes += (double)out->recv[q];
        if (cat) {
            cat->send[q] = lq, cat->recv[q] = lk;
            cat->bytes += (double)cat->send[q], cat->recv_bytes += (double)cat->recv[q];
        }
    }
    /* The gradient AlltoAll mirrors the embedding AlltoAll. */
    grad->send = out->recv, grad->recv = out->send;
    grad->bytes = out->recv_bytes, grad->recv_bytes = out->bytes;

    /* Bucketize reads each ID and writes it with its permutation index. */
    rt_graph_cost(g, x->bucketize, r)->bytes = sent_ids * (idb + idb + 4);
    for (int i = 0; x->n_buckets > 1 && i < x->n_features; i++) {
        double n = 0;
        for (int q = 0; q < G; q++)
            n += (double)x->fi_ids[(mine + q) * x->n_features + i];
        rt_graph_cost(g, x->bucketize + i, r)->bytes = n * (idb + idb + 4);
    }
    rt_op_cost *lk = rt_graph_cost(g, x->lookup, r);
    lk->bytes = in_ids * idb + rows + out->bytes;
    lk->flops = elems; /* one add per pooled element */
    if (x->fusion == RT_FUSION_SPARSE && s->plan.comm_dtype != RT_DT_FP32)
        lk->bytes += rt_fusion_round_trip(out->bytes / rt_dtype_bytes(s->plan.comm_dtype));
    if (x->fusion == RT_FUSION_NONE) fill_per_feature(x, g, s, w, r);
    rt_graph_cost(g, x->unpermute, r)->bytes = 2 * out->recv_bytes;
    rt_op_cost *up = rt_graph_cost(g, x->update, r);
    up->bytes = in_ids * idb + upd;
    up->flops = 4 * elems;
    if (x->key_hash == RT_KEY_HASH_RECEIVER)
        rt_graph_cost(g, x->hash, r)->bytes = in_ids * (idb + 8);
    fill_sender(x, g, s, w, r, sent_ids);
    if (rt_dedup_stage2(x->dedup)) fill_owner_stage2(x, g, s, r, in_ids, out->bytes);
    fill_dynamic(x, g, s, w, r);
}

double rt_exchange_memory(const rt_exchange *x, const rt_graph *g, const rt_scenario *s, int r,
                          int rank)
{
    int k = rt_group_index(x->group, rank);
    double bytes = 0;
    for (int i = 0; i < x->n_features; i++) {
        int f = x->features[i];
        const rt_table *tb = &s->model.tables[f];
        double rows = (double)rt_shard_rows(x->shards, s, f, k);
        int width = rt_shard_dim(x->shards, s, f, k);
        int state = rt_optimizer_state_floats(tb->optimizer, width);
        double eb = (double)rt_dtype_bytes(rt_scenario_table_dtype(s, f));
        if (tb->dynamic && x->dyn) { /* keys, value chunks and metadata at the run's end */
            int shard_w, copies = shard_copies(x, s, f, k, &shard_w);
            double row = shard_w * eb + rt_optimizer_state_floats(tb->optimizer, shard_w) * 4.0;
            bytes += copies * rt_dyn_memory(&tb->hash, &x->dyn[i], row);
            continue;
        }
        bytes += rows * (width * eb + state * 4.0);
    }
    const rt_op_cost *ids = rt_graph_cost(g, x->ids_a2a, r), *out = rt_graph_cost(g, x->out_a2a, r);
    /* AlltoAll buffers live for the iteration: IDs sent and received, embeddings and their
     * gradients sent and received. */
    return bytes + ids->bytes + ids->recv_bytes + 2 * (out->bytes + out->recv_bytes);
}
