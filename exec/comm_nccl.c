/* The NCCL comm backend: one NCCL communicator per distinct group, bootstrapped over MPI (the
 * group's first member makes the unique id and broadcasts it over an MPI communicator split
 * off for the group). Payload collectives run on the device's current stream and are
 * asynchronous; the host-side size exchanges (allgather_meta, alltoall_meta) go over MPI. Every
 * NCCL call goes through RT_NCCL_CHECK, every MPI call through RT_MPI_CHECK, and every MPI
 * communicator returns errors as codes (MPI_ERRORS_RETURN). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <cuda_runtime_api.h>
#include <mpi.h>
#include <nccl.h>

#include "check_mpi.h"
#include "comm.h"

extern const rt_xcomm_ops rt_xcomm_nccl;

/* On failure: prints the call site, the call, NCCL's message and its last detailed error on
 * stderr, and returns -1 from the enclosing function. */
#define RT_NCCL_CHECK(call)                                                                        \
    do {                                                                                           \
        const ncclResult_t rt_nr_ = (call);                                                        \
        if (rt_nr_ != ncclSuccess) {                                                               \
            fprintf(stderr, "%s:%d: %s: %s (%s)\n", __FILE__, __LINE__, #call,                     \
                    ncclGetErrorString(rt_nr_), ncclGetLastError(NULL));                           \
            return -1;                                                                             \
        }                                                                                          \
    } while (0)

struct rt_xgroup {
    rt_group g;
    int index;    /* this rank's NCCL and MPI rank in the group */
    int *members; /* world rank of member k */
    MPI_Comm mpi;
    ncclComm_t nccl;
    int refs; /* group_open calls for the same (size, stride) share one communicator */
    rt_xgroup *next;
};

typedef struct {
    MPI_Comm world; /* a duplicate of MPI_COMM_WORLD with MPI_ERRORS_RETURN */
    rt_xgroup *groups;
} nccl_comm;

static nccl_comm *state_of(const rt_xcomm *c)
{
    return (nccl_comm *)c->impl;
}

static int stream_of(const rt_xcomm *c, cudaStream_t *s)
{
    *s = (cudaStream_t)c->dev->ops->native_stream(c->dev, c->dev->stream);
    if (*s) return 0;
    fprintf(stderr, "nccl comm: the device's current stream %d has no CUDA stream\n",
            (int)c->dev->stream);
    return -1;
}

static int world_setup(rt_xcomm *c, nccl_comm *st)
{
    RT_MPI_CHECK(MPI_Comm_dup(MPI_COMM_WORLD, &st->world));
    RT_MPI_CHECK(MPI_Comm_set_errhandler(st->world, MPI_ERRORS_RETURN));
    RT_MPI_CHECK(MPI_Comm_rank(st->world, &c->rank));
    RT_MPI_CHECK(MPI_Comm_size(st->world, &c->world));
    MPI_Comm local = MPI_COMM_NULL;
    RT_MPI_CHECK(
        MPI_Comm_split_type(st->world, MPI_COMM_TYPE_SHARED, c->rank, MPI_INFO_NULL, &local));
    RT_MPI_CHECK(MPI_Comm_set_errhandler(local, MPI_ERRORS_RETURN));
    RT_MPI_CHECK(MPI_Comm_rank(local, &c->local_rank));
    RT_MPI_CHECK(MPI_Comm_size(local, &c->local_size));
    RT_MPI_CHECK(MPI_Comm_free(&local));
    return 0;
}

static int world_free(nccl_comm *st)
{
    if (st->world != MPI_COMM_NULL) RT_MPI_CHECK(MPI_Comm_free(&st->world));
    return 0;
}

static void nccl_close(rt_xcomm *c);
static void nccl_describe(rt_xcomm *c, char *buf, size_t size)
{
    (void)c;
    int v = 0;
    if (ncclGetVersion(&v) != ncclSuccess) v = 0;
    snprintf(buf, size, "NCCL %d.%d.%d (code %d)", v / 10000, v / 100 % 100, v % 100, v);
}

static void nccl_abort(rt_xcomm *c, int code);

