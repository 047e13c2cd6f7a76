#include "json.h"

#include <math.h>
#include <stdlib.h>

/* Deeper documents than this are a programming error; writing stops nesting there rather than
 * overrunning first[] (the output is then malformed, which the caller's tests would catch). */
enum { RT_JSON_MAX_DEPTH = (int)(sizeof(((rt_json *)0)->first) / sizeof(int)) - 1 };

void rt_json_init(rt_json *j, FILE *f, int pretty)
{
    j->f = f;
    j->depth = 0;
    j->first[0] = 1;
    j->pretty = pretty;
}

static void newline_indent(rt_json *j)
{
    if (!j->pretty) return;
    fputc('\n', j->f);
    for (int i = 0; i < j->depth; i++)
        fputs("  ", j->f);
}

static void write_string(FILE *f, const char *s)
{
    fputc('"', f);
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        switch (*p) {
        case '"':
            fputs("\\\"", f);
            break;
        case '\\':
            fputs("\\\\", f);
            break;
        case '\n':
            fputs("\\n", f);
            break;
        case '\r':
            fputs("\\r", f);
            break;
        case '\t':
            fputs("\\t", f);
            break;
        case '\b':
            fputs("\\b", f);
            break;
        case '\f':
            fputs("\\f", f);
            break;
        default:
            if (*p < 0x20)
                fprintf(f, "\\u%04x", *p);
            else
                fputc(*p, f);
        }
    }
    fputc('"', f);
}

/* Separator, indentation and "key": before every value. */
static void begin_value(rt_json *j, const char *key)
{
    if (!j->first[j->depth]) fputc(',', j->f);
    if (j->depth > 0) newline_indent(j);
    j->first[j->depth] = 0;
    if (key) {
        write_string(j->f, key);
        fputs(j->pretty ? ": " : ":", j->f);
    }
}

static void open_container(rt_json *j, const char *key, char c)
{
    begin_value(j, key);
    fputc(c, j->f);
    if (j->depth < RT_JSON_MAX_DEPTH) j->depth++;
    j->first[j->depth] = 1;
}

static void close_container(rt_json *j, char c)
{
    int empty = j->first[j->depth];
    if (j->depth > 0) j->depth--;
    if (!empty) newline_indent(j);
    fputc(c, j->f);
}

void rt_json_begin_object(rt_json *j, const char *key)
{
    open_container(j, key, '{');
}
void rt_json_end_object(rt_json *j)
{
    close_container(j, '}');
}
void rt_json_begin_array(rt_json *j, const char *key)
{
    open_container(j, key, '[');
}
void rt_json_end_array(rt_json *j)
{
    close_container(j, ']');
}

void rt_json_string(rt_json *j, const char *key, const char *value)
{
    begin_value(j, key);
    if (value)
        write_string(j->f, value);
    else
        fputs("null", j->f);
}

/* Shortest of %.15g / %.17g that reads back to the same double: readable and exact. */
void rt_json_number(rt_json *j, const char *key, double value)
{
    begin_value(j, key);
    if (!isfinite(value)) {
        fputs("null", j->f);
        return;
    }
    char buf[40];
    snprintf(buf, sizeof buf, "%.15g", value);
    if (strtod(buf, NULL) != value) snprintf(buf, sizeof buf, "%.17g", value);
    fputs(buf, j->f);
}

void rt_json_int(rt_json *j, const char *key, long long value)
{
    begin_value(j, key);
    fprintf(j->f, "%lld", value);
}

void rt_json_bool(rt_json *j, const char *key, int value)
{
    begin_value(j, key);
    fputs(value ? "true" : "false", j->f);
}

void rt_json_raw(rt_json *j, const char *key, const char *raw_json)
{
    begin_value(j, key);
    fputs(raw_json && *raw_json ? raw_json : "null", j->f);
}

void rt_json_finish(rt_json *j)
{
    fputc('\n', j->f);
}
