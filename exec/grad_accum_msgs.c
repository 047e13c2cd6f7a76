/* The whole batch's received ID messages from its micro-batches' (grad_accum.h). A sender's
 * message for the owner holds, per served entry, one count per sample and then, per served
 * entry, the IDs in sample order (emb_internal.h). Micro-batches are consecutive samples, so
 * the whole batch's message is, slot by slot, the micro-batches' counts one after another and,
 * entry by entry, their ID blocks one after another: the owner builds it without sending the
 * IDs again. Stage-1 dedup sends each micro-batch's distinct IDs instead, which do not join. */
#include <stdlib.h>
#include <string.h>

#include "accumulate.h"
#include "emb_internal.h"
#include "grad_accum.h"

int rt_xaccum_joinable(const rt_graph_unit *u)
{
    return !u->dedup_send;
}

static void swap(rt_xbuf *a, rt_xbuf *b)
{
    rt_xbuf t = *a;
    *a = *b, *b = t;
}

int rt_xaccum_keep_msgs(rt_xunit *xu, rt_xaccum_msgs *kept, FILE *err)
{
    size_t G = (size_t)xu->G;
    if (!kept->rc && !(kept->rc = malloc(sizeof(size_t) * 4 * G))) {
        fprintf(err, "exec: out of host memory\n");
        return -1;
    }
    kept->rd = kept->rc + G, kept->crc = kept->rc + 2 * G, kept->crd = kept->rc + 3 * G;
    memcpy(kept->rc, xu->ids_rc, sizeof(size_t) * G),
        memcpy(kept->rd, xu->ids_rd, sizeof(size_t) * G);
    memcpy(kept->crc, xu->cat_rc, sizeof(size_t) * G);
    memcpy(kept->crd, xu->cat_rd, sizeof(size_t) * G);
    swap(&kept->ids, &xu->ids_recv), swap(&kept->cats, &xu->cat_recv);
    return 0;
}

void rt_xaccum_msgs_free(rt_xdev *d, rt_xaccum_msgs *kept)
{
    rt_xbuf_free(d, &kept->ids), rt_xbuf_free(d, &kept->cats);
    free(kept->rc);
    memset(kept, 0, sizeof *kept);
}

/* Host bytes of N bytes of device buffer B: B itself where device memory is host memory, else
 * a copy the caller frees (*OWNED). */
static const uint8_t *host_bytes(rt_xdev *d, const rt_xbuf *b, size_t n, uint8_t **owned)
{
    *owned = NULL;
    if (d->ops->host_memory || !n) return b->p;
    if (!(*owned = malloc(n)) || d->ops->copy(d, *owned, b->p, n, RT_XCOPY_D2H)) return NULL;
    return *owned;
}

static uint32_t count_at(const uint8_t *p, int64_t i)
{
    uint32_t v;
    memcpy(&v, p + 4 * i, 4);
    return v;
}

/* The joined messages, on the host while they are built. */
typedef struct joined {
    int k, G, slots, ib, cat;
    const uint8_t **ids, **cats; /* [m]: micro-batch m's received messages (host) */
    int64_t *L;                  /* [m]: counts per slot (its samples) */
    size_t *at;                  /* [m]: scratch, IDs of the sender already joined */
    uint8_t *out_ids, *out_cats;
} joined;

/* Sender P's whole message at the owner's ID and count offsets RD and CRD; returns its ID
 * bytes (counts included without a category message). */
static size_t join_member(joined *j, const rt_xaccum_msgs *kept, int p, size_t rd, size_t crd)
{
    uint8_t *cnt = j->cat ? j->out_cats + crd : j->out_ids + rd, *id = j->out_ids + rd;
    const uint8_t **src = j->cat ? j->cats : j->ids;
    size_t counts = 0;
    for (int m = 0; m < j->k; m++)
        counts += (size_t)j->slots * (size_t)j->L[m] * 4;
    if (!j->cat) id += counts;
    for (int s = 0; s < j->slots; s++)
        for (int m = 0; m < j->k; m++) {
            size_t n = (size_t)j->L[m] * 4;
            memcpy(cnt, src[m] + (j->cat ? kept[m].crd[p] : kept[m].rd[p]) + s * n, n), cnt += n;
        }
    for (int m = 0; m < j->k; m++)
        j->at[m] = 0;
    for (int s = 0; s < j->slots; s++)
        for (int m = 0; m < j->k; m++) {
            const uint8_t *c = src[m] + (j->cat ? kept[m].crd[p] : kept[m].rd[p]);
            const uint8_t *ids = j->ids[m] + kept[m].rd[p];
            if (!j->cat) ids += (size_t)j->slots * (size_t)j->L[m] * 4;
            size_t n = 0;
            for (int64_t i = 0; i < j->L[m]; i++)
                n += count_at(c, (int64_t)s * j->L[m] + i);
            memcpy(id, ids + j->at[m] * (size_t)j->ib, n * (size_t)j->ib);
            id += n * (size_t)j->ib, j->at[m] += n;
        }
    return (size_t)(id - (j->out_ids + rd));
}

