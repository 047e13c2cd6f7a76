/* A watchdog thread per rank: when one op runs longer than the limit (a peer died, a
 * collective hangs), it names the rank and the op and aborts every rank through the comm
 * backend (ncclCommAbort, MPI_Abort), so a job never hangs. */
#ifndef RT_XWATCHDOG_H
#define RT_XWATCHDOG_H

#include "comm.h"
#include "graph.h"

typedef struct rt_xwatchdog rt_xwatchdog;

/* NULL (message on stderr) when the thread cannot start. */
rt_xwatchdog *rt_xwatchdog_start(const rt_graph *g, rt_xcomm *c, double limit_s);
void rt_xwatchdog_stop(rt_xwatchdog *w);
/* The op now running (-1: none, nothing is watched). */
void rt_xwatchdog_enter(rt_xwatchdog *w, int op);
/* A watched step between ops that waits for peers (WHAT names it in the message, static). */
void rt_xwatchdog_step(rt_xwatchdog *w, const char *what);

#endif
