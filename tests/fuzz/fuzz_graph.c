/* Fuzz target: the graph builder and the analytic engine on small random scenarios. The input
 * picks a base scenario of tests/data and, byte by byte, a value (or nothing) for each knob
 * below; what follows the knobs is one free-form --set line. A scenario that builds must give
 * a well-formed graph and sane metrics; anything else is refused with a message. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engines.h"
#include "fuzz_input.h"
#include "pipeline.h"
#include "result.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* A base scenario of tests/data, with what decides which knobs apply to it. */
typedef struct base {
    const char *file;
    const char *plan; /* its plan; sptt-tiny keeps sptt (its towers key belongs to sptt) */
    int jagged;       /* has sequence features: the balance knob applies */
    int gpu;          /* on a GPU topology: reduced dense precisions apply */
} base;

static const base bases[] = {
    {"tiny", "flat", 0, 1},           {"dedup", "flat", 0, 1},        {"hsp-tiny", "hsp", 0, 1},
    {"sptt-tiny", "sptt", 0, 1},      {"balance-tiny", "flat", 1, 1}, {"exec-tiny", "flat", 0, 0},
    {"exec-tiny-hstu", "flat", 1, 0},
};

typedef enum { ANY, PLAN_NAME, DEDUP_PLANS, FUSED, HSP, JAGGED, GPU } knob_scope;

typedef struct knob {
    const char *key;
    knob_scope scope;
    const char *values[6];
} knob;

/* Small counts on purpose: exact-mode graphs of a few ranks keep each run in milliseconds.
 * Knobs apply only where the scenario allows the key, so inputs reach the graph builder
 * rather than the key checks (the scenario target covers those). */
static const knob knobs[] = {
    {"topology.nodes", ANY, {"1", "2", "3", "4", "8"}},
    {"topology.node.devices", GPU, {"1", "2", "4", "8"}},
    {"plan.name", PLAN_NAME, {"flat", "fused", "sptt", "hsp"}},
    {"plan.sharding", ANY, {"table_wise", "row_wise", "column_wise"}},
    {"plan.dedup", DEDUP_PLANS, {"none", "comm", "lookup", "two_stage"}},
    {"plan.merge", DEDUP_PLANS, {"true", "false"}},
    {"plan.overlap", ANY, {"sync", "pipeline", "semi_async"}},
    {"plan.balance", JAGGED, {"none", "dynamic_batching", "token_realloc"}},
    {"plan.grouping", FUSED, {"spec_groups", "per_feature", "all"}},
    {"plan.variant", FUSED, {"fused", "tfra_fused"}},
    {"plan.group_size", HSP, {"1", "2", "4"}},
    {"plan.precision.embedding", ANY, {"fp32", "fp16", "bf16"}},
    {"plan.precision.comm", ANY, {"fp32", "fp16", "bf16", "fp8"}},
    {"plan.precision.dense", GPU, {"fp32", "tf32", "bf16", "fp16"}},
    {"workload.batch_per_rank", ANY, {"1", "2", "7", "16", "64"}},
    {"workload.mode", ANY, {"auto", "exact", "statistical"}},
    {"workload.seed", ANY, {"1", "2", "3"}},
};
enum { N_KNOBS = sizeof knobs / sizeof knobs[0], MAX_FREE = 512 };

static int n_values(const knob *k)
{
    int n = 0;
    while (n < 6 && k->values[n])
        n++;
    return n;
}

/* The graph is a DAG in insertion order with finite, non-negative costs, and an AlltoAllv's
 * total is the sum of its per-peer bytes. */
