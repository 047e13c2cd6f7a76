#include "tower_module.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "dtype.h"
#include "model_cost.h"

const char *const rt_tm_kind_names[] = {"none", "linear", "crossnet", NULL};

static void linear_module(rt_tm_cost *c, double F, double d, double R)
{
    double n = ceil(F / R);
    c->out_vectors = (int)n;
    c->out_width = (int)d;
    /* Feature combination (n x F weights + bias) then a d -> d projection of each output. */
    c->fwd_flops = 2 * n * F * d + 2 * n * d * d;
    c->params = n * F + n + d * d + d;
    c->fwd_elems = F * d + 3 * n * d;
    c->act_elems = F * d + n * d;
}

static void crossnet_module(rt_tm_cost *c, const rt_tm_spec *spec, double W)
{
    double out = ceil(W / spec->compression);
    double r = spec->cross_rank ? spec->cross_rank : out;
    c->out_vectors = 1;
    c->out_width = (int)out;
    /* Low-rank cross layers as in models/model_cost.c, then the W -> out projection. */
    for (int l = 0; l < spec->cross_layers; l++) {
        c->fwd_flops += 4 * W * r;
        c->params += 2 * W * r + W;
        c->fwd_elems += 3 * W + 2 * r;
        c->act_elems += 2 * W + r;
    }
    c->fwd_flops += 2 * W * out;
    c->params += W * out + out;
    c->fwd_elems += W + out;
    c->act_elems += W;
}

int rt_tm_cost_of(const rt_tm_spec *spec, const rt_model *m, const int *features, int n,
                  rt_tm_cost *c, FILE *err)
{
    memset(c, 0, sizeof *c);
    int dim = -1;
    for (int i = 0; i < n; i++) {
        const rt_table *tb = &m->tables[features[i]];
        if (tb->sequence) continue;
        if (dim >= 0 && dim != tb->dim) dim = -2;
        if (dim != -2) dim = tb->dim;
        c->in_features++;
        c->in_elems += tb->dim;
    }
    if (!c->in_features || spec->kind == RT_TM_NONE) return 0;
    if (spec->kind == RT_TM_LINEAR) {
        if (dim < 0) {
            fprintf(err, "sptt: tower_module linear combines features of one width, but a tower "
                         "mixes embedding dims; use kind crossnet or towers of equal dims\n");
            return -1;
        }
        linear_module(c, c->in_features, dim, spec->compression);
    } else {
        crossnet_module(c, spec, c->in_elems);
    }
    return 0;
}

/* The tables the global interaction sees: every tower's module outputs (pooled, their width),
 * then the model's sequence tables unchanged. */
static rt_table *tower_outputs(const rt_model *m, const rt_tm_cost *tm, int n_towers, int *n_out)
{
    int n = 0;
    for (int t = 0; t < n_towers; t++)
        n += tm[t].out_vectors;
    for (int f = 0; f < m->n_tables; f++)
        n += m->tables[f].sequence;
    rt_table *tabs = calloc((size_t)(n ? n : 1), sizeof *tabs);
    if (!tabs) return NULL;
    int k = 0;
    for (int t = 0; t < n_towers; t++)
        for (int v = 0; v < tm[t].out_vectors; v++)
            tabs[k++] = (rt_table){.rows = 1, .dim = tm[t].out_width, .dtype = m->dense_dtype};
    for (int f = 0; f < m->n_tables; f++)
        if (m->tables[f].sequence) tabs[k++] = m->tables[f];
    *n_out = n;
    return tabs;
}

static void copy_layer_costs(rt_layer *dst, const rt_layer *src)
{
    dst->in_vectors = src->in_vectors, dst->in_width = src->in_width;
    dst->out_vectors = src->out_vectors, dst->out_width = src->out_width;
    dst->fwd_flops = src->fwd_flops, dst->bwd_flops = src->bwd_flops;
    dst->fwd_bytes = src->fwd_bytes, dst->bwd_bytes = src->bwd_bytes;
    dst->act_bytes = src->act_bytes, dst->params = src->params;
    dst->aux_params = src->aux_params;
}

/* Costs M's layers as if their 'embeddings' input were the tower outputs. */
static int recost_layers(rt_model *m, const rt_tm_cost *tm, int n_towers, FILE *err)
{
    rt_model shadow = *m;
    rt_layer *layers = malloc(sizeof *layers * (size_t)m->n_layers);
    rt_table *tabs = tower_outputs(m, tm, n_towers, &shadow.n_tables);
    int rc = -1;
    if (!layers || !tabs) {
        fprintf(err, "sptt: out of memory re-costing the model\n");
        goto out;
    }
    /* The copies share input lists with M; every layer already has one, so the cost pass
     * does not reallocate them. */
    memcpy(layers, m->layers, sizeof *layers * (size_t)m->n_layers);
    shadow.layers = layers;
    shadow.tables = tabs;
    if (rt_model_compute_costs(&shadow, err)) goto out;
    for (int l = 0; l < m->n_layers; l++)
        copy_layer_costs(&m->layers[l], &layers[l]);
    m->fwd_flops = shadow.fwd_flops, m->bwd_flops = shadow.bwd_flops;
    m->fwd_bytes = shadow.fwd_bytes, m->bwd_bytes = shadow.bwd_bytes;
    m->act_bytes = shadow.act_bytes, m->dense_params = shadow.dense_params;
    m->aux_params = shadow.aux_params;
    rc = 0;
out:
    free(layers);
    free(tabs);
    return rc;
}

static int tower_costs(const rt_model *m, const rt_tm_spec *spec, const int *tower_of, int n_towers,
                       rt_tm_cost *tm, FILE *err)
{
    int *feat = malloc(sizeof(int) * (size_t)(m->n_tables ? m->n_tables : 1));
    if (!feat) return -1;
    int rc = 0;
    for (int t = 0; t < n_towers && !rc; t++) {
        int n = 0;
        for (int f = 0; f < m->n_tables; f++)
            if (tower_of[f] == t) feat[n++] = f;
        rc = rt_tm_cost_of(spec, m, feat, n, &tm[t], err);
    }
    free(feat);
    return rc;
}

int rt_tm_apply(rt_model *m, const rt_tm_spec *spec, const int *tower_of, int n_towers,
                rt_tm_cost *tm_out, double *tm_params, FILE *err)
{
    *tm_params = 0;
    if (rt_model_compute_costs(m, err)) return -1;
    rt_tm_cost *tm = tm_out ? tm_out : calloc((size_t)n_towers, sizeof *tm);
    if (!tm) return -1;
    int rc = tower_costs(m, spec, tower_of, n_towers, tm, err);
    if (!rc && spec->kind != RT_TM_NONE) rc = recost_layers(m, tm, n_towers, err);
    double elem = (double)rt_dtype_bytes(m->dense_dtype);
    for (int t = 0; t < n_towers && !rc && spec->kind != RT_TM_NONE; t++) {
        m->fwd_flops.c[0] += tm[t].fwd_flops;
        m->bwd_flops.c[0] += 2 * tm[t].fwd_flops;
        m->fwd_bytes.c[0] += tm[t].fwd_elems * elem;
        m->bwd_bytes.c[0] += 2 * tm[t].fwd_elems * elem;
        m->act_bytes.c[0] += tm[t].act_elems * elem;
        m->dense_params += tm[t].params;
        *tm_params += tm[t].params;
    }
    if (!tm_out) free(tm);
    return rc;
}
