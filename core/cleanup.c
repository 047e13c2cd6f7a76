#include "cleanup.h"

#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum { RT_CLEANUP_SLOTS = 64, RT_CLEANUP_PATH = 4096 };

static char tracked[RT_CLEANUP_SLOTS][RT_CLEANUP_PATH];
static volatile sig_atomic_t used[RT_CLEANUP_SLOTS];
static volatile pid_t child;
static int installed;

static void on_signal(int sig)
{
    /* Only async-signal-safe calls: kill, unlink, signal, raise. */
    if (child > 0) kill(child, SIGKILL);
    for (int i = 0; i < RT_CLEANUP_SLOTS; i++)
        if (used[i]) unlink(tracked[i]);
    signal(sig, SIG_DFL);
    raise(sig);
}

void rt_cleanup_install(void)
{
    if (installed) return;
    installed = 1;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
}

int rt_cleanup_track(const char *path)
{
    if (strlen(path) >= RT_CLEANUP_PATH) return -1;
    for (int i = 0; i < RT_CLEANUP_SLOTS; i++) {
        if (used[i]) continue;
        memcpy(tracked[i], path, strlen(path) + 1);
        used[i] = 1; /* set after the path is complete: the handler never sees half of it */
        return i;
    }
    return -1;
}

void rt_cleanup_forget(int slot)
{
    if (slot >= 0 && slot < RT_CLEANUP_SLOTS) used[slot] = 0;
}

void rt_cleanup_child(pid_t pid)
{
    child = pid;
}

/* PID from a "<name>.tmp.<pid>" file name, or 0. */
static pid_t tmp_pid(const char *name)
{
    const char *t = strstr(name, ".tmp.");
    if (!t || !t[5]) return 0;
    char *end;
    long pid = strtol(t + 5, &end, 10);
    return *end || pid <= 0 ? 0 : (pid_t)pid;
}

int rt_cleanup_stale(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d) return 0;
    int removed = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        pid_t pid = tmp_pid(e->d_name);
        /* Only a process that no longer exists proves the file abandoned. */
        if (!pid || pid == getpid() || kill(pid, 0) == 0 || errno != ESRCH) continue;
        char path[RT_CLEANUP_PATH];
        if ((size_t)snprintf(path, sizeof path, "%s/%s", dir, e->d_name) >= sizeof path) continue;
        removed += unlink(path) == 0;
    }
    closedir(d);
    return removed;
}
