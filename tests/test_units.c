/* Units parse exactly as SimGrid platform files write them, and nothing else parses. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "units.h"

static double ok(const char *text, rt_unit_kind kind)
{
    double v = -1;
    const char *msg = NULL;
    if (rt_units_parse(text, kind, &v, &msg)) fail_msg("'%s' rejected: %s", text, msg);
    return v;
}

/* Unit factors multiply in floating point: 600 x 1e-9 need not be the literal 600e-9. */
static int near(double a, double b)
{
    return fabs(a - b) <= 1e-12 * fabs(b);
}

static void rejected(const char *text, rt_unit_kind kind, const char *why)
{
    double v = 0;
    const char *msg = NULL;
    assert_int_equal(rt_units_parse(text, kind, &v, &msg), -1);
    assert_non_null(msg);
    assert_string_equal(msg, why);
}

static void bandwidth(void **state)
{
    (void)state;
    assert_true(near(ok("450GBps", RT_UNIT_BANDWIDTH), 450e9));
    assert_true(near(ok("400Gbps", RT_UNIT_BANDWIDTH), 50e9));
    assert_true(near(ok("3.35TBps", RT_UNIT_BANDWIDTH), 3.35e12));
    assert_true(near(ok("1GiBps", RT_UNIT_BANDWIDTH), 1073741824.0));
    assert_true(near(ok("8bps", RT_UNIT_BANDWIDTH), 1.0));
}

static void time_flops_bytes(void **state)
{
    (void)state;
    assert_true(near(ok("2us", RT_UNIT_TIME), 2e-6));
    assert_true(near(ok("600ns", RT_UNIT_TIME), 600e-9));
    assert_true(near(ok("1.5ms", RT_UNIT_TIME), 1.5e-3));
    assert_true(near(ok("989.4Tf", RT_UNIT_FLOPS), 989.4e12));
    assert_true(near(ok("80GiB", RT_UNIT_BYTES), 80.0 * 1073741824.0));
    assert_true(near(ok("80GB", RT_UNIT_BYTES), 80e9));
}

static void strict(void **state)
{
    (void)state;
    rejected("400", RT_UNIT_BANDWIDTH, "missing unit");
    rejected("400Gbs", RT_UNIT_BANDWIDTH, "unknown unit");
    rejected("400gbps", RT_UNIT_BANDWIDTH, "unknown unit");
    rejected("2us", RT_UNIT_BANDWIDTH, "unknown unit"); /* a time is not a bandwidth */
    rejected("GBps", RT_UNIT_BANDWIDTH, "expected a number followed by a unit");
    rejected("infGBps", RT_UNIT_BANDWIDTH, "expected a number followed by a unit");
    rejected("0x10GBps", RT_UNIT_BANDWIDTH, "expected a plain decimal number followed by a unit");
    rejected("-1us", RT_UNIT_TIME, "must not be negative");
    rejected("2 us", RT_UNIT_TIME, "unknown unit");
}

static void sizes(void **state)
{
    (void)state;
    double v = 0;
    const char *msg;
    assert_int_equal(rt_units_parse_size("1048576", &v, &msg), 0);
    assert_true(v == 1048576.0);
    assert_int_equal(rt_units_parse_size("1GiB", &v, &msg), 0);
    assert_true(v == 1073741824.0);
    assert_int_equal(rt_units_parse_size("-5", &v, &msg), -1);
    assert_int_equal(rt_units_parse_size("", &v, &msg), -1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(bandwidth),
                                       cmocka_unit_test(time_flops_bytes), cmocka_unit_test(strict),
                                       cmocka_unit_test(sizes)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
