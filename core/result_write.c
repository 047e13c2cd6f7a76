/* summary.json, ops.csv and trace.json of a result. The files are written to temporary files
 * first and renamed into place only when all are complete; manifest.json (core/manifest.h),
 * removed before the renames and written after them, marks a complete set, so readers can tell
 * a set an interrupted run left mixed. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "atomic_file.h"
#include "cleanup.h"
#include "json.h"
#include "manifest.h"
#include "result.h"

enum { RT_N_OWN = 3 }; /* summary, ops, trace; the engine's own files follow */

static int exact_mode(const rt_graph *g)
{
    return g->n_reps == g->world;
}

static void write_scenario(rt_json *j, const rt_result *r, const rt_scenario *s)
{
    const rt_graph *g = r->graph;
    rt_json_string(j, "scenario", s ? s->name : NULL);
    rt_json_string(j, "model", s ? s->model.name : NULL);
    rt_json_string(j, "topology", s ? s->topology.name : NULL);
    rt_json_int(j, "nodes", s ? s->topology.nodes : 0);
    rt_json_int(j, "ranks", g->world);
    rt_json_string(j, "plan", s ? s->plan.name : NULL);
    rt_json_begin_object(j, "workload");
    rt_json_int(j, "batch_per_rank", s ? s->workload.batch_per_rank : 0);
    char seed[24]; /* uint64 seeds beyond 2^63 stay exact as raw digits */
    snprintf(seed, sizeof seed, "%llu", s ? (unsigned long long)s->workload.seed : 0ULL);
    rt_json_raw(j, "seed", seed);
    rt_json_string(j, "mode", exact_mode(g) ? "exact" : "statistical");
    rt_json_int(j, "reps", g->n_reps);
    rt_json_end_object(j);
}

/* The hardware the result was computed for: plots draw its ceilings (rooflines) from here,
 * since the topology file alone misses the run's --set overrides. */
static void write_hardware(rt_json *j, const rt_scenario *s)
{
    const rt_topology *t = &s->topology;
    rt_json_begin_object(j, "hardware");
    rt_json_string(j, "device", t->device.name);
    rt_json_begin_object(j, "peak_flops");
    for (int d = 0; d < RT_DT_COUNT; d++)
        if (t->device.peak_flops[d] > 0)
            rt_json_number(j, rt_dtype_names[d], t->device.peak_flops[d]);
    rt_json_end_object(j);
    rt_json_number(j, "hbm_bw", t->device.hbm_bw);
    rt_json_number(j, "launch_overhead_s", t->device.launch_overhead);
    rt_json_int(j, "devices_per_node", t->node.devices);
    rt_json_number(j, "scale_up_bw", t->node.scale_up_bw);
    rt_json_number(j, "nic_bw_per_device", rt_topology_nic_bw_per_device(t));
    rt_json_number(j, "collective_latency_s", t->coll.base_latency);
    rt_json_end_object(j);
}

/* A collective's bus bandwidth needs its group size, and whether the group leaves the node
 * decides its ceiling; ops.csv has neither. One entry per collective op of the graph. */
static void write_collective_groups(rt_json *j, const rt_graph *g)
{
    rt_json_begin_array(j, "collective_groups");
    for (int op = 0; op < g->n_ops; op++) {
        const rt_op *o = &g->ops[op];
        if (o->type != RT_OP_COLLECTIVE) continue;
        rt_json_begin_object(j, NULL);
        rt_json_int(j, "op", op);
        rt_json_int(j, "size", o->group.size);
        rt_json_int(j, "stride", o->group.stride);
        rt_json_end_object(j);
    }
    rt_json_end_array(j);
}

static void write_summary(FILE *f, const rt_result *r, const rt_scenario *s)
{
    rt_json j;
    rt_json_init(&j, f, 1);
    rt_json_begin_object(&j, NULL);
    write_scenario(&j, r, s);
    rt_json_number(&j, "iteration_time_s", r->iteration_time_s);
    rt_json_number(&j, "samples_per_s", r->samples_per_s);
    rt_json_number(&j, "mfu", r->mfu);
    rt_json_number(&j, "mbu", r->mbu);
    rt_json_number(&j, "mbu_sparse", r->mbu_sparse);
    rt_json_number(&j, "comm_time_s", r->comm_time_s);
    rt_json_number(&j, "exposed_comm_s", r->exposed_comm_s);
    rt_json_number(&j, "peak_hbm_bytes", r->peak_hbm_bytes);
    rt_json_number(&j, "hbm_capacity_bytes", s ? s->topology.device.hbm_bytes : 0);
    rt_json_bool(&j, "hbm_fits", s && r->peak_hbm_bytes <= s->topology.device.hbm_bytes);
    rt_json_begin_object(&j, "phases");
    for (int p = 0; p < r->n_phases; p++)
        rt_json_number(&j, r->graph->phases[p], r->phase_s[p]);
    rt_json_end_object(&j);
    rt_json_string(&j, "engine", r->engine);
    rt_json_raw(&j, "settings", r->settings_json);
    if (s) write_hardware(&j, s);
    write_collective_groups(&j, r->graph);
    rt_json_end_object(&j);
    rt_json_finish(&j);
}

