/* The simgrid engine's settings: the topology's optional `simgrid:` section (core keeps it
 * unparsed, rt_topo_section). Defaults fit GPU fabrics: CM02 (no LV08 latency factor 13.01
 * nor bandwidth factor 0.97), a TCP-gamma window so large that gamma / (2 x latency) never
 * caps a microsecond link, no crosstraffic (RDMA has no TCP acknowledgements), and no
 * RTT-unfairness weight. */
#ifndef RT_SIMGRID_SETTINGS_H
#define RT_SIMGRID_SETTINGS_H

#include "topology.h"

typedef enum { RT_SG_CM02, RT_SG_LV08, RT_SG_MODEL_COUNT } rt_sg_model;
/* Flow granularity: one flow per (source, destination) device pair, or aggregated onto the
 * links they use (one flow per link direction and per leaf pair); auto picks pairs up to
 * pair_max_ranks ranks. */
typedef enum {
    RT_SG_FLOWS_AUTO,
    RT_SG_FLOWS_PAIRS,
    RT_SG_FLOWS_LINKS,
    RT_SG_FLOWS_COUNT
} rt_sg_flows;

/* How an algorithm with steps (the ring) becomes traffic: all steps as one round of
 * concurrent flows carrying every step's bytes (bulk), or its steps as flows that wait for
 * their predecessor's previous step (pairs mode; rounds that end together in links mode). */
typedef enum { RT_SG_STEPS_BULK, RT_SG_STEPS_STEPS, RT_SG_STEPS_COUNT } rt_sg_steps;

typedef struct rt_simgrid_settings {
    rt_sg_model model;
    double tcp_gamma; /* bytes */
    int crosstraffic;
    double weight_s;
    double bandwidth_factor;
    rt_sg_flows flows;
    int pair_max_ranks;
    int links_top; /* rows of links.csv (most loaded first) */
    rt_sg_steps collective_steps;
    int chunks; /* pipelined chunks of a step-wise collective */
} rt_simgrid_settings;

extern const char *const rt_sg_model_names[];
extern const char *const rt_sg_flows_names[];
extern const char *const rt_sg_steps_names[];

void rt_simgrid_settings_default(rt_simgrid_settings *sg);

/* The defaults, then every `simgrid:` section of T in order (the file's, then overrides).
 * Returns 0, or -1 after a located message on the section's document's error stream. */
int rt_simgrid_settings_load(const rt_topology *t, rt_simgrid_settings *sg);

#endif
