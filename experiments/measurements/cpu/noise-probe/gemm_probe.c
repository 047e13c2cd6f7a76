/* Probe of the machine's speed over time: single-thread SGEMM 512^3 rate per 0.25 s window. */
#include <cblas.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + 1e-9 * t.tv_nsec;
}
int main(int argc, char **argv)
{
    int n = 512;
    double secs = argc > 1 ? atof(argv[1]) : 60;
    float *a = malloc(sizeof(float) * n * n), *b = malloc(sizeof(float) * n * n),
          *c = malloc(sizeof(float) * n * n);
    for (int i = 0; i < n * n; i++) {
        a[i] = (float)(i % 7) * 0.1f;
        b[i] = (float)(i % 5) * 0.1f;
        c[i] = 0;
    }
    double t0 = now(), w0 = t0;
    int calls = 0;
    while (now() - t0 < secs) {
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.f, a, n, b, n, 0.f, c, n);
        calls++;
        double t = now();
        if (t - w0 >= 0.25) {
            printf("%.2f %.2f\n", t - t0, 2.0 * n * n * n * calls / (t - w0) / 1e9);
            fflush(stdout);
            calls = 0;
            w0 = t;
        }
    }
    return 0;
}
