/* SPTT, DMT's tower transform (seed 004; plans/sptt.c), between the owner's lookup and the
 * requester's recovery. With N = T towers x D devices, rank p = t x D + j:
 *   peer permute   the owner's per-requester blocks into (local index i, tower u) order;
 *   intra A2A      to tower member i go the blocks of the T requesters u x D + i (row-wise
 *                  pooled tables: a ReduceScatter of full-width partial sums instead);
 *   shuffle        (owner, peer, feature) -> (peer, owner, feature);
 *   peer A2A       among the T ranks of local index j: tower t's features of peer u's batch.
 * The requester then holds, per tower, every feature of that tower for its own samples, in the
 * same per-owner blocks as the flat plan, so the flat recovery applies. The backward runs the
 * mirror. Blocks are batch x width floats: this executor runs pooled features. */
#include <stdlib.h>
#include <string.h>

#include "emb_internal.h"

typedef struct geo {
    int N, D, T, t, j, E, b;
    int owners; /* owner slots per tower in the intra and shuffled layouts: D, or 1 row-wise */
} geo;

static geo geometry(const rt_xexec *x, const rt_xunit *xu)
{
    geo g = {.N = xu->G, .D = xu->u->tower_size, .E = xu->n_entries, .b = x->v.batch.batch};
    g.T = g.N / g.D, g.t = xu->k / g.D, g.j = xu->k % g.D;
    g.owners = xu->u->sharding == RT_SHARD_ROW ? 1 : g.D;
    return g;
}

/* Entry E is held by owner slot MI of tower U (row-wise: slot 0 stands for the whole tower). */
static int slot_serves(const rt_xunit *xu, const geo *g, int u, int mi, int e)
{
    return rt_xemb_served(xu, u * g->D + mi, e);
}

static size_t block(const rt_xunit *xu, const geo *g, int e)
{
    return (size_t)g->b * (size_t)xu->entries[e].width;
}

int rt_xsptt_setup(rt_xexec *x, rt_xunit *xu, FILE *err)
{
    const rt_graph_unit *u = xu->u;
    for (int i = 0; i < u->n_features; i++)
        if (x->s->model.tables[u->features[i]].sequence) {
            fprintf(err,
                    "exec: sptt with sequence features (table '%s') is not executed by "
                    "rectwin-exec yet; allowed: pooled features (rectwin sim predicts it)\n",
                    x->s->model.tables[u->features[i]].name);
            return -1;
        }
    geo g = geometry(x, xu);
    size_t n = (size_t)g.N * (size_t)g.E;
    xu->perm_at = calloc(n, sizeof(size_t)), xu->intra_at = calloc(n, sizeof(size_t));
    xu->shuf_at = calloc(n, sizeof(size_t));
    xu->isc = calloc(8 * (size_t)(g.D > g.T ? g.D : g.T), sizeof(size_t));
    if (!xu->perm_at || !xu->intra_at || !xu->shuf_at || !xu->isc) {
        fprintf(err, "exec: out of host memory setting up SPTT\n");
        return -1;
    }
    size_t m = (size_t)(g.D > g.T ? g.D : g.T);
    xu->isd = xu->isc + m, xu->irc = xu->isc + 2 * m, xu->ird = xu->isc + 3 * m;
    xu->psc = xu->isc + 4 * m, xu->psd = xu->isc + 5 * m, xu->prc = xu->isc + 6 * m;
    xu->prd = xu->isc + 7 * m;
    if (!(xu->tower_grp = rt_xexec_group(x, (rt_group){g.D, 1}, err))) return -1;
    if (!(xu->peer_grp = rt_xexec_group(x, (rt_group){g.T, g.D}, err))) return -1;
    return 0;
}

void rt_xsptt_free(rt_xexec *x, rt_xunit *xu)
{
    rt_xbuf *b[] = {&xu->perm, &xu->intra, &xu->shuf, &xu->g_shuf, &xu->g_intra, &xu->g_perm};
    for (size_t k = 0; k < sizeof b / sizeof *b; k++)
        rt_xbuf_free(x->dev, b[k]);
    free(xu->perm_at), free(xu->intra_at), free(xu->shuf_at), free(xu->isc);
    rt_xtm_free_unit(x, xu);
}

