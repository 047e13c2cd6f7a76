/* Two spinning processes pinned to one CPU: each records when it was off the CPU (gaps of over
 * 50 us between consecutive clock reads), so the lengths of its runs on the CPU are the
 * scheduler's time slices between two equal CPU-bound tasks. */
#define _GNU_SOURCE
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + 1e-9 * t.tv_nsec;
}
int main(int argc, char **argv)
{
    int cpu = argc > 1 ? atoi(argv[1]) : 0;
    double secs = argc > 2 ? atof(argv[2]) : 2;
    cpu_set_t s;
    CPU_ZERO(&s);
    CPU_SET(cpu, &s);
    sched_setaffinity(0, sizeof s, &s);
    pid_t child = fork();
    int me = child == 0;
    double start = now(), last = start, run0 = start;
    double runs[100000];
    int n = 0;
    while (last - start < secs) {
        double t = now();
        if (t - last > 50e-6) {
            if (n < 100000) runs[n++] = last - run0;
            run0 = t;
        }
        last = t;
    }
    for (int i = 1; i < n; i++) printf("%d %.3f\n", me, runs[i] * 1e3);
    if (child) waitpid(child, NULL, 0);
    return 0;
}
