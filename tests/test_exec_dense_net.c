/* rectwin-exec's dense net on the cpu device: analytic gradients against finite differences,
 * the global-mean scaling of data parallelism, training on planted data, deterministic
 * initialization, and refusal of what it cannot run; for the generative recommenders (HSTU,
 * FuXi, MTGR's HSTU + MMoE) over jagged sequences the same, plus the agreement of the FLOPs the
 * net runs with models/model_cost.c. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <math.h>

#include "cfg.h"
#include "dense_net.h"
#include "device.h"
#include "model.h"
#include "model_cost.h"

/* DLRM shape: bottom mlp, dot over the bottom output and three embeddings, top mlp. */
static const char *const dlrm_text =
    "name: tiny-dlrm\n"
    "source: unit test\n"
    "dense_features: 5\n"
    "loss: bce\n"
    "defaults: {dim: 4}\n"
    "tables:\n"
    "  - {name: a, rows: 50}\n"
    "  - {name: b, rows: 50}\n"
    "  - {name: c, rows: 50}\n"
    "layers:\n"
    "  - {type: mlp, name: bottom, input: [dense], sizes: [8, 4]}\n"
    "  - {type: dot, name: interaction, input: [bottom, "
    "embeddings]}\n"
    "  - {type: mlp, name: top, sizes: [8, 1]}\n";

/* DCN shape with unequal table widths (pieces at odd columns) and fan-out: the bottom
 * output and the embeddings feed both the cross network and the top mlp, so their gradients
 * are sums over two consumers. */
static const char *const dcn_text =
    "name: tiny-dcn\n"
    "source: unit test\n"
    "dense_features: 5\n"
    "loss: bce\n"
    "tables:\n"
    "  - {name: a, rows: 50, dim: 4}\n"
    "  - {name: b, rows: 50, dim: 6}\n"
    "  - {name: c, rows: 50, dim: 3}\n"
    "layers:\n"
    "  - {type: mlp, name: bottom, input: [dense], sizes: [6, 4]}\n"
    "  - {type: dcn, name: cross, input: [bottom, embeddings], num_layers: 2, rank: 3}\n"
    "  - {type: mlp, name: top, input: [cross, bottom, embeddings], sizes: [8, 1]}\n";

/* A cross network straight on the dense features: no input wants a gradient, and table a
 * feeds nothing, so its embedding gradient must come back zero. */
static const char *const dense_dcn_text =
    "name: dense-dcn\n"
    "source: unit test\n"
    "dense_features: 6\n"
    "tables: [{name: a, rows: 9, dim: 2}]\n"
    "layers:\n"
    "  - {type: dcn, name: cross, input: [dense], num_layers: 3, rank: 2}\n"
    "  - {type: mlp, name: top, sizes: [5, 1]}\n";

/* ---- model and device ------------------------------------------------------------------ */

static int load_file(const char *path, rt_model *m, char **msg)
{
    size_t len = 0;
    FILE *err = open_memstream(msg, &len);
    assert_non_null(err);
    rt_cfg *cfg = rt_cfg_load(path, err);
    assert_non_null(cfg);
    int rc = rt_model_parse(cfg, rt_cfg_root(cfg), m, 0);
    if (!rc) rc = rt_model_compute_costs(m, err);
    rt_cfg_free(cfg);
    fclose(err);
    return rc;
}

static void load_text(const char *text, rt_model *m)
{
    char path[] = "/tmp/rt_test_dnet_XXXXXX", *msg = NULL;
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
    close(fd);
    int rc = load_file(path, m, &msg);
    unlink(path);
    if (rc) fail_msg("model does not load: %s", msg);
    free(msg);
}

static void open_cpu(rt_xdev *d)
{
    memset(d, 0, sizeof *d);
    d->ops = rt_xdev_find("cpu");
    assert_non_null(d->ops);
    assert_int_equal(d->ops->open(d, 0, 4, RT_XMATH_FP32, stderr), 0);
}

static float *upload(rt_xdev *d, const float *h, int64_t n)
{
    float *p = d->ops->alloc(d, sizeof *p * (size_t)n);
    assert_non_null(p);
    assert_int_equal(d->ops->copy(d, p, h, sizeof *p * (size_t)n, RT_XCOPY_H2D), 0);
    return p;
}

static void download(rt_xdev *d, float *h, const float *p, int64_t n)
{
    assert_int_equal(d->ops->sync(d), 0);
    assert_int_equal(d->ops->copy(d, h, p, sizeof *h * (size_t)n, RT_XCOPY_D2H), 0);
}

/* ---- data ------------------------------------------------------------------------------ */

static double uniform(uint64_t *s, double a)
{
    *s += 0x9e3779b97f4a7c15ULL;
    return a * (2.0 * (double)(rt_kmix64(*s) >> 11) * 0x1.0p-53 - 1.0);
}

/* One batch on the host and the device: dense features, pooled embeddings, labels. */
typedef struct {
    int batch, nt;
    int64_t nfeat; /* dense + all embedding widths: the planted projection's input */
    float *h_dense, *h_labels, *h_emb[8];
    float *dense, *labels, *emb[8];
} data;

