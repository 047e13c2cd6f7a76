/* Does a CPU AllReduce run slower on a buffer the previous call did not touch? Every rank
 * AllReduces BYTES in place, REPS times, each call starting from a barrier; with POOL_MIB 0
 * every call reuses one buffer (how rectwin-calibrate timed collectives before the cache-cold
 * pools), otherwise call i uses the next page-aligned stretch of a POOL_MIB pool filled with
 * non-zero data (how it times them now). Rank 0 prints the fastest and the median call after
 * two warm-up calls. With a fourth argument `zero` the pool is zero-filled instead.
 *   mpicc -O2 -o allreduce_pool allreduce_pool.c
 *   mpirun -np 2 ./allreduce_pool BYTES POOL_MIB REPS [zero] */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (argc != 4 && !(argc == 5 && !strcmp(argv[4], "zero"))) {
        if (!rank) fprintf(stderr, "usage: allreduce_pool BYTES POOL_MIB REPS [zero]\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    size_t bytes = (size_t)atol(argv[1]), stride = (bytes + 4095) / 4096 * 4096;
    size_t pool = (size_t)atol(argv[2]) << 20;
    int reps = atoi(argv[3]);
    if (pool < stride) pool = stride;
    float *p = malloc(pool);
    double *t = malloc(sizeof *t * (size_t)(reps > 3 ? reps : 3));
    if (!p || !t || reps < 3) MPI_Abort(MPI_COMM_WORLD, 1);
    int zero = argc == 5;
    for (size_t i = 0; i < pool / sizeof *p; i++)
        p[i] = zero ? 0.0f : (float)((i * 2654435761u) % 1000) * 1e-5f;
    size_t off = 0;
    for (int k = 0; k < reps; k++) {
        if (off + stride > pool) off = 0;
        float *b = (float *)((char *)p + off);
        off += stride;
        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = MPI_Wtime();
        if (MPI_Allreduce(MPI_IN_PLACE, b, (int)(bytes / sizeof *b), MPI_FLOAT, MPI_SUM,
                          MPI_COMM_WORLD) != MPI_SUCCESS)
            MPI_Abort(MPI_COMM_WORLD, 1);
        t[k] = MPI_Wtime() - t0;
    }
    qsort(t + 2, (size_t)reps - 2, sizeof *t, cmp);
    if (!rank)
        printf("bytes %zu pool_mib %s%s reps %d fastest_ms %.3f median_ms %.3f\n", bytes, argv[2],
               zero ? " zero-filled" : "", reps, t[2] * 1e3, t[2 + (reps - 2) / 2] * 1e3);
    free(p), free(t);
    MPI_Finalize();
    return 0;
}
