/* rectwin-exec: runs a scenario for real under mpirun. Every rank builds the same op graph as
 * `rectwin sim` (the same pipeline, the workload in exact mode), executes its own rank's ops
 * with the device and comm backends, and rank 0 writes the measured summary.json, ops.csv
 * and trace.json (engine "exec"). */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_mpi.h"
#include "checkpoint.h"
#include "core_link.h"
#include "cpu_bind.h"
#include "criteo.h"
#include "dump.h"
#include "local_ranks.h"
#include "pipeline.h"
#include "report.h"
#include "runner.h"
#include "state.h"

enum { MAX_SETS = 256 };

typedef struct args {
    const char *scenario, *out, *device, *comm, *data, *fault, *dump, *checkpoint, *resume;
    const char *sets[MAX_SETS];
    int n_sets, warmup, iterations, check_bytes, quiet;
    char fault_kind[8], fault_op[128];
    double op_timeout;
    rt_xbind bind;
} args;

static void usage(FILE *f)
{
    fprintf(
        f,
        "usage: mpirun -np N rectwin-exec SCENARIO [--set k=v]... [--device cpu|cuda]\n"
        "         [--comm mpi|nccl] [--out DIR] [--warmup N] [--iterations N] [--data FILE]\n"
        "         [--check-bytes] [--op-timeout S] [--dump DIR] [--checkpoint DIR]\n"
        "         [--resume DIR] [--cpu-bind block|none] [--quiet]\n"
        "\n"
        "Trains the scenario for real, one MPI rank per device, and writes the measured\n"
        "DIR/summary.json, ops.csv and trace.json (default DIR: results/<scenario>/exec/).\n"
        "  --device        cpu (kernels/cpu) or cuda (kernels/cuda, one GPU per local rank)\n"
        "  --comm          mpi (host staging for GPU buffers) or nccl\n"
        "  --warmup N      untimed iterations first (default workload.warmup, 2)\n"
        "  --iterations N  timed iterations (default workload.iterations)\n"
        "  --data FILE     Criteo TSV (label, 13 ints, 26 hex categories) instead of the\n"
        "                  workload's sampled IDs and planted labels\n"
        "  --check-bytes   exit 1 when an op moved other bytes than the graph says\n"
        "  --op-timeout S  abort every rank when one op runs longer (default 30)\n"
        "  --dump DIR      write the first iteration's embeddings and loss and the final\n"
        "                  table shards as text (the semantics tests compare plans with it)\n"
        "  --checkpoint DIR  after the last iteration, save the tables with their optimizer\n"
        "                  state, the dense parameters and the iteration counter in DIR\n"
        "                  (written aside and swapped in whole: DIR is never half written)\n"
        "  --resume DIR    start from checkpoint DIR: the run continues with the iteration\n"
        "                  after the saved one (warm-up included); any rank count, plan and\n"
        "                  sharding of the same model\n"
        "  --cpu-bind P    cpu device: block (default) pins the local ranks in consecutive\n"
        "                  blocks of the CPUs they may use (ranks 0, 1 of 4 on the first of 2);\n"
        "                  none leaves placement to the kernel. A launcher's binding to one\n"
        "                  CPU stands\n"
        "  --inject-fault die|hang|fail@RANK:OP  for tests: RANK dies, hangs or fails at op OP\n");
}

static int need(int argc, char **argv, int i)
{
    if (i + 1 < argc) return 0;
    fprintf(stderr, "rectwin-exec: %s needs a value\n", argv[i]);
    return -1;
}

static int parse_int(const char *flag, const char *v, int lo, int *out)
{
    char *end;
    long x = strtol(v, &end, 10);
    if (*v == '\0' || *end || x < lo || x > 1000000) {
        fprintf(stderr, "rectwin-exec: %s '%s': allowed: an integer from %d to 1000000\n", flag, v,
                lo);
        return -1;
    }
    *out = (int)x;
    return 0;
}

