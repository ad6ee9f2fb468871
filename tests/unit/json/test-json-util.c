/* SPDX-License-Identifier: Apache-2.0 */
/* json/json-util: json_dispatch_borrow. */
#include <criterion/criterion.h>
#include <stddef.h>

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
