/* SPDX-License-Identifier: Apache-2.0 */
/* util/base64, util/uuid and util/string-util. */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "util/base64.h"
#include "util/string-util.h"
#include "util/uuid.h"

Test(base64, rfc4648_vectors)
{
        /* RFC 4648 §10, and one with punctuation */
        static const char *const in[] = { "", "f", "fo", "foo", "foob", "fooba", "foobar", "2:2" };
        static const char *const out[] = { "",         "Zg==",     "Zm8=",     "Zm9v",
                                           "Zm9vYg==", "Zm9vYmE=", "Zm9vYmFy", "Mjoy" };

        for (size_t i = 0; i < sizeof(in) / sizeof(in[0]); i++) {
                char *e = base64_encode(in[i], strlen(in[i])), *d = NULL;
                size_t n = 99;

                cr_assert_str_eq(e, out[i]);
                cr_assert_eq(base64_decode(e, &d, &n), 0);
                cr_assert_eq(n, strlen(in[i]));
                cr_assert_str_eq(d, in[i]);
                free(e);
                free(d);
        }
}

Test(base64, binary_and_embedded_nul)
{
        static const unsigned char bin[] = { 0, 0xff, 'a', 0, 0x80 };
        char *e = base64_encode(bin, sizeof(bin)), *d = NULL;
        size_t n = 0;

        cr_assert_not_null(e);
        cr_assert_eq(base64_decode(e, &d, &n), 0);
        cr_assert_eq(n, sizeof(bin));
        cr_assert_eq(memcmp(d, bin, n), 0);
        cr_assert_eq(d[n], 0, "output is NUL-terminated");
        cr_assert_neq(strlen(d), n, "callers detect the NUL inside by strlen");
        free(e);
        free(d);
}

Test(base64, rejects)
{
        static const char *const bad[] = { "abc",  "ab=c",      "a!==",  "Zg==Zg==", "Z===",
                                           "====", "Zm9v YmFy", "Zm9\n", "Zg=a" };
        char *d = (char *)"untouched";

        for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
                cr_assert_eq(base64_decode(bad[i], &d, NULL), -EINVAL, "%s", bad[i]);
                cr_assert_str_eq(d, "untouched", "%s: *ret set on failure", bad[i]);
        }
}

Test(uuid, version4_format_and_unique)
{
        char a[UUID_STRING_LEN], b[UUID_STRING_LEN];

        cr_assert_eq(uuid_random(a), 0);
        cr_assert_eq(uuid_random(b), 0);
        cr_assert_eq(strlen(a), 36);
        for (size_t i = 0; i < 36; i++) {
                if (i == 8 || i == 13 || i == 18 || i == 23)
                        cr_assert_eq(a[i], '-', "%s", a);
                else
                        cr_assert(strchr("0123456789abcdef", a[i]), "%s", a);
        }
        cr_assert_eq(a[14], '4', "version nibble: %s", a);
        cr_assert(strchr("89ab", a[19]), "variant: %s", a);
        cr_assert_str_neq(a, b);
}

Test(string_util, strdup_opt)
{
        char *p = (char *)"x";

        cr_assert_eq(strdup_opt(NULL, &p), 0);
        cr_assert_null(p);
        cr_assert_eq(strdup_opt("abc", &p), 0);
        cr_assert_str_eq(p, "abc");
        free(p);
}