/* CSV field: quoted only when it holds a separator, a quote or a line break. */
static void csv_field(FILE *f, const char *s)
{
    if (!s) s = "";
    if (!strpbrk(s, ",\"\n\r")) {
        fputs(s, f);
        return;
    }
    fputc('"', f);
    for (; *s; s++) {
        if (*s == '"') fputc('"', f);
        fputc(*s, f);
    }
    fputc('"', f);
}

static const char *op_type_name(const rt_op *o)
{
    return o->type == RT_OP_KERNEL ? rt_kernel_kind_names[o->kernel] : rt_coll_kind_names[o->coll];
}

static void write_ops_csv(FILE *f, const rt_result *r)
{
    const rt_graph *g = r->graph;
    fputs(r->spread ? "rank,op,name,phase,stream,type,start_s,end_s,flops,bytes,spread_s\n"
                    : "rank,op,name,phase,stream,type,start_s,end_s,flops,bytes\n",
          f);
    for (int rep = 0; rep < g->n_reps; rep++) {
        for (int op = 0; op < g->n_ops; op++) {
            const rt_op *o = &g->ops[op];
            const rt_op_cost *c = rt_graph_cost(g, op, rep);
            long k = (long)op * g->n_reps + rep;
            fprintf(f, "%d,%d,", g->rep_rank[rep], op);
            csv_field(f, o->name);
            fputc(',', f);
            csv_field(f, g->phases[o->phase]);
            fprintf(f, ",%s,%s,%.9e,%.9e,%.17g,%.17g", rt_stream_names[o->stream], op_type_name(o),
                    r->start[k], r->end[k], c->flops, c->bytes);
            if (r->spread) fprintf(f, ",%.9e", r->spread[k]);
            fputc('\n', f);
        }
    }
}

static void trace_metadata(rt_json *j, const char *what, int pid, int tid, const char *name)
{
    rt_json_begin_object(j, NULL);
    rt_json_string(j, "name", what);
    rt_json_string(j, "ph", "M");
    rt_json_int(j, "pid", pid);
    rt_json_int(j, "tid", tid);
    rt_json_begin_object(j, "args");
    rt_json_string(j, "name", name);
    rt_json_end_object(j);
    rt_json_end_object(j);
}

static void trace_event(rt_json *j, const rt_result *r, int op, int rep)
{
    const rt_graph *g = r->graph;
    const rt_op *o = &g->ops[op];
    const rt_op_cost *c = rt_graph_cost(g, op, rep);
    long k = (long)op * g->n_reps + rep;
    double dur = r->end[k] - r->start[k];
    rt_json_begin_object(j, NULL);
    rt_json_string(j, "name", o->name ? o->name : op_type_name(o));
    rt_json_string(j, "cat", g->phases[o->phase]);
    rt_json_string(j, "ph", "X");
    rt_json_int(j, "pid", g->rep_rank[rep]);
    rt_json_int(j, "tid", o->stream);
    rt_json_number(j, "ts", r->start[k] * 1e6);
    rt_json_number(j, "dur", (dur > 0 ? dur : 0) * 1e6);
    rt_json_begin_object(j, "args");
    rt_json_int(j, "op", op);
    rt_json_string(j, "type", op_type_name(o));
    rt_json_number(j, "flops", c->flops);
    rt_json_number(j, "bytes", c->bytes);
    if (o->type == RT_OP_COLLECTIVE && r->algo && r->algo[k] != RT_ALGO_AUTO)
        rt_json_string(j, "algo", rt_coll_algo_names[r->algo[k]]);
    rt_json_end_object(j);
    rt_json_end_object(j);
}

/* Chrome trace event format: one process per rank, one thread per stream, "X" events with
 * microsecond ts/dur. Perfetto and chrome://tracing open it. */