static void data_make(rt_xdev *d, const rt_model *m, int batch, uint64_t seed, int planted,
                      double scale, data *x)
{
    memset(x, 0, sizeof *x);
    x->batch = batch;
    x->nt = m->n_tables;
    assert_true(x->nt <= 8);
    uint64_t s = seed;
    x->h_dense = malloc(sizeof(float) * (size_t)(batch * m->dense_features));
    x->h_labels = malloc(sizeof(float) * (size_t)batch);
    assert_non_null(x->h_dense);
    assert_non_null(x->h_labels);
    for (int i = 0; i < batch * m->dense_features; i++)
        x->h_dense[i] = (float)uniform(&s, scale);
    x->nfeat = m->dense_features;
    for (int t = 0; t < x->nt; t++) {
        int dim = m->tables[t].dim;
        x->h_emb[t] = malloc(sizeof(float) * (size_t)(batch * dim));
        assert_non_null(x->h_emb[t]);
        for (int i = 0; i < batch * dim; i++)
            x->h_emb[t][i] = (float)uniform(&s, 0.5 * scale);
        x->nfeat += dim;
    }
    /* Planted: the label is the sign of a fixed random projection of all inputs. */
    double proj[256];
    assert_true(x->nfeat <= 256);
    for (int64_t k = 0; k < x->nfeat; k++)
        proj[k] = uniform(&s, 1.0);
    for (int b = 0; b < batch; b++) {
        double z = 0;
        int64_t k = 0;
        for (int j = 0; j < m->dense_features; j++)
            z += proj[k++] * x->h_dense[b * m->dense_features + j];
        for (int t = 0; t < x->nt; t++)
            for (int j = 0; j < m->tables[t].dim; j++)
                z += proj[k++] * x->h_emb[t][b * m->tables[t].dim + j];
        x->h_labels[b] = planted ? (z > 0) : (uniform(&s, 1.0) > 0);
    }
    x->dense = upload(d, x->h_dense, batch * m->dense_features);
    x->labels = upload(d, x->h_labels, batch);
    for (int t = 0; t < x->nt; t++)
        x->emb[t] = upload(d, x->h_emb[t], batch * (int64_t)m->tables[t].dim);
}

static void data_free(rt_xdev *d, data *x)
{
    d->ops->release(d, x->dense);
    d->ops->release(d, x->labels);
    free(x->h_dense);
    free(x->h_labels);
    for (int t = 0; t < x->nt; t++) {
        d->ops->release(d, x->emb[t]);
        free(x->h_emb[t]);
    }
}

/* Rows [first, first + batch) of X as a batch of a global batch of GLOBAL samples. */
static rt_dnet_batch batch_of(const rt_model *m, data *x, int first, int batch, double global)
{
    static float *emb[8];
    for (int t = 0; t < x->nt; t++)
        emb[t] = x->emb[t] + (int64_t)first * m->tables[t].dim;
    return (rt_dnet_batch){.batch = batch,
                           .global_batch = global,
                           .dense = x->dense + (int64_t)first * m->dense_features,
                           .emb = emb,
                           .labels = x->labels + first};
}

/* ---- iteration ------------------------------------------------------------------------- */

static rt_dnet *net_new(const rt_model *m, rt_xdev *d, int max_batch, uint64_t seed,
                        rt_dnet_opt opt)
{
    rt_dnet *n = rt_dnet_new(m, d, max_batch, 0, seed, opt, stderr);
    assert_non_null(n);
    return n;
}

static double forward_loss(rt_dnet *n, const rt_model *m)
{
    for (int l = 0; l < m->n_layers; l++)
        assert_int_equal(rt_dnet_forward(n, l, stderr), 0);
    assert_int_equal(rt_dnet_loss(n, stderr), 0);
    return rt_dnet_loss_value(n);
}

static double iterate(rt_dnet *n, const rt_model *m, const rt_dnet_batch *b)
{
    assert_int_equal(rt_dnet_set_batch(n, b, stderr), 0);
    double loss = forward_loss(n, m);
    for (int l = m->n_layers - 1; l >= 0; l--)
        assert_int_equal(rt_dnet_backward(n, l, stderr), 0);
    return loss;
}

static const rt_dnet_opt sgd = {RT_KOPT_SGD, 0.1f, 0, 0, 0, 0};

/* ---- (1) gradient check ---------------------------------------------------------------- */

/* Central differences in fp32. The loss comes back as an fp32 number (about 0.7, ulp 6e-8)
 * from an fp32 forward, so L(w+h) - L(w-h) is only known to a few ulps and the difference
 * quotient to about 4 ulp / 2h = 6e-5 at h = 2e-3 (that is the absolute floor), while its
 * truncation error is O(h^2) and h is small enough that no ReLU kink is crossed here.
 * Gradients well above the floor must then agree to 1 %. */
#define FD_H 2e-3
#define FD_REL 1e-2

static double fd_floor(double loss)
{
    return 4 * (nextafterf((float)loss, INFINITY) - (float)loss) / (2 * FD_H);
}

/* Returns whether the gradient was large enough against the floor to count as a real test. */
static int grad_close(double analytic, double fd, double floor, const char *what, int64_t i)
{
    double tol = FD_REL * fmax(fabs(analytic), fabs(fd)) + floor;
    if (!(fabs(analytic - fd) <= tol))
        fail_msg("%s %lld: analytic %.6g, finite difference %.6g", what, (long long)i, analytic,
                 fd);
    return fabs(fd) > 10 * floor;
}

static double fd_param(rt_dnet *n, const rt_model *m, rt_xdev *d, float *w, int64_t np, int64_t i)
{
    float *p = rt_dnet_params(n, NULL), keep = w[i];
    w[i] = keep + (float)FD_H;
    assert_int_equal(d->ops->copy(d, p, w, sizeof *w * (size_t)np, RT_XCOPY_H2D), 0);
    double up = forward_loss(n, m);
    w[i] = keep - (float)FD_H;
    assert_int_equal(d->ops->copy(d, p, w, sizeof *w * (size_t)np, RT_XCOPY_H2D), 0);
    double down = forward_loss(n, m);
    w[i] = keep;
    assert_int_equal(d->ops->copy(d, p, w, sizeof *w * (size_t)np, RT_XCOPY_H2D), 0);
    return (up - down) / (2 * FD_H);
}

