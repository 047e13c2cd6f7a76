/* SPTT's tower module (DMT, seed 004; plans/tower_module.h) run for real: after the shuffle,
 * the member of tower t with local index j holds tower t's pooled features for the b samples
 * of each of its T peers, and compresses them before the peer AlltoAll.
 *
 * kind linear, per sample X (F x d, the tower's pooled features in table order):
 *   Z = Wc X + bc (n x d; Wc n x F, bc one bias per output vector), Y = Z Wp^T + bp (d -> d).
 * Both are GEMMs over all T x b samples: the combination runs on X transposed per sample
 * (rows (sample, column), F wide), so the layouts change between them through index gathers
 * (gather_rows with one-float rows) whose maps are built on the host once per batch size.
 *
 * Every member of a tower holds the same module: initialized from the workload seed and the
 * tower, its gradients summed over the tower (TM_ALLREDUCE) and stepped with the model's dense
 * optimizer (TM_UPDATE), so the copies stay equal. Each sample passes through its tower's
 * module on exactly one member (the one with its requester's local index), so the tower sum
 * is the whole gradient. The requester sees tower u's n_u outputs of width d_u as pooled
 * "tables" of the dense net (net_model), in tower order, as rt_tm_apply costs the model. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "emb_internal.h"
#include "tower_module.h"

typedef struct rt_xtm {
    int T, D, t;      /* towers, ranks per tower, this rank's tower */
    int F, d, n;      /* this tower's module: input features, their width, output vectors */
    int *kof;         /* [table]: position among this tower's pooled features, -1 */
    int *out_first;   /* [T]: net_model table of tower u's first output */
    int *out_n;       /* [T]: tower u's output vectors */
    int *out_w;       /* [T]: and their width */
    rt_tm_cost cost;  /* this tower's, as the plan costs it */
    int64_t n_params; /* [Wc n x F][bc n][Wp d x d][bp d] */
    float *w, *g, *m, *v;
    int64_t step;
    rt_model model; /* net_model: the scenario's with the tower outputs as tables */
    rt_table *tables;
    char *names;
} rt_xtm;

/* Activations and maps per unit (rt_xunit.tm_buf). S = T b F d shuffled elements, A = T b n d
 * elements of Z, Zt, Y. */
enum {
    B_S32,    /* the shuffled input in fp32 (comm precision lower than fp32) */
    B_XT,     /* [(s d + c) F + k] */
    B_ZT,     /* [(s d + c) n + v] */
    B_Z,      /* [(s n + v) d + c] */
    B_Y,      /* [(s n + v) d + c]: the output, peer u's samples s in [u b, (u + 1) b) */
    B_DY,     /* gradients of the same shapes */
    B_DZ,     /**/
    B_DZT,    /**/
    B_DXT,    /**/
    B_G32,    /* the input gradient in the shuffled layout, fp32 */
    B_IDX_IN, /* XT[j] = shuffled[IDX_IN[j]] */
    B_INV_IN, /* shuffled gradient[p] = DXT[INV_IN[p]] */
    B_IDX_T,  /* Z[j] = ZT[IDX_T[j]] */
    B_IDX_TT  /* DZT[j] = DZ[IDX_TT[j]] */
};

_Static_assert(B_IDX_TT < RT_XTM_BUFS, "rt_xunit.tm_buf too small");

