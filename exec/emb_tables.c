#include "emb_tables.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "emb_dynamic.h"

static uint64_t mix(uint64_t x)
{
    return rt_kmix64(x + 0x9e3779b97f4a7c15ULL);
}

/* A uniform in (0, 1) from a hash of the element's global coordinates. */
static double unit(const rt_scenario *s, int table, uint64_t row, int col, int salt)
{
    uint64_t h = mix(s->workload.seed ^ mix((uint64_t)table * 0x100000001b3ULL + (uint64_t)salt));
    h = mix(h ^ row);
    h = mix(h ^ (uint64_t)col);
    return ((double)(h >> 11) + 0.5) * (1.0 / 9007199254740992.0);
}

float rt_xtables_init_value(const rt_scenario *s, int table, uint64_t row, int col)
{
    const rt_table *t = &s->model.tables[table];
    double rows = t->rows ? (double)t->rows : 1.0;
    if (t->initializer && !strcmp(t->initializer, "normal")) {
        /* Box-Muller; std 0.02 as HSTU's reference code initializes item embeddings. */
        double u1 = unit(s, table, row, col, 1), u2 = unit(s, table, row, col, 2);
        return (float)(0.02 * sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2));
    }
    /* TorchRec's EmbeddingBagConfig default: uniform(-sqrt(1/rows), sqrt(1/rows)). */
    double a = sqrt(1.0 / rows);
    return (float)(a * (2.0 * unit(s, table, row, col, 0) - 1.0));
}

rt_kopt rt_xtables_opt(const rt_scenario *s, int table, int64_t step)
{
    static const rt_koptim kinds[] = {RT_KOPT_SGD, RT_KOPT_ADAGRAD, RT_KOPT_ROWWISE_ADAGRAD,
                                      RT_KOPT_ADAM};
    const rt_training *tr = &s->model.training;
    return (rt_kopt){.kind = kinds[s->model.tables[table].optimizer],
                     .lr = (float)tr->sparse_lr,
                     .eps = (float)tr->eps,
                     .beta1 = (float)tr->beta1,
                     .beta2 = (float)tr->beta2,
                     .step = step};
}

static rt_kdtype kdtype(rt_dtype d)
{
    return d == RT_DT_FP16 ? RT_KDT_FP16 : d == RT_DT_BF16 ? RT_KDT_BF16 : RT_KDT_FP32;
}

/* Host staging of one chunk of rows at a time: tables can be larger than a spare host copy. */
static int fill(rt_xshard *sh, rt_xdev *d, const rt_scenario *s, FILE *err)
{
    size_t eb = rt_kdtype_bytes(sh->t.dtype);
    uint64_t chunk = 1 + (uint64_t)(1u << 22) / (uint64_t)sh->width;
    void *h = malloc(chunk * (uint64_t)sh->width * eb);
    if (!h) {
        fprintf(err, "exec: out of host memory initializing table %d\n", sh->table);
        return -1;
    }
    for (uint64_t r0 = 0; r0 < sh->rows; r0 += chunk) {
        uint64_t n = sh->rows - r0 < chunk ? sh->rows - r0 : chunk;
        for (uint64_t r = 0; r < n; r++)
            for (int c = 0; c < sh->width; c++) {
                float v = rt_xtables_init_value(s, sh->table, rt_xshard_global_row(sh, r0 + r),
                                                sh->col0 + c);
                size_t at = (size_t)(r * (uint64_t)sh->width + (uint64_t)c);
                if (sh->t.dtype == RT_KDT_FP32)
                    ((float *)h)[at] = v;
                else
                    ((uint16_t *)h)[at] =
                        sh->t.dtype == RT_KDT_FP16 ? rt_kf32_to_f16(v) : rt_kf32_to_bf16(v);
            }
        char *dst = (char *)sh->t.data + r0 * (uint64_t)sh->width * eb;
        if (d->ops->copy(d, dst, h, (size_t)(n * (uint64_t)sh->width * eb), RT_XCOPY_H2D)) {
            free(h);
            return -1;
        }
    }
    free(h);
    return 0;
}

static void *dev_alloc(rt_xdev *d, size_t bytes, int table, const char *what, FILE *err)
{
    void *p = d->ops->alloc(d, bytes ? bytes : 1);
    if (!p)
        fprintf(err,
                "exec: out of %s memory allocating %zu bytes of %s for table %d (%zu bytes "
                "allocated, %zu at peak)\n",
                d->ops->name, bytes, what, table, d->bytes_now, d->bytes_peak);
    return p;
}

int rt_xtables_add(rt_xtables *ts, rt_xdev *d, const rt_scenario *s, int table, int col0, int width,
                   uint64_t row0, uint64_t rows, const uint64_t *row_ids, FILE *err)
{
    if (ts->n == ts->cap) {
        int cap = ts->cap ? 2 * ts->cap : 16;
        rt_xshard *v = realloc(ts->shards, sizeof *v * (size_t)cap);
        if (!v) {
            fprintf(err, "exec: out of host memory\n");
            return -1;
        }
        ts->shards = v, ts->cap = cap;
    }
    rt_xshard *sh = &ts->shards[ts->n];
    memset(sh, 0, sizeof *sh);
    sh->table = table, sh->col0 = col0, sh->width = width, sh->row0 = row0, sh->rows = rows;
    sh->opt = rt_xtables_opt(s, table, 1).kind;
    if (s->model.tables[table].dynamic) { /* a hash table; t and st become the working set */
        sh->t = (rt_ktable){NULL, 0, width, RT_KDT_FP32};
        sh->rows = 0;
        ts->n++;
        return rt_xdyn_create(sh, d, s, row0, rows, err) ? -1 : ts->n - 1;
    }
    sh->t = (rt_ktable){NULL, (int64_t)rows, width, kdtype(rt_scenario_table_dtype(s, table))};
    size_t vb = (size_t)rows * (size_t)width * rt_kdtype_bytes(sh->t.dtype);
    if (!(sh->t.data = dev_alloc(d, vb, table, "values", err))) return -1;
    ts->n++; /* from here rt_xtables_free releases what was allocated */
    if (row_ids) {
        if (!(sh->row_ids = malloc(sizeof(uint64_t) * (size_t)(rows ? rows : 1)))) {
            fprintf(err, "exec: out of host memory for the rows of table %d\n", table);
            return -1;
        }
        memcpy(sh->row_ids, row_ids, sizeof(uint64_t) * (size_t)rows);
    }
    ts->bytes += vb;
    float **slot[2] = {&sh->st.s0, &sh->st.s1};
    for (int k = 0; k < 2; k++) {
        int64_t len = rt_kopt_state_len(sh->opt, k, (int64_t)rows, width);
        if (len <= 0) continue;
        size_t b = (size_t)len * sizeof(float);
        if (!(*slot[k] = dev_alloc(d, b, table, "optimizer state", err))) return -1;
        if (d->ops->zero(d, *slot[k], b)) return -1;
        ts->bytes += b;
    }
    if (fill(sh, d, s, err)) return -1;
    return ts->n - 1;
}

void rt_xtables_free(rt_xtables *ts, rt_xdev *d)
{
    for (int i = 0; i < ts->n; i++) {
        rt_xshard *sh = &ts->shards[i];
        if (sh->t.data) d->ops->release(d, sh->t.data);
        if (sh->st.s0) d->ops->release(d, sh->st.s0);
        if (sh->st.s1) d->ops->release(d, sh->st.s1);
        free(sh->row_ids);
        rt_xdyn_free(sh, d);
    }
    free(ts->shards);
    memset(ts, 0, sizeof *ts);
}
