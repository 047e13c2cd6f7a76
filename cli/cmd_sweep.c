/* rectwin sweep: run a scenario at every point of a grid, in worker processes, into a result
 * store that survives interruptions (sweep_store.h), and assemble one CSV row per point.
 *
 * Parallelism has two levels. Under mpirun (which rectwin does not link: the rank and size
 * come from the launcher's environment) rank r of n takes the points i with i % n == r, a
 * split every rank computes alike whatever the store holds when it starts. Inside a rank,
 * -j N forked workers take that rank's unfinished points one at a time from a counter in
 * shared memory, so a slow point does not hold up a queue. A worker runs each point
 * in-process, as `rectwin sim` does (the simgrid engine forks its own simulation child from
 * the worker), writes the point's file and tells the parent through a pipe, which the parent
 * turns into progress. A worker that dies on a point leaves that point recorded as an error
 * and is replaced. */
#define _DEFAULT_SOURCE /* MAP_ANONYMOUS */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli_args.h"
#include "commands.h"
#include "engines.h"
#include "pipeline.h"
#include "result.h"
#include "sweep_spec.h"
#include "sweep_store.h"

enum { MAX_SETS = 256, MAX_JOBS = 256 };

/* The CSV's figure columns, in order; phases follow as phase.<name>_s. */
static const char *const figure_columns[] = {"scenario",
                                             "model",
                                             "topology",
                                             "engine",
                                             "nodes",
                                             "ranks",
                                             "plan",
                                             "batch_per_rank",
                                             "mode",
                                             "reps",
                                             "iteration_time_s",
                                             "samples_per_s",
                                             "mfu",
                                             "mbu",
                                             "mbu_sparse",
                                             "comm_time_s",
                                             "exposed_comm_s",
                                             "peak_hbm_bytes",
                                             "hbm_capacity_bytes",
                                             "hbm_fits",
                                             "wall_s",
                                             NULL};

typedef struct options {
    const char *file, *out, *engine;
    const char *sets[MAX_SETS];
    int n_sets, jobs, list, quiet, retry_failed;
} options;

typedef struct sweep {
    const rt_sweep_spec *spec;
    const rt_engine *engine;
    rt_sweep_store *store;
    const char **sets; /* command line, then the file's set, then the point's (filled in) */
    int n_fixed_sets;
    int rank, size;
    int retry_failed; /* a failed point is not finished: its error may have been the machine's */
    long *pending;    /* this rank's unfinished points */
    long n_pending;
    long share, done_before, failed_before; /* this rank's points, finished at start */
} sweep;

/* ---- one point --------------------------------------------------------------------------- */

static int record_result(rt_sweep_record *rec, const rt_result *r, const rt_scenario *s,
                         double wall_s)
{
    const rt_graph *g = r->graph;
    int rc =
        rt_sweep_record_text(rec, "scenario", s->name) |
        rt_sweep_record_text(rec, "model", s->model.name) |
        rt_sweep_record_text(rec, "topology", s->topology.name) |
        rt_sweep_record_text(rec, "engine", r->engine) |
        rt_sweep_record_number(rec, "nodes", s->topology.nodes) |
        rt_sweep_record_number(rec, "ranks", g->world) |
        rt_sweep_record_text(rec, "plan", s->plan.name) |
        rt_sweep_record_number(rec, "batch_per_rank", s->workload.batch_per_rank) |
        rt_sweep_record_text(rec, "mode", g->n_reps == g->world ? "exact" : "statistical") |
        rt_sweep_record_number(rec, "reps", g->n_reps) |
        rt_sweep_record_number(rec, "iteration_time_s", r->iteration_time_s) |
        rt_sweep_record_number(rec, "samples_per_s", r->samples_per_s) |
        rt_sweep_record_number(rec, "mfu", r->mfu) | rt_sweep_record_number(rec, "mbu", r->mbu) |
        rt_sweep_record_number(rec, "mbu_sparse", r->mbu_sparse) |
        rt_sweep_record_number(rec, "comm_time_s", r->comm_time_s) |
        rt_sweep_record_number(rec, "exposed_comm_s", r->exposed_comm_s) |
        rt_sweep_record_number(rec, "peak_hbm_bytes", r->peak_hbm_bytes) |
        rt_sweep_record_number(rec, "hbm_capacity_bytes", s->topology.device.hbm_bytes) |
        rt_sweep_record_text(rec, "hbm_fits",
                             r->peak_hbm_bytes <= s->topology.device.hbm_bytes ? "true" : "false") |
        rt_sweep_record_number(rec, "wall_s", wall_s);
    for (int p = 0; p < r->n_phases; p++) {
        char name[256];
        snprintf(name, sizeof name, "phase.%s_s", g->phases[p]);
        rc |= rt_sweep_record_number(rec, name, r->phase_s[p]);
    }
    return rc ? -1 : 0;
}

