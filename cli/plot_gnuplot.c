#include "plot_gnuplot.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cleanup.h"

static const char *const extensions[RT_PLOT_FORMAT_COUNT] = {".png", ".svg", ".pdf"};

/* Cairo terminals: antialiased, and the same fonts in all three formats. */
static const char *const terminals[RT_PLOT_FORMAT_COUNT] = {"pngcairo", "svg", "pdfcairo"};

int rt_plot_format_of(const char *image)
{
    size_t n = strlen(image);
    for (int f = 0; f < RT_PLOT_FORMAT_COUNT; f++) {
        size_t e = strlen(extensions[f]);
        if (n > e && !strcasecmp(image + n - e, extensions[f]) && image[n - e - 1] != '/') return f;
    }
    return -1;
}

void rt_plot_string(FILE *f, const char *s)
{
    fputc('\'', f);
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '\'') fputc('\'', f);
        fputc(c < 0x20 || c == 0x7f ? ' ' : c, f);
    }
    fputc('\'', f);
}

const char *rt_plot_quote(char *buf, size_t size, const char *s)
{
    size_t w = 0;
    buf[w++] = '\'';
    for (; *s && w + 3 < size; s++) {
        if (*s == '\'') buf[w++] = '\'';
        buf[w++] = (unsigned char)*s < 0x20 ? ' ' : *s;
    }
    buf[w++] = '\'';
    buf[w] = '\0';
    return buf;
}

void rt_plot_field(FILE *f, const char *s)
{
    fputc('"', f);
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        fputc(c < 0x20 || c == 0x7f || c == '"' || c == '\\' ? '_' : c, f);
    }
    fputc('"', f);
}

/* DIR and STEM of IMAGE: "a/b/x.png" -> "a/b", "x"; "x.png" -> ".", "x". */
static int split_path(rt_plot *p, const char *image)
{
    const char *slash = strrchr(image, '/');
    const char *name = slash ? slash + 1 : image;
    size_t dir_len = slash ? (size_t)(slash - image) : 0;
    p->dir = slash ? strndup(image, dir_len ? dir_len : 1) : strdup(".");
    p->stem = strndup(name, strlen(name) - strlen(extensions[p->format]));
    p->image = strdup(image);
    return p->dir && p->stem && p->image ? 0 : -1;
}

static char *in_dir(const rt_plot *p, const char *suffix)
{
    size_t n = strlen(p->stem) + strlen(suffix) + 1;
    char *name = malloc(n);
    if (!name) return NULL;
    snprintf(name, n, "%s%s", p->stem, suffix);
    char *path = rt_path_join(p->dir, name);
    free(name);
    return path;
}

FILE *rt_plot_script(rt_plot *p)
{
    if (p->gp) return p->gp;
    FILE *f = p->gp = p->script.f;
    fprintf(f, "# Drawn by: ");
    for (const char *c = p->command; *c; c++)
        fputc(*c == '\n' || *c == '\r' ? ' ' : *c, f);
    fprintf(f,
            "\n# Restyle this file and redraw from its directory: gnuplot %s.gp\n"
            "# (the data files %s.*.dat are read from there).\n",
            p->stem, p->stem);
    fprintf(f, "if (!exists(\"outfile\")) outfile = ");
    const char *slash = strrchr(p->image, '/');
    rt_plot_string(f, slash ? slash + 1 : p->image);
    double w = p->width, h = p->height;
    if (p->format == RT_PLOT_PDF)
        fprintf(f, "\nset terminal %s size %.2fin,%.2fin", terminals[p->format], w / 100, h / 100);
    else
        fprintf(f, "\nset terminal %s size %d,%d", terminals[p->format], p->width, p->height);
    /* noenhanced: op and scenario names are full of '_' and '^', which enhanced text would
     * turn into subscripts and superscripts. */
    fprintf(f, " noenhanced font 'Sans,10'%s\n",
            p->format == RT_PLOT_SVG ? " background '#ffffff'" : "");
    fprintf(f, "set output outfile\nset encoding utf8\n\n");
    return f;
}

