/* rectwin calibrate: measures this machine with rectwin-exec's own backends and writes the
 * tables into a topology file. For each rank count it launches
 *   LAUNCHER -np N rectwin-calibrate --device D --comm C [--quick] --out FRAGMENT
 * (rectwin-calibrate is built next to rectwin-exec), then joins the runs into one
 * `calibration:` section, replaces the topology's section with it, checks that the result
 * parses as a topology, and renames it into place: the file is never half written. */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "atomic_file.h"
#include "cfg.h"
#include "cleanup.h"
#include "commands.h"
#include "topology.h"

enum { RT_EXIT_USAGE = 2, MAX_RUNS = 16, MAX_WORDS = 64, MAX_EXTRA = 32 };

static void usage(FILE *f)
{
    fputs("usage: rectwin calibrate [--device cpu|cuda] [--comm mpi|nccl] [-o TOPOLOGY.yaml]\n"
          "         [--quick] [--ranks 1,2,4] [--launcher 'mpirun ...'] [--calibrator PATH]\n"
          "         [-- rectwin-calibrate options]\n"
          "Measures this machine with rectwin-exec's device and comm backends (GEMM grid per\n"
          "dtype, memory-bound kernels, attention, interaction, dispatch and host cost, every\n"
          "collective over sizes and groups), once per rank count in --ranks (each run with\n"
          "that many ranks at once), and writes the tables as the topology's `calibration:`\n"
          "section (replacing an older one; without -o the section is printed).\n"
          "  --ranks L       rank counts to measure (default: 1 and the online CPUs on cpu,\n"
          "                  1 on cuda); the model uses the run of a scenario's rank count\n"
          "  --quick         reduced grids and sizes: seconds, for CI\n"
          "  --launcher CMD  MPI launcher (default mpirun, with --oversubscribe past the CPU\n"
          "                  count and --allow-run-as-root as root)\n"
          "  --calibrator P  the rectwin-calibrate binary (default: next to this build's\n"
          "                  rectwin-exec, else on PATH)\n"
          "\nexample: rectwin calibrate --device cpu --comm mpi --ranks 1,2,4 -o "
          "topologies/localhost-cpu.yaml\n",
          f);
}

typedef struct cal_args {
    const char *device, *comm, *out, *launcher, *calibrator;
    int quick;
    int ranks[MAX_RUNS], n_ranks;
    const char *extra[MAX_EXTRA];
    int n_extra;
} cal_args;

static int parse_ranks(cal_args *a, const char *v)
{
    a->n_ranks = 0;
    const char *p = v;
    while (*p) {
        char *end;
        errno = 0;
        long r = strtol(p, &end, 10);
        if (errno || end == p || r < 1 || r > 65536 || a->n_ranks == MAX_RUNS ||
            (*end && *end != ',')) {
            fprintf(stderr,
                    "rectwin calibrate: --ranks '%s': allowed: up to %d rank counts >= 1, "
                    "separated by commas\n",
                    v, MAX_RUNS);
            return -1;
        }
        a->ranks[a->n_ranks++] = (int)r;
        p = *end ? end + 1 : end;
    }
    return a->n_ranks ? 0 : -1;
}

