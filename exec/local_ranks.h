/* The ranks of this machine: those MPI_COMM_TYPE_SHARED groups with the calling rank. One split,
 * shared by rectwin-exec, rectwin-calibrate, the MPI comm backend and core_link.c. */
#ifndef RT_XLOCAL_RANKS_H
#define RT_XLOCAL_RANKS_H

#include <mpi.h>

/* Collective over MPI_COMM_WORLD: the communicator of this machine's ranks, ordered as in the
 * world, into *LOCAL (the caller frees it with MPI_Comm_free). Returns 0, or -1 with the MPI
 * error on stderr. */
int rt_xlocal_comm(MPI_Comm *local);

/* Collective over MPI_COMM_WORLD: this rank's index and the count among its machine's ranks. */
int rt_xlocal_ranks(int *rank, int *size);

#endif
