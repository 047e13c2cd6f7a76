#include "balance.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "plan_common.h"

typedef struct sample_ref {
    int rep, i;
    double tokens;
} sample_ref;

double rt_balance_rep_tokens(const rt_scenario *s, const rt_workload *w, int r)
{
    double t = 0;
    for (int i = 0, n = rt_plan_rep_batch(w, r); i < n; i++)
        t += rt_plan_sample_tokens(s, w, r, i);
    return t;
}

static int longest_first(const void *a, const void *b)
{
    const sample_ref *x = a, *y = b;
    if (x->tokens != y->tokens) return x->tokens < y->tokens ? 1 : -1;
    if (x->rep != y->rep) return x->rep - y->rep; /* deterministic ties: stream order */
    return x->i - y->i;
}

/* Min-heap of ranks keyed by (tokens, rank), for the greedy assignment. */
typedef struct heap {
    int n;
    int *rank;
    const double *load;
} heap;

static int heap_less(const heap *h, int a, int b)
{
    double la = h->load[h->rank[a]], lb = h->load[h->rank[b]];
    return la < lb || (la == lb && h->rank[a] < h->rank[b]);
}

static void heap_sift_down(heap *h, int at)
{
    for (;;) {
        int l = 2 * at + 1, m = at;
        if (l < h->n && heap_less(h, l, m)) m = l;
        if (l + 1 < h->n && heap_less(h, l + 1, m)) m = l + 1;
        if (m == at) return;
        int t = h->rank[at];
        h->rank[at] = h->rank[m], h->rank[m] = t;
        at = m;
    }
}

/* Greedy LPT: DEST[k] receives sample order[k]'s rank. */
static int assign_longest_first(sample_ref *refs, long n, int R, int *dest)
{
    double *load = calloc((size_t)R, sizeof *load);
    heap h = {R, malloc(sizeof(int) * (size_t)R), load};
    if (!load || !h.rank) {
        free(load), free(h.rank);
        return -1;
    }
    for (int r = 0; r < R; r++)
        h.rank[r] = r; /* all loads 0: already a heap */
    qsort(refs, (size_t)n, sizeof *refs, longest_first);
    for (long k = 0; k < n; k++) {
        int r = h.rank[0];
        dest[k] = r;
        load[r] += refs[k].tokens;
        heap_sift_down(&h, 0);
    }
    free(load), free(h.rank);
    return 0;
}

/* Index j in [lo, hi] with prefix[j] closest to want (prefix is non-decreasing). */
static long closest_prefix(const double *prefix, long lo, long hi, double want)
{
    long a = lo, b = hi;
    while (a < b) {
        long m = a + (b - a) / 2;
        if (prefix[m] < want)
            a = m + 1;
        else
            b = m;
    }
    if (a > lo && want - prefix[a - 1] <= prefix[a] - want) return a - 1;
    return a;
}

/* Consecutive prefixes of the stream closest to TARGET tokens, at least one sample each. */
static int assign_dynamic_batches(const sample_ref *refs, long n, int R, double target, int *dest)
{
    double *prefix = malloc(sizeof(double) * (size_t)(n + 1));
    if (!prefix) return -1;
    prefix[0] = 0;
    for (long k = 0; k < n; k++)
        prefix[k + 1] = prefix[k] + refs[k].tokens;
    long pos = 0;
    for (int r = 0; r < R; r++) {
        long end = n;
        if (r < R - 1) end = closest_prefix(prefix, pos + 1, n - (R - 1 - r), prefix[pos] + target);
        for (long k = pos; k < end; k++)
            dest[k] = r;
        pos = end;
    }
    free(prefix);
    return 0;
}

