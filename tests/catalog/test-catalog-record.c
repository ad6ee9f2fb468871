/* SPDX-License-Identifier: Apache-2.0 */
/* catalog/record.c: a model's members in order, known keys shared, references held and freed. */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdlib.h>

#include "catalog/record.h"

static char *dump(const json_t *v)
{
        char *s = json_dumps(v, JSON_COMPACT);

        cr_assert_not_null(s);
        return s;
}

Test(record, from_json_keeps_the_members_in_order_and_unknown_keys)
{
        json_t *o = json_pack("{s:s,s:i,s:[s],s:s}", "name", "m", "x-unknown", 7, "tasks", "t",
                              "another unknown key", "v");
        struct catalog_record *a = NULL, *b = NULL;
        json_t *back;
        char *want, *got;

        cr_assert_not_null(o);
        cr_assert_eq(catalog_record_from_json(o, &a), 0);
        cr_assert_eq(catalog_record_from_json(o, &b), 0);
        cr_assert_eq(a->n, 4);
        cr_assert_str_eq(a->v[1].key, "x-unknown");
        cr_assert_str_eq(a->v[3].key, "another unknown key");
        /* known keys are the static strings, unknown ones packed in each record */
        cr_assert_eq(a->v[0].key, b->v[0].key);
        cr_assert_neq(a->v[1].key, b->v[1].key);
        cr_assert_eq(json_integer_value(catalog_record_get(a, "x-unknown")), 7);
        cr_assert_eq(catalog_record_get(a, "tasks"), json_object_get(o, "tasks"), "shared value");
        cr_assert_null(catalog_record_get(a, "missing"));
        cr_assert_null(catalog_record_get(NULL, "name"));
        back = catalog_record_to_json(a);
        cr_assert_not_null(back);
        want = dump(o);
        got = dump(back);
        cr_assert_str_eq(got, want);
        free(want);
        free(got);
        json_decref(back);
        catalog_record_unref(b);
        cr_assert_eq(json_object_get(o, "tasks")->refcount, 2, "o and record a");
        catalog_record_unref(a);
        cr_assert_eq(json_object_get(o, "tasks")->refcount, 1, "the record's references freed");
        json_decref(o);
}

Test(record, from_json_refuses_what_is_not_an_object)
{
        json_t *a = json_array();
        struct catalog_record *r = NULL;

        cr_assert_eq(catalog_record_from_json(a, &r), -EINVAL);
        cr_assert_null(r);
        json_decref(a);
}

Test(record, a_full_builder_refuses_and_releases_the_value)
{
        struct catalog_record_builder b = { 0 };
        struct catalog_record *r = NULL;
        json_t *v = json_string("x");

        for (size_t i = 0; i < CATALOG_RECORD_BUILD_MAX; i++)
                cr_assert_eq(catalog_record_builder_add(&b, "description", json_incref(v)), 0);
        cr_assert_eq(v->refcount, 1 + CATALOG_RECORD_BUILD_MAX);
        cr_assert_eq(catalog_record_builder_add(&b, "readme", json_incref(v)), -E2BIG);
        cr_assert_eq(v->refcount, 1 + CATALOG_RECORD_BUILD_MAX, "the refused value is released");
        cr_assert_eq(catalog_record_builder_add(&b, "readme", NULL), -ENOMEM, "a failed json_*()");
        cr_assert_eq(catalog_record_build(&b, &r), 0);
        cr_assert_eq(b.n, 0, "moved into the record");
        cr_assert_eq(r->n, CATALOG_RECORD_BUILD_MAX);
        cr_assert_eq(catalog_record_get(r, "description"), v);
        catalog_record_unref(r);
        cr_assert_eq(v->refcount, 1);
        json_decref(v);
}

Test(record, builder_get_sees_the_members_added_so_far)
{
        CLEANUP(catalog_record_builder_release) struct catalog_record_builder b = { 0 };
        json_t *v = json_string("1");

        cr_assert_null(catalog_record_builder_get(&b, "createTimeSinceEpoch"));
        cr_assert_eq(catalog_record_builder_add(&b, "createTimeSinceEpoch", json_incref(v)), 0);
        cr_assert_eq(catalog_record_builder_get(&b, "createTimeSinceEpoch"), v);
        catalog_record_builder_release(&b);
        cr_assert_eq(b.n, 0);
        cr_assert_eq(v->refcount, 1);
        json_decref(v);
}

Test(record, references_keep_the_values_until_the_last_unref)
{
        struct catalog_record_builder b = { 0 };
        struct catalog_record *r = NULL;
        json_t *v = json_string("oci://x/y:1");

        cr_assert_eq(catalog_record_builder_add(&b, "uri", json_incref(v)), 0);
        cr_assert_eq(catalog_record_builder_add(&b, "artifactType", json_string("model-artifact")),
                     0);
        cr_assert_eq(catalog_record_build(&b, &r), 0);
        cr_assert_eq(r->refs, 1);
        /* artifact keys are known keys too: no copy packed behind the members */
        cr_assert_eq((const char *)&r->v[r->n], (const char *)r + sizeof(*r) + 2 * sizeof(r->v[0]));
        cr_assert_neq(r->v[0].key, (const char *)&r->v[r->n], "the key is not packed");
        cr_assert_eq(catalog_record_ref(r), r);
        cr_assert_eq(r->refs, 2);
        cr_assert_null(catalog_record_unref(r));
        cr_assert_eq(r->refs, 1, "one reference left");
        cr_assert_eq(catalog_record_get(r, "uri"), v);
        cr_assert_eq(v->refcount, 2, "still held by the record");
        cr_assert_null(catalog_record_unref(r));
        cr_assert_eq(v->refcount, 1, "released with the last reference");
        cr_assert_null(catalog_record_ref(NULL));
        cr_assert_null(catalog_record_unref(NULL));
        json_decref(v);
}