static double fd_emb(rt_dnet *n, const rt_model *m, rt_xdev *d, data *x, int t, int64_t i)
{
    int64_t len = (int64_t)x->batch * m->tables[t].dim;
    float *h = x->h_emb[t], keep = h[i];
    h[i] = keep + (float)FD_H;
    assert_int_equal(d->ops->copy(d, x->emb[t], h, sizeof *h * (size_t)len, RT_XCOPY_H2D), 0);
    double up = forward_loss(n, m);
    h[i] = keep - (float)FD_H;
    assert_int_equal(d->ops->copy(d, x->emb[t], h, sizeof *h * (size_t)len, RT_XCOPY_H2D), 0);
    double down = forward_loss(n, m);
    h[i] = keep;
    assert_int_equal(d->ops->copy(d, x->emb[t], h, sizeof *h * (size_t)len, RT_XCOPY_H2D), 0);
    return (up - down) / (2 * FD_H);
}

static void grad_check(const char *text)
{
    rt_model m = {0};
    rt_xdev d;
    data x;
    load_text(text, &m);
    open_cpu(&d);
    const int B = 6;
    data_make(&d, &m, B, 7, 0, 2.0, &x);
    /* max_batch above the batch: the index maps are used through their prefixes. */
    rt_dnet *n = net_new(&m, &d, 8, 11, sgd);
    rt_dnet_batch b = batch_of(&m, &x, 0, B, B);
    double floor = fd_floor(iterate(n, &m, &b));

    int64_t np;
    rt_dnet_params(n, &np);
    float *g = malloc(sizeof *g * (size_t)np), *w = malloc(sizeof *w * (size_t)np);
    assert_non_null(g);
    assert_non_null(w);
    download(&d, g, rt_dnet_grads(n, NULL), np);
    download(&d, w, rt_dnet_params(n, NULL), np);
    float *ge[8];
    for (int t = 0; t < m.n_tables; t++) {
        int64_t len = (int64_t)B * m.tables[t].dim;
        ge[t] = malloc(sizeof(float) * (size_t)len);
        assert_non_null(ge[t]);
        download(&d, ge[t], rt_dnet_emb_grad(n, t), len);
    }

    /* Weights spread over the whole flat buffer (every layer), and every table's inputs. */
    const int K = 40;
    int significant = 0, checked = 0;
    for (int k = 0; k < K; k++) {
        int64_t i = ((2 * (int64_t)k + 1) * np) / (2 * K);
        significant += grad_close(g[i], fd_param(n, &m, &d, w, np, i), floor, "weight", i);
        checked++;
    }
    for (int t = 0; t < m.n_tables; t++)
        for (int k = 0; k < 4; k++) {
            int64_t len = (int64_t)B * m.tables[t].dim, i = (k * 7 + t) % len;
            significant += grad_close(ge[t][i], fd_emb(n, &m, &d, &x, t, i), floor, "embedding", i);
            checked++;
        }
    /* Most of the checked gradients must be large enough to test something. */
    assert_true(significant * 2 > checked);

    rt_dnet_free(n);
    for (int t = 0; t < m.n_tables; t++)
        free(ge[t]);
    free(g);
    free(w);
    data_free(&d, &x);
    assert_int_equal(d.bytes_now, 0);
    d.ops->close(&d);
    rt_model_free(&m);
}

static void test_grad_dlrm(void **state)
{
    (void)state;
    grad_check(dlrm_text);
}

static void test_grad_dcn(void **state)
{
    (void)state;
    grad_check(dcn_text);
}

static void test_grad_dcn_on_dense(void **state)
{
    (void)state;
    grad_check(dense_dcn_text);
}

/* ---- data parallel: gradients of the global mean ---------------------------------------- */

static void grads_of(rt_dnet *n, const rt_model *m, rt_xdev *d, rt_dnet_batch b, float *g,
                     int64_t np)
{
    iterate(n, m, &b);
    download(d, g, rt_dnet_grads(n, NULL), np);
}

/* Two ranks with half the batch each: their gradients sum to the one-rank full-batch ones. */
static void test_global_mean(void **state)
{
    (void)state;
    rt_model m = {0};
    rt_xdev d;
    data x;
    load_text(dcn_text, &m);
    open_cpu(&d);
    const int B = 8;
    data_make(&d, &m, B, 3, 0, 1.0, &x);
    rt_dnet *n = net_new(&m, &d, B, 5, sgd);
    int64_t np;
    rt_dnet_params(n, &np);
    float *full = malloc(sizeof(float) * (size_t)np * 3);
    assert_non_null(full);
    float *r0 = full + np, *r1 = full + 2 * np;
    grads_of(n, &m, &d, batch_of(&m, &x, 0, B, B), full, np);
    grads_of(n, &m, &d, batch_of(&m, &x, 0, B / 2, B), r0, np);
    grads_of(n, &m, &d, batch_of(&m, &x, B / 2, B / 2, B), r1, np);
    double norm = 0;
    for (int64_t i = 0; i < np; i++) {
        assert_true(fabsf(r0[i] + r1[i] - full[i]) <= 1e-5f * (1 + fabsf(full[i])));
        norm += (double)full[i] * full[i];
    }
    assert_true(norm > 1e-6);
    rt_dnet_free(n);
    free(full);
    data_free(&d, &x);
    d.ops->close(&d);
    rt_model_free(&m);
}

/* ---- (2) training on planted data ------------------------------------------------------ */

static void train_planted(const char *text, rt_dnet_opt opt)
{
    rt_model m = {0};
    rt_xdev d;
    data x;
    load_text(text, &m);
    open_cpu(&d);
    const int B = 64;
    data_make(&d, &m, B, 21, 1, 1.0, &x);
    rt_dnet *n = net_new(&m, &d, B, 9, opt);
    rt_dnet_batch b = batch_of(&m, &x, 0, B, B);
    double first = 0, last = 0;
    for (int it = 0; it < 200; it++) {
        last = iterate(n, &m, &b);
        if (it == 0) first = last;
        assert_int_equal(rt_dnet_update(n, stderr), 0);
    }
    last = forward_loss(n, &m);
    print_message("%s: loss %.4f -> %.4f after 200 steps\n", m.name, first, last);
    assert_true(first > 0.3);
    assert_true(last < 0.5 * first);
    assert_int_equal(*rt_dnet_step(n), 200);
    rt_dnet_free(n);
    data_free(&d, &x);
    d.ops->close(&d);
    rt_model_free(&m);
}

