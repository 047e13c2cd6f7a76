/* DLRM's dot interaction (batch 128, 27 vectors of 128) in the calibration's layout: x and the
 * gradient at the start of two buffers of CAP floats allocated one after the other, dout in a
 * third (CAP = 4096 x 27 x 128 = 14155776). KERNEL old runs kernels/cpu/dot_interaction.c as
 * of 72e2f4a (old_dot_interaction.c), new the library's. Prints the fastest of 7 rounds of
 * 50 ms for forward and backward, and checks the two backward kernels give the same floats.
 * Build: gcc -O3 -I kernels interact_probe.c old_dot_interaction.c librectwin_kernels_cpu.a
 *        -lopenblas -lm
 * Run:   interact_probe old|new CAP */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kernels.h"

rt_kstatus old_fwd(const float *t, int64_t batch, int64_t nf, int64_t d, float *out);
rt_kstatus old_bwd(const float *t, const float *dout, int64_t batch, int64_t nf, int64_t d,
                   float *dt);

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

enum { BATCH = 128, NF = 27, D = 128 };

static double best_of(int bwd, int old, const float *x, const float *dout, float *y)
{
    double best = 1e9;
    for (int r = 0; r < 7; r++) {
        int calls = 0;
        double t0 = now(), s;
        do {
            if (bwd)
                (old ? old_bwd : rt_kcpu_dot_interact_bwd)(x, dout, BATCH, NF, D, y);
            else
                (old ? old_fwd : rt_kcpu_dot_interact_fwd)(x, BATCH, NF, D, y);
            calls++;
        } while ((s = now() - t0) < 0.05);
        if (s / calls < best) best = s / calls;
    }
    return best;
}

int main(int argc, char **argv)
{
    if (argc != 3 || (strcmp(argv[1], "old") && strcmp(argv[1], "new"))) return 2;
    const int old = !strcmp(argv[1], "old");
    const size_t cap = (size_t)atol(argv[2]), in = (size_t)BATCH * NF * D,
                 pairs = (size_t)BATCH * NF * (NF - 1) / 2;
    float *x = malloc(cap * 4), *y = malloc(cap * 4), *dout = malloc(pairs * 4),
          *ref = malloc(in * 4);
    if (!x || !y || !dout || !ref || in > cap) return 1;
    srand(7);
    for (size_t i = 0; i < cap; i++)
        x[i] = y[i] = (float)rand() / RAND_MAX - 0.5f;
    for (size_t i = 0; i < pairs; i++)
        dout[i] = (float)rand() / RAND_MAX - 0.5f;
    old_bwd(x, dout, BATCH, NF, D, ref);
    rt_kcpu_dot_interact_bwd(x, dout, BATCH, NF, D, y);
    const int same = !memcmp(ref, y, in * 4);
    const double fwd = best_of(0, old, x, dout, y), bwd = best_of(1, old, x, dout, y);
    const double flops = (double)BATCH * NF * (NF - 1) * D; /* forward; backward twice it */
    printf("%s cap %9zu  fwd %7.1f us %5.2f GFLOP/s  bwd %7.1f us %5.2f GFLOP/s  bwd same floats: "
           "%s\n",
           argv[1], cap, fwd * 1e6, flops / fwd / 1e9, bwd * 1e6, 2 * flops / bwd / 1e9,
           same ? "yes" : "NO");
    return 0;
}
