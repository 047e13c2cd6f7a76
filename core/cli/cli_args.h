/* Option parsing shared by the scenario commands. */
#ifndef RT_CLI_ARGS_H
#define RT_CLI_ARGS_H

/* Consumes "--set k=v", "-s k=v" or "--set=k=v" at argv[*i] into SETS. Returns 1 when
 * consumed, 0 when argv[*i] is not a --set, -1 (message printed) on a missing value. */
int rt_cli_take_set(int argc, char **argv, int *i, const char **sets, int *n_sets, int max_sets);

#endif
