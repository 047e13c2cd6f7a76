/* rectwin-calibrate: `mpirun -np N rectwin-calibrate [options]` measures this machine with N
 * ranks at once and writes one run of a topology's `calibration:` section (core/calib.h) to
 * --out (atomically) or stdout. `rectwin calibrate` launches it for each rank count and puts
 * the runs into the topology file. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "atomic_file.h"
#include "calibrate.h"
#include "check_mpi.h"
#include "cpu_bind.h"
#include "dtype.h"
#include "local_ranks.h"

enum { MAX_DTYPES = RT_DT_COUNT };

typedef struct args {
    const char *device, *comm, *out, *command;
    const char *dtypes[MAX_DTYPES];
    int n_dtypes;
    double gemm_max;
    rt_xbind bind;
    rt_xcal_opts o;
} args;

static void usage(FILE *f)
{
    fprintf(f,
            "usage: mpirun -np N rectwin-calibrate [--device cpu|cuda] [--comm mpi|nccl]\n"
            "         [--quick] [--out FILE] [--dtypes fp32,bf16,...] [--gemm-max N]\n"
            "         [--max-bytes BYTES] [--target-ms MS] [--command TEXT]\n"
            "\n"
            "Measures this machine with rectwin-exec's device and comm backends, N ranks at\n"
            "once, and writes a topology `calibration:` section holding one run (N ranks):\n"
            "GEMM rate over an (m, n, k) grid per dtype, memory-bound kernels (bytes/s against\n"
            "bytes per launch), attention and interaction (FLOP/s against FLOPs per launch),\n"
            "dispatch per op and host cost per iteration, and every collective over sizes from\n"
            "1 KiB and over the power-of-two groups of the world. `rectwin calibrate` runs it\n"
            "for several rank counts and writes the runs into a topology file.\n"
            "  --quick       reduced grids and sizes (seconds; for CI)\n"
            "  --out FILE    where the section goes (written whole or not at all; default stdout)\n"
            "  --dtypes L    GEMM tables to write (default fp32,tf32,bf16,fp16)\n"
            "  --gemm-max N  largest GEMM dimension (default 2048 on cpu, 16384 on cuda)\n"
            "  --max-bytes B largest collective size per rank in bytes (default 268435456)\n"
            "  --target-ms T time one measurement point aims at (default 20)\n"
            "  --passes P    sweeps of every table; each point keeps its fastest (default 5,\n"
            "                1 with --quick): another job on the machine only slows a point\n"
            "                down, so the fastest pass is the machine's own rate\n"
            "  --command T   the command line recorded in the section\n"
            "  --cpu-bind P  cpu device: block (default) or none, as rectwin-exec places its\n"
            "                ranks (its --cpu-bind); recorded in the run\n");
}

static int parse_double(const char *flag, const char *v, double lo, double hi, double *out)
{
    char *end;
    double x = strtod(v, &end);
    if (*v == '\0' || *end || !(x >= lo && x <= hi)) {
        fprintf(stderr, "rectwin-calibrate: %s '%s': allowed: a number from %g to %g\n", flag, v,
                lo, hi);
        return -1;
    }
    *out = x;
    return 0;
}

static int parse_dtypes(args *a, const char *list)
{
    char buf[256];
    snprintf(buf, sizeof buf, "%s", list);
    a->n_dtypes = 0;
    for (char *save = NULL, *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        int found = -1;
        for (int d = 0; d < RT_DT_COUNT; d++)
            if (!strcmp(t, rt_dtype_names[d])) found = d;
        if (found < 0 || a->n_dtypes == MAX_DTYPES) {
            fprintf(stderr, "rectwin-calibrate: --dtypes: '%s'; allowed: a list of", t);
            for (int d = 0; d < RT_DT_COUNT; d++)
                fprintf(stderr, " %s", rt_dtype_names[d]);
            fputc('\n', stderr);
            return -1;
        }
        a->dtypes[a->n_dtypes++] = rt_dtype_names[found];
    }
    return a->n_dtypes ? 0 : -1;
}

static int parse_args(int argc, char **argv, args *a)
{
    memset(a, 0, sizeof *a);
    a->device = "cpu", a->comm = "mpi";
    /* Five passes: on the shared 2-vCPU development machine three let the host's slow stretches
     * into the 2-rank GEMM curves (0.80x the 1-rank rates; five passes: 1.03x;
     * experiments/validation/cpu-mpi.md). */
    a->o = (rt_xcal_opts){0, 256.0 * (1 << 20), 0.02, 3, 200, 5};
    int max_bytes_set = 0, target_set = 0, passes_set = 0;
    if (parse_dtypes(a, "fp32,tf32,bf16,fp16")) return -1;
    for (int i = 1; i < argc; i++) {
        const char *f = argv[i];
        if (!strcmp(f, "--help") || !strcmp(f, "-h")) {
            usage(stdout);
            return 1;
        }
        if (!strcmp(f, "--quick")) {
            a->o.quick = 1;
            continue;
        }
        if (i + 1 >= argc) {
            fprintf(stderr, "rectwin-calibrate: unknown option or missing value: '%s'\n", f);
            return -1;
        }
        const char *v = argv[++i];
        if (!strcmp(f, "--device"))
            a->device = v;
        else if (!strcmp(f, "--comm"))
            a->comm = v;
        else if (!strcmp(f, "--out") || !strcmp(f, "-o"))
            a->out = v;
        else if (!strcmp(f, "--command"))
            a->command = v;
        else if (!strcmp(f, "--cpu-bind")) {
            if (rt_xbind_parse(v, &a->bind, "rectwin-calibrate", stderr)) return -1;
        } else if (!strcmp(f, "--dtypes")) {
            if (parse_dtypes(a, v)) return -1;
        } else if (!strcmp(f, "--gemm-max")) {
            if (parse_double(f, v, 1, 65536, &a->gemm_max)) return -1;
        } else if (!strcmp(f, "--max-bytes")) {
            if (parse_double(f, v, 1024, 2147483647.0, &a->o.max_bytes)) return -1;
            max_bytes_set = 1;
        } else if (!strcmp(f, "--target-ms")) {
            if (parse_double(f, v, 0.01, 10000, &a->o.target_s)) return -1;
            a->o.target_s *= 1e-3;
            target_set = 1;
        } else if (!strcmp(f, "--passes")) {
            double p = 0;
            if (parse_double(f, v, 1, 100, &p)) return -1;
            if (p != (int)p) {
                fprintf(stderr, "rectwin-calibrate: --passes '%s': allowed: a whole number\n", v);
                return -1;
            }
            a->o.passes = (int)p;
            passes_set = 1;
        } else {
            fprintf(stderr, "rectwin-calibrate: unknown option '%s'\n", f);
            return -1;
        }
    }
    if (a->o.quick) {
        if (!max_bytes_set) a->o.max_bytes = 1 << 20;
        if (!target_set) a->o.target_s = 0.002;
        a->o.min_reps = 2, a->o.max_reps = 20;
        if (!passes_set) a->o.passes = 1;
    }
    if (!a->gemm_max) a->gemm_max = a->o.quick ? 256 : !strcmp(a->device, "cuda") ? 16384 : 2048;
    return 0;
}

