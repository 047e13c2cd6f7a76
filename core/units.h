/* Strict unit parsing in the style of SimGrid platform files ("450GBps", "2us", "989Tf").
 * An unknown or missing unit is an error, never a guess. */
#ifndef RT_UNITS_H
#define RT_UNITS_H

typedef enum {
    RT_UNIT_BANDWIDTH, /* bytes per second: Bps kBps MBps GBps TBps KiBps MiBps GiBps, bps kbps Mbps
                          Gbps Tbps */
    RT_UNIT_TIME,      /* seconds: s ms us ns ps m h */
    RT_UNIT_FLOPS,     /* FLOP/s: f kf Mf Gf Tf Pf Ef */
    RT_UNIT_BYTES,     /* bytes: B kB MB GB TB KiB MiB GiB TiB, and bits: b kb Mb Gb */
    RT_UNIT_COUNT
} rt_unit_kind;

/* Parses TEXT as a number followed by a unit of KIND. Returns 0 and sets *OUT (in base units:
 * bytes, seconds, FLOP/s, bytes per second) on success. On failure returns -1 and, when MSG
 * is not NULL, points it at a static string that says what was wrong and what is allowed. */
int rt_units_parse(const char *text, rt_unit_kind kind, double *out, const char **msg);

/* The units of KIND as a comma-separated list, for error messages. */
const char *rt_units_allowed(rt_unit_kind kind);

/* Parses a byte size for the CLI: a plain integer means bytes, otherwise a RT_UNIT_BYTES unit. */
int rt_units_parse_size(const char *text, double *out, const char **msg);

#endif
