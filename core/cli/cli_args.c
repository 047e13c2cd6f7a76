#include "cli_args.h"

#include <stdio.h>
#include <string.h>

int rt_cli_take_set(int argc, char **argv, int *i, const char **sets, int *n_sets, int max_sets)
{
    const char *a = argv[*i];
    const char *v = NULL;
    if (strcmp(a, "--set") == 0 || strcmp(a, "-s") == 0) {
        if (*i + 1 >= argc) {
            fprintf(stderr, "rectwin: %s needs a path.to.key=value argument\n", a);
            return -1;
        }
        v = argv[++*i];
    } else if (strncmp(a, "--set=", 6) == 0) {
        v = a + 6;
    } else {
        return 0;
    }
    if (*n_sets >= max_sets) {
        fprintf(stderr, "rectwin: at most %d --set overrides\n", max_sets);
        return -1;
    }
    sets[(*n_sets)++] = v;
    return 1;
}
