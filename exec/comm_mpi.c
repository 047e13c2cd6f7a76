/* The MPI comm backend: MPI_Alltoallv, MPI_Allreduce and MPI_Allgatherv on communicators split
 * to match the graph's groups. Device buffers that are not host memory are staged through a
 * host buffer (D2H, MPI, H2D), as a CUDA-unaware MPI needs. */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "check_mpi.h"
#include "comm.h"
#include "local_ranks.h"

struct rt_xgroup {
    MPI_Comm comm;
    int size, index;
    int *sc, *sd, *rc, *rd; /* int counts and displacements for the MPI calls */
};

typedef struct mpi_state {
    void *stage[2]; /* host staging buffers for device memory */
    size_t stage_cap[2];
} mpi_state;

static int mpi_open(rt_xcomm *c, rt_xdev *d, FILE *err)
{
    mpi_state *st = calloc(1, sizeof *st);
    if (!st) {
        fprintf(err, "comm mpi: out of memory\n");
        return -1;
    }
    c->impl = st;
    c->dev = d;
    RT_MPI_CHECK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    RT_MPI_CHECK(MPI_Comm_rank(MPI_COMM_WORLD, &c->rank));
    RT_MPI_CHECK(MPI_Comm_size(MPI_COMM_WORLD, &c->world));
    return rt_xlocal_ranks(&c->local_rank, &c->local_size);
}

static void mpi_close(rt_xcomm *c)
{
    mpi_state *st = c->impl;
    if (st) free(st->stage[0]), free(st->stage[1]);
    free(st);
    c->impl = NULL;
}

static rt_xgroup *mpi_group_open(rt_xcomm *c, rt_group g, FILE *err)
{
    rt_xgroup *x = calloc(1, sizeof *x);
    if (!x) goto oom;
    x->size = g.size;
    x->index = rt_group_index(g, c->rank);
    size_t n = (size_t)g.size;
    x->sc = malloc(n * sizeof(int)), x->sd = malloc(n * sizeof(int));
    x->rc = malloc(n * sizeof(int)), x->rd = malloc(n * sizeof(int));
    if (!x->sc || !x->sd || !x->rc || !x->rd) goto oom;
    int rc = MPI_Comm_split(MPI_COMM_WORLD, rt_group_base(g, c->rank), x->index, &x->comm);
    if (rc != MPI_SUCCESS) {
        fprintf(err, "comm mpi: MPI_Comm_split for group {size %d, stride %d} failed (%d)\n",
                g.size, g.stride, rc);
        free(x->sc), free(x->sd), free(x->rc), free(x->rd), free(x);
        return NULL;
    }
    MPI_Comm_set_errhandler(x->comm, MPI_ERRORS_RETURN);
    return x;
oom:
    fprintf(err, "comm mpi: out of memory opening a group of %d\n", g.size);
    if (x) free(x->sc), free(x->sd), free(x->rc), free(x->rd);
    free(x);
    return NULL;
}

static void mpi_group_close(rt_xcomm *c, rt_xgroup *x)
{
    (void)c;
    if (!x) return;
    if (x->comm != MPI_COMM_NULL) MPI_Comm_free(&x->comm);
    free(x->sc), free(x->sd), free(x->rc), free(x->rd), free(x);
}

/* Host memory for staging slot K of at least BYTES. */
static void *stage(rt_xcomm *c, int k, size_t bytes)
{
    mpi_state *st = c->impl;
    if (bytes > st->stage_cap[k]) {
        void *p = realloc(st->stage[k], bytes);
        if (!p) {
            fprintf(stderr, "comm mpi: out of host memory staging %zu bytes\n", bytes);
            return NULL;
        }
        st->stage[k] = p, st->stage_cap[k] = bytes;
    }
    return st->stage[k] ? st->stage[k] : (void *)st; /* non-NULL even for 0 bytes */
}

static int host_mem(const rt_xcomm *c)
{
    return c->dev->ops->host_memory;
}

/* MPI counts are ints: a larger message needs the large-count API, which Open MPI 4 lacks. */
static int to_ints(const size_t *v, int n, int *out)
{
    for (int k = 0; k < n; k++) {
        if (v[k] > INT_MAX) {
            fprintf(stderr, "comm mpi: a message of %zu bytes exceeds MPI's int count\n", v[k]);
            return -1;
        }
        out[k] = (int)v[k];
    }
    return 0;
}

static size_t extent(const size_t *count, const size_t *displ, int n)
{
    size_t e = 0;
    for (int k = 0; k < n; k++)
        if (count[k] && displ[k] + count[k] > e) e = displ[k] + count[k];
    return e;
}

static int mpi_alltoallv(rt_xcomm *c, rt_xgroup *x, const void *send, const size_t *scount,
                         const size_t *sdispl, void *recv, const size_t *rcount,
                         const size_t *rdispl)
{
    if (to_ints(scount, x->size, x->sc) || to_ints(sdispl, x->size, x->sd) ||
        to_ints(rcount, x->size, x->rc) || to_ints(rdispl, x->size, x->rd))
        return -1;
    const void *s = send;
    void *r = recv;
    size_t se = extent(scount, sdispl, x->size), re = extent(rcount, rdispl, x->size);
    if (!host_mem(c)) {
        void *hs = stage(c, 0, se), *hr = stage(c, 1, re);
        if (!hs || !hr || (se && c->dev->ops->copy(c->dev, hs, send, se, RT_XCOPY_D2H))) return -1;
        s = hs, r = hr;
    }
    RT_MPI_CHECK(MPI_Alltoallv(s, x->sc, x->sd, MPI_BYTE, r, x->rc, x->rd, MPI_BYTE, x->comm));
    if (!host_mem(c) && re && c->dev->ops->copy(c->dev, recv, r, re, RT_XCOPY_H2D)) return -1;
    return 0;
}

