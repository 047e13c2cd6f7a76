/* rectwin compare: a predicted result directory against a measured one (DESIGN.md section 8),
 * as text or JSON. The reading and matching are cli/comparison.c's. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli_args.h"
#include "commands.h"
#include "comparison.h"
#include "json.h"

enum { DEFAULT_TOP = 10, MAX_TOP = 1000000 };

/* ---- text output ---------------------------------------------------------------------- */

static const char *pct(double rel, char *buf, size_t size)
{
    if (isnan(rel)) return "n/a";
    snprintf(buf, size, "%+.2f%%", 100.0 * rel);
    return buf;
}

static const char *num(double x, char *buf, size_t size)
{
    if (isnan(x)) return "-";
    snprintf(buf, size, "%.6e", x);
    return buf;
}

static void print_headline(const rt_comparison *c)
{
    char a[32], b[32], e[32];
    printf("%-20s %14s %14s %10s\n", "metric", "predicted", "measured", "error");
    for (int i = 0; i < RT_SUMMARY_N_METRICS; i++) {
        double p = c->pred.metric[i], m = c->meas.metric[i];
        printf("%-20s %14s %14s %10s\n", rt_summary_metric_names[i], num(p, a, sizeof a),
               num(m, b, sizeof b), pct(rt_cmp_rel_err(p, m), e, sizeof e));
    }
}

static void print_phases(const rt_comparison *c)
{
    char a[32], b[32], e[32];
    printf("\n%-20s %14s %14s %10s\n", "phase", "predicted s", "measured s", "error");
    for (int i = 0; i < c->n_phases; i++) {
        const rt_cmp_phase *r = &c->phases[i];
        printf("%-20s %14s %14s %10s\n", r->name, num(r->pred, a, sizeof a),
               num(r->meas, b, sizeof b), pct(r->rel, e, sizeof e));
    }
}

/* "name", or "name#k" for the k-th (from 1) repeat of a (rank, name, phase) key. */
static const char *op_label(const rt_op_row *r, char *buf, size_t size)
{
    if (r->occ == 0) return r->name[0] ? r->name : "(unnamed)";
    snprintf(buf, size, "%s#%d", r->name[0] ? r->name : "(unnamed)", r->occ + 1);
    return buf;
}

static void print_op_pair(const rt_cmp_pair *x, int with_abs)
{
    char l[256], a[32], b[32], d[32], e[32];
    printf("%5ld  %-28s %-20s %14s %14s", x->p->rank, op_label(x->p, l, sizeof l), x->p->phase,
           num(x->p->dur, a, sizeof a), num(x->m->dur, b, sizeof b));
    if (with_abs) printf(" %14s", num(x->abs_err_s, d, sizeof d));
    printf(" %10s\n", pct(x->rel, e, sizeof e));
}

static void print_ops(const rt_comparison *c)
{
    printf("\nops: %ld matched by (rank, name, phase), repeats in file order; %ld unmatched "
           "(listed at the end)\n",
           c->n_pair, c->n_pred_only + c->n_meas_only);
    printf("%5s  %-28s %-20s %14s %14s %10s\n", "rank", "op", "phase", "predicted s", "measured s",
           "error");
    for (long i = 0; i < c->n_pair; i++)
        print_op_pair(&c->pair[i], 0);
}

static void print_mape(const char *what, double value, long used, long total)
{
    char e[32];
    if (isnan(value))
        snprintf(e, sizeof e, "n/a");
    else
        snprintf(e, sizeof e, "%.2f%%", value);
    printf("MAPE over %s: %s (%ld of %ld", what, e, used, total);
    printf(total > used ? "; the others have no relative error: measured 0 or missing)\n" : ")\n");
}

static void print_worst(const rt_comparison *c)
{
    printf("\nworst %ld ops by |predicted - measured|\n", c->n_worst);
    printf("%5s  %-28s %-20s %14s %14s %14s %10s\n", "rank", "op", "phase", "predicted s",
           "measured s", "abs error s", "error");
    for (long i = 0; i < c->n_worst; i++)
        print_op_pair(c->worst[i], 1);
}

static void print_unmatched_side(const char *side, const rt_op_row *const *rows, long n)
{
    char l[256], a[32];
    for (long i = 0; i < n; i++)
        printf("  %-9s %5ld  %-28s %-20s %14s\n", side, rows[i]->rank,
               op_label(rows[i], l, sizeof l), rows[i]->phase, num(rows[i]->dur, a, sizeof a));
}

