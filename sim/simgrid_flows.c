#include "simgrid_flows.h"

#include <stdlib.h>
#include <string.h>

int rt_sg_flowset_init(rt_sg_flowset *f, const rt_platform *p, int pairs)
{
    memset(f, 0, sizeof *f);
    f->p = p;
    f->pairs = pairs;
    f->wire = 1;
    f->seg_bytes = calloc((size_t)p->n_segments, sizeof(double));
    f->touched = malloc(sizeof(int) * (size_t)p->n_segments);
    if (f->seg_bytes && f->touched) return 0;
    rt_sg_flowset_free(f);
    return -1;
}

void rt_sg_flowset_free(rt_sg_flowset *f)
{
    free(f->seg_bytes);
    free(f->touched);
    free(f->flows);
    memset(f, 0, sizeof *f);
}

void rt_sg_flowset_clear(rt_sg_flowset *f)
{
    for (int i = 0; i < f->n_touched; i++)
        f->seg_bytes[f->touched[i]] = 0;
    f->n_touched = 0;
    f->n_flows = 0;
}

static rt_sg_flow *new_flow(rt_sg_flowset *f)
{
    if (f->n_flows == f->cap_flows) {
        int cap = f->cap_flows ? 2 * f->cap_flows : 256;
        rt_sg_flow *n = realloc(f->flows, sizeof *n * (size_t)cap);
        if (!n) return NULL;
        f->flows = n;
        f->cap_flows = cap;
    }
    rt_sg_flow *fl = &f->flows[f->n_flows++];
    memset(fl, 0, sizeof *fl);
    fl->sender = fl->receiver = -1;
    return fl;
}

/* Appends segment SEG's links to FL (its hosts are set by the caller). */
static void append_segment(const rt_platform *p, rt_sg_flow *fl, int seg, int *src, int *dst)
{
    int n = rt_platform_segment(p, seg, src, dst, fl->links + fl->n_links);
    fl->n_links += n;
    fl->latency += rt_platform_segment_latency(p, seg);
}

int rt_sg_flowset_add_segment(rt_sg_flowset *f, int seg, double bytes)
{
    if (!(bytes > 0)) return 0;
    bytes *= f->wire;
    if (!f->pairs) {
        if (f->seg_bytes[seg] == 0) f->touched[f->n_touched++] = seg;
        f->seg_bytes[seg] += bytes;
        return 0;
    }
    rt_sg_flow *fl = new_flow(f);
    if (!fl) return -1;
    append_segment(f->p, fl, seg, &fl->src_host, &fl->dst_host);
    fl->bytes = bytes;
    return 0;
}

int rt_sg_flowset_add_pair(rt_sg_flowset *f, int src, int dst, double bytes)
{
    return rt_sg_flowset_add_pair_to(f, src, dst, dst, 0, bytes);
}

int rt_sg_flowset_add_pair_to(rt_sg_flowset *f, int src, int dst, int receiver, int lane,
                              double bytes)
{
    int segs[RT_PLATFORM_MAX_PATH];
    if (!(bytes > 0) || src == dst) return 0;
    int n = rt_platform_path(f->p, src, dst, segs);
    if (!f->pairs) {
        for (int i = 0; i < n; i++)
            rt_sg_flowset_add_segment(f, segs[i], bytes);
        return 0;
    }
    rt_sg_flow *fl = new_flow(f);
    if (!fl) return -1;
    int s, d;
    for (int i = 0; i < n; i++)
        append_segment(f->p, fl, segs[i], &s, &d);
    fl->src_host = rt_platform_gpu(f->p, src);
    fl->dst_host = rt_platform_gpu(f->p, dst);
    fl->sender = src;
    fl->receiver = receiver;
    fl->lane = lane;
    fl->bytes = bytes * f->wire;
    return 0;
}

int rt_sg_flowset_finish(rt_sg_flowset *f)
{
    if (f->pairs) return 0;
    f->n_flows = 0;
    for (int i = 0; i < f->n_touched; i++) {
        int seg = f->touched[i];
        rt_sg_flow *fl = new_flow(f);
        if (!fl) return -1;
        append_segment(f->p, fl, seg, &fl->src_host, &fl->dst_host);
        fl->bytes = f->seg_bytes[seg];
    }
    return 0;
}
