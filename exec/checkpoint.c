/* Checkpoint save and load (checkpoint.h). Every rank writes the rows it holds and reads all
 * the rows of the checkpoint, so the only state that must match between save and load is the
 * model: ranks, plan and sharding are free. */
#if defined(__linux__) && !defined(_GNU_SOURCE)
#define _GNU_SOURCE /* syscall(SYS_renameat2): the atomic directory swap */
#endif
#include "checkpoint.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <mpi.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#if defined(__linux__)
#include <sys/syscall.h>
#endif

#include "atomic_file.h"
#include "cfg.h"
#include "check_mpi.h"
#include "json.h"

enum { FORMAT_VERSION = 1, MAX_PATH = 4096 };
static const char SHARD_MAGIC[8] = {'R', 'T', 'X', 'C', 'K', 'S', 'H', '1'};
static const char DENSE_MAGIC[8] = {'R', 'T', 'X', 'C', 'K', 'D', 'N', '1'};
static const char FORMAT_NAME[] = "rectwin-exec checkpoint";
/* Host staging moves this many bytes per device copy: tables may exceed a spare host copy. */
static const size_t CHUNK_BYTES = (size_t)4 << 20;

/* ---- errors agreed over the ranks ---------------------------------------------------------- */

/* Every rank reads the same files, so a corrupt file fails on every rank: messages go to a
 * buffer and only the lowest failing rank prints its own, once. */
typedef struct xlog {
    FILE *f, *err;
    char *buf;
    size_t len;
} xlog;

static void log_open(xlog *l, FILE *err)
{
    l->err = err, l->buf = NULL, l->len = 0;
    l->f = open_memstream(&l->buf, &l->len);
    if (!l->f) l->f = err; /* unbuffered then: every failing rank prints */
}

static void log_close(xlog *l)
{
    if (l->f && l->f != l->err) fclose(l->f);
    free(l->buf);
    l->f = NULL, l->buf = NULL, l->len = 0;
}

static int lowest_failing(int *who)
{
    RT_MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, who, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD));
    return 0;
}

/* Ends a phase: 0 when no rank failed, else -1 on every rank. A new log is opened for the
 * next phase. */
static int log_agree(xlog *l, int failed, int rank)
{
    int who = failed ? rank : INT_MAX;
    int mpi_bad = lowest_failing(&who);
    if (l->f != l->err) {
        fclose(l->f);
        l->f = NULL;
        if ((who == rank || mpi_bad) && l->len) {
            fwrite(l->buf, 1, l->len, l->err);
            fflush(l->err);
        }
    }
    FILE *err = l->err;
    log_close(l);
    log_open(l, err);
    return who == INT_MAX && !mpi_bad ? 0 : -1;
}

/* ---- files --------------------------------------------------------------------------------- */

static uint64_t fnv1a64(uint64_t h, const void *p, size_t n)
{
    const unsigned char *b = p;
    for (size_t i = 0; i < n; i++)
        h = (h ^ b[i]) * 0x100000001b3ULL;
    return h;
}
static const uint64_t FNV_BASIS = 0xcbf29ce484222325ULL;

static const char *byte_order(void)
{
    const uint16_t one = 1;
    unsigned char b;
    memcpy(&b, &one, 1);
    return b ? "little" : "big";
}

/* A file being written: its checksum and size follow every byte. */
typedef struct wfile {
    FILE *f;
    char path[MAX_PATH];
    uint64_t hash, bytes;
    int err_no; /* first write error */
} wfile;

static int wopen(wfile *w, const char *dir, const char *name, FILE *log)
{
    memset(w, 0, sizeof *w);
    snprintf(w->path, sizeof w->path, "%s/%s", dir, name);
    w->hash = FNV_BASIS;
    if (!(w->f = fopen(w->path, "wb"))) {
        fprintf(log, "exec: checkpoint: cannot create %s: %s\n", w->path, strerror(errno));
        return -1;
    }
    return 0;
}

static void wput(wfile *w, const void *p, size_t n)
{
    if (w->err_no || !n) return;
    if (fwrite(p, 1, n, w->f) != n) {
        w->err_no = errno ? errno : EIO;
        return;
    }
    w->hash = fnv1a64(w->hash, p, n), w->bytes += n;
}

static void wput_i32(wfile *w, int32_t v)
{
    wput(w, &v, sizeof v);
}
static void wput_u64(wfile *w, uint64_t v)
{
    wput(w, &v, sizeof v);
}

/* Flushes and syncs: a checkpoint is renamed into place only once its bytes are on disk, or
 * a crash right after the rename could leave DIR holding empty files. */
static int wclose(wfile *w, FILE *log)
{
    if (!w->f) return -1;
    int e = w->err_no;
    if (!e && fflush(w->f)) e = errno;
    if (!e && fsync(fileno(w->f))) e = errno;
    if (fclose(w->f) && !e) e = errno;
    w->f = NULL;
    if (!e) return 0;
    fprintf(log, "exec: checkpoint: writing %s failed: %s\n", w->path, strerror(e));
    return -1;
}

static int sync_dir(const char *dir, FILE *log)
{
    int fd = open(dir, O_RDONLY | O_DIRECTORY);
    if (fd < 0 || fsync(fd)) {
        fprintf(log, "exec: checkpoint: cannot sync directory %s: %s\n", dir, strerror(errno));
        if (fd >= 0) close(fd);
        return -1;
    }
    if (close(fd)) {
        fprintf(log, "exec: checkpoint: closing directory %s: %s\n", dir, strerror(errno));
        return -1;
    }
    return 0;
}

/* Whether NAME is a file a checkpoint holds: only those are ever deleted, so a --checkpoint
 * that names some other directory by mistake cannot wipe it. */
static int ckpt_file_name(const char *name)
{
    if (!strcmp(name, "meta.json") || !strcmp(name, "dense.bin")) return 1;
    if (strncmp(name, "shard.", 6) || !isdigit((unsigned char)name[6])) return 0;
    const char *p = name + 6;
    while (isdigit((unsigned char)*p))
        p++;
    return !strcmp(p, ".bin");
}

/* Checks that DIR holds only checkpoint files (CHECK_ONLY) or removes them and DIR. */
static int remove_ckpt_dir(const char *dir, int check_only, FILE *log)
{
    DIR *d = opendir(dir);
    if (!d) {
        fprintf(log, "exec: checkpoint: cannot read directory %s: %s\n", dir, strerror(errno));
        return -1;
    }
    int rc = 0;
    struct dirent *e;
    while (!rc && (errno = 0, e = readdir(d))) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
        if (!ckpt_file_name(e->d_name)) {
            fprintf(log,
                    "exec: checkpoint: %s holds '%s', which no checkpoint writes; refusing to "
                    "replace it (give --checkpoint a directory of its own)\n",
                    dir, e->d_name);
            rc = -1;
            break;
        }
        if (check_only) continue;
        char p[MAX_PATH];
        snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
        if (unlink(p)) {
            fprintf(log, "exec: checkpoint: cannot remove %s: %s\n", p, strerror(errno));
            rc = -1;
        }
    }
    if (!rc && errno) {
        fprintf(log, "exec: checkpoint: reading directory %s: %s\n", dir, strerror(errno));
        rc = -1;
    }
    closedir(d);
    if (!rc && !check_only && rmdir(dir)) {
        fprintf(log, "exec: checkpoint: cannot remove %s: %s\n", dir, strerror(errno));
        rc = -1;
    }
    return rc;
}

