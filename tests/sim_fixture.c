#include "sim_fixture.h"

#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "engines.h"
#include "result.h"
#include "scenario.h"
#include "simgrid.h"
#include "simgrid_platform.h"

void rt_fx_topology(rt_topology *t, const char *name, int nodes)
{
    memset(t, 0, sizeof *t);
    t->name = (char *)name;
    t->device.peak_flops[RT_DT_FP32] = 1e12;
    t->device.hbm_bw = 1e12;
    t->device.eff_flops = t->device.eff_hbm = 1;
    t->node.devices = 2;
    t->node.scale_up = RT_SCALEUP_NVSWITCH;
    t->node.scale_up_bw = 100e9;
    t->node.scale_up_latency = 10e-6;
    t->node.host_bw = 50e9;
    t->net.nics_per_node = 2;
    t->net.nic_bw = 25e9;
    t->net.nic_latency = 0.2e-6;
    t->net.rail_optimized = 1;
    t->net.levels = 1;
    t->net.radix = 64;
    t->net.oversubscription = 1;
    t->net.switch_latency = 0.1e-6;
    t->coll.eff_intra = t->coll.eff_inter = 1;
    t->coll.base_latency = 1e-6;
    t->nodes = nodes;
}

void rt_fx_assert_near_at(double got, double want, double tol, const char *file, int line)
{
    if (!(fabs(got - want) <= tol)) {
        print_error("%s:%d: got %.12g, want %.12g (tolerance %.3g)\n", file, line, got, want, tol);
        fail();
    }
}

void rt_fx_assert_rel_at(double got, double want, double rel, const char *file, int line)
{
    if (!(fabs(got - want) <= rel * fabs(want))) {
        print_error("%s:%d: got %.12g, want %.12g (relative tolerance %.3g)\n", file, line, got,
                    want, rel);
        fail();
    }
}

rt_graph *rt_fx_alltoallv(int world, int *op)
{
    rt_graph *g = rt_graph_new(world, world, NULL, NULL);
    assert_non_null(g);
    *op = rt_graph_add_collective(g, "c", RT_STREAM_COMM, RT_COLL_ALLTOALLV, RT_ALGO_AUTO,
                                  (rt_group){world, 1}, "c", NULL, 0);
    for (int r = 0; r < world; r++) {
        rt_op_cost *c = rt_graph_cost(g, *op, r);
        c->send = rt_graph_peer_bytes(g, world);
        c->recv = rt_graph_peer_bytes(g, world);
    }
    return g;
}

void rt_fx_send(rt_graph *g, int op, int src, int dst, double bytes)
{
    rt_op_cost *s = rt_graph_cost(g, op, src), *d = rt_graph_cost(g, op, dst);
    s->send[dst] += (uint64_t)bytes;
    s->bytes += bytes;
    d->recv[src] += (uint64_t)bytes;
    d->recv_bytes += bytes;
}

rt_graph *rt_fx_flows(int world, const int *src, const int *dst, int n, double bytes)
{
    int op;
    rt_graph *g = rt_fx_alltoallv(world, &op);
    for (int i = 0; i < n; i++)
        rt_fx_send(g, op, src[i], dst[i], bytes);
    return g;
}

double rt_fx_path_latency(const rt_platform *p, int src, int dst)
{
    int segs[RT_PLATFORM_MAX_PATH], n = rt_platform_path(p, src, dst, segs);
    double lat = 0;
    for (int i = 0; i < n; i++)
        lat += rt_platform_segment_latency(p, segs[i]);
    return lat;
}

double rt_fx_run(const rt_topology *t, rt_graph *g, const char *engine, rt_sg_flows flows)
{
    rt_scenario s;
    memset(&s, 0, sizeof s);
    s.name = t->name;
    s.topology = *t;
    rt_result *r = rt_result_new(g, engine);
    assert_non_null(r);
    if (!strcmp(engine, "simgrid")) {
        rt_simgrid_settings sg;
        rt_simgrid_settings_default(&sg);
        sg.flows = flows;
        assert_int_equal(rt_simgrid_run(&s, g, &sg, r, stderr), 0);
    } else {
        assert_int_equal(rt_engine_find(engine)->run(&s, g, r, stderr), 0);
    }
    double d = 0;
    for (int rank = 0; rank < g->world; rank++)
        d = fmax(d, r->end[rank] - r->start[rank]);
    rt_result_free(r);
    rt_graph_free(g);
    return d;
}

char *rt_fx_platform_xml(const rt_platform *p, const rt_topology *t, int pairs)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    assert_non_null(f);
    assert_int_equal(rt_platform_write_xml(p, t, pairs, f), 0);
    assert_int_equal(fclose(f), 0);
    return buf;
}
