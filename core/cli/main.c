/* rectwin: one scenario description, simulated or executed. */
#include <stdio.h>
#include <string.h>

#include "cleanup.h"
#include "commands.h"

static void usage(FILE *f)
{
    fprintf(f, "usage: rectwin COMMAND [options]\n"
               "\n"
               "commands:\n"
               "  plan SCENARIO        model cost and op-graph summary of a scenario\n"
               "  sim SCENARIO         predict one training iteration (summary.json, ops.csv, "
               "trace.json)\n"
               "  collective           predict one collective as nccl-tests reports it\n"
               "  platform TOPOLOGY    write the SimGrid platform of a topology (XML)\n"
               "  partition            Tower Partitioner: features into balanced towers (sptt)\n"
               "  compare PRED MEAS    predicted against measured results: metrics, phases, ops\n"
               "\n"
               "Every scenario key can be overridden: --set path.to.key=value (repeatable).\n"
               "Run 'rectwin COMMAND --help' for a command's options.\n");
}

int main(int argc, char **argv)
{
    rt_cleanup_install(); /* an interrupted run removes its temporary files and child */
    if (argc < 2) {
        usage(stderr);
        return 2;
    }
    const char *cmd = argv[1];
    if (!strcmp(cmd, "--help") || !strcmp(cmd, "-h") || !strcmp(cmd, "help")) {
        usage(stdout);
        return 0;
    }
    if (!strcmp(cmd, "--version")) {
        printf("rectwin 0.1\n");
        return 0;
    }
    if (!strcmp(cmd, "plan")) return rt_cmd_plan(argc - 1, argv + 1);
    if (!strcmp(cmd, "sim")) return rt_cmd_sim(argc - 1, argv + 1);
    if (!strcmp(cmd, "collective")) return rt_cmd_collective(argc - 1, argv + 1);
    if (!strcmp(cmd, "platform")) return rt_cmd_platform(argc - 1, argv + 1);
    if (!strcmp(cmd, "partition")) return rt_cmd_partition(argc - 1, argv + 1);
    if (!strcmp(cmd, "compare")) return rt_cmd_compare(argc - 1, argv + 1);
    fprintf(stderr,
            "rectwin: unknown command '%s'; allowed: plan, sim, collective, platform, partition, "
            "compare\n",
            cmd);
    return 2;
}