static void test_train_dlrm_adam(void **state)
{
    (void)state;
    train_planted(dlrm_text, (rt_dnet_opt){RT_KOPT_ADAM, 1e-2f, 0.9f, 0.999f, 1e-8f, 0});
}

static void test_train_dcn_sgd(void **state)
{
    (void)state;
    train_planted(dcn_text, (rt_dnet_opt){RT_KOPT_SGD, 0.5f, 0, 0, 0, 0});
}

/* ---- (3) deterministic initialization -------------------------------------------------- */

static void test_same_seed_same_weights(void **state)
{
    (void)state;
    rt_model m = {0};
    rt_xdev d;
    load_text(dlrm_text, &m);
    open_cpu(&d);
    rt_dnet *a = net_new(&m, &d, 4, 1234, sgd);
    rt_dnet *b = net_new(&m, &d, 16, 1234, sgd); /* the batch size must not matter */
    rt_dnet *c = net_new(&m, &d, 4, 1235, sgd);
    int64_t na, nb, nc;
    rt_dnet_params(a, &na);
    rt_dnet_params(b, &nb);
    rt_dnet_params(c, &nc);
    assert_int_equal(na, nb);
    assert_int_equal(na, nc);
    /* 5x8+8 + 8x4+4 (bottom) + 10x8+8 + 8x1+1 (top): the dot has no weights. */
    assert_int_equal(na, 48 + 36 + 88 + 9);
    float *h = malloc(sizeof *h * (size_t)na * 3);
    assert_non_null(h);
    download(&d, h, rt_dnet_params(a, NULL), na);
    download(&d, h + na, rt_dnet_params(b, NULL), na);
    download(&d, h + 2 * na, rt_dnet_params(c, NULL), na);
    assert_memory_equal(h, h + na, sizeof *h * (size_t)na);
    assert_memory_not_equal(h, h + 2 * na, sizeof *h * (size_t)na);
    /* uniform(-1/sqrt(fan_in), 1/sqrt(fan_in)): the first tensor has fan-in 5. */
    for (int i = 0; i < 40; i++)
        assert_true(fabsf(h[i]) <= 1 / sqrtf(5.0f));
    free(h);
    rt_dnet_free(a);
    rt_dnet_free(b);
    rt_dnet_free(c);
    d.ops->close(&d);
    rt_model_free(&m);
}

/* ---- (4) refusal ----------------------------------------------------------------------- */

static void expect_refused(rt_model *m, const char *needle)
{
    rt_xdev d;
    open_cpu(&d);
    char *msg = NULL;
    size_t len = 0;
    FILE *err = open_memstream(&msg, &len);
    assert_non_null(err);
    rt_dnet *n = rt_dnet_new(m, &d, 4, 64, 1, sgd, err);
    fclose(err);
    assert_null(n);
    if (!strstr(msg, needle)) fail_msg("message '%s' does not name '%s'", msg, needle);
    assert_int_equal(d.bytes_now, 0);
    free(msg);
    d.ops->close(&d);
}

static void test_unsupported(void **state)
{
    (void)state;
    rt_model m = {0};
    load_text("name: wide\nsource: t\ndense_features: 4\ntables: [{name: a, rows: 9}]\n"
              "layers:\n  - {type: mlp, name: top, sizes: [4, 2]}\n",
              &m);
    expect_refused(&m, "one logit per sample");
    rt_model_free(&m);

    load_text(
        "name: qkv\nsource: t\ndense_features: 0\nloss: sampled_softmax\nnegatives: 2\nseq_len: 4\n"
        "defaults: {dim: 8, sequence: true}\ntables: [{name: item, rows: 9}]\n"
        "layers:\n  - {type: hstu, name: backbone, input: [sequence], blocks: 1, heads: 2, "
        "d_qk: 2, d_v: 4}\n",
        &m);
    expect_refused(&m, "backbone: d_qk 2 != d_v 4");
    rt_model_free(&m);

    /* Sampled softmax scores tokens: a per-sample last layer has no queries. */
    load_text("name: pooled\nsource: t\nloss: sampled_softmax\nnegatives: 2\ndense_features: 4\n"
              "tables: [{name: a, rows: 9, dim: 4}]\n"
              "layers:\n  - {type: mlp, name: top, sizes: [4]}\n",
              &m);
    expect_refused(&m, "sampled_softmax needs a per-token last layer");
    rt_model_free(&m);

    /* The query must be as wide as a token to be scored against token embeddings. */
    load_text("name: narrow\nsource: t\ndense_features: 0\nloss: sampled_softmax\nnegatives: "
              "2\nseq_len: 4\n"
              "defaults: {dim: 8, sequence: true}\ntables: [{name: item, rows: 9}]\n"
              "layers:\n  - {type: hstu, name: backbone, input: [sequence], blocks: 1, heads: 2, "
              "d_qk: 3, d_v: 3, d_model: 6}\n",
              &m);
    expect_refused(&m, "as wide as a token embedding (8)");
    rt_model_free(&m);
}

/* ---- (5) generative recommenders: jagged sequences --------------------------------------- */

/* HSTU over one sequence table, trained with sampled softmax over in-batch negatives. */
static const char *const hstu_text =
    "name: toy-hstu\n"
    "source: unit test\n"
    "dense_features: 0\n"
    "loss: sampled_softmax\n"
    "negatives: 5\n"
    "seq_len: 8\n"
    "defaults: {dim: 8, sequence: true}\n"
    "tables: [{name: item, rows: 100}]\n"
    "layers:\n"
    "  - {type: hstu, name: backbone, input: [sequence], blocks: 2, heads: 2, d_qk: 4, d_v: 4}\n";

