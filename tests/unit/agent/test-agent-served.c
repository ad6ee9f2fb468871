/* SPDX-License-Identifier: Apache-2.0 */
/* The served set (src/agent/served.h): the names the proxy asks about on every request. */
#include <criterion/criterion.h>
#include <stdio.h>

#include "agent/served.h"

Test(served, names_in_and_out_in_any_order)
{
        static const char *names[] = { "m", "a", "z", "b", "y", "c" };
        struct served s;

        served_init(&s);
        for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
                cr_assert_eq(served_set(&s, names[i], true), 0);
        cr_assert_eq(served_set(&s, "a", true), 0, "twice is once");
        cr_assert_eq(served_count(&s), 6);
        for (size_t i = 0; i < s.n - 1; i++)
                cr_assert_lt(strcmp(s.names[i], s.names[i + 1]), 0, "sorted");
        for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
                cr_assert(served_has(&s, names[i]), "%s", names[i]);
        cr_assert_not(served_has(&s, "x"));
        cr_assert_not(served_has(&s, ""));
        cr_assert_eq(served_set(&s, "m", false), 0);
        cr_assert_eq(served_set(&s, "not there", false), 0);
        cr_assert_not(served_has(&s, "m"));
        cr_assert(served_has(&s, "z"));
        cr_assert_eq(served_count(&s), 5);
        served_release(&s);
}

Test(served, grows_past_its_first_array)
{
        struct served s;
        char name[16];

        served_init(&s);
        for (int i = 999; i >= 0; i--) {
                (void)snprintf(name, sizeof(name), "m%04d", i);
                cr_assert_eq(served_set(&s, name, true), 0);
        }
        cr_assert_eq(served_count(&s), 1000);
        cr_assert(served_has(&s, "m0000"));
        cr_assert(served_has(&s, "m0999"));
        for (int i = 0; i < 1000; i += 2) {
                (void)snprintf(name, sizeof(name), "m%04d", i);
                cr_assert_eq(served_set(&s, name, false), 0);
        }
        cr_assert_eq(served_count(&s), 500);
        cr_assert_not(served_has(&s, "m0000"));
        cr_assert(served_has(&s, "m0001"));
        served_release(&s);
}
