/* Shared pieces of the kernel benchmarks: clock, median, and the result table / CSV. */
#ifndef RT_KBENCH_REPORT_H
#define RT_KBENCH_REPORT_H

#include <stdint.h>
#include <stdio.h>

typedef struct {
    const char *kernel;
    const char *dtype;
    char size[64];    /* shape in words, e.g. "bags=65536 pool=8 dim=64" */
    double bytes;     /* minimum bytes the kernel must move */
    double seconds;   /* median time of one call */
    double copy_gbps; /* measured copy bandwidth in the same run */
    double launch_us; /* median time of the same call on a minimal input */
    double items;     /* keys or rows processed, for per-item rates (0: none) */
    double mbu;       /* median of per-repetition MBU when measured pairwise; 0: GB/s / copy */
} rt_kbench_row;

typedef struct {
    FILE *csv; /* may be NULL */
    const char *device;
    const char *only; /* run only kernels whose name contains this (NULL: all) */
} rt_kbench_out;

double rt_kbench_now(void);
/* Sorts x in place and returns its median. */
double rt_kbench_median(double *x, int n);
void rt_kbench_header(const rt_kbench_out *o);
void rt_kbench_print(const rt_kbench_out *o, const rt_kbench_row *r);
/* Parses --csv PATH, --device NAME, --only NAME; returns 0 or prints usage and returns 2. */
int rt_kbench_args(int argc, char **argv, rt_kbench_out *o, const char *default_device);
int rt_kbench_selected(const rt_kbench_out *o, const char *kernel);

#endif