static int nccl_open(rt_xcomm *c, rt_xdev *d, FILE *err)
{
    c->impl = NULL;
    int inited = 0;
    if (MPI_Initialized(&inited) != MPI_SUCCESS || !inited) {
        fprintf(err, "nccl comm: MPI is not initialized (the runner calls MPI_Init first)\n");
        return -1;
    }
    if (!d || !d->ops || d->ops->host_memory || !d->ops->native_stream ||
        !d->ops->native_stream(d, RT_STREAM_COMM)) {
        fprintf(err, "nccl comm: needs a GPU device backend (cuda), not \"%s\"\n",
                d && d->ops ? d->ops->name : "none");
        return -1;
    }
    nccl_comm *st = calloc(1, sizeof *st);
    if (!st) {
        fprintf(err, "nccl comm: out of host memory\n");
        return -1;
    }
    st->world = MPI_COMM_NULL;
    c->ops = &rt_xcomm_nccl;
    c->impl = st;
    c->dev = d;
    if (world_setup(c, st)) {
        fprintf(err, "nccl comm: reading the MPI world failed (see above)\n");
        nccl_close(c);
        return -1;
    }
    /* Two ranks of a host on one GPU make ncclCommInitRank fail far from the cause. */
    if (d->local_rank != c->local_rank)
        fprintf(err,
                "nccl comm: warning: rank %d opened its device with local rank %d, but MPI "
                "says local rank %d of %d\n",
                c->rank, d->local_rank, c->local_rank, c->local_size);
    return 0;
}

/* Destroys one group's communicators; the group stays in the caller's hands. */
static int group_destroy(rt_xgroup *grp)
{
    if (grp->nccl) {
        ncclComm_t nc = grp->nccl;
        grp->nccl = NULL;
        RT_NCCL_CHECK(ncclCommDestroy(nc));
    }
    if (grp->mpi != MPI_COMM_NULL) RT_MPI_CHECK(MPI_Comm_free(&grp->mpi));
    return 0;
}

static void group_free(rt_xgroup *grp)
{
    if (group_destroy(grp))
        fprintf(stderr, "nccl comm: group {%d, %d} was not released cleanly (see above)\n",
                grp->g.size, grp->g.stride);
    free(grp->members);
    free(grp);
}

static void nccl_close(rt_xcomm *c)
{
    nccl_comm *st = state_of(c);
    if (!st) return;
    while (st->groups) {
        rt_xgroup *grp = st->groups;
        st->groups = grp->next;
        group_free(grp);
    }
    if (world_free(st)) fprintf(stderr, "nccl comm: freeing the MPI world duplicate failed\n");
    free(st);
    c->impl = NULL;
}

/* What index 0 broadcasts: its ncclGetUniqueId result travels with the id, so a failure
 * there fails every member instead of leaving them waiting in ncclCommInitRank. */
typedef struct {
    int ok;
    ncclUniqueId id;
} nccl_bootstrap;

static int make_id(nccl_bootstrap *b)
{
    RT_NCCL_CHECK(ncclGetUniqueId(&b->id));
    b->ok = 1;
    return 0;
}

static int gather_ranks(const rt_xcomm *c, const rt_xgroup *grp, int *got)
{
    RT_MPI_CHECK(MPI_Allgather(&c->rank, 1, MPI_INT, got, 1, MPI_INT, grp->mpi));
    return 0;
}

/* Collective over the world: every rank runs the split, then the group's members the
 * bootstrap and ncclCommInitRank. */
static int group_setup(rt_xcomm *c, rt_xgroup *grp)
{
    const rt_group g = grp->g;
    RT_MPI_CHECK(MPI_Comm_split(state_of(c)->world, rt_group_base(g, c->rank),
                                rt_group_index(g, c->rank), &grp->mpi));
    RT_MPI_CHECK(MPI_Comm_set_errhandler(grp->mpi, MPI_ERRORS_RETURN));
    int size = 0, index = -1;
    RT_MPI_CHECK(MPI_Comm_size(grp->mpi, &size));
    RT_MPI_CHECK(MPI_Comm_rank(grp->mpi, &index));
    /* The split must reproduce graph.h's membership exactly, member k at index k. */
    int *got = calloc((size_t)size, sizeof *got);
    if (!got) {
        /* The other members are about to gather: failing alone would hang them. */
        fprintf(stderr, "nccl comm: rank %d: out of host memory\n", c->rank);
        nccl_abort(c, 1);
        return -1;
    }
    const int gathered = gather_ranks(c, grp, got) == 0;
    int same = gathered && size == g.size && index == grp->index;
    for (int k = 0; same && k < size; k++)
        same = got[k] == grp->members[k];
    free(got);
    if (!same) {
        fprintf(stderr,
                "nccl comm: rank %d: the MPI split for group {%d, %d} has %d members, this rank "
                "at %d; the graph says %d members, this rank at %d\n",
                c->rank, g.size, g.stride, size, index, g.size, grp->index);
        return -1;
    }
    nccl_bootstrap b = {0};
    if (grp->index == 0 && make_id(&b)) b.ok = 0;
    RT_MPI_CHECK(MPI_Bcast(&b, (int)sizeof b, MPI_BYTE, 0, grp->mpi));
    if (!b.ok) {
        fprintf(stderr, "nccl comm: rank %d: group {%d, %d} got no NCCL id from its first member\n",
                c->rank, g.size, g.stride);
        return -1;
    }
    RT_NCCL_CHECK(ncclCommInitRank(&grp->nccl, g.size, b.id, grp->index));
    return 0;
}

