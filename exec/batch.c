#include "batch.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "balance.h"
#include "criteo.h"
#include "kernels.h"

/* A uniform in [-1, 1) from a hash of its coordinates. */
static double sym(uint64_t seed, uint64_t a, uint64_t b, uint64_t c)
{
    uint64_t h = rt_kmix64(seed ^ rt_kmix64(a * 0x100000001b3ULL ^ rt_kmix64(b ^ rt_kmix64(c))));
    return (double)(h >> 11) * (2.0 / 9007199254740992.0) - 1.0;
}

/* The signal's weights do not depend on the iteration: they are what the model must learn. */
enum { SALT_ID = 1, SALT_DENSE = 2, SALT_FEATURE = 3 };

/* AT[f] is where sample I's IDs of feature f start; it is advanced past them. */
static double score(const rt_xbatch *b, const rt_scenario *s, int i, uint64_t *at)
{
    uint64_t seed = s->workload.seed;
    double score = 0;
    int terms = 0;
    for (int f = 0; f < b->n_features; f++) {
        const rt_feature_batch *fb = &b->f[f];
        for (uint32_t j = 0; j < fb->lengths[i]; j++)
            score += sym(seed, SALT_ID, (uint64_t)f, fb->ids[at[f] + j]);
        at[f] += fb->lengths[i];
        terms += fb->lengths[i] > 0;
    }
    int nd = s->model.dense_features;
    for (int j = 0; j < nd; j++)
        score += b->dense[(size_t)i * nd + j] * sym(seed, SALT_DENSE, (uint64_t)j, 0);
    return score / sqrt((double)(terms + nd > 0 ? terms + nd : 1));
}

/* Next-item signal of a sequence table: token j + 1 follows token j by a fixed map for half
 * of the positions, so next-item prediction is learnable. */
static void plant_sequences(rt_xbatch *b, const rt_scenario *s, int rank, int64_t iteration)
{
    for (int f = 0; f < b->n_features; f++) {
        const rt_table *tb = &s->model.tables[f];
        rt_feature_batch *fb = &b->f[f];
        if (!tb->sequence || !tb->rows) continue;
        uint64_t at = 0;
        for (int i = 0; i < fb->batch; i++) {
            for (uint32_t j = 1; j < fb->lengths[i]; j++) {
                double u = sym(s->workload.seed ^ (uint64_t)iteration, SALT_ID + 10,
                               (uint64_t)rank * (uint64_t)fb->batch + (uint64_t)i, j);
                if (u < 0)
                    fb->ids[at + j] = rt_kmix64(fb->ids[at + j - 1] + (uint64_t)f) % tb->rows;
            }
            at += fb->lengths[i];
        }
    }
}

static int copy_graph_batch(rt_xbatch *b, const rt_workload *w, int rank, FILE *err)
{
    for (int f = 0; f < b->n_features; f++) {
        const rt_feature_batch *src = rt_workload_batch(w, rank, f);
        rt_feature_batch *dst = &b->f[f];
        dst->batch = src->batch, dst->n_ids = src->n_ids;
        dst->lengths = malloc(sizeof(uint32_t) * (size_t)(src->batch ? src->batch : 1));
        dst->ids = malloc(sizeof(uint64_t) * (size_t)(src->n_ids ? src->n_ids : 1));
        if (!dst->lengths || !dst->ids) {
            fprintf(err, "exec: out of host memory for the batch\n");
            return -1;
        }
        memcpy(dst->lengths, src->lengths, sizeof(uint32_t) * (size_t)src->batch);
        memcpy(dst->ids, src->ids, sizeof(uint64_t) * (size_t)src->n_ids);
    }
    return 0;
}

/* A data file gives one ID per feature per sample (the Criteo layout): rank r of iteration k
 * reads samples k x global batch + r x batch onwards, so ranks read disjoint slices. */
static int read_data(rt_xbatch *b, const rt_scenario *s, int rank, int64_t iteration,
                     rt_criteo *data, FILE *err)
{
    int T = b->n_features, n = b->batch;
    uint64_t *rows = calloc((size_t)(T ? T : 1), sizeof(uint64_t));
    uint64_t *cat = malloc(sizeof(uint64_t) * (size_t)n * (size_t)(T ? T : 1));
    int rc = -1;
    if (!rows || !cat) {
        fprintf(err, "exec: out of host memory reading a batch of %d\n", n);
        goto out;
    }
    for (int t = 0; t < T; t++)
        rows[t] = s->model.tables[t].rows;
    int64_t first = iteration * (int64_t)b->global_batch + (int64_t)rank * n;
    if (rt_criteo_read(data, first, n, rows, b->labels, b->dense, cat, err)) goto out;
    for (int t = 0; t < T; t++) {
        rt_feature_batch *fb = &b->f[t];
        fb->batch = n, fb->n_ids = (uint64_t)n;
        fb->lengths = malloc(sizeof(uint32_t) * (size_t)(n ? n : 1));
        fb->ids = malloc(sizeof(uint64_t) * (size_t)(n ? n : 1));
        if (!fb->lengths || !fb->ids) {
            fprintf(err, "exec: out of host memory reading a batch of %d\n", n);
            goto out;
        }
        for (int i = 0; i < n; i++)
            fb->lengths[i] = 1, fb->ids[i] = cat[(size_t)i * T + t];
    }
    rc = 0;
out:
    free(rows), free(cat);
    return rc;
}