static void print_unmatched(const rt_comparison *c)
{
    printf("\nunmatched ops: %ld predicted only, %ld measured only\n", c->n_pred_only,
           c->n_meas_only);
    print_unmatched_side("predicted", c->pred_only, c->n_pred_only);
    print_unmatched_side("measured", c->meas_only, c->n_meas_only);
}

static void print_text(const rt_comparison *c)
{
    printf("predicted: %s (engine %s)\nmeasured:  %s (engine %s)\n", c->pred_dir, c->pred.engine,
           c->meas_dir, c->meas.engine);
    printf("error = (predicted - measured) / measured\n\n");
    print_headline(c);
    print_phases(c);
    print_ops(c);
    printf("\n");
    print_mape("ops", c->ops_mape, c->ops_mape_n, c->n_pair);
    print_mape("phases", c->phases_mape, c->phases_mape_n, c->n_phases);
    print_worst(c);
    print_unmatched(c);
}

/* ---- JSON output ---------------------------------------------------------------------- */

static void json_op_key(rt_json *j, const rt_op_row *r)
{
    rt_json_int(j, "rank", r->rank);
    rt_json_string(j, "name", r->name);
    rt_json_string(j, "phase", r->phase);
    rt_json_int(j, "occurrence", r->occ + 1); /* as "name#k" in the text */
}

static void json_headline(rt_json *j, const rt_comparison *c)
{
    rt_json_begin_object(j, "headline");
    for (int i = 0; i < RT_SUMMARY_N_METRICS; i++) {
        double p = c->pred.metric[i], m = c->meas.metric[i];
        rt_json_begin_object(j, rt_summary_metric_names[i]);
        rt_json_number(j, "pred", p);
        rt_json_number(j, "meas", m);
        rt_json_number(j, "rel_err", rt_cmp_rel_err(p, m));
        rt_json_end_object(j);
    }
    rt_json_end_object(j);
}

static void json_phases(rt_json *j, const rt_comparison *c)
{
    rt_json_begin_array(j, "phases");
    for (int i = 0; i < c->n_phases; i++) {
        rt_json_begin_object(j, NULL);
        rt_json_string(j, "phase", c->phases[i].name);
        rt_json_number(j, "pred", c->phases[i].pred);
        rt_json_number(j, "meas", c->phases[i].meas);
        rt_json_number(j, "rel_err", c->phases[i].rel);
        rt_json_end_object(j);
    }
    rt_json_end_array(j);
}

static void json_worst(rt_json *j, const rt_comparison *c)
{
    rt_json_begin_array(j, "worst_ops");
    for (long i = 0; i < c->n_worst; i++) {
        const rt_cmp_pair *x = c->worst[i];
        rt_json_begin_object(j, NULL);
        json_op_key(j, x->p);
        rt_json_number(j, "pred", x->p->dur);
        rt_json_number(j, "meas", x->m->dur);
        rt_json_number(j, "abs_err_s", x->abs_err_s);
        rt_json_number(j, "rel_err", x->rel);
        rt_json_end_object(j);
    }
    rt_json_end_array(j);
}

static void json_unmatched_side(rt_json *j, const char *key, const rt_op_row *const *rows, long n)
{
    rt_json_begin_array(j, key);
    for (long i = 0; i < n; i++) {
        rt_json_begin_object(j, NULL);
        json_op_key(j, rows[i]);
        rt_json_number(j, "dur_s", rows[i]->dur);
        rt_json_end_object(j);
    }
    rt_json_end_array(j);
}

static void print_json(const rt_comparison *c)
{
    rt_json j;
    rt_json_init(&j, stdout, 1);
    rt_json_begin_object(&j, NULL);
    rt_json_string(&j, "pred_dir", c->pred_dir);
    rt_json_string(&j, "meas_dir", c->meas_dir);
    rt_json_string(&j, "pred_engine", c->pred.engine);
    rt_json_string(&j, "meas_engine", c->meas.engine);
    json_headline(&j, c);
    json_phases(&j, c);
    rt_json_int(&j, "ops_matched", c->n_pair);
    rt_json_number(&j, "ops_mape", c->ops_mape);
    rt_json_number(&j, "phases_mape", c->phases_mape);
    json_worst(&j, c);
    rt_json_begin_object(&j, "unmatched");
    json_unmatched_side(&j, "pred_only", c->pred_only, c->n_pred_only);
    json_unmatched_side(&j, "meas_only", c->meas_only, c->n_meas_only);
    rt_json_end_object(&j);
    rt_json_end_object(&j);
    rt_json_finish(&j);
}

