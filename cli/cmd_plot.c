/* rectwin plot KIND ...: rooflines, scaling, breakdowns, predicted-vs-measured bars and
 * timelines, drawn by gnuplot (plot_gnuplot.c). Each kind is one rt_plot_kind (plot_kind.h);
 * adding one is a file and a row in the table below. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "atomic_file.h"
#include "cli_args.h"
#include "commands.h"
#include "plot_kind.h"

enum { EXIT_USAGE = 2, MAX_PIXELS = 10000 };

static const rt_plot_kind *const kinds[] = {&rt_plot_roofline,
                                            &rt_plot_bwroofline,
                                            &rt_plot_scaling,
                                            &rt_plot_breakdown,
                                            &rt_plot_compare,
                                            &rt_plot_timeline,
                                            NULL};

/* The options of every kind, then those a kind adds (bit i of rt_plot_kind.options names
 * extra_options[i]). */
static const char *const common_options[] = {"-o", "--out", "--size", "--help", NULL};
static const char *const extra_options[] = {"--measured", "--by", "--ranks", NULL};

static void usage(FILE *f)
{
    fprintf(f, "usage: rectwin plot KIND INPUT... [-o FILE.png|FILE.svg|FILE.pdf] [options]\n"
               "\n"
               "Draws a plot with gnuplot. The format follows the extension (default KIND.png).\n"
               "Next to the image go its gnuplot script FILE.gp and data files FILE.*.dat:\n"
               "restyle the script and redraw with 'gnuplot FILE.gp' in that directory.\n"
               "\nkinds:\n");
    for (int i = 0; kinds[i]; i++)
        fprintf(f, "  %-11s%s\n", kinds[i]->name, kinds[i]->summary);
    fprintf(f, "\noptions:\n"
               "  -o, --out FILE   the image: .png, .svg or .pdf (default KIND.png)\n"
               "  --size WxH       image size in pixels (pdf: 100 per inch)\n"
               "  --measured DIR   roofline, bwroofline: measured points from DIR as well\n"
               "  --by COL[,COL]   scaling, breakdown: the sweep columns that name a line or bar\n"
               "  --ranks N        timeline: the first N ranks (default 8)\n"
               "\n'rectwin plot KIND --help' tells what a kind reads and draws.\n"
               "\nexamples, one per kind:\n");
    for (int i = 0; kinds[i]; i++)
        fprintf(f, "  %s\n", kinds[i]->example);
}

static void kind_usage(const rt_plot_kind *k, FILE *f)
{
    fprintf(f, "usage: rectwin plot %s %s [-o FILE.png|FILE.svg|FILE.pdf] [--size WxH]\n\n%s\n\n",
            k->name, k->args, k->summary);
    fprintf(f, "%s\n\nexample:\n  %s\n", k->help, k->example);
}

typedef struct plot_cli {
    const rt_plot_kind *kind;
    rt_plot_args a;
    const char *out;
    int width, height, size_given;
} plot_cli;

static int parse_size(plot_cli *c, const char *v)
{
    char *end;
    long w = strtol(v, &end, 10), h = *end == 'x' ? strtol(end + 1, &end, 10) : 0;
    if (*end || w < 100 || h < 100 || w > MAX_PIXELS || h > MAX_PIXELS) {
        fprintf(stderr, "rectwin plot: --size '%s': expected WxH pixels, each in [100, %d]\n", v,
                MAX_PIXELS);
        return -1;
    }
    c->width = (int)w;
    c->height = (int)h;
    c->size_given = 1;
    return 0;
}

static int parse_ranks(plot_cli *c, const char *v)
{
    char *end;
    errno = 0;
    long n = strtol(v, &end, 10);
    if (*end || end == v || errno || n < 1 || n > 4096) {
        fprintf(stderr, "rectwin plot: --ranks '%s': expected an integer in [1, 4096]\n", v);
        return -1;
    }
    c->a.ranks = n;
    return 0;
}

/* The option NAME (with "--name=value" or "--name value") at argv[*i]: its value in *VALUE.
 * 1 when argv[*i] is NAME, 0 when it is not, -1 when the value is missing. */
static int take(int argc, char **argv, int *i, const char *name, const char **value)
{
    const char *a = argv[*i];
    size_t n = strlen(name);
    if (strncmp(a, name, n)) return 0;
    if (a[n] == '=') {
        *value = a + n + 1;
        return 1;
    }
    if (a[n]) return 0;
    if (*i + 1 >= argc) {
        fprintf(stderr, "rectwin plot: %s needs a value\n", name);
        return -1;
    }
    *value = argv[++*i];
    return 1;
}

static void unknown_option(const plot_cli *c, const char *got)
{
    const char *allowed[16];
    int n = 0;
    for (int i = 0; common_options[i]; i++)
        allowed[n++] = common_options[i];
    for (int i = 0; extra_options[i]; i++)
        if (c->kind->options & (1u << i)) allowed[n++] = extra_options[i];
    allowed[n] = NULL;
    char who[64];
    snprintf(who, sizeof who, "rectwin plot %s", c->kind->name);
    rt_cli_unknown(who, "option", got, allowed);
}

/* Applies the kind-specific option EXTRA (an index into extra_options) with value V. */
static int apply_extra(plot_cli *c, int extra, const char *v)
{
    if (!(c->kind->options & (1u << extra))) {
        fprintf(stderr, "rectwin plot %s: %s is not an option of this kind (see --help)\n",
                c->kind->name, extra_options[extra]);
        return -1;
    }
    if (extra == 0) c->a.measured = v;
    if (extra == 1) c->a.by = v;
    return extra == 2 ? parse_ranks(c, v) : 0;
}

