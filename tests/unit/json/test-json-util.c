/* SPDX-License-Identifier: Apache-2.0 */
/* json/json-util: json_dispatch_borrow, dispatch errors and json_parse_bounded() into a struct
 * error_detail. */
#include <criterion/criterion.h>
#include <errno.h>
#include <stddef.h>
#include <string.h>

#include "json/json-util.h"

struct borrowed {
        json_t *spec;
};

static const struct json_field fields[] = {
        { "spec", JSON_OBJECT, json_dispatch_borrow, offsetof(struct borrowed, spec), 0 },
        { 0 },
};

Test(json_dispatch_borrow, stores_the_value_without_a_reference)
{
        json_t *doc = json_pack("{s:{s:i}}", "spec", "a", 1);
        struct borrowed b = { 0 };
        struct error_detail e = { 0 };
        json_t *spec;

        cr_assert_not_null(doc);
        spec = json_object_get(doc, "spec");
        cr_assert_eq(json_dispatch(doc, fields, 0, &b, &e), 0);
        cr_assert_eq(b.spec, spec);
        cr_assert_eq(spec->refcount, 1, "borrowed, so the document still holds the only reference");
        json_decref(doc);
}

Test(json_dispatch, errors_name_the_field_in_the_detail)
{
        json_t *doc = json_pack("{s:i}", "spec", 1);
        struct borrowed b = { 0 };
        struct error_detail e = { 0 };

        cr_assert_not_null(doc);
        cr_assert_eq(json_dispatch(doc, fields, 0, &b, &e), -EINVAL);
        cr_assert_str_eq(e.field, "spec");
        cr_assert_eq(e.kind, ERROR_INVALID);
        cr_assert_eq(e.error, -EINVAL);
        cr_assert(e.message[0] != '\0');
        json_decref(doc);
}

Test(json_parse_bounded, reports_into_the_detail)
{
        struct error_detail e = { 0 };
        json_t *v = NULL;

        cr_assert_eq(json_parse_bounded("{\"a\": 1, \"a\": 2}", 16, &v, &e), -EINVAL);
        cr_assert_null(v);
        cr_assert_eq(e.kind, ERROR_INVALID);
        cr_assert_eq(e.error, -EINVAL);
        cr_assert(strstr(e.message, "duplicate") && strstr(e.message, "at line 1 column"), "%s",
                  e.message);
        cr_assert_eq(json_parse_bounded("[1]", 3, &v, NULL), 0);
        json_decref(v);
}
