/* Layer cost arithmetic against hand-computed figures (models/model_cost.c conventions). */
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
#include "model.h"
#include "model_cost.h"

/* cmocka's float assertions work in single precision; these figures need double. */
#define assert_double_equal(a, b, eps) expect_near((a), (b), (eps), #a, __LINE__)
static void expect_near(double a, double b, double eps, const char *what, int line)
{
    if (!(fabs(a - b) <= eps))
        fail_msg("line %d: %s = %.17g, expected %.17g (+-%g)", line, what, a, b, eps);
}

/* Parses PATH into M; returns rt_model_compute_costs' result, with its messages in *MSG. */
static int load_and_cost(const char *path, rt_model *m, char **msg)
{
    size_t len = 0;
    FILE *err = open_memstream(msg, &len);
    assert_non_null(err);
    rt_cfg *cfg = rt_cfg_load(path, err);
    assert_non_null(cfg);
    assert_int_equal(rt_model_parse(cfg, rt_cfg_root(cfg), m, 0), 0);
    int rc = rt_model_compute_costs(m, err);
    rt_cfg_free(cfg);
    fclose(err);
    return rc;
}

static int load_repo_model(const char *name, rt_model *m)
{
    char path[512], *msg = NULL;
    snprintf(path, sizeof path, "%s/models/%s", RT_SOURCE_DIR, name);
    int rc = load_and_cost(path, m, &msg);
    if (rc) fprintf(stderr, "%s: %s", name, msg);
    free(msg);
    return rc;
}

/* Writes TEXT to a temporary YAML file and loads it; the file is removed again. */
static int load_text(const char *text, rt_model *m, char **msg)
{
    char path[] = "/tmp/rt_test_model_XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
    close(fd);
    int rc = load_and_cost(path, m, msg);
    unlink(path);
    return rc;
}

static const double criteo_rows = 177944275.0; /* TorchRec's comment: "177,944,275 in total" */

static void test_dlrm_criteo(void **state)
{
    (void)state;
    rt_model m = {0};
    assert_int_equal(load_repo_model("dlrm-criteo.yaml", &m), 0);
    double bottom = 2.0 * (13 * 512 + 512 * 256 + 256 * 128);
    double dot = 2.0 * 27 * 27 * 128;  /* 26 embeddings + the bottom output, d = 128 */
    double top_in = 128 + 27 * 26 / 2; /* 479 */
    double top = 2.0 * (top_in * 1024 + 1024 * 1024 + 1024 * 512 + 512 * 256 + 256 * 1);
    assert_int_equal(m.layers[1].out_width, 479);
    assert_int_equal(m.layers[1].in_vectors, 27);
    assert_double_equal(m.layers[0].fwd_flops.c[0], bottom, 0);
    assert_double_equal(m.layers[1].fwd_flops.c[0], dot, 0);
    assert_double_equal(m.layers[2].fwd_flops.c[0], top, 0);
    assert_double_equal(m.fwd_flops.c[0], bottom + dot + top, 0);
    assert_double_equal(m.fwd_flops.c[0], 4916992, 0);
    assert_double_equal(m.bwd_flops.c[0], 2 * (bottom + dot + top), 0);
    assert_double_equal(m.fwd_flops.c[1] + m.fwd_flops.c[2], 0, 0);
    double params = (13 * 512 + 512) + (512 * 256 + 256) + (256 * 128 + 128) + /* bottom */
                    (479 * 1024 + 1024) + (1024 * 1024 + 1024) + (1024 * 512 + 512) +
                    (512 * 256 + 256) + (256 * 1 + 1); /* top */
    assert_double_equal(m.dense_params, params, 0);
    assert_double_equal(m.embedding_params, criteo_rows * 128, 0);
    /* bytes: every linear reads its input and writes its output once, fp32 */
    assert_double_equal(m.layers[0].fwd_bytes.c[0], 4.0 * (13 + 512 + 512 + 256 + 256 + 128), 0);
    assert_double_equal(m.layers[1].fwd_bytes.c[0], 4.0 * (27 * 128 + 479), 0);
    rt_model_free(&m);
}

