/* Minimal streaming JSON writer with correct string escaping and finite-number checks. */
#ifndef RT_JSON_H
#define RT_JSON_H

#include <stdio.h>

typedef struct rt_json {
    FILE *f;
    int depth;
    int first[64]; /* per nesting level: no element written yet */
    int pretty;
} rt_json;

void rt_json_init(rt_json *j, FILE *f, int pretty);
void rt_json_begin_object(rt_json *j, const char *key); /* key NULL inside arrays / at top */
void rt_json_end_object(rt_json *j);
void rt_json_begin_array(rt_json *j, const char *key);
void rt_json_end_array(rt_json *j);
void rt_json_string(rt_json *j, const char *key, const char *value);
void rt_json_number(rt_json *j, const char *key, double value); /* non-finite -> null */
void rt_json_int(rt_json *j, const char *key, long long value);
void rt_json_bool(rt_json *j, const char *key, int value);
void rt_json_raw(rt_json *j, const char *key, const char *raw_json);
/* Ends the document with a newline. */
void rt_json_finish(rt_json *j);

#endif