static int mpi_allreduce_f32(rt_xcomm *c, rt_xgroup *x, float *buf, size_t n)
{
    if (n > INT_MAX) {
        fprintf(stderr, "comm mpi: an AllReduce of %zu floats exceeds MPI's int count\n", n);
        return -1;
    }
    float *b = buf;
    if (!host_mem(c)) {
        if (!(b = stage(c, 0, n * sizeof(float)))) return -1;
        if (n && c->dev->ops->copy(c->dev, b, buf, n * sizeof(float), RT_XCOPY_D2H)) return -1;
    }
    RT_MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, b, (int)n, MPI_FLOAT, MPI_SUM, x->comm));
    if (!host_mem(c) && n && c->dev->ops->copy(c->dev, buf, b, n * sizeof(float), RT_XCOPY_H2D))
        return -1;
    return 0;
}

static int mpi_reduce_scatter_f32(rt_xcomm *c, rt_xgroup *x, const float *send, float *recv,
                                  size_t n)
{
    if (n > INT_MAX) {
        fprintf(stderr, "comm mpi: a ReduceScatter of %zu floats exceeds MPI's int count\n", n);
        return -1;
    }
    size_t in = n * (size_t)x->size * sizeof(float), out = n * sizeof(float);
    const float *s = send;
    float *r = recv;
    if (!host_mem(c)) {
        float *hs = stage(c, 0, in), *hr = stage(c, 1, out);
        if (!hs || !hr || (in && c->dev->ops->copy(c->dev, hs, send, in, RT_XCOPY_D2H))) return -1;
        s = hs, r = hr;
    }
    RT_MPI_CHECK(MPI_Reduce_scatter_block(s, r, (int)n, MPI_FLOAT, MPI_SUM, x->comm));
    if (!host_mem(c) && out && c->dev->ops->copy(c->dev, recv, r, out, RT_XCOPY_H2D)) return -1;
    return 0;
}

static int mpi_allgatherv(rt_xcomm *c, rt_xgroup *x, const void *send, void *recv,
                          const size_t *count, const size_t *displ)
{
    if (to_ints(count, x->size, x->rc) || to_ints(displ, x->size, x->rd)) return -1;
    size_t mine = count[x->index], re = extent(count, displ, x->size);
    const void *s = send;
    void *r = recv;
    if (!host_mem(c)) {
        void *hs = stage(c, 0, mine), *hr = stage(c, 1, re);
        if (!hs || !hr || (mine && c->dev->ops->copy(c->dev, hs, send, mine, RT_XCOPY_D2H)))
            return -1;
        s = hs, r = hr;
    }
    RT_MPI_CHECK(MPI_Allgatherv(s, (int)mine, MPI_BYTE, r, x->rc, x->rd, MPI_BYTE, x->comm));
    if (!host_mem(c) && re && c->dev->ops->copy(c->dev, recv, r, re, RT_XCOPY_H2D)) return -1;
    return 0;
}

static int mpi_allgather_meta(rt_xcomm *c, rt_xgroup *x, const int64_t *mine, int n, int64_t *all)
{
    (void)c;
    RT_MPI_CHECK(MPI_Allgather(mine, n, MPI_INT64_T, all, n, MPI_INT64_T, x->comm));
    return 0;
}

static int mpi_alltoall_meta(rt_xcomm *c, rt_xgroup *x, const int64_t *send, int64_t *recv)
{
    (void)c;
    RT_MPI_CHECK(MPI_Alltoall(send, 1, MPI_INT64_T, recv, 1, MPI_INT64_T, x->comm));
    return 0;
}

static void mpi_describe(rt_xcomm *c, char *buf, size_t size)
{
    (void)c;
    char v[MPI_MAX_LIBRARY_VERSION_STRING];
    int len = 0;
    if (MPI_Get_library_version(v, &len) != MPI_SUCCESS) snprintf(v, sizeof v, "MPI (unknown)");
    v[strcspn(v, ",\n")] = '\0'; /* Open MPI appends its repository and release date */
    snprintf(buf, size, "%s", v);
}

static void mpi_abort(rt_xcomm *c, int code)
{
    (void)c;
    MPI_Abort(MPI_COMM_WORLD, code);
}

const rt_xcomm_ops rt_xcomm_mpi = {
    .name = "mpi",
    .open = mpi_open,
    .close = mpi_close,
    .group_open = mpi_group_open,
    .group_close = mpi_group_close,
    .alltoallv = mpi_alltoallv,
    .allreduce_f32 = mpi_allreduce_f32,
    .reduce_scatter_f32 = mpi_reduce_scatter_f32,
    .allgatherv = mpi_allgatherv,
    .allgather_meta = mpi_allgather_meta,
    .alltoall_meta = mpi_alltoall_meta,
    .abort = mpi_abort,
    .describe = mpi_describe,
};
