/* What an interrupted run leaves behind. SIGINT and SIGTERM remove the temporary files that
 * are registered here and kill the registered child process, then end the process as the
 * signal would have. A signal handler can only reach static state, so this module holds the
 * one process-wide registry the program has; everything in it is a fixed-size table. */
#ifndef RT_CLEANUP_H
#define RT_CLEANUP_H

#include <sys/types.h>

/* Installs the handlers (once; later calls do nothing). */
void rt_cleanup_install(void);
/* Registers PATH for removal on a signal; returns a slot for rt_cleanup_forget (-1 when the
 * table is full or the path too long: that file is then not cleaned, nothing else changes). */
int rt_cleanup_track(const char *path);
void rt_cleanup_forget(int slot);
/* The child process to kill on a signal (0: none). */
void rt_cleanup_child(pid_t pid);
/* Removes DIR's "<name>.tmp.<pid>" files whose process no longer exists: what a killed run
 * left before cleanup existed or could run (SIGKILL). Returns how many it removed. */
int rt_cleanup_stale(const char *dir);

#endif