static int oom(FILE *err)
{
    fprintf(err, "out of memory\n");
    return -1;
}

/* Runs POINT as `rectwin sim` would and fills REC with its figures or its error. */
static void run_point(const sweep *sw, long point, rt_sweep_record *rec)
{
    const char **sets = sw->sets;
    int n_sets = sw->n_fixed_sets + rt_sweep_point_assign(sw->spec, point, sets + sw->n_fixed_sets);
    char *msg = NULL;
    size_t len = 0;
    FILE *err = open_memstream(&msg, &len);
    if (!err) {
        rt_sweep_record_fail(rec, "out of memory");
        return;
    }
    double t0 = rt_pipeline_now();
    rt_pipeline p;
    rt_result *r = NULL;
    int rc = rt_pipeline_run(&p, sw->spec->scenario_path, sets, n_sets, err);
    if (rc == 0 && !(r = rt_result_new(p.graph, sw->engine->name))) rc = oom(err);
    if (rc == 0) rc = sw->engine->run(p.scenario, p.graph, r, err);
    if (rc == 0) {
        rt_result_finish(r, p.scenario);
        if (record_result(rec, r, p.scenario, rt_pipeline_now() - t0) < 0) rc = oom(err);
    }
    fclose(err);
    if (rc) rt_sweep_record_fail(rec, msg);
    free(msg);
    rt_result_free(r);
    rt_pipeline_free(&p);
}

/* ---- workers ------------------------------------------------------------------------------ */

typedef enum { MSG_START, MSG_OK, MSG_FAILED, MSG_UNSTORED, MSG_SKIPPED } msg_kind;

/* Small enough for one atomic pipe write (PIPE_BUF), so workers' messages never interleave. */
typedef struct msg {
    int32_t worker;
    int32_t kind;
    int64_t point;
} msg;

typedef struct shared {
    atomic_long next; /* the next index into sweep.pending to take */
} shared;

static void send_msg(int fd, int worker, msg_kind kind, long point)
{
    msg m = {worker, kind, point};
    while (write(fd, &m, sizeof m) < 0 && errno == EINTR) {
    }
}

/* Whether POINT is finished: it has a record, which is ok or, unless failed points are retried,
 * an error. *FAILED (when given): whether it failed. */
static int finished(const sweep *sw, long point, int *failed)
{
    rt_sweep_record r;
    int done = rt_sweep_store_get(sw->store, point, &r) == 0 && (r.ok || !sw->retry_failed);
    if (failed) *failed = !r.ok;
    rt_sweep_record_free(&r);
    return done;
}

static void worker_loop(const sweep *sw, shared *sh, int id, int fd)
{
    for (;;) {
        long i = atomic_fetch_add(&sh->next, 1);
        if (i >= sw->n_pending) return;
        long point = sw->pending[i];
        send_msg(fd, id, MSG_START, point);
        if (finished(sw, point, NULL)) { /* another process finished it meanwhile */
            send_msg(fd, id, MSG_SKIPPED, point);
            continue;
        }
        rt_sweep_record rec;
        rt_sweep_record_init(&rec, point);
        run_point(sw, point, &rec);
        msg_kind kind = rec.ok ? MSG_OK : MSG_FAILED;
        if (rt_sweep_store_put(sw->store, &rec, stderr) < 0) kind = MSG_UNSTORED;
        rt_sweep_record_free(&rec);
        send_msg(fd, id, kind, point);
    }
}