static int parse_args(cal_args *a, int argc, char **argv)
{
    a->device = "cpu", a->comm = "mpi", a->launcher = "mpirun";
    for (int i = 1; i < argc; i++) {
        const char *o = argv[i];
        if (!strcmp(o, "--help") || !strcmp(o, "-h")) return 1;
        if (!strcmp(o, "--quick")) {
            a->quick = 1;
            continue;
        }
        if (!strcmp(o, "--")) {
            for (i++; i < argc && a->n_extra < MAX_EXTRA; i++)
                a->extra[a->n_extra++] = argv[i];
            break;
        }
        if (i + 1 >= argc) {
            fprintf(stderr, "rectwin calibrate: '%s' is not an option or needs a value\n", o);
            return -1;
        }
        const char *v = argv[++i];
        if (!strcmp(o, "--device"))
            a->device = v;
        else if (!strcmp(o, "--comm"))
            a->comm = v;
        else if (!strcmp(o, "-o") || !strcmp(o, "--out"))
            a->out = v;
        else if (!strcmp(o, "--launcher"))
            a->launcher = v;
        else if (!strcmp(o, "--calibrator"))
            a->calibrator = v;
        else if (!strcmp(o, "--ranks")) {
            if (parse_ranks(a, v)) return -1;
        } else {
            fprintf(stderr, "rectwin calibrate: unknown option '%s'; see --help\n", o);
            return -1;
        }
    }
    if (strcmp(a->device, "cpu") && strcmp(a->device, "cuda")) {
        fprintf(stderr, "rectwin calibrate: --device '%s'; allowed: cpu, cuda\n", a->device);
        return -1;
    }
    if (strcmp(a->comm, "mpi") && strcmp(a->comm, "nccl")) {
        fprintf(stderr, "rectwin calibrate: --comm '%s'; allowed: mpi, nccl\n", a->comm);
        return -1;
    }
    if (!a->n_ranks) {
        long cpus = sysconf(_SC_NPROCESSORS_ONLN);
        a->ranks[a->n_ranks++] = 1;
        if (!strcmp(a->device, "cpu") && cpus > 1) a->ranks[a->n_ranks++] = (int)cpus;
    }
    return 0;
}

/* rectwin-calibrate next to this build's rectwin-exec (BUILD/exec/), else beside rectwin,
 * else the name alone for PATH. BUF holds the result. */
static const char *find_calibrator(const cal_args *a, char *buf, size_t size)
{
    if (a->calibrator) return a->calibrator;
    char self[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    if (n > 0) {
        self[n] = '\0';
        char *slash = strrchr(self, '/');
        if (slash) {
            *slash = '\0';
            const char *tries[] = {"/../exec/rectwin-calibrate", "/rectwin-calibrate"};
            for (int i = 0; i < 2; i++) {
                int w = snprintf(buf, size, "%s%s", self, tries[i]);
                if (w > 0 && (size_t)w < size && access(buf, X_OK) == 0) return buf;
            }
        }
    }
    return "rectwin-calibrate";
}

/* Runs ARGV (argv[0] looked up on PATH) and waits; the child dies with us on Ctrl-C. */
static int run_child(char *const *argv)
{
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    if (pid < 0) {
        fprintf(stderr, "rectwin calibrate: cannot start %s (fork failed)\n", argv[0]);
        return -1;
    }
    if (pid == 0) {
        execvp(argv[0], argv);
        fprintf(stderr, "rectwin calibrate: cannot run %s: %s\n", argv[0], strerror(errno));
        _exit(127);
    }
    rt_cleanup_child(pid);
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
        ;
    rt_cleanup_child(0);
    if (WIFEXITED(status) && WEXITSTATUS(status) == 0) return 0;
    fprintf(stderr, "rectwin calibrate: %s failed (%s %d)\n", argv[0],
            WIFEXITED(status) ? "exit status" : "signal",
            WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));
    return -1;
}

