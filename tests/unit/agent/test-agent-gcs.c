/* SPDX-License-Identifier: Apache-2.0 */
/* agent/gcs-json.h: the GCS JSON API objects list and error documents. */
#include <criterion/criterion.h>
#include <string.h>

#include "agent/gcs-json.h"

static int parse(const char *json, struct s3_list *l)
{
        return gcs_list_parse(json, strlen(json), l);
}

Test(gcs, list_pages)
{
        struct s3_list l = { 0 };

        cr_assert_eq(parse("{\"kind\":\"storage#objects\",\"items\":[{\"name\":\"m/a\"},"
                           "{\"name\":\"m/sub/b\"}],\"nextPageToken\":\"tok 1\"}",
                           &l),
                     0);
        cr_assert_eq(l.n_keys, 2);
        cr_assert_str_eq(l.keys[1], "m/sub/b");
        cr_assert(l.truncated);
        cr_assert_str_eq(l.next_token, "tok 1");
        /* the last page: no token, keys appended */
        cr_assert_eq(parse("{\"items\":[{\"name\":\"m/c\"}]}", &l), 0);
        cr_assert_eq(l.n_keys, 3);
        cr_assert(!l.truncated);
        cr_assert_null(l.next_token);
        s3_list_release(&l);

        /* an empty prefix has no "items" at all */
        cr_assert_eq(parse("{\"kind\":\"storage#objects\"}", &l), 0);
        cr_assert_eq(l.n_keys, 0);
        s3_list_release(&l);
}

Test(gcs, malformed_lists)
{
        static const char *const bad[] = { "",
                                           "[]",
                                           "{\"items\":{}}",
                                           "{\"items\":[{}]}",
                                           "{\"items\":[{\"name\":7}]}",
                                           "{not json" };
        struct s3_list l = { 0 };

        for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
                cr_assert_eq(parse(bad[i], &l), -EBADMSG, "accepted %s", bad[i]);
                s3_list_release(&l);
        }
}

Test(gcs, error_document)
{
        const char *e = "{\"error\":{\"code\":403,\"message\":\"Access denied.\",\"errors\":[]}}";
        char buf[128] = "";

        cr_assert(gcs_error_parse(e, strlen(e), buf, sizeof(buf)));
        cr_assert_str_eq(buf, "403: Access denied.");
        cr_assert(!gcs_error_parse("<Error/>", 8, buf, sizeof(buf)));
        cr_assert(!gcs_error_parse("{\"error\":\"x\"}", 13, buf, sizeof(buf)));
}
