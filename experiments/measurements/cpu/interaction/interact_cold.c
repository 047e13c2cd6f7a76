/* The library's dot interaction at DLRM's shape (batch 128, 27 vectors of 128), each call timed
 * alone: "warm" right after the previous call on the same buffers (as the calibration times
 * it), "cold" after writing a 64 MiB buffer, which evicts the inputs from the 32 MiB L3 (as the
 * top MLP's weights and gradients can between two interaction calls in a training step).
 * Prints the median and the fastest of 41 calls per mode, forward and backward.
 * Build: gcc -O3 -I kernels interact_cold.c librectwin_kernels_cpu.a -lopenblas -lm
 * Run:   interact_cold */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kernels.h"

enum { BATCH = 128, NF = 27, D = 128, CALLS = 41 };

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(void)
{
    const size_t in = (size_t)BATCH * NF * D, pairs = (size_t)BATCH * NF * (NF - 1) / 2,
                 junk_n = (size_t)64 << 18; /* 64 MiB of floats */
    float *x = malloc(in * 4), *dx = malloc(in * 4), *out = malloc(pairs * 4),
          *dout = malloc(pairs * 4), *junk = malloc(junk_n * 4);
    if (!x || !dx || !out || !dout || !junk) return 1;
    srand(7);
    for (size_t i = 0; i < in; i++)
        x[i] = dx[i] = (float)rand() / RAND_MAX - 0.5f;
    for (size_t i = 0; i < pairs; i++)
        dout[i] = (float)rand() / RAND_MAX - 0.5f;
    const double flops = (double)BATCH * NF * (NF - 1) * D;
    for (int bwd = 0; bwd < 2; bwd++)
        for (int cold = 0; cold < 2; cold++) {
            double t[CALLS];
            for (int c = 0; c < CALLS; c++) {
                if (cold) memset(junk, c, junk_n * 4);
                double t0 = now();
                if (bwd)
                    rt_kcpu_dot_interact_bwd(x, dout, BATCH, NF, D, dx);
                else
                    rt_kcpu_dot_interact_fwd(x, BATCH, NF, D, out);
                t[c] = now() - t0;
            }
            qsort(t, CALLS, sizeof *t, cmp);
            const double f = bwd ? 2 * flops : flops;
            printf("%s %s  median %7.1f us %5.2f GFLOP/s  fastest %7.1f us %5.2f GFLOP/s\n",
                   bwd ? "bwd" : "fwd", cold ? "cold" : "warm", t[CALLS / 2] * 1e6,
                   f / t[CALLS / 2] / 1e9, t[0] * 1e6, f / t[0] / 1e9);
        }
    return 0;
}