/* One run: LAUNCHER -np N CALIBRATOR ... --out FRAGMENT. */
static int measure(const cal_args *a, int ranks, const char *calibrator, const char *fragment,
                   const char *command)
{
    char launcher[1024], np[16];
    snprintf(launcher, sizeof launcher, "%s", a->launcher);
    snprintf(np, sizeof np, "%d", ranks);
    char *argv[MAX_WORDS + MAX_EXTRA + 24];
    int n = 0;
    for (char *save = NULL, *w = strtok_r(launcher, " \t", &save); w && n < MAX_WORDS;
         w = strtok_r(NULL, " \t", &save))
        argv[n++] = w;
    if (!n) {
        fprintf(stderr, "rectwin calibrate: --launcher is empty\n");
        return -1;
    }
    argv[n++] = "-np", argv[n++] = np;
    /* Open MPI refuses more ranks than cores, and root, unless told (the tests do the same). */
    if (!strcmp(argv[0], "mpirun")) {
        if (ranks > sysconf(_SC_NPROCESSORS_ONLN)) argv[n++] = "--oversubscribe";
        if (geteuid() == 0) argv[n++] = "--allow-run-as-root";
    }
    argv[n++] = (char *)calibrator;
    argv[n++] = "--device", argv[n++] = (char *)a->device;
    argv[n++] = "--comm", argv[n++] = (char *)a->comm;
    if (a->quick) argv[n++] = "--quick";
    argv[n++] = "--out", argv[n++] = (char *)fragment;
    argv[n++] = "--command", argv[n++] = (char *)command;
    for (int i = 0; i < a->n_extra; i++)
        argv[n++] = (char *)a->extra[i];
    argv[n] = NULL;
    fprintf(stderr, "rectwin calibrate: %d rank%s:", ranks, ranks > 1 ? "s" : "");
    for (int i = 0; i < n; i++)
        fprintf(stderr, " %s", argv[i]);
    fputc('\n', stderr);
    return run_child(argv);
}

static char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    char *buf = NULL;
    size_t cap = 0, n = 0;
    for (;;) {
        if (n + 4096 + 1 > cap) {
            cap = 2 * cap + 8192;
            char *b = realloc(buf, cap);
            if (!b) break;
            buf = b;
        }
        size_t got = fread(buf + n, 1, 4096, f);
        n += got;
        if (got < 4096) break;
    }
    int bad = ferror(f) || !buf;
    fclose(f);
    if (bad) {
        free(buf);
        return NULL;
    }
    buf[n] = '\0';
    if (len) *len = n;
    return buf;
}

/* The text after the "  runs:" line of a fragment (its run items), or NULL. */
static const char *runs_of(const char *fragment)
{
    const char *at = strstr(fragment, "\n  runs:\n");
    return at ? at + strlen("\n  runs:\n") : NULL;
}

/* The comment this command writes above its section, a line each. */
static const char *const section_header[] = {
    "# calibration: measured by `rectwin calibrate` (command below); tables, not single\n",
    "# numbers, in base units (bytes, seconds, bytes/s, FLOP/s); regenerate, do not edit.\n",
};

static int is_header_line(const char *line, size_t len)
{
    for (size_t i = 0; i < sizeof section_header / sizeof *section_header; i++)
        if (len == strlen(section_header[i]) && !strncmp(line, section_header[i], len)) return 1;
    return 0;
}

/* TOPO without its top-level `calibration:` block and without the header lines this command
 * writes above it: the block runs to the next line that starts at column 0 with a key. */
static void cut_section(const char *topo, FILE *out)
{
    const char *p = topo;
    int skipping = 0;
    while (*p) {
        const char *eol = strchr(p, '\n');
        size_t len = eol ? (size_t)(eol - p + 1) : strlen(p);
        int top_key = p[0] != ' ' && p[0] != '\t' && p[0] != '#' && p[0] != '\n';
        if (top_key) skipping = !strncmp(p, "calibration:", 12);
        if (!skipping && !is_header_line(p, len)) fwrite(p, 1, len, out);
        p += len;
    }
}

/* Writes TOPO_PATH with SECTION in place of its calibration, after checking the result
 * parses as a topology. */