static rt_xmath math_of(const char *dtype)
{
    return !strcmp(dtype, "tf32")   ? RT_XMATH_TF32
           : !strcmp(dtype, "bf16") ? RT_XMATH_BF16
           : !strcmp(dtype, "fp16") ? RT_XMATH_FP16
                                    : RT_XMATH_FP32;
}

/* Every rank agrees on failure: a rank that cannot go on must not leave others in a barrier. */
static int agree(int rc)
{
    int any = rc;
    RT_MPI_CHECK(MPI_Allreduce(&rc, &any, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD));
    return any;
}

/* YAML double-quoted scalar of S. */
static void quoted(FILE *f, const char *s)
{
    fputc('"', f);
    for (; *s; s++) {
        if (*s == '"' || *s == '\\') fputc('\\', f);
        if ((unsigned char)*s >= 0x20) fputc(*s, f);
    }
    fputc('"', f);
}

static void header(FILE *f, const args *a, const rt_xdev *d, rt_xcomm *c, const char *placement,
                   double core_slice)
{
    char name[512] = "", libs[512] = "", comm[256] = "", host[256] = "localhost", date[64];
    d->ops->describe((rt_xdev *)d, name, sizeof name, libs, sizeof libs);
    c->ops->describe(c, comm, sizeof comm);
    if (gethostname(host, sizeof host)) snprintf(host, sizeof host, "localhost");
    host[sizeof host - 1] = '\0';
    time_t now = time(NULL);
    strftime(date, sizeof date, "%Y-%m-%dT%H:%MZ", gmtime(&now));
    char all[1024], backends[64];
    snprintf(all, sizeof all, "%s; %s", libs, comm);
    snprintf(backends, sizeof backends, "%s + %s", a->device, a->comm);
    fprintf(f, "calibration:\n  date: ");
    quoted(f, date);
    fprintf(f, "\n  host: ");
    quoted(f, host);
    fprintf(f, "\n  device: ");
    quoted(f, name);
    fprintf(f, "\n  backends: ");
    quoted(f, backends);
    fprintf(f, "\n  libraries: ");
    quoted(f, all);
    fprintf(f, "\n  command: ");
    quoted(f, a->command ? a->command : "mpirun -np N rectwin-calibrate");
    fprintf(f, "\n  runs:\n    - ranks: %d\n      cpu_bind: ", c->world);
    quoted(f, placement);
    fputc('\n', f);
    if (core_slice > 0) fprintf(f, "      core_slice: %.4gms\n", core_slice * 1e3);
}