static pid_t spawn_worker(const sweep *sw, shared *sh, int id, int fds[2])
{
    fflush(NULL); /* nothing buffered is written twice */
    pid_t parent = getpid();
    pid_t pid = fork();
    if (pid != 0) return pid;
    /* A worker ends with the sweep, whatever ends the sweep; SIGTERM lets it clean up. */
    prctl(PR_SET_PDEATHSIG, SIGTERM);
    if (getppid() != parent) _exit(1);
    close(fds[0]);
    worker_loop(sw, sh, id, fds[1]);
    close(fds[1]);
    exit(0);
}

/* ---- progress ---------------------------------------------------------------------------- */

typedef struct progress {
    int tty, quiet;
    char who[96];
    double t0, last_line, last_done;
    long total, done, failed, done_now, step;
    long shown; /* done when the last line was printed */
} progress;

static void fmt_duration(char *buf, size_t n, double s)
{
    long t = s > 0 && s < 1e9 ? (long)(s + 0.5) : 0;
    if (t >= 3600)
        snprintf(buf, n, "%ldh%02ldm", t / 3600, t / 60 % 60);
    else
        snprintf(buf, n, "%ldm%02lds", t / 60, t % 60);
}

static void progress_show(progress *pg, int final)
{
    if (pg->quiet) return;
    double now = rt_pipeline_now();
    /* Up to the last finished point: the wait for the workers to exit is not the points'. */
    double elapsed = (final || pg->done == pg->total ? pg->last_done : now) - pg->t0;
    double rate = elapsed > 0 ? pg->done_now / elapsed : 0;
    char eta[32] = "?";
    if (rate > 0) fmt_duration(eta, sizeof eta, (pg->total - pg->done) / rate);
    if (pg->tty && !final && now - pg->last_line < 0.1) return; /* a redraw is enough 10/s */
    if (pg->tty) {
        enum { WIDTH = 30 };
        pg->last_line = now;
        char bar[WIDTH + 1];
        long fill = pg->total ? pg->done * WIDTH / pg->total : WIDTH;
        for (int i = 0; i < WIDTH; i++)
            bar[i] = i < fill ? '#' : '.';
        bar[WIDTH] = '\0';
        fprintf(stderr, "\r\033[K%s [%s] %ld/%ld points  %.2f/s  ETA %s", pg->who, bar, pg->done,
                pg->total, rate, eta);
        if (pg->failed) fprintf(stderr, "  %ld failed", pg->failed);
        if (final) fputc('\n', stderr);
        fflush(stderr);
        return;
    }
    /* A log gets a line every 5 % of the points or every 10 s, not one per point. */
    if (!final && pg->done < pg->total && pg->done % pg->step && now - pg->last_line < 10) return;
    if (final && pg->done == pg->shown) return;
    pg->last_line = now;
    pg->shown = pg->done;
    fprintf(stderr, "%s: %ld/%ld points done (%ld failed), %.2f points/s, ETA %s\n", pg->who,
            pg->done, pg->total, pg->failed, rate, final ? "0m00s" : eta);
}

static void progress_failure(progress *pg, const sweep *sw, long point)
{
    if (pg->quiet) return;
    rt_sweep_record r;
    int have = rt_sweep_store_get(sw->store, point, &r) == 0;
    if (pg->tty) fputs("\r\033[K", stderr);
    fprintf(stderr, "point %ld failed: %s\n", point, have && r.error ? r.error : "(no record)");
    if (have) rt_sweep_record_free(&r);
}

/* ---- the parent's loop -------------------------------------------------------------------- */

typedef struct worker {
    pid_t pid;
    long point; /* in flight, -1 none */
} worker;

typedef struct pool {
    const sweep *sw;
    shared *sh;
    int fds[2];
    int n;
    worker w[MAX_JOBS];
    progress pg;
    int lost;      /* points finished but not stored */
    int bad_exits; /* workers that ended with an error between points */
    char pending_msg[sizeof(msg)];
    size_t have;
} pool;