static void write_trace(FILE *f, const rt_result *r)
{
    const rt_graph *g = r->graph;
    rt_json j;
    rt_json_init(&j, f, 0);
    rt_json_begin_object(&j, NULL);
    rt_json_string(&j, "displayTimeUnit", "ms");
    rt_json_begin_array(&j, "traceEvents");
    for (int rep = 0; rep < g->n_reps; rep++) {
        char name[32];
        int pid = g->rep_rank[rep];
        snprintf(name, sizeof name, "rank %d", pid);
        trace_metadata(&j, "process_name", pid, 0, name);
        for (int st = 0; st < RT_STREAM_COUNT; st++)
            trace_metadata(&j, "thread_name", pid, st, rt_stream_names[st]);
        for (int op = 0; op < g->n_ops; op++)
            trace_event(&j, r, op, rep);
    }
    rt_json_end_array(&j);
    rt_json_end_object(&j);
    rt_json_finish(&j);
}

/* Writes the N_OUT files NAMES of R through FILES (both sized by the caller). */
static int write_set(const rt_result *r, const rt_scenario *s, const char *dir, const char **names,
                     rt_atomic_file *files, int n_out, FILE *err)
{
    names[0] = "summary.json", names[1] = "ops.csv", names[2] = "trace.json";
    for (int i = 0; i < r->n_files; i++)
        names[RT_N_OWN + i] = r->files[i].name;
    if (rt_mkdir_p(dir) < 0) {
        fprintf(err, "cannot create directory '%s': %s\n", dir, strerror(errno));
        return -1;
    }
    rt_cleanup_stale(dir); /* temporaries of runs that were killed before they could clean up */
    int opened = 0, rc = 0;
    for (; opened < n_out && rc == 0; opened++) {
        char *path = rt_path_join(dir, names[opened]);
        rc = path ? rt_atomic_open(&files[opened], path) : -1;
        if (rc < 0) fprintf(err, "cannot write '%s': %s\n", path ? path : dir, strerror(errno));
        free(path);
    }
    if (rc < 0) opened--; /* the failed one cleaned up after itself */
    if (rc == 0) {
        write_summary(files[0].f, r, s);
        write_ops_csv(files[1].f, r);
        write_trace(files[2].f, r);
        for (int i = 0; i < r->n_files; i++)
            fputs(r->files[i].text, files[RT_N_OWN + i].f);
    }
    int closed = 0;
    for (; rc == 0 && closed < n_out; closed++) {
        if (rt_atomic_close(&files[closed]) < 0) {
            fprintf(err, "cannot write '%s/%s' (disk full?)\n", dir, names[closed]);
            rc = -1;
        }
    }
    if (rc < 0) {
        for (int i = 0; i < opened; i++)
            rt_atomic_abort(&files[i]);
        return -1;
    }
    /* The one rename failure that can be foreseen (a directory in the way) must not leave
     * the other files renamed: check all targets before renaming any. */
    for (int i = 0; i < n_out; i++) {
        struct stat st;
        if (stat(files[i].path, &st) == 0 && S_ISDIR(st.st_mode)) {
            fprintf(err, "cannot write '%s': it is a directory\n", files[i].path);
            for (int k = 0; k < n_out; k++)
                rt_atomic_abort(&files[k]);
            return -1;
        }
    }
    /* The set is published as a whole: the old manifest goes before any file changes, the new
     * one comes after every file is in place, so readers never take a mixed set. */
    if (rt_manifest_retract(dir, err) < 0) {
        for (int k = 0; k < n_out; k++)
            rt_atomic_abort(&files[k]);
        return -1;
    }
    for (int i = 0; i < n_out; i++) {
        if (rt_atomic_rename(&files[i]) < 0) {
            fprintf(err, "cannot rename into '%s/%s': %s\n", dir, names[i], strerror(errno));
            rc = -1;
        }
    }
    return rc ? rc : rt_manifest_write(dir, names, n_out, err);
}

int rt_result_write(const rt_result *r, const rt_scenario *s, const char *dir, FILE *err)
{
    int n_out = RT_N_OWN + r->n_files;
    const char **names = calloc((size_t)n_out, sizeof *names);
    rt_atomic_file *files = calloc((size_t)n_out, sizeof *files);
    int rc = names && files ? write_set(r, s, dir, names, files, n_out, err) : -1;
    if (!names || !files) fprintf(err, "cannot write '%s': out of memory\n", dir);
    free(names);
    free(files);
    return rc;
}
