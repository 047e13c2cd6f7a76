/* rt_kcpu_linear_bwd against its two GEMMs, over DLRM's MLP layers at batch 128, with the
 * activation gradient dy and the forward output y drawn anew for every call from a pool of
 * 64 MiB, as a training step brings new values: a branch on y > 0 then mispredicts as it does
 * in exec, where a fixed small input would let the predictor learn it.
 * Build: gcc -O2 -I kernels lbwd_parts.c librectwin_kernels_cpu.a -lopenblas -lm */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "kernels.h"

enum { POOL = 1 << 24, BATCH = 128, REPS = 7 };

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static float *randoms(size_t n)
{
    float *p = malloc(n * sizeof *p);
    for (size_t i = 0; i < n; i++)
        p[i] = (float)rand() / (float)RAND_MAX - 0.5f;
    return p;
}

int main(void)
{
    const long layers[][2] = {{13, 512},    {512, 256},  {256, 128}, {479, 1024},
                              {1024, 1024}, {1024, 512}, {512, 256}, {256, 1}};
    float *y = randoms(POOL), *dy = randoms(POOL), *x = randoms(1 << 20), *w = randoms(1 << 20);
    float *dx = randoms(1 << 20), *dw = randoms(1 << 20), *db = randoms(1 << 20);
    float *dz = randoms(1 << 20);
    double sum_bwd = 0, sum_gemm = 0;
    printf("%-10s %14s %12s %8s %12s\n", "in,out", "linear_bwd us", "2 GEMMs us", "ratio",
           "rest ns/elem");
    for (size_t l = 0; l < sizeof layers / sizeof *layers; l++) {
        const long in = layers[l][0], out = layers[l][1], n = BATCH * out;
        double best_bwd = 1e9, best_gemm = 1e9;
        long at = 0;
        for (int r = 0; r < REPS; r++) {
            int calls = 0;
            double t0 = now(), t;
            do {
                if (at + n > POOL) at = 0;
                rt_kcpu_linear_bwd(x, y + at, dy + at, BATCH, in, out, w, RT_KACT_RELU, dx, dw, db);
                at += n;
                calls++;
            } while ((t = now() - t0) < 0.02);
            if (t / calls < best_bwd) best_bwd = t / calls;
            calls = 0;
            t0 = now();
            do {
                rt_kcpu_gemm(1, 0, out, in, BATCH, 1, dz, out, x, in, 0, dw, in);
                rt_kcpu_gemm(0, 0, BATCH, in, out, 1, dz, out, w, in, 0, dx, in);
                calls++;
            } while ((t = now() - t0) < 0.02);
            if (t / calls < best_gemm) best_gemm = t / calls;
        }
        sum_bwd += best_bwd;
        sum_gemm += best_gemm;
        printf("%4ld,%5ld %14.1f %12.1f %8.2f %12.2f\n", in, out, best_bwd * 1e6, best_gemm * 1e6,
               best_bwd / best_gemm, (best_bwd - best_gemm) * 1e9 / (double)n);
    }
    printf("sum        %14.1f %12.1f %8.2f\n", sum_bwd * 1e6, sum_gemm * 1e6, sum_bwd / sum_gemm);
    return 0;
}