int rt_plot_open(rt_plot *p, const char *image, int width, int height, int size_given,
                 const char *command, FILE *err)
{
    memset(p, 0, sizeof *p);
    p->err = err;
    p->script.cleanup = -1;
    int format = rt_plot_format_of(image);
    if (format < 0) {
        fprintf(err, "rectwin plot: '%s': the image must end in .png, .svg or .pdf\n", image);
        return -1;
    }
    for (const char *c = image; *c; c++)
        if ((unsigned char)*c < 0x20) {
            /* It would have to go into gnuplot commands, where a line break ends one. */
            fprintf(err, "rectwin plot: the image name has a control character\n");
            return -1;
        }
    p->format = (rt_plot_format)format;
    p->width = width;
    p->height = height;
    p->size_given = size_given;
    p->command = strdup(command);
    if (!p->command || split_path(p, image)) {
        fprintf(err, "rectwin plot: out of memory\n");
        return -1;
    }
    char *script = in_dir(p, ".gp");
    int rc = script ? rt_atomic_open(&p->script, script) : -1;
    if (rc) fprintf(err, "rectwin plot: cannot write '%s.gp': %s\n", p->stem, strerror(errno));
    free(script);
    return rc;
}

FILE *rt_plot_data(rt_plot *p, const char *name, char *file, size_t size)
{
    if (p->n_data == RT_PLOT_MAX_DATA) {
        fprintf(p->err, "rectwin plot: too many data files\n");
        return NULL;
    }
    char base[4096];
    snprintf(base, sizeof base, "%s.%s.dat", p->stem, name);
    char *path = rt_path_join(p->dir, base);
    rt_plot_quote(file, size, base);
    rt_atomic_file *a = &p->data[p->n_data];
    if (!path || rt_atomic_open(a, path)) {
        fprintf(p->err, "rectwin plot: cannot write '%s': %s\n", path ? path : base,
                strerror(errno));
        free(path);
        return NULL;
    }
    free(path);
    p->n_data++;
    return a->f;
}

/* The data files first: the script that reads them appears only once they are complete. */
static int publish(rt_plot *p)
{
    fprintf(rt_plot_script(p), "\nunset output\n");
    p->gp = NULL;
    for (int i = 0; i < p->n_data; i++)
        if (rt_atomic_commit(&p->data[i])) {
            fprintf(p->err, "rectwin plot: cannot write the data files of %s (disk full?)\n",
                    p->image);
            return -1;
        }
    if (rt_atomic_commit(&p->script)) {
        fprintf(p->err, "rectwin plot: cannot write %s/%s.gp (disk full?)\n", p->dir, p->stem);
        return -1;
    }
    return 0;
}

/* NAME's full path when an executable regular file of that name is on PATH, else NULL. */
static char *find_on_path(const char *name)
{
    if (strchr(name, '/')) return access(name, X_OK) == 0 ? strdup(name) : NULL;
    const char *path = getenv("PATH");
    if (!path || !*path) return NULL;
    for (const char *d = path; d;) {
        const char *colon = strchr(d, ':');
        size_t len = colon ? (size_t)(colon - d) : strlen(d);
        char dir[4096];
        snprintf(dir, sizeof dir, "%.*s", (int)len, len ? d : ".");
        char *full = rt_path_join(dir, name);
        struct stat st;
        if (full && stat(full, &st) == 0 && S_ISREG(st.st_mode) && access(full, X_OK) == 0)
            return full;
        free(full);
        d = colon ? colon + 1 : NULL;
    }
    return NULL;
}

