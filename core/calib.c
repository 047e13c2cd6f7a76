/* The `calibration:` section of a topology file (layout in topologies/README.md). */
#include "calib.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <libfyaml.h>

#include "cfg.h"

const char *const rt_calib_kernel_names[] = {"gather_pool",
                                             "sparse_sgd",
                                             "sparse_adagrad",
                                             "sparse_rowwise_adagrad",
                                             "sparse_adam",
                                             "unique",
                                             "sort",
                                             "elementwise",
                                             "permute",
                                             "norm",
                                             "softmax",
                                             "dense_adam",
                                             "silu",
                                             "silu_bwd",
                                             "attention",
                                             "attention_bwd",
                                             "interaction",
                                             "interaction_bwd",
                                             "sampled_softmax",
                                             NULL};
const char *const rt_calib_coll_names[] = {"alltoall",       "allreduce", "allgather",
                                           "reduce_scatter", "sendrecv",  NULL};

static const char *const top_keys[] = {"date",      "host",    "device", "backends",
                                       "libraries", "command", "runs",   NULL};
static const char *const run_keys[] = {"ranks",    "cpu_bind",           "core_slice",
                                       "dispatch", "host_per_iteration", "gemm",
                                       "kernels",  "collectives",        NULL};
static const char *const gemm_keys[] = {"dtype", "m", "n", "k", "flops", NULL};
static const char *const kernel_keys[] = {"kernel", "dim",   "pooling", "bytes",
                                          "bw",     "flops", "rate",    NULL};
static const char *const coll_keys[] = {"op", "ranks", "bytes", "seconds", NULL};

_Static_assert(sizeof rt_calib_kernel_names / sizeof *rt_calib_kernel_names == RT_CK_COUNT + 1,
               "one name per kernel family");
_Static_assert(sizeof rt_calib_coll_names / sizeof *rt_calib_coll_names == RT_CC_COUNT + 1,
               "one name per collective");

int rt_calib_kernel_is_rate(rt_calib_kernel k)
{
    return k == RT_CK_ATTENTION || k == RT_CK_ATTENTION_BWD || k == RT_CK_INTERACTION ||
           k == RT_CK_INTERACTION_BWD || k == RT_CK_SAMPLED_SOFTMAX;
}

/* Reads curve XK -> YK of MAP into C: equal lengths, x strictly increasing, all finite > 0. */
static int parse_curve(rt_cfg *cfg, struct fy_node *map, const char *xk, const char *yk,
                       rt_curve *c)
{
    int nx = 0, ny = 0;
    if (rt_cfg_get_double_list(cfg, map, xk, 1, 1e-300, 1e300, &c->x, &nx) < 0 ||
        rt_cfg_get_double_list(cfg, map, yk, 1, 1e-300, 1e300, &c->y, &ny) < 0)
        return -1;
    c->n = nx;
    struct fy_node *xs = fy_node_mapping_lookup_by_string(map, xk, FY_NT);
    if (nx < 1) {
        rt_cfg_error(cfg, xs, "an empty curve; allowed: at least one point");
        return -1;
    }
    if (nx != ny) {
        rt_cfg_error(cfg, fy_node_mapping_lookup_by_string(map, yk, FY_NT),
                     "%d values for %d points of '%s'; allowed: one value per point", ny, nx, xk);
        return -1;
    }
    for (int i = 1; i < nx; i++)
        if (!(c->x[i] > c->x[i - 1])) {
            rt_cfg_error(cfg, fy_node_sequence_get_by_index(xs, i),
                         "point %d (%g) is not above point %d (%g); allowed: strictly increasing "
                         "sizes",
                         i, c->x[i], i - 1, c->x[i - 1]);
            return -1;
        }
    if (rt_curve_prepare(c)) {
        rt_cfg_error(cfg, xs, "out of memory");
        return -1;
    }
    return 0;
}

static int parse_axis(rt_cfg *cfg, struct fy_node *map, const char *key, double **v, int *n)
{
    if (rt_cfg_get_double_list(cfg, map, key, 1, 1, 1e12, v, n) < 0) return -1;
    struct fy_node *at = fy_node_mapping_lookup_by_string(map, key, FY_NT);
    if (*n < 1) {
        rt_cfg_error(cfg, at, "an empty axis; allowed: at least one size");
        return -1;
    }
    for (int i = 1; i < *n; i++)
        if (!((*v)[i] > (*v)[i - 1])) {
            rt_cfg_error(cfg, fy_node_sequence_get_by_index(at, i),
                         "size %g is not above %g; allowed: strictly increasing sizes", (*v)[i],
                         (*v)[i - 1]);
            return -1;
        }
    return 0;
}