static rt_xgroup *nccl_group_open(rt_xcomm *c, rt_group g, FILE *err)
{
    nccl_comm *st = state_of(c);
    /* Rank-independent, so either every rank fails here or none does (the split below is a
     * collective over the world). */
    if (g.size < 1 || g.stride < 1 || (int64_t)g.size * g.stride > c->world ||
        c->world % (g.size * g.stride)) {
        fprintf(err, "nccl comm: group {size %d, stride %d} does not tile the %d ranks\n", g.size,
                g.stride, c->world);
        return NULL;
    }
    for (rt_xgroup *grp = st->groups; grp; grp = grp->next)
        if (grp->g.size == g.size && grp->g.stride == g.stride) {
            grp->refs++;
            return grp;
        }
    rt_xgroup *grp = calloc(1, sizeof *grp);
    if (grp) grp->members = calloc((size_t)g.size, sizeof *grp->members);
    if (!grp || !grp->members) {
        /* Other ranks are about to split: failing alone would hang them; abort them all. */
        fprintf(err, "nccl comm: out of host memory opening group {%d, %d}\n", g.size, g.stride);
        free(grp);
        nccl_abort(c, 1);
        return NULL;
    }
    grp->g = g;
    grp->mpi = MPI_COMM_NULL;
    grp->index = rt_group_index(g, c->rank);
    for (int k = 0; k < g.size; k++)
        grp->members[k] = rt_group_member(g, c->rank, k);
    grp->refs = 1;
    if (group_setup(c, grp)) {
        fprintf(err, "nccl comm: rank %d: opening group {size %d, stride %d} failed (see above)\n",
                c->rank, g.size, g.stride);
        group_free(grp);
        return NULL;
    }
    grp->next = st->groups;
    st->groups = grp;
    return grp;
}

static void nccl_group_close(rt_xcomm *c, rt_xgroup *grp)
{
    if (!grp || --grp->refs > 0) return;
    for (rt_xgroup **at = &state_of(c)->groups; *at; at = &(*at)->next)
        if (*at == grp) {
            *at = grp->next;
            break;
        }
    group_free(grp);
}

/* The peer sends and receives of an alltoallv; the caller brackets them in one NCCL group. */
static int post_alltoallv(const rt_xgroup *grp, const char *send, const size_t *scount,
                          const size_t *sdispl, char *recv, const size_t *rcount,
                          const size_t *rdispl, cudaStream_t s)
{
    for (int k = 0; k < grp->g.size; k++) {
        if (k == grp->index) continue;
        if (scount[k])
            RT_NCCL_CHECK(ncclSend(send + sdispl[k], scount[k], ncclUint8, k, grp->nccl, s));
        if (rcount[k])
            RT_NCCL_CHECK(ncclRecv(recv + rdispl[k], rcount[k], ncclUint8, k, grp->nccl, s));
    }
    return 0;
}

static int nccl_alltoallv(rt_xcomm *c, rt_xgroup *grp, const void *send, const size_t *scount,
                          const size_t *sdispl, void *recv, const size_t *rcount,
                          const size_t *rdispl)
{
    cudaStream_t s;
    if (stream_of(c, &s)) return -1;
    const int me = grp->index;
    if (scount[me] != rcount[me]) {
        fprintf(stderr, "nccl comm: alltoallv sends %zu bytes to itself but receives %zu\n",
                scount[me], rcount[me]);
        return -1;
    }
    /* The own block never leaves the GPU: a stream-ordered device copy. */
    if (scount[me]) {
        const cudaError_t e =
            cudaMemcpyAsync((char *)recv + rdispl[me], (const char *)send + sdispl[me], scount[me],
                            cudaMemcpyDeviceToDevice, s);
        if (e != cudaSuccess) {
            fprintf(stderr, "%s:%d: cudaMemcpyAsync (alltoallv own block): %s\n", __FILE__,
                    __LINE__, cudaGetErrorString(e));
            return -1;
        }
    }
    RT_NCCL_CHECK(ncclGroupStart());
    /* ncclGroupEnd runs even when posting failed, or the NCCL group stays open. */
    const int posted = post_alltoallv(grp, send, scount, sdispl, recv, rcount, rdispl, s);
    RT_NCCL_CHECK(ncclGroupEnd());
    return posted;
}

