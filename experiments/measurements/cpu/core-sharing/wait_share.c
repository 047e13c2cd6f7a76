/* Does a rank that waits in an MPI collective take a core from the ranks that compute?
 * Every rank in COMPUTERS runs the same fixed arithmetic work (a dependent multiply-add chain,
 * no memory traffic) and times it; the other ranks enter MPI_Barrier at once and wait there
 * until the computers join. Run with 4 ranks on a 2-core machine and 2 computers: if waiting
 * ranks yield their cores, the computers take as long as 2 ranks computing alone (-np 2, 2
 * computers); if they spin, as long as 4 computing ranks.
 * build: mpicc -O2 -o wait_share wait_share.c
 * usage: mpirun --oversubscribe -np N ./wait_share COMPUTERS STEPS */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int computers = argc > 1 ? atoi(argv[1]) : size;
    long steps = argc > 2 ? atol(argv[2]) : 400000000L;
    MPI_Barrier(MPI_COMM_WORLD);
    /* volatile operands: the compiler cannot fold the chain away */
    volatile double a = 0.9999999, b = 1e-7 * (rank + 1);
    double t0 = MPI_Wtime(), x = 1.0, va = a, vb = b;
    if (rank < computers)
        for (long i = 0; i < steps; i++)
            x = x * va + vb;
    double t1 = MPI_Wtime();
    MPI_Barrier(MPI_COMM_WORLD);
    double t2 = MPI_Wtime();
    double mine[2] = {rank < computers ? t1 - t0 : -1, t2 - t0}, all[64][2];
    MPI_Gather(mine, 2, MPI_DOUBLE, all, 2, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    if (rank == 0) {
        printf("ranks %d computers %d steps %ld (x=%g):", size, computers, steps, x);
        for (int r = 0; r < size && r < 64; r++)
            if (all[r][0] >= 0) printf(" r%d %.3f s", r, all[r][0]);
        printf(" | barrier exit %.3f s\n", all[0][1]);
    }
    MPI_Finalize();
    return 0;
}