static int parse_gemm(rt_cfg *cfg, struct fy_node *map, rt_gemm_table *g)
{
    int dt = RT_DT_FP32, nr = 0;
    if (rt_cfg_check_keys(cfg, map, gemm_keys) ||
        rt_cfg_get_enum(cfg, map, "dtype", 1, rt_dtype_names, &dt) < 0 ||
        parse_axis(cfg, map, "m", &g->m, &g->nm) || parse_axis(cfg, map, "n", &g->n, &g->nn) ||
        parse_axis(cfg, map, "k", &g->k, &g->nk) ||
        rt_cfg_get_double_list(cfg, map, "flops", 1, 1, 1e20, &g->rate, &nr) < 0)
        return -1;
    g->dtype = (rt_dtype)dt;
    long want = (long)g->nm * g->nn * g->nk;
    if (nr != want) {
        rt_cfg_error(cfg, fy_node_mapping_lookup_by_string(map, "flops", FY_NT),
                     "%d rates for a %d x %d x %d grid; allowed: m x n x k = %ld values, k "
                     "fastest",
                     nr, g->nm, g->nn, g->nk, want);
        return -1;
    }
    if (rt_gemm_table_prepare(g)) {
        rt_cfg_error(cfg, map, "out of memory");
        return -1;
    }
    return 0;
}

static int parse_kernel(rt_cfg *cfg, struct fy_node *map, rt_kernel_curve *k)
{
    int kind = 0;
    int64_t dim = 0, pooling = 0;
    if (rt_cfg_check_keys(cfg, map, kernel_keys) ||
        rt_cfg_get_enum(cfg, map, "kernel", 1, rt_calib_kernel_names, &kind) < 0 ||
        rt_cfg_get_int(cfg, map, "dim", 0, 1, 1 << 20, &dim) < 0 ||
        rt_cfg_get_int(cfg, map, "pooling", 0, 1, 1 << 20, &pooling) < 0)
        return -1;
    k->kernel = (rt_calib_kernel)kind;
    k->dim = (int)dim;
    k->pooling = (int)pooling;
    int rate = rt_calib_kernel_is_rate(k->kernel);
    const char *wrong = rate ? "bytes" : "flops";
    if (fy_node_mapping_lookup_by_string(map, wrong, FY_NT) ||
        fy_node_mapping_lookup_by_string(map, rate ? "bw" : "rate", FY_NT)) {
        rt_cfg_error(cfg, map, "kernel %s is measured %s; allowed: %s", rt_calib_kernel_names[kind],
                     rate ? "in FLOP/s" : "in bytes/s",
                     rate ? "'flops' and 'rate'" : "'bytes' and 'bw'");
        return -1;
    }
    return parse_curve(cfg, map, rate ? "flops" : "bytes", rate ? "rate" : "bw", &k->c);
}

static int parse_coll(rt_cfg *cfg, struct fy_node *map, rt_coll_curve *c)
{
    int op = 0;
    int64_t ranks = 0;
    if (rt_cfg_check_keys(cfg, map, coll_keys) ||
        rt_cfg_get_enum(cfg, map, "op", 1, rt_calib_coll_names, &op) < 0 ||
        rt_cfg_get_int(cfg, map, "ranks", 1, 1, 1 << 20, &ranks) < 0)
        return -1;
    c->op = (rt_calib_coll)op;
    c->ranks = (int)ranks;
    return parse_curve(cfg, map, "bytes", "seconds", &c->c);
}

/* Allocates *OUT for the items of sequence KEY of MAP (absent: zero items). */
static struct fy_node *items(rt_cfg *cfg, struct fy_node *map, const char *key, size_t size,
                             void **out, int *n, int *ok)
{
    struct fy_node *seq = rt_cfg_get_seq(cfg, map, key, 0, ok);
    *n = seq ? fy_node_sequence_item_count(seq) : 0;
    *out = calloc((size_t)(*n > 0 ? *n : 1), size);
    if (!*out) *ok = 0;
    return seq;
}

/* The item I of SEQ as a mapping, or NULL after a located error. */
static struct fy_node *item_map(rt_cfg *cfg, struct fy_node *seq, int i)
{
    struct fy_node *it = fy_node_sequence_get_by_index(seq, i);
    if (it && fy_node_is_mapping(it)) return it;
    rt_cfg_error(cfg, it ? it : seq,
                 "item %d is not a mapping; allowed: a mapping of the keys above", i);
    return NULL;
}