typedef struct state {
    char placement[128]; /* this rank's cpu_bind.c placement */
    double core_slice;   /* the scheduler's turn (calibrate_slice.c), 0 when not measured */
    rt_xdev dev;
    rt_xcomm comm;
    int dev_open, comm_open;
    char *text;
    size_t len;
} state;

static int open_device(state *s, const char *dtype, int lr)
{
    if (s->dev_open) s->dev.ops->close(&s->dev), s->dev_open = 0;
    if (s->dev.ops->open(&s->dev, lr, 4, math_of(dtype), stderr)) return -1;
    s->dev_open = 1;
    return s->dev.ops->mark(&s->dev, 0);
}

/* The overheads, kernels and collectives, swept o.passes times; only the last pass writes,
 * each point at the fastest of its passes (calibrate_time.c). */
static int measure_passes(rt_xcal *c)
{
    FILE *out = c->out, *log = c->log;
    long first = c->call;
    int rc = 0;
    for (c->pass = 0; c->pass < c->o.passes && !rc; c->pass++) {
        int last = c->pass == c->o.passes - 1;
        c->call = first;
        c->out = last ? out : NULL;
        if (log) fprintf(log, "calibrate: pass %d of %d\n", c->pass + 1, c->o.passes);
        rc = rt_xcal_overheads(c) || rt_xcal_kernels(c) || rt_xcal_collectives(c) ? -1 : 0;
        if (!rc && c->call != c->n_best) { /* the same on every rank: no agreement needed */
            fprintf(stderr, "rectwin-calibrate: pass %d made fewer timed calls than the first\n",
                    c->pass + 1);
            rc = -1;
        }
    }
    c->out = out;
    return rc;
}