/* In the child: from the plot's directory, with no terminal input to wait for. */
static void exec_child(const rt_plot *p, const char *gnuplot, char *const argv[])
{
    int null = open("/dev/null", O_RDONLY);
    if (null >= 0) dup2(null, STDIN_FILENO);
    if (chdir(p->dir) != 0) {
        fprintf(stderr, "rectwin plot: cannot enter '%s': %s\n", p->dir, strerror(errno));
        _exit(126);
    }
    execv(gnuplot, argv);
    fprintf(stderr, "rectwin plot: cannot run '%s': %s\n", gnuplot, strerror(errno));
    _exit(127);
}

/* Runs GNUPLOT on the script with outfile set to TMP (a name in the plot's directory).
 * Returns its exit status, or -1 when it could not be started or was killed. */
static int run_gnuplot(const rt_plot *p, const char *gnuplot, const char *tmp)
{
    size_t n = 2 * strlen(tmp) + 16;
    char *set = malloc(n), *script = malloc(strlen(p->stem) + 6);
    if (!set || !script) {
        free(set);
        free(script);
        return -1;
    }
    char *w = set + sprintf(set, "outfile='");
    for (const char *c = tmp; *c; c++) {
        if (*c == '\'') *w++ = '\'';
        *w++ = *c;
    }
    strcpy(w, "'");
    sprintf(script, "./%s.gp", p->stem); /* "./": a name starting with '-' is no option */
    char *argv[] = {(char *)"gnuplot", (char *)"-e", set, script, NULL};
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) exec_child(p, gnuplot, argv);
    int status = -1;
    if (pid > 0) {
        rt_cleanup_child(pid); /* Ctrl-C also stops gnuplot */
        while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
            ;
        rt_cleanup_child(0);
    }
    free(set);
    free(script);
    return pid > 0 && WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

static int nonempty(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0;
}

/* gnuplot into a temporary image, renamed into place only when gnuplot succeeded. */
static int draw(rt_plot *p, const char *gnuplot)
{
    char tmp[4096];
    snprintf(tmp, sizeof tmp, "%s%s.tmp.%ld", p->stem, extensions[p->format], (long)getpid());
    char *tmp_path = rt_path_join(p->dir, tmp);
    if (!tmp_path) return -1;
    int slot = rt_cleanup_track(tmp_path);
    int status = run_gnuplot(p, gnuplot, tmp);
    int rc = -1;
    if (status != 0)
        fprintf(p->err, "rectwin plot: gnuplot failed (%s %d) on %s/%s.gp; no image written\n",
                status < 0 ? "could not run it, status" : "exit status", status, p->dir, p->stem);
    else if (!nonempty(tmp_path))
        fprintf(p->err, "rectwin plot: gnuplot wrote no image for %s/%s.gp\n", p->dir, p->stem);
    else if (rename(tmp_path, p->image) != 0)
        fprintf(p->err, "rectwin plot: cannot rename into '%s': %s\n", p->image, strerror(errno));
    else
        rc = 0;
    if (rc) remove(tmp_path);
    rt_cleanup_forget(slot);
    free(tmp_path);
    return rc;
}

int rt_plot_finish(rt_plot *p, const char *gnuplot)
{
    if (publish(p)) return -1;
    char *path = find_on_path(gnuplot ? gnuplot : "gnuplot");
    if (!path) {
        fprintf(p->err,
                "rectwin plot: gnuplot not found on PATH; install it (Debian: apt-get install "
                "gnuplot-nox) and draw the image with: cd %s && gnuplot %s.gp\n"
                "(the script and its data files are written)\n",
                p->dir, p->stem);
        return -1;
    }
    int rc = draw(p, path);
    free(path);
    return rc;
}

void rt_plot_free(rt_plot *p)
{
    if (p->script.tmp) rt_atomic_abort(&p->script);
    for (int i = 0; i < p->n_data; i++)
        if (p->data[i].tmp) rt_atomic_abort(&p->data[i]);
    free(p->image);
    free(p->dir);
    free(p->stem);
    free(p->command);
    memset(p, 0, sizeof *p);
}