static const char *const fuxi_text =
    "name: toy-fuxi\n"
    "source: unit test\n"
    "dense_features: 0\n"
    "loss: sampled_softmax\n"
    "negatives: 5\n"
    "seq_len: 8\n"
    "defaults: {dim: 8, sequence: true}\n"
    "tables: [{name: item, rows: 100}]\n"
    "layers:\n"
    "  - {type: fuxi, name: backbone, input: [sequence], blocks: 2, heads: 2, d_qk: 4, d_v: 4, "
    "ffn_mult: 2}\n";

/* MTGR shape: two sequence tables of unequal widths (a token is their concatenation), an input
 * projection to d_model, an MMoE head with two tasks per token, bce on each sample's last
 * token. */
static const char *const mtgr_text =
    "name: toy-mtgr\n"
    "source: unit test\n"
    "dense_features: 0\n"
    "loss: bce\n"
    "seq_len: 8\n"
    "defaults: {sequence: true}\n"
    "tables:\n"
    "  - {name: item, rows: 100, dim: 4}\n"
    "  - {name: action, rows: 10, dim: 6}\n"
    "layers:\n"
    "  - {type: hstu, name: backbone, input: [sequence], blocks: 1, heads: 2, d_qk: 3, d_v: 3, "
    "d_model: 8}\n"
    "  - {type: mmoe, name: head, experts: 3, sizes: [12], tasks: 2, tower_sizes: [8, 1]}\n";

enum { MAX_SEQ_TABLES = 4, MAX_SAMPLES = 64 };

/* A jagged batch: every table of the model is a sequence table with the same lengths. */
typedef struct {
    int batch, nt;
    int64_t tokens, off[MAX_SAMPLES + 1];
    float *h_emb[MAX_SEQ_TABLES], *emb[MAX_SEQ_TABLES], *h_labels, *labels;
    int64_t *d_off;
    const int64_t *offs[MAX_SEQ_TABLES], *h_offs[MAX_SEQ_TABLES];
} seqdata;

static void seq_upload(rt_xdev *d, seqdata *x)
{
    x->d_off = d->ops->alloc(d, sizeof(int64_t) * (size_t)(x->batch + 1));
    assert_non_null(x->d_off);
    assert_int_equal(
        d->ops->copy(d, x->d_off, x->off, sizeof(int64_t) * (size_t)(x->batch + 1), RT_XCOPY_H2D),
        0);
    for (int t = 0; t < x->nt; t++) {
        x->offs[t] = x->d_off;
        x->h_offs[t] = x->off;
    }
}

/* Random token embeddings (uniform +-scale) and labels for samples of lengths LENS. */
static void seq_make(rt_xdev *d, const rt_model *m, const int *lens, int batch, uint64_t seed,
                     double scale, seqdata *x)
{
    memset(x, 0, sizeof *x);
    assert_true(batch <= MAX_SAMPLES && m->n_tables <= MAX_SEQ_TABLES);
    x->batch = batch;
    x->nt = m->n_tables;
    for (int s = 0; s < batch; s++)
        x->off[s + 1] = x->off[s] + lens[s];
    x->tokens = x->off[batch];
    uint64_t r = seed;
    for (int t = 0; t < x->nt; t++) {
        int64_t count = x->tokens * m->tables[t].dim;
        x->h_emb[t] = malloc(sizeof(float) * (size_t)(count ? count : 1));
        assert_non_null(x->h_emb[t]);
        for (int64_t i = 0; i < count; i++)
            x->h_emb[t][i] = (float)uniform(&r, scale);
        x->emb[t] = upload(d, x->h_emb[t], count ? count : 1);
    }
    x->h_labels = malloc(sizeof(float) * (size_t)batch);
    assert_non_null(x->h_labels);
    for (int s = 0; s < batch; s++)
        x->h_labels[s] = uniform(&r, 1.0) > 0;
    x->labels = upload(d, x->h_labels, batch);
    seq_upload(d, x);
}

static void seq_free(rt_xdev *d, seqdata *x)
{
    for (int t = 0; t < x->nt; t++) {
        d->ops->release(d, x->emb[t]);
        free(x->h_emb[t]);
    }
    d->ops->release(d, x->labels);
    d->ops->release(d, x->d_off);
    free(x->h_labels);
}

static rt_dnet_batch seq_batch(seqdata *x, double global)
{
    return (rt_dnet_batch){.batch = x->batch,
                           .global_batch = global,
                           .emb = x->emb,
                           .offsets = x->offs,
                           .h_offsets = x->h_offs,
                           .labels = x->labels};
}

/* Sampled-softmax targets: every token but the last of its sequence. */
static int64_t seq_targets(const seqdata *x)
{
    int64_t q = 0;
    for (int s = 0; s < x->batch; s++)
        q += x->off[s + 1] - x->off[s] > 1 ? x->off[s + 1] - x->off[s] - 1 : 0;
    return q;
}

static int is_ssm(const rt_model *m)
{
    return !strcmp(m->loss, "sampled_softmax");
}

static double fd_seq_emb(rt_dnet *n, const rt_model *m, rt_xdev *d, seqdata *x, int t, int64_t i)
{
    int64_t len = x->tokens * m->tables[t].dim;
    float *h = x->h_emb[t], keep = h[i];
    h[i] = keep + (float)FD_H;
    assert_int_equal(d->ops->copy(d, x->emb[t], h, sizeof *h * (size_t)len, RT_XCOPY_H2D), 0);
    double up = forward_loss(n, m);
    h[i] = keep - (float)FD_H;
    assert_int_equal(d->ops->copy(d, x->emb[t], h, sizeof *h * (size_t)len, RT_XCOPY_H2D), 0);
    double down = forward_loss(n, m);
    h[i] = keep;
    assert_int_equal(d->ops->copy(d, x->emb[t], h, sizeof *h * (size_t)len, RT_XCOPY_H2D), 0);
    return (up - down) / (2 * FD_H);
}

