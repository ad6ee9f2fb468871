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

Test(string_util, percent_decoding_one_decoder_two_spellings_of_a_space)
{
        char *s = NULL;

        cr_assert_eq(percent_decode("a%20b+c%2Fd", 11, &s), 0);
        cr_assert_str_eq(s, "a b+c/d");
        free(s);
        cr_assert_eq(percent_decode_form("a%20b+c", 7, &s), 0);
        cr_assert_str_eq(s, "a b c");
        free(s);
        s = NULL;
        cr_assert_eq(percent_decode("a%2", 3, &s), -EINVAL);
        cr_assert_eq(percent_decode("%00", 3, &s), -EINVAL);
        cr_assert_eq(percent_decode("%zz", 3, &s), -EINVAL);
        cr_assert_eq(percent_decode_form("%", 1, &s), -EINVAL);
        cr_assert_null(s);
        /* len, not the NUL, ends the input */
        cr_assert_eq(percent_decode("ab%41xyz", 5, &s), 0);
        cr_assert_str_eq(s, "abA");
        free(s);
}
