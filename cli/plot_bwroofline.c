/* rectwin plot bwroofline: the bandwidth roofline of RecIS (seed 001, figure 3), where the
 * sparse ops that the compute roofline squeezes against its left edge are placed by bytes
 * moved per launch and the bandwidth they attain. Left: kernels against the HBM ceiling;
 * right: collectives' bus bandwidth (as nccl-tests reports it) against scale-up and scale-out
 * ceilings. A ceiling is min(peak, bytes / (bytes / peak + overhead)): launch overhead for
 * kernels, the collective base latency for collectives. */
#include <math.h>
#include <string.h>

#include "plot_kind.h"

enum { N_BLOCKS = 8 }; /* [side][panel][group]: 2 x 2 x 2 */

typedef struct bw_points {
    long count[N_BLOCKS];
    long ungrouped; /* collectives whose group summary.json does not give: world assumed */
    rt_plot_range x[2], y[2]; /* per panel */
} bw_points;

/* nccl-tests' bus bandwidth factor: what each rank's links carry per byte of the buffer. */
static double bus_factor(const char *type, int n)
{
    if (n < 2) return 0;
    if (!strcmp(type, "allreduce")) return 2.0 * (n - 1) / n;
    if (!strcmp(type, "sendrecv")) return 1;
    return (double)(n - 1) / n; /* alltoallv, allgather, reduce_scatter */
}

static const rt_summary_group *group_of(const rt_plot_side *d, const rt_plot_side *pred,
                                        const rt_op_row *r)
{
    const rt_summary_group *g = rt_summary_group_of(&d->s, r->op);
    return g ? g : rt_summary_group_of(&pred->s, r->op);
}

/* Group 0: embedding kernels or collectives inside a node; 1: dense kernels or collectives
 * across nodes. Returns -1 when the op is not drawn, else the group, with X and Y. */
static int place(const rt_plot_side *d, const rt_plot_side *pred, const rt_op_row *r, int panel,
                 double *x, double *y, long *ungrouped)
{
    if (!(r->bytes > 0) || !(r->dur > 0) || rt_plot_is_collective(r) != panel) return -1;
    *x = r->bytes;
    *y = r->bytes / r->dur;
    if (!panel) return !rt_plot_is_embedding(r);
    const rt_summary_group *g = group_of(d, pred, r);
    long size = g ? g->size : pred->s.ranks, span = g ? (long)g->size * g->stride : size;
    if (!g) (*ungrouped)++;
    *y *= bus_factor(r->type, (int)(size > 0 ? size : 1));
    if (!(*y > 0)) return -1;
    return span > pred->s.hw.devices_per_node;
}

static void write_points(FILE *f, const rt_plot_side *sd, int n_sides, bw_points *pt)
{
    static const char *const what[2][2] = {{"embedding kernels", "dense kernels"},
                                           {"collectives in a node", "collectives across nodes"}};
    for (int b = 0; b < 4 * n_sides; b++) {
        const rt_plot_side *d = &sd[b / 4];
        int panel = (b / 2) % 2, group = b % 2;
        fprintf(f, "%s# %s %s: bytes, %s\n", b ? "\n\n" : "", d->label, what[panel][group],
                panel ? "bus bandwidth (B/s)" : "bandwidth (B/s)");
        for (long i = 0; i < d->ops.n; i++) {
            double x, y;
            long ungrouped = 0;
            if (place(d, &sd[0], &d->ops.row[i], panel, &x, &y, &ungrouped) != group) continue;
            fprintf(f, "%.6g %.6g\n", x, y);
            rt_plot_range_add(&pt->x[panel], x);
            rt_plot_range_add(&pt->y[panel], y);
            pt->count[b]++;
            pt->ungrouped += ungrouped;
        }
        rt_plot_block_end(f, pt->count[b]);
    }
}

