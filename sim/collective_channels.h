/* NCCL's channel tuning of one call (sim/collective_channels.c): how many of the topology's
 * `collective.channels` a ring or tree call of a given size runs on, and the bandwidth term
 * that follows from it. */
#ifndef RT_COLLECTIVE_CHANNELS_H
#define RT_COLLECTIVE_CHANNELS_H

#include "collective_model.h"

/* The channels a ring or tree (ALGO) call of BYTES (the nccl-tests size) over N ranks runs
 * on under protocol PROTO: between 1 and t->coll.channels. 0 when the topology has no
 * `channels:` (every call then runs at the full bandwidth). */
int rt_coll_channels(const rt_topology *t, rt_coll_algo algo, int proto, int n, double bytes);

/* After the protocol choice of a ring or tree call C (o->proto set): scales o->transfer_s by
 * channels / the call's channels and sets o->channels; nothing without `channels:`. */
void rt_coll_channel_ramp(const rt_topology *t, const rt_coll_call *c, int n, rt_coll_algo algo,
                          rt_coll_time *o);

#endif