static void test_dcn_criteo(void **state)
{
    (void)state;
    rt_model m = {0};
    assert_int_equal(load_repo_model("dcn-criteo.yaml", &m), 0);
    double D = 27 * 128, r = 512; /* bottom output ++ 26 embeddings */
    double bottom = 2.0 * (13 * 512 + 512 * 256 + 256 * 128);
    double cross = 3 * 4 * D * r;
    double top = 2.0 * (D * 1024 + 1024 * 1024 + 1024 * 512 + 512 * 256 + 256 * 1);
    assert_int_equal(m.layers[1].out_width, 3456);
    assert_double_equal(m.layers[1].fwd_flops.c[0], cross, 0);
    assert_double_equal(m.fwd_flops.c[0], bottom + cross + top, 0);
    assert_double_equal(m.bwd_flops.c[0], 2 * (bottom + cross + top), 0);
    double params = (13 * 512 + 512) + (512 * 256 + 256) + (256 * 128 + 128) + 3 * (2 * D * r + D) +
                    (D * 1024 + 1024) + (1024 * 1024 + 1024) + (1024 * 512 + 512) +
                    (512 * 256 + 256) + (256 * 1 + 1);
    assert_double_equal(m.dense_params, params, 0);
    assert_double_equal(m.embedding_params, criteo_rows * 128, 0);
    rt_model_free(&m);
}

static const char *const tiny_hstu =
    "name: tiny-hstu\n"
    "source: test\n"
    "dense_features: 0\n"
    "seq_len: 4\n"
    "tables:\n"
    "  - {name: item, rows: 10, dim: 8, sequence: true, pooling: {kind: fixed, mean: 4}}\n"
    "layers:\n"
    "  - {type: hstu, name: h, input: [sequence], blocks: 1, heads: 2, d_qk: 2, d_v: 3}\n";

static void test_hstu_tiny(void **state)
{
    (void)state;
    rt_model m = {0};
    char *msg = NULL;
    assert_int_equal(load_text(tiny_hstu, &m, &msg), 0);
    /* f1: 8 -> 2 heads x (2 x 2 + 2 x 3) = 20; f2: 2 x 3 = 6 -> 8 */
    double linear_per_token = 2.0 * 8 * 20 + 2.0 * 6 * 8; /* 416 */
    double attn = 2 * (2 + 3); /* heads x (d_qk + d_v): coefficient of L(L+1) */
    assert_double_equal(m.fwd_flops.c[0], 0, 0);
    assert_double_equal(m.fwd_flops.c[1], linear_per_token + attn, 0);
    assert_double_equal(m.fwd_flops.c[2], attn, 0);
    /* L = 4: 4 tokens x 416, plus 2 FLOPs x 10 causal pairs x 2 heads x (2 + 3) */
    assert_double_equal(rt_poly_eval(m.fwd_flops, 4), 4 * 416 + 2.0 * 10 * 2 * 5, 0);
    assert_double_equal(rt_poly_eval(m.bwd_flops, 4), 2 * (4 * 416 + 2.0 * 10 * 2 * 5), 0);
    assert_double_equal(m.dense_params, (8 * 20 + 20) + (6 * 8 + 8), 0);
    assert_double_equal(m.embedding_params, 80, 0);
    /* the attention term grows with L^2: the second difference of f is 2 c2 */
    double f1 = rt_poly_eval(m.fwd_flops, 1000), f2 = rt_poly_eval(m.fwd_flops, 2000),
           f3 = rt_poly_eval(m.fwd_flops, 3000);
    assert_double_equal(f3 - 2 * f2 + f1, 2 * attn * 1000.0 * 1000.0, 1e-3);
    assert_true(f2 / f1 > 2.0);
    free(msg);
    rt_model_free(&m);
}

/* TurboGR Table 1 model sizes: HSTU-large 83.97 M, FuXi-large 201.55 M parameters. */
static void test_turbogr_sizes(void **state)
{
    (void)state;
    rt_model m = {0};
    assert_int_equal(load_repo_model("hstu-large.yaml", &m), 0);
    double hstu = 16.0 * ((1024 * 4096 + 4096) + (1024 * 1024 + 1024));
    assert_double_equal(m.dense_params, hstu, 0);
    assert_double_equal(m.dense_params / 1e6, 83.97, 0.005);
    rt_model_free(&m);
    memset(&m, 0, sizeof m);
    assert_int_equal(load_repo_model("fuxi-large.yaml", &m), 0);
    /* uvqk 1024 -> 8 x (4 x 128 + 2 x 128), lin0 3072 -> 1024, SwiGLU 1024 -> 2 x 1024 -> 1024 */
    double fuxi = 16.0 * ((1024 * 6144 + 6144) + (3072 * 1024 + 1024) + (1024 * 2048 + 2048) +
                          (1024 * 1024 + 1024));
    assert_double_equal(m.dense_params, fuxi, 0);
    assert_double_equal(m.dense_params / 201.55e6, 1.0, 0.001);
    rt_model_free(&m);
}

