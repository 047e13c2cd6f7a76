/* rectwin sim: predict one training iteration of a scenario with an engine. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli_args.h"
#include "commands.h"
#include "engines.h"
#include "pipeline.h"
#include "result.h"

enum { MAX_SETS = 256 };

static void usage(FILE *f)
{
    fprintf(f,
            "usage: rectwin sim SCENARIO [--engine NAME] [--out DIR] [--set path.to.key=value]...\n"
            "\n"
            "Predicts one training iteration and writes DIR/summary.json, DIR/ops.csv and\n"
            "DIR/trace.json (Chrome trace: open it in https://ui.perfetto.dev).\n"
            "  --engine NAME  simulation engine (default: the first listed):");
    for (int i = 0; rt_engines[i]; i++)
        fprintf(f, " %s", rt_engines[i]->name);
    fprintf(f, "\n"
               "  --out DIR      result directory (default results/<scenario>/<engine>/)\n"
               "  --set K=V      override any scenario key (repeatable)\n"
               "  --quiet        do not print the summary\n"
               "\nexample: DLRM on 2 DGX H100 nodes with the sptt plan, analytic engine\n"
               "  rectwin sim experiments/dlrm-criteo.yaml --engine analytic \\\n"
               "      --set topology.nodes=2 --set plan.name=sptt\n");
}

int rt_cmd_sim(int argc, char **argv)
{
    const char *sets[MAX_SETS];
    int n_sets = 0, quiet = 0;
    const char *path = NULL, *out = NULL;
    const rt_engine *engine = rt_engines[0];
    for (int i = 1; i < argc; i++) {
        int taken = rt_cli_take_set(argc, argv, &i, sets, &n_sets, MAX_SETS);
        if (taken < 0) return 2;
        if (taken) continue;
        const char *a = argv[i];
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            usage(stdout);
            return 0;
        } else if (!strcmp(a, "--quiet")) {
            quiet = 1;
        } else if (!strcmp(a, "--engine") || !strcmp(a, "--out")) {
            if (i + 1 >= argc) {
                fprintf(stderr, "rectwin sim: %s needs a value\n", a);
                return 2;
            }
            if (!strcmp(a, "--out")) {
                out = argv[++i];
            } else if (!(engine = rt_engine_find(argv[++i]))) {
                fprintf(stderr, "rectwin sim: unknown engine '%s'; allowed:", argv[i]);
                for (int k = 0; rt_engines[k]; k++)
                    fprintf(stderr, " %s", rt_engines[k]->name);
                fputc('\n', stderr);
                return 2;
            }
        } else if (a[0] == '-') {
            static const char *const options[] = {"--engine", "--out",  "--set",
                                                  "--quiet",  "--help", NULL};
            rt_cli_unknown("rectwin sim", "option", a, options);
            return 2;
        } else if (path) {
            fprintf(stderr, "rectwin sim: unexpected argument '%s'\n", a);
            usage(stderr);
            return 2;
        } else {
            path = a;
        }
    }
    if (!path) {
        usage(stderr);
        return 2;
    }
    rt_pipeline p;
    rt_result *r = NULL;
    int rc = 1;
    if (rt_pipeline_run(&p, path, sets, n_sets, stderr)) goto done;
    r = rt_result_new(p.graph, engine->name);
    if (!r) goto done;
    double t0 = rt_pipeline_now();
    if (engine->run(p.scenario, p.graph, r, stderr)) goto done;
    double engine_s = rt_pipeline_now() - t0;
    rt_result_finish(r, p.scenario);
    char dir[4096];
    if (out)
        snprintf(dir, sizeof dir, "%s", out);
    else
        snprintf(dir, sizeof dir, "results/%s/%s", p.scenario->name, engine->name);
    if (rt_result_write(r, p.scenario, dir, stderr)) goto done;
    if (!quiet) {
        rt_result_print(r, p.scenario, stdout);
        printf("\nwall time: build %.3f s, engine %.3f s; results in %s/\n", p.build_s, engine_s,
               dir);
    }
    rc = 0;
done:
    rt_result_free(r);
    rt_pipeline_free(&p);
    return rc;
}