static int parse_args(int argc, char **argv, args *a)
{
    memset(a, 0, sizeof *a);
    a->device = "cpu", a->comm = "mpi", a->warmup = -1, a->iterations = -1, a->op_timeout = 30;
    for (int i = 1; i < argc; i++) {
        const char *f = argv[i];
        if (!strcmp(f, "--help") || !strcmp(f, "-h")) {
            usage(stdout);
            return 1;
        }
        if (!strcmp(f, "--check-bytes") || !strcmp(f, "--quiet")) {
            *(f[2] == 'c' ? &a->check_bytes : &a->quiet) = 1;
            continue;
        }
        if (f[0] != '-') {
            if (a->scenario) {
                fprintf(stderr, "rectwin-exec: unexpected argument '%s'\n", f);
                return -1;
            }
            a->scenario = f;
            continue;
        }
        if (need(argc, argv, i)) return -1;
        const char *v = argv[++i];
        if (!strcmp(f, "--set") || !strcmp(f, "-s")) {
            if (a->n_sets == MAX_SETS) {
                fprintf(stderr, "rectwin-exec: more than %d --set\n", MAX_SETS);
                return -1;
            }
            a->sets[a->n_sets++] = v;
        } else if (!strcmp(f, "--device")) {
            a->device = v;
        } else if (!strcmp(f, "--comm")) {
            a->comm = v;
        } else if (!strcmp(f, "--out")) {
            a->out = v;
        } else if (!strcmp(f, "--data")) {
            a->data = v;
        } else if (!strcmp(f, "--dump")) {
            a->dump = v;
        } else if (!strcmp(f, "--checkpoint")) {
            a->checkpoint = v;
        } else if (!strcmp(f, "--resume")) {
            a->resume = v;
        } else if (!strcmp(f, "--cpu-bind")) {
            if (rt_xbind_parse(v, &a->bind, "rectwin-exec", stderr)) return -1;
        } else if (!strcmp(f, "--inject-fault")) {
            a->fault = v;
        } else if (!strcmp(f, "--warmup")) {
            if (parse_int(f, v, 0, &a->warmup)) return -1;
        } else if (!strcmp(f, "--iterations")) {
            if (parse_int(f, v, 1, &a->iterations)) return -1;
        } else if (!strcmp(f, "--op-timeout")) {
            int t;
            if (parse_int(f, v, 1, &t)) return -1;
            a->op_timeout = t;
        } else {
            fprintf(stderr, "rectwin-exec: unknown option '%s'\n", f);
            return -1;
        }
    }
    if (!a->scenario) {
        usage(stderr);
        return -1;
    }
    return 0;
}

/* "die@1:embedding_alltoall" -> kind, rank, op name. */
/* KIND and OP (in A, which outlives the run) receive the parts of A->fault. */
static int parse_fault(args *a, rt_xrun_cfg *c)
{
    const char *spec = a->fault;
    char *kind = a->fault_kind, *op = a->fault_op;
    int rank;
    if (sscanf(spec, "%7[a-z]@%d:%127s", kind, &rank, op) != 3 ||
        (strcmp(kind, "die") && strcmp(kind, "hang") && strcmp(kind, "fail"))) {
        fprintf(stderr, "rectwin-exec: --inject-fault '%s'; allowed: die|hang|fail@RANK:OPNAME\n",
                spec);
        return -1;
    }
    c->fault_kind = kind, c->fault_rank = rank, c->fault_op = op;
    return 0;
}

static int find_backends(const args *a, const rt_xdev_ops **d, const rt_xcomm_ops **c)
{
    *d = rt_xdev_find(a->device);
    *c = rt_xcomm_find(a->comm);
    if (!*d) {
        fprintf(stderr, "rectwin-exec: --device '%s' is not built in; allowed:", a->device);
        for (int i = 0; rt_xdev_backends[i]; i++)
            fprintf(stderr, " %s", rt_xdev_backends[i]->name);
        fputc('\n', stderr);
    }
    if (!*c) {
        fprintf(stderr, "rectwin-exec: --comm '%s' is not built in; allowed:", a->comm);
        for (int i = 0; rt_xcomm_backends[i]; i++)
            fprintf(stderr, " %s", rt_xcomm_backends[i]->name);
        fputc('\n', stderr);
    }
    return *d && *c ? 0 : -1;
}

