/* The embedding exchanges of a graph on this rank: their entries (feature x column shard), who
 * serves what, this rank's table shards, their buffers, and the dispatch of their ops. */
#include <stdlib.h>
#include <string.h>

#include "emb_internal.h"
#include "state.h"

int rt_xemb_put(rt_xexec *x, rt_xbuf *b, const int64_t *h, size_t n, FILE *err)
{
    if (rt_xbuf_reserve(x->dev, b, n * sizeof(int64_t), err)) return -1;
    return n ? x->dev->ops->copy(x->dev, b->p, h, n * sizeof(int64_t), RT_XCOPY_H2D) : 0;
}

/* Dynamic tables run through the host-side hash table (emb_dynamic.h): on the CPU backend,
 * one batch at a time, over plain table, column or row-block shards. */
static int dynamic_unsupported(const rt_xexec *x, const rt_graph_unit *u, FILE *err)
{
    const rt_scenario *s = x->s;
    int dynamic = 0, narrow = 0;
    for (int i = 0; i < u->n_features; i++) {
        int f = u->features[i];
        dynamic |= s->model.tables[f].dynamic;
        narrow |= s->model.tables[f].dynamic && rt_scenario_table_dtype(s, f) != RT_DT_FP32;
    }
    const char *why = !dynamic                             ? NULL
                      : !x->dev->ops->host_memory          ? "a device other than cpu"
                      : narrow                             ? "a table dtype other than fp32"
                      : u->key_hash                        ? "FusedRec's (category, ID) key hash"
                      : u->hash_rows                       ? "hash-routed rows (fused, row_wise)"
                      : u->sync.size > 1                   ? "hsp"
                      : u->tower_size                      ? "sptt"
                      : s->plan.overlap != RT_OVERLAP_SYNC ? "overlap other than sync"
                                                           : NULL;
    if (!why) return 0;
    fprintf(err,
            "exec: dynamic tables with %s are not executed by rectwin-exec yet; allowed: the cpu "
            "device, fp32 embeddings, plan flat (or fused with variant tfra_fused off and "
            "table_wise or column_wise sharding), overlap sync (rectwin sim predicts the rest)\n",
            why);
    return -1;
}

static int unsupported(const rt_graph_unit *u, const rt_scenario *s, FILE *err)
{
    int low = s->plan.comm_dtype != RT_DT_FP32;
    /* HSP's sync and SPTT's row-wise ReduceScatter sum fp32 payloads. */
    const char *why = low && u->sync.size > 1 ? "hsp with plan.precision.comm other than fp32"
                      : low && u->tower_size && u->sharding == RT_SHARD_ROW
                          ? "row-wise sptt with plan.precision.comm other than fp32"
                          : NULL;
    if (!why) return 0;
    fprintf(err,
            "exec: %s is not executed by rectwin-exec yet; allowed: comm fp32 there (rectwin "
            "sim predicts it)\n",
            why);
    return -1;
}

/* Row-wise, member Q serves table F when it holds rows of it: inside F's tower (SPTT), and
 * its row block starts before the table ends (hash routing spreads rows over everyone). */
static int row_block_served(const rt_graph_unit *u, const rt_table *tb, int f, int q)
{
    if (u->tower_size && q / u->tower_size != u->tower_of[f]) return 0;
    if (u->hash_rows) return 1;
    int local = u->tower_size ? q % u->tower_size : q;
    return u->block[f] * (uint64_t)local < tb->rows;
}

static int build_entries(rt_xunit *xu, const rt_scenario *s)
{
    const rt_graph_unit *u = xu->u;
    int cs = u->sharding == RT_SHARD_COLUMN ? u->col_shards : 1;
    xu->n_entries = u->n_features * cs;
    xu->entries = calloc((size_t)xu->n_entries, sizeof *xu->entries);
    xu->served = calloc((size_t)xu->G * (size_t)xu->n_entries, sizeof(int));
    if (!xu->entries || !xu->served) return -1;
    for (int i = 0; i < u->n_features; i++)
        for (int c = 0; c < cs; c++) {
            int f = u->features[i], e = i * cs + c;
            const rt_table *tb = &s->model.tables[f];
            int w = tb->dim / cs;
            xu->entries[e] = (rt_xentry){i, c, f, w, c * w, tb->sequence};
            for (int q = 0; q < xu->G; q++)
                xu->served[q * xu->n_entries + e] = u->sharding != RT_SHARD_ROW
                                                        ? u->owner[f * u->col_shards + c] == q
                                                        : row_block_served(u, tb, f, q);
        }
    return 0;
}

