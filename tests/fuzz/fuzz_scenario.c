/* Fuzz target: the scenario loader. One input is a scenario file, a model file, a topology file
 * and --set lines, separated by RT_FUZZ_SEP lines (see corpus/scenario/ for seeds). The
 * scenario names the other two as m.yaml and t.yaml beside it. Every input must either load
 * or be refused with a message: a crash, hang, leak or sanitizer report is a finding. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_input.h"
#include "scenario.h"
#include "simgrid_settings.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

enum { MAX_SET_LEN = 4096 };

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    rt_fuzz_segments seg;
    rt_fuzz_split(data, size, &seg);
    static const char *const files[] = {"s.yaml", "m.yaml", "t.yaml"};
    char path[3][512];
    for (int i = 0; i < 3; i++)
        rt_fuzz_write(files[i], i < seg.n ? seg.at[i] : "", i < seg.n ? seg.len[i] : 0, path[i],
                      sizeof path[i]);
    /* --set arrives from argv, so NUL-terminated: a NUL inside a segment ends that line. */
    static char sets_buf[RT_FUZZ_MAX_SEGMENTS][MAX_SET_LEN];
    const char *sets[RT_FUZZ_MAX_SEGMENTS];
    int n_sets = 0;
    for (int i = 3; i < seg.n; i++) {
        size_t n = seg.len[i] < MAX_SET_LEN - 1 ? seg.len[i] : MAX_SET_LEN - 1;
        memcpy(sets_buf[n_sets], seg.at[i], n);
        sets_buf[n_sets][n] = '\0';
        sets[n_sets] = sets_buf[n_sets];
        n_sets++;
    }
    rt_scenario *s = rt_scenario_load(path[0], sets, n_sets, rt_fuzz_devnull());
    if (s && rt_scenario_ranks(s) < 1) abort(); /* a loaded scenario has at least one rank */
    /* The simgrid engine parses its `simgrid:` sections itself, when it runs: so does this. */
    rt_simgrid_settings sg;
    if (s) (void)rt_simgrid_settings_load(&s->topology, &sg);
    rt_scenario_free(s);
    return 0;
}
