/* rt_kcpu_linear_fwd against its GEMM alone, over DLRM's MLP layers at batch 128: what the
 * kernel's pass of bias and activation over y costs beyond the GEMM, per output element.
 * Build: gcc -O2 -I kernels lfwd_parts.c librectwin_kernels_cpu.a -lopenblas -lm */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "kernels.h"

enum { BATCH = 128, REPS = 7 };

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
    float *x = randoms(1 << 20), *w = randoms(1 << 20), *bias = randoms(1 << 12);
    float *y = randoms(1 << 20);
    double sum_fwd = 0, sum_gemm = 0;
    printf("%-10s %14s %12s %8s %12s\n", "in,out", "linear_fwd us", "GEMM us", "ratio",
           "rest ns/elem");
    for (size_t l = 0; l < sizeof layers / sizeof *layers; l++) {
        const long in = layers[l][0], out = layers[l][1], n = BATCH * out;
        double best_fwd = 1e9, best_gemm = 1e9;
        for (int r = 0; r < REPS; r++) {
            int calls = 0;
            double t0 = now(), t;
            do {
                rt_kcpu_linear_fwd(x, BATCH, in, out, w, bias, RT_KACT_RELU, y);
                calls++;
            } while ((t = now() - t0) < 0.02);
            if (t / calls < best_fwd) best_fwd = t / calls;
            calls = 0;
            t0 = now();
            do {
                rt_kcpu_gemm(0, 1, BATCH, out, in, 1, x, in, w, in, 0, y, out);
                calls++;
            } while ((t = now() - t0) < 0.02);
            if (t / calls < best_gemm) best_gemm = t / calls;
        }
        sum_fwd += best_fwd;
        sum_gemm += best_gemm;
        printf("%4ld,%5ld %14.1f %12.1f %8.2f %12.2f\n", in, out, best_fwd * 1e6, best_gemm * 1e6,
               best_fwd / best_gemm, (best_fwd - best_gemm) * 1e9 / (double)n);
    }
    printf("sum        %14.1f %12.1f %8.2f\n", sum_fwd * 1e6, sum_gemm * 1e6, sum_fwd / sum_gemm);
    return 0;
}