/* One option at argv[*i]: 1 taken, 0 not an option, -1 bad. */
static int parse_option(plot_cli *c, int argc, char **argv, int *i)
{
    const char *v = NULL;
    int t = take(argc, argv, i, "-o", &v);
    if (!t) t = take(argc, argv, i, "--out", &v);
    if (t) return t < 0 ? -1 : (c->out = v, 1);
    if ((t = take(argc, argv, i, "--size", &v))) return t < 0 || parse_size(c, v) ? -1 : 1;
    for (int e = 0; extra_options[e]; e++)
        if ((t = take(argc, argv, i, extra_options[e], &v)))
            return t < 0 || apply_extra(c, e, v) ? -1 : 1;
    return 0;
}

static int parse_inputs(plot_cli *c, int argc, char **argv)
{
    for (int i = 2; i < argc; i++) {
        const char *s = argv[i];
        if (!strcmp(s, "--help") || !strcmp(s, "-h")) {
            kind_usage(c->kind, stdout);
            return 0;
        }
        int t = parse_option(c, argc, argv, &i);
        if (t < 0) return EXIT_USAGE;
        if (t) continue;
        if (s[0] == '-' && s[1]) {
            unknown_option(c, s);
            return EXIT_USAGE;
        }
        if (c->a.n_inputs == c->kind->max_inputs) {
            fprintf(stderr, "rectwin plot %s: unexpected argument '%s'\n", c->kind->name, s);
            return EXIT_USAGE;
        }
        c->a.input[c->a.n_inputs++] = s;
    }
    if (c->a.n_inputs >= c->kind->min_inputs) return -1;
    fprintf(stderr, "rectwin plot %s: missing input\n", c->kind->name);
    kind_usage(c->kind, stderr);
    return EXIT_USAGE;
}

/* Returns -1 to go on, else the exit status (0 after --help, 2 on bad usage). */
static int parse_args(int argc, char **argv, plot_cli *c)
{
    memset(c, 0, sizeof *c);
    if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
        usage(argc < 2 ? stderr : stdout);
        return argc < 2 ? EXIT_USAGE : 0;
    }
    const char *names[sizeof kinds / sizeof kinds[0]];
    int n = 0;
    for (; kinds[n]; n++) {
        names[n] = kinds[n]->name;
        if (!strcmp(argv[1], kinds[n]->name)) c->kind = kinds[n];
    }
    names[n] = NULL;
    if (!c->kind) {
        rt_cli_unknown("rectwin plot", "kind", argv[1], names);
        return EXIT_USAGE;
    }
    c->width = c->kind->width;
    c->height = c->kind->height;
    return parse_inputs(c, argc, argv);
}

/* The command line for the script's first comment, arguments with odd characters quoted. */
static char *command_line(int argc, char **argv)
{
    size_t n = 16;
    for (int i = 0; i < argc; i++)
        n += 2 * strlen(argv[i]) + 3;
    char *s = malloc(n), *w = s;
    if (!s) return NULL;
    w += sprintf(w, "rectwin");
    for (int i = 0; i < argc; i++) {
        int quote = !*argv[i] || strpbrk(argv[i], " \t'\"$`\\*?;&|<>()[]{}!#~") != NULL;
        *w++ = ' ';
        if (quote) *w++ = '\'';
        for (const char *c = argv[i]; *c; c++) {
            if (quote && *c == '\'')
                w += sprintf(w, "'\\''");
            else
                *w++ = *c;
        }
        if (quote) *w++ = '\'';
    }
    *w = '\0';
    return s;
}

static int make_parent(const char *image)
{
    const char *slash = strrchr(image, '/');
    if (!slash || slash == image) return 0;
    char *dir = strndup(image, (size_t)(slash - image));
    int rc = dir ? rt_mkdir_p(dir) : -1;
    if (rc)
        fprintf(stderr, "rectwin plot: cannot create the directory of '%s': %s\n", image,
                strerror(errno));
    free(dir);
    return rc;
}

static int plot(const plot_cli *c, const char *out, const char *command)
{
    rt_plot p;
    int rc = 1;
    if (make_parent(out) == 0 &&
        rt_plot_open(&p, out, c->width, c->height, c->size_given, command, stderr) == 0) {
        if (c->kind->draw(&c->a, &p, stderr) == 0 && rt_plot_finish(&p, NULL) == 0) {
            printf("wrote %s (gnuplot script %s/%s.gp, data %s.*.dat)\n", out, p.dir, p.stem,
                   p.stem);
            rc = 0;
        }
        rt_plot_free(&p);
    }
    return rc;
}

int rt_cmd_plot(int argc, char **argv)
{
    plot_cli c;
    int rc = parse_args(argc, argv, &c);
    if (rc >= 0) return rc;
    char def[64];
    snprintf(def, sizeof def, "%s.png", c.kind->name);
    const char *out = c.out ? c.out : def;
    if (rt_plot_format_of(out) < 0) {
        fprintf(stderr, "rectwin plot: '%s': the image must end in .png, .svg or .pdf\n", out);
        return EXIT_USAGE;
    }
    char *command = command_line(argc, argv);
    if (!command) {
        fprintf(stderr, "rectwin plot: out of memory\n");
        return 1;
    }
    rc = plot(&c, out, command);
    free(command);
    return rc;
}
