#include "partitioner.h"

#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_eigen.h>
#include <gsl/gsl_multimin.h>
#include <gsl/gsl_rng.h>

#include "workload.h"

const char *const rt_part_strategy_names[] = {"coherent", "diverse", NULL};

int rt_partition_bounds(int n, int k, double factor, int *lo, int *hi)
{
    if (k < 1 || n < k || factor < 1) return -1;
    *lo = n / k;
    *hi = (n + k - 1) / k;
    if (*hi > factor * *lo + 1e-9) return -1;
    int wide = (int)floor(factor * *lo + 1e-9);
    if (wide > *hi) *hi = wide;
    return 0;
}

/* ---- step 3: embedding ---------------------------------------------------------------- */

typedef struct {
    const double *d;
    int n, dims;
} stress_problem;

static double pair_dist(const double *x, int dims, int i, int j)
{
    double s = 1e-18; /* keeps the gradient finite when two points coincide */
    for (int k = 0; k < dims; k++)
        s += (x[i * dims + k] - x[j * dims + k]) * (x[i * dims + k] - x[j * dims + k]);
    return sqrt(s);
}

static void stress_fdf(const gsl_vector *v, void *params, double *f, gsl_vector *grad)
{
    const stress_problem *p = params;
    const double *x = v->data; /* gsl_vector_alloc gives stride 1 */
    double s = 0;
    if (grad) gsl_vector_set_zero(grad);
    for (int i = 0; i < p->n; i++)
        for (int j = i + 1; j < p->n; j++) {
            double r = pair_dist(x, p->dims, i, j), e = r - p->d[i * p->n + j];
            s += e * e;
            if (!grad) continue;
            for (int k = 0; k < p->dims; k++) {
                double g = 2 * e * (x[i * p->dims + k] - x[j * p->dims + k]) / r;
                grad->data[i * p->dims + k] += g;
                grad->data[j * p->dims + k] -= g;
            }
        }
    if (f) *f = s;
}

static double stress_f(const gsl_vector *v, void *params)
{
    double f;
    stress_fdf(v, params, &f, NULL);
    return f;
}

static void stress_df(const gsl_vector *v, void *params, gsl_vector *g)
{
    stress_fdf(v, params, NULL, g);
}

/* Classical MDS: coordinates from the top eigenvectors of B = -1/2 J D^2 J. */
static int classical_mds(const double *d, int n, int dims, double *x)
{
    gsl_matrix *b = gsl_matrix_alloc((size_t)n, (size_t)n);
    gsl_matrix *vec = gsl_matrix_alloc((size_t)n, (size_t)n);
    gsl_vector *val = gsl_vector_alloc((size_t)n);
    gsl_eigen_symmv_workspace *ws = gsl_eigen_symmv_alloc((size_t)n);
    double *row = calloc((size_t)n, sizeof *row);
    int rc = -1;
    if (!b || !vec || !val || !ws || !row) goto out;
    double all = 0;
    for (int i = 0; i < n; i++) {
        for (int j = 0; j < n; j++)
            row[i] += d[i * n + j] * d[i * n + j] / n;
        all += row[i] / n;
    }
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++)
            gsl_matrix_set(b, (size_t)i, (size_t)j,
                           -0.5 * (d[i * n + j] * d[i * n + j] - row[i] - row[j] + all));
    gsl_eigen_symmv(b, val, vec, ws);
    gsl_eigen_symmv_sort(val, vec, GSL_EIGEN_SORT_VAL_DESC);
    for (int i = 0; i < n; i++)
        for (int k = 0; k < dims; k++) {
            double l = k < n ? gsl_vector_get(val, (size_t)k) : 0;
            x[i * dims + k] = l > 0 ? gsl_matrix_get(vec, (size_t)i, (size_t)k) * sqrt(l) : 0;
        }
    rc = 0;
out:
    gsl_matrix_free(b), gsl_matrix_free(vec), gsl_vector_free(val);
    if (ws) gsl_eigen_symmv_free(ws);
    free(row);
    return rc;
}

