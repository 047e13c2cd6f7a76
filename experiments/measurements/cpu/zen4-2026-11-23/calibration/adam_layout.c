/* rt_kcpu_adam on 9362 parameters (262 KB of traffic, one point of the calibration's
 * dense_adam curve), with its four buffers (w, g, m, v) allocated as CAP floats each, one after
 * the other, and g, m, v started SKEW, 2 SKEW and 3 SKEW floats into theirs: the addresses of
 * the calibration's stream buffers (CAP = 16777280, 64 MiB + 64 floats, SKEW 0) against others.
 * Build: gcc -O2 -I kernels adam_layout.c librectwin_kernels_cpu.a -lopenblas -lm
 * Run:   adam_layout CAP SKEW */
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
    const long skew = atol(argv[2]), n = 9362;
    float *w = malloc(cap * 4), *g = malloc(cap * 4), *m = malloc(cap * 4), *v = malloc(cap * 4);
    if (!w || !g || !m || !v || (size_t)(n + 3 * skew) > cap) return 1;
    for (size_t i = 0; i < cap; i++) {
        w[i] = g[i] = 0.001f * (float)(i % 7) - 0.003f;
        m[i] = v[i] = 0.0f;
    }
    float *gs = g + skew, *ms = m + 2 * skew, *vs = v + 3 * skew;
    long step = 0;
    double best = 1e9;
    for (int r = 0; r < 7; r++) {
        int calls = 0;
        double t0 = now(), t;
        do {
            rt_kadam o = {RT_KOPT_ADAM, 1e-6f, 0.9f, 0.999f, 1e-8f, 1.0f, ++step};
            rt_kcpu_adam(n, &o, w, gs, ms, vs);
            calls++;
        } while ((t = now() - t0) < 0.02);
        if (t / calls < best) best = t / calls;
    }
    printf("cap %9zu skew %5ld  w %p g %p m %p v %p  %5.2f ns/param  %5.2f GB/s\n", cap, skew,
           (void *)w, (void *)gs, (void *)ms, (void *)vs, best * 1e9 / n, 28.0 * n / best / 1e9);
    return 0;
}
