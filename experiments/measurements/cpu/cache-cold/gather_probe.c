/* Hot against cache-cold embedding kernels on one core: gather_pool and the SGD sparse update
 * (the CPU kernels rectwin-exec runs) at dim 128, pooling 1, over a table of TABLE_MIB.
 *   hot    every call looks up the same IDS IDs (what rectwin-calibrate did until 2026-11-23)
 *   cold   every call takes the next IDS IDs of a pool of uniform IDs covering the table
 *   dlrm   DLRM-criteo-100k's 26 tables (rows as models/dlrm-criteo-100k.yaml), each call one
 *          launch per table of 128 fresh uniform IDs, as exec's lookup op at one rank
 * Prints the mean seconds per call (per op for dlrm) and the bytes/s the calibration counts
 * (gather: ids x 8 + ids x dim x 4 + bags x dim x 4; sgd: ids x (8 + dim x 12)).
 * usage: gather_probe TABLE_MIB IDS CALLS */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "kernels.h"

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + 1e-9 * t.tv_nsec;
}

static uint64_t rng = 0x9e3779b97f4a7c15ULL;
static uint64_t next(void)
{
    rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
    return rng;
}

static float *floats(size_t n)
{
    float *p = malloc(n * sizeof *p);
    for (size_t i = 0; p && i < n; i++)
        p[i] = (float)(next() % 1000) * 1e-4f;
    return p;
}

int main(int argc, char **argv)
{
    if (argc < 4) return fprintf(stderr, "usage: gather_probe TABLE_MIB IDS CALLS\n"), 2;
    const int64_t dim = 128, n = atoll(argv[2]), calls = atoll(argv[3]);
    const int64_t rows = (int64_t)(atof(argv[1]) * (1 << 20) / (dim * 4));
    float *tab = floats((size_t)(rows * dim)), *out = floats((size_t)(n * dim));
    int64_t pool = rows > n * 4 ? rows : n * 4;
    int64_t *ids = malloc(sizeof(int64_t) * (size_t)pool),
            *off = malloc(sizeof(int64_t) * (size_t)(n + 1));
    if (!tab || !out || !ids || !off) return fprintf(stderr, "out of memory\n"), 1;
    for (int64_t i = 0; i < pool; i++)
        ids[i] = (int64_t)(next() % (uint64_t)rows);
    for (int64_t b = 0; b <= n; b++)
        off[b] = b;
    rt_ktable t = {tab, rows, dim, RT_KDT_FP32};
    rt_kopt sgd = {RT_KOPT_SGD, 1e-6f, 0, 0, 0, 0};
    rt_kopt_state st = {0};
    double gb = n * 8.0 + 2.0 * n * dim * 4, ub = n * (8.0 + dim * 12.0);
    for (int cold = 0; cold < 2; cold++) {
        for (int upd = 0; upd < 2; upd++) {
            int64_t at = 0;
            double t0 = now();
            for (int64_t c = 0; c < calls; c++) {
                const int64_t *p = ids + at;
                if (upd)
                    rt_kcpu_sparse_update(&t, st, &sgd, p, off, n, RT_KPOOL_SUM, out);
                else
                    rt_kcpu_gather_pool(&t, p, off, n, RT_KPOOL_SUM, out);
                if (cold && (at += n) + n > pool) at = 0;
            }
            double s = (now() - t0) / calls, b = upd ? ub : gb;
            printf("%-4s %-6s table %.0f MiB ids %lld: %.3f us/call, %.2f GB/s\n",
                   cold ? "cold" : "hot", upd ? "sgd" : "gather", atof(argv[1]), (long long)n,
                   s * 1e6, b / s / 1e9);
        }
    }
    static const int64_t dlrm[26] = {100000, 36746,  17245,  7413,   20243,  3,     7114, 1441, 62,
                                     100000, 100000, 100000, 10,     2209,   11267, 128,  4,    974,
                                     14,     100000, 100000, 100000, 100000, 12606, 104,  35};
    float *tabs[26];
    for (int f = 0; f < 26; f++)
        if (!(tabs[f] = floats((size_t)(dlrm[f] * dim)))) return fprintf(stderr, "oom\n"), 1;
    int64_t *fid = malloc(sizeof(int64_t) * 128 * 26);
    double spent[2] = {0, 0};
    int64_t ops = calls / 26 > 50 ? calls / 26 : 50;
    for (int64_t c = 0; c < ops; c++) {
        for (int f = 0; f < 26; f++)
            for (int j = 0; j < 128; j++)
                fid[f * 128 + j] = (int64_t)(next() % (uint64_t)dlrm[f]);
        for (int upd = 0; upd < 2; upd++) {
            double t0 = now();
            for (int f = 0; f < 26; f++) {
                rt_ktable tf = {tabs[f], dlrm[f], dim, RT_KDT_FP32};
                if (upd)
                    rt_kcpu_sparse_update(&tf, st, &sgd, fid + f * 128, off, 128, RT_KPOOL_SUM,
                                          out);
                else
                    rt_kcpu_gather_pool(&tf, fid + f * 128, off, 128, RT_KPOOL_SUM, out);
            }
            spent[upd] += now() - t0;
        }
    }
    printf("dlrm gather: %.3f us/op (26 launches of 128 bags); dlrm sgd: %.3f us/op\n",
           spent[0] / ops * 1e6, spent[1] / ops * 1e6);
    return 0;
}