static size_t total(const size_t *c, int n)
{
    return rt_xemb_total(c, n);
}

/* Every layout's offsets and the AlltoAll counts, from the batch size and who serves what. */
static void layouts(const rt_xexec *x, rt_xunit *xu, const geo *g)
{
    size_t at = 0, cb = rt_xemb_cb(x);
    for (int i = 0; i < g->D; i++) { /* perm: [member i][tower u][entries this rank serves] */
        xu->isd[i] = at * cb;
        for (int u = 0; u < g->T; u++)
            for (int e = 0; e < g->E; e++)
                if (rt_xemb_served(xu, xu->k, e))
                    xu->perm_at[(u * g->D + i) * g->E + e] = at, at += block(xu, g, e);
        xu->isc[i] = at * cb - xu->isd[i];
    }
    at = 0;
    for (int mi = 0; mi < g->owners; mi++) { /* intra: [owner mi][peer u][entries of mi] */
        xu->ird[mi] = at * cb;
        for (int u = 0; u < g->T; u++)
            for (int e = 0; e < g->E; e++)
                if (slot_serves(xu, g, g->t, mi, e))
                    xu->intra_at[(mi * g->T + u) * g->E + e] = at, at += block(xu, g, e);
        xu->irc[mi] = at * cb - xu->ird[mi];
    }
    at = 0;
    for (int u = 0; u < g->T; u++) { /* shuffled: [peer u][owner mi][entries of mi] */
        xu->psd[u] = at * cb;
        for (int mi = 0; mi < g->owners; mi++)
            for (int e = 0; e < g->E; e++)
                if (slot_serves(xu, g, g->t, mi, e))
                    xu->shuf_at[(u * g->D + mi) * g->E + e] = at, at += block(xu, g, e);
        xu->psc[u] = at * cb - xu->psd[u];
    }
    at = 0;
    for (int u = 0; u < g->T; u++) { /* peer receive: [tower u][owner mi][entries of mi] */
        xu->prd[u] = at * cb;
        for (int mi = 0; mi < g->owners; mi++)
            for (int e = 0; e < g->E; e++)
                if (slot_serves(xu, g, u, mi, e))
                    xu->recv_at[(u * g->D + mi) * g->E + e] = at, at += block(xu, g, e);
        xu->prc[u] = at * cb - xu->prd[u];
    }
    xu->shuf_bytes = total(xu->psc, g->T);
    /* A tower module sends its outputs instead of the shuffled features. */
    if (x->tm) rt_xtm_layout(x, xu);
}

/* Copies every block from layout FROM of SRC to layout TO of DST; which blocks exist is SERVES
 * of the (requester or peer, owner) pair the two index functions name. */
typedef struct move {
    const char *src;
    char *dst;
} move;

/* N elements (of the comm precision) from element FROM of the source to element TO. */
static int copy_block(rt_xexec *x, move m, size_t from, size_t to, size_t n)
{
    size_t cb = rt_xemb_cb(x);
    return n ? x->dev->ops->copy(x->dev, m.dst + to * cb, m.src + from * cb, n * cb, RT_XCOPY_D2D)
             : 0;
}

/* perm (this rank's blocks per requester) <-> the lookup's requester-order buffer. */
static int permute(rt_xexec *x, rt_xunit *xu, const geo *g, int backward)
{
    move m = backward ? (move){xu->g_perm.p, xu->grad_recv.p} : (move){xu->emb_send.p, xu->perm.p};
    for (int q = 0; q < g->N; q++)
        for (int e = 0; e < g->E; e++) {
            if (!rt_xemb_served(xu, xu->k, e)) continue;
            size_t a = xu->send_at[q * g->E + e], p = xu->perm_at[q * g->E + e];
            if (copy_block(x, m, backward ? p : a, backward ? a : p, block(xu, g, e))) return -1;
        }
    return 0;
}

