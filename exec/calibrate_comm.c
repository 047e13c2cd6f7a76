/* Collectives through the comm backend rectwin-exec uses (the same calls its ops make), over
 * message sizes and group sizes: the world and every power of two below it, as groups of
 * consecutive ranks that all run at once (as HSP's and the towers' groups do). Sizes are
 * nccl-tests sizes in bytes per rank: the AllReduce buffer, the AllGather output, the
 * ReduceScatter input, the AlltoAll send buffer split evenly over the members. `sendrecv` is
 * point-to-point: pairs of ranks exchange S bytes through a two-member AlltoAllv.
 *
 * Every call meets cache-cold buffers: the calls walk through pools of twice the device's
 * last-level cache, so no call finds what the one before it touched. A training step never
 * runs a collective twice on one buffer in a row; between its dense AllReduce of one step and
 * the next, the whole step's data streams through the cache. On the development machine a
 * 9.5 MB two-rank AllReduce took 2.0-2.3 ms (median) repeated on one buffer and 2.6-3.1 ms
 * walking a pool; rectwin-exec's DLRM AllReduce of that size takes 3.6-3.8 ms (median over
 * runs of the later rank's call), so the pools close about half of that gap; at 64 MB, beyond
 * the cache either way, the two agree (experiments/measurements/cpu/cache-cold/). */
#include <stdlib.h>
#include <string.h>

#include "calibrate.h"

typedef struct cargs {
    rt_xgroup *grp;
    int g, me;
    size_t bytes;
    void *send, *recv;
    size_t *sc, *sd, *rc, *rd;
    char *send_pool, *recv_pool;
    size_t pool, next; /* the pools' size, and where the next call's buffers start */
} cargs;

/* Points send and recv at the pools' next unused stretch, whole pages apart. */
static void rotate(cargs *a)
{
    size_t stride = (a->bytes + 4095) / 4096 * 4096;
    if (a->next + stride > a->pool) a->next = 0;
    a->send = a->send_pool + a->next;
    a->recv = a->recv_pool + a->next;
    a->next += stride;
}

static int c_alltoall(rt_xcal *c, void *p)
{
    cargs *a = p;
    rotate(a);
    return c->comm->ops->alltoallv(c->comm, a->grp, a->send, a->sc, a->sd, a->recv, a->rc, a->rd);
}

static int c_allreduce(rt_xcal *c, void *p)
{
    cargs *a = p;
    rotate(a);
    return c->comm->ops->allreduce_f32(c->comm, a->grp, a->send, a->bytes / sizeof(float));
}

static int c_allgather(rt_xcal *c, void *p)
{
    cargs *a = p;
    rotate(a);
    return c->comm->ops->allgatherv(c->comm, a->grp, a->send, a->recv, a->rc, a->rd);
}

static int c_reduce_scatter(rt_xcal *c, void *p)
{
    cargs *a = p;
    rotate(a);
    return c->comm->ops->reduce_scatter_f32(c->comm, a->grp, a->send, a->recv,
                                            a->bytes / sizeof(float) / (size_t)a->g);
}

/* Counts for size S: even blocks of S / g (alltoall, allgather); pairs exchange S (sendrecv). */
static void layout(cargs *a, size_t S, int pair)
{
    size_t block = S / (size_t)a->g;
    for (int k = 0; k < a->g; k++) {
        size_t b = pair ? (k == (a->me ^ 1) ? S : 0) : block;
        a->sc[k] = a->rc[k] = b;
        a->sd[k] = a->rd[k] = pair ? 0 : (size_t)k * block;
    }
}

static const struct {
    const char *name;
    rt_xcal_fn fn;
    int pair;
} ops[] = {{"alltoall", c_alltoall, 0},
           {"allreduce", c_allreduce, 0},
           {"allgather", c_allgather, 0},
           {"reduce_scatter", c_reduce_scatter, 0},
           {"sendrecv", c_alltoall, 1}};

static int group_sweep(rt_xcal *c, int g, char *send_pool, char *recv_pool, size_t pool)
{
    cargs a = {
        .g = g, .me = c->rank % g, .send_pool = send_pool, .recv_pool = recv_pool, .pool = pool};
    a.grp = c->comm->ops->group_open(c->comm, (rt_group){g, 1}, stderr);
    a.sc = calloc((size_t)g, sizeof(size_t)), a.sd = calloc((size_t)g, sizeof(size_t));
    a.rc = calloc((size_t)g, sizeof(size_t)), a.rd = calloc((size_t)g, sizeof(size_t));
    int rc = a.grp && a.sc && a.sd && a.rc && a.rd ? 0 : -1;
    double x[48], t[48];
    for (size_t o = 0; o < sizeof ops / sizeof ops[0] && !rc; o++) {
        if (ops[o].pair && g != 2) continue; /* point-to-point: measured on pairs */
        int n = 0;
        for (double S = 1024; S <= c->o.max_bytes && n < 48 && !rc; S *= c->o.quick ? 8 : 4) {
            /* whole fp32 blocks per member, so every member moves the same bytes */
            size_t unit = (size_t)g * sizeof(float);
            a.bytes = ((size_t)S + unit - 1) / unit * unit;
            layout(&a, a.bytes, ops[o].pair);
            x[n] = (double)a.bytes;
            rc = rt_xcal_time_coll(c, ops[o].fn, &a, &t[n]);
            n++;
        }
        if (!rc && c->out) {
            fprintf(c->out, "        - op: %s\n          ranks: %d\n", ops[o].name, g);
            rt_xcal_list(c, 10, "bytes", x, n);
            rt_xcal_list(c, 10, "seconds", t, n);
        }
    }
    if (c->log) fprintf(c->log, "calibrate: collectives over groups of %d done\n", g);
    if (a.grp) c->comm->ops->group_close(c->comm, a.grp);
    free(a.sc), free(a.sd), free(a.rc), free(a.rd);
    return rc;
}

/* Bytes of each pool: twice the last-level cache, and at least the largest message. */
static size_t pool_bytes(rt_xcal *c)
{
    size_t cap = ((size_t)c->o.max_bytes + 4096 + 4095) / 4096 * 4096;
    return rt_xcal_cold_bytes(c, cap, "the collectives' buffers");
}

int rt_xcal_collectives(rt_xcal *c)
{
    if (c->world < 2) return 0; /* a one-rank collective costs nothing: nothing to measure */
    size_t pool = pool_bytes(c);
    /* Both pools hold data, as a training step's buffers do. */
    char *send = rt_xcal_alloc(c, pool, 0), *recv = rt_xcal_alloc(c, pool, 0);
    int rc = send && recv ? 0 : -1;
    if (c->out)
        fprintf(c->out,
                "      collectives:\n        # every call on cache-cold buffers: pools of %.0f MiB "
                "(twice the last-level cache, or the largest message)\n",
                (double)pool / (1 << 20));
    /* Groups tile the world, so only sizes that divide it; a world that is not a power of two
     * is measured too. */
    for (int g = 2; g <= c->world && !rc; g *= 2)
        if (c->world % g == 0) rc = group_sweep(c, g, send, recv, pool);
    if (!rc && (c->world & (c->world - 1))) rc = group_sweep(c, c->world, send, recv, pool);
    if (send) c->dev->ops->release(c->dev, send);
    if (recv) c->dev->ops->release(c->dev, recv);
    return rc;
}
