/* Checked MPI calls, shared by the MPI and NCCL comm backends. Communicators must carry
 * MPI_ERRORS_RETURN (MPI_Comm_set_errhandler) or a failing call aborts before this sees it. */
#ifndef RT_CHECK_MPI_H
#define RT_CHECK_MPI_H

#include <mpi.h>
#include <stdio.h>

/* Evaluates CALL once; on a code other than MPI_SUCCESS prints file:line, the call and the MPI
 * error string on stderr and returns -1 from the enclosing function. */
#define RT_MPI_CHECK(call)                                                                         \
    do {                                                                                           \
        int rt_mpi_rc_ = (call);                                                                   \
        if (rt_mpi_rc_ != MPI_SUCCESS) {                                                           \
            char rt_mpi_msg_[MPI_MAX_ERROR_STRING];                                                \
            int rt_mpi_len_ = 0;                                                                   \
            if (MPI_Error_string(rt_mpi_rc_, rt_mpi_msg_, &rt_mpi_len_) != MPI_SUCCESS)            \
                snprintf(rt_mpi_msg_, sizeof rt_mpi_msg_, "MPI error %d", rt_mpi_rc_);             \
            fprintf(stderr, "%s:%d: %s failed: %s\n", __FILE__, __LINE__, #call, rt_mpi_msg_);     \
            return -1;                                                                             \
        }                                                                                          \
    } while (0)

#endif
