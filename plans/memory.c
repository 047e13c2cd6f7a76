#include "memory.h"

#include "overlap.h"
#include "plan_common.h"

static const double GB = 1e9;

void rt_memory_report_of(const rt_graph *g, const rt_scenario *s, const rt_workload *w,
                         rt_memory_report *m)
{
    int worst = 0;
    for (int r = 1; r < g->n_reps; r++)
        if (g->peak_hbm_bytes[r] > g->peak_hbm_bytes[worst]) worst = r;
    m->rank = g->rep_rank[worst];
    m->total = g->peak_hbm_bytes[worst];
    m->capacity = s->topology.device.hbm_bytes;
    m->weights = rt_plan_weights_memory(s);
    m->activations = rt_plan_activation_memory(s, w, worst);
    m->negatives = rt_plan_negatives_memory(s, w, worst);
    m->overlap = rt_overlap_buffer_bytes(g, s, worst);
    m->sparse = m->total - m->weights - m->activations - m->negatives - m->overlap;
}

void rt_memory_print(const rt_memory_report *m, FILE *out)
{
    fprintf(out, "  HBM per device: %.4g GB on rank %d of %.4g GB (%s)\n", m->total / GB, m->rank,
            m->capacity / GB, m->total <= m->capacity ? "fits" : "DOES NOT FIT");
    fprintf(out, "    tables, optimizer state, exchange buffers %.4g GB\n", m->sparse / GB);
    fprintf(out, "    dense weights and optimizer state         %.4g GB\n", m->weights / GB);
    fprintf(out, "    activations                               %.4g GB\n", m->activations / GB);
    fprintf(out, "    sampled-softmax negatives                 %.4g GB\n", m->negatives / GB);
    fprintf(out, "    overlap (in-flight batch)                 %.4g GB\n", m->overlap / GB);
}

int rt_memory_account(rt_graph *g, const rt_scenario *s, const rt_workload *w, FILE *err)
{
    for (int r = 0; r < g->n_reps; r++)
        g->peak_hbm_bytes[r] += rt_overlap_buffer_bytes(g, s, r);
    rt_memory_report m;
    rt_memory_report_of(g, s, w, &m);
    if (m.total <= m.capacity) return 0;
    int refuse = s->plan.memory == RT_MEMORY_REFUSE;
    fprintf(err, "%s: plan %s needs %.4g GB of HBM on rank %d but device %s has %.4g GB\n",
            refuse ? "error" : "warning", s->plan.name, m.total / GB, m.rank,
            s->topology.device.name, m.capacity / GB);
    rt_memory_print(&m, err);
    if (refuse)
        fprintf(
            err,
            "  allowed: a plan, batch or precision that fits, more devices, or plan.memory: warn "
            "to simulate it anyway\n");
    return refuse ? -1 : 0;
}