/* Ceiling curve of PEAK (a gnuplot variable) and overhead LAT, as a plot element. */
static void ceiling(FILE *gp, int *n_elems, const char *peak, const char *lat, const char *color,
                    const char *title, double value)
{
    char si[32];
    rt_plot_next(gp, n_elems);
    fprintf(gp, "roof(x, %s, %s) with lines lw 2 lc rgb '%s' title '%s %s'", peak, lat, color,
            title, rt_plot_si(value, "B/s", si, sizeof si));
}

static void write_points_plot(FILE *gp, int *n_elems, const char *file, const rt_plot_side *sd,
                              int n_sides, const bw_points *pt, int panel)
{
    static const char *const what[2][2] = {{"embedding kernels", "dense kernels"},
                                           {"in a node", "across nodes"}};
    static const char *const color[2][2] = {{"#4e79a7", "#e15759"}, {"#59a14f", "#b07aa1"}};
    static const int shape[2][2] = {{7, 5}, {6, 4}}; /* [side][group]: filled, then open */
    for (int b = 0; b < 4 * n_sides; b++) {
        if ((b / 2) % 2 != panel || !pt->count[b]) continue;
        int group = b % 2;
        rt_plot_next(gp, n_elems);
        fprintf(gp,
                "%s index %d using 1:2 with points pt %d ps 0.8 lc rgb '%s' title '%s %s (%ld)'",
                file, b, shape[b / 4][group], color[panel][group], sd[b / 4].label,
                what[panel][group], pt->count[b]);
    }
    fputc('\n', gp);
}

static void axes(FILE *gp, const char *title, const char *xlabel, const char *ylabel)
{
    fprintf(gp, "set title '%s'\nset xlabel '%s'\nset ylabel '%s'\n", title, xlabel, ylabel);
    fprintf(gp, "set logscale xy\nset grid xtics ytics mxtics mytics lc rgb '#e5e5e5'\n"
                "set format x '%%.0s %%cB'\nset format y '%%.0s %%cB/s'\n"
                "set key top left box opaque\n");
}

/* The sizes where each ceiling bends (peak x overhead) are kept in view. */
static void ranges(FILE *gp, rt_plot_range x, rt_plot_range y, const double *peak,
                   const double *lat, int n)
{
    for (int i = 0; i < n; i++) {
        rt_plot_range_add(&x, peak[i] * lat[i] * 20);
        rt_plot_range_add(&x, peak[i] * lat[i] / 20);
        rt_plot_range_add(&y, peak[i]);
        rt_plot_range_add(&y, peak[i] / 50);
    }
    rt_plot_range_log(gp, "x", x, 2);
    rt_plot_range_log(gp, "y", y, 2);
}

static void hbm_panel(FILE *gp, const char *file, const rt_plot_side *sd, int n_sides,
                      const bw_points *pt)
{
    const rt_summary_hw *hw = &sd[0].s.hw;
    axes(gp, "kernels: HBM bandwidth per launch", "bytes per launch (HBM traffic)",
         "attained bandwidth (B/s)");
    fprintf(gp, "hbm_bw = %.6g  # bytes/s\nlaunch = %.6g  # s\n", hw->hbm_bw,
            hw->launch_overhead_s);
    ranges(gp, pt->x[0], pt->y[0], &hw->hbm_bw, &hw->launch_overhead_s, 1);
    int n = 0;
    ceiling(gp, &n, "hbm_bw", "launch", "#333333", "HBM", hw->hbm_bw);
    write_points_plot(gp, &n, file, sd, n_sides, pt, 0);
}