static int is_dir(const char *p)
{
    struct stat st;
    return stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

/* ---- save ---------------------------------------------------------------------------------- */

/* A shard's identity: table, columns, rows. HSP's replicas have equal identities. */
enum { DESC = 6 };
static void describe(const rt_xshard *sh, int64_t d[DESC])
{
    uint64_t fp = FNV_BASIS;
    if (sh->row_ids) fp = fnv1a64(fp, sh->row_ids, sizeof(uint64_t) * (size_t)sh->rows);
    d[0] = sh->table, d[1] = sh->col0, d[2] = sh->width;
    d[3] = sh->row_ids ? -1 : (int64_t)sh->row0, d[4] = (int64_t)sh->rows, d[5] = (int64_t)fp;
}

static int allgather_counts(int n, int *counts)
{
    RT_MPI_CHECK(MPI_Allgather(&n, 1, MPI_INT, counts, 1, MPI_INT, MPI_COMM_WORLD));
    return 0;
}

static int allgather_descs(const int64_t *mine, int n, int64_t *all, const int *counts,
                           const int *displs)
{
    RT_MPI_CHECK(
        MPI_Allgatherv(mine, n, MPI_INT64_T, all, counts, displs, MPI_INT64_T, MPI_COMM_WORLD));
    return 0;
}

/* What a save allocates before its first collective, so that a rank out of memory fails in
 * an agreed phase instead of leaving the others waiting in a collective it never joins. */
typedef struct save_ctx {
    int *write;           /* [shard]: this rank writes it */
    int *counts, *displs; /* [rank]: descriptor counts and offsets */
    int64_t *mine, *all;  /* descriptors of this rank's shards, and of every rank's */
    uint64_t *sums;       /* [rank]: bytes and checksum of shard.RANK.bin (rank 0) */
} save_ctx;

static int save_alloc(const rt_xexec *x, save_ctx *c, FILE *log)
{
    size_t n = (size_t)(x->tables.n ? x->tables.n : 1), W = (size_t)x->world;
    c->write = malloc(sizeof(int) * n);
    c->counts = malloc(sizeof(int) * W), c->displs = malloc(sizeof(int) * W);
    c->mine = malloc(sizeof(int64_t) * DESC * n);
    c->sums = calloc(2 * W, sizeof(uint64_t));
    if (c->write && c->counts && c->displs && c->mine && c->sums) return 0;
    fprintf(log, "exec: checkpoint: out of host memory\n");
    return -1;
}

static void save_free(save_ctx *c)
{
    free(c->write), free(c->counts), free(c->displs), free(c->mine), free(c->all), free(c->sums);
}

/* Collective: WRITE[i] = this rank writes shard i, because no lower rank (and no earlier shard
 * of its own) holds the same one. */
static int shards_to_write(const rt_xexec *x, save_ctx *c, xlog *l)
{
    int n = x->tables.n, W = x->world;
    for (int i = 0; i < n; i++)
        describe(&x->tables.shards[i], c->mine + (size_t)i * DESC);
    int nd = n * DESC;
    int rc = allgather_counts(nd, c->counts);
    size_t total = 0;
    for (int r = 0; r < W && !rc; r++)
        c->displs[r] = (int)total, total += (size_t)c->counts[r];
    if (!rc && !(c->all = malloc(sizeof(int64_t) * (total ? total : 1)))) {
        fprintf(l->f, "exec: checkpoint: out of host memory for %zu shard descriptors\n", total);
        rc = -1;
    }
    if (log_agree(l, rc, x->rank) || allgather_descs(c->mine, nd, c->all, c->counts, c->displs))
        return -1;
    for (int i = 0; i < n; i++) {
        const int64_t *d = c->mine + (size_t)i * DESC;
        c->write[i] = 1;
        for (int r = 0; r <= x->rank && c->write[i]; r++) {
            int upto = r < x->rank ? c->counts[r] / DESC : i;
            for (int j = 0; j < upto && c->write[i]; j++)
                c->write[i] = memcmp(c->all + c->displs[r] + (size_t)j * DESC, d,
                                     sizeof(int64_t) * DESC) != 0;
        }
    }
    return 0;
}

/* Floats of optimizer state per row in slot K. */
static int64_t state_per_row(rt_koptim opt, int k, int width)
{
    return rt_kopt_state_len(opt, k, 1, width);
}

static int d2h(const rt_xexec *x, void *h, const void *dev, size_t bytes, FILE *log)
{
    if (!bytes || !x->dev->ops->copy(x->dev, h, dev, bytes, RT_XCOPY_D2H)) return 0;
    fprintf(log, "exec: checkpoint: copying %zu bytes from the %s device failed\n", bytes,
            x->dev->ops->name);
    return -1;
}

static int write_shard(const rt_xexec *x, const rt_xshard *sh, wfile *w, FILE *log)
{
    size_t eb = rt_kdtype_bytes(sh->t.dtype), W = (size_t)sh->width;
    int64_t per[2] = {state_per_row(sh->opt, 0, sh->width), state_per_row(sh->opt, 1, sh->width)};
    wput_i32(w, sh->table), wput_i32(w, sh->col0), wput_i32(w, sh->width);
    wput_i32(w, (int32_t)sh->t.dtype), wput_i32(w, (int32_t)sh->opt), wput_i32(w, 0);
    wput_u64(w, sh->rows);
    size_t row_bytes = W * eb + (size_t)(per[0] + per[1]) * sizeof(float);
    uint64_t chunk = 1 + CHUNK_BYTES / (row_bytes ? row_bytes : 1);
    char *vals = malloc(chunk * W * eb);
    float *st[2] = {malloc(sizeof(float) * chunk * (size_t)(per[0] ? per[0] : 1)),
                    malloc(sizeof(float) * chunk * (size_t)(per[1] ? per[1] : 1))};
    int rc = -1;
    if (!vals || !st[0] || !st[1]) {
        fprintf(log, "exec: checkpoint: out of host memory staging table %d\n", sh->table);
        goto out;
    }
    const float *dev_st[2] = {sh->st.s0, sh->st.s1};
    for (uint64_t r0 = 0; r0 < sh->rows; r0 += chunk) {
        uint64_t n = sh->rows - r0 < chunk ? sh->rows - r0 : chunk;
        if (d2h(x, vals, (const char *)sh->t.data + r0 * W * eb, n * W * eb, log)) goto out;
        for (int k = 0; k < 2; k++)
            if (per[k] &&
                d2h(x, st[k], dev_st[k] + r0 * (uint64_t)per[k], sizeof(float) * n * per[k], log))
                goto out;
        for (uint64_t r = 0; r < n; r++) {
            wput_u64(w, rt_xshard_global_row(sh, r0 + r));
            wput(w, vals + r * W * eb, W * eb);
            for (int k = 0; k < 2; k++)
                wput(w, st[k] + r * (uint64_t)per[k], sizeof(float) * (size_t)per[k]);
        }
    }
    rc = 0;
out:
    free(vals), free(st[0]), free(st[1]);
    return rc;
}

static int write_shards(const rt_xexec *x, const char *tmp, const int *write, wfile *w, FILE *log)
{
    int n = x->tables.n, count = 0;
    char name[64];
    snprintf(name, sizeof name, "shard.%d.bin", x->rank);
    int rc = wopen(w, tmp, name, log);
    for (int i = 0; i < n; i++)
        count += write[i];
    if (!rc) {
        wput(w, SHARD_MAGIC, sizeof SHARD_MAGIC), wput_i32(w, FORMAT_VERSION);
        wput_i32(w, x->rank), wput_i32(w, x->world), wput_i32(w, count);
    }
    for (int i = 0; i < n && !rc; i++)
        if (write[i]) rc = write_shard(x, &x->tables.shards[i], w, log);
    if (w->f && wclose(w, log)) rc = -1;
    return rc;
}

static int write_dense(const rt_xexec *x, const char *tmp, wfile *w, FILE *log)
{
    int64_t len;
    const float *arr[3] = {rt_dnet_params(x->net, &len), rt_dnet_opt_state(x->net, 0),
                           rt_dnet_opt_state(x->net, 1)};
    if (wopen(w, tmp, "dense.bin", log)) return -1;
    wput(w, DENSE_MAGIC, sizeof DENSE_MAGIC), wput_i32(w, FORMAT_VERSION);
    wput_i32(w, arr[1] ? RT_KOPT_ADAM : RT_KOPT_SGD);
    wput_u64(w, (uint64_t)len), wput_u64(w, (uint64_t)*rt_dnet_step(x->net));
    size_t chunk = CHUNK_BYTES / sizeof(float);
    float *h = malloc(sizeof(float) * chunk);
    int rc = h ? 0 : -1;
    if (!h) fprintf(log, "exec: checkpoint: out of host memory\n");
    for (int a = 0; a < 3 && !rc && arr[a]; a++)
        for (int64_t i = 0; i < len && !rc; i += (int64_t)chunk) {
            size_t n = (size_t)(len - i) < chunk ? (size_t)(len - i) : chunk;
            rc = d2h(x, h, arr[a] + i, n * sizeof(float), log);
            if (!rc) wput(w, h, n * sizeof(float));
        }
    free(h);
    if (wclose(w, log)) rc = -1;
    return rc;
}

static void json_file(rt_json *j, const char *name, uint64_t bytes, uint64_t hash)
{
    char hex[32];
    snprintf(hex, sizeof hex, "%016" PRIx64, hash);
    rt_json_begin_object(j, name);
    rt_json_int(j, "bytes", (long long)bytes);
    rt_json_string(j, "fnv1a64", hex);
    rt_json_end_object(j);
}

/* SUMS: [rank] = (bytes, checksum) of shard.RANK.bin. */
static int write_meta(const rt_xexec *x, const char *tmp, const wfile *dense, const uint64_t *sums,
                      FILE *log)
{
    const rt_scenario *s = x->s;
    wfile w;
    if (wopen(&w, tmp, "meta.json", log)) return -1;
    /* rt_json writes straight to the FILE: meta.json carries the other files' checksums, not
     * its own, so only wclose's write checks matter here. */
    rt_json j;
    rt_json_init(&j, w.f, 1);
    rt_json_begin_object(&j, NULL);
    rt_json_string(&j, "format", FORMAT_NAME);
    rt_json_int(&j, "format_version", FORMAT_VERSION);
    rt_json_string(&j, "scenario", s->name);
    rt_json_string(&j, "model", s->model.name);
    rt_json_int(&j, "world_size", x->world);
    rt_json_int(&j, "next_iteration", (long long)x->iteration + 1);
    rt_json_int(&j, "seed", (long long)s->workload.seed);
    rt_json_int(&j, "global_batch", (long long)s->workload.batch_per_rank * x->world);
    rt_json_string(&j, "embedding_dtype", rt_dtype_names[s->plan.embedding_dtype]);
    rt_json_string(&j, "byte_order", byte_order());
    rt_json_int(&j, "n_tables", s->model.n_tables);
    rt_json_begin_object(&j, "tables");
    for (int t = 0; t < s->model.n_tables; t++) {
        const rt_table *tb = &s->model.tables[t];
        rt_json_begin_object(&j, tb->name);
        rt_json_int(&j, "index", t);
        rt_json_int(&j, "rows", (long long)tb->rows);
        rt_json_int(&j, "dim", tb->dim);
        rt_json_string(&j, "optimizer", rt_optimizer_names[tb->optimizer]);
        rt_json_end_object(&j);
    }
    rt_json_end_object(&j);
    rt_json_string(&j, "checksum", "fnv1a64 of each file's bytes");
    rt_json_begin_object(&j, "files");
    json_file(&j, "dense.bin", dense->bytes, dense->hash);
    for (int r = 0; r < x->world; r++) {
        char name[64];
        snprintf(name, sizeof name, "shard.%d.bin", r);
        json_file(&j, name, sums[2 * r], sums[2 * r + 1]);
    }
    rt_json_end_object(&j);
    rt_json_end_object(&j);
    rt_json_finish(&j);
    if (ferror(w.f)) w.err_no = errno ? errno : EIO;
    return wclose(&w, log);
}

/* Replaces DIR by the complete TMP. With renameat2's exchange the swap is one atomic step;
 * elsewhere DIR is first moved aside, so a crash between the two renames leaves DIR missing
 * but both checkpoints complete on disk (DIR.old.<pid> and TMP), never a partial DIR. */
static int swap_into_place(const char *tmp, const char *dir, long pid, FILE *log, FILE *err)
{
    if (!is_dir(dir)) {
        if (rename(tmp, dir) == 0) return 0;
        fprintf(log, "exec: checkpoint: cannot rename %s to %s: %s\n", tmp, dir, strerror(errno));
        return -1;
    }
#if defined(__linux__) && defined(SYS_renameat2)
    if (syscall(SYS_renameat2, AT_FDCWD, tmp, AT_FDCWD, dir, 2 /* RENAME_EXCHANGE */) == 0) {
        /* TMP now holds the previous checkpoint: the new one is in place whatever happens. */
        if (remove_ckpt_dir(tmp, 0, err))
            fprintf(err, "exec: checkpoint: note: the previous checkpoint stays in %s\n", tmp);
        return 0;
    }
#endif
    char old[MAX_PATH];
    snprintf(old, sizeof old, "%s.old.%ld", dir, pid);
    if (rename(dir, old)) {
        fprintf(log, "exec: checkpoint: cannot rename %s to %s: %s\n", dir, old, strerror(errno));
        return -1;
    }
    if (rename(tmp, dir)) {
        int e = errno;
        if (rename(old, dir)) /* leave the previous checkpoint where the user looks for it */
            fprintf(log, "exec: checkpoint: the previous checkpoint is now %s\n", old);
        fprintf(log, "exec: checkpoint: cannot rename %s to %s: %s\n", tmp, dir, strerror(e));
        return -1;
    }
    if (remove_ckpt_dir(old, 0, err))
        fprintf(err, "exec: checkpoint: note: the previous checkpoint stays in %s\n", old);
    return 0;
}

static int parent_of(const char *dir, char *out, size_t n)
{
    snprintf(out, n, "%s", dir);
    char *slash = strrchr(out, '/');
    while (slash && slash > out && slash[1] == '\0') { /* "a/b/" */
        *slash = '\0';
        slash = strrchr(out, '/');
    }
    if (!slash) return snprintf(out, n, "."), 0;
    if (slash == out)
        slash[1] = '\0';
    else
        *slash = '\0';
    return 0;
}

/* Leftovers of saves that died: reported, not removed, since another run may own them. */
static void note_leftovers(const char *dir, FILE *err)
{
    char parent[MAX_PATH];
    parent_of(dir, parent, sizeof parent);
    const char *base = strrchr(dir, '/') ? strrchr(dir, '/') + 1 : dir;
    size_t bl = strlen(base);
    DIR *d = opendir(parent);
    if (!d) return;
    struct dirent *e;
    while ((e = readdir(d)))
        if (!strncmp(e->d_name, base, bl) && !strncmp(e->d_name + bl, ".tmp.", 5))
            fprintf(err,
                    "exec: checkpoint: note: %s/%s is left over from an interrupted save; it is "
                    "not a checkpoint and was not touched\n",
                    parent, e->d_name);
    closedir(d);
}

/* Rank 0: creates TMP (empty) after checking that DIR, if it exists, is a checkpoint. */
static int prepare_tmp(const char *dir, const char *tmp, FILE *log)
{
    size_t n = strlen(dir);
    if (!n || n + 40 > MAX_PATH) {
        fprintf(log, "exec: checkpoint: directory name '%s' is empty or too long\n", dir);
        return -1;
    }
    if (is_dir(dir) && remove_ckpt_dir(dir, 1, log)) return -1;
    char parent[MAX_PATH];
    parent_of(dir, parent, sizeof parent);
    if (rt_mkdir_p(parent)) {
        fprintf(log, "exec: checkpoint: cannot create %s: %s\n", parent, strerror(errno));
        return -1;
    }
    /* Our own pid's leftover can only be from a previous process that died with this pid. */
    if (is_dir(tmp) && remove_ckpt_dir(tmp, 0, log)) return -1;
    if (mkdir(tmp, 0777)) {
        fprintf(log, "exec: checkpoint: cannot create %s: %s\n", tmp, strerror(errno));
        return -1;
    }
    return 0;
}

static int bcast_long(long *v)
{
    RT_MPI_CHECK(MPI_Bcast(v, 1, MPI_LONG, 0, MPI_COMM_WORLD));
    return 0;
}

static int gather_sums(const wfile *w, uint64_t *all)
{
    uint64_t mine[2] = {w->bytes, w->hash};
    RT_MPI_CHECK(MPI_Gather(mine, 2, MPI_UINT64_T, all, 2, MPI_UINT64_T, 0, MPI_COMM_WORLD));
    return 0;
}

int rt_xckpt_save(const rt_xexec *x, const char *dir, FILE *err)
{
    xlog l;
    log_open(&l, err);
    save_ctx c;
    memset(&c, 0, sizeof c);
    wfile shard, dense;
    memset(&shard, 0, sizeof shard), memset(&dense, 0, sizeof dense);
    long pid = (long)getpid();
    char tmp[MAX_PATH + 64];
    int rc = bcast_long(&pid);
    snprintf(tmp, sizeof tmp, "%s.tmp.%ld", dir, pid);
    if (!rc) rc = save_alloc(x, &c, l.f);
    if (!rc && x->rank == 0) rc = prepare_tmp(dir, tmp, l.f);
    /* Every rank reaches every collective below unless an agreed phase failed. */
    if (log_agree(&l, rc, x->rank)) {
        save_free(&c);
        log_close(&l);
        return -1;
    }
    rc = shards_to_write(x, &c, &l);
    if (!rc) {
        rc = write_shards(x, tmp, c.write, &shard, l.f);
        if (!rc && x->rank == 0) rc = write_dense(x, tmp, &dense, l.f);
        if (gather_sums(&shard, c.sums)) rc = -1;
        rc = log_agree(&l, rc, x->rank);
    }
    if (!rc) {
        if (x->rank == 0) {
            char parent[MAX_PATH];
            parent_of(dir, parent, sizeof parent);
            rc = write_meta(x, tmp, &dense, c.sums, l.f);
            if (!rc) rc = sync_dir(tmp, l.f);
            if (!rc) rc = swap_into_place(tmp, dir, pid, l.f, err);
            if (!rc) rc = sync_dir(parent, l.f);
            if (!rc) note_leftovers(dir, err);
        }
        rc = log_agree(&l, rc, x->rank);
    }
    /* A failed save leaves neither a partial DIR nor its own temporary directory. */
    if (rc && x->rank == 0 && is_dir(tmp)) remove_ckpt_dir(tmp, 0, err);
    save_free(&c);
    log_close(&l);
    return rc;
}

/* ---- load ---------------------------------------------------------------------------------- */

typedef struct meta {
    int64_t world, next, seed, global_batch;
} meta;

/* The size and checksum meta.json gives file NAME. */
static int meta_file(rt_cfg *c, struct fy_node *files, const char *name, const char *mpath,
                     uint64_t *bytes, uint64_t *hash, FILE *log)
{
    int ok = 1;
    struct fy_node *f = rt_cfg_get_map(c, files, name, 0, &ok);
    if (!ok) return -1;
    if (!f) {
        fprintf(log, "exec: checkpoint: %s lists no file '%s'\n", mpath, name);
        return -1;
    }
    int64_t b;
    char *h = NULL, *end = NULL;
    if (rt_cfg_get_int(c, f, "bytes", 1, 0, INT64_MAX, &b) ||
        rt_cfg_get_str(c, f, "fnv1a64", 1, &h))
        return free(h), -1;
    errno = 0;
    unsigned long long v = strtoull(h, &end, 16);
    int bad = errno || !*h || *end || strlen(h) != 16;
    if (bad)
        fprintf(log, "exec: checkpoint: %s: file '%s': fnv1a64 '%s' is not 16 hex digits\n", mpath,
                name, h);
    free(h);
    *bytes = (uint64_t)b, *hash = (uint64_t)v;
    return bad ? -1 : 0;
}

static int check_tables(const rt_scenario *s, rt_cfg *c, struct fy_node *root, const char *mpath,
                        FILE *log)
{
    const rt_model *m = &s->model;
    int64_t n;
    int ok = 1;
    if (rt_cfg_get_int(c, root, "n_tables", 1, 0, INT_MAX, &n)) return -1;
    struct fy_node *tables = rt_cfg_get_map(c, root, "tables", 1, &ok);
    if (!ok) return -1;
    if (n != m->n_tables) {
        fprintf(log,
                "exec: checkpoint: %s: the checkpoint has %lld tables, model '%s' has %d; resume "
                "with the model it was saved from\n",
                mpath, (long long)n, m->name, m->n_tables);
        return -1;
    }
    for (int t = 0; t < m->n_tables; t++) {
        const rt_table *tb = &m->tables[t];
        struct fy_node *e = rt_cfg_get_map(c, tables, tb->name, 0, &ok);
        if (!ok) return -1;
        if (!e) {
            fprintf(log,
                    "exec: checkpoint: %s: table '%s' of model '%s' is not in the checkpoint\n",
                    mpath, tb->name, m->name);
            return -1;
        }
        int64_t idx, rows, dim;
        int opt;
        if (rt_cfg_get_int(c, e, "index", 1, 0, INT_MAX, &idx) ||
            rt_cfg_get_int(c, e, "rows", 1, 0, INT64_MAX, &rows) ||
            rt_cfg_get_int(c, e, "dim", 1, 1, INT_MAX, &dim) ||
            rt_cfg_get_enum(c, e, "optimizer", 1, rt_optimizer_names, &opt))
            return -1;
        if (idx != t || (uint64_t)rows != tb->rows || dim != tb->dim || opt != (int)tb->optimizer) {
            fprintf(log,
                    "exec: checkpoint: %s: table '%s' was table %lld with %lld rows, dim %lld, "
                    "optimizer %s; the model has it as table %d with %llu rows, dim %d, "
                    "optimizer %s\n",
                    mpath, tb->name, (long long)idx, (long long)rows, (long long)dim,
                    rt_optimizer_names[opt], t, (unsigned long long)tb->rows, tb->dim,
                    rt_optimizer_names[tb->optimizer]);
            return -1;
        }
    }
    return 0;
}

/* Reads and validates DIR/meta.json; fills M and the files' expected sizes and checksums
 * (SUMS: [0] dense.bin, [1 + r] shard.r.bin: bytes, hash), malloc'd into *SUMS. */
static int read_meta(const rt_xexec *x, const char *dir, meta *M, uint64_t **sums, FILE *log)
{
    const rt_scenario *s = x->s;
    char mpath[MAX_PATH];
    snprintf(mpath, sizeof mpath, "%s/meta.json", dir);
    if (!is_dir(dir)) {
        fprintf(log,
                "exec: checkpoint: %s is not a directory (--resume names a checkpoint "
                "directory written by --checkpoint)\n",
                dir);
        return -1;
    }
    if (access(mpath, F_OK)) {
        fprintf(log,
                "exec: checkpoint: %s is not a checkpoint: it has no meta.json (an interrupted "
                "save leaves DIR.tmp.<pid> behind; resume from DIR itself)\n",
                dir);
        return -1;
    }
    rt_cfg *c = rt_cfg_load(mpath, log);
    if (!c) return -1;
    struct fy_node *root = rt_cfg_root(c);
    char *format = NULL, *model = NULL, *order = NULL;
    int64_t version;
    int rc = -1, ok = 1;
    if (rt_cfg_get_str(c, root, "format", 1, &format)) goto out;
    if (strcmp(format, FORMAT_NAME)) {
        fprintf(log, "exec: checkpoint: %s: format '%s' is not a %s\n", mpath, format, FORMAT_NAME);
        goto out;
    }
    if (rt_cfg_get_int(c, root, "format_version", 1, 0, INT_MAX, &version)) goto out;
    if (version != FORMAT_VERSION) {
        fprintf(log, "exec: checkpoint: %s: format version %lld; this rectwin-exec reads %d\n",
                mpath, (long long)version, FORMAT_VERSION);
        goto out;
    }
    if (rt_cfg_get_str(c, root, "model", 1, &model)) goto out;
    if (strcmp(model, s->model.name)) {
        fprintf(log,
                "exec: checkpoint: %s: the checkpoint is of model '%s', this run's model is "
                "'%s'; resume with the model it was saved from\n",
                mpath, model, s->model.name);
        goto out;
    }
    if (rt_cfg_get_str(c, root, "byte_order", 1, &order)) goto out;
    if (strcmp(order, byte_order())) {
        fprintf(log, "exec: checkpoint: %s: written on a %s-endian host, this one is %s-endian\n",
                mpath, order, byte_order());
        goto out;
    }
    if (check_tables(s, c, root, mpath, log) ||
        rt_cfg_get_int(c, root, "world_size", 1, 1, 1 << 24, &M->world) ||
        rt_cfg_get_int(c, root, "next_iteration", 1, 1, INT64_MAX / 2, &M->next) ||
        rt_cfg_get_int(c, root, "seed", 1, 0, INT64_MAX, &M->seed) ||
        rt_cfg_get_int(c, root, "global_batch", 1, 1, INT64_MAX, &M->global_batch))
        goto out;
    struct fy_node *files = rt_cfg_get_map(c, root, "files", 1, &ok);
    if (!ok) goto out;
    if (!(*sums = malloc(sizeof(uint64_t) * 2 * (size_t)(M->world + 1)))) {
        fprintf(log, "exec: checkpoint: out of host memory\n");
        goto out;
    }
    if (meta_file(c, files, "dense.bin", mpath, &(*sums)[0], &(*sums)[1], log)) goto out;
    for (int64_t r = 0; r < M->world; r++) {
        char name[64];
        snprintf(name, sizeof name, "shard.%lld.bin", (long long)r);
        if (meta_file(c, files, name, mpath, &(*sums)[2 * r + 2], &(*sums)[2 * r + 3], log))
            goto out;
    }
    rc = 0;
out:
    free(format), free(model), free(order);
    rt_cfg_free(c);
    return rc;
}

/* Checks PATH's size and checksum against meta.json before a byte of it is trusted. */
static int verify_file(const char *path, uint64_t bytes, uint64_t hash, FILE *log)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        fprintf(log, "exec: checkpoint: cannot open %s: %s\n", path, strerror(errno));
        return -1;
    }
    char *buf = malloc(CHUNK_BYTES);
    if (!buf) {
        fclose(f);
        fprintf(log, "exec: checkpoint: out of host memory\n");
        return -1;
    }
    uint64_t h = FNV_BASIS, n = 0;
    size_t got;
    while ((got = fread(buf, 1, CHUNK_BYTES, f)) > 0)
        h = fnv1a64(h, buf, got), n += got;
    int bad = ferror(f);
    free(buf);
    fclose(f);
    if (bad) {
        fprintf(log, "exec: checkpoint: reading %s failed\n", path);
        return -1;
    }
    if (n != bytes) {
        fprintf(log,
                "exec: checkpoint: %s has %llu bytes, meta.json says %llu: the file is truncated "
                "or from another checkpoint\n",
                path, (unsigned long long)n, (unsigned long long)bytes);
        return -1;
    }
    if (h != hash) {
        fprintf(log,
                "exec: checkpoint: %s: checksum fnv1a64 %016" PRIx64 " differs from meta.json's "
                "%016" PRIx64 ": the file is corrupt or from another checkpoint\n",
                path, h, hash);
        return -1;
    }
    return 0;
}