/* A small deterministic generator: every member of a tower draws the same parameters. */
static uint64_t splitmix(uint64_t *s)
{
    uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static float uniform(uint64_t *s, float a)
{
    return a * (2.0f * (float)((double)(splitmix(s) >> 11) / 9007199254740992.0) - 1.0f);
}

static const rt_graph_unit *tm_unit(const rt_graph *g)
{
    for (int u = 0; u < g->n_units; u++)
        if (g->units[u].tower_size && g->units[u].tm_kind != RT_TM_NONE) return &g->units[u];
    return NULL;
}

/* Tower U's module shape, from the plan's own costing. */
static int tower_cost(const rt_scenario *s, const rt_graph_unit *u, int tower, rt_tm_cost *c,
                      int *feat, FILE *err)
{
    rt_tm_spec spec = {(rt_tm_kind)u->tm_kind, u->tm_compression, u->tm_cross_layers,
                       u->tm_cross_rank};
    int n = 0;
    for (int f = 0; f < s->model.n_tables; f++)
        if (u->tower_of[f] == tower) feat[n++] = f;
    return rt_tm_cost_of(&spec, &s->model, feat, n, c, err);
}

/* The dense net's model: tower outputs (rows 1, their width), then the sequence tables. */
static int net_model(rt_xtm *tm, const rt_scenario *s, FILE *err)
{
    int n = 0;
    for (int u = 0; u < tm->T; u++)
        tm->out_first[u] = n, n += tm->out_n[u];
    tm->tables = calloc((size_t)n + 1, sizeof *tm->tables);
    tm->names = calloc((size_t)n + 1, 32);
    if (!tm->tables || !tm->names) {
        fprintf(err, "exec: out of host memory for the tower outputs\n");
        return -1;
    }
    for (int u = 0, k = 0; u < tm->T; u++)
        for (int v = 0; v < tm->out_n[u]; v++, k++) {
            char *name = tm->names + (size_t)k * 32;
            snprintf(name, 32, "tower%d.out%d", u, v);
            tm->tables[k] = (rt_table){
                .name = name, .rows = 1, .dim = tm->out_w[u], .dtype = s->model.dense_dtype};
        }
    tm->model = s->model;
    tm->model.tables = tm->tables;
    tm->model.n_tables = n;
    return 0;
}

static int init_params(rt_xtm *tm, rt_xexec *x, FILE *err)
{
    rt_xdev *d = x->dev;
    int64_t n = tm->n_params;
    size_t bytes = sizeof(float) * (size_t)n;
    float *h = calloc((size_t)n, sizeof(float));
    tm->w = d->ops->alloc(d, bytes), tm->g = d->ops->alloc(d, bytes);
    tm->m = d->ops->alloc(d, bytes), tm->v = d->ops->alloc(d, bytes);
    if (!h || !tm->w || !tm->g || !tm->m || !tm->v) {
        free(h);
        fprintf(err, "exec: out of memory for the tower module's %lld parameters\n", (long long)n);
        return -1;
    }
    /* Weights uniform in +-sqrt(3 / fan-in), biases zero: variance-preserving, so the module
     * does not shrink the embeddings the global interaction sees (with the dense net's
     * +-1/sqrt(fan-in) two stacked maps cut their variance ~9x and training slows). */
    uint64_t st = x->s->workload.seed * 0x2545F4914F6CDD1Dull + 0x746F776572ull + (uint64_t)tm->t;
    float *wc = h, *wp = h + tm->n * tm->F + tm->n;
    for (int64_t i = 0; i < (int64_t)tm->n * tm->F; i++)
        wc[i] = uniform(&st, sqrtf(3.0f / (float)tm->F));
    for (int64_t i = 0; i < (int64_t)tm->d * tm->d; i++)
        wp[i] = uniform(&st, sqrtf(3.0f / (float)tm->d));
    int rc = d->ops->copy(d, tm->w, h, bytes, RT_XCOPY_H2D) || d->ops->zero(d, tm->g, bytes) ||
             d->ops->zero(d, tm->m, bytes) || d->ops->zero(d, tm->v, bytes);
    free(h);
    return rc ? -1 : 0;
}

int rt_xtm_open(rt_xexec *x, FILE *err)
{
    const rt_scenario *s = x->s;
    const rt_graph_unit *u = tm_unit(x->g);
    x->net_model = &s->model;
    if (!u) return 0;
    if (u->tm_kind != RT_TM_LINEAR) {
        fprintf(err,
                "exec: sptt with tower_module kind '%s' is not executed by rectwin-exec yet; "
                "allowed: kind linear (rectwin sim predicts crossnet)\n",
                rt_tm_kind_names[u->tm_kind]);
        return -1;
    }
    for (int f = 0; f < s->model.n_tables; f++)
        if (s->model.tables[f].sequence) {
            fprintf(err,
                    "exec: sptt tower modules with sequence features (table '%s') are not "
                    "executed by rectwin-exec yet; allowed: pooled features\n",
                    s->model.tables[f].name);
            return -1;
        }
    rt_xtm *tm = x->tm = calloc(1, sizeof *tm);
    int F = s->model.n_tables;
    if (!tm) goto oom;
    tm->D = u->tower_size, tm->T = x->world / tm->D, tm->t = x->rank / tm->D;
    tm->kof = malloc(sizeof(int) * (size_t)F), tm->out_first = malloc(sizeof(int) * 3 * tm->T);
    int *feat = malloc(sizeof(int) * (size_t)F);
    if (!tm->kof || !tm->out_first || !feat) {
        free(feat);
        goto oom;
    }
    tm->out_n = tm->out_first + tm->T, tm->out_w = tm->out_first + 2 * tm->T;
    for (int t = 0; t < tm->T; t++) {
        rt_tm_cost c;
        if (tower_cost(s, u, t, &c, feat, err)) {
            free(feat);
            return -1;
        }
        tm->out_n[t] = c.out_vectors, tm->out_w[t] = c.out_width;
        if (t == tm->t) tm->cost = c;
    }
    free(feat);
    for (int f = 0, k = 0; f < F; f++)
        tm->kof[f] = u->tower_of[f] == tm->t ? k++ : -1;
    tm->F = tm->cost.in_features, tm->n = tm->cost.out_vectors, tm->d = tm->cost.out_width;
    tm->n_params = (int64_t)tm->n * tm->F + tm->n + (int64_t)tm->d * tm->d + tm->d;
    if ((double)tm->n_params != tm->cost.params) {
        fprintf(err, "exec: the tower module has %lld parameters, the plan costs %.0f\n",
                (long long)tm->n_params, tm->cost.params);
        return -1;
    }
    if (net_model(tm, s, err) || init_params(tm, x, err)) return -1;
    x->net_model = &tm->model;
    return 0;
oom:
    fprintf(err, "exec: out of host memory setting up the tower module\n");
    return -1;
}

void rt_xtm_close(rt_xexec *x)
{
    rt_xtm *tm = x->tm;
    if (!tm) return;
    float *bufs[] = {tm->w, tm->g, tm->m, tm->v};
    for (size_t k = 0; k < sizeof bufs / sizeof *bufs; k++)
        if (bufs[k]) x->dev->ops->release(x->dev, bufs[k]);
    free(tm->kof), free(tm->out_first), free(tm->tables), free(tm->names);
    free(tm);
    x->tm = NULL;
    x->net_model = x->s ? &x->s->model : NULL;
}

void rt_xtm_free_unit(rt_xexec *x, rt_xunit *xu)
{
    rt_xbuf_free(x->dev, &xu->tm_send), rt_xbuf_free(x->dev, &xu->tm_gy);
    for (int k = 0; k < RT_XTM_BUFS; k++)
        rt_xbuf_free(x->dev, &xu->tm_buf[k]);
}

static int owners(const rt_xunit *xu)
{
    return xu->u->sharding == RT_SHARD_ROW ? 1 : xu->u->tower_size;
}

void rt_xtm_layout(const rt_xexec *x, rt_xunit *xu)
{
    const rt_xtm *tm = x->tm;
    size_t b = (size_t)x->v.batch.batch, cb = rt_xemb_cb(x), at = 0, rat = 0;
    for (int u = 0; u < tm->T; u++) {
        xu->psc[u] = b * (size_t)tm->n * (size_t)tm->d * cb, xu->psd[u] = at, at += xu->psc[u];
        xu->prc[u] = b * (size_t)tm->out_n[u] * (size_t)tm->out_w[u] * cb;
        xu->prd[u] = rat, rat += xu->prc[u];
    }
}

static float *buf(rt_xunit *xu, int k)
{
    return xu->tm_buf[k].p;
}

static int reserve_f(rt_xexec *x, rt_xunit *xu, int k, size_t n, FILE *err)
{
    return rt_xbuf_reserve(x->dev, &xu->tm_buf[k], (n ? n : 1) * sizeof(float), err);
}

/* The index maps between the shuffled layout and the module's, for batch B. */
static int build_maps(rt_xexec *x, rt_xunit *xu, int b, int op, FILE *err)
{
    const rt_xtm *tm = x->tm;
    int T = tm->T, D = tm->D, E = xu->n_entries, F = tm->F, d = tm->d, n = tm->n;
    size_t S = (size_t)T * b * F * d, A = (size_t)T * b * n * d;
    if (xu->shuf_bytes / rt_xemb_cb(x) != S)
        return rt_xemb_fail(err, x, op, "the shuffled input does not hold T x b x F x d floats");
    int64_t *in = malloc(sizeof(int64_t) * (S + 1)), *inv = malloc(sizeof(int64_t) * (S + 1));
    int64_t *t1 = malloc(sizeof(int64_t) * (A + 1)), *t2 = malloc(sizeof(int64_t) * (A + 1));
    int rc = -1;
    if (!in || !inv || !t1 || !t2) {
        rt_xemb_fail(err, x, op, "out of host memory for the tower module's maps");
        goto out;
    }
    for (int u = 0; u < T; u++)
        for (int mi = 0; mi < owners(xu); mi++)
            for (int e = 0; e < E; e++) {
                if (!rt_xemb_served(xu, tm->t * D + mi, e)) continue;
                const rt_xentry *en = &xu->entries[e];
                size_t at = xu->shuf_at[(u * D + mi) * E + e];
                int k = tm->kof[en->table];
                for (int i = 0; i < b; i++)
                    for (int cc = 0; cc < en->width; cc++) {
                        size_t s = (size_t)u * b + i, p = at + (size_t)i * en->width + cc;
                        size_t j = (s * d + (size_t)(en->col0 + cc)) * F + (size_t)k;
                        in[j] = (int64_t)p, inv[p] = (int64_t)j;
                    }
            }
    for (size_t s = 0; s < (size_t)T * b; s++)
        for (int v = 0; v < n; v++)
            for (int c = 0; c < d; c++) {
                size_t zj = (s * n + v) * d + c, tj = (s * d + c) * n + v;
                t1[zj] = (int64_t)tj, t2[tj] = (int64_t)zj;
            }
    rc = rt_xemb_put(x, &xu->tm_buf[B_IDX_IN], in, S, err) ||
                 rt_xemb_put(x, &xu->tm_buf[B_INV_IN], inv, S, err) ||
                 rt_xemb_put(x, &xu->tm_buf[B_IDX_T], t1, A, err) ||
                 rt_xemb_put(x, &xu->tm_buf[B_IDX_TT], t2, A, err)
             ? -1
             : 0;
    /* The uploads are queued: the device must have read the host arrays before they go. */
    if (!rc && x->dev->ops->sync(x->dev)) rc = -1;
    if (!rc) xu->tm_b = b;
out:
    free(in), free(inv), free(t1), free(t2);
    return rc;
}

/* The graph's bytes of the module's forward over N samples (plans/sptt.c fill), x MUL. */
static double module_bytes(const rt_xexec *x, double n, double mul)
{
    double db = (double)rt_dtype_bytes(x->s->plan.dense_dtype);
    return mul * n * x->tm->cost.fwd_elems * db + mul * x->tm->cost.params * db;
}

static int forward(rt_xexec *x, rt_xunit *xu, int op, FILE *err)
{
    const rt_xtm *tm = x->tm;
    rt_xdev *d = x->dev;
    int b = x->v.batch.batch, F = tm->F, dd = tm->d, n = tm->n;
    int64_t Tb = (int64_t)tm->T * b, S = Tb * F * dd, A = Tb * n * dd;
    if (xu->tm_b != b && build_maps(x, xu, b, op, err)) return -1;
    const float *in = xu->shuf.p;
    if (rt_xemb_ck(x) != RT_KDT_FP32) {
        if (reserve_f(x, xu, B_S32, (size_t)S, err) ||
            rt_xemb_from_msg(x, xu->shuf.p, 0, buf(xu, B_S32), (size_t)S))
            return -1;
        in = buf(xu, B_S32);
    }
    if (reserve_f(x, xu, B_XT, (size_t)S, err) || reserve_f(x, xu, B_ZT, (size_t)A, err) ||
        reserve_f(x, xu, B_Z, (size_t)A, err) || reserve_f(x, xu, B_Y, (size_t)A, err) ||
        rt_xbuf_reserve(d, &xu->tm_send, (size_t)A * rt_xemb_cb(x) + 1, err))
        return -1;
    const float *wc = tm->w, *bc = wc + (int64_t)n * F, *wp = bc + n, *bp = wp + (int64_t)dd * dd;
    if (rt_xemb_kcheck(d->ops->gather_rows(d, in, S, 1, xu->tm_buf[B_IDX_IN].p, S, buf(xu, B_XT)),
                       err, x, op, "gather_rows") ||
        rt_xemb_kcheck(d->ops->linear_fwd(d, buf(xu, B_XT), Tb * dd, F, n, wc, bc, RT_KACT_NONE,
                                          buf(xu, B_ZT)),
                       err, x, op, "linear_fwd") ||
        rt_xemb_kcheck(
            d->ops->gather_rows(d, buf(xu, B_ZT), A, 1, xu->tm_buf[B_IDX_T].p, A, buf(xu, B_Z)),
            err, x, op, "gather_rows") ||
        rt_xemb_kcheck(
            d->ops->linear_fwd(d, buf(xu, B_Z), Tb * n, dd, dd, wp, bp, RT_KACT_NONE, buf(xu, B_Y)),
            err, x, op, "linear_fwd"))
        return -1;
    /* Y is already in peer order: peer u's b samples are rows [u b n, (u + 1) b n). */
    if (rt_xemb_to_msg(x, xu->tm_send.p, 0, buf(xu, B_Y), (size_t)A)) return -1;
    rt_xexec_count(x, op, module_bytes(x, (double)tm->T * (double)b, 1), 0);
    return 0;
}

static int backward(rt_xexec *x, rt_xunit *xu, int op, FILE *err)
{
    const rt_xtm *tm = x->tm;
    rt_xdev *d = x->dev;
    int b = x->v.batch.batch, F = tm->F, dd = tm->d, n = tm->n;
    int64_t Tb = (int64_t)tm->T * b, S = Tb * F * dd, A = Tb * n * dd;
    if (xu->tm_b != b) return rt_xemb_fail(err, x, op, "the tower module's forward did not run");
    int direct = rt_xemb_ck(x) == RT_KDT_FP32; /* the input gradient goes straight to g_shuf */
    if (reserve_f(x, xu, B_DY, (size_t)A, err) || reserve_f(x, xu, B_DZ, (size_t)A, err) ||
        reserve_f(x, xu, B_DZT, (size_t)A, err) || reserve_f(x, xu, B_DXT, (size_t)S, err) ||
        (!direct && reserve_f(x, xu, B_G32, (size_t)S, err)) ||
        rt_xbuf_reserve(d, &xu->g_shuf, xu->shuf_bytes, err) ||
        rt_xemb_from_msg(x, xu->tm_gy.p, 0, buf(xu, B_DY), (size_t)A))
        return -1;
    const float *wc = tm->w, *wp = wc + (int64_t)n * F + n;
    float *gwc = tm->g, *gbc = gwc + (int64_t)n * F, *gwp = gbc + n, *gbp = gwp + (int64_t)dd * dd;
    float *g32 = direct ? xu->g_shuf.p : buf(xu, B_G32);
    if (rt_xemb_kcheck(d->ops->linear_bwd(d, buf(xu, B_Z), buf(xu, B_Y), buf(xu, B_DY), Tb * n, dd,
                                          dd, wp, RT_KACT_NONE, buf(xu, B_DZ), gwp, gbp),
                       err, x, op, "linear_bwd") ||
        rt_xemb_kcheck(
            d->ops->gather_rows(d, buf(xu, B_DZ), A, 1, xu->tm_buf[B_IDX_TT].p, A, buf(xu, B_DZT)),
            err, x, op, "gather_rows") ||
        rt_xemb_kcheck(d->ops->linear_bwd(d, buf(xu, B_XT), buf(xu, B_ZT), buf(xu, B_DZT), Tb * dd,
                                          F, n, wc, RT_KACT_NONE, buf(xu, B_DXT), gwc, gbc),
                       err, x, op, "linear_bwd") ||
        rt_xemb_kcheck(d->ops->gather_rows(d, buf(xu, B_DXT), S, 1, xu->tm_buf[B_INV_IN].p, S, g32),
                       err, x, op, "gather_rows"))
        return -1;
    if (!direct && rt_xemb_to_msg(x, xu->g_shuf.p, 0, g32, (size_t)S)) return -1;
    rt_xexec_count(x, op, module_bytes(x, (double)tm->T * (double)b, 2), 0);
    return 0;
}

static int allreduce(rt_xexec *x, int op, FILE *err)
{
    rt_xgroup *grp = rt_xexec_group(x, x->g->ops[op].group, err);
    if (!grp) return -1;
    if (x->comm->ops->allreduce_f32(x->comm, grp, x->tm->g, (size_t)x->tm->n_params))
        return rt_xemb_fail(err, x, op, "the tower module's gradient AllReduce failed");
    rt_xexec_count(x, op, x->tm->cost.params * 4, 0);
    return 0;
}

static int update(rt_xexec *x, int op, FILE *err)
{
    rt_xtm *tm = x->tm;
    const rt_training *tr = &x->s->model.training;
    rt_kadam opt = {tr->dense_optimizer == RT_OPT_ADAM ? RT_KOPT_ADAM : RT_KOPT_SGD,
                    (float)tr->dense_lr,
                    (float)tr->beta1,
                    (float)tr->beta2,
                    (float)tr->eps,
                    1.0f,
                    ++tm->step};
    if (rt_xemb_kcheck(x->dev->ops->adam(x->dev, tm->n_params, &opt, tm->w, tm->g, tm->m, tm->v),
                       err, x, op, "adam"))
        return -1;
    rt_xexec_count(x, op, tm->cost.params * 4 * 7, 0);
    return 0;
}

int rt_xtm_run(rt_xexec *x, rt_xunit *xu, int op, FILE *err)
{
    if (!x->tm) return rt_xemb_fail(err, x, op, "no tower module on this rank");
    switch (x->g->ops[op].role) {
    case RT_ROLE_TM_FWD:
        return forward(x, xu, op, err);
    case RT_ROLE_TM_BWD:
        return backward(x, xu, op, err);
    case RT_ROLE_TM_ALLREDUCE:
        return allreduce(x, op, err);
    case RT_ROLE_TM_UPDATE:
        return update(x, op, err);
    default:
        return rt_xemb_fail(err, x, op, "not a tower-module role");
    }
}

int rt_xtm_pack_grads(rt_xexec *x, rt_xunit *xu, float *base, int op, FILE *err)
{
    const rt_xtm *tm = x->tm;
    size_t b = (size_t)x->v.batch.batch, cb = rt_xemb_cb(x);
    for (int u = 0; u < tm->T; u++)
        for (int v = 0; v < tm->out_n[u]; v++) {
            size_t w = (size_t)tm->out_w[u], row = (size_t)tm->out_n[u] * w;
            const float *g = rt_xexec_emb_grad(x, tm->out_first[u] + v);
            if (!g) return rt_xemb_fail(err, x, op, "no gradient for a tower output");
            if (x->dev->ops->copy2d(x->dev, base + xu->prd[u] / cb + v * w, row * sizeof(float), g,
                                    w * sizeof(float), w * sizeof(float), b))
                return -1;
        }
    return 0;
}

int rt_xtm_assemble(rt_xexec *x, rt_xunit *xu, const float *recv, int op, FILE *err)
{
    (void)op, (void)err;
    const rt_xtm *tm = x->tm;
    size_t b = (size_t)x->v.batch.batch, cb = rt_xemb_cb(x);
    for (int u = 0; u < tm->T; u++)
        for (int v = 0; v < tm->out_n[u]; v++) {
            size_t w = (size_t)tm->out_w[u], row = (size_t)tm->out_n[u] * w;
            if (x->dev->ops->copy2d(x->dev, x->v.emb[tm->out_first[u] + v], w * sizeof(float),
                                    recv + xu->prd[u] / cb + v * w, row * sizeof(float),
                                    w * sizeof(float), b))
                return -1;
        }
    return 0;
}