/* Lengths 1..7, jagged, one sequence of a single token (no target of its own). */
static const int gr_lens[] = {3, 1, 7, 5, 2, 6};
enum { GR_B = sizeof gr_lens / sizeof gr_lens[0] };

static void grad_check_gr(const char *text, const int *lens, int B)
{
    rt_model m = {0};
    rt_xdev d;
    seqdata x;
    load_text(text, &m);
    open_cpu(&d);
    seq_make(&d, &m, lens, B, 13, 1.0, &x);
    rt_dnet *n = rt_dnet_new(&m, &d, B + 2, x.tokens + 5, 11, sgd, stderr);
    assert_non_null(n);
    rt_dnet_batch b = seq_batch(&x, B);
    double loss = iterate(n, &m, &b);
    assert_int_equal(rt_dnet_tokens(n), x.tokens);
    /* The net differentiates J = (sum of the targets' cross-entropies) / global_batch, and
     * reports the mean per target: J = loss * Q / global_batch. bce: the mean over samples. */
    double scale = is_ssm(&m) ? (double)seq_targets(&x) / B : 1.0;
    double floor = fd_floor(loss) * scale;

    int64_t np;
    rt_dnet_params(n, &np);
    float *g = malloc(sizeof *g * (size_t)np), *w = malloc(sizeof *w * (size_t)np);
    assert_non_null(g);
    assert_non_null(w);
    download(&d, g, rt_dnet_grads(n, NULL), np);
    download(&d, w, rt_dnet_params(n, NULL), np);
    float *ge[MAX_SEQ_TABLES];
    for (int t = 0; t < m.n_tables; t++) {
        int64_t len = x.tokens * m.tables[t].dim;
        ge[t] = malloc(sizeof(float) * (size_t)len);
        assert_non_null(ge[t]);
        download(&d, ge[t], rt_dnet_emb_grad(n, t), len);
    }
    /* Every parameter: the toy nets are small, and the relative-bias tables, the channel
     * blocks of lin0 and the projection pieces each have a path of their own. */
    int significant = 0, checked = 0;
    for (int64_t i = 0; i < np; i++) {
        significant += grad_close(g[i], fd_param(n, &m, &d, w, np, i) * scale, floor, "weight", i);
        checked++;
    }
    /* Token embeddings: every token position of every table is visited (the first, the last
     * of a sequence, the single-token sequence), spread over the dimensions. */
    for (int t = 0; t < m.n_tables; t++) {
        int64_t dim = m.tables[t].dim;
        for (int64_t tok = 0; tok < x.tokens; tok++) {
            int64_t i = tok * dim + (tok * 3 + t) % dim;
            significant += grad_close(ge[t][i], fd_seq_emb(n, &m, &d, &x, t, i) * scale, floor,
                                      "token embedding", i);
            checked++;
        }
    }
    print_message("%s: %d of %d checked gradients above the noise floor %.2g\n", m.name,
                  significant, checked, floor);
    /* Most checks must test something. bce reads the last token only: the earlier tokens'
     * gradients pass through its attention alone (weights silu(.) / n) and many sit near the
     * fp32 floor, so there a third must clear it. */
    assert_true(significant * (is_ssm(&m) ? 2 : 3) > checked);

    rt_dnet_free(n);
    for (int t = 0; t < m.n_tables; t++)
        free(ge[t]);
    free(g);
    free(w);
    seq_free(&d, &x);
    assert_int_equal(d.bytes_now, 0);
    d.ops->close(&d);
    rt_model_free(&m);
}

static void test_grad_hstu(void **state)
{
    (void)state;
    grad_check_gr(hstu_text, gr_lens, GR_B);
}

static void test_grad_fuxi(void **state)
{
    (void)state;
    grad_check_gr(fuxi_text, gr_lens, GR_B);
}

static void test_grad_mtgr(void **state)
{
    (void)state;
    /* bce scores each sample's last token only, and its gradient is divided by samples x
     * tasks: two samples keep most gradients above the fp32 noise floor. */
    const int lens[] = {7, 4};
    grad_check_gr(mtgr_text, lens, 2);
}

/* bce after per-token layers: two ranks with half the samples each sum to the full batch's
 * gradients (parameters and token embeddings). Sampled softmax: its negatives are the rank's
 * own tokens, so instead the gradients must scale as 1 / global_batch. */