static void test_catalog_costs(void **state)
{
    (void)state;
    static const char *const files[] = {
        "dlrm-criteo.yaml", "dcn-criteo.yaml",  "hstu-tiny.yaml",    "hstu-small.yaml",
        "hstu-medium.yaml", "hstu-large.yaml",  "hstu-long.yaml",    "fuxi-tiny.yaml",
        "fuxi-small.yaml",  "fuxi-medium.yaml", "fuxi-large.yaml",   "fuxi-long.yaml",
        "mtgr-small.yaml",  "mtgr-large.yaml",  "fusedrec-prod.yaml"};
    for (size_t i = 0; i < sizeof files / sizeof *files; i++) {
        rt_model m = {0};
        assert_int_equal(load_repo_model(files[i], &m), 0);
        assert_true(m.dense_params > 0 && m.embedding_params > 0);
        double L = m.seq_len ? m.seq_len : 1;
        assert_true(rt_poly_eval(m.fwd_flops, L) > 0);
        assert_double_equal(rt_poly_eval(m.bwd_flops, L), 2 * rt_poly_eval(m.fwd_flops, L), 1);
        rt_model_free(&m);
    }
    /* MTGR seq_len was chosen so that forward FLOPs match Table 1's 4 G and 110 G */
    rt_model m = {0};
    assert_int_equal(load_repo_model("mtgr-small.yaml", &m), 0);
    assert_double_equal(rt_poly_eval(m.fwd_flops, m.seq_len) / 4e9, 1.0, 0.01);
    rt_model_free(&m);
    memset(&m, 0, sizeof m);
    assert_int_equal(load_repo_model("mtgr-large.yaml", &m), 0);
    assert_double_equal(rt_poly_eval(m.fwd_flops, m.seq_len) / 110e9, 1.0, 0.01);
    rt_model_free(&m);
}

static void expect_error(const char *text, const char *needle)
{
    rt_model m = {0};
    char *msg = NULL;
    assert_int_equal(load_text(text, &m, &msg), -1);
    assert_non_null(msg);
    if (!strstr(msg, needle)) fail_msg("expected '%s' in: %s", needle, msg);
    free(msg);
    rt_model_free(&m);
}

static void test_errors(void **state)
{
    (void)state;
    expect_error("name: bad-dot\nsource: test\ndense_features: 13\n"
                 "tables:\n  - {name: a, rows: 10, dim: 128}\n"
                 "layers:\n"
                 "  - {type: mlp, name: bottom, input: [dense], sizes: [64]}\n"
                 "  - {type: dot, name: interaction, input: [bottom, embeddings]}\n",
                 "model bad-dot: layer interaction: dot needs vectors of equal width");
    expect_error("name: no-seq\nsource: test\ndense_features: 0\n"
                 "tables:\n  - {name: a, rows: 10, dim: 8}\n"
                 "layers:\n"
                 "  - {type: hstu, name: h, input: [sequence], blocks: 1, heads: 1, d_qk: 2, "
                 "d_v: 2}\n",
                 "model no-seq: layer h: input 'sequence' but the model has no sequence tables");
    expect_error("name: no-dense\nsource: test\ndense_features: 0\n"
                 "tables:\n  - {name: a, rows: 10, dim: 8}\n"
                 "layers:\n  - {type: mlp, name: m, sizes: [4]}\n",
                 "layer m: input 'dense' but the model has dense_features: 0");
    expect_error(
        "name: flat-hstu\nsource: test\ndense_features: 4\n"
        "tables:\n  - {name: a, rows: 10, dim: 8}\n"
        "layers:\n"
        "  - {type: hstu, name: h, input: [dense], blocks: 1, heads: 1, d_qk: 2, d_v: 2}\n",
        "layer h: hstu needs a sequence input");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_dlrm_criteo),   cmocka_unit_test(test_dcn_criteo),
        cmocka_unit_test(test_hstu_tiny),     cmocka_unit_test(test_turbogr_sizes),
        cmocka_unit_test(test_catalog_costs), cmocka_unit_test(test_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