static void coll_panel(FILE *gp, const char *file, const rt_plot_side *sd, int n_sides,
                       const bw_points *pt)
{
    const rt_summary_hw *hw = &sd[0].s.hw;
    axes(gp, "collectives: bus bandwidth per call", "message size (nccl-tests bytes)",
         "bus bandwidth (B/s)");
    fprintf(gp,
            "scale_up_bw = %.6g  # bytes/s per device\nnic_bw = %.6g  # bytes/s per device\n"
            "coll_lat = %.6g  # s\n",
            hw->scale_up_bw, hw->nic_bw_per_device, hw->collective_latency_s);
    double peak[2] = {hw->scale_up_bw, hw->nic_bw_per_device};
    double lat[2] = {hw->collective_latency_s, hw->collective_latency_s};
    ranges(gp, pt->x[1], pt->y[1], peak, lat, 2);
    int n = 0;
    ceiling(gp, &n, "scale_up_bw", "coll_lat", "#2e7d32", "scale-up", hw->scale_up_bw);
    ceiling(gp, &n, "nic_bw", "coll_lat", "#6a1b9a", "scale-out NIC", hw->nic_bw_per_device);
    write_points_plot(gp, &n, file, sd, n_sides, pt, 1);
}

static void write_plot(rt_plot *p, const rt_plot_side *sd, int n_sides, FILE *data,
                       const char *file)
{
    bw_points pt = {0};
    write_points(data, sd, n_sides, &pt);
    FILE *gp = rt_plot_script(p);
    char title[2048];
    fprintf(gp,
            "min(a, b) = a < b ? a : b\n"
            "roof(x, peak, overhead) = min(peak, x / (x / peak + overhead))\n"
            "set samples 1000\nset multiplot layout 1, 2 title %s font 'Sans,11'\n",
            rt_plot_title_text(title, sizeof title, "Bandwidth roofline", &sd[0].s,
                               n_sides > 1 ? &sd[1].s : NULL));
    hbm_panel(gp, file, sd, n_sides, &pt);
    coll_panel(gp, file, sd, n_sides, &pt);
    fprintf(gp, "unset multiplot\n");
    if (pt.ungrouped)
        fprintf(p->err,
                "rectwin plot bwroofline: %ld collective calls have no group in summary.json: "
                "their bus bandwidth assumes all ranks\n",
                pt.ungrouped);
}

static int draw(const rt_plot_args *a, rt_plot *p, FILE *err)
{
    rt_plot_side sd[2] = {{0}};
    int n = a->measured ? 2 : 1, rc = -1;
    char file[512];
    FILE *data;
    const char *who = "rectwin plot bwroofline";
    if (rt_plot_side_load(&sd[0], a->input[0], "predicted", who, err) ||
        (a->measured && rt_plot_side_load(&sd[1], a->measured, "measured", who, err))) {
    } else if (!sd[0].s.hw.present) {
        fprintf(err,
                "%s: %s/summary.json has no 'hardware' object (it was written by an older "
                "rectwin): run rectwin sim again\n",
                who, a->input[0]);
    } else if ((data = rt_plot_data(p, "ops", file, sizeof file))) {
        write_plot(p, sd, n, data, file);
        rc = 0;
    }
    rt_plot_side_free(&sd[0]);
    rt_plot_side_free(&sd[1]);
    return rc;
}

const rt_plot_kind rt_plot_bwroofline = {
    .name = "bwroofline",
    .args = "RESULT_DIR [--measured DIR]",
    .summary = "bandwidth roofline (RecIS): kernels' HBM bandwidth and collectives' busbw by size",
    .help = "Left: every kernel launch of RESULT_DIR/ops.csv at x = bytes (HBM traffic) and\n"
            "y = bytes / duration, under min(hbm_bw, x / (x / hbm_bw + launch overhead)).\n"
            "Right: every collective call at x = its nccl-tests size and y = its bus bandwidth\n"
            "(algbw x 2(n-1)/n for AllReduce, x (n-1)/n for AlltoAll, AllGather and\n"
            "ReduceScatter, n the group size), under the same ceiling for the scale-up and the\n"
            "per-device NIC bandwidth with the collective base latency. Device figures and\n"
            "groups come from summary.json. With --measured, DIR's ops too (open marks).",
    .example = "rectwin plot bwroofline results/exec-cpu/analytic --measured "
               "results/exec-cpu/exec -o bwroofline.png",
    .min_inputs = 1,
    .max_inputs = 1,
    .options = RT_PLOT_OPT_MEASURED,
    .width = 1400,
    .height = 600,
    .draw = draw,
};
