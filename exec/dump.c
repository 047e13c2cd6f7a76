#include "dump.h"

#include <stdlib.h>
#include <string.h>

#include "grad_accum.h"

static FILE *open_file(const char *dir, const char *what, int rank, FILE *err)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s.%d.txt", dir, what, rank);
    FILE *f = fopen(path, "w");
    if (!f) fprintf(err, "exec: cannot write %s\n", path);
    return f;
}

static int close_file(FILE *f, FILE *err)
{
    int bad = ferror(f);
    if (fclose(f) || bad) {
        fprintf(err, "exec: writing a dump file failed\n");
        return -1;
    }
    return 0;
}

/* Host copy of N floats of device memory (NULL on failure). */
static float *to_host(const rt_xexec *x, const void *dev, size_t n)
{
    float *h = malloc(sizeof(float) * (n ? n : 1));
    if (h && n && x->dev->ops->copy(x->dev, h, dev, n * sizeof(float), RT_XCOPY_D2H)) {
        free(h);
        return NULL;
    }
    return h;
}

int rt_xdump_iteration(const rt_xexec *x, const char *dir, FILE *err)
{
    FILE *f = open_file(dir, "emb", x->rank, err);
    if (!f) return -1;
    int b = x->v.batch.batch, rc = 0;
    /* The dense net's inputs: with a tower module, the towers' outputs. */
    for (int t = 0; t < x->net_model->n_tables && !rc; t++) {
        const rt_table *tb = &x->net_model->tables[t];
        /* Pooled: one row per sample; sequence: one per token, numbered within the rank. */
        int64_t rows = tb->sequence ? (int64_t)x->v.batch.f[t].n_ids : b;
        int64_t base = (int64_t)x->rank * (tb->sequence ? 1000000000 : b);
        float *h = to_host(x, x->v.emb[t], (size_t)rows * tb->dim);
        if (!h) rc = -1;
        for (int64_t i = 0; h && i < rows; i++) {
            fprintf(f, "%d %lld", t, (long long)(base + i));
            for (int j = 0; j < tb->dim; j++)
                fprintf(f, " %.9g", h[(size_t)i * tb->dim + j]);
            fputc('\n', f);
        }
        free(h);
    }
    if (close_file(f, err) || rc) return -1;
    if (!(f = open_file(dir, "loss", x->rank, err))) return -1;
    fprintf(f, "%.9g\n", rt_xaccum_loss(x));
    return close_file(f, err);
}

int rt_xdump_tables(const rt_xexec *x, const char *dir, FILE *err)
{
    FILE *f = open_file(dir, "table", x->rank, err);
    if (!f) return -1;
    int rc = 0;
    for (int i = 0; i < x->tables.n && !rc; i++) {
        const rt_xshard *sh = &x->tables.shards[i];
        if (sh->t.dtype != RT_KDT_FP32) {
            fprintf(err, "exec: --dump writes fp32 tables only\n");
            rc = -1;
            break;
        }
        float *h = to_host(x, sh->t.data, (size_t)sh->rows * sh->width);
        if (!h) rc = -1;
        for (uint64_t r = 0; h && r < sh->rows; r++) {
            fprintf(f, "%d %llu %d", sh->table, (unsigned long long)rt_xshard_global_row(sh, r),
                    sh->col0);
            for (int j = 0; j < sh->width; j++)
                fprintf(f, " %.9g", h[r * (uint64_t)sh->width + j]);
            fputc('\n', f);
        }
        free(h);
    }
    int wrc = close_file(f, err);
    return rc || wrc ? -1 : 0;
}
