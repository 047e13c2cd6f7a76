/* NCCL's channel tuning, the facts and formulas of NVIDIA/nccl (not its code), checked in
 * v2.19.3-1, v2.26.2-1 (the version of experiments/validation/nccl-tests.md's two-node
 * source) and master 5067397 (2026-06), src/enqueue.cc `topoGetAlgoInfo` / `getAlgoInfo`:
 * after choosing the algorithm and protocol from its full-channel time estimate, a ring or
 * tree call of nBytes starts from the communicator's nChannels and nt = maxThreads of the
 * pair and drops one channel while nBytes < nc x nt x threadThreshold and nc >= 2, then
 * halves nt (only at one channel). nBytes is the nccl-tests size (enqueue.h
 * ncclFuncMaxSendRecvCount: count, or nRanks x count for AllGather/ReduceScatter).
 * threadThreshold is NCCL_{LL,LL128,SIMPLE}_THREAD_THRESHOLD = 8, 8, 64 (include/comm.h), the
 * ring's LL one times nRanks (src/graph/tuning.cc: threadThresholds[RING][LL] *= nRanks);
 * maxThreads is NCCL_LL_MAX_NTHREADS 512, NCCL_LL128_MAX_NTHREADS 640,
 * NCCL_SIMPLE_MAX_NTHREADS 512 (256 when the ring's bandwidth is PCIe-bound), device.h and
 * tuning.cc. Those figures are the topology's `threads` and `thread_threshold` per protocol.
 *
 * The bandwidth of a call on nc channels: NCCL's tuning model gives an algorithm the bus
 * bandwidth nChannels x bw, bw per channel (tuning.cc `busBw = graphs[a]->nChannels * bw`),
 * each channel being one thread block; on nc channels a call gets nc / nChannels of it, so
 * its bandwidth term is the full one x nChannels / nc. The thread halving at one channel is
 * not modelled (the call is latency-bound there). NVLS and NVLS-tree (here nvls and
 * hierarchical) run on nvlsChannels whatever the size, so they have no ramp; CollNet is not
 * modelled. */
#include "collective_channels.h"

int rt_coll_channels(const rt_topology *t, rt_coll_algo algo, int proto, int n, double bytes)
{
    int nc = t->coll.channels;
    if (nc <= 0 || proto < 0 || proto >= RT_PROTO_COUNT) return 0;
    const rt_proto_spec *s = &t->coll.proto[proto];
    double per = (double)s->threads * s->thread_threshold;
    if (algo == RT_ALGO_RING && proto == RT_PROTO_LL) per *= n;
    while (bytes < nc * per && nc >= 2)
        nc--;
    return nc;
}

void rt_coll_channel_ramp(const rt_topology *t, const rt_coll_call *c, int n, rt_coll_algo algo,
                          rt_coll_time *o)
{
    int nc = rt_coll_channels(t, algo, o->proto, n, c->bytes);
    if (nc <= 0) return;
    o->channels = nc;
    o->transfer_s *= (double)t->coll.channels / nc;
    o->wire *= (double)t->coll.channels / nc;
}