/* ---- command line --------------------------------------------------------------------- */

static void usage(FILE *f)
{
    fprintf(f,
            "usage: rectwin compare PRED_DIR MEAS_DIR [--json] [--top N]\n"
            "\n"
            "Compares two result directories (summary.json and ops.csv, from 'rectwin sim' or\n"
            "rectwin-exec): headline metrics, per-phase seconds and per-op durations\n"
            "(end_s - start_s), with error = (predicted - measured) / measured; n/a where\n"
            "the measured value is 0 or missing. Ops are matched by (rank, name, phase), a\n"
            "repeated key by order of appearance (shown as name#2, name#3, ...); ops on one\n"
            "side only are counted and listed.\n"
            "Then MAPE over ops and over phases, and the N ops with the largest\n"
            "|predicted - measured| in seconds.\n"
            "  --json    one JSON object: headline, phases, ops_mape, phases_mape (percent),\n"
            "            worst_ops, unmatched; rel_err values are fractions, not percent;\n"
            "            n/a is null; occurrence counts repeats of an op's key from 1\n"
            "  --top N   how many worst ops to list (default %d)\n"
            "\nexample: a prediction against a 4-rank CPU run of the same scenario\n"
            "  rectwin compare results/exec-cpu/analytic results/exec-cpu/exec --top 5\n",
            DEFAULT_TOP);
}

static int parse_top(const char *v, long *top)
{
    char *end;
    errno = 0;
    long n = v && *v >= '0' && *v <= '9' ? strtol(v, &end, 10) : -1;
    if (n < 0 || *end || errno == ERANGE || n > MAX_TOP) {
        fprintf(stderr, "rectwin compare: --top needs an integer in [0, %d], got '%s'\n", MAX_TOP,
                v ? v : "");
        return -1;
    }
    *top = n;
    return 0;
}

typedef struct compare_args {
    const char *dir[2];
    int n_dirs, json;
    long top;
} compare_args;

/* Returns -1 to go on, else the exit status (0 after --help, 2 on bad usage). */
static int parse_args(int argc, char **argv, compare_args *a)
{
    *a = (compare_args){.top = DEFAULT_TOP};
    for (int i = 1; i < argc; i++) {
        const char *s = argv[i];
        if (!strcmp(s, "--help") || !strcmp(s, "-h")) {
            usage(stdout);
            return 0;
        } else if (!strcmp(s, "--json")) {
            a->json = 1;
        } else if (!strcmp(s, "--top") || !strncmp(s, "--top=", 6)) {
            const char *v = s[5] == '=' ? s + 6 : i + 1 < argc ? argv[++i] : NULL;
            if (parse_top(v, &a->top)) return 2;
        } else if (s[0] == '-') {
            static const char *const options[] = {"--json", "--top", "--help", NULL};
            rt_cli_unknown("rectwin compare", "option", s, options);
            return 2;
        } else if (a->n_dirs == 2) {
            fprintf(stderr, "rectwin compare: unexpected argument '%s'\n", s);
            usage(stderr);
            return 2;
        } else {
            a->dir[a->n_dirs++] = s;
        }
    }
    if (a->n_dirs == 2) return -1;
    usage(stderr);
    return 2;
}

int rt_cmd_compare(int argc, char **argv)
{
    compare_args a;
    int rc = parse_args(argc, argv, &a);
    if (rc >= 0) return rc;
    rt_comparison c = {.pred_dir = a.dir[0], .meas_dir = a.dir[1]};
    rc = rt_comparison_run(&c, a.top, "rectwin compare", stderr) ? 1 : 0;
    if (rc == 0) {
        if (a.json)
            print_json(&c);
        else
            print_text(&c);
        if (fflush(stdout) != 0 || ferror(stdout)) {
            fprintf(stderr, "rectwin compare: cannot write the output: %s\n", strerror(errno));
            rc = 1;
        }
    }
    rt_comparison_free(&c);
    return rc;
}