static void check_graph(const rt_graph *g)
{
    double weight = 0;
    for (int r = 0; r < g->n_reps; r++)
        weight += g->rep_weight[r];
    if (fabs(weight - g->world) > 1e-6 * g->world) abort();
    for (int o = 0; o < g->n_ops; o++) {
        const rt_op *op = &g->ops[o];
        for (int d = 0; d < op->n_deps; d++) {
            int dep = rt_graph_deps(g, o)[d];
            if (dep < 0 || dep >= o) abort();
        }
        for (int r = 0; r < g->n_reps; r++) {
            const rt_op_cost *c = rt_graph_cost(g, o, r);
            if (!(c->flops >= 0 && c->bytes >= 0 && c->recv_bytes >= 0)) abort();
            if (!isfinite(c->flops) || !isfinite(c->bytes) || !isfinite(c->recv_bytes)) abort();
            if (op->type != RT_OP_COLLECTIVE || op->coll != RT_COLL_ALLTOALLV || !c->send) continue;
            double sum = 0;
            for (int k = 0; k < op->group.size; k++)
                sum += (double)c->send[k];
            if (fabs(sum - c->bytes) > 1e-9 * (c->bytes + 1)) abort();
        }
    }
}

/* No metric may claim more than the hardware can do or be undefined. */
static void check_result(const rt_result *r)
{
    const double eps = 1e-6;
    if (!(r->iteration_time_s > 0) || !isfinite(r->iteration_time_s)) abort();
    if (!(r->mfu >= 0 && r->mfu <= 1 + eps)) abort();
    if (!(r->mbu >= 0 && r->mbu <= 1 + eps)) abort();
    if (!(r->comm_time_s >= 0) || !(r->exposed_comm_s >= 0)) abort();
    if (r->exposed_comm_s > r->iteration_time_s * (1 + eps)) abort();
}

static int applies(const knob *k, const base *b, const char *plan)
{
    switch (k->scope) {
    case ANY:
        return 1;
    case PLAN_NAME:
        return strcmp(b->plan, "sptt") != 0;
    case DEDUP_PLANS:
        return !strcmp(plan, "flat") || !strcmp(plan, "fused");
    case FUSED:
        return !strcmp(plan, "fused");
    case HSP:
        return !strcmp(plan, "hsp");
    case JAGGED:
        return b->jagged;
    case GPU:
        return b->gpu;
    }
    return 0;
}

static int take_sets(const uint8_t *data, size_t size, const base *b, const char **sets,
                     char *set_buf, char *free_set)
{
    int n = 0;
    size_t at = 1;
    const char *plan = b->plan;
    for (int k = 0; k < N_KNOBS && at < size; k++) {
        if (!applies(&knobs[k], b, plan)) continue;
        int nv = n_values(&knobs[k]);
        int pick = data[at++] % (nv + 1);
        if (pick == nv) continue; /* the base scenario's own value */
        if (knobs[k].scope == PLAN_NAME) plan = knobs[k].values[pick];
        char *line = set_buf + (size_t)n * 64;
        snprintf(line, 64, "%s=%s", knobs[k].key, knobs[k].values[pick]);
        sets[n++] = line;
    }
    if (at < size) {
        size_t len = size - at < MAX_FREE - 1 ? size - at : MAX_FREE - 1;
        memcpy(free_set, data + at, len);
        free_set[len] = '\0';
        if (strchr(free_set, '=')) sets[n++] = free_set;
    }
    return n;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1) return 0;
    char path[512], set_buf[N_KNOBS * 64], free_set[MAX_FREE];
    const char *sets[N_KNOBS + 1];
    const base *b = &bases[data[0] % (sizeof bases / sizeof bases[0])];
    snprintf(path, sizeof path, "%s/tests/data/%s.yaml", RT_SOURCE_DIR, b->file);
    int n_sets = take_sets(data, size, b, sets, set_buf, free_set);
    rt_pipeline p;
    if (rt_pipeline_run(&p, path, sets, n_sets, rt_fuzz_devnull()) == 0) {
        check_graph(p.graph);
        rt_result *r = rt_result_new(p.graph, "analytic");
        if (!r) abort();
        if (rt_engine_find("analytic")->run(p.scenario, p.graph, r, rt_fuzz_devnull()) == 0) {
            rt_result_finish(r, p.scenario);
            check_result(r);
        }
        rt_result_free(r);
    }
    rt_pipeline_free(&p);
    return 0;
}
