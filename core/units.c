#include "units.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    const char *suffix;
    double factor;
} unit_entry;

/* Decimal prefixes are powers of 1000, binary ones powers of 1024, bits are 1/8 byte:
 * the conventions of SimGrid's platform files. */
static const unit_entry bandwidth_units[] = {{"Bps", 1.0},
                                             {"kBps", 1e3},
                                             {"KBps", 1e3},
                                             {"MBps", 1e6},
                                             {"GBps", 1e9},
                                             {"TBps", 1e12},
                                             {"KiBps", 1024.0},
                                             {"MiBps", 1048576.0},
                                             {"GiBps", 1073741824.0},
                                             {"TiBps", 1099511627776.0},
                                             {"bps", 0.125},
                                             {"kbps", 125.0},
                                             {"Kbps", 125.0},
                                             {"Mbps", 1.25e5},
                                             {"Gbps", 1.25e8},
                                             {"Tbps", 1.25e11},
                                             {NULL, 0}};
static const unit_entry time_units[] = {{"s", 1.0},    {"ms", 1e-3}, {"us", 1e-6},  {"ns", 1e-9},
                                        {"ps", 1e-12}, {"m", 60.0},  {"h", 3600.0}, {NULL, 0}};
static const unit_entry flops_units[] = {{"f", 1.0},   {"kf", 1e3},  {"Mf", 1e6},  {"Gf", 1e9},
                                         {"Tf", 1e12}, {"Pf", 1e15}, {"Ef", 1e18}, {NULL, 0}};
static const unit_entry bytes_units[] = {{"B", 1.0},
                                         {"kB", 1e3},
                                         {"KB", 1e3},
                                         {"MB", 1e6},
                                         {"GB", 1e9},
                                         {"TB", 1e12},
                                         {"KiB", 1024.0},
                                         {"MiB", 1048576.0},
                                         {"GiB", 1073741824.0},
                                         {"TiB", 1099511627776.0},
                                         {"b", 0.125},
                                         {"kb", 125.0},
                                         {"Mb", 1.25e5},
                                         {"Gb", 1.25e8},
                                         {NULL, 0}};

static const unit_entry *table_of(rt_unit_kind kind)
{
    switch (kind) {
    case RT_UNIT_BANDWIDTH:
        return bandwidth_units;
    case RT_UNIT_TIME:
        return time_units;
    case RT_UNIT_FLOPS:
        return flops_units;
    case RT_UNIT_BYTES:
        return bytes_units;
    default:
        return NULL;
    }
}

const char *rt_units_allowed(rt_unit_kind kind)
{
    switch (kind) {
    case RT_UNIT_BANDWIDTH:
        return "Bps, kBps, MBps, GBps, TBps, KiBps, MiBps, GiBps, TiBps, bps, kbps, Mbps, Gbps, "
               "Tbps";
    case RT_UNIT_TIME:
        return "s, ms, us, ns, ps, m, h";
    case RT_UNIT_FLOPS:
        return "f, kf, Mf, Gf, Tf, Pf, Ef";
    case RT_UNIT_BYTES:
        return "B, kB, MB, GB, TB, KiB, MiB, GiB, TiB, b, kb, Mb, Gb";
    default:
        return "";
    }
}

int rt_units_parse(const char *text, rt_unit_kind kind, double *out, const char **msg)
{
    const unit_entry *table = table_of(kind);
    if (!text || !table) {
        if (msg) *msg = "no value";
        return -1;
    }
    errno = 0;
    char *end = NULL;
    double v = strtod(text, &end);
    if (end == text || errno == ERANGE || !isfinite(v)) {
        if (msg) *msg = "expected a number followed by a unit";
        return -1;
    }
    /* strtod accepts "inf", "nan" and hex floats; a unit value must be a plain decimal. */
    for (const char *p = text; p < end; p++) {
        if (!strchr("0123456789.eE+-", *p)) {
            if (msg) *msg = "expected a plain decimal number followed by a unit";
            return -1;
        }
    }
    if (*end == '\0') {
        if (msg) *msg = "missing unit";
        return -1;
    }
    for (const unit_entry *u = table; u->suffix; u++) {
        if (strcmp(end, u->suffix) == 0) {
            if (v < 0) {
                if (msg) *msg = "must not be negative";
                return -1;
            }
            *out = v * u->factor;
            return 0;
        }
    }
    if (msg) *msg = "unknown unit";
    return -1;
}

/* Beyond 2^60 bytes (an exbibyte) no collective or buffer is meaningful, and doubles stop
 * counting bytes exactly long before 1e21. */
static int check_size(double v, const char **msg)
{
    if (v >= 0 && v <= 0x1p60) return 0;
    if (msg) *msg = "out of range; allowed: 0 to 1 EiB (2^60 bytes)";
    return -1;
}

int rt_units_parse_size(const char *text, double *out, const char **msg)
{
    if (!text || !*text) {
        if (msg) *msg = "empty size";
        return -1;
    }
    /* strtoull skips blanks and wraps negative numbers around: only digits are a count. */
    if (text[0] >= '0' && text[0] <= '9') {
        char *end = NULL;
        errno = 0;
        unsigned long long v = strtoull(text, &end, 10);
        if (*end == '\0' && errno == 0) {
            *out = (double)v;
            return check_size(*out, msg);
        }
    }
    if (rt_units_parse(text, RT_UNIT_BYTES, out, msg) < 0) return -1;
    return check_size(*out, msg);
}