static int measure(state *s, const args *a, rt_xcal *c)
{
    int lr = 0, ln = 1;
    if (rt_xlocal_ranks(&lr, &ln)) return -1;
    snprintf(s->placement, sizeof s->placement, "none (not a cpu device)");
    if (!strcmp(a->device, "cpu") &&
        agree(rt_xbind_apply(a->bind, lr, ln, s->placement, sizeof s->placement, stderr)))
        return -1;
    /* A rank alone, so nothing else computes on its CPU: the turn of two threads there. */
    if (!strcmp(a->device, "cpu") && c->world == 1 &&
        rt_xcal_core_slice(a->o.quick ? 0.2 : 2.0, &s->core_slice, c->log))
        s->core_slice = 0;
    int rc = agree(open_device(s, "fp32", lr));
    c->dev = &s->dev;
    if (rc) return -1;
    /* GEMMs first, with the device in each dtype's math mode (no communicator holds it yet). */
    if (c->out) fprintf(c->out, "      gemm:\n");
    if (s->dev.ops->fp32_only) {
        if (c->out)
            fprintf(c->out, "        # the %s device runs every dtype in fp32\n", a->device);
        rc = rt_xcal_gemm(c, a->dtypes, a->n_dtypes, a->gemm_max);
    } else {
        for (int d = 0; d < a->n_dtypes && !rc; d++) {
            rc = agree(open_device(s, a->dtypes[d], lr));
            if (!rc) rc = rt_xcal_gemm(c, &a->dtypes[d], 1, a->gemm_max);
        }
    }
    if (rc || agree(open_device(s, "fp32", lr))) return -1;
    s->comm.ops = rt_xcomm_find(a->comm);
    if (agree(s->comm.ops->open(&s->comm, &s->dev, stderr))) return -1;
    s->comm_open = 1;
    c->comm = &s->comm;
    return measure_passes(c);
}

static int write_out(const args *a, const char *text, size_t len)
{
    if (!a->out) return fwrite(text, 1, len, stdout) == len && fflush(stdout) == 0 ? 0 : -1;
    rt_atomic_file f;
    if (rt_atomic_open(&f, a->out)) {
        fprintf(stderr, "rectwin-calibrate: cannot write %s\n", a->out);
        return -1;
    }
    if (fwrite(text, 1, len, f.f) != len) {
        rt_atomic_abort(&f);
        return -1;
    }
    return rt_atomic_commit(&f);
}

int main(int argc, char **argv)
{
    args a;
    int pa = parse_args(argc, argv, &a);
    if (pa) return pa > 0 ? 0 : 2;
    state s;
    memset(&s, 0, sizeof s);
    s.dev.ops = rt_xdev_find(a.device);
    if (!s.dev.ops || !rt_xcomm_find(a.comm)) {
        fprintf(stderr,
                "rectwin-calibrate: --device %s / --comm %s: not built in; allowed: cpu%s / "
                "mpi%s\n",
                a.device, a.comm, rt_xdev_find("cuda") ? ", cuda" : "",
                rt_xcomm_find("nccl") ? ", nccl" : "");
        return 2;
    }
    if (MPI_Init(&argc, &argv) != MPI_SUCCESS) {
        fprintf(stderr, "rectwin-calibrate: MPI_Init failed: is this an MPI launch (mpirun)?\n");
        return 1;
    }
    rt_xcal c = {.o = a.o};
    MPI_Comm_rank(MPI_COMM_WORLD, &c.rank);
    MPI_Comm_size(MPI_COMM_WORLD, &c.world);
    FILE *body = NULL;
    if (c.rank == 0) {
        body = open_memstream(&s.text, &s.len);
        c.out = body;
        c.log = stderr;
    }
    int rc = measure(&s, &a, &c);
    rc = agree(rc);
    if (body) fclose(body);
    if (!rc && c.rank == 0) {
        char *head = NULL;
        size_t hlen = 0;
        FILE *h = open_memstream(&head, &hlen);
        if (h) header(h, &a, &s.dev, &s.comm, s.placement, s.core_slice);
        if (!h || fclose(h)) {
            rc = -1;
        } else {
            size_t n = hlen + s.len;
            char *all = malloc(n + 1);
            if (all) memcpy(all, head, hlen), memcpy(all + hlen, s.text, s.len);
            rc = all ? write_out(&a, all, n) : -1;
            free(all);
        }
        free(head);
    }
    free(s.text);
    free(c.best);
    if (s.comm_open) s.comm.ops->close(&s.comm);
    if (s.dev_open) s.dev.ops->close(&s.dev);
    MPI_Finalize();
    return rc ? 1 : 0;
}