#define ALLOC(p, n) ((p) = calloc((n) > 0 ? (size_t)(n) : 1u, sizeof *(p)))

static int alloc_unit(rt_xunit *xu)
{
    size_t G = (size_t)xu->G, E = (size_t)xu->n_entries, F = (size_t)xu->u->n_features;
    if (!ALLOC(xu->n_to, G * E) || !ALLOC(xu->n_from, G * E) || !ALLOC(xu->pos_to, G * F) ||
        !ALLOC(xu->pos_dev, G * F) || !ALLOC(xu->ids_sc, G * 12) || !ALLOC(xu->own_ids, E) ||
        !ALLOC(xu->own_offsets, E) || !ALLOC(xu->own_out, E) || !ALLOC(xu->own_grad, E) ||
        !ALLOC(xu->own_n, E) || !ALLOC(xu->shard_of, E) || !ALLOC(xu->recv_at, G * E) ||
        !ALLOC(xu->send_at, G * E) || !ALLOC(xu->own_host_ids, E) || !ALLOC(xu->own_host_bag, E) ||
        !ALLOC(xu->s1, F) || !ALLOC(xu->s1_offsets, F) || !ALLOC(xu->s1_bag, F) ||
        !ALLOC(xu->s1_rows, F) || !ALLOC(xu->s1_grad, F) || !ALLOC(xu->s2, E) ||
        !ALLOC(xu->hrows, E) || !ALLOC(xu->hrows_n, E) || !ALLOC(xu->bsz, G) ||
        !ALLOC(xu->boff, G + 1))
        return -1;
    if (xu->u->key_hash && !ALLOC(xu->keys, E)) return -1; /* E >= F: slots for either side */
    if (xu->u->sync.size > 1 && (!ALLOC(xu->sync_all_ids, E) || !ALLOC(xu->sync_all_grads, E) ||
                                 !ALLOC(xu->sync_u, E) || !ALLOC(xu->sync_n, E)))
        return -1;
    size_t *c = xu->ids_sc;
    xu->ids_sd = c + G, xu->ids_rc = c + 2 * G, xu->ids_rd = c + 3 * G;
    xu->emb_sc = c + 4 * G, xu->emb_sd = c + 5 * G, xu->emb_rc = c + 6 * G, xu->emb_rd = c + 7 * G;
    xu->cat_sc = c + 8 * G, xu->cat_sd = c + 9 * G, xu->cat_rc = c + 10 * G;
    xu->cat_rd = c + 11 * G;
    return 0;
}

/* Hash-routed rows of table TABLE this rank holds, ascending. */
static int hash_rows_of(rt_xunit *xu, int e, uint64_t rows, FILE *err)
{
    uint64_t n = 0;
    for (uint64_t r = 0; r < rows; r++)
        n += rt_xemb_row_owner(xu, xu->entries[e].table, r) == xu->k;
    if (!(xu->hrows[e] = malloc(sizeof(uint64_t) * (size_t)(n ? n : 1)))) {
        fprintf(err, "exec: out of host memory listing the rows of table %d\n",
                xu->entries[e].table);
        return -1;
    }
    xu->hrows_n[e] = (int64_t)n;
    for (uint64_t r = 0, m = 0; r < rows; r++)
        if (rt_xemb_row_owner(xu, xu->entries[e].table, r) == xu->k) xu->hrows[e][m++] = r;
    return 0;
}

/* This rank's shards: the entries its group index serves. */
static int add_shards(rt_xexec *x, rt_xunit *xu, FILE *err)
{
    const rt_graph_unit *u = xu->u;
    for (int e = 0; e < xu->n_entries; e++) {
        xu->shard_of[e] = -1;
        if (!rt_xemb_served(xu, xu->k, e)) continue;
        const rt_xentry *en = &xu->entries[e];
        uint64_t rows = x->s->model.tables[en->table].rows, row0 = 0;
        const uint64_t *ids = NULL;
        if (u->sharding == RT_SHARD_ROW && u->hash_rows) {
            if (hash_rows_of(xu, e, rows, err)) return -1;
            ids = xu->hrows[e], rows = (uint64_t)xu->hrows_n[e];
        } else if (u->sharding == RT_SHARD_ROW) {
            uint64_t blk = u->block[en->table];
            row0 = blk * (uint64_t)(u->tower_size ? xu->k % u->tower_size : xu->k);
            rows = row0 >= rows ? 0 : (rows - row0 < blk ? rows - row0 : blk);
        }
        xu->shard_of[e] = rt_xtables_add(&x->tables, x->dev, x->s, en->table, en->col0, en->width,
                                         row0, rows, ids, err);
        if (xu->shard_of[e] < 0) return -1;
    }
    return 0;
}