/* Moves every sample to its destination rep, rebuilding the feature batches. */
static int move_samples(rt_workload *w, const sample_ref *refs, const int *dest, long n)
{
    int R = w->n_reps, F = w->n_features;
    long nb = (long)R * F;
    rt_feature_batch *out = calloc((size_t)nb, sizeof *out);
    uint64_t **offset = calloc((size_t)nb, sizeof *offset); /* first ID of each sample */
    int *count = calloc((size_t)R, sizeof *count);
    int rc = -1;
    if (!out || !offset || !count) goto done;
    for (long k = 0; k < n; k++)
        count[dest[k]]++;
    for (long b = 0; b < nb; b++) {
        const rt_feature_batch *fb = &w->batches[b];
        offset[b] = malloc(sizeof(uint64_t) * (size_t)(fb->batch + 1));
        if (!offset[b]) goto done;
        offset[b][0] = 0;
        for (int i = 0; i < fb->batch; i++)
            offset[b][i + 1] = offset[b][i] + fb->lengths[i];
    }
    for (int r = 0; r < R; r++)
        for (int f = 0; f < F; f++) {
            rt_feature_batch *o = &out[(long)r * F + f];
            /* Never shorter than the nominal batch: code that walks w->batch samples reads
             * zero-length padding, not past the end. */
            int cap = count[r] > w->batch ? count[r] : w->batch;
            o->lengths = calloc((size_t)cap, sizeof(uint32_t));
            if (!o->lengths) goto done;
        }
    for (long k = 0; k < n; k++) { /* count IDs per destination batch */
        for (int f = 0; f < F; f++) {
            rt_feature_batch *o = &out[(long)dest[k] * F + f];
            o->n_ids += rt_workload_batch(w, refs[k].rep, f)->lengths[refs[k].i];
        }
    }
    for (long b = 0; b < nb; b++) {
        out[b].ids = malloc(sizeof(uint64_t) * (size_t)(out[b].n_ids ? out[b].n_ids : 1));
        if (!out[b].ids) goto done;
        out[b].n_ids = 0;
    }
    for (long k = 0; k < n; k++)
        for (int f = 0; f < F; f++) {
            long from = (long)refs[k].rep * F + f;
            rt_feature_batch *o = &out[(long)dest[k] * F + f];
            uint32_t len = w->batches[from].lengths[refs[k].i];
            memcpy(o->ids + o->n_ids, w->batches[from].ids + offset[from][refs[k].i],
                   sizeof(uint64_t) * len);
            o->lengths[o->batch++] = len;
            o->n_ids += len;
        }
    for (long b = 0; b < nb; b++) {
        free(w->batches[b].lengths), free(w->batches[b].ids);
        w->batches[b] = out[b];
    }
    free(out);
    out = NULL;
    rc = 0;
done:
    if (out)
        for (long b = 0; b < nb; b++)
            free(out[b].lengths), free(out[b].ids);
    if (offset)
        for (long b = 0; b < nb; b++)
            free(offset[b]);
    free(out), free(offset), free(count);
    return rc;
}

int rt_balance_apply(const rt_scenario *s, rt_workload *w, FILE *err)
{
    if (s->plan.balance == RT_BALANCE_NONE || !w->n_features) return 0;
    int R = w->n_reps;
    long n = 0;
    for (int r = 0; r < R; r++)
        n += rt_plan_rep_batch(w, r);
    sample_ref *refs = malloc(sizeof *refs * (size_t)(n ? n : 1));
    int *dest = malloc(sizeof(int) * (size_t)(n ? n : 1));
    double total = 0;
    int rc = -1;
    if (!refs || !dest) {
        fprintf(err, "balance: out of memory for %ld samples\n", n);
        goto done;
    }
    long k = 0;
    for (int r = 0; r < R; r++) /* the global stream: rank 0's samples, then rank 1's, ... */
        for (int i = 0, b = rt_plan_rep_batch(w, r); i < b; i++, k++) {
            refs[k] = (sample_ref){r, i, rt_plan_sample_tokens(s, w, r, i)};
            total += refs[k].tokens;
        }
    if (n < R) {
        fprintf(err, "balance: %ld samples cannot fill %d ranks\n", n, R);
        goto done;
    }
    if (s->plan.balance == RT_BALANCE_TOKEN_REALLOC)
        rc = assign_longest_first(refs, n, R, dest);
    else
        rc = assign_dynamic_batches(
            refs, n, R, s->plan.token_target ? (double)s->plan.token_target : total / R, dest);
    if (rc == 0) rc = move_samples(w, refs, dest, n);
    if (rc) fprintf(err, "balance: out of memory moving %ld samples\n", n);
done:
    free(refs), free(dest);
    return rc;
}