/* fread of exactly N bytes; a short read is a malformed file (the checksum was right, so the
 * writer itself was wrong). */
static int rd(FILE *f, void *p, size_t n, const char *path, const char *what, FILE *log)
{
    if (fread(p, 1, n, f) == n) return 0;
    fprintf(log, "exec: checkpoint: %s: ends inside %s\n", path, what);
    return -1;
}

/* The dense state read from dense.bin, uploaded once every rank has read everything. */
typedef struct dense_in {
    int64_t len, step;
    float *v[3]; /* params, m, v */
} dense_in;

static int read_dense(const rt_xexec *x, const char *path, dense_in *D, FILE *log)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        fprintf(log, "exec: checkpoint: cannot open %s: %s\n", path, strerror(errno));
        return -1;
    }
    char magic[8];
    int32_t version, opt;
    int64_t len, step;
    int rc = -1;
    if (rd(f, magic, 8, path, "the header", log) || rd(f, &version, 4, path, "the header", log) ||
        rd(f, &opt, 4, path, "the header", log) || rd(f, &len, 8, path, "the header", log) ||
        rd(f, &step, 8, path, "the header", log))
        goto out;
    int64_t have;
    rt_dnet_params(x->net, &have);
    int adam = rt_dnet_opt_state(x->net, 0) != NULL;
    if (memcmp(magic, DENSE_MAGIC, 8) || version != FORMAT_VERSION) {
        fprintf(log, "exec: checkpoint: %s is not a version %d dense checkpoint file\n", path,
                FORMAT_VERSION);
        goto out;
    }
    if (len != have || step < 0) {
        fprintf(log,
                "exec: checkpoint: %s holds %lld dense parameters, this model has %lld; resume "
                "with the model it was saved from\n",
                path, (long long)len, (long long)have);
        goto out;
    }
    if (opt != (adam ? RT_KOPT_ADAM : RT_KOPT_SGD)) {
        fprintf(log,
                "exec: checkpoint: %s was saved with dense optimizer %s, this run uses %s "
                "(training.dense_optimizer)\n",
                path, opt == RT_KOPT_ADAM ? "adam" : "sgd", adam ? "adam" : "sgd");
        goto out;
    }
    D->len = len, D->step = step;
    for (int a = 0; a < (adam ? 3 : 1); a++) {
        static const char *const what[] = {"the parameters", "Adam's m", "Adam's v"};
        if (!(D->v[a] = malloc(sizeof(float) * (size_t)(len ? len : 1)))) {
            fprintf(log, "exec: checkpoint: out of host memory for %lld dense parameters\n",
                    (long long)len);
            goto out;
        }
        if (rd(f, D->v[a], sizeof(float) * (size_t)len, path, what[a], log)) goto out;
    }
    if (fgetc(f) != EOF) {
        fprintf(log, "exec: checkpoint: %s: bytes after the dense state\n", path);
        goto out;
    }
    rc = 0;
