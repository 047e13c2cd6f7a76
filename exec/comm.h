/* Communication backend vtable of rectwin-exec: one file per backend (comm_mpi.c,
 * comm_nccl.c), one entry in comm_registry.c. MPI is always initialized (it launches the ranks
 * and bootstraps NCCL). A backend communicates over rt_xgroup handles: this rank's instance
 * of one rt_group of the graph. Buffers are device buffers of the rt_xdev the backend was
 * opened with; the MPI backend stages them through host memory when the device's memory is
 * not host memory. Collectives run on the device's current stream (the comm stream). */
#ifndef RT_XCOMM_H
#define RT_XCOMM_H

#include <stddef.h>
#include <stdio.h>

#include "device.h"
#include "graph.h"

typedef struct rt_xcomm rt_xcomm;
typedef struct rt_xgroup rt_xgroup; /* backend-defined */

typedef struct rt_xcomm_ops {
    const char *name;
    /* Collective over MPI_COMM_WORLD. Returns 0 or -1 with the reason on ERR. */
    int (*open)(rt_xcomm *c, rt_xdev *d, FILE *err);
    void (*close)(rt_xcomm *c);
    /* This rank's instance of GROUP (rank ids as graph.h defines them). Every rank calls it
     * for the same groups in the same order. */
    rt_xgroup *(*group_open)(rt_xcomm *c, rt_group g, FILE *err);
    void (*group_close)(rt_xcomm *c, rt_xgroup *grp);
    /* Byte AlltoAllv: to member k, scount[k] bytes from send + sdispl[k]; from member k,
     * rcount[k] bytes into recv + rdispl[k]. */
    int (*alltoallv)(rt_xcomm *c, rt_xgroup *grp, const void *send, const size_t *scount,
                     const size_t *sdispl, void *recv, const size_t *rcount, const size_t *rdispl);
    /* In-place fp32 sum over the group. */
    int (*allreduce_f32)(rt_xcomm *c, rt_xgroup *grp, float *buf, size_t n);
    /* fp32 ReduceScatter: SEND holds group-size blocks of N floats; member k gets the sum of
     * every member's block k in RECV. */
    int (*reduce_scatter_f32)(rt_xcomm *c, rt_xgroup *grp, const float *send, float *recv,
                              size_t n);
    /* Byte AllGatherv: member k's count[k] bytes land at recv + displ[k]. */
    int (*allgatherv)(rt_xcomm *c, rt_xgroup *grp, const void *send, void *recv,
                      const size_t *count, const size_t *displ);
    /* Host-side metadata before a variable-size collective (the splits TorchRec exchanges
     * before its AlltoAll): N int64 per member gathered (all[k * n + j]), or one int64 to and
     * from each member. Not ops of the graph: they carry sizes, not payload. */
    int (*allgather_meta)(rt_xcomm *c, rt_xgroup *grp, const int64_t *mine, int n, int64_t *all);
    int (*alltoall_meta)(rt_xcomm *c, rt_xgroup *grp, const int64_t *send, int64_t *recv);
    /* Ends every rank's participation after a fault (ncclCommAbort, MPI_Abort). */
    void (*abort)(rt_xcomm *c, int code);
    /* The communication library and its version into BUF, for calibration records. */
    void (*describe)(rt_xcomm *c, char *buf, size_t size);
} rt_xcomm_ops;

struct rt_xcomm {
    const rt_xcomm_ops *ops;
    void *impl;
    rt_xdev *dev;
    int rank, world;
    int local_rank, local_size; /* within the host (MPI_COMM_TYPE_SHARED) */
};

/* NULL-terminated registry; rt_xcomm_find returns NULL for an unknown or unbuilt backend. */
extern const rt_xcomm_ops *const rt_xcomm_backends[];
const rt_xcomm_ops *rt_xcomm_find(const char *name);

#endif