double rt_partition_embed(const double *d, int n, int dims, double *x, FILE *err)
{
    if (n < 1 || dims < 1) return -1;
    if (classical_mds(d, n, dims, x)) {
        fprintf(err, "partitioner: out of memory embedding %d features\n", n);
        return -1;
    }
    size_t nv = (size_t)n * (size_t)dims;
    stress_problem p = {d, n, dims};
    gsl_multimin_function_fdf fn = {stress_f, stress_df, stress_fdf, nv, &p};
    gsl_vector *v = gsl_vector_alloc(nv);
    gsl_multimin_fdfminimizer *m =
        gsl_multimin_fdfminimizer_alloc(gsl_multimin_fdfminimizer_vector_bfgs2, nv);
    if (!v || !m) {
        gsl_vector_free(v);
        if (m) gsl_multimin_fdfminimizer_free(m);
        fprintf(err, "partitioner: out of memory embedding %d features\n", n);
        return -1;
    }
    memcpy(v->data, x, nv * sizeof(double));
    gsl_multimin_fdfminimizer_set(m, &fn, v, 0.01, 0.1);
    for (int it = 0; it < 500; it++) {
        if (gsl_multimin_fdfminimizer_iterate(m)) break; /* no further progress */
        if (gsl_multimin_test_gradient(m->gradient, 1e-7) == GSL_SUCCESS) break;
    }
    /* The minimizer's best point never has a higher stress than the MDS start. */
    memcpy(x, m->x->data, nv * sizeof(double));
    double s = m->f;
    gsl_multimin_fdfminimizer_free(m);
    gsl_vector_free(v);
    return s;
}

/* ---- step 4: balanced constrained k-means --------------------------------------------- */

typedef struct {
    double d;
    int i, c;
} pair;

static int by_distance(const void *a, const void *b)
{
    const pair *x = a, *y = b;
    if (x->d != y->d) return x->d < y->d ? -1 : 1;
    return x->i != y->i ? x->i - y->i : x->c - y->c;
}

static double sq(const double *a, const double *b, int dims)
{
    double s = 0;
    for (int k = 0; k < dims; k++)
        s += (a[k] - b[k]) * (a[k] - b[k]);
    return s;
}

/* Nearest-first assignment under capacity HI, then moves the cheapest points into groups
 * below LO from groups above it. */
static void assign_bounded(const double *x, int n, int dims, const double *cent, int k, int lo,
                           int hi, pair *pairs, int *size, int *group)
{
    for (int i = 0; i < n; i++)
        for (int c = 0; c < k; c++)
            pairs[i * k + c] = (pair){sq(x + i * dims, cent + c * dims, dims), i, c};
    qsort(pairs, (size_t)n * (size_t)k, sizeof *pairs, by_distance);
    memset(size, 0, sizeof(int) * (size_t)k);
    for (int i = 0; i < n; i++)
        group[i] = -1;
    for (long p = 0; p < (long)n * k; p++)
        if (group[pairs[p].i] < 0 && size[pairs[p].c] < hi) {
            group[pairs[p].i] = pairs[p].c;
            size[pairs[p].c]++;
        }
    for (int c = 0; c < k; c++)
        while (size[c] < lo) {
            int best = -1;
            double cost = INFINITY;
            for (int i = 0; i < n; i++) {
                if (size[group[i]] <= lo) continue;
                double dc = sq(x + i * dims, cent + c * dims, dims) -
                            sq(x + i * dims, cent + group[i] * dims, dims);
                if (dc < cost) cost = dc, best = i;
            }
            size[group[best]]--; /* a donor exists: k x lo <= n */
            group[best] = c;
            size[c]++;
        }
}

static double update_centres(const double *x, int n, int dims, const int *group, int k,
                             double *cent)
{
    memset(cent, 0, sizeof(double) * (size_t)k * (size_t)dims);
    int *cnt = calloc((size_t)k, sizeof *cnt);
    if (!cnt) return -1;
    for (int i = 0; i < n; i++) {
        cnt[group[i]]++;
        for (int q = 0; q < dims; q++)
            cent[group[i] * dims + q] += x[i * dims + q];
    }
    for (int c = 0; c < k; c++)
        for (int q = 0; q < dims; q++)
            cent[c * dims + q] /= cnt[c] ? cnt[c] : 1;
    free(cnt);
    double s = 0;
    for (int i = 0; i < n; i++)
        s += sq(x + i * dims, cent + group[i] * dims, dims);
    return s;
}