static int write_topology(const char *topo_path, const char *section)
{
    char *old = slurp(topo_path, NULL);
    if (!old) {
        fprintf(stderr, "rectwin calibrate: cannot read %s\n", topo_path);
        return -1;
    }
    rt_atomic_file f;
    if (rt_atomic_open(&f, topo_path)) {
        free(old);
        fprintf(stderr, "rectwin calibrate: cannot write next to %s\n", topo_path);
        return -1;
    }
    cut_section(old, f.f);
    size_t n = strlen(old);
    if (n && old[n - 1] != '\n') fputc('\n', f.f);
    for (size_t i = 0; i < sizeof section_header / sizeof *section_header; i++)
        fputs(section_header[i], f.f);
    fputs(section, f.f);
    free(old);
    if (rt_atomic_close(&f)) {
        fprintf(stderr, "rectwin calibrate: writing %s failed\n", topo_path);
        return -1;
    }
    /* The new file must load as a topology before it replaces the old one. */
    rt_cfg *cfg = rt_cfg_load(f.tmp, stderr);
    rt_topology t = {0};
    int rc = cfg ? rt_topology_parse(cfg, rt_cfg_root(cfg), &t, 0) : -1;
    rt_topology_free(&t);
    rt_cfg_free(cfg);
    if (rc) {
        fprintf(stderr, "rectwin calibrate: the written topology does not parse; %s is unchanged\n",
                topo_path);
        rt_atomic_abort(&f);
        return -1;
    }
    return rt_atomic_rename(&f);
}

static char *command_line(int argc, char **argv)
{
    size_t n = strlen("rectwin") + 1;
    for (int i = 0; i < argc; i++)
        n += strlen(argv[i]) + 1;
    char *s = malloc(n);
    if (!s) return NULL;
    strcpy(s, "rectwin");
    for (int i = 0; i < argc; i++)
        strcat(strcat(s, " "), argv[i]);
    return s;
}

int rt_cmd_calibrate(int argc, char **argv)
{
    cal_args a = {0};
    int pa = parse_args(&a, argc, argv);
    if (pa) {
        usage(pa > 0 ? stdout : stderr);
        return pa > 0 ? 0 : RT_EXIT_USAGE;
    }
    char cal_buf[PATH_MAX], dir[] = "/tmp/rectwin-calibrate-XXXXXX";
    const char *calibrator = find_calibrator(&a, cal_buf, sizeof cal_buf);
    if (!mkdtemp(dir)) {
        fprintf(stderr, "rectwin calibrate: cannot create a temporary directory\n");
        return 1;
    }
    char *command = command_line(argc, argv);
    char *frag[MAX_RUNS] = {0};
    char path[MAX_RUNS][PATH_MAX + 32];
    int slot[MAX_RUNS], rc = command ? 0 : 1;
    for (int r = 0; r < a.n_ranks && !rc; r++) {
        snprintf(path[r], sizeof path[r], "%s/run-%d.yaml", dir, a.ranks[r]);
        slot[r] = rt_cleanup_track(path[r]);
        if (measure(&a, a.ranks[r], calibrator, path[r], command) ||
            !(frag[r] = slurp(path[r], NULL)) || !runs_of(frag[r])) {
            fprintf(stderr, "rectwin calibrate: the %d-rank run gave no calibration\n", a.ranks[r]);
            rc = 1;
        }
        remove(path[r]);
        rt_cleanup_forget(slot[r]);
    }
    rmdir(dir);
    char *section = NULL;
    size_t len = 0;
    FILE *s = rc ? NULL : open_memstream(&section, &len);
    if (s) {
        /* The first run's header (date, host, device, libraries, command), every run's items. */
        fwrite(frag[0], 1, (size_t)(runs_of(frag[0]) - frag[0]), s);
        for (int r = 0; r < a.n_ranks; r++)
            fputs(runs_of(frag[r]), s);
        rc = fclose(s) ? 1 : 0;
    }
    if (!rc) rc = a.out ? (write_topology(a.out, section) ? 1 : 0) : (fputs(section, stdout) < 0);
    if (!rc && a.out)
        fprintf(stderr, "rectwin calibrate: wrote %d run(s) into %s\n", a.n_ranks, a.out);
    for (int r = 0; r < MAX_RUNS; r++)
        free(frag[r]);
    free(section);
    free(command);
    return rc;
}