static int upload(rt_xexec *x, rt_xbuf *dst, const uint8_t *src, size_t n, FILE *err)
{
    if (rt_xbuf_reserve(x->dev, dst, n, err)) return -1;
    return n ? x->dev->ops->copy(x->dev, dst->p, src, n, RT_XCOPY_H2D) : 0;
}

static int fill(rt_xexec *x, rt_xunit *xu, joined *j, const rt_xaccum_msgs *kept, int op, FILE *err)
{
    size_t rd = 0, crd = 0;
    for (int p = 0; p < j->G; p++) {
        size_t rc = 0, crc = 0;
        for (int m = 0; m < j->k; m++)
            rc += kept[m].rc[p], crc += j->cat ? kept[m].crc[p] : 0;
        if (join_member(j, kept, p, rd, crd) != rc)
            return rt_xemb_fail(err, x, op, "the micro-batches' ID messages do not join");
        xu->ids_rc[p] = rc, xu->ids_rd[p] = rd, xu->cat_rc[p] = crc, xu->cat_rd[p] = crd;
        rd += rc, crd += crc;
    }
    if (upload(x, &xu->ids_recv, j->out_ids, rd, err) ||
        (j->cat && upload(x, &xu->cat_recv, j->out_cats, crd, err)))
        return -1;
    xu->parsed = 0;
    return 0;
}

int rt_xaccum_join_msgs(rt_xexec *x, rt_xunit *xu, const rt_xaccum_msgs *kept, int k, int b, int op,
                        FILE *err)
{
    joined j = {.k = k, .G = xu->G, .ib = x->s->workload.id_bytes, .cat = xu->u->category_msg};
    for (int m = 0; m < k; m++)
        if (!kept[m].rc)
            return rt_xemb_fail(err, x, op, "a micro-batch's ID messages were not kept");
    for (int e = 0; e < xu->n_entries; e++)
        j.slots += rt_xemb_served(xu, xu->k, e);
    uint8_t **owned = calloc((size_t)(2 * k), sizeof *owned);
    j.ids = calloc((size_t)k, sizeof *j.ids), j.cats = calloc((size_t)k, sizeof *j.cats);
    j.L = malloc(sizeof(int64_t) * (size_t)k), j.at = malloc(sizeof(size_t) * (size_t)k);
    size_t ids = 0, cats = 0;
    int rc = owned && j.ids && j.cats && j.L && j.at ? 0 : -1;
    for (int m = 0; m < k && !rc; m++) {
        int64_t lo, hi;
        size_t n = rt_xemb_total(kept[m].rc, xu->G), cn = rt_xemb_total(kept[m].crc, xu->G);
        rt_accumulate_range(b, m, k, &lo, &hi);
        j.L[m] = rt_xemb_counts(xu, (int)(hi - lo));
        j.ids[m] = host_bytes(x->dev, &kept[m].ids, n, &owned[2 * m]);
        j.cats[m] = j.cat ? host_bytes(x->dev, &kept[m].cats, cn, &owned[2 * m + 1]) : NULL;
        rc = (n && !j.ids[m]) || (j.cat && cn && !j.cats[m]) ? -1 : 0;
        ids += n, cats += cn;
    }
    j.out_ids = rc ? NULL : malloc(ids ? ids : 1);
    j.out_cats = rc ? NULL : malloc(cats ? cats : 1);
    if (rc || !j.out_ids || !j.out_cats)
        rc = rt_xemb_fail(err, x, op, "out of host memory joining the micro-batches' IDs");
    else
        rc = fill(x, xu, &j, kept, op, err);
    for (int i = 0; owned && i < 2 * k; i++)
        free(owned[i]);
    free(owned), free(j.ids), free(j.cats), free(j.L), free(j.at), free(j.out_ids);
    free(j.out_cats);
    return rc;
}
