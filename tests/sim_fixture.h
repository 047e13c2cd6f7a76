/* What the engine tests share (tests/test_faults.c, test_simgrid_settings.c,
 * test_simgrid_concurrency.c, test_ecmp.c, test_fabric.c, test_fabric_pods.c): a small platform
 * whose times can be computed by hand, AlltoAllv graphs with chosen pair bytes, and one run of
 * an engine over them; the platform XML as text. */
#ifndef RT_TEST_SIM_FIXTURE_H
#define RT_TEST_SIM_FIXTURE_H

#include "graph.h"
#include "simgrid_settings.h"
#include "topology.h"

/* NODES nodes of 2 devices on an NVSwitch (100e9 B/s per direction, 10 us device to device),
 * one 25e9 B/s NIC per device on its rail (rail-optimized, PXN; NIC 0.2 us, switch 0.1 us,
 * radix 64, one level, no oversubscription), PCIe 50e9 B/s, efficiencies 1, base latency 1 us,
 * 1e12 FLOP/s and 1e12 B/s per device. Tests change what they study afterwards. */
void rt_fx_topology(rt_topology *t, const char *name, int nodes);

/* Fail unless |GOT - WANT| <= TOL (absolute) or <= REL x |WANT| (relative), naming the
 * caller's line. */
#define rt_fx_assert_near(got, want, tol) rt_fx_assert_near_at(got, want, tol, __FILE__, __LINE__)
#define rt_fx_assert_rel(got, want, rel) rt_fx_assert_rel_at(got, want, rel, __FILE__, __LINE__)
void rt_fx_assert_near_at(double got, double want, double tol, const char *file, int line);
void rt_fx_assert_rel_at(double got, double want, double rel, const char *file, int line);

/* WORLD ranks, every one a representative, and one direct AlltoAllv over all of them with no
 * bytes yet; *OP is the collective's index. */
rt_graph *rt_fx_alltoallv(int world, int *op);
/* Adds BYTES from rank SRC to rank DST to the AlltoAllv OP (both sides' arrays and totals). */
void rt_fx_send(rt_graph *g, int op, int src, int dst, double bytes);

/* rt_fx_alltoallv with N flows of BYTES each, from SRC[i] to DST[i]. */
rt_graph *rt_fx_flows(int world, const int *src, const int *dst, int n, double bytes);

struct rt_platform;
/* The sum of the route latencies of the platform's path from device SRC to device DST. */
double rt_fx_path_latency(const struct rt_platform *p, int src, int dst);
/* The platform XML rt_platform_write_xml writes for P (with device-pair routes when PAIRS), as
 * a malloc'ed string the caller frees; fails the test if writing fails. */
char *rt_fx_platform_xml(const struct rt_platform *p, const rt_topology *t, int pairs);

/* Runs G on T under ENGINE ("simgrid" with the default settings and flow granularity FLOWS,
 * RT_SG_FLOWS_AUTO being the default) and returns the longest member duration; frees G. */
double rt_fx_run(const rt_topology *t, rt_graph *g, const char *engine, rt_sg_flows flows);

#endif
