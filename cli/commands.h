/* Subcommands of the rectwin CLI. Each takes the arguments after its name (argv[0] is the
 * subcommand name) and returns the process exit status. */
#ifndef RT_CLI_COMMANDS_H
#define RT_CLI_COMMANDS_H

int rt_cmd_plan(int argc, char **argv);
int rt_cmd_sim(int argc, char **argv);
int rt_cmd_collective(int argc, char **argv);
int rt_cmd_platform(int argc, char **argv);
int rt_cmd_partition(int argc, char **argv);
int rt_cmd_compare(int argc, char **argv);
int rt_cmd_plot(int argc, char **argv);
int rt_cmd_sweep(int argc, char **argv);
int rt_cmd_calibrate(int argc, char **argv);

#endif
