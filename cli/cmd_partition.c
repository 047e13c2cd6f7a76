/* rectwin partition: the Tower Partitioner (DMT) as a command. Input: an affinity matrix (CSV)
 * or a scenario, whose tables' statistics give the affinity (plans/partitioner.h says which).
 * Output: the tower of every feature, as the CSV that sptt's towers.assignment reads. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli_args.h"
#include "commands.h"
#include "partitioner.h"
#include "scenario.h"

enum { MAX_SETS = 256 };

static void usage(FILE *f)
{
    fprintf(f,
            "usage: rectwin partition (SCENARIO [--set K=V]... | --affinity FILE.csv) [options]\n"
            "\n"
            "Partitions features into balanced towers: affinity -> distance -> 2-D embedding\n"
            "(MDS + stress minimization) -> balanced constrained k-means.\n"
            "  --affinity FILE    square symmetric CSV of |cosine| affinities in [-1, 1]\n"
            "                     (absolute values are used); features are named by index\n"
            "  SCENARIO           affinity from the model's table statistics (log rows, dim,\n"
            "                     IDs per sample, Zipf alpha, sequence), features by table name\n"
            "  --towers K         number of towers (default: the scenario's nodes)\n"
            "  --strategy S       coherent (similar features together, default) | diverse\n"
            "  --max-min-factor F largest tower <= F x smallest (default 2)\n"
            "  --dims D           embedding dimensions (default 2)\n"
            "  --seed S           k-means++ seed (default 1)\n"
            "  --format csv|yaml  csv (default): 'feature,tower' lines, the file sptt's\n"
            "                     plan.towers.assignment reads; yaml: the towers as lists\n"
            "  --set K=V          override a scenario key (repeatable)\n"
            "\nexample: 8 coherent towers for DLRM's 26 features, as sptt's assignment file\n"
            "  rectwin partition experiments/dlrm-criteo.yaml --towers 8 > towers.csv\n");
}

static int parse_number(const char *opt, const char *v, double lo, double hi, double *out)
{
    char *end;
    double x = v ? strtod(v, &end) : 0;
    /* NaN compares false with both bounds: it must be refused by name. */
    if (!v || !*v || *end || isnan(x) || x < lo || x > hi) {
        fprintf(stderr, "rectwin partition: %s needs a number in [%g, %g], got '%s'\n", opt, lo, hi,
                v ? v : "");
        return -1;
    }
    *out = x;
    return 0;
}

static void print_result(const int *group, int n, int k, const rt_model *m, int yaml)
{
    if (!yaml) printf("feature,tower\n");
    for (int i = 0; !yaml && i < n; i++) {
        if (m)
            printf("%s,%d\n", m->tables[i].name, group[i]);
        else
            printf("%d,%d\n", i, group[i]);
    }
    if (yaml) printf("towers:\n");
    for (int t = 0; yaml && t < k; t++) {
        printf("  - [");
        for (int i = 0, first = 1; i < n; i++) {
            if (group[i] != t) continue;
            if (m)
                printf("%s%s", first ? "" : ", ", m->tables[i].name);
            else
                printf("%s%d", first ? "" : ", ", i);
            first = 0;
        }
        printf("]\n");
    }
}

typedef struct partition_args {
    const char *sets[MAX_SETS];
    int n_sets, yaml;
    const char *path, *affinity;
    double towers, factor, dims, seed;
    int strategy;
} partition_args;

static int is_option(const char *o)
{
    static const char *const known[] = {"--affinity", "--towers",   "--max-min-factor", "--dims",
                                        "--seed",     "--strategy", "--format",         NULL};
    for (int i = 0; known[i]; i++)
        if (!strcmp(o, known[i])) return 1;
    return 0;
}

/* Returns 0, 1 after --help, or -1 on a bad argument. */
static int parse_args(int argc, char **argv, partition_args *a)
{
    for (int i = 1; i < argc; i++) {
        int taken = rt_cli_take_set(argc, argv, &i, a->sets, &a->n_sets, MAX_SETS);
        if (taken < 0) return -1;
        if (taken) continue;
        const char *o = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        int rc = 0;
        if (!strcmp(o, "--help") || !strcmp(o, "-h")) {
            usage(stdout);
            return 1;
        } else if (!strcmp(o, "--affinity") && v)
            a->affinity = argv[++i];
        else if (!strcmp(o, "--towers"))
            rc = parse_number(o, v, 1, 1 << 20, &a->towers), i++;
        else if (!strcmp(o, "--max-min-factor"))
            rc = parse_number(o, v, 1, 1e6, &a->factor), i++;
        else if (!strcmp(o, "--dims"))
            rc = parse_number(o, v, 1, 16, &a->dims), i++;
        else if (!strcmp(o, "--seed"))
            rc = parse_number(o, v, 0, 4e9, &a->seed), i++;
        else if (!strcmp(o, "--strategy") && v && (!strcmp(v, "coherent") || !strcmp(v, "diverse")))
            a->strategy = !strcmp(argv[++i], "diverse");
        else if (!strcmp(o, "--format") && v && (!strcmp(v, "csv") || !strcmp(v, "yaml")))
            a->yaml = !strcmp(argv[++i], "yaml");
        else if (o[0] != '-' && !a->path)
            a->path = o;
        else if (o[0] == '-' && !is_option(o)) {
            static const char *const options[] = {
                "--affinity", "--towers", "--max-min-factor", "--dims", "--seed", "--strategy",
                "--format",   "--set",    "--help",           NULL};
            rt_cli_unknown("rectwin partition", "option", o, options);
            return -1;
        } else {
            fprintf(stderr, "rectwin partition: unexpected or incomplete argument '%s'\n", o);
            return -1;
        }
        if (rc) return -1;
    }
    if (!a->path == !a->affinity) {
        fprintf(stderr, "rectwin partition: give either a SCENARIO or --affinity FILE\n");
        return -1;
    }
    return 0;
}

int rt_cmd_partition(int argc, char **argv)
{
    partition_args a = {.factor = 2, .dims = 2, .seed = 1};
    int rc = parse_args(argc, argv, &a);
    if (rc) {
        if (rc < 0) usage(stderr);
        return rc < 0 ? 2 : 0;
    }
    rt_scenario *s = NULL;
    double *aff = NULL;
    int n = 0, *group = NULL, k = (int)a.towers;
    rc = 1;
    if (a.affinity) {
        if (rt_partition_read_csv(a.affinity, &aff, &n, stderr)) goto out;
    } else {
        if (!(s = rt_scenario_load(a.path, a.sets, a.n_sets, stderr))) goto out;
        n = s->model.n_tables;
        if (!k) k = s->topology.nodes;
        aff = malloc(sizeof(double) * (size_t)n * (size_t)n);
        if (!aff) goto out;
        rt_partition_model_affinity(&s->model,
                                    s->workload.has_pooling ? &s->workload.pooling : NULL,
                                    s->workload.has_ids ? &s->workload.ids : NULL, aff);
    }
    if (!k) {
        fprintf(stderr, "rectwin partition: --towers is required with --affinity\n");
        goto out;
    }
    group = malloc(sizeof(int) * (size_t)n);
    rt_partition_opts po = {
        k, (rt_part_strategy)a.strategy, a.factor, (int)a.dims, (uint64_t)a.seed, 0};
    if (!group || rt_partition(aff, n, &po, group, stderr)) goto out;
    print_result(group, n, k, s ? &s->model : NULL, a.yaml);
    rc = 0;
out:
    free(group);
    free(aff);
    rt_scenario_free(s);
    return rc;
}
