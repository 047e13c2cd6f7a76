/* Opening the result files and sweep tables that the readers take: they come from other
 * programs and other machines, so a wrong path is told apart from a bad file. */
#ifndef RT_INPUT_FILE_H
#define RT_INPUT_FILE_H

#include <stddef.h>
#include <stdio.h>

/* PATH opened for reading when it is a regular file; NULL with "PATH: why" on ERR. */
FILE *rt_input_open(const char *path, FILE *err);

/* The rest of F in a new NUL-terminated buffer of *LEN bytes; NULL on a read error or when
 * out of memory. */
char *rt_input_slurp(FILE *f, size_t *len);

#endif
