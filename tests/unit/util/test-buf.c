/* SPDX-License-Identifier: Apache-2.0 */
#include <criterion/criterion.h>
#include <stdint.h>
#include <string.h>

#include "util/buf.h"

Test(buf, append_and_take)
{
        struct buf b = BUF_INIT(64);
        size_t len = 0;
        char *s;

        cr_assert_eq(buf_puts(&b, "hello"), 0);
        cr_assert_eq(buf_printf(&b, " %d", 42), 0);
        cr_assert_str_eq(buf_str(&b), "hello 42");
        s = buf_take(&b, &len);
        cr_assert_str_eq(s, "hello 42");
        cr_assert_eq(len, 8);
        cr_assert_null(b.p);
        free(s);
}

Test(buf, cap_is_enforced_and_contents_survive)
{
        struct buf b = BUF_INIT(8);

        cr_assert_eq(buf_puts(&b, "1234567"), 0);
        cr_assert_eq(buf_putc(&b, 'x'), -E2BIG, "an append reaching the cap must fail");
        cr_assert_str_eq(buf_str(&b), "1234567", "a failed append must leave contents unchanged");
        cr_assert_eq(buf_printf(&b, "%s", "toolong"), -E2BIG);
        cr_assert_eq(b.len, 7);
        buf_release(&b);
}

Test(buf, empty_take_is_empty_string)
{
        struct buf b = BUF_INIT(8);
        char *s = buf_take(&b, NULL);

        cr_assert_not_null(s);
        cr_assert_str_eq(s, "");
        free(s);
}

Test(buf, json_string_escapes_as_jansson_does)
{
        static const char in[] = "a\"b\\c\b\f\n\r\t\x01\x1f\0z\x7f\xc3\xa9";
        struct buf b = BUF_INIT(256);

        cr_assert_eq(buf_put_json_string(&b, in, sizeof(in) - 1), 0);
        cr_assert_str_eq(buf_str(&b),
                         "\"a\\\"b\\\\c\\b\\f\\n\\r\\t\\u0001\\u001F\\u0000z\x7f\xc3\xa9\"");
        buf_release(&b);
}

Test(buf, json_string_over_the_cap_fails)
{
        struct buf b = BUF_INIT(4);

        cr_assert_eq(buf_put_json_string(&b, "\n\n", 2), -E2BIG);
        buf_release(&b);
}

Test(buf, write_callback_appends_and_refuses_past_the_cap)
{
        struct buf b = BUF_INIT(9); /* 8 bytes and the NUL the buffer keeps */
        char text[] = "abcdefgh";

        cr_assert_eq(buf_write_cb(text, 1, 5, &b), 5);
        cr_assert_eq(buf_write_cb(text, 3, 1, &b), 3);
        cr_assert_eq(b.len, 8);
        cr_assert(memcmp(b.p, "abcdeabc", 8) == 0);
        /* past the cap: 0, which libcurl turns into CURLE_WRITE_ERROR; nothing appended */
        cr_assert_eq(buf_write_cb(text, 1, 1, &b), 0);
        cr_assert_eq(b.len, 8);
        /* a size times count that overflows is refused, not wrapped */
        cr_assert_eq(buf_write_cb(text, SIZE_MAX, 2, &b), 0);
        buf_release(&b);
}