/* Unit N of slot K. Every slot has its own per-iteration state; the table shards (and the
 * row lists of hash-routed shards) are slot 0's. */
static int setup_unit(rt_xexec *x, int k, int n, FILE *err)
{
    rt_xunit *xu = &x->slots[k].units[n];
    xu->u = &x->g->units[n];
    if (unsupported(xu->u, x->s, err) || dynamic_unsupported(x, xu->u, err)) return -1;
    xu->G = xu->u->group.size;
    xu->k = rt_group_index(xu->u->group, x->rank);
    if (build_entries(xu, x->s) || alloc_unit(xu)) {
        fprintf(err, "exec: out of host memory setting up the embedding exchanges\n");
        return -1;
    }
    if (k == 0) {
        if (add_shards(x, xu, err)) return -1;
    } else {
        const rt_xunit *first = &x->slots[0].units[n];
        memcpy(xu->shard_of, first->shard_of, sizeof(int) * (size_t)xu->n_entries);
        memcpy(xu->hrows, first->hrows, sizeof(uint64_t *) * (size_t)xu->n_entries);
        memcpy(xu->hrows_n, first->hrows_n, sizeof(int64_t) * (size_t)xu->n_entries);
        xu->borrows_rows = 1;
    }
    if (!(xu->grp = rt_xexec_group(x, xu->u->group, err))) return -1;
    if (xu->u->sync.size > 1 && !(xu->sync_grp = rt_xexec_group(x, xu->u->sync, err))) return -1;
    return xu->u->tower_size ? rt_xsptt_setup(x, xu, err) : 0;
}

int rt_xemb_setup(rt_xexec *x, FILE *err)
{
    size_t n = (size_t)(x->g->n_units ? x->g->n_units : 1);
    for (int k = 0; k < x->n_slots; k++) {
        if (!(x->slots[k].units = calloc(n, sizeof(rt_xunit)))) {
            fprintf(err, "exec: out of host memory setting up the embedding exchanges\n");
            return -1;
        }
        for (int u = 0; u < x->g->n_units; u++)
            if (setup_unit(x, k, u, err)) return -1;
    }
    x->v = x->slots[x->cur];
    return 0;
}

static void free_per_entry(rt_xexec *x, rt_xunit *xu)
{
    for (int e = 0; e < xu->n_entries; e++) {
        if (xu->own_ids) rt_xbuf_free(x->dev, &xu->own_ids[e]);
        if (xu->own_offsets) rt_xbuf_free(x->dev, &xu->own_offsets[e]);
        if (xu->own_out) rt_xbuf_free(x->dev, &xu->own_out[e]);
        if (xu->own_grad) rt_xbuf_free(x->dev, &xu->own_grad[e]);
        if (xu->sync_all_ids) rt_xbuf_free(x->dev, &xu->sync_all_ids[e]);
        if (xu->sync_all_grads) rt_xbuf_free(x->dev, &xu->sync_all_grads[e]);
        if (xu->own_host_ids) free(xu->own_host_ids[e]);
        if (xu->own_host_bag) free(xu->own_host_bag[e]);
        if (xu->s2) rt_xuniq_free(x->dev, &xu->s2[e]);
        if (xu->keys) free(xu->keys[e]);
        if (xu->hrows && !xu->borrows_rows) free(xu->hrows[e]);
    }
    for (int i = 0; i < xu->u->n_features; i++) {
        if (xu->s1) rt_xuniq_free(x->dev, &xu->s1[i]);
        rt_xbuf *b[] = {xu->s1_offsets, xu->s1_bag, xu->s1_rows, xu->s1_grad};
        for (size_t k = 0; k < sizeof b / sizeof *b; k++)
            if (b[k]) rt_xbuf_free(x->dev, &b[k][i]);
    }
    for (int i = 0; xu->pos_to && i < xu->G * xu->u->n_features; i++) {
        free(xu->pos_to[i]);
        rt_xbuf_free(x->dev, &xu->pos_dev[i]);
    }
}

