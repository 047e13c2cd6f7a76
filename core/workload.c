#include "workload.h"

#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ---- Zipf by rejection-inversion (Hoermann and Derflinger 1996) ----------------------
 * Samples k in 1..n with P(k) ~ k^-alpha by inverting the integral H of x^-alpha over
 * [k-1/2, k+1/2] and rejecting the small excess; expected draws per sample are close to 1. */

static double log1p_over_x(double x)
{
    return fabs(x) > 1e-8 ? log1p(x) / x : 1 - x / 2 + x * x / 3;
}
static double expm1_over_x(double x)
{
    return fabs(x) > 1e-8 ? expm1(x) / x : 1 + x / 2 + x * x / 6;
}

static double zipf_h(const rt_zipf *z, double x)
{
    return exp(-z->alpha * log(x));
}
static double zipf_H(const rt_zipf *z, double x)
{
    double lx = log(x);
    return expm1_over_x((1 - z->alpha) * lx) * lx;
}
static double zipf_H_inv(const rt_zipf *z, double y)
{
    double t = y * (1 - z->alpha);
    if (t < -1) t = -1;
    return exp(log1p_over_x(t) * y);
}

void rt_zipf_init(rt_zipf *z, uint64_t n, double alpha)
{
    z->n = n;
    z->alpha = alpha;
    z->h_x1 = zipf_H(z, 1.5) - 1;
    z->h_n = zipf_H(z, (double)n + 0.5);
    z->s = 2 - zipf_H_inv(z, zipf_H(z, 2.5) - zipf_h(z, 2));
}

uint64_t rt_zipf_draw(const rt_zipf *z, gsl_rng *rng)
{
    for (;;) {
        double u = z->h_n + gsl_rng_uniform(rng) * (z->h_x1 - z->h_n);
        double x = zipf_H_inv(z, u);
        double kd = floor(x + 0.5);
        if (kd < 1) kd = 1;
        if (kd > (double)z->n) kd = (double)z->n;
        if (kd - x <= z->s || u >= zipf_H(z, kd + 0.5) - zipf_h(z, kd)) return (uint64_t)kd - 1;
    }
}

/* ---- lengths ------------------------------------------------------------------------ */

static int clamp_len(const rt_len_spec *s, double v)
{
    long x = lround(v);
    if (x < s->min) x = s->min;
    if (s->max && x > s->max) x = s->max;
    if (x < 0) x = 0;
    return (int)x;
}

int rt_len_draw(const rt_len_spec *s, gsl_rng *rng)
{
    switch (s->kind) {
    case RT_LEN_FIXED:
        return clamp_len(s, s->mean);
    case RT_LEN_LOGNORMAL: {
        /* Parameterized by the mean of the length itself, the way users describe data. */
        double mu = log(s->mean > 0 ? s->mean : 1e-9) - s->sigma * s->sigma / 2;
        return clamp_len(s, gsl_ran_lognormal(rng, mu, s->sigma));
    }
    case RT_LEN_EMPIRICAL: {
        double total = 0;
        for (int i = 0; i < s->n_bins; i++)
            total += s->weights[i];
        double u = gsl_rng_uniform(rng) * total;
        for (int i = 0; i < s->n_bins; i++) {
            if (u < s->weights[i]) return clamp_len(s, s->values[i]);
            u -= s->weights[i];
        }
        return clamp_len(s, s->values[s->n_bins - 1]);
    }
    default:
        return 0;
    }
}

double rt_len_mean(const rt_len_spec *s)
{
    if (s->kind == RT_LEN_FIXED) return clamp_len(s, s->mean);
    if (s->kind == RT_LEN_EMPIRICAL) {
        double tw = 0, tv = 0;
        for (int i = 0; i < s->n_bins; i++) {
            tw += s->weights[i];
            tv += s->weights[i] * clamp_len(s, s->values[i]);
        }
        return tw > 0 ? tv / tw : 0;
    }
    /* Lognormal with clamping: a fixed-seed sample mean is exact enough and never stale. */
    gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
    if (!rng) return s->mean;
    gsl_rng_set(rng, 12345);
    double sum = 0;
    enum { N = 20000 };
    for (int i = 0; i < N; i++)
        sum += rt_len_draw(s, rng);
    gsl_rng_free(rng);
    return sum / N;
}

/* ---- sampling ----------------------------------------------------------------------- */

