#include "dynamic.h"

#include <math.h>

double rt_dyn_initial_slots(double keys, double load_factor)
{
    double slots = 16;
    while (keys > load_factor * slots)
        slots *= 2;
    return slots;
}

rt_dyn_run rt_dyn_simulate(const rt_dyn_spec *spec, double keys0, double new_per_iter,
                           int iterations)
{
    rt_dyn_run run = {.keys0 = keys0, .slots0 = rt_dyn_initial_slots(keys0, spec->load_factor)};
    double live = keys0, slots = run.slots0, load_sum = 0, grow = 0;
    run.rows_handed = keys0;
    int n = iterations > 0 ? iterations : 1;
    for (int i = 0; i < n; i++) {
        load_sum += live / slots; /* the batch probes at the load it finds */
        live += new_per_iter;
        while (live > spec->load_factor * slots) {
            grow += RT_DYN_SLOT_BYTES * (slots + 2 * slots); /* read the old, write the new */
            slots *= 2;
            run.grows++;
        }
        if (live > run.rows_handed) run.rows_handed = live;
        if (spec->eviction != RT_EVICT_NONE && live > (double)spec->capacity) {
            run.live_evict += live;
            run.evicted += live - (double)spec->capacity;
            live = (double)spec->capacity;
        } else if (spec->eviction != RT_EVICT_NONE) {
            run.live_evict += live;
        }
    }
    run.load = load_sum / n;
    run.grow_bytes = grow / n;
    run.live_evict /= n;
    run.evicted /= n;
    run.keys_end = live;
    run.slots_end = slots;
    double chunk = (double)spec->chunk_rows;
    run.chunks_end = run.rows_handed > 0 ? floor((run.rows_handed - 1) / chunk) + 2 : 2;
    return run;
}

double rt_dyn_probes_hit(double a)
{
    return a > 1e-12 ? -log1p(-a) / a : 1.0;
}

double rt_dyn_probes_miss(double a)
{
    return 1.0 / (1.0 - a);
}

double rt_dyn_memory(const rt_dyn_spec *spec, const rt_dyn_run *run, double value_bytes)
{
    double keys = spec->offload == RT_OFFLOAD_KEYS ? 0 : run->slots_end * RT_DYN_SLOT_BYTES;
    double rows = run->chunks_end * (double)spec->chunk_rows;
    double values =
        spec->offload == RT_OFFLOAD_VALUES ? 0 : rows * (value_bytes + RT_DYN_META_BYTES);
    return keys + values;
}