static void on_msg(pool *pl, const msg *m)
{
    if (m->worker < 0 || m->worker >= pl->n) return;
    worker *w = &pl->w[m->worker];
    if (m->kind == MSG_START) {
        w->point = m->point;
        return;
    }
    w->point = -1;
    if (m->kind == MSG_UNSTORED) {
        pl->lost++;
        return;
    }
    pl->pg.done++;
    pl->pg.done_now++;
    pl->pg.last_done = rt_pipeline_now();
    if (m->kind == MSG_FAILED) {
        pl->pg.failed++;
        progress_failure(&pl->pg, pl->sw, m->point);
    }
    progress_show(&pl->pg, 0);
}

/* Reads every message the pipe holds now. */
static void drain(pool *pl)
{
    for (;;) {
        ssize_t got = read(pl->fds[0], pl->pending_msg + pl->have, sizeof(msg) - pl->have);
        if (got <= 0) return;
        pl->have += (size_t)got;
        if (pl->have < sizeof(msg)) continue;
        msg m;
        memcpy(&m, pl->pending_msg, sizeof m);
        pl->have = 0;
        on_msg(pl, &m);
    }
}

/* A worker that died on a point: the point is recorded as failed, so it is not retried
 * forever, and the message says how it died. */
static void record_death(pool *pl, int worker, long point, int status)
{
    rt_sweep_record rec;
    if (rt_sweep_store_get(pl->sw->store, point, &rec) == 0 && rec.ok) {
        rt_sweep_record_free(&rec); /* it died after storing the point, before saying so */
        on_msg(pl, &(msg){worker, MSG_OK, point});
        return;
    }
    rt_sweep_record_free(&rec);
    char why[160];
    if (WIFSIGNALED(status))
        snprintf(why, sizeof why, "the worker process died of signal %d (%s) on this point",
                 WTERMSIG(status), WTERMSIG(status) == SIGKILL ? "out of memory?" : "a crash");
    else
        snprintf(why, sizeof why, "the worker process exited with status %d on this point",
                 WEXITSTATUS(status));
    rt_sweep_record_init(&rec, point);
    rt_sweep_record_fail(&rec, why);
    int stored = rt_sweep_store_put(pl->sw->store, &rec, stderr) == 0;
    rt_sweep_record_free(&rec);
    on_msg(pl, &(msg){worker, stored ? MSG_FAILED : MSG_UNSTORED, point});
}

/* Reaps the workers that ended; returns how many are still running. */
static int reap(pool *pl)
{
    int live = 0;
    for (int i = 0; i < pl->n; i++) {
        worker *w = &pl->w[i];
        int status = 0;
        if (w->pid <= 0) continue;
        if (waitpid(w->pid, &status, WNOHANG) <= 0) {
            live++;
            continue;
        }
        drain(pl); /* what it said before it ended */
        w->pid = 0;
        int clean = WIFEXITED(status) && WEXITSTATUS(status) == 0;
        if (w->point >= 0) {
            record_death(pl, i, w->point, status);
        } else if (WIFEXITED(status) && !clean) {
            /* Between points: nothing to record, but the sweep must not pass for clean (a
             * sanitizer's report in the worker ends it this way). */
            fprintf(stderr, "rectwin sweep: a worker exited with status %d\n", WEXITSTATUS(status));
            pl->bad_exits++;
        }
        if (!clean && atomic_load(&pl->sh->next) < pl->sw->n_pending) {
            w->pid = spawn_worker(pl->sw, pl->sh, i, pl->fds);
            live += w->pid > 0;
        }
    }
    return live;
}

static int run_pool(pool *pl, int jobs)
{
    pl->n = jobs;
    for (int i = 0; i < jobs; i++) {
        pl->w[i].point = -1;
        pl->w[i].pid = spawn_worker(pl->sw, pl->sh, i, pl->fds);
        if (pl->w[i].pid < 0) {
            fprintf(stderr, "rectwin sweep: cannot start a worker: %s\n", strerror(errno));
            if (i == 0) return -1;
            pl->n = i; /* go on with fewer */
            break;
        }
    }
    while (reap(pl) > 0) {
        struct pollfd p = {pl->fds[0], POLLIN, 0};
        /* Once every point is in, the workers are only exiting: look again soon. */
        int all_in = pl->pg.done_now + pl->lost >= pl->sw->n_pending;
        if (poll(&p, 1, all_in ? 5 : 200) > 0) drain(pl);
        if (pl->pg.tty) progress_show(&pl->pg, 0); /* the ETA moves even between points */
    }
    drain(pl);
    return 0;
}