static uint64_t mix64(uint64_t x)
{
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

static uint64_t uniform_below(gsl_rng *rng, uint64_t n)
{
    if (n <= 0xffffffffull) return gsl_rng_uniform_int(rng, (unsigned long)n);
    double u = (gsl_rng_uniform(rng) + gsl_rng_uniform(rng) * 0x1p-32);
    uint64_t v = (uint64_t)(u * (double)n);
    return v < n ? v : n - 1;
}

static const rt_len_spec *length_spec(const rt_scenario *s, const rt_table *t, rt_len_spec *tmp)
{
    const rt_workload_cfg *w = &s->workload;
    if (t->sequence) {
        if (w->has_seq_len) return &w->seq_len;
        *tmp = (rt_len_spec){.kind = RT_LEN_FIXED, .mean = s->model.seq_len};
        return tmp;
    }
    return w->has_pooling ? &w->pooling : &t->pooling;
}

/* The lengths feature F of a sequence table shares: those of the rank's first sequence table
 * before F in BATCHES (the rank's features), or NULL. */
static const uint32_t *shared_lengths(const rt_scenario *s, const rt_feature_batch *batches, int f)
{
    if (!s->model.tables[f].sequence) return NULL;
    for (int t = 0; t < f; t++)
        if (s->model.tables[t].sequence) return batches[t].lengths;
    return NULL;
}

/* A dynamic table's new IDs: each ID is, with probability new_id_rate, a key never drawn
 * before, rows + a 61-bit hash of (seed, rank, table, position), so new keys are distinct
 * across ranks and iterations (seed + k) and never collide with the first rows keys. A hash,
 * not the RNG, decides: the other IDs stay the draws they are at rate 0. */
static void replace_new_ids(const rt_scenario *s, uint64_t seed, int rank, int f,
                            rt_feature_batch *fb)
{
    double rate = s->workload.new_id_rate;
    if (rate <= 0) return;
    uint64_t base = mix64(seed ^ mix64(((uint64_t)rank << 24) ^ (uint64_t)f ^ 0x6e65772d6964ull));
    for (uint64_t i = 0; i < fb->n_ids; i++) {
        uint64_t h = mix64(base + i);
        if ((double)(h >> 11) * 0x1.0p-53 < rate)
            fb->ids[i] = s->model.tables[f].rows + (mix64(h ^ 0x9e3779b97f4a7c15ull) >> 3);
    }
}

/* SHARED (may be NULL): the lengths of the sample's sequence, drawn for its first sequence
 * table: every sequence table of a model describes the same tokens (MTGR's item, category,
 * ... of each behaviour), so they share one length per sample. */
static int sample_feature(const rt_scenario *s, uint64_t seed, int rank, int f, gsl_rng *rng,
                          const uint32_t *shared, rt_feature_batch *fb)
{
    const rt_table *t = &s->model.tables[f];
    const rt_id_spec *ids = s->workload.has_ids ? &s->workload.ids : &t->ids;
    rt_len_spec tmp;
    const rt_len_spec *len = length_spec(s, t, &tmp);
    gsl_rng_set(rng, mix64(seed ^ mix64((uint64_t)rank * 0x10001ull + (uint64_t)f)));
    fb->batch = s->workload.batch_per_rank;
    fb->lengths = malloc(sizeof(uint32_t) * (size_t)fb->batch);
    if (!fb->lengths) return -1;
    uint64_t total = 0;
    for (int i = 0; i < fb->batch; i++)
        total += fb->lengths[i] = shared ? shared[i] : (uint32_t)rt_len_draw(len, rng);
    fb->n_ids = total;
    fb->ids = malloc(sizeof(uint64_t) * (size_t)(total ? total : 1));
    if (!fb->ids) return -1;
    if (ids->kind == RT_DIST_ZIPF) {
        rt_zipf z;
        rt_zipf_init(&z, t->rows, ids->alpha);
        for (uint64_t i = 0; i < total; i++)
            fb->ids[i] = rt_zipf_draw(&z, rng);
    } else {
        for (uint64_t i = 0; i < total; i++)
            fb->ids[i] = uniform_below(rng, t->rows);
    }
    if (t->dynamic) replace_new_ids(s, seed, rank, f, fb);
    return 0;
}

/* Bytes the sampled batches of N_REPS ranks take: per sample a length and its IDs. */
static double sample_bytes(const rt_scenario *s, int n_reps)
{
    double per_rank = 0, mean = 0;
    const rt_len_spec *last = NULL;
    for (int f = 0; f < s->model.n_tables; f++) {
        rt_len_spec tmp;
        const rt_len_spec *l = length_spec(s, &s->model.tables[f], &tmp);
        /* A lognormal mean is a sampled estimate: tables mostly share one spec, compute it once. */
        if (!last || l->kind != last->kind || l->mean != last->mean || l->sigma != last->sigma ||
            l->min != last->min || l->max != last->max || l->n_bins || last->n_bins)
            mean = rt_len_mean(l);
        last = l == &tmp ? NULL : l;
        per_rank += (double)s->workload.batch_per_rank * (4 + 8 * mean);
    }
    return per_rank * n_reps;
}

/* Refuses a draw that would not fit in half of this machine's memory, before allocating it:
 * running into the out-of-memory killer takes minutes and says nothing. */
static int fits_in_memory(const rt_scenario *s, int n_reps, int exact, FILE *err)
{
    long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    if (pages <= 0 || page <= 0) return 1; /* unknown: let the allocations tell */
    double have = (double)pages * (double)page, need = sample_bytes(s, n_reps);
    if (need <= have / 2) return 1;
    fprintf(err,
            "workload: sampling %d ranks (%s mode) of %d samples needs about %.3g GiB of IDs, "
            "more than half of this machine's %.3g GiB; allowed: workload.mode: statistical%s, a "
            "smaller workload.batch_per_rank, or fewer ranks\n",
            n_reps, exact ? "exact" : "statistical", s->workload.batch_per_rank,
            need / 1073741824.0, have / 1073741824.0,
            exact ? " (or a lower workload.exact_max_ranks)" : " with fewer workload.reps");
    return 0;
}

rt_workload *rt_workload_sample(const rt_scenario *s, FILE *err)
{
    int world = rt_scenario_ranks(s);
    const rt_workload_cfg *wc = &s->workload;
    int exact =
        wc->mode == RT_MODE_EXACT || (wc->mode == RT_MODE_AUTO && world <= wc->exact_max_ranks);
    if (!fits_in_memory(s, exact ? world : (wc->reps < world ? wc->reps : world), exact, err))
        return NULL;
    rt_workload *w = calloc(1, sizeof *w);
    if (!w) return NULL;
    w->world = world;
    w->exact = exact;
    w->n_reps = exact ? world : (wc->reps < world ? wc->reps : world);
    w->n_features = s->model.n_tables;
    w->batch = wc->batch_per_rank;
    w->rep_rank = malloc(sizeof(int) * (size_t)w->n_reps);
    w->rep_weight = malloc(sizeof(double) * (size_t)w->n_reps);
    w->batches = calloc((size_t)w->n_reps * (size_t)w->n_features, sizeof(rt_feature_batch));
    gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
    if (!w->rep_rank || !w->rep_weight || !w->batches || !rng) goto oom;
    for (int r = 0; r < w->n_reps; r++) {
        /* Spread representatives over the machine so they sit on different nodes. */
        w->rep_rank[r] = exact ? r : (int)((long)r * world / w->n_reps);
        w->rep_weight[r] = (double)world / w->n_reps;
        for (int f = 0; f < w->n_features; f++)
            if (sample_feature(s, s->workload.seed, w->rep_rank[r], f, rng,
                               shared_lengths(s, &w->batches[(long)r * w->n_features], f),
                               &w->batches[(long)r * w->n_features + f]))
                goto oom;
    }
    gsl_rng_free(rng);
    return w;
oom:
    fprintf(err, "workload: out of memory sampling %d ranks x %d features x %d samples\n",
            w->n_reps, w->n_features, w->batch);
    if (rng) gsl_rng_free(rng);
    rt_workload_free(w);
    return NULL;
}

int rt_workload_sample_rank(const rt_scenario *s, uint64_t seed, int rank, rt_feature_batch *out,
                            FILE *err)
{
    gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
    int f = 0;
    memset(out, 0, sizeof *out * (size_t)s->model.n_tables);
    if (rng)
        for (; f < s->model.n_tables; f++)
            if (sample_feature(s, seed, rank, f, rng, shared_lengths(s, out, f), &out[f])) break;
    if (rng) gsl_rng_free(rng);
    if (rng && f == s->model.n_tables) return 0;
    fprintf(err, "workload: out of memory sampling rank %d\n", rank);
    rt_feature_batches_free(out, s->model.n_tables);
    return -1;
}

void rt_feature_batches_free(rt_feature_batch *b, int n)
{
    for (int f = 0; b && f < n; f++) {
        free(b[f].lengths), free(b[f].ids);
        b[f].lengths = NULL, b[f].ids = NULL;
    }
}

void rt_workload_free(rt_workload *w)
{
    if (!w) return;
    if (w->batches)
        for (long i = 0; i < (long)w->n_reps * w->n_features; i++) {
            free(w->batches[i].lengths);
            free(w->batches[i].ids);
        }
    free(w->batches);
    free(w->rep_rank);
    free(w->rep_weight);
    free(w);
}
