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

/* Optimal string alignment distance (Levenshtein plus adjacent transposition), which is
 * what a typo in an option usually is. */
static size_t edit_distance(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b);
    if (la > 63 || lb > 63) return (size_t)-1;
    size_t d[64][64];
    for (size_t i = 0; i <= la; i++)
        d[i][0] = i;
    for (size_t j = 0; j <= lb; j++)
        d[0][j] = j;
    for (size_t i = 1; i <= la; i++) {
        for (size_t j = 1; j <= lb; j++) {
            size_t cost = a[i - 1] != b[j - 1];
            size_t best = d[i - 1][j - 1] + cost;
            if (d[i - 1][j] + 1 < best) best = d[i - 1][j] + 1;
            if (d[i][j - 1] + 1 < best) best = d[i][j - 1] + 1;
            if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] &&
                d[i - 2][j - 2] + 1 < best)
                best = d[i - 2][j - 2] + 1;
            d[i][j] = best;
        }
    }
    return d[la][lb];
}

const char *rt_cli_closest(const char *got, const char *const *allowed)
{
    const char *best = NULL;
    size_t best_d = (size_t)-1;
    for (int i = 0; allowed[i]; i++) {
        size_t d = edit_distance(got, allowed[i]);
        if (d < best_d) {
            best_d = d;
            best = allowed[i];
        }
    }
    size_t len = strlen(got);
    size_t limit = len / 3 > 2 ? len / 3 : 2;
    return best && best_d <= limit ? best : NULL;
}

void rt_cli_unknown(const char *who, const char *what, const char *got, const char *const *allowed)
{
    const char *near = rt_cli_closest(got, allowed);
    fprintf(stderr, "%s: unknown %s '%s'", who, what, got);
    if (near) fprintf(stderr, "; did you mean '%s'?", near);
    fprintf(stderr, " (allowed:");
    for (int i = 0; allowed[i]; i++)
        fprintf(stderr, " %s", allowed[i]);
    fputs(")\n", stderr);
}
