/* Closed-form (alpha-beta) time of one collective as seen by one rank: the harness over the
 * algorithm table (collective_algo.h). Mechanism only: which algorithm to use is decided by
 * collective_policy.h. Each algorithm's formula and its reasoning is in its own file
 * (collective_ring.c, ...); the terms they share in collective_terms.h. */
#ifndef RT_COLLECTIVE_MODEL_H
#define RT_COLLECTIVE_MODEL_H

#include <stdint.h>

#include "graph.h"
#include "topology.h"

/* Where the members of one group instance sit in the cluster. */
typedef struct rt_coll_shape {
    int size;          /* n: members */
    int local;         /* members on the node that has the fewest of them (its NICs limit) */
    int nodes;         /* m: distinct nodes spanned */
    int leaves;        /* distinct leaf (or rail) switches spanned */
    double leaf_cross; /* share of node-to-node ring hops that leave a leaf (leaves / nodes) */
    int pods;          /* distinct pods spanned (scale_out.pod_leaves; 1 without pods) */
    double pod_cross;  /* share of node-to-node ring hops that leave a pod (pods / nodes) */
} rt_coll_shape;

/* One collective call on one rank. For alltoallv/sendrecv, send[k]/recv[k] are the bytes to
 * and from group member k; otherwise `bytes` is the nccl-tests size. */
typedef struct rt_coll_call {
    rt_coll_kind kind;
    rt_coll_algo algo; /* resolved: never RT_ALGO_AUTO */
    rt_group group;
    int rank;
    double bytes;
    const uint64_t *send;
    const uint64_t *recv;
} rt_coll_call;

typedef struct rt_coll_time {
    double latency_s;  /* base + per-hop latencies */
    double transfer_s; /* bandwidth term */
    double total_s;
    int proto;    /* the rt_proto chosen when the topology has `protocols:`, else -1 */
    int measured; /* 1: total_s is the calibration's measured time, which has no links */
    /* the channels a ring or tree call runs on when the topology has `channels:`
     * (collective_channels.h), else 0 */
    int channels;
    /* transfer_s / the algorithm's full bandwidth term: 1 / the protocol's bandwidth fraction
     * (ring and tree) x channels / the call's channels; 1 otherwise. The simgrid engine's flows
     * carry this many wire bytes per byte. */
    double wire;
} rt_coll_time;

void rt_coll_shape_of(const rt_topology *t, rt_group group, int rank, rt_coll_shape *out);

/* 0 when ALGO can run KIND on a group of this shape on T, else -1 with *why set. */
int rt_coll_algo_check(const rt_topology *t, rt_coll_kind kind, rt_coll_algo algo,
                       const rt_coll_shape *shape, const char **why);

/* Returns 0 and fills *out, or -1 with *why set (unsupported algorithm, bad arrays). */
/* The fractions of their healthy bandwidth the topology's faults leave to the group instance
 * of RANK with shape SH, per link class: F[0] NVLink, F[1] NIC, F[2] uplink (the slowest
 * faulted link of the class its members use; 1 without faults). The harness runs the
 * algorithm's formula on the topology with these bandwidths. */
void rt_coll_fault_factors(const rt_topology *t, rt_group group, int rank, const rt_coll_shape *sh,
                           double f[3]);
int rt_coll_model_time(const rt_topology *t, const rt_coll_call *call, rt_coll_time *out,
                       const char **why);

/* nccl-tests bus bandwidth factor (busbw = algbw x factor) of KIND run by ALGO (AUTO: direct
 * for alltoallv and sendrecv, ring otherwise): AllReduce 2(n-1)/n, AllGather, ReduceScatter
 * and AlltoAll (n-1)/n, sendrecv 1. */
double rt_coll_busbw_factor(rt_coll_kind kind, rt_coll_algo algo, int n);

#endif
