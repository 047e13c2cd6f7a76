/* A plot as gnuplot draws it: the script STEM.gp and its data files STEM.NAME.dat written
 * next to the image, so that a user can restyle and redraw it (cd DIR && gnuplot STEM.gp);
 * then gnuplot run as a child process into a temporary image that is renamed into place only
 * when gnuplot succeeded. Every file goes through a temporary name (core/atomic_file.h). */
#ifndef RT_PLOT_GNUPLOT_H
#define RT_PLOT_GNUPLOT_H

#include <stddef.h>
#include <stdio.h>

#include "atomic_file.h"

typedef enum { RT_PLOT_PNG, RT_PLOT_SVG, RT_PLOT_PDF, RT_PLOT_FORMAT_COUNT } rt_plot_format;

enum { RT_PLOT_MAX_DATA = 8 };

typedef struct rt_plot {
    char *image; /* the path as given */
    char *dir;   /* its directory: gnuplot runs there and the script names files relative to it */
    char *stem;  /* its file name without the extension */
    rt_plot_format format;
    int width, height; /* pixels (pdf: 100 per inch); a kind may change them until it takes
                          the script with rt_plot_script */
    int size_given;    /* the user chose the size: kinds keep it */
    char *command;     /* the command line, for the script's first comment */
    rt_atomic_file script;
    FILE *gp; /* the script once its header is written (rt_plot_script) */
    int n_data;
    rt_atomic_file data[RT_PLOT_MAX_DATA];
    FILE *err;
} rt_plot;

/* The format named by IMAGE's extension (.png, .svg, .pdf), or -1. */
int rt_plot_format_of(const char *image);

/* Starts the plot IMAGE of WIDTH x HEIGHT pixels (SIZE_GIVEN: chosen by the user) by
 * opening its script; COMMAND is recorded in it. 0, or -1 with a message on ERR. */
int rt_plot_open(rt_plot *p, const char *image, int width, int height, int size_given,
                 const char *command, FILE *err);

/* The script, its header (terminal at the plot's size, output, COMMAND) written on the first
 * call: the kind writes the body with it. */
FILE *rt_plot_script(rt_plot *p);

/* Opens the data file STEM.NAME.dat; FILE receives its name as the script writes it (a quoted
 * gnuplot string). NULL (message printed) on failure or when the plot has RT_PLOT_MAX_DATA
 * files already. */
FILE *rt_plot_data(rt_plot *p, const char *name, char *file, size_t size);

/* Publishes the data files and the script, then runs GNUPLOT (NULL: "gnuplot" from PATH) on
 * the script and renames the image into place. 0, or -1 with a message: the script and data
 * stay, so a missing gnuplot leaves everything needed to draw the image later. */
int rt_plot_finish(rt_plot *p, const char *gnuplot);

/* Removes whatever rt_plot_finish did not publish and frees P. */
void rt_plot_free(rt_plot *p);

/* S as a gnuplot single-quoted string ('' for a quote; control characters become spaces). */
void rt_plot_string(FILE *f, const char *s);
/* The same into BUF (SIZE >= 3), truncated to fit; returns BUF. */
const char *rt_plot_quote(char *buf, size_t size, const char *s);
/* S as a double-quoted field of a data file (quotes and control characters become '_'). */
void rt_plot_field(FILE *f, const char *s);

#endif
