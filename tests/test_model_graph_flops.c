/* For every catalog model (each .yaml of models/), the dense FLOPs the plan's graph charges equal
 * the model's own FLOPs per sample times the samples of the iteration. The graph evaluates each
 * layer's per-sample polynomial at the sample's token count, so this pins the token count: a
 * model with several sequence tables concatenates them into one token (models/README.md), and
 * charging the sum of their lengths made mtgr-small's graph cost about 5x its model. */
#include <dirent.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "pipeline.h"

#define TINY RT_SOURCE_DIR "/tests/data/tiny.yaml"
#define MODELS RT_SOURCE_DIR "/models"

static int by_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The catalog's model files, sorted, NULL-terminated. */
static char **catalog(int *n)
{
    DIR *d = opendir(MODELS);
    assert_non_null(d);
    char **names = NULL;
    *n = 0;
    for (struct dirent *e; (e = readdir(d));) {
        size_t len = strlen(e->d_name);
        if (len < 6 || strcmp(e->d_name + len - 5, ".yaml") != 0) continue;
        names = realloc(names, sizeof *names * (size_t)(*n + 2));
        assert_non_null(names);
        names[(*n)++] = strdup(e->d_name);
    }
    closedir(d);
    assert_true(*n > 0);
    qsort(names, (size_t)*n, sizeof *names, by_name);
    names[*n] = NULL;
    return names;
}

/* Dense layer FLOPs of the graph (forward and backward kernels; the loss is not a layer),
 * summed over the ranks each representative stands for. */
static double graph_layer_flops(const rt_graph *g)
{
    double total = 0;
    for (int op = 0; op < g->n_ops; op++) {
        rt_kernel_kind k = g->ops[op].kernel;
        if (g->ops[op].type != RT_OP_KERNEL || (k != RT_K_DENSE_FWD && k != RT_K_DENSE_BWD))
            continue;
        for (int r = 0; r < g->n_reps; r++)
            total += g->rep_weight[r] * rt_graph_cost(g, op, r)->flops;
    }
    return total;
}

static void check_model(const char *file, const char *plan)
{
    char model_set[1024], plan_set[64];
    snprintf(model_set, sizeof model_set, "model.file=%s/%s", MODELS, file);
    snprintf(plan_set, sizeof plan_set, "plan.name=%s", plan);
    /* Sequences at the model's nominal length (the tiny scenario sets no seq_len, so the
     * workload draws the model's seq_len as a fixed length); small batch; 2 x 2 ranks; the
     * catalog's production tables do not fit 4 GPUs, which is not what is tested. */
    const char *sets[] = {model_set, plan_set, "plan.memory=warn", "workload.batch_per_rank=3",
                          "workload.mode=exact"};
    FILE *quiet = fopen("/dev/null", "w");
    assert_non_null(quiet);
    rt_pipeline p;
    int rc = rt_pipeline_run(&p, TINY, sets, 5, quiet);
    fclose(quiet);
    if (rc) {
        rt_pipeline_free(&p);
        fail_msg("%s (plan %s): the pipeline failed", file, plan);
    }
    const rt_model *m = &p.scenario->model;
    double L = m->seq_len > 0 ? m->seq_len : 1;
    double per_sample = rt_poly_eval(m->fwd_flops, L) + rt_poly_eval(m->bwd_flops, L);
    double samples = 3.0 * p.graph->world;
    double want = per_sample * samples;
    double got = graph_layer_flops(p.graph);
    if (!(fabs(got - want) <= 1e-9 * want) || !(fabs(p.graph->model_flops - want) <= 1e-9 * want))
        fail_msg("%s (plan %s): graph layer FLOPs %.6e and model_flops %.6e, model %.6e "
                 "(%.6e per sample x %.0f samples)",
                 file, plan, got, p.graph->model_flops, want, per_sample, samples);
    rt_pipeline_free(&p);
}

static void every_catalog_model(void **state)
{
    (void)state;
    int n;
    char **names = catalog(&n);
    for (int i = 0; i < n; i++) {
        check_model(names[i], "flat");
        free(names[i]);
    }
    free(names);
}

/* The tokens do not depend on the plan: the other plans build the dense side the same way. */
static void other_plans_on_a_multi_sequence_model(void **state)
{
    (void)state;
    check_model("mtgr-small.yaml", "fused");
    check_model("mtgr-small.yaml", "hsp");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(every_catalog_model),
        cmocka_unit_test(other_plans_on_a_multi_sequence_model),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
