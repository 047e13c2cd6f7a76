/* rectwin: one scenario description, simulated or executed. */
#include <stdio.h>
#include <string.h>

#include "cleanup.h"
#include "cli_args.h"
#include "commands.h"

/* Adding a subcommand is one cmd_NAME.c and one row here. */
static const rt_cli_command commands[] = {
    {"plan", "SCENARIO", "model cost and op-graph summary of a scenario", rt_cmd_plan},
    {"sim", "SCENARIO", "predict one training iteration (summary.json, ops.csv, trace.json)",
     rt_cmd_sim},
    {"collective", "", "predict one collective as nccl-tests reports it", rt_cmd_collective},
    {"platform", "TOPOLOGY", "write the SimGrid platform of a topology (XML)", rt_cmd_platform},
    {"partition", "", "Tower Partitioner: features into balanced towers (sptt)", rt_cmd_partition},
    {"compare", "PRED MEAS", "predicted against measured results: metrics, phases, ops",
     rt_cmd_compare},
    {"plot", "KIND ...", "draw rooflines, scaling, breakdowns, timelines (gnuplot)", rt_cmd_plot},
    {"sweep", "SWEEP.yaml", "a scenario over a grid of keys: one CSV row per point, resumable",
     rt_cmd_sweep},
    {"calibrate", "", "measure this machine's curves into a topology file (under mpirun)",
     rt_cmd_calibrate},
    {NULL, NULL, NULL, NULL},
};

static void usage(FILE *f)
{
    fprintf(f, "usage: rectwin COMMAND [options]\n\ncommands:\n");
    for (const rt_cli_command *c = commands; c->name; c++) {
        char head[64];
        snprintf(head, sizeof head, "%s %s", c->name, c->args);
        fprintf(f, "  %-21s%s\n", head, c->summary);
    }
    fprintf(f, "\nEvery scenario key can be overridden: --set path.to.key=value (repeatable).\n"
               "Run 'rectwin COMMAND --help' for a command's options and an example.\n");
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
    const char *names[sizeof commands / sizeof commands[0]];
    int n = 0;
    for (const rt_cli_command *c = commands; c->name; c++) {
        if (!strcmp(cmd, c->name)) return c->run(argc - 1, argv + 1);
        names[n++] = c->name;
    }
    names[n] = NULL;
    rt_cli_unknown("rectwin", "command", cmd, names);
    return 2;
}
