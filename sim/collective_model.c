/* The harness of the collective cost model: the shape of a group instance, the calibrated
 * curve when the topology has one, else the algorithm's own formula (collective_algo.h) plus
 * base_latency once per call (without `protocols:`; with them the algorithm charges its
 * protocol's base). A one-rank collective costs nothing with protocols or calibration, and
 * base_latency without. */
#include "collective_model.h"

#include <math.h>

#include "calib.h"
#include "collective_algo.h"

void rt_coll_shape_of(const rt_topology *t, rt_group group, int rank, rt_coll_shape *out)
{
    int devices = t->node.devices > 0 ? t->node.devices : 1;
    int per_leaf = rt_topology_nodes_per_leaf(t);
    int base = rt_group_base(group, rank);
    /* Members form an arithmetic progression of ranks, so their nodes and leaves are
     * non-decreasing: counting runs counts distinct values. */
    int pod_leaves = t->net.family == RT_FAMILY_FAT_TREE ? t->net.pod_leaves : 0;
    int nodes = 0, leaves = 0, pods = 0, run = 0, min_run = group.size;
    int prev_node = -1, prev_leaf = -1, prev_pod = -1;
    for (int k = 0; k < group.size; k++) {
        int node = (base + k * group.stride) / devices;
        if (node != prev_node) {
            if (run > 0 && run < min_run) min_run = run;
            nodes++;
            run = 0;
            prev_node = node;
            if (node / per_leaf != prev_leaf) {
                leaves++;
                prev_leaf = node / per_leaf;
                int pod = pod_leaves > 0 ? rt_topology_pod_of(t, node) : 0;
                if (pod != prev_pod) {
                    pods++;
                    prev_pod = pod;
                }
            }
        }
        run++;
    }
    if (run > 0 && run < min_run) min_run = run;
    out->size = group.size;
    out->nodes = nodes;
    out->local = min_run > 0 ? min_run : 1;
    out->leaves = leaves;
    /* In a node-ordered ring only the hop out of the last node under each leaf leaves it. */
    out->leaf_cross = (leaves > 1 && nodes > 0) ? (double)leaves / nodes : 0.0;
    /* Likewise the hop out of the last node of each pod leaves the pod. */
    out->pods = pods > 0 ? pods : 1;
    out->pod_cross = (pods > 1 && nodes > 0) ? (double)pods / nodes : 0.0;
}

int rt_coll_algo_check(const rt_topology *t, rt_coll_kind kind, rt_coll_algo algo,
                       const rt_coll_shape *shape, const char **why)
{
    const rt_coll_algo_def *a = rt_coll_algo_get(algo);
    if (!a) {
        *why = algo == RT_ALGO_AUTO ? "algorithm not resolved (auto)" : "unknown algorithm";
        return -1;
    }
    return a->check(t, kind, shape, why);
}

/* The measured time of C from the topology's calibration (the run of the topology's rank
 * count, the curve of the group size or log-linear between measured sizes), or -1 when none
 * covers it. An AlltoAll(v) is looked up at the larger of its send and receive totals: the
 * curve was measured with even blocks, so a rank's busiest direction stands for its size. */
static double calibrated_time(const rt_topology *t, const rt_coll_call *c)
{
    static const rt_calib_coll map[RT_COLL_COUNT] = {
        RT_CC_ALLTOALL, RT_CC_ALLREDUCE, RT_CC_REDUCE_SCATTER, RT_CC_ALLGATHER, RT_CC_SENDRECV};
    if (!t->calib || (unsigned)c->kind >= RT_COLL_COUNT) return -1;
    double bytes = c->bytes;
    if (c->send || c->recv) {
        double s = 0, r = 0;
        for (int k = 0; k < c->group.size; k++) {
            s += c->send ? (double)c->send[k] : 0;
            r += c->recv ? (double)c->recv[k] : 0;
        }
        bytes = fmax(s, r);
    }
    const rt_calib_run *run = rt_calib_run_for(t->calib, rt_topology_ranks(t));
    return rt_calib_coll_time(run, map[c->kind], c->group.size, bytes);
}

/* The bandwidth the topology's faults (core/faults.h) leave to a group instance, per link
 * class: the smallest factor among the NVLink ports of its members when they share a node or
 * hop over NVLink to their rail (PXN), among the NICs their traffic leaves by (NIC
 * local x nics / devices, as the platform attaches them) when it spans nodes, among their
 * leaves' uplinks when it spans leaves. A ring or a direct AlltoAll with even blocks waits for
 * its slowest link of each class; where traffic is uneven this is pessimistic, and rerouting
 * or contention with other groups is the SimGrid engine's (sim/README.md). */
