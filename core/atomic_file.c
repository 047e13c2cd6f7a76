#include "atomic_file.h"

#include "cleanup.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int rt_atomic_open(rt_atomic_file *a, const char *path)
{
    a->f = NULL;
    a->cleanup = -1;
    a->path = strdup(path);
    size_t n = strlen(path) + 32;
    a->tmp = malloc(n);
    if (!a->path || !a->tmp) {
        rt_atomic_abort(a);
        return -1;
    }
    snprintf(a->tmp, n, "%s.tmp.%ld", path, (long)getpid());
    a->cleanup = rt_cleanup_track(a->tmp);
    a->f = fopen(a->tmp, "w");
    if (!a->f) {
        int e = errno;
        rt_atomic_abort(a);
        errno = e;
        return -1;
    }
    return 0;
}

static void release(rt_atomic_file *a)
{
    rt_cleanup_forget(a->cleanup);
    a->cleanup = -1;
    free(a->path);
    free(a->tmp);
    a->path = a->tmp = NULL;
}

int rt_atomic_close(rt_atomic_file *a)
{
    if (!a->f) return -1;
    /* A full disk shows up only at flush or close, so both are checked. */
    int bad = ferror(a->f) | fflush(a->f);
    bad |= fclose(a->f);
    a->f = NULL;
    if (bad) {
        if (a->tmp) remove(a->tmp);
        release(a);
        return -1;
    }
    return 0;
}

int rt_atomic_rename(rt_atomic_file *a)
{
    if (!a->tmp || !a->path) return -1;
    int rc = rename(a->tmp, a->path);
    if (rc != 0) remove(a->tmp);
    release(a);
    return rc == 0 ? 0 : -1;
}

int rt_atomic_commit(rt_atomic_file *a)
{
    if (rt_atomic_close(a) < 0) return -1;
    return rt_atomic_rename(a);
}

void rt_atomic_abort(rt_atomic_file *a)
{
    if (a->f) fclose(a->f);
    a->f = NULL;
    if (a->tmp) remove(a->tmp);
    release(a);
}

char *rt_path_join(const char *dir, const char *name)
{
    size_t n = strlen(dir) + strlen(name) + 2;
    char *p = malloc(n);
    if (p) snprintf(p, n, "%s/%s", dir, name);
    return p;
}

static int mkdir_one(const char *dir)
{
    if (mkdir(dir, 0777) == 0) return 0;
    if (errno != EEXIST) return -1;
    struct stat st;
    if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode)) {
        errno = ENOTDIR;
        return -1;
    }
    return 0;
}

int rt_mkdir_p(const char *dir)
{
    if (!dir || !*dir) { /* the loop below starts past the first character */
        errno = ENOENT;
        return -1;
    }
    char *p = strdup(dir);
    if (!p) return -1;
    int rc = 0;
    /* Create every proper prefix ending at a '/', then the whole path. */
    for (char *s = p + 1; *s && rc == 0; s++) {
        if (*s != '/') continue;
        *s = '\0';
        rc = mkdir_one(p);
        *s = '/';
    }
    if (rc == 0) rc = mkdir_one(p);
    int e = errno;
    free(p);
    errno = e;
    return rc;
}
