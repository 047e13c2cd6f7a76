/* Option parsing shared by the subcommands. */
#ifndef RT_CLI_ARGS_H
#define RT_CLI_ARGS_H

/* One subcommand: its name, its positional arguments and one line of what it does for the
 * top-level usage, and its entry point (argv[0] is the subcommand name). */
typedef struct rt_cli_command {
    const char *name;
    const char *args;
    const char *summary;
    int (*run)(int argc, char **argv);
} rt_cli_command;

/* Consumes "--set k=v", "-s k=v" or "--set=k=v" at argv[*i] into SETS. Returns 1 when
 * consumed, 0 when argv[*i] is not a --set, -1 (message printed) on a missing value. */
int rt_cli_take_set(int argc, char **argv, int *i, const char **sets, int *n_sets, int max_sets);

/* Prints "WHO: unknown WHAT 'GOT'; did you mean 'X'? allowed: ..." where X is the entry of
 * the NULL-terminated ALLOWED closest to GOT by edit distance (named only when it is close). */
void rt_cli_unknown(const char *who, const char *what, const char *got, const char *const *allowed);

/* The entry of ALLOWED closest to GOT, or NULL when none is within a third of its length. */
const char *rt_cli_closest(const char *got, const char *const *allowed);

#endif