static int run_workers(const sweep *sw, int jobs, int quiet)
{
    shared *sh = mmap(NULL, sizeof *sh, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (sh == MAP_FAILED) {
        fprintf(stderr, "rectwin sweep: cannot map shared memory: %s\n", strerror(errno));
        return -1;
    }
    atomic_init(&sh->next, 0);
    pool *pl = calloc(1, sizeof *pl);
    int rc = -1;
    if (pl && pipe(pl->fds) == 0) {
        fcntl(pl->fds[0], F_SETFL, O_NONBLOCK);
        pl->sw = sw;
        pl->sh = sh;
        progress *pg = &pl->pg;
        pg->tty = isatty(STDERR_FILENO);
        pg->quiet = quiet;
        pg->t0 = pg->last_line = rt_pipeline_now();
        pg->total = sw->share;
        pg->done = sw->done_before;
        pg->failed = sw->failed_before;
        pg->step = sw->share / 20 > 0 ? sw->share / 20 : 1;
        if (sw->size > 1)
            snprintf(pg->who, sizeof pg->who, "sweep %s, rank %d/%d", sw->spec->name, sw->rank,
                     sw->size);
        else
            snprintf(pg->who, sizeof pg->who, "sweep %s", sw->spec->name);
        rc = run_pool(pl, jobs < sw->n_pending ? jobs : (int)sw->n_pending);
        if (rc == 0) progress_show(pg, 1);
        if (rc == 0 && (pl->lost || pl->bad_exits)) rc = -1; /* said why, for each */
        close(pl->fds[0]);
        close(pl->fds[1]);
    } else {
        fprintf(stderr, "rectwin sweep: cannot start workers: %s\n", strerror(errno));
    }
    free(pl);
    munmap(sh, sizeof *sh);
    return rc;
}

/* ---- set-up ------------------------------------------------------------------------------- */

static void usage(FILE *f)
{
    fprintf(f,
            "usage: rectwin sweep SWEEP.yaml [-j N] [--out DIR] [--engine NAME] [--set K=V]...\n"
            "                                [--retry-failed] [--list] [--quiet]\n"
            "\n"
            "Runs the sweep's scenario at every point of its grid (and zipped lists) and writes\n"
            "one CSV row per point: DIR/sweep.csv (DIR: the sweep's out, default\n"
            "results/sweeps/<name>/). Finished points are kept in DIR/points/: an interrupted\n"
            "sweep resumes where it stopped when the same command runs again. Under mpirun each\n"
            "rank takes every size-th point (rank and size from OMPI_COMM_WORLD_* or PMI_*).\n"
            "  -j, --jobs N     worker processes on this machine (default 1)\n"
            "  --out DIR        result directory (overrides the sweep file's out)\n"
            "  --engine NAME    engine (overrides the sweep file's engine):");
    for (int i = 0; rt_engines[i]; i++)
        fprintf(f, " %s", rt_engines[i]->name);
    fprintf(f, "\n"
               "  --set K=V        override a scenario key at every point (repeatable)\n"
               "  --retry-failed   compute the points that failed again (they are kept\n"
               "                   otherwise: a rerun computes only the missing points)\n"
               "  --list           print the points as CSV and exit\n"
               "  --quiet          no progress\n"
               "\n"
               "example (experiments/sweeps/nic-rail-plans.yaml, 120 points):\n"
               "  scenario: ../dlrm-criteo.yaml        # relative to the sweep file\n"
               "  engine: analytic\n"
               "  set: {workload.mode: statistical, topology.scale_out.oversubscription: 2}\n"
               "  grid:                                # the first key varies slowest\n"
               "    topology.nodes: [8, 16, 32, 64, 128]\n"
               "    topology.scale_out.nic_bw: [200Gbps, 400Gbps, 800Gbps]\n"
               "    topology.scale_out.rail_optimized: [true, false]\n"
               "  zip:                                 # lists that vary together; ~: unset\n"
               "    - {plan.name: [flat, fused, sptt, hsp], plan.hosts_per_tower: [~, ~, 8, ~]}\n"
               "\n"
               "  rectwin sweep experiments/sweeps/nic-rail-plans.yaml -j 2\n");
}

static int parse_jobs(const char *v, int *jobs)
{
    char *end;
    long n = strtol(v, &end, 10);
    if (*v && !*end && n >= 1 && n <= MAX_JOBS) {
        *jobs = (int)n;
        return 0;
    }
    fprintf(stderr, "rectwin sweep: -j '%s'; allowed: an integer in [1, %d]\n", v, MAX_JOBS);
    return -1;
}

/* Options with a value: "--opt V", "--opt=V" and, for -j, "-jN". Returns the value or NULL. */
static const char *option_value(int argc, char **argv, int *i, const char *name)
{
    const char *a = argv[*i];
    size_t n = strlen(name);
    if (strncmp(a, name, n)) return NULL;
    if (a[n] == '=') return a + n + 1;
    if (!strcmp(name, "-j") && a[n]) return a + n;
    if (a[n]) return NULL;
    if (*i + 1 >= argc) {
        fprintf(stderr, "rectwin sweep: %s needs a value\n", name);
        return "";
    }
    return argv[++*i];
}

static int parse_args(int argc, char **argv, options *o)
{
    static const char *const flags[] = {"--jobs", "-j",      "--out",          "--engine", "--set",
                                        "--list", "--quiet", "--retry-failed", "--help",   NULL};
    memset(o, 0, sizeof *o);
    o->jobs = 1;
    for (int i = 1; i < argc; i++) {
        int taken = rt_cli_take_set(argc, argv, &i, o->sets, &o->n_sets, MAX_SETS);
        if (taken < 0) return 2;
        if (taken) continue;
        const char *a = argv[i], *v;
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            usage(stdout);
            return 1;
        } else if (!strcmp(a, "--list")) {
            o->list = 1;
        } else if (!strcmp(a, "--quiet")) {
            o->quiet = 1;
        } else if (!strcmp(a, "--retry-failed")) {
            o->retry_failed = 1;
        } else if ((v = option_value(argc, argv, &i, "--jobs")) ||
                   (v = option_value(argc, argv, &i, "-j"))) {
            if (!*v || parse_jobs(v, &o->jobs)) return 2;
        } else if ((v = option_value(argc, argv, &i, "--out"))) {
            if (!*v) return 2;
            o->out = v;
        } else if ((v = option_value(argc, argv, &i, "--engine"))) {
            if (!*v) return 2;
            o->engine = v;
        } else if (a[0] == '-') {
            rt_cli_unknown("rectwin sweep", "option", a, flags);
            return 2;
        } else if (o->file) {
            fprintf(stderr, "rectwin sweep: one sweep file only ('%s', then '%s')\n", o->file, a);
            return 2;
        } else {
            o->file = a;
        }
    }
    if (o->file) return 0;
    usage(stderr);
    return 2;
}