/* k-means++ seeding: each next centre drawn with probability proportional to the squared
 * distance to the nearest chosen one. */
static void seed_centres(const double *x, int n, int dims, int k, gsl_rng *rng, double *near,
                         double *cent)
{
    int first = (int)gsl_rng_uniform_int(rng, (unsigned long)n);
    memcpy(cent, x + first * dims, sizeof(double) * (size_t)dims);
    for (int i = 0; i < n; i++)
        near[i] = sq(x + i * dims, cent, dims);
    for (int c = 1; c < k; c++) {
        double tot = 0;
        for (int i = 0; i < n; i++)
            tot += near[i];
        double u = gsl_rng_uniform(rng) * tot;
        int pick = n - 1;
        for (int i = 0; i < n && tot > 0; i++) {
            if (u < near[i]) {
                pick = i;
                break;
            }
            u -= near[i];
        }
        if (tot <= 0) pick = (int)gsl_rng_uniform_int(rng, (unsigned long)n);
        memcpy(cent + c * dims, x + pick * dims, sizeof(double) * (size_t)dims);
        for (int i = 0; i < n; i++) {
            double dd = sq(x + i * dims, cent + c * dims, dims);
            if (dd < near[i]) near[i] = dd;
        }
    }
}

double rt_partition_kmeans(const double *x, int n, int dims, int k, int lo, int hi, uint64_t seed,
                           int restarts, int *group)
{
    if (k < 1 || lo < 1 || (long)k * lo > n || (long)k * hi < n) return -1;
    double best = -1;
    pair *pairs = malloc(sizeof *pairs * (size_t)n * (size_t)k);
    double *cent = malloc(sizeof(double) * (size_t)k * (size_t)dims);
    double *near = malloc(sizeof(double) * (size_t)n);
    int *g = malloc(sizeof(int) * (size_t)n), *prev = malloc(sizeof(int) * (size_t)n);
    int *size = malloc(sizeof(int) * (size_t)k);
    gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
    if (!pairs || !cent || !near || !g || !prev || !size || !rng) goto out;
    gsl_rng_set(rng, (unsigned long)seed);
    for (int r = 0; r < (restarts > 0 ? restarts : 16); r++) {
        seed_centres(x, n, dims, k, rng, near, cent);
        double s = -1;
        for (int it = 0; it < 100; it++) {
            assign_bounded(x, n, dims, cent, k, lo, hi, pairs, size, g);
            s = update_centres(x, n, dims, g, k, cent);
            if (s < 0) goto out;
            if (it && !memcmp(g, prev, sizeof(int) * (size_t)n)) break;
            memcpy(prev, g, sizeof(int) * (size_t)n);
        }
        if (best < 0 || s < best - 1e-12) {
            best = s;
            memcpy(group, g, sizeof(int) * (size_t)n);
        }
    }
out:
    free(pairs), free(cent), free(near), free(g), free(prev), free(size);
    if (rng) gsl_rng_free(rng);
    return best;
}

int rt_partition(const double *a, int n, const rt_partition_opts *o, int *group, FILE *err)
{
    int lo, hi, dims = o->dims > 0 ? o->dims : 2;
    if (rt_partition_bounds(n, o->groups, o->max_min_factor, &lo, &hi)) {
        fprintf(err,
                "partitioner: %d features cannot form %d groups with max/min size factor %g "
                "(need at least %d features, and a factor >= %d/%d)\n",
                n, o->groups, o->max_min_factor, o->groups, (n + o->groups - 1) / o->groups,
                o->groups > 0 && n >= o->groups ? n / o->groups : 1);
        return -1;
    }
    double *d = malloc(sizeof(double) * (size_t)n * (size_t)n);
    double *x = malloc(sizeof(double) * (size_t)n * (size_t)dims);
    int rc = -1;
    if (!d || !x) {
        fprintf(err, "partitioner: out of memory for %d features\n", n);
        goto out;
    }
    for (int i = 0; i < n * n; i++) {
        double v = fabs(a[i]) > 1 ? 1 : fabs(a[i]);
        d[i] = o->strategy == RT_PART_DIVERSE ? v : 1 - v;
    }
    for (int i = 0; i < n; i++)
        d[i * n + i] = 0;
    if (rt_partition_embed(d, n, dims, x, err) < 0) goto out;
    if (rt_partition_kmeans(x, n, dims, o->groups, lo, hi, o->seed, o->restarts, group) < 0) {
        fprintf(err, "partitioner: out of memory in k-means\n");
        goto out;
    }
    rc = 0;
out:
    free(d);
    free(x);
    return rc;
}

