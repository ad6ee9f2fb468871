/* SPDX-License-Identifier: Apache-2.0 */
#include <criterion/criterion.h>

#include "util/string-util.h"

struct named {
        const char *name;
        int v;
};

Test(string_util, sorted_find_structs_and_string_arrays)
{
        static const struct named items[] = { { "a", 1 }, { "c", 2 }, { "e", 3 } };
        static const char *const names[] = { "m1", "m2" };
        bool found;

        cr_assert_eq(sorted_find(items, 3, sizeof(items[0]), "c", &found), 1);
        cr_assert(found);
        cr_assert_eq(sorted_find(items, 3, sizeof(items[0]), "a", &found), 0);
        cr_assert(found);
        cr_assert_eq(sorted_find(items, 3, sizeof(items[0]), "e", &found), 2);
        cr_assert(found);
        cr_assert_eq(sorted_find(items, 3, sizeof(items[0]), "0", &found), 0);
        cr_assert_not(found);
        cr_assert_eq(sorted_find(items, 3, sizeof(items[0]), "d", &found), 2);
        cr_assert_not(found);
        cr_assert_eq(sorted_find(items, 3, sizeof(items[0]), "z", &found), 3);
        cr_assert_not(found);
        cr_assert_eq(sorted_find(items, 0, sizeof(items[0]), "a", &found), 0);
        cr_assert_not(found);
        cr_assert_eq(sorted_find(names, 2, sizeof(names[0]), "m2", &found), 1);
        cr_assert(found);
}