/* The rank and size an MPI launcher gives this process (0 of 1 without one). */
static int launcher_rank(int *rank, int *size)
{
    static const char *const vars[][2] = {{"OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE"},
                                          {"PMI_RANK", "PMI_SIZE"}};
    *rank = 0;
    *size = 1;
    for (size_t k = 0; k < sizeof vars / sizeof vars[0]; k++) {
        const char *r = getenv(vars[k][0]), *s = getenv(vars[k][1]);
        if (!r || !s) continue;
        char *e1, *e2;
        long rv = strtol(r, &e1, 10), sv = strtol(s, &e2, 10);
        if (!*r || !*s || *e1 || *e2 || sv < 1 || sv > 1 << 20 || rv < 0 || rv >= sv) {
            fprintf(stderr, "rectwin sweep: %s=%s and %s=%s are not a rank and a size\n",
                    vars[k][0], r, vars[k][1], s);
            return -1;
        }
        *rank = (int)rv;
        *size = (int)sv;
        return 0;
    }
    return 0;
}

static void list_points(const rt_sweep_spec *spec)
{
    const char *keys[RT_SWEEP_MAX_KEYS], *shown[RT_SWEEP_MAX_KEYS];
    int nk = rt_sweep_n_keys(spec);
    rt_sweep_keys(spec, keys);
    fputs("point", stdout);
    for (int k = 0; k < nk; k++)
        rt_sweep_csv_field(stdout, keys[k]);
    fputc('\n', stdout);
    for (long p = 0; p < spec->n_points; p++) {
        rt_sweep_point_shown(spec, p, shown);
        printf("%ld", p);
        for (int k = 0; k < nk; k++)
            rt_sweep_csv_field(stdout, shown[k]);
        fputc('\n', stdout);
    }
}