out:
    fclose(f);
    return rc;
}

/* Host copy of one of this rank's shards while loading. SEEN counts the saved copies of
 * every element, which must come to exactly one. */
typedef struct stage {
    char *vals;
    float *st[2];
    int64_t per[2];
    uint8_t *seen;
} stage;

static void stages_free(stage *g, int n)
{
    for (int i = 0; g && i < n; i++)
        free(g[i].vals), free(g[i].st[0]), free(g[i].st[1]), free(g[i].seen);
    free(g);
}

static stage *stages_new(const rt_xtables *ts, FILE *log)
{
    stage *g = calloc((size_t)(ts->n ? ts->n : 1), sizeof *g);
    for (int i = 0; g && i < ts->n; i++) {
        const rt_xshard *sh = &ts->shards[i];
        size_t el = (size_t)sh->rows * (size_t)sh->width;
        stage *p = &g[i];
        p->vals = malloc((el ? el : 1) * rt_kdtype_bytes(sh->t.dtype));
        p->seen = calloc(el ? el : 1, 1);
        for (int k = 0; k < 2; k++) {
            p->per[k] = state_per_row(sh->opt, k, sh->width);
            size_t len = (size_t)sh->rows * (size_t)p->per[k];
            p->st[k] = malloc(sizeof(float) * (len ? len : 1));
        }
        if (!p->vals || !p->seen || !p->st[0] || !p->st[1]) {
            stages_free(g, ts->n);
            g = NULL;
        }
    }
    if (!g) fprintf(log, "exec: checkpoint: out of host memory staging this rank's tables\n");
    return g;
}

