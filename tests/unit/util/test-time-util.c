/* SPDX-License-Identifier: Apache-2.0 */
#include <criterion/criterion.h>

#include "util/time-util.h"

Test(time_util, rfc3339_roundtrip)
{
        char s[64];
        usec_t t = 0;

        cr_assert_eq(parse_rfc3339("2026-11-30T01:02:03Z", &t), 0);
        cr_assert_eq(format_rfc3339(t, s, sizeof(s)), 0);
        cr_assert_str_eq(s, "2026-11-30T01:02:03Z");
}

Test(time_util, rfc3339_fraction_and_offset)
{
        usec_t a = 0, b = 0;

        cr_assert_eq(parse_rfc3339("2026-11-30T01:02:03.5Z", &a), 0);
        cr_assert_eq(parse_rfc3339("2026-11-30T02:02:03.5+01:00", &b), 0);
        cr_assert_eq(a, b);
        cr_assert_eq(a % USEC_PER_SEC, 500000ULL);
        cr_assert_eq(parse_rfc3339("2026-11-30 01:02:03Z", &a), -EINVAL);
        cr_assert_eq(parse_rfc3339("2026-11-30T01:02:03", &a), -EINVAL);
}

Test(time_util, micro_time)
{
        char b[40];

        cr_assert_eq(format_micro_time(1700000000123456ULL, b, sizeof(b)), 0);
        cr_assert_str_eq(b, "2023-11-14T22:13:20.123456Z");
        cr_assert_eq(format_micro_time(1, b, 10), -ENOBUFS);
        cr_assert_eq(format_rfc3339(1700000000123456ULL, b, sizeof(b)), 0);
        cr_assert_str_eq(b, "2023-11-14T22:13:20Z");
}