/* The base every point starts from must load: a typo there is the user's to fix now, not
 * an error repeated on every point. */
static int check_base(const sweep *sw)
{
    rt_scenario *s = rt_scenario_load(sw->spec->scenario_path, sw->sets, sw->n_fixed_sets, stderr);
    if (s) {
        rt_scenario_free(s);
        return 0;
    }
    fprintf(stderr,
            "rectwin sweep: the base scenario '%s' (with the sweep's set and --set) does not "
            "load\n",
            sw->spec->scenario_path);
    return -1;
}

/* Whether the base scenario loads with SETS (the fixed ones and N more); the error, if any,
 * into *MSG (malloc'd, or NULL). */
static int loads(const sweep *sw, int n, char **msg)
{
    size_t len = 0;
    FILE *err = open_memstream(msg, &len);
    if (!err) return 1; /* cannot tell: let the points say */
    rt_scenario *s = rt_scenario_load(sw->spec->scenario_path, sw->sets, n, err);
    rt_scenario_free(s);
    fclose(err);
    return s != NULL;
}

/* An axis none of whose values loads (checked with the other axes at their first value) is a
 * mistake in the sweep file, typically a misspelt key: refused before any point runs rather
 * than recorded at every point. A value that fails alone is a point's error, not refused. */
static int check_axes(const sweep *sw)
{
    const rt_sweep_spec *spec = sw->spec;
    int value[RT_SWEEP_MAX_KEYS] = {0};
    for (int a = 0; a < spec->n_axes; a++) {
        const rt_sweep_axis *ax = &spec->axes[a];
        char *first = NULL;
        int ok = 0;
        for (int v = 0; v < ax->n_values && !ok; v++) {
            char *msg = NULL;
            value[a] = v;
            ok = loads(sw,
                       sw->n_fixed_sets + rt_sweep_assign(spec, value, sw->sets + sw->n_fixed_sets),
                       &msg);
            if (!first)
                first = msg;
            else
                free(msg);
        }
        value[a] = 0;
        if (!ok)
            fprintf(stderr,
                    "%s: key '%s': no value loads on the base scenario (a misspelt key, or "
                    "every value wrong); the first value's error:\n%s",
                    ax->where[0], ax->keys[0], first ? first : "(none)\n");
        free(first);
        if (!ok) return -1;
    }
    return 0;
}

/* This rank's share, and which of its points are finished. */
static int plan_share(sweep *sw)
{
    long n = sw->spec->n_points;
    sw->pending = malloc(sizeof *sw->pending * (size_t)(n / sw->size + 1));
    if (!sw->pending) return -1;
    for (long p = sw->rank; p < n; p += sw->size) {
        int failed = 0;
        sw->share++;
        if (finished(sw, p, &failed)) {
            sw->done_before++;
            sw->failed_before += failed;
        } else {
            sw->pending[sw->n_pending++] = p;
        }
    }
    return 0;
}

static int open_store(sweep *sw, const options *o, const char *out)
{
    uint64_t hash = rt_sweep_hash(sw->spec, sw->engine->name, o->sets, o->n_sets);
    char about[8192];
    snprintf(about, sizeof about, "file %s\nscenario %s\nengine %s\n", sw->spec->path,
             sw->spec->scenario, sw->engine->name);
    sw->store = rt_sweep_store_open(out, hash, sw->spec->n_points, about, stderr);
    return sw->store ? 0 : -1;
}

/* ---- the command ------------------------------------------------------------------------- */

/* Assembles the CSV when every point is done. Exit status 0 when it is written (or, under
 * mpirun, when this rank's share is done and another rank will write it), 1 when points are
 * missing on one machine or every point failed. */