static int parse_run(rt_cfg *cfg, struct fy_node *map, rt_calib_run *r)
{
    int64_t ranks = 0;
    int ok = 1;
    if (rt_cfg_check_keys(cfg, map, run_keys) ||
        rt_cfg_get_int(cfg, map, "ranks", 1, 1, 1 << 20, &ranks) < 0 ||
        rt_cfg_get_str(cfg, map, "cpu_bind", 0, &r->cpu_bind) < 0 ||
        rt_cfg_get_unit(cfg, map, "core_slice", 0, RT_UNIT_TIME, 0, 1, &r->core_slice) < 0 ||
        rt_cfg_get_unit(cfg, map, "dispatch", 0, RT_UNIT_TIME, 0, 1, &r->dispatch_s) < 0 ||
        rt_cfg_get_unit(cfg, map, "host_per_iteration", 0, RT_UNIT_TIME, 0, 10,
                        &r->host_per_iteration_s) < 0)
        return -1;
    r->ranks = (int)ranks;
    struct fy_node *seq =
        items(cfg, map, "gemm", sizeof *r->gemm, (void **)&r->gemm, &r->n_gemm, &ok);
    if (!ok) return -1;
    for (int i = 0; i < r->n_gemm; i++) {
        struct fy_node *it = item_map(cfg, seq, i);
        if (!it || parse_gemm(cfg, it, &r->gemm[i])) return -1;
        for (int j = 0; j < i; j++)
            if (r->gemm[j].dtype == r->gemm[i].dtype) {
                rt_cfg_error(cfg, it, "a second GEMM table for dtype %s; allowed: one per dtype",
                             rt_dtype_names[r->gemm[i].dtype]);
                return -1;
            }
    }
    seq = items(cfg, map, "kernels", sizeof *r->kernels, (void **)&r->kernels, &r->n_kernels, &ok);
    if (!ok) return -1;
    for (int i = 0; i < r->n_kernels; i++) {
        struct fy_node *it = item_map(cfg, seq, i);
        if (!it || parse_kernel(cfg, it, &r->kernels[i])) return -1;
    }
    seq = items(cfg, map, "collectives", sizeof *r->colls, (void **)&r->colls, &r->n_colls, &ok);
    if (!ok) return -1;
    for (int i = 0; i < r->n_colls; i++) {
        struct fy_node *it = item_map(cfg, seq, i);
        if (!it || parse_coll(cfg, it, &r->colls[i])) return -1;
        for (int j = 0; j < i; j++)
            if (r->colls[j].op == r->colls[i].op && r->colls[j].ranks == r->colls[i].ranks) {
                rt_cfg_error(cfg, it, "a second %s curve for %d ranks; allowed: one per group size",
                             rt_calib_coll_names[r->colls[i].op], r->colls[i].ranks);
                return -1;
            }
    }
    return 0;
}

static void run_free(rt_calib_run *r)
{
    for (int i = 0; r->gemm && i < r->n_gemm; i++)
        rt_gemm_table_free(&r->gemm[i]);
    for (int i = 0; r->kernels && i < r->n_kernels; i++)
        rt_curve_free(&r->kernels[i].c);
    for (int i = 0; r->colls && i < r->n_colls; i++)
        rt_curve_free(&r->colls[i].c);
    free(r->cpu_bind), free(r->gemm), free(r->kernels), free(r->colls);
}

void rt_calib_free(rt_calib *c)
{
    if (!c) return;
    for (int i = 0; c->runs && i < c->n_runs; i++)
        run_free(&c->runs[i]);
    free(c->runs);
    free(c->date), free(c->host), free(c->device), free(c->backends), free(c->libraries);
    free(c->command);
    free(c);
}

static int by_ranks(const void *a, const void *b)
{
    const rt_calib_run *x = a, *y = b;
    return (x->ranks > y->ranks) - (x->ranks < y->ranks);
}

rt_calib *rt_calib_parse(rt_cfg *cfg, struct fy_node *map)
{
    rt_calib *c = calloc(1, sizeof *c);
    if (!c) return NULL;
    int ok = 1;
    if (rt_cfg_check_keys(cfg, map, top_keys) ||
        rt_cfg_get_str(cfg, map, "date", 1, &c->date) < 0 ||
        rt_cfg_get_str(cfg, map, "host", 1, &c->host) < 0 ||
        rt_cfg_get_str(cfg, map, "device", 1, &c->device) < 0 ||
        rt_cfg_get_str(cfg, map, "backends", 0, &c->backends) < 0 ||
        rt_cfg_get_str(cfg, map, "libraries", 0, &c->libraries) < 0 ||
        rt_cfg_get_str(cfg, map, "command", 0, &c->command) < 0)
        goto fail;
    struct fy_node *seq = rt_cfg_get_seq(cfg, map, "runs", 1, &ok);
    if (!seq) goto fail;
    c->n_runs = fy_node_sequence_item_count(seq);
    if (c->n_runs < 1) {
        rt_cfg_error(cfg, seq, "no runs; allowed: at least one measured run");
        goto fail;
    }
    c->runs = calloc((size_t)c->n_runs, sizeof *c->runs);
    if (!c->runs) goto fail;
    for (int i = 0; i < c->n_runs; i++) {
        struct fy_node *it = item_map(cfg, seq, i);
        if (!it || parse_run(cfg, it, &c->runs[i])) goto fail;
        for (int j = 0; j < i; j++)
            if (c->runs[j].ranks == c->runs[i].ranks) {
                rt_cfg_error(cfg, it, "a second run of %d ranks; allowed: one run per rank count",
                             c->runs[i].ranks);
                goto fail;
            }
    }
    qsort(c->runs, (size_t)c->n_runs, sizeof *c->runs, by_ranks);
    return c;
fail:
    rt_calib_free(c);
    return NULL;
}

const rt_calib_run *rt_calib_run_for(const rt_calib *c, int world)
{
    if (!c || c->n_runs < 1) return NULL;
    const rt_calib_run *best = &c->runs[0];
    for (int i = 0; i < c->n_runs; i++)
        if (c->runs[i].ranks <= world) best = &c->runs[i];
    return best;
}
