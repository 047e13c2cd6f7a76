/* rectwin plan: what a scenario costs per sample and what its op graph moves, per phase. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli_args.h"
#include "commands.h"
#include "json.h"
#include "memory.h"
#include "pipeline.h"

enum { MAX_SETS = 256 };

static void usage(FILE *f)
{
    fprintf(f,
            "usage: rectwin plan SCENARIO [--set path.to.key=value]... [--json]\n"
            "\n"
            "Prints the model's FLOPs per sample (forward, backward, train = forward + backward,\n"
            "dense part), its dense and embedding parameters, and the op graph: ops per phase\n"
            "with their FLOPs and bytes (kernels: minimum HBM bytes; collectives: bytes sent),\n"
            "summed over all ranks and per rank.\n"
            "  --set K=V   override any scenario key (repeatable)\n"
            "  --json      one JSON object instead of text\n"
            "\nexample: what DLRM-DCN costs per sample, and its op graph under the hsp plan\n"
            "  rectwin plan experiments/dcn-criteo.yaml --set plan.name=hsp\n");
}

typedef struct phase_total {
    int ops;
    double flops, bytes; /* all ranks */
} phase_total;

static void phase_totals(const rt_graph *g, phase_total *t)
{
    memset(t, 0, sizeof *t * (size_t)g->n_phases);
    for (int o = 0; o < g->n_ops; o++) {
        phase_total *pt = &t[g->ops[o].phase];
        pt->ops++;
        for (int r = 0; r < g->n_reps; r++) {
            const rt_op_cost *c = rt_graph_cost(g, o, r);
            pt->flops += g->rep_weight[r] * c->flops;
            pt->bytes += g->rep_weight[r] * c->bytes;
        }
    }
}

static double train_flops(const rt_model *m)
{
    double L = m->seq_len ? m->seq_len : 1;
    return rt_poly_eval(m->fwd_flops, L) + rt_poly_eval(m->bwd_flops, L);
}

static void print_json(const rt_pipeline *p, const phase_total *t)
{
    const rt_scenario *s = p->scenario;
    const rt_model *m = &s->model;
    const rt_graph *g = p->graph;
    double L = m->seq_len ? m->seq_len : 1;
    rt_json j;
    rt_json_init(&j, stdout, 1);
    rt_json_begin_object(&j, NULL);
    rt_json_string(&j, "scenario", s->name);
    rt_json_begin_object(&j, "model");
    rt_json_string(&j, "name", m->name);
    rt_json_int(&j, "tables", m->n_tables);
    rt_json_int(&j, "seq_len", m->seq_len);
    rt_json_begin_object(&j, "flops_per_sample");
    rt_json_number(&j, "forward", rt_poly_eval(m->fwd_flops, L));
    rt_json_number(&j, "backward", rt_poly_eval(m->bwd_flops, L));
    rt_json_number(&j, "train", train_flops(m));
    rt_json_end_object(&j);
    rt_json_begin_object(&j, "params");
    rt_json_number(&j, "dense", m->dense_params);
    rt_json_number(&j, "embedding", m->embedding_params);
    rt_json_end_object(&j);
    rt_json_begin_array(&j, "layers");
    for (int l = 0; l < m->n_layers; l++) {
        const rt_layer *ly = &m->layers[l];
        rt_json_begin_object(&j, NULL);
        rt_json_string(&j, "name", ly->name);
        rt_json_string(&j, "type", rt_layer_kind_names[ly->kind]);
        rt_json_number(&j, "forward_flops", rt_poly_eval(ly->fwd_flops, L));
        rt_json_number(&j, "backward_flops", rt_poly_eval(ly->bwd_flops, L));
        rt_json_number(&j, "params", ly->params);
        rt_json_int(&j, "out_width", (long long)ly->out_vectors * ly->out_width);
        rt_json_end_object(&j);
    }
    rt_json_end_array(&j);
    rt_json_end_object(&j);
    rt_json_begin_object(&j, "graph");
    rt_json_int(&j, "ranks", g->world);
    rt_json_int(&j, "representatives", g->n_reps);
    rt_json_string(&j, "workload_mode", p->workload->exact ? "exact" : "statistical");
    rt_json_int(&j, "ops_per_rank", g->n_ops);
    rt_json_number(&j, "model_flops_per_iteration", g->model_flops);
    rt_memory_report mem;
    rt_memory_report_of(g, s, p->workload, &mem);
    rt_json_number(&j, "peak_hbm_bytes", mem.total);
    rt_json_number(&j, "hbm_capacity_bytes", mem.capacity);
    rt_json_bool(&j, "hbm_fits", mem.total <= mem.capacity);
    rt_json_begin_object(&j, "phases");
    for (int i = 0; i < g->n_phases; i++) {
        rt_json_begin_object(&j, g->phases[i]);
        rt_json_int(&j, "ops", t[i].ops);
        rt_json_number(&j, "flops", t[i].flops);
        rt_json_number(&j, "bytes", t[i].bytes);
        rt_json_number(&j, "bytes_per_rank", t[i].bytes / g->world);
        rt_json_end_object(&j);
    }
    rt_json_end_object(&j);
    rt_json_end_object(&j);
    rt_json_end_object(&j);
    rt_json_finish(&j);
}