/* ---- affinity and files ----------------------------------------------------------------- */

enum { N_STATS = 5 };

void rt_partition_model_affinity(const rt_model *m, const rt_len_spec *pooling,
                                 const rt_id_spec *ids, double *a)
{
    int n = m->n_tables;
    double *v = calloc((size_t)n * N_STATS + 1, sizeof *v);
    if (!v) {
        for (int i = 0; i < n * n; i++)
            a[i] = i % (n + 1) == 0; /* identity: no information */
        return;
    }
    for (int f = 0; f < n; f++) {
        const rt_table *t = &m->tables[f];
        const rt_id_spec *id = ids && !t->sequence ? ids : &t->ids;
        double len =
            t->sequence ? m->seq_len : rt_len_mean(pooling && !t->sequence ? pooling : &t->pooling);
        double *s = v + f * N_STATS;
        s[0] = log10((double)(t->rows ? t->rows : 1));
        s[1] = t->dim;
        s[2] = log2(len > 1 ? len : 1) + 1;
        s[3] = id->kind == RT_DIST_ZIPF ? id->alpha : 0;
        s[4] = t->sequence;
    }
    /* Scaled, not centred: centring leaves one coordinate on models whose tables differ only
     * in size, and the cosine of scalars is +-1. */
    for (int k = 0; k < N_STATS; k++) {
        double top = 0;
        for (int f = 0; f < n; f++)
            top = fmax(top, fabs(v[f * N_STATS + k]));
        for (int f = 0; f < n; f++)
            v[f * N_STATS + k] = top > 0 ? v[f * N_STATS + k] / top : 0;
    }
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) {
            double dot = 0, ni = 0, nj = 0;
            for (int k = 0; k < N_STATS; k++) {
                dot += v[i * N_STATS + k] * v[j * N_STATS + k];
                ni += v[i * N_STATS + k] * v[i * N_STATS + k];
                nj += v[j * N_STATS + k] * v[j * N_STATS + k];
            }
            a[i * n + j] = i == j ? 1 : (ni > 0 && nj > 0 ? fabs(dot) / sqrt(ni * nj) : 0);
        }
    free(v);
}

/* Splits LINE at commas and blanks into at most MAX tokens. */
static int split(char *line, char **tok, int max)
{
    int n = 0;
    char *save = NULL;
    for (char *p = strtok_r(line, ", \t\r\n", &save); p && n < max;
         p = strtok_r(NULL, ", \t\r\n", &save))
        tok[n++] = p;
    return n;
}

static int is_blank_or_comment(const char *s)
{
    while (isspace((unsigned char)*s))
        s++;
    return !*s || *s == '#';
}

