#include "json_read.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cfg.h"
#include "input_file.h"

static void report_parse_error(struct fy_diag *diag, const char *path, FILE *err)
{
    void *it = NULL;
    struct fy_diag_error *e = fy_diag_errors_iterate(diag, &it);
    if (!e || !e->msg || e->line <= 0) {
        fprintf(err, "%s: not valid JSON\n", path);
        return;
    }
    size_t n = strlen(e->msg);
    while (n > 0 && (e->msg[n - 1] == '\n' || e->msg[n - 1] == '\r'))
        n--;
    fprintf(err, "%s:%d:%d: not valid JSON: %.*s\n", path, e->line, e->column > 0 ? e->column : 1,
            (int)n, e->msg);
}

void rt_jread_close(rt_jread *j)
{
    if (j->doc) fy_parse_document_destroy(j->parser, j->doc);
    if (j->parser) fy_parser_destroy(j->parser);
    if (j->diag) fy_diag_destroy(j->diag);
    memset(j, 0, sizeof *j);
}

static int parser_create(rt_jread *j)
{
    struct fy_diag_cfg dcfg;
    fy_diag_cfg_default(&dcfg);
    dcfg.colorize = false;
    j->diag = fy_diag_create(&dcfg);
    if (!j->diag) return -1;
    fy_diag_set_collect_errors(j->diag, true);
    /* JSON mode is forced: the name need not end in .json, and YAML-only syntax (comments,
     * unquoted strings, several documents) is an error rather than silently accepted. */
    struct fy_parse_cfg pcfg = {.flags = FYPCF_QUIET | FYPCF_COLLECT_DIAG | FYPCF_JSON_FORCE,
                                .diag = j->diag};
    j->parser = fy_parser_create(&pcfg);
    return j->parser ? 0 : -1;
}

/* Exactly one JSON value: the parser would otherwise stop after the first and ignore the rest
 * of the file. */
static int load_one(rt_jread *j, const char *path, FILE *f, FILE *err)
{
    size_t len = 0;
    char *text = rt_input_slurp(f, &len);
    if (!text) {
        fprintf(err, "%s: cannot read\n", path);
        return -1;
    }
    /* The same guard as the scenario loader's: libfyaml 0.7.12 crashes on some bytes. */
    if (rt_cfg_guard(text, len, path, 0, err) ||
        fy_parser_set_malloc_string(j->parser, text, len) != 0) {
        free(text);
        return -1;
    }
    j->doc = fy_parse_load_document(j->parser);
    struct fy_document *extra = j->doc ? fy_parse_load_document(j->parser) : NULL;
    if (extra) fy_parse_document_destroy(j->parser, extra);
    if (!j->doc || extra || fy_parser_get_stream_error(j->parser)) {
        report_parse_error(j->diag, path, err);
        return -1;
    }
    return 0;
}

int rt_jread_open(rt_jread *j, const char *path, FILE *err)
{
    memset(j, 0, sizeof *j);
    FILE *f = rt_input_open(path, err);
    if (!f) return -1;
    int rc = parser_create(j);
    if (rc) fprintf(err, "%s: out of memory\n", path);
    if (!rc) rc = load_one(j, path, f, err);
    fclose(f);
    if (rc) rt_jread_close(j);
    return rc;
}

void rt_jread_location(const char *path, struct fy_node *node, FILE *err)
{
    while (node && fy_node_get_type(node) != FYNT_SCALAR) {
        void *it = NULL;
        if (fy_node_get_type(node) == FYNT_MAPPING) {
            struct fy_node_pair *p = fy_node_mapping_iterate(node, &it);
            node = p ? fy_node_pair_key(p) : NULL;
        } else {
            node = fy_node_sequence_iterate(node, &it);
        }
    }
    struct fy_token *t = node ? fy_node_get_scalar_token(node) : NULL;
    const struct fy_mark *m = t ? fy_token_start_mark(t) : NULL;
    if (m)
        fprintf(err, "%s:%d:%d: ", path, m->line + 1, m->column + 1);
    else
        fprintf(err, "%s: ", path);
}

const char *rt_jread_scalar(struct fy_node *node, char *buf, size_t size)
{
    size_t len = 0;
    const char *s =
        node && fy_node_get_type(node) == FYNT_SCALAR ? fy_node_get_scalar(node, &len) : NULL;
    if (!s || len + 1 > size) return NULL;
    memcpy(buf, s, len);
    buf[len] = '\0';
    return buf;
}

int rt_jread_number(struct fy_node *node, double *out)
{
    char buf[64];
    if (!node || fy_node_get_style(node) != FYNS_PLAIN || !rt_jread_scalar(node, buf, sizeof buf))
        return -1;
    if (!strcmp(buf, "null")) {
        *out = NAN;
        return 0;
    }
    char *end;
    double x = strtod(buf, &end); /* an underflow to a denormal or 0 is still a number */
    if (end == buf || *end || !isfinite(x)) return -1;
    *out = x;
    return 0;
}

struct fy_node *rt_jread_pair_location(struct fy_node_pair *p)
{
    struct fy_node *v = fy_node_pair_value(p);
    return v && fy_node_get_type(v) == FYNT_SCALAR ? v : fy_node_pair_key(p);
}