static rt_xmath math_of(rt_dtype dense)
{
    switch (dense) {
    case RT_DT_TF32:
        return RT_XMATH_TF32;
    case RT_DT_BF16:
        return RT_XMATH_BF16;
    case RT_DT_FP16:
        return RT_XMATH_FP16;
    default:
        return RT_XMATH_FP32;
    }
}

static void print_summary(const rt_result *r, const rt_scenario *s, const rt_xsummary *sum,
                          const char *dir)
{
    rt_result_print(r, s, stdout);
    printf("\nmeasured over %s iterations: loss %.5f -> %.5f (mean over ranks), iteration wall "
           "%.3f ms (spread %.3f ms), framework overhead %.3f ms (%.1f %%)\n",
           "the timed", sum->loss_first, sum->loss_last, sum->wall_median_s * 1e3,
           sum->wall_spread_s * 1e3, sum->overhead_s * 1e3,
           sum->wall_median_s > 0 ? 100 * sum->overhead_s / sum->wall_median_s : 0);
    printf("bytes: %ld ops checked against the graph, %ld differ; results in %s/\n",
           sum->bytes_checked, sum->bytes_mismatched, dir);
}

typedef struct run {
    rt_pipeline p;
    rt_xdev dev;
    rt_xcomm comm;
    rt_xexec x;
    rt_xtimes t;
    rt_criteo *data;
    int dev_open, comm_open;
    int agreed; /* every rank knows the run failed: no abort needed */
} run;

static int world_matches(const rt_graph *g, FILE *err)
{
    int world;
    MPI_Comm_size(MPI_COMM_WORLD, &world);
    if (g->world == world && g->n_reps == world) return 0;
    fprintf(err,
            "rectwin-exec: the scenario has %d ranks (topology.nodes x node.devices), mpirun "
            "started %d; allowed: mpirun -np %d, or --set topology.nodes=... to match\n",
            g->world, world, g->world);
    return -1;
}