int rt_partition_read_csv(const char *path, double **a, int *n, FILE *err)
{
    enum { MAX = 4096 };
    FILE *f = fopen(path, "r");
    if (!f) {
        fprintf(err, "%s: cannot open affinity matrix\n", path);
        return -1;
    }
    char *line = NULL, **tok = malloc(sizeof(char *) * MAX);
    size_t cap = 0;
    int rows = 0, cols = -1, lineno = 0, rc = -1;
    double *m = NULL;
    while (tok && getline(&line, &cap, f) > 0) {
        lineno++;
        if (is_blank_or_comment(line)) continue;
        int k = split(line, tok, MAX);
        char *end;
        double first = strtod(tok[0], &end);
        (void)first;
        if (*end && rows == 0 && cols < 0) { /* a header of feature names */
            cols = k;
            continue;
        }
        if (cols < 0 || (rows == 0 && !m)) cols = k;
        if (k != cols) {
            fprintf(err, "%s:%d: %d values; every row needs %d\n", path, lineno, k, cols);
            goto out;
        }
        if (!m && !(m = malloc(sizeof(double) * (size_t)cols * (size_t)cols))) goto out;
        if (rows >= cols) {
            fprintf(err, "%s:%d: more rows than the %d columns; the matrix must be square\n", path,
                    lineno, cols);
            goto out;
        }
        for (int j = 0; j < k; j++) {
            double v = strtod(tok[j], &end);
            if (*end || !isfinite(v) || v < -1 || v > 1) {
                fprintf(err, "%s:%d: value '%s' is not a number in [-1, 1]\n", path, lineno,
                        tok[j]);
                goto out;
            }
            m[rows * cols + j] = v;
        }
        rows++;
    }
    if (rows == 0 || rows != cols) {
        fprintf(err, "%s: %d rows of %d values; the affinity matrix must be square and non-empty\n",
                path, rows, cols);
        goto out;
    }
    for (int i = 0; i < rows; i++)
        for (int j = 0; j < i; j++)
            if (fabs(m[i * cols + j] - m[j * cols + i]) > 1e-9) {
                fprintf(err, "%s: not symmetric: entry (%d, %d) = %g but (%d, %d) = %g\n", path, i,
                        j, m[i * cols + j], j, i, m[j * cols + i]);
                goto out;
            }
    *a = m, *n = rows, m = NULL, rc = 0;
out:
    free(m), free(line), free(tok);
    fclose(f);
    return rc;
}

static int feature_index(const rt_model *m, const char *s)
{
    for (int f = 0; f < m->n_tables; f++)
        if (!strcmp(m->tables[f].name, s)) return f;
    char *end;
    long v = strtol(s, &end, 10);
    return !*end && *s && v >= 0 && v < m->n_tables ? (int)v : -1;
}

int rt_partition_read_assignment(const char *path, const rt_model *m, int n_towers, int *tower_of,
                                 FILE *err)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        fprintf(err, "%s: cannot open tower assignment\n", path);
        return -1;
    }
    for (int i = 0; i < m->n_tables; i++)
        tower_of[i] = -1;
    char *line = NULL, *tok[3];
    size_t cap = 0;
    int lineno = 0, rc = -1;
    while (getline(&line, &cap, f) > 0) {
        lineno++;
        if (is_blank_or_comment(line)) continue;
        int k = split(line, tok, 3);
        if (k == 2 && !strcmp(tok[0], "feature") && !strcmp(tok[1], "tower")) continue;
        char *end;
        long t = k == 2 ? strtol(tok[1], &end, 10) : -1;
        int fi = k == 2 ? feature_index(m, tok[0]) : -1;
        if (k != 2 || *end || t < 0 || t >= n_towers || fi < 0) {
            fprintf(err,
                    "%s:%d: expected 'feature,tower' with a table name (or index) of model %s "
                    "and a tower in 0..%d\n",
                    path, lineno, m->name, n_towers - 1);
            goto out;
        }
        if (tower_of[fi] >= 0) {
            fprintf(err, "%s:%d: table %s is assigned twice\n", path, lineno, m->tables[fi].name);
            goto out;
        }
        tower_of[fi] = (int)t;
    }
    for (int i = 0; i < m->n_tables; i++)
        if (tower_of[i] < 0) {
            fprintf(err, "%s: table %s has no tower\n", path, m->tables[i].name);
            goto out;
        }
    for (int t = 0; t < n_towers; t++) {
        int used = 0;
        for (int i = 0; i < m->n_tables; i++)
            used |= tower_of[i] == t;
        if (!used) {
            fprintf(err, "%s: tower %d has no feature\n", path, t);
            goto out;
        }
    }
    rc = 0;
out:
    free(line);
    fclose(f);
    return rc;
}
