/* plan.fusion sparse on the owner (plans/fusion.h): one gather launch over every entry this
 * rank serves. Each (entry, member) block of the embedding message is one segment of the
 * kernel, so rows land in the message in place, where the per-feature path gathers each entry
 * into its own buffer and copies it block by block. */
#include <stdlib.h>

#include "emb_internal.h"

static int idb(const rt_xexec *x)
{
    return x->s->workload.id_bytes;
}

/* The segments of every served entry: member p's bags (pooled) or IDs (one row each). */
static int64_t segments(rt_xexec *x, rt_xunit *xu, float *base, rt_kgather_seg *segs)
{
    int G = xu->G, E = xu->n_entries;
    int64_t n = 0;
    for (int e = 0; e < E; e++) {
        if (!rt_xemb_served(xu, xu->k, e)) continue;
        const rt_xshard *sh = &x->tables.shards[xu->shard_of[e]];
        int pr = rt_xemb_per_row(xu, e);
        int64_t first = 0;
        for (int p = 0; p < G; p++) {
            int64_t rows = (int64_t)rt_xemb_rows(xu, e, (int)xu->bsz[p], xu->n_from[p * E + e]);
            segs[n++] = (rt_kgather_seg){.t = sh->t,
                                         .ids = xu->own_ids[e].p,
                                         .offsets = pr ? NULL : xu->own_offsets[e].p,
                                         .first = pr ? first : xu->boff[p],
                                         .n = rows,
                                         .out = base + xu->send_at[p * E + e]};
            first += rows;
        }
    }
    return n;
}

/* The graph's bytes: IDs, rows, the message; with a lower comm precision the fp32 image is
 * written and read back by the conversion. */
static double fused_bytes(const rt_xexec *x, const rt_xunit *xu, size_t elems)
{
    double in = 0, rows = 0;
    for (int e = 0; e < xu->n_entries; e++) {
        if (!rt_xemb_served(xu, xu->k, e)) continue;
        double eb = (double)rt_dtype_bytes(rt_scenario_table_dtype(x->s, xu->entries[e].table));
        in += (double)xu->own_n[e];
        rows += (double)xu->own_n[e] * xu->entries[e].width * eb;
    }
    double cb = (double)rt_xemb_cb(x);
    return in * idb(x) + rows + (double)elems * cb +
           (cb != 4 ? rt_fusion_round_trip((double)elems) : 0);
}

int rt_xemb_lookup_fused(rt_xexec *x, rt_xunit *xu, int op, FILE *err)
{
    rt_xdev *d = x->dev;
    size_t elems = rt_xemb_total(xu->emb_sc, xu->G) / rt_xemb_cb(x);
    int fp32 = rt_xemb_ck(x) == RT_KDT_FP32;
    if (!fp32 && rt_xbuf_reserve(d, &xu->msg32, elems * sizeof(float), err)) return -1;
    float *base = fp32 ? xu->emb_send.p : xu->msg32.p;
    rt_kgather_seg *segs = malloc(sizeof *segs * (size_t)(xu->n_entries * xu->G + 1));
    if (!segs) return rt_xemb_fail(err, x, op, "out of host memory for the gather segments");
    int64_t n = segments(x, xu, base, segs);
    rt_kstatus st = d->ops->gather_segments(d, segs, n);
    free(segs);
    if (rt_xemb_kcheck(st, err, x, op, "fused gather")) return -1;
    if (!fp32 && elems &&
        d->ops->convert(d, base, RT_KDT_FP32, (int64_t)elems, rt_xemb_ck(x), xu->emb_send.p))
        return rt_xemb_fail(err, x, op, "conversion into the comm precision failed");
    rt_xexec_count(x, op, fused_bytes(x, xu, elems), 0);
    return 0;
}
