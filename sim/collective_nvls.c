/* NVLS: NVSwitch multicast and in-switch reduction, one node (AllReduce, AllGather,
 * ReduceScatter). Notation in collective_terms.c. */
#include "collective_algo.h"
#include "collective_terms.h"

int rt_coll_nvls_available(const rt_topology *t)
{
    return t->node.nvls && t->node.scale_up == RT_SCALEUP_NVSWITCH;
}

static int nvls_check(const rt_topology *t, rt_coll_kind kind, const rt_coll_shape *shape,
                      const char **why)
{
    if (kind == RT_COLL_ALLTOALLV || kind == RT_COLL_SENDRECV) {
        *why = "alltoallv and sendrecv only run direct";
        return -1;
    }
    if (!rt_coll_nvls_available(t)) {
        *why = "nvls needs an NVSwitch node with nvls: true";
        return -1;
    }
    if (shape->nodes > 1) {
        *why = "nvls needs the whole group inside one node";
        return -1;
    }
    return 0;
}

/* AllReduce: each device pushes its other-rank slices for reduction ((g-1)/g x S out), pulls
 * its reduced slice (S/g in), multicasts it (S/g out) and receives the others ((g-1)/g x S
 * in): S per direction, versus 2(g-1)/g x S for a ring. AllGather/ReduceScatter: (g-1)/g x S
 * in one direction. Latency: one switch round trip per phase; with protocols it runs Simple,
 * whose base is added. With `collective.nvls`, NCCL's NVLS bandwidth and latency instead. */
static void nvls_time(const rt_topology *t, const rt_coll_call *c, const rt_coll_shape *sh,
                      rt_coll_time *o)
{
    double S = c->bytes, g = sh->size;
    if (c->kind == RT_COLL_ALLREDUCE) {
        o->transfer_s = S / rt_coll_bw_up(t);
        o->latency_s = 2.0 * t->node.scale_up_latency;
    } else {
        o->transfer_s = (g - 1) / g * S / rt_coll_bw_up(t);
        o->latency_s = t->node.scale_up_latency;
    }
    if (t->coll.has_protocols) {
        o->proto = RT_PROTO_SIMPLE;
        o->latency_s = rt_coll_proto_simple(t)->ring.base + o->latency_s;
    }
    /* NCCL's NVLS figures (NVIDIA/nccl src/graph/tuning.cc, v2.26.2-1 and 5067397): the NVLS
     * bus bandwidth per channel is bwIntra x nvlsEfficiency x (nChannels - 1) / nChannels, and
     * its latency the NVLink NVLS latency alone (baseLatencies of NVLS are 0). The simgrid
     * flows, on links of scale_up_bw x eff_intra, carry the ratio as wire bytes. */
    if (t->coll.has_nvls) {
        double ch = t->coll.nvls_channels;
        double share = t->coll.nvls_efficiency * (ch - 1) / ch / t->coll.eff_intra;
        o->transfer_s /= share;
        o->wire = 1 / share;
        o->latency_s = t->coll.nvls_latency;
    }
}

/* Load on each member's NVSwitch port: AllReduce pushes (g-1)/g x S and multicasts S/g out,
 * and pulls S/g and receives (g-1)/g x S in (S each way); AllGather sends S/g up and
 * receives (g-1)/g x S; ReduceScatter the reverse. */
static int nvls_traffic(const rt_sg_call *c, const rt_sg_blocks *b, rt_sg_flowset *f)
{
    (void)b;
    int g = c->group.size;
    for (int k = 0; k < g; k++) {
        int r = rt_sg_member(c, k);
        double S = rt_sg_size_of(c, r), up = S, down = S;
        if (c->kind == RT_COLL_ALLGATHER) up = S / g, down = (g - 1.0) / g * S;
        if (c->kind == RT_COLL_REDUCE_SCATTER) up = (g - 1.0) / g * S, down = S / g;
        /* Device rank r's NVLink up and down segments are r and world + r. */
        if (rt_sg_flowset_add_segment(f, r, up) < 0 ||
            rt_sg_flowset_add_segment(f, f->p->world + r, down) < 0)
            return -1;
    }
    return 0;
}

static double nvls_busbw(rt_coll_kind kind, int n)
{
    return (kind == RT_COLL_ALLREDUCE ? 2.0 : 1.0) * (n - 1) / n;
}

const rt_coll_algo_def rt_coll_algo_nvls = {
    .id = RT_ALGO_NVLS,
    .check = nvls_check,
    .time = nvls_time,
    .traffic = nvls_traffic,
    .busbw_factor = nvls_busbw,
};