static void free_units(rt_xexec *x, rt_xunit *units)
{
    for (int n = 0; n < x->g->n_units; n++) {
        rt_xunit *xu = &units[n];
        if (!xu->u) continue;
        rt_xbuf *bufs[] = {&xu->ids_send,  &xu->ids_recv,  &xu->emb_send, &xu->emb_recv,
                           &xu->grad_send, &xu->grad_recv, &xu->cat_send, &xu->cat_recv,
                           &xu->sync_send, &xu->sync_recv, &xu->sync_inv, &xu->sync_bag,
                           &xu->sync_tmp,  &xu->sync_agg,  &xu->s2_bag,   &xu->tmp_a,
                           &xu->tmp_b,     &xu->msg32};
        for (size_t b = 0; b < sizeof bufs / sizeof *bufs; b++)
            rt_xbuf_free(x->dev, bufs[b]);
        free_per_entry(x, xu);
        rt_xsptt_free(x, xu);
        void *arrays[] = {xu->entries,      xu->served,       xu->n_to,
                          xu->n_from,       xu->pos_to,       xu->pos_dev,
                          xu->ids_sc,       xu->own_ids,      xu->own_offsets,
                          xu->own_out,      xu->own_grad,     xu->own_n,
                          xu->shard_of,     xu->recv_at,      xu->send_at,
                          xu->host_ids,     xu->host_scratch, xu->own_host_ids,
                          xu->own_host_bag, xu->s1,           xu->s1_offsets,
                          xu->s1_bag,       xu->s1_rows,      xu->s1_grad,
                          xu->s2,           xu->keys,         xu->hrows,
                          xu->hrows_n,      xu->sync_all_ids, xu->sync_all_grads,
                          xu->sync_u,       xu->sync_n,       xu->bsz,
                          xu->boff};
        for (size_t a = 0; a < sizeof arrays / sizeof *arrays; a++)
            free(arrays[a]);
    }
    free(units);
}

void rt_xemb_free(rt_xexec *x)
{
    rt_xexec_use(x, -1);
    for (int k = 0; k < x->n_slots; k++) {
        if (x->slots[k].units) free_units(x, x->slots[k].units);
        x->slots[k].units = NULL;
    }
    x->v.units = NULL;
}

int rt_xemb_run(rt_xexec *x, int op, FILE *err)
{
    const rt_op *o = &x->g->ops[op];
    rt_xunit *xu = &x->v.units[o->unit];
    switch (o->role) {
    case RT_ROLE_KEY_HASH:
        return rt_xemb_key_hash(x, xu, op, err);
    case RT_ROLE_UNIQUE_SEND:
    case RT_ROLE_UNIQUE_OWNER:
        return rt_xemb_unique(x, xu, op, err);
    case RT_ROLE_ROUTE:
        return rt_xemb_route(x, xu, op, err);
    case RT_ROLE_IDS_A2A:
        return rt_xemb_ids_a2a(x, xu, op, err);
    case RT_ROLE_CAT_A2A:
        return rt_xemb_cat_a2a(x, xu, op, err);
    case RT_ROLE_LOOKUP:
        return rt_xemb_lookup(x, xu, op, err);
    case RT_ROLE_HASH_PROBE:
        return rt_xemb_probe(x, xu, op, err);
    case RT_ROLE_HASH_FETCH:
    case RT_ROLE_HASH_WRITEBACK:
    case RT_ROLE_HASH_EVICT:
        return rt_xemb_hash_op(x, xu, op, err);
    case RT_ROLE_OUT_A2A:
        return rt_xemb_out_a2a(x, xu, op, err);
    case RT_ROLE_RECOVER:
        return rt_xemb_recover(x, xu, op, err);
    case RT_ROLE_GRAD_A2A:
        return rt_xemb_grad_a2a(x, xu, op, err);
    case RT_ROLE_GRAD_SYNC:
        return rt_xemb_sync(x, xu, op, err);
    case RT_ROLE_SPARSE_UPDATE:
        return rt_xemb_update(x, xu, op, err);
    case RT_ROLE_PEER_PERMUTE:
    case RT_ROLE_INTRA_A2A:
    case RT_ROLE_INTRA_RS:
    case RT_ROLE_SHUFFLE:
    case RT_ROLE_PEER_A2A:
    case RT_ROLE_PEER_GRAD_A2A:
    case RT_ROLE_SHUFFLE_BWD:
    case RT_ROLE_INTRA_GRAD_A2A:
    case RT_ROLE_INTRA_AG:
    case RT_ROLE_PERMUTE_BWD:
        return rt_xsptt_run(x, xu, op, err);
    case RT_ROLE_TM_FWD:
    case RT_ROLE_TM_BWD:
    case RT_ROLE_TM_ALLREDUCE:
    case RT_ROLE_TM_UPDATE:
        return rt_xtm_run(x, xu, op, err);
    default:
        return rt_xemb_fail(err, x, op, "this role is not an embedding exchange op");
    }
}
