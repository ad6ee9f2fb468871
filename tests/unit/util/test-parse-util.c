/* SPDX-License-Identifier: Apache-2.0 */
#include <criterion/criterion.h>

#include "util/parse-util.h"

Test(parse_util, u64)
{
        uint64_t v = 0;

        cr_assert_eq(safe_atou64("18446744073709551615", &v), 0);
        cr_assert_eq(v, UINT64_MAX);
        cr_assert_eq(safe_atou64("18446744073709551616", &v), -ERANGE);
        cr_assert_eq(safe_atou64("-1", &v), -EINVAL);
        cr_assert_eq(safe_atou64(" 1", &v), -EINVAL);
        cr_assert_eq(safe_atou64("1x", &v), -EINVAL);
        cr_assert_eq(safe_atou64("", &v), -EINVAL);
}

Test(parse_util, i32_range)
{
        int32_t v = 0;

        cr_assert_eq(safe_atoi32("-2147483648", &v), 0);
        cr_assert_eq(v, INT32_MIN);
        cr_assert_eq(safe_atoi32("2147483648", &v), -ERANGE);
}

Test(parse_util, boolean)
{
        bool b = false;

        cr_assert_eq(parse_boolean("TRUE", &b), 0);
        cr_assert(b);
        cr_assert_eq(parse_boolean("off", &b), 0);
        cr_assert(!b);
        cr_assert_eq(parse_boolean("maybe", &b), -EINVAL);
}

Test(parse_util, duration)
{
        uint64_t u = 0;

        cr_assert_eq(parse_duration_usec("10s", &u), 0);
        cr_assert_eq(u, 10000000ULL);
        cr_assert_eq(parse_duration_usec("800ms", &u), 0);
        cr_assert_eq(u, 800000ULL);
        cr_assert_eq(parse_duration_usec("2m", &u), 0);
        cr_assert_eq(u, 120000000ULL);
        cr_assert_eq(parse_duration_usec("15", &u), 0);
        cr_assert_eq(u, 15000000ULL);
        cr_assert_eq(parse_duration_usec("5d", &u), -EINVAL);
        cr_assert_eq(parse_duration_usec("s", &u), -EINVAL);
}

Test(parse_util, go_durations)
{
        uint64_t u = 0;

        cr_assert_eq(parse_go_duration_usec("24h", &u), 0);
        cr_assert_eq(u, 24ULL * 3600 * 1000000ULL);
        cr_assert_eq(parse_go_duration_usec("1h30m", &u), 0);
        cr_assert_eq(u, 5400ULL * 1000000ULL);
        cr_assert_eq(parse_go_duration_usec("1.5s", &u), 0);
        cr_assert_eq(u, 1500 * 1000ULL);
        cr_assert_eq(parse_go_duration_usec("250ms", &u), 0);
        cr_assert_eq(u, 250 * 1000ULL);
        cr_assert_eq(parse_go_duration_usec("0", &u), 0);
        cr_assert_eq(parse_go_duration_usec("10", &u), -EINVAL, "a unit is required");
        cr_assert_eq(parse_go_duration_usec("-1s", &u), -EINVAL);
        cr_assert_eq(parse_go_duration_usec("1d", &u), -EINVAL);
        cr_assert_eq(parse_go_duration_usec("", &u), -EINVAL);
        cr_assert_eq(parse_go_duration_usec("1m30s", &u), 0);
        cr_assert_eq(u, 90ULL * 1000000ULL);
        cr_assert_eq(parse_go_duration_usec("5x", &u), -EINVAL);
}
