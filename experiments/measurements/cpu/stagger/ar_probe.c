/* MPI_Allreduce (in place, float sum) of BYTES per rank on the ranks of this machine, as exec
 * calls it, timed two ways in alternation: right after a barrier (as rectwin-calibrate times a
 * collective) and right after COMPUTE_MS of arithmetic on every rank (as exec's dense AllReduce
 * follows the backward). Each call runs on a buffer of its own out of a pool twice the size of the
 * last-level cache, so both start cache-cold. Prints each call's time on rank 0 (the slowest
 * rank's, via a max reduction). */
#define _GNU_SOURCE
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + 1e-9 * t.tv_nsec;
}

static volatile float sink;
static void compute(double ms, float *w, size_t n)
{
    double end = now() + ms * 1e-3;
    float acc = 0;
    while (now() < end)
        for (size_t i = 0; i < n; i++) acc += w[i] * 1.0001f;
    sink = acc;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, world;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &world);
    size_t bytes = argc > 1 ? strtoull(argv[1], NULL, 10) : 9500000;
    double cms = argc > 2 ? atof(argv[2]) : 10;
    int reps = argc > 3 ? atoi(argv[3]) : 20;
    size_t n = bytes / 4, pool = (64u << 20) / bytes + 2;
    float *buf = malloc(pool * n * sizeof(float));
    float *w = malloc(4096 * sizeof(float));
    for (size_t i = 0; i < pool * n; i++) buf[i] = 1e-3f;
    for (int i = 0; i < 4096; i++) w[i] = 1;
    for (int r = 0; r < 2 * reps; r++) {
        int after_compute = r % 2;
        float *b = buf + (size_t)(r % pool) * n;
        MPI_Barrier(MPI_COMM_WORLD);
        if (after_compute) compute(cms, w, 4096);
        double t0 = now();
        MPI_Allreduce(MPI_IN_PLACE, b, (int)n, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
        double t = now() - t0, tmax;
        MPI_Reduce(&t, &tmax, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
        if (!rank) printf("%s %zu %.3f\n", after_compute ? "after_compute" : "after_barrier", bytes, tmax * 1e3);
    }
    MPI_Finalize();
    return 0;
}