static void test_gr_global_mean(void **state)
{
    (void)state;
    rt_model m = {0};
    rt_xdev d;
    seqdata full, half[2];
    load_text(mtgr_text, &m);
    open_cpu(&d);
    seq_make(&d, &m, gr_lens, GR_B, 5, 1.0, &full);
    for (int r = 0; r < 2; r++) {
        seq_make(&d, &m, gr_lens + r * GR_B / 2, GR_B / 2, 5, 1.0, &half[r]);
        /* The same tokens and labels as the full batch's share. */
        int64_t first = full.off[r * GR_B / 2];
        for (int t = 0; t < m.n_tables; t++) {
            int64_t dim = m.tables[t].dim, cnt = half[r].tokens * dim;
            memcpy(half[r].h_emb[t], full.h_emb[t] + first * dim, sizeof(float) * (size_t)cnt);
            assert_int_equal(d.ops->copy(&d, half[r].emb[t], half[r].h_emb[t],
                                         sizeof(float) * (size_t)cnt, RT_XCOPY_H2D),
                             0);
        }
        memcpy(half[r].h_labels, full.h_labels + r * GR_B / 2, sizeof(float) * GR_B / 2);
        assert_int_equal(d.ops->copy(&d, half[r].labels, half[r].h_labels, sizeof(float) * GR_B / 2,
                                     RT_XCOPY_H2D),
                         0);
    }
    rt_dnet *n = rt_dnet_new(&m, &d, GR_B, full.tokens, 5, sgd, stderr);
    assert_non_null(n);
    int64_t np;
    rt_dnet_params(n, &np);
    int64_t ne = full.tokens * m.tables[0].dim;
    float *g = malloc(sizeof(float) * (size_t)(3 * np)), *e = malloc(sizeof(float) * (size_t)ne);
    assert_non_null(g);
    assert_non_null(e);
    rt_dnet_batch b = seq_batch(&full, GR_B);
    grads_of(n, &m, &d, b, g, np);
    download(&d, e, rt_dnet_emb_grad(n, 0), ne);
    for (int r = 0; r < 2; r++) {
        b = seq_batch(&half[r], GR_B);
        grads_of(n, &m, &d, b, g + (r + 1) * np, np);
        /* Rank r's token gradients are the full batch's rows of its tokens. */
        int64_t cnt = half[r].tokens * m.tables[0].dim;
        float *er = malloc(sizeof(float) * (size_t)cnt);
        assert_non_null(er);
        download(&d, er, rt_dnet_emb_grad(n, 0), cnt);
        const float *want = e + full.off[r * GR_B / 2] * m.tables[0].dim;
        for (int64_t i = 0; i < cnt; i++)
            assert_true(fabsf(er[i] - want[i]) <= 1e-5f * (1 + fabsf(want[i])));
        free(er);
    }
    double norm = 0;
    for (int64_t i = 0; i < np; i++) {
        assert_true(fabsf(g[np + i] + g[2 * np + i] - g[i]) <= 1e-5f * (1 + fabsf(g[i])));
        norm += (double)g[i] * g[i];
    }
    assert_true(norm > 1e-6);
    rt_dnet_free(n);
    rt_model_free(&m);

    load_text(hstu_text, &m);
    n = rt_dnet_new(&m, &d, GR_B, full.tokens, 5, sgd, stderr);
    assert_non_null(n);
    seqdata one;
    seq_make(&d, &m, gr_lens, GR_B, 9, 1.0, &one);
    rt_dnet_params(n, &np);
    free(g);
    g = malloc(sizeof(float) * (size_t)(2 * np));
    assert_non_null(g);
    grads_of(n, &m, &d, seq_batch(&one, GR_B), g, np);
    grads_of(n, &m, &d, seq_batch(&one, 2 * GR_B), g + np, np);
    for (int64_t i = 0; i < np; i++)
        assert_true(fabsf(2 * g[np + i] - g[i]) <= 1e-6f * (1 + fabsf(g[i])));
    rt_dnet_free(n);
    seq_free(&d, &one);
    free(g);
    free(e);
    seq_free(&d, &full);
    seq_free(&d, &half[0]);
    seq_free(&d, &half[1]);
    d.ops->close(&d);
    rt_model_free(&m);
}

/* A batch longer than max_tokens grows the net, which keeps its weights, Adam state and
 * step: it then computes what a net built large enough computes. */
static void test_gr_grow(void **state)
{
    (void)state;
    rt_model m = {0};
    rt_xdev d;
    seqdata small, big;
    load_text(fuxi_text, &m);
    open_cpu(&d);
    const int short_lens[] = {2, 1};
    seq_make(&d, &m, short_lens, 2, 21, 1.0, &small);
    seq_make(&d, &m, gr_lens, GR_B, 22, 1.0, &big);
    const rt_dnet_opt adam = {RT_KOPT_ADAM, 1e-2f, 0.9f, 0.999f, 1e-8f, 0};
    rt_dnet *a = rt_dnet_new(&m, &d, GR_B, big.tokens, 4, adam, stderr);
    rt_dnet *b = rt_dnet_new(&m, &d, GR_B, small.tokens, 4, adam, stderr);
    assert_non_null(a);
    assert_non_null(b);
    rt_dnet_batch sb = seq_batch(&small, 2), bb = seq_batch(&big, GR_B);
    double la = iterate(a, &m, &sb), lb = iterate(b, &m, &sb);
    assert_true(la == lb);
    assert_int_equal(rt_dnet_update(a, stderr), 0);
    assert_int_equal(rt_dnet_update(b, stderr), 0);
    la = iterate(a, &m, &bb);
    lb = iterate(b, &m, &bb); /* 24 tokens into a net planned for 3 */
    assert_true(la == lb);
    assert_int_equal(rt_dnet_update(a, stderr), 0);
    assert_int_equal(rt_dnet_update(b, stderr), 0);
    assert_int_equal(*rt_dnet_step(b), 2);
    int64_t np;
    rt_dnet_params(a, &np);
    float *h = malloc(sizeof(float) * (size_t)(4 * np));
    assert_non_null(h);
    download(&d, h, rt_dnet_params(a, NULL), np);
    download(&d, h + np, rt_dnet_params(b, NULL), np);
    download(&d, h + 2 * np, rt_dnet_opt_state(a, 1), np);
    download(&d, h + 3 * np, rt_dnet_opt_state(b, 1), np);
    assert_memory_equal(h, h + np, sizeof(float) * (size_t)np);
    assert_memory_equal(h + 2 * np, h + 3 * np, sizeof(float) * (size_t)np);
    free(h);
    rt_dnet_free(a);
    rt_dnet_free(b);
    seq_free(&d, &small);
    seq_free(&d, &big);
    assert_int_equal(d.bytes_now, 0);
    d.ops->close(&d);
    rt_model_free(&m);
}