static int finish(const sweep *sw, double t0, int ran_ok)
{
    long failed = 0, n = sw->spec->n_points;
    long missing = rt_sweep_store_write_csv(sw->store, sw->spec, figure_columns, &failed, stderr);
    const char *name = sw->spec->name;
    if (missing < 0) return 1;
    if (missing > 0 && sw->size > 1 && ran_ok) {
        printf("sweep %s: rank %d/%d finished its %ld points; %ld of %ld points are not done "
               "yet: the rank that finishes last writes the CSV (or run this command again)\n",
               name, sw->rank, sw->size, sw->share, missing, n);
        return 0;
    }
    if (missing > 0) {
        printf("sweep %s: %ld of %ld points are not done (see above); run this command again "
               "to resume\n",
               name, missing, n);
        return 1;
    }
    printf("sweep %s: %ld points, %ld ok, %ld failed (status and error columns), %.1f s; "
           "CSV: %s\n",
           name, n, n - failed, failed, rt_pipeline_now() - t0, rt_sweep_store_csv_path(sw->store));
    return failed == n ? 1 : 0;
}

static int sweep_run(sweep *sw, const options *o)
{
    double t0 = rt_pipeline_now();
    if (plan_share(sw) < 0) {
        fprintf(stderr, "rectwin sweep: out of memory\n");
        return 1;
    }
    if (sw->done_before && !o->quiet)
        fprintf(stderr, "sweep %s: resuming, %ld of %ld points already done\n", sw->spec->name,
                sw->done_before, sw->share);
    int ran_ok = !sw->n_pending || run_workers(sw, o->jobs, o->quiet) == 0;
    int rc = finish(sw, t0, ran_ok);
    return ran_ok ? rc : 1;
}

/* --out, else the file's out, else results/sweeps/<name> (in BUF). */
static const char *out_dir(const options *o, const rt_sweep_spec *spec, char *buf, size_t size)
{
    if (o->out) return o->out;
    if (spec->out) return spec->out;
    snprintf(buf, size, "results/sweeps/%s", spec->name);
    return buf;
}

int rt_cmd_sweep(int argc, char **argv)
{
    options o;
    int rc = parse_args(argc, argv, &o);
    if (rc) return rc == 1 ? 0 : rc;
    sweep sw = {0};
    if (launcher_rank(&sw.rank, &sw.size) < 0) return 2;
    rt_sweep_spec *spec = rt_sweep_spec_load(o.file, stderr);
    if (!spec) return 2;
    sw.spec = spec;
    sw.retry_failed = o.retry_failed;
    const char *engine = o.engine ? o.engine : spec->engine ? spec->engine : rt_engines[0]->name;
    if (!(sw.engine = rt_engine_find(engine))) {
        const char *names[16];
        int n = 0;
        for (; rt_engines[n] && n < 15; n++)
            names[n] = rt_engines[n]->name;
        names[n] = NULL;
        rt_cli_unknown("rectwin sweep", "engine", engine, names);
        rt_sweep_spec_free(spec);
        return 2;
    }
    if (o.list) {
        list_points(spec);
        rt_sweep_spec_free(spec);
        return 0;
    }
    rc = 2;
    sw.n_fixed_sets = o.n_sets + spec->n_base;
    sw.sets = malloc(sizeof *sw.sets * (size_t)(sw.n_fixed_sets + RT_SWEEP_MAX_KEYS));
    char out[4096];
    if (!sw.sets || rt_sweep_check_extra(spec, o.sets, o.n_sets, stderr) < 0) goto done;
    /* --set first: its messages' "--set:N" then counts as the command line does. */
    for (int i = 0; i < o.n_sets; i++)
        sw.sets[i] = o.sets[i];
    for (int i = 0; i < spec->n_base; i++)
        sw.sets[o.n_sets + i] = spec->base[i];
    if (check_base(&sw) < 0 || check_axes(&sw) < 0) goto done;
    if (open_store(&sw, &o, out_dir(&o, spec, out, sizeof out)) < 0) goto done;
    rc = sweep_run(&sw, &o);
done:
    free(sw.pending);
    free(sw.sets);
    rt_sweep_store_free(sw.store);
    rt_sweep_spec_free(spec);
    return rc;
}