/* Iteration K's draw of every rank with the plan's sequence balancing applied (samples move
 * between ranks), so each rank trains on the batch the balancing gives it. */
static rt_workload *balanced_draw(const rt_scenario *s, int64_t k, FILE *err)
{
    rt_scenario at_k = *s; /* read-only shallow copy: only the seed differs */
    at_k.workload.seed = s->workload.seed + (uint64_t)k;
    rt_workload *w = rt_workload_sample(&at_k, err);
    if (w && rt_balance_apply(&at_k, w, err)) {
        rt_workload_free(w);
        return NULL;
    }
    return w;
}

/* This rank's features for iteration K, and the samples of all ranks together. */
static int draw_features(rt_xbatch *b, const rt_scenario *s, const rt_workload *graph_batch,
                         int rank, int64_t k, FILE *err)
{
    b->global_batch = (double)s->workload.batch_per_rank * rt_scenario_ranks(s);
    int own = k == 0 && graph_batch && graph_batch->exact;
    if (!own && s->plan.balance == RT_BALANCE_NONE)
        return rt_workload_sample_rank(s, s->workload.seed + (uint64_t)k, rank, b->f, err);
    rt_workload *w = own ? (rt_workload *)graph_batch : balanced_draw(s, k, err);
    if (!w) return -1;
    int rc = copy_graph_batch(b, w, rank, err);
    b->global_batch = 0;
    for (int r = 0; r < w->n_reps; r++)
        b->global_batch += w->n_features ? rt_workload_batch(w, r, 0)->batch : w->batch;
    if (!own) rt_workload_free(w);
    return rc;
}

static int fill_dense_and_labels(rt_xbatch *b, const rt_scenario *s, int rank, int64_t k, FILE *err)
{
    int nd = s->model.dense_features;
    b->dense = malloc(sizeof(float) * (size_t)(b->batch ? b->batch : 1) * (size_t)(nd ? nd : 1));
    b->labels = malloc(sizeof(float) * (size_t)(b->batch ? b->batch : 1));
    uint64_t *at = calloc((size_t)(b->n_features ? b->n_features : 1), sizeof(uint64_t));
    if (!b->dense || !b->labels || !at) {
        free(at);
        fprintf(err, "exec: out of host memory for a batch of %d\n", b->batch);
        return -1;
    }
    for (int i = 0; i < b->batch; i++)
        for (int j = 0; j < nd; j++)
            b->dense[(size_t)i * nd + j] =
                (float)sym(s->workload.seed ^ (uint64_t)k, SALT_FEATURE,
                           (uint64_t)rank * (uint64_t)b->batch + (uint64_t)i, (uint64_t)j);
    for (int i = 0; i < b->batch; i++)
        b->labels[i] = score(b, s, i, at) > 0 ? 1.0f : 0.0f;
    free(at);
    return 0;
}

int rt_xbatch_make(rt_xbatch *b, const rt_scenario *s, const rt_workload *graph_batch, int rank,
                   int64_t iteration, struct rt_criteo *data, FILE *err)
{
    memset(b, 0, sizeof *b);
    b->n_features = s->model.n_tables;
    b->f = calloc((size_t)(b->n_features ? b->n_features : 1), sizeof *b->f);
    if (!b->f) {
        fprintf(err, "exec: out of host memory for a batch\n");
        return -1;
    }
    if (data) {
        int nd = s->model.dense_features;
        b->batch = s->workload.batch_per_rank;
        b->global_batch = (double)b->batch * rt_scenario_ranks(s);
        b->dense = malloc(sizeof(float) * (size_t)(b->batch * (nd ? nd : 1)));
        b->labels = malloc(sizeof(float) * (size_t)(b->batch ? b->batch : 1));
        if (!b->dense || !b->labels || read_data(b, s, rank, iteration, data, err)) {
            if (!b->dense || !b->labels) fprintf(err, "exec: out of host memory for a batch\n");
            rt_xbatch_free(b);
            return -1;
        }
        return 0;
    }
    if (draw_features(b, s, graph_batch, rank, iteration, err)) {
        rt_xbatch_free(b);
        return -1;
    }
    b->batch = b->n_features ? b->f[0].batch : s->workload.batch_per_rank;
    if (!(iteration == 0 && graph_batch && graph_batch->exact))
        plant_sequences(b, s, rank, iteration);
    if (fill_dense_and_labels(b, s, rank, iteration, err)) {
        rt_xbatch_free(b);
        return -1;
    }
    return 0;
}

void rt_xbatch_free(rt_xbatch *b)
{
    if (b->f) rt_feature_batches_free(b->f, b->n_features);
    free(b->f), free(b->dense), free(b->labels);
    memset(b, 0, sizeof *b);
}