static int execute(run *R, const args *a, rt_xrun_cfg *cfg, int *mismatched)
{
    const rt_xdev_ops *dops;
    const rt_xcomm_ops *cops;
    const char *sets[MAX_SETS + 1];
    memcpy(sets, a->sets, sizeof(char *) * (size_t)a->n_sets);
    sets[a->n_sets] = "workload.mode=exact"; /* execution needs every rank's batch */
    if (find_backends(a, &dops, &cops)) return -1;
    if (rt_pipeline_run(&R->p, a->scenario, sets, a->n_sets + 1, stderr)) return -1;
    const rt_scenario *s = R->p.scenario;
    if (world_matches(R->p.graph, stderr)) return -1;
    if (a->data &&
        !(R->data = rt_criteo_open(a->data, s->model.dense_features, s->model.n_tables, stderr)))
        return -1;
    R->dev.ops = dops;
    int marks = 2 + 2 * R->p.graph->n_ops, lr, ln;
    if (rt_xlocal_ranks(&lr, &ln)) return -1;
    char placement[sizeof R->x.cpu_bind] = "none (not a cpu device)";
    if (!strcmp(dops->name, "cpu") &&
        rt_xbind_apply(a->bind, lr, ln, placement, sizeof placement, stderr))
        return -1;
    if (dops->open(&R->dev, lr, marks, math_of(s->plan.dense_dtype), stderr)) return -1;
    R->dev_open = 1;
    R->comm.ops = cops;
    if (cops->open(&R->comm, &R->dev, stderr)) return -1;
    R->comm_open = 1;
    if (rt_xexec_open(&R->x, s, R->p.graph, &R->dev, &R->comm, stderr)) return -1;
    snprintf(R->x.cpu_bind, sizeof R->x.cpu_bind, "%s", placement);
    /* Refused before the run: a checkpoint without the module would resume it from its seed. */
    if (R->x.tm && (a->checkpoint || a->resume)) {
        fprintf(stderr,
                "exec: checkpoints of sptt tower-module parameters are not written by "
                "rectwin-exec yet; allowed: --checkpoint/--resume without a tower module\n");
        return -1;
    }
    int dynamic = 0;
    for (int i = 0; i < R->x.tables.n; i++)
        dynamic |= R->x.tables.shards[i].dyn != NULL;
    if (dynamic && (a->checkpoint || a->resume || a->dump)) {
        fprintf(stderr, "exec: checkpoints and dumps of dynamic (hash) tables are not written by "
                        "rectwin-exec yet; allowed: --checkpoint/--resume/--dump without them\n");
        return -1;
    }
    if (a->resume) {
        /* Every rank loads its own shards. They agree on the outcome, so that a bad or missing
         * file ends the run on all ranks with the failing rank's message printed: an abort
         * can kill mpirun's output forwarding before that message has passed through it. */
        int bad = rt_xckpt_load(&R->x, a->resume, stderr) != 0, any = bad;
        RT_MPI_CHECK(MPI_Allreduce(&bad, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD));
        if (any) {
            R->agreed = 1;
            return -1;
        }
    }
    cfg->first_iteration = a->resume ? R->x.iteration + 1 : 0;
    cfg->warmup = a->warmup >= 0 ? a->warmup : s->workload.warmup;
    cfg->iterations = a->iterations > 0 ? a->iterations : s->workload.iterations;
    cfg->graph_batch = R->p.workload;
    cfg->data = R->data;
    cfg->dump_dir = a->dump;
    /* The host's state around the timed iterations: it can slow them as much as a model error. */
    if (rt_xlink_rtt(&R->x.local_rtt_s[0], stderr)) return -1;
    if (rt_xrun(&R->x, cfg, &R->t, stderr)) return -1;
    if (rt_xlink_rtt(&R->x.local_rtt_s[1], stderr)) return -1;
    if (a->checkpoint && rt_xckpt_save(&R->x, a->checkpoint, stderr)) return -1;
    if (a->dump && rt_xdump_tables(&R->x, a->dump, stderr)) return -1;
    rt_xsummary sum;
    rt_result *r = NULL;
    if (rt_xreport(&R->x, &R->t, cfg->warmup, &sum, &r, stderr)) return -1;
    *mismatched = sum.bytes_mismatched > 0;
    int rc = 0;
    if (r) {
        char dir[4096];
        snprintf(dir, sizeof dir, "%s", a->out ? a->out : "");
        if (!a->out) snprintf(dir, sizeof dir, "results/%s/exec", s->name);
        rc = rt_result_write(r, s, dir, stderr);
        if (!rc && !a->quiet) print_summary(r, s, &sum, dir);
        rt_result_free(r);
    }
    return rc;
}

static void cleanup(run *R)
{
    rt_xtimes_free(&R->t);
    if (R->x.s) rt_xexec_close(&R->x);
    if (R->comm_open) R->comm.ops->close(&R->comm);
    if (R->dev_open) R->dev.ops->close(&R->dev);
    if (R->data) rt_criteo_close(R->data);
    rt_pipeline_free(&R->p);
}

int main(int argc, char **argv)
{
    args a;
    int pa = parse_args(argc, argv, &a);
    if (pa) return pa > 0 ? 0 : 2;
    rt_xrun_cfg cfg = {.op_timeout_s = a.op_timeout};
    if (a.fault && parse_fault(&a, &cfg)) return 2;
    int provided;
    if (MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided) != MPI_SUCCESS) {
        fprintf(stderr, "rectwin-exec: MPI_Init failed: is this an MPI launch (mpirun)?\n");
        return 1;
    }
    run R;
    memset(&R, 0, sizeof R);
    int mismatched = 0;
    int rc = execute(&R, &a, &cfg, &mismatched) ? 1 : 0;
    /* A rank that failed once the ranks talk to each other must not leave its peers waiting in
     * a collective: it stops them all (its message above names it and the step). */
    if (rc && R.comm_open && !R.agreed) {
        fflush(stderr);
        R.comm.ops->abort(&R.comm, 1);
    }
    if (!rc && a.check_bytes && mismatched) rc = 1;
    /* A rank that failed alone must not leave the others waiting in a collective. */
    int any = rc;
    MPI_Allreduce(&rc, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    cleanup(&R);
    MPI_Finalize();
    return any;
}
