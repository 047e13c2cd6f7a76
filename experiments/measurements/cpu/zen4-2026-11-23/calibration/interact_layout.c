/* rt_kcpu_dot_interact_bwd at DLRM's shape (batch 128, 27 vectors of 128) with t and dt at the
 * start of two buffers of CAP floats allocated one after the other, dt started SKEW floats
 * into its buffer, and dout in a third: the calibration's interaction buffers (CAP =
 * 4096 x 27 x 128 = 14155776, SKEW 0) against others.
 * Build: gcc -O2 -I kernels interact_layout.c librectwin_kernels_cpu.a -lopenblas -lm
 * Run:   interact_layout CAP SKEW */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "kernels.h"

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

int main(int argc, char **argv)
{
    if (argc != 3) return 2;
    const size_t cap = (size_t)atol(argv[1]);
    const long skew = atol(argv[2]), batch = 128, nf = 27, d = 128;
    const size_t in = (size_t)(batch * nf * d), pairs = (size_t)(batch * nf * (nf - 1) / 2);
    float *t = malloc(cap * 4), *dt = malloc(cap * 4), *dout = malloc(pairs * 4);
    if (!t || !dt || !dout || in + (size_t)skew > cap) return 1;
    for (size_t i = 0; i < cap; i++)
        t[i] = dt[i] = 0.001f * (float)(i % 7) - 0.003f;
    for (size_t i = 0; i < pairs; i++)
        dout[i] = 0.001f * (float)(i % 5) - 0.002f;
    double best = 1e9;
    for (int r = 0; r < 7; r++) {
        int calls = 0;
        double t0 = now(), s;
        do {
            rt_kcpu_dot_interact_bwd(t, dout, batch, nf, d, dt + skew);
            calls++;
        } while ((s = now() - t0) < 0.05);
        if (s / calls < best) best = s / calls;
    }
    const double flops = 2.0 * (double)batch * nf * (nf - 1) * d;
    printf("cap %9zu skew %5ld  t %p dt %p  %7.1f us  %5.2f GFLOP/s\n", cap, skew, (void *)t,
           (void *)(dt + skew), best * 1e6, flops / best / 1e9);
    return 0;
}