/* Local row of global row ROW in SH, or -1. */
static int64_t local_row(const rt_xshard *sh, uint64_t row)
{
    if (!sh->row_ids)
        return row >= sh->row0 && row - sh->row0 < sh->rows ? (int64_t)(row - sh->row0) : -1;
    uint64_t lo = 0, hi = sh->rows;
    while (lo < hi) {
        uint64_t mid = lo + (hi - lo) / 2;
        if (sh->row_ids[mid] < row)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < sh->rows && sh->row_ids[lo] == row ? (int64_t)lo : -1;
}

static float to_f32(const void *p, int dtype)
{
    if (dtype == RT_KDT_FP32) {
        float v;
        memcpy(&v, p, 4);
        return v;
    }
    uint16_t h;
    memcpy(&h, p, 2);
    return dtype == RT_KDT_FP16 ? rt_kf16_to_f32(h) : rt_kbf16_to_f32(h);
}

static void from_f32(void *p, float v, int dtype)
{
    if (dtype == RT_KDT_FP32) {
        memcpy(p, &v, 4);
        return;
    }
    uint16_t h = dtype == RT_KDT_FP16 ? rt_kf32_to_f16(v) : rt_kf32_to_bf16(v);
    memcpy(p, &h, 2);
}

/* A saved shard's header. */
typedef struct saved {
    int32_t table, col0, width, dtype, opt, pad;
    uint64_t rows;
} saved;

static int check_saved(const rt_scenario *s, const saved *sv, const char *path, int k, FILE *log)
{
    const rt_model *m = &s->model;
    if (sv->table < 0 || sv->table >= m->n_tables || sv->width < 1 || sv->col0 < 0 ||
        sv->col0 > m->tables[sv->table].dim - sv->width || sv->dtype < RT_KDT_FP32 ||
        sv->dtype > RT_KDT_BF16 || sv->rows > m->tables[sv->table].rows) {
        fprintf(log,
                "exec: checkpoint: %s: shard %d (table %d, columns %d+%d, dtype %d, %llu rows) "
                "does not fit this model\n",
                path, k, sv->table, sv->col0, sv->width, sv->dtype, (unsigned long long)sv->rows);
        return -1;
    }
    if (sv->opt != (int32_t)rt_xtables_opt(s, sv->table, 1).kind) {
        fprintf(log, "exec: checkpoint: %s: table '%s' was saved with another optimizer (%d)\n",
                path, m->tables[sv->table].name, sv->opt);
        return -1;
    }
    return 0;
}

/* The shards of this rank that take columns from saved shard SV: their indices into MATCH. */
static int matching(const rt_xexec *x, const saved *sv, int *match, const char *path, FILE *log)
{
    int n = 0;
    for (int i = 0; i < x->tables.n; i++) {
        const rt_xshard *sh = &x->tables.shards[i];
        if (sh->table != sv->table || sh->col0 >= sv->col0 + sv->width ||
            sv->col0 >= sh->col0 + sh->width)
            continue;
        if (sh->opt == RT_KOPT_ROWWISE_ADAGRAD &&
            (sh->col0 != sv->col0 || sh->width != sv->width)) {
            fprintf(log,
                    "exec: checkpoint: %s: table '%s' uses row-wise Adagrad, whose state is one "
                    "mean of squares per row over a shard's own columns: saved for columns [%d, "
                    "%d), this run shards it as columns [%d, %d); it cannot be split or merged, "
                    "so resume with the column sharding of the save (plan.sharding, "
                    "plan.column_shards)\n",
                    path, x->s->model.tables[sh->table].name, sv->col0, sv->col0 + sv->width,
                    sh->col0, sh->col0 + sh->width);
            return -1;
        }
        match[n++] = i;
    }
    return n;
}

/* Copies the overlapping columns of one saved row REC into shard I's staging. */
static int apply_row(const rt_xexec *x, stage *g, int i, const saved *sv, const char *rec,
                     int64_t lr, const char *path, FILE *log)
{
    const rt_xshard *sh = &x->tables.shards[i];
    stage *p = &g[i];
    size_t seb = rt_kdtype_bytes((rt_kdtype)sv->dtype), deb = rt_kdtype_bytes(sh->t.dtype);
    const char *vals = rec + 8;
    const char *state = vals + (size_t)sv->width * seb;
    int lo = sh->col0 > sv->col0 ? sh->col0 : sv->col0;
    int hi =
        sh->col0 + sh->width < sv->col0 + sv->width ? sh->col0 + sh->width : sv->col0 + sv->width;
    for (int c = lo; c < hi; c++) {
        int sc = c - sv->col0, lc = c - sh->col0;
        size_t el = (size_t)lr * (size_t)sh->width + (size_t)lc;
        if (p->seen[el]++) {
            fprintf(log,
                    "exec: checkpoint: %s: table '%s' row %llu column %d is saved twice (two "
                    "shards of the checkpoint hold it)\n",
                    path, x->s->model.tables[sh->table].name,
                    (unsigned long long)rt_xshard_global_row(sh, (uint64_t)lr), c);
            return -1;
        }
        if (sv->dtype == (int32_t)sh->t.dtype)
            memcpy(p->vals + el * deb, vals + (size_t)sc * seb, deb);
        else
            from_f32(p->vals + el * deb, to_f32(vals + (size_t)sc * seb, sv->dtype), sh->t.dtype);
        /* Adagrad and Adam keep state per column: slot k of column c follows that column. */
        for (int k = 0; k < 2 && sh->opt != RT_KOPT_ROWWISE_ADAGRAD; k++)
            if (p->per[k])
                memcpy(&p->st[k][el], state + sizeof(float) * ((size_t)k * sv->width + sc),
                       sizeof(float));
    }
    if (sh->opt == RT_KOPT_ROWWISE_ADAGRAD) memcpy(&p->st[0][lr], state, sizeof(float));
    return 0;
}

static int read_shard_file(const rt_xexec *x, stage *g, const char *path, int64_t file_rank,
                           int64_t world, FILE *log)
{
    const rt_scenario *s = x->s;
    FILE *f = fopen(path, "rb");
    if (!f) {
        fprintf(log, "exec: checkpoint: cannot open %s: %s\n", path, strerror(errno));
        return -1;
    }
    struct stat st;
    off_t size = fstat(fileno(f), &st) ? 0 : st.st_size;
    int *match = malloc(sizeof(int) * (size_t)(x->tables.n ? x->tables.n : 1));
    char *buf = NULL;
    char magic[8];
    int32_t hdr[4];
    int rc = -1;
    if (!match) {
        fprintf(log, "exec: checkpoint: out of host memory\n");
        goto out;
    }
    if (rd(f, magic, 8, path, "the header", log) || rd(f, hdr, sizeof hdr, path, "the header", log))
        goto out;
    if (memcmp(magic, SHARD_MAGIC, 8) || hdr[0] != FORMAT_VERSION || hdr[1] != file_rank ||
        hdr[2] != world || hdr[3] < 0) {
        fprintf(log,
                "exec: checkpoint: %s is not shard file %lld of %lld of a version %d checkpoint\n",
                path, (long long)file_rank, (long long)world, FORMAT_VERSION);
        goto out;
    }
    for (int k = 0; k < hdr[3]; k++) {
        saved sv;
        if (rd(f, &sv, sizeof sv, path, "a shard header", log) || check_saved(s, &sv, path, k, log))
            goto out;
        size_t rec = 8 + (size_t)sv.width * rt_kdtype_bytes((rt_kdtype)sv.dtype) +
                     sizeof(float) * (size_t)(state_per_row((rt_koptim)sv.opt, 0, sv.width) +
                                              state_per_row((rt_koptim)sv.opt, 1, sv.width));
        int nm = matching(x, &sv, match, path, log);
        if (nm < 0) goto out;
        if (nm == 0) { /* none of this rank's shards holds these columns */
            off_t at = ftello(f);
            if (at < 0 || (uint64_t)(size - at) < sv.rows * rec) {
                fprintf(log, "exec: checkpoint: %s: ends inside a shard's rows\n", path);
                goto out;
            }
            if (fseeko(f, (off_t)(sv.rows * rec), SEEK_CUR)) {
                fprintf(log, "exec: checkpoint: %s: seek failed: %s\n", path, strerror(errno));
                goto out;
            }
            continue;
        }
        uint64_t chunk = 1 + CHUNK_BYTES / rec;
        free(buf);
        if (!(buf = malloc(chunk * rec))) {
            fprintf(log, "exec: checkpoint: out of host memory\n");
            goto out;
        }
        const rt_table *tb = &s->model.tables[sv.table];
        for (uint64_t r0 = 0; r0 < sv.rows; r0 += chunk) {
            uint64_t n = sv.rows - r0 < chunk ? sv.rows - r0 : chunk;
            if (rd(f, buf, n * rec, path, "a shard's rows", log)) goto out;
            for (uint64_t r = 0; r < n; r++) {
                const char *p = buf + r * rec;
                uint64_t row;
                memcpy(&row, p, 8);
                if (row >= tb->rows) {
                    fprintf(log,
                            "exec: checkpoint: %s: table '%s' row %llu is out of its %llu rows\n",
                            path, tb->name, (unsigned long long)row, (unsigned long long)tb->rows);
                    goto out;
                }
                for (int m = 0; m < nm; m++) {
                    int64_t lr = local_row(&x->tables.shards[match[m]], row);
                    if (lr >= 0 && apply_row(x, g, match[m], &sv, p, lr, path, log)) goto out;
                }
            }
        }
    }
    if (fgetc(f) != EOF) {
        fprintf(log, "exec: checkpoint: %s: bytes after the last shard\n", path);
        goto out;
    }
    rc = 0;
out:
    free(match), free(buf);
    fclose(f);
    return rc;
}

/* Every element of every shard of this rank came from the checkpoint exactly once. */
static int check_complete(const rt_xexec *x, const stage *g, const char *dir, FILE *log)
{
    int rc = 0;
    for (int i = 0; i < x->tables.n; i++) {
        const rt_xshard *sh = &x->tables.shards[i];
        uint64_t missing = 0, first = 0;
        int col = 0;
        for (uint64_t r = 0; r < sh->rows; r++)
            for (int c = 0; c < sh->width; c++)
                if (!g[i].seen[r * (uint64_t)sh->width + (uint64_t)c]) {
                    if (!missing++) first = rt_xshard_global_row(sh, r), col = sh->col0 + c;
                    break;
                }
        if (!missing) continue;
        fprintf(log,
                "exec: checkpoint: %s: rank %d: table '%s' row %llu (column %d) is in no shard "
                "file of the checkpoint (%llu of the %llu rows of this rank's shard are missing)\n",
                dir, x->rank, x->s->model.tables[sh->table].name, (unsigned long long)first, col,
                (unsigned long long)missing, (unsigned long long)sh->rows);
        rc = -1;
    }
    return rc;
}

static int h2d(rt_xexec *x, void *dev, const void *h, size_t bytes, FILE *log)
{
    if (!bytes || !x->dev->ops->copy(x->dev, dev, h, bytes, RT_XCOPY_H2D)) return 0;
    fprintf(log, "exec: checkpoint: copying %zu bytes to the %s device failed\n", bytes,
            x->dev->ops->name);
    return -1;
}

static int upload(rt_xexec *x, const stage *g, const dense_in *D, FILE *log)
{
    for (int i = 0; i < x->tables.n; i++) {
        rt_xshard *sh = &x->tables.shards[i];
        float *dst[2] = {sh->st.s0, sh->st.s1};
        size_t rows = (size_t)sh->rows;
        if (h2d(x, sh->t.data, g[i].vals, rows * sh->width * rt_kdtype_bytes(sh->t.dtype), log))
            return -1;
        for (int k = 0; k < 2; k++)
            if (g[i].per[k] &&
                h2d(x, dst[k], g[i].st[k], sizeof(float) * rows * (size_t)g[i].per[k], log))
                return -1;
    }
    int64_t len;
    float *dst[3] = {rt_dnet_params(x->net, &len), rt_dnet_opt_state(x->net, 0),
                     rt_dnet_opt_state(x->net, 1)};
    for (int a = 0; a < 3; a++)
        if (dst[a] && D->v[a] && h2d(x, dst[a], D->v[a], sizeof(float) * (size_t)len, log))
            return -1;
    *rt_dnet_step(x->net) = D->step;
    return x->dev->ops->sync(x->dev);
}

static int read_all(rt_xexec *x, const char *dir, meta *M, stage **g, dense_in *D, FILE *log)
{
    uint64_t *sums = NULL;
    char path[MAX_PATH + 64];
    int rc = read_meta(x, dir, M, &sums, log);
    for (int64_t r = -1; r < M->world && !rc; r++) {
        if (r < 0)
            snprintf(path, sizeof path, "%s/dense.bin", dir);
        else
            snprintf(path, sizeof path, "%s/shard.%lld.bin", dir, (long long)r);
        rc = verify_file(path, sums[2 * (r + 1)], sums[2 * (r + 1) + 1], log);
    }
    free(sums);
    if (rc) return -1;
    snprintf(path, sizeof path, "%s/dense.bin", dir);
    if (read_dense(x, path, D, log) || !(*g = stages_new(&x->tables, log))) return -1;
    for (int64_t r = 0; r < M->world; r++) {
        snprintf(path, sizeof path, "%s/shard.%lld.bin", dir, (long long)r);
        if (read_shard_file(x, *g, path, r, M->world, log)) return -1;
    }
    return check_complete(x, *g, dir, log);
}

int rt_xckpt_load(rt_xexec *x, const char *dir, FILE *err)
{
    xlog l;
    log_open(&l, err);
    meta M;
    memset(&M, 0, sizeof M);
    dense_in D;
    memset(&D, 0, sizeof D);
    stage *g = NULL;
    int rc = read_all(x, dir, &M, &g, &D, l.f);
    if (!log_agree(&l, rc, x->rank))
        rc = log_agree(&l, upload(x, g, &D, l.f), x->rank);
    else
        rc = -1;
    if (!rc) {
        x->iteration = M.next - 1;
        const rt_scenario *s = x->s;
        int64_t gb = (int64_t)s->workload.batch_per_rank * x->world;
        if (x->rank == 0 && ((uint64_t)M.seed != s->workload.seed || M.global_batch != gb))
            fprintf(err,
                    "exec: checkpoint: note: %s was saved with seed %lld and global batch %lld, "
                    "this run has %llu and %lld: the resumed batches differ from an "
                    "uninterrupted run's\n",
                    dir, (long long)M.seed, (long long)M.global_batch,
                    (unsigned long long)s->workload.seed, (long long)gb);
    }
    stages_free(g, x->tables.n);
    for (int a = 0; a < 3; a++)
        free(D.v[a]);
    log_close(&l);
    return rc;
}