static int nccl_allreduce_f32(rt_xcomm *c, rt_xgroup *grp, float *buf, size_t n)
{
    cudaStream_t s;
    if (stream_of(c, &s)) return -1;
    if (!n) return 0;
    RT_NCCL_CHECK(ncclAllReduce(buf, buf, n, ncclFloat, ncclSum, grp->nccl, s));
    return 0;
}

static int nccl_reduce_scatter_f32(rt_xcomm *c, rt_xgroup *grp, const float *send, float *recv,
                                   size_t n)
{
    cudaStream_t s;
    if (stream_of(c, &s)) return -1;
    if (!n) return 0;
    RT_NCCL_CHECK(ncclReduceScatter(send, recv, n, ncclFloat, ncclSum, grp->nccl, s));
    return 0;
}

static int post_broadcasts(const rt_xgroup *grp, const char *send, char *recv, const size_t *count,
                           const size_t *displ, cudaStream_t s)
{
    for (int k = 0; k < grp->g.size; k++) {
        if (!count[k]) continue;
        /* Only the root reads its send buffer; the others pass their receive slot. */
        const void *from = k == grp->index ? (const void *)send : (const void *)(recv + displ[k]);
        RT_NCCL_CHECK(ncclBroadcast(from, recv + displ[k], count[k], ncclUint8, k, grp->nccl, s));
    }
    return 0;
}

static int nccl_allgatherv(rt_xcomm *c, rt_xgroup *grp, const void *send, void *recv,
                           const size_t *count, const size_t *displ)
{
    cudaStream_t s;
    if (stream_of(c, &s)) return -1;
    /* Equal, packed blocks are a plain AllGather: one collective instead of size broadcasts. */
    int packed = 1;
    for (int k = 0; packed && k < grp->g.size; k++)
        packed = count[k] == count[0] && displ[k] == (size_t)k * count[0];
    if (packed) {
        if (count[0]) RT_NCCL_CHECK(ncclAllGather(send, recv, count[0], ncclUint8, grp->nccl, s));
        return 0;
    }
    RT_NCCL_CHECK(ncclGroupStart());
    const int posted = post_broadcasts(grp, send, recv, count, displ, s);
    RT_NCCL_CHECK(ncclGroupEnd());
    return posted;
}

static int nccl_allgather_meta(rt_xcomm *c, rt_xgroup *grp, const int64_t *mine, int n,
                               int64_t *all)
{
    (void)c;
    RT_MPI_CHECK(MPI_Allgather(mine, n, MPI_INT64_T, all, n, MPI_INT64_T, grp->mpi));
    return 0;
}

static int nccl_alltoall_meta(rt_xcomm *c, rt_xgroup *grp, const int64_t *send, int64_t *recv)
{
    (void)c;
    RT_MPI_CHECK(MPI_Alltoall(send, 1, MPI_INT64_T, recv, 1, MPI_INT64_T, grp->mpi));
    return 0;
}

static int abort_group(rt_xgroup *grp)
{
    if (grp->nccl) RT_NCCL_CHECK(ncclCommAbort(grp->nccl));
    grp->nccl = NULL;
    return 0;
}

static void nccl_abort(rt_xcomm *c, int code)
{
    /* NCCL kernels of a failed peer may spin forever: abort them before MPI kills the job. */
    nccl_comm *st = state_of(c);
    for (rt_xgroup *grp = st ? st->groups : NULL; grp; grp = grp->next)
        (void)abort_group(grp);
    MPI_Abort(MPI_COMM_WORLD, code);
}

const rt_xcomm_ops rt_xcomm_nccl = {
    .name = "nccl",
    .open = nccl_open,
    .close = nccl_close,
    .group_open = nccl_group_open,
    .group_close = nccl_group_close,
    .alltoallv = nccl_alltoallv,
    .allreduce_f32 = nccl_allreduce_f32,
    .reduce_scatter_f32 = nccl_reduce_scatter_f32,
    .allgatherv = nccl_allgatherv,
    .allgather_meta = nccl_allgather_meta,
    .alltoall_meta = nccl_alltoall_meta,
    .abort = nccl_abort,
    .describe = nccl_describe,
};
