/* Clock, median and table/CSV output shared by the CPU and CUDA benchmarks. */
#define _POSIX_C_SOURCE 200809L
#include "bench_report.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

double rt_kbench_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double rt_kbench_median(double *x, int n)
{
    qsort(x, (size_t)n, sizeof *x, cmp_double);
    return n % 2 ? x[n / 2] : 0.5 * (x[n / 2 - 1] + x[n / 2]);
}

void rt_kbench_header(const rt_kbench_out *o)
{
    printf("%-22s %-5s %-34s %12s %11s %9s %9s %6s %10s %11s\n", "kernel", "dtype", "size", "bytes",
           "time_us", "GB/s", "copyGB/s", "MBU", "launch_us", "Mitems/s");
    if (o->csv)
        fprintf(o->csv, "device,kernel,dtype,size,bytes,time_s,gbps,copy_gbps,mbu,launch_us,"
                        "mitems_per_s\n");
}

void rt_kbench_print(const rt_kbench_out *o, const rt_kbench_row *r)
{
    const double gbps = r->bytes / r->seconds / 1e9;
    const double mbu = r->mbu > 0 ? r->mbu : gbps / r->copy_gbps;
    const double rate = r->items > 0 ? r->items / r->seconds / 1e6 : 0.0;
    printf("%-22s %-5s %-34s %12.0f %11.2f %9.2f %9.2f %6.3f %10.2f %11.1f\n", r->kernel, r->dtype,
           r->size, r->bytes, r->seconds * 1e6, gbps, r->copy_gbps, mbu, r->launch_us, rate);
    fflush(stdout);
    if (o->csv)
        fprintf(o->csv, "%s,%s,%s,\"%s\",%.0f,%.9g,%.4f,%.4f,%.4f,%.3f,%.2f\n", o->device,
                r->kernel, r->dtype, r->size, r->bytes, r->seconds, gbps, r->copy_gbps, mbu,
                r->launch_us, rate);
}

int rt_kbench_args(int argc, char **argv, rt_kbench_out *o, const char *default_device)
{
    o->csv = NULL;
    o->device = default_device;
    o->only = NULL;
    for (int i = 1; i < argc; i++) {
        if (i + 1 < argc && strcmp(argv[i], "--csv") == 0) {
            o->csv = fopen(argv[++i], "w");
            if (!o->csv) {
                fprintf(stderr, "%s: cannot write %s\n", argv[0], argv[i]);
                return 2;
            }
        } else if (i + 1 < argc && strcmp(argv[i], "--device") == 0) {
            o->device = argv[++i];
        } else if (i + 1 < argc && strcmp(argv[i], "--only") == 0) {
            o->only = argv[++i];
        } else {
            fprintf(stderr, "usage: %s [--csv PATH] [--device NAME] [--only KERNEL]\n", argv[0]);
            return 2;
        }
    }
    return 0;
}

int rt_kbench_selected(const rt_kbench_out *o, const char *kernel)
{
    return !o->only || strstr(kernel, o->only) != NULL;
}
