/* Result files are written to "<path>.tmp.<pid>" and renamed into place, so a reader never
 * sees half a file. */
#ifndef RT_ATOMIC_FILE_H
#define RT_ATOMIC_FILE_H

#include <stdio.h>

typedef struct rt_atomic_file {
    FILE *f;
    char *path;
    char *tmp;
    int cleanup; /* its slot in core/cleanup.h, so a signal removes the temp file */
} rt_atomic_file;

int rt_atomic_open(rt_atomic_file *a, const char *path);
/* Flushes, checks for write errors, renames. On failure removes the temp file. */
int rt_atomic_commit(rt_atomic_file *a);
void rt_atomic_abort(rt_atomic_file *a);
/* The two halves of rt_atomic_commit, for writing several files all-or-nothing: close every
 * temp file (checking errors; the temp file is removed on failure), then rename each. */
int rt_atomic_close(rt_atomic_file *a);
int rt_atomic_rename(rt_atomic_file *a);
/* "DIR/NAME" in a new malloc'd string (NULL when out of memory). */
char *rt_path_join(const char *dir, const char *name);
/* mkdir -p */
int rt_mkdir_p(const char *dir);

#endif