/* intra ([owner][peer][entries]) <-> shuffled ([peer][owner][entries]). */
static int shuffle(rt_xexec *x, rt_xunit *xu, const geo *g, int backward)
{
    move m = backward ? (move){xu->g_shuf.p, xu->g_intra.p} : (move){xu->intra.p, xu->shuf.p};
    for (int mi = 0; mi < g->owners; mi++)
        for (int u = 0; u < g->T; u++)
            for (int e = 0; e < g->E; e++) {
                if (!slot_serves(xu, g, g->t, mi, e)) continue;
                size_t in = xu->intra_at[(mi * g->T + u) * g->E + e];
                size_t sh = xu->shuf_at[(u * g->D + mi) * g->E + e];
                if (copy_block(x, m, backward ? sh : in, backward ? in : sh, block(xu, g, e)))
                    return -1;
            }
    return 0;
}

static int reserve(rt_xexec *x, rt_xbuf *b, size_t bytes, FILE *err)
{
    return rt_xbuf_reserve(x->dev, b, bytes, err);
}

static int a2a(rt_xexec *x, rt_xgroup *grp, const void *s, const size_t *sc, const size_t *sd,
               void *r, const size_t *rc, const size_t *rd, int op, FILE *err)
{
    if (x->comm->ops->alltoallv(x->comm, grp, s, sc, sd, r, rc, rd))
        return rt_xemb_fail(err, x, op, "AlltoAllv failed");
    return 0;
}

static int forward(rt_xexec *x, rt_xunit *xu, const geo *g, rt_role role, int op, FILE *err)
{
    switch (role) {
    case RT_ROLE_PEER_PERMUTE:
        layouts(x, xu, g);
        if (reserve(x, &xu->perm, total(xu->isc, g->D), err) || permute(x, xu, g, 0)) return -1;
        rt_xexec_count(x, op, 2.0 * (double)total(xu->isc, g->D), 0);
        return 0;
    case RT_ROLE_INTRA_A2A:
        if (reserve(x, &xu->intra, total(xu->irc, g->owners), err) ||
            a2a(x, xu->tower_grp, xu->perm.p, xu->isc, xu->isd, xu->intra.p, xu->irc, xu->ird, op,
                err))
            return -1;
        rt_xexec_count_peers(x, op, xu->isc, xu->irc, g->D);
        return 0;
    case RT_ROLE_INTRA_RS: {
        size_t n = xu->isc[0] / sizeof(float); /* row-wise: equal blocks for every member */
        if (reserve(x, &xu->intra, n * sizeof(float), err)) return -1;
        if (x->comm->ops->reduce_scatter_f32(x->comm, xu->tower_grp, xu->perm.p, xu->intra.p, n))
            return rt_xemb_fail(err, x, op, "ReduceScatter failed");
        rt_xexec_count(x, op, (double)total(xu->isc, g->D), 0);
        return 0;
    }
    case RT_ROLE_SHUFFLE:
        if (reserve(x, &xu->shuf, xu->shuf_bytes, err) || shuffle(x, xu, g, 0)) return -1;
        rt_xexec_count(x, op, 2.0 * (double)total(xu->irc, g->owners), 0);
        return 0;
    case RT_ROLE_PEER_A2A:
        if (reserve(x, &xu->emb_recv, total(xu->prc, g->T), err) ||
            a2a(x, xu->peer_grp, x->tm ? xu->tm_send.p : xu->shuf.p, xu->psc, xu->psd,
                xu->emb_recv.p, xu->prc, xu->prd, op, err))
            return -1;
        rt_xexec_count_peers(x, op, xu->psc, xu->prc, g->T);
        return 0;
    default:
        return 1;
    }
}

/* The gradient blocks of every tower's features for this rank's samples, in the peer receive
 * layout (fp32 elements at BASE): the flat plan's pack with one block per tower for row-wise
 * pooled tables. */
