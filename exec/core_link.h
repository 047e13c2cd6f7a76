/* The link between two cores of this machine, timed by the ranks themselves: the round trip of a
 * one-byte MPI message between local rank 0 and the first local rank pinned to another CPU.
 *
 * Why: on a virtual machine the host decides where the guest's vCPUs run, and it moves them. On
 * the 2-vCPU development guest this round trip is 0.3-0.5 us in one state and 0.8-0.9 us in the
 * other, and a 9.5 MB MPI_Allreduce of two ranks takes 3.3 ms in the first and 10 ms in the
 * second (experiments/measurements/cpu/host-placement/). rectwin-exec records the round trip
 * before and after its timed iterations (summary.json, settings.local_rtt_us), so a run the host
 * slowed can be told from a model that is wrong. */
#ifndef RT_XCORE_LINK_H
#define RT_XCORE_LINK_H

#include <stdio.h>

/* Collective over MPI_COMM_WORLD. Sets *RTT_S on every rank to the median round trip between
 * local rank 0 and the first local rank whose CPU (a one-CPU affinity) differs from rank 0's, on
 * the machine of world rank 0; -1 where there is no such pair (one local rank, or ranks not
 * pinned to single CPUs, whose round trip would time the scheduler instead). The ranks outside
 * the pair wait asleep, so that they do not take the pair's cores. Returns 0, or -1 on an MPI
 * error (printed on ERR). */
int rt_xlink_rtt(double *rtt_s, FILE *err);

#endif