void rt_coll_fault_factors(const rt_topology *t, rt_group group, int rank, const rt_coll_shape *sh,
                           double f[3])
{
    f[0] = f[1] = f[2] = 1.0;
    if (t->faults.n == 0 || sh->size < 2) return;
    int devices = t->node.devices > 0 ? t->node.devices : 1;
    int nics = t->net.nics_per_node > 0 ? t->net.nics_per_node : 1;
    int per_leaf = rt_topology_nodes_per_leaf(t);
    int base = rt_group_base(group, rank);
    for (int k = 0; k < group.size; k++) {
        int m = base + k * group.stride, node = m / devices, nic = (m % devices) * nics / devices;
        if (sh->local > 1 || (sh->nodes > 1 && t->net.rail_optimized && nics > 1))
            f[0] = fmin(f[0], rt_faults_factor(&t->faults, RT_FAULT_NVLINK, m, 0, 0));
        if (sh->nodes > 1)
            f[1] = fmin(f[1], rt_faults_factor(&t->faults, RT_FAULT_NIC, node, nic, 0));
        if (sh->leaves > 1)
            f[2] = fmin(f[2], rt_faults_factor(&t->faults, RT_FAULT_UPLINK,
                                               t->net.rail_optimized ? nic : 0, node / per_leaf,
                                               rt_topology_spine_ports(t)));
    }
}

int rt_coll_model_time(const rt_topology *t, const rt_coll_call *c, rt_coll_time *o,
                       const char **why)
{
    if (c->group.size < 1 || c->group.stride < 1) {
        *why = "group size and stride must be >= 1";
        return -1;
    }
    if (!(c->bytes >= 0) || !isfinite(c->bytes)) {
        *why = "collective size must be a finite number >= 0";
        return -1;
    }
    rt_coll_shape sh;
    rt_coll_shape_of(t, c->group, c->rank, &sh);
    if (rt_coll_algo_check(t, c->kind, c->algo, &sh, why) < 0) return -1;
    o->latency_s = o->transfer_s = 0;
    o->proto = -1;
    o->measured = 0;
    o->channels = 0;
    o->wire = 1;
    if (t->calib) {
        /* A one-rank collective moves nothing and calls no peer. */
        double measured = sh.size > 1 ? calibrated_time(t, c) : 0.0;
        if (measured >= 0) {
            /* A measured curve has no link classes: its whole time slows with the slowest. */
            double f[3];
            rt_coll_fault_factors(t, c->group, c->rank, &sh, f);
            o->transfer_s = o->total_s = measured / fmin(f[0], fmin(f[1], f[2]));
            o->measured = 1;
            return 0;
        }
    }
    if (sh.size > 1 && t->faults.n > 0) {
        /* The algorithm sees the bandwidths the faults leave: NVLink and NIC scaled, and the
         * uplinks' share (NIC bandwidth / oversubscription) by the uplink factor. */
        double f[3];
        rt_coll_fault_factors(t, c->group, c->rank, &sh, f);
        rt_topology ft = *t;
        ft.node.scale_up_bw *= f[0];
        ft.net.nic_bw *= f[1];
        ft.net.oversubscription *= f[1] / f[2];
        /* the core links have no faults: their term keeps oversubscription x
         * core_oversubscription / the healthy NIC share */
        ft.net.core_oversubscription *= f[2];
        rt_coll_algo_get(c->algo)->time(&ft, c, &sh, o);
    } else if (sh.size > 1) {
        rt_coll_algo_get(c->algo)->time(t, c, &sh, o);
    } else if (t->coll.has_protocols) {
        o->total_s = 0;
        return 0;
    }
    if (!t->coll.has_protocols) o->latency_s += t->coll.base_latency;
    o->total_s = o->latency_s + o->transfer_s;
    if (!isfinite(o->total_s)) {
        *why = "a bandwidth this collective needs is zero in the topology";
        return -1;
    }
    return 0;
}

double rt_coll_busbw_factor(rt_coll_kind kind, rt_coll_algo algo, int n)
{
    if (n < 1) return 0.0;
    if (algo == RT_ALGO_AUTO)
        algo =
            kind == RT_COLL_ALLTOALLV || kind == RT_COLL_SENDRECV ? RT_ALGO_DIRECT : RT_ALGO_RING;
    const rt_coll_algo_def *a = rt_coll_algo_get(algo);
    return a ? a->busbw_factor(kind, n) : 0.0;
}