static void print_text(const rt_pipeline *p, const phase_total *t)
{
    const rt_scenario *s = p->scenario;
    const rt_model *m = &s->model;
    const rt_graph *g = p->graph;
    double L = m->seq_len ? m->seq_len : 1;
    printf("scenario %s: model %s on %d x %s (%d ranks), plan %s\n", s->name, m->name,
           s->topology.nodes, s->topology.name, g->world, s->plan.name);
    printf("\nmodel: %d tables, %d layers%s\n", m->n_tables, m->n_layers,
           m->seq_len ? " (costs at the nominal seq_len)" : "");
    printf("  %-16s %-6s %14s %14s %14s\n", "layer", "type", "fwd FLOP/smp", "bwd FLOP/smp",
           "params");
    for (int l = 0; l < m->n_layers; l++) {
        const rt_layer *ly = &m->layers[l];
        printf("  %-16s %-6s %14.4g %14.4g %14.4g\n", ly->name, rt_layer_kind_names[ly->kind],
               rt_poly_eval(ly->fwd_flops, L), rt_poly_eval(ly->bwd_flops, L), ly->params);
    }
    printf("  FLOPs per sample: forward %.6g, backward %.6g, train %.6g\n",
           rt_poly_eval(m->fwd_flops, L), rt_poly_eval(m->bwd_flops, L), train_flops(m));
    printf("  parameters: dense %.6g, embedding %.6g\n", m->dense_params, m->embedding_params);
    printf("\nop graph: %d ops per rank, workload %s (%d representative ranks), built in %.3f s\n",
           g->n_ops, p->workload->exact ? "exact" : "statistical", g->n_reps, p->build_s);
    printf("  %-20s %4s %14s %14s %14s\n", "phase", "ops", "FLOPs (all)", "bytes (all)",
           "bytes/rank");
    for (int i = 0; i < g->n_phases; i++)
        printf("  %-20s %4d %14.4g %14.4g %14.4g\n", g->phases[i], t[i].ops, t[i].flops, t[i].bytes,
               t[i].bytes / g->world);
    rt_memory_report mem;
    rt_memory_report_of(g, s, p->workload, &mem);
    printf("\nmemory (plan.memory: %s)\n", rt_memory_policy_names[s->plan.memory]);
    rt_memory_print(&mem, stdout);
}

int rt_cmd_plan(int argc, char **argv)
{
    const char *sets[MAX_SETS];
    int n_sets = 0, json = 0;
    const char *path = NULL;
    for (int i = 1; i < argc; i++) {
        int taken = rt_cli_take_set(argc, argv, &i, sets, &n_sets, MAX_SETS);
        if (taken < 0) return 2;
        if (taken) continue;
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            usage(stdout);
            return 0;
        }
        if (!strcmp(argv[i], "--json"))
            json = 1;
        else if (argv[i][0] == '-') {
            static const char *const options[] = {"--set", "--json", "--help", NULL};
            rt_cli_unknown("rectwin plan", "option", argv[i], options);
            return 2;
        } else if (path) {
            fprintf(stderr, "rectwin plan: unexpected argument '%s'\n", argv[i]);
            usage(stderr);
            return 2;
        } else {
            path = argv[i];
        }
    }
    if (!path) {
        usage(stderr);
        return 2;
    }
    rt_pipeline p;
    if (rt_pipeline_run(&p, path, sets, n_sets, stderr)) {
        rt_pipeline_free(&p);
        return 1;
    }
    phase_total *t = calloc((size_t)p.graph->n_phases + 1, sizeof *t);
    if (!t) {
        rt_pipeline_free(&p);
        return 1;
    }
    phase_totals(p.graph, t);
    if (json)
        print_json(&p, t);
    else
        print_text(&p, t);
    free(t);
    rt_pipeline_free(&p);
    return 0;
}
