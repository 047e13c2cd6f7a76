/* The ranks of this machine (local_ranks.h). */
#include "local_ranks.h"

#include "check_mpi.h"

int rt_xlocal_comm(MPI_Comm *local)
{
    int rank;
    RT_MPI_CHECK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    RT_MPI_CHECK(
        MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, local));
    return 0;
}

int rt_xlocal_ranks(int *rank, int *size)
{
    MPI_Comm local;
    if (rt_xlocal_comm(&local)) return -1;
    int rc = MPI_Comm_rank(local, rank);
    if (rc == MPI_SUCCESS) rc = MPI_Comm_size(local, size);
    RT_MPI_CHECK(MPI_Comm_free(&local));
    RT_MPI_CHECK(rc);
    return 0;
}