/* Planted next-item task: a vocabulary of V items with fixed random embeddings, sequences
 * that follow item -> (5 item + 3) mod V from a random start. The loss must fall well below
 * its start within 200 Adam steps (the in-batch negatives sometimes hit the positive's item,
 * which bounds it away from zero). */
static void train_gr(const char *text)
{
    enum { V = 16, B = 16 };
    rt_model m = {0};
    rt_xdev d;
    seqdata x;
    load_text(text, &m);
    open_cpu(&d);
    int lens[B];
    for (int s = 0; s < B; s++)
        lens[s] = 4 + s % 5;
    seq_make(&d, &m, lens, B, 3, 1.0, &x);
    int64_t dim = m.tables[0].dim;
    float vocab[V * 8];
    assert_true(dim <= 8);
    uint64_t r = 99;
    for (int i = 0; i < V * dim; i++)
        vocab[i] = (float)uniform(&r, 1.0);
    for (int s = 0; s < B; s++) {
        int item = (int)(rt_kmix64((uint64_t)s + 7) % V);
        for (int64_t i = x.off[s]; i < x.off[s + 1]; i++) {
            memcpy(x.h_emb[0] + i * dim, vocab + item * dim, sizeof(float) * (size_t)dim);
            item = (5 * item + 3) % V;
        }
    }
    assert_int_equal(d.ops->copy(&d, x.emb[0], x.h_emb[0], sizeof(float) * (size_t)(x.tokens * dim),
                                 RT_XCOPY_H2D),
                     0);
    rt_dnet *n = rt_dnet_new(&m, &d, B, x.tokens, 9,
                             (rt_dnet_opt){RT_KOPT_ADAM, 1e-2f, 0.9f, 0.999f, 1e-8f, 0}, stderr);
    assert_non_null(n);
    rt_dnet_batch b = seq_batch(&x, B);
    double first = 0, last = 0;
    for (int it = 0; it < 200; it++) {
        last = iterate(n, &m, &b);
        if (it == 0) first = last;
        assert_int_equal(rt_dnet_update(n, stderr), 0);
    }
    last = forward_loss(n, &m);
    print_message("%s: loss %.4f -> %.4f after 200 steps\n", m.name, first, last);
    assert_true(first > 1.0);
    assert_true(last < 0.5 * first);
    rt_dnet_free(n);
    seq_free(&d, &x);
    d.ops->close(&d);
    rt_model_free(&m);
}

static void test_train_hstu(void **state)
{
    (void)state;
    train_gr(hstu_text);
}

static void test_train_fuxi(void **state)
{
    (void)state;
    train_gr(fuxi_text);
}

/* The FLOPs the net runs equal models/model_cost.c's fwd_flops, summed over the samples'
 * lengths, for every layer of the shipped GR models and the toy ones. */
static void flops_match(rt_model *m, const int *lens, int batch)
{
    rt_xdev d;
    seqdata x;
    open_cpu(&d);
    seq_make(&d, m, lens, batch, 17, 0.5, &x);
    rt_dnet *n = rt_dnet_new(m, &d, batch, x.tokens, 3, sgd, stderr);
    assert_non_null(n);
    rt_dnet_batch b = seq_batch(&x, batch);
    assert_int_equal(rt_dnet_set_batch(n, &b, stderr), 0);
    for (int l = 0; l < m->n_layers; l++) {
        assert_int_equal(rt_dnet_forward(n, l, stderr), 0);
        const rt_poly *p = &m->layers[l].fwd_flops;
        double want = 0;
        for (int s = 0; s < batch; s++)
            want += p->c[0] + p->c[1] * lens[s] + p->c[2] * (double)lens[s] * lens[s];
        double got = rt_dnet_layer_flops(n, l);
        print_message("%s layer %s: %.0f FLOPs run, %.0f costed (lengths", m->name,
                      m->layers[l].name, got, want);
        for (int s = 0; s < batch; s++)
            print_message(" %d", lens[s]);
        print_message(")\n");
        if (!(fabs(got - want) <= 1e-9 * want))
            fail_msg("layer %s: %.17g FLOPs run, %.17g costed", m->layers[l].name, got, want);
    }
    rt_dnet_free(n);
    seq_free(&d, &x);
    d.ops->close(&d);
}

static void test_gr_flops(void **state)
{
    (void)state;
    const char *texts[] = {hstu_text, fuxi_text, mtgr_text};
    for (size_t i = 0; i < sizeof texts / sizeof texts[0]; i++) {
        rt_model m = {0};
        load_text(texts[i], &m);
        flops_match(&m, gr_lens, GR_B);
        rt_model_free(&m);
    }
    const char *files[] = {"hstu-tiny", "fuxi-tiny", "mtgr-small"};
    const int lens[] = {1, 9, 4};
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
        rt_model m = {0};
        char path[512], *msg = NULL;
        snprintf(path, sizeof path, "%s/models/%s.yaml", RT_SOURCE_DIR, files[i]);
        if (load_file(path, &m, &msg)) fail_msg("%s does not load: %s", path, msg);
        free(msg);
        flops_match(&m, lens, 3);
        rt_model_free(&m);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_grad_dlrm),
        cmocka_unit_test(test_grad_dcn),
        cmocka_unit_test(test_grad_dcn_on_dense),
        cmocka_unit_test(test_global_mean),
        cmocka_unit_test(test_train_dlrm_adam),
        cmocka_unit_test(test_train_dcn_sgd),
        cmocka_unit_test(test_same_seed_same_weights),
        cmocka_unit_test(test_unsupported),
        cmocka_unit_test(test_grad_hstu),
        cmocka_unit_test(test_grad_fuxi),
        cmocka_unit_test(test_grad_mtgr),
        cmocka_unit_test(test_gr_global_mean),
        cmocka_unit_test(test_gr_grow),
        cmocka_unit_test(test_train_hstu),
        cmocka_unit_test(test_train_fuxi),
        cmocka_unit_test(test_gr_flops),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
