/* Timing the link between two cores of this machine (core_link.h). */
#if defined(__linux__) && !defined(_GNU_SOURCE)
#define _GNU_SOURCE /* sched_getaffinity, CPU_COUNT */
#endif
#include "core_link.h"

#include <mpi.h>
#include <stdlib.h>
#include <time.h>

#include "check_mpi.h"
#include "local_ranks.h"

#ifdef __linux__
#include <sched.h>
#endif

enum { LINK_WARMUP = 200, LINK_TRIPS = 2000 };

/* The one CPU this process is pinned to, or -1 when it may run on several. */
static int pinned_cpu(void)
{
#ifdef __linux__
    cpu_set_t set;
    CPU_ZERO(&set);
    if (sched_getaffinity(0, sizeof set, &set) || CPU_COUNT(&set) != 1) return -1;
    for (int c = 0; c < CPU_SETSIZE; c++)
        if (CPU_ISSET(c, &set)) return c;
#endif
    return -1;
}

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The round trips between local ranks 0 and PEER, timed on rank 0; their median into *RTT_S. */
static int ping_pong(MPI_Comm local, int me, int peer, double *rtt_s)
{
    double trip[LINK_TRIPS];
    char byte = 0;
    int other = me == 0 ? peer : 0;
    for (int i = 0; i < LINK_WARMUP + LINK_TRIPS; i++) {
        double t0 = now();
        if (me == 0) {
            RT_MPI_CHECK(MPI_Send(&byte, 1, MPI_CHAR, other, 0, local));
            RT_MPI_CHECK(MPI_Recv(&byte, 1, MPI_CHAR, other, 0, local, MPI_STATUS_IGNORE));
            if (i >= LINK_WARMUP) trip[i - LINK_WARMUP] = now() - t0;
        } else {
            RT_MPI_CHECK(MPI_Recv(&byte, 1, MPI_CHAR, other, 0, local, MPI_STATUS_IGNORE));
            RT_MPI_CHECK(MPI_Send(&byte, 1, MPI_CHAR, other, 0, local));
        }
    }
    if (me == 0) {
        qsort(trip, LINK_TRIPS, sizeof *trip, cmp_double);
        *rtt_s = trip[LINK_TRIPS / 2];
    }
    return 0;
}

/* Waits for REQ without polling a core: a rank that spins in MPI would share a core with one of
 * the pair and stretch its round trips to the scheduler's turns. */
static int wait_asleep(MPI_Request req)
{
    struct timespec nap = {0, 100 * 1000};
    for (int done = 0;;) {
        RT_MPI_CHECK(MPI_Test(&req, &done, MPI_STATUS_IGNORE));
        if (done) return 0;
        nanosleep(&nap, NULL);
    }
}

static int local_rtt(MPI_Comm local, double *rtt_s, FILE *err)
{
    int me, n;
    RT_MPI_CHECK(MPI_Comm_rank(local, &me));
    RT_MPI_CHECK(MPI_Comm_size(local, &n));
    int *cpu = malloc(sizeof(int) * (size_t)n);
    if (!cpu) {
        fprintf(err, "exec: out of memory timing the core link\n");
        return -1;
    }
    int mine = pinned_cpu();
    int rc = MPI_Allgather(&mine, 1, MPI_INT, cpu, 1, MPI_INT, local);
    int peer = -1;
    for (int r = 1; rc == MPI_SUCCESS && cpu[0] >= 0 && r < n && peer < 0; r++)
        if (cpu[r] >= 0 && cpu[r] != cpu[0]) peer = r;
    free(cpu);
    RT_MPI_CHECK(rc);
    *rtt_s = -1;
    if (peer < 0) return 0;
    int in_pair = me == 0 || me == peer;
    if (in_pair && ping_pong(local, me, peer, rtt_s)) return -1;
    MPI_Request done;
    RT_MPI_CHECK(MPI_Ibarrier(local, &done));
    if (in_pair)
        RT_MPI_CHECK(MPI_Wait(&done, MPI_STATUS_IGNORE));
    else if (wait_asleep(done))
        return -1;
    RT_MPI_CHECK(MPI_Bcast(rtt_s, 1, MPI_DOUBLE, 0, local));
    return 0;
}

int rt_xlink_rtt(double *rtt_s, FILE *err)
{
    MPI_Comm local;
    if (rt_xlocal_comm(&local)) return -1;
    int rc = local_rtt(local, rtt_s, err);
    RT_MPI_CHECK(MPI_Comm_free(&local));
    if (rc) return -1;
    /* Every rank reports the machine of world rank 0. */
    RT_MPI_CHECK(MPI_Bcast(rtt_s, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD));
    return 0;
}