static int pack_grads(rt_xexec *x, rt_xunit *xu, const geo *g, float *base, int op, FILE *err)
{
    for (int u = 0; u < g->T; u++)
        for (int mi = 0; mi < g->owners; mi++)
            for (int e = 0; e < g->E; e++) {
                if (!slot_serves(xu, g, u, mi, e)) continue;
                const rt_xentry *en = &xu->entries[e];
                int dim = x->s->model.tables[en->table].dim;
                const float *gr = rt_xexec_emb_grad(x, en->table);
                if (!gr) return rt_xemb_fail(err, x, op, "no gradient for this feature");
                float *dst = base + xu->recv_at[(u * g->D + mi) * g->E + e];
                if (x->dev->ops->copy2d(x->dev, dst, (size_t)en->width * sizeof(float),
                                        gr + en->col0, (size_t)dim * sizeof(float),
                                        (size_t)en->width * sizeof(float), (size_t)g->b))
                    return -1;
            }
    return 0;
}

static int backward(rt_xexec *x, rt_xunit *xu, const geo *g, rt_role role, int op, FILE *err)
{
    switch (role) {
    case RT_ROLE_PEER_GRAD_A2A: {
        size_t elems = total(xu->prc, g->T) / rt_xemb_cb(x);
        int staged = rt_xemb_ck(x) != RT_KDT_FP32; /* packed in fp32, sent converted */
        /* With a tower module the gradients of its outputs arrive, for its backward. */
        rt_xbuf *into = x->tm ? &xu->tm_gy : &xu->g_shuf;
        float *base;
        if (reserve(x, &xu->grad_send, total(xu->prc, g->T), err) ||
            reserve(x, into, total(xu->psc, g->T), err) ||
            (staged && reserve(x, &xu->msg32, elems * sizeof(float), err)))
            return -1;
        base = staged ? xu->msg32.p : xu->grad_send.p;
        if ((x->tm ? rt_xtm_pack_grads(x, xu, base, op, err)
                   : pack_grads(x, xu, g, base, op, err)) ||
            (staged && rt_xemb_to_msg(x, xu->grad_send.p, 0, xu->msg32.p, elems)) ||
            a2a(x, xu->peer_grp, xu->grad_send.p, xu->prc, xu->prd, into->p, xu->psc, xu->psd, op,
                err))
            return -1;
        rt_xexec_count_peers(x, op, xu->prc, xu->psc, g->T);
        return 0;
    }
    case RT_ROLE_SHUFFLE_BWD:
        if (reserve(x, &xu->g_intra, total(xu->irc, g->owners), err) || shuffle(x, xu, g, 1))
            return -1;
        rt_xexec_count(x, op, 2.0 * (double)total(xu->irc, g->owners), 0);
        return 0;
    case RT_ROLE_INTRA_GRAD_A2A:
        if (reserve(x, &xu->g_perm, total(xu->isc, g->D), err) ||
            a2a(x, xu->tower_grp, xu->g_intra.p, xu->irc, xu->ird, xu->g_perm.p, xu->isc, xu->isd,
                op, err))
            return -1;
        rt_xexec_count_peers(x, op, xu->irc, xu->isc, g->D);
        return 0;
    case RT_ROLE_INTRA_AG: {
        size_t *cnt = xu->isc, *dsp = xu->isd; /* every member's equal block, in member order */
        if (reserve(x, &xu->g_perm, total(cnt, g->D), err)) return -1;
        if (x->comm->ops->allgatherv(x->comm, xu->tower_grp, xu->g_intra.p, xu->g_perm.p, cnt, dsp))
            return rt_xemb_fail(err, x, op, "AllGather failed");
        rt_xexec_count(x, op, (double)total(cnt, g->D), 0);
        return 0;
    }
    case RT_ROLE_PERMUTE_BWD:
        if (reserve(x, &xu->grad_recv, total(xu->isc, g->D), err) || permute(x, xu, g, 1))
            return -1;
        rt_xexec_count(x, op, 2.0 * (double)total(xu->isc, g->D), 0);
        return 0;
    default:
        return rt_xemb_fail(err, x, op, "not an SPTT role");
    }
}

int rt_xsptt_run(rt_xexec *x, rt_xunit *xu, int op, FILE *err)
{
    geo g = geometry(x, xu);
    rt_role role = x->g->ops[op].role;
    int rc = forward(x, xu, &g, role, op, err);
    return rc <= 0 ? rc : backward(x, xu, &g, role, op, err);
}
