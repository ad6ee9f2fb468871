/* SPDX-License-Identifier: Apache-2.0 */
/* util/error-detail: the one error-detail type and its "file:line: message" form. */
#include <criterion/criterion.h>
#include <errno.h>
#include <string.h>

#include "util/error-detail.h"

Test(error_detail, set_returns_r_and_keeps_position)
{
        struct error_detail e = { .status = 404, .line = 7 };

        cr_assert_eq(error_detail_set(&e, ERROR_NOT_FOUND, -ENOENT, "no %s", "model"), -ENOENT);
        cr_assert_eq(e.kind, ERROR_NOT_FOUND);
        cr_assert_eq(e.error, -ENOENT);
        cr_assert_str_eq(e.message, "no model");
        cr_assert_eq(e.status, 404);
        cr_assert_eq(e.line, 7);
        cr_assert_eq(error_detail_set(NULL, ERROR_INVALID, -EINVAL, "ignored"), -EINVAL);
}

Test(error_detail, field)
{
        struct error_detail e = { 0 };

        cr_assert_eq(error_detail_set_field(&e, ERROR_INVALID, -ERANGE, "port",
                                            "%d is out of range", 70000),
                     -ERANGE);
        cr_assert_str_eq(e.field, "port");
        cr_assert_str_eq(e.message, "70000 is out of range");
        cr_assert_eq(error_detail_set_field(&e, ERROR_INVALID, -EINVAL, NULL, "whole"), -EINVAL);
        cr_assert_str_eq(e.field, "");
}

Test(error_detail, format_with_and_without_position)
{
        struct error_detail e = { .column = 9, .kind = ERROR_CONFLICT };
        char buf[64];

        cr_assert_eq(error_detail_set_at(&e, -EINVAL, "a.yaml", 3, "bad %s", "key"), -EINVAL);
        cr_assert_eq(e.kind, ERROR_INVALID);
        cr_assert_eq(e.column, 0, "a new position has no column until the reader sets one");
        cr_assert_str_eq(error_detail_format(&e, buf, sizeof(buf)), "a.yaml:3: bad key");
        (void)error_detail_set_at(&e, -EFBIG, "a.yaml", 0, "too large");
        cr_assert_str_eq(error_detail_format(&e, buf, sizeof(buf)), "a.yaml: too large");
        (void)error_detail_set_at(&e, -EINVAL, NULL, 0, "plain");
        cr_assert_str_eq(error_detail_format(&e, buf, sizeof(buf)), "plain");
        /* truncated, still terminated */
        (void)error_detail_set_at(&e, -EINVAL, "f", 1, "%s", "0123456789012345678901234567890");
        cr_assert_str_eq(error_detail_format(&e, buf, 12), "f:1: 012345");
}
