/* SPDX-License-Identifier: Apache-2.0 */
#include <criterion/criterion.h>
#include <string.h>

#include "serving/webhook-rules.h"
#include "tm-fixture.h"

/* The base object with another spec.model.memory (stolen). */
static json_t *with_memory(json_t *memory)
{
        return tm_fixture("bar", "Parent", "gs://kfserving/sklearn/iris", "sklearn", memory);
}

static json_t *named(const char *name)
{
        return tm_fixture(name, "Parent", "gs://kfserving/sklearn/iris", "sklearn",
                          json_string("100Mi"));
}

static void expect(const char *op, json_t *obj, json_t *old, int verdict, const char *msg)
{
        static char unset[] = "unset";
        char *m = unset;
        int r;

        r = tm_validate_admission(op, obj, old, &m);
        cr_assert_eq(r, verdict, "%s: expected verdict %d, got %d (%s)", op, verdict, r,
                     m ? m : "(null)");
        if (msg) {
                cr_assert_not_null(m);
                cr_assert_str_eq(m, msg);
        } else if (verdict == TM_ADMISSION_ALLOWED) {
                cr_assert_null(m);
        }
        if (m != unset)
                free(m);
        json_decref(obj);
        json_decref(old);
}

Test(webhook_rules, create)
{
        expect("CREATE", tm_fixture_base(), NULL, TM_ADMISSION_ALLOWED, NULL);
        expect("CREATE", named("Abc-123"), NULL, TM_ADMISSION_ALLOWED, NULL);
        expect("CREATE", named("4abc-3"), NULL, TM_ADMISSION_ALLOWED, NULL);
        expect("CREATE", named("-abc-3"), NULL, TM_ADMISSION_ALLOWED, NULL);
        expect("CREATE", named("abc-3-"), NULL, TM_ADMISSION_ALLOWED, NULL);
        expect("CREATE", named("abc_3"), NULL, TM_ADMISSION_ALLOWED, NULL);
        expect("CREATE", named("abc.123"), NULL, TM_ADMISSION_DENIED, TM_NAME_ERR("abc.123"));
        expect("CREATE", named("abc 123"), NULL, TM_ADMISSION_DENIED, TM_NAME_ERR("abc 123"));
        expect("CREATE",
               tm_fixture("bar", "Parent", "foo://kfserving/sklearn/iris", "sklearn",
                          json_string("100Mi")),
               NULL, TM_ADMISSION_DENIED, TM_URI_ERR("bar", "foo://kfserving/sklearn/iris"));
}

/* Not a KServe rule (issue 28 item 6): the parent's name is a label value, at most 63 characters;
 * an update to such an object (removing a finalizer while deleting) stays allowed. */
Test(webhook_rules, parent_name_over_a_label_value_is_denied)
{
        char name[65];
        json_t *obj, *old;

        memset(name, 'p', 64);
        name[64] = '\0';
        expect("CREATE",
               tm_fixture("bar", name, "gs://kfserving/sklearn/iris", "sklearn",
                          json_string("100Mi")),
               NULL, TM_ADMISSION_DENIED,
               "the Trained Model \"bar\" inferenceService field is invalid: "
               "spec.inferenceService must be no more than 63 characters, the limit of a label "
               "value (it has 64)");
        obj = tm_fixture("bar", name, "gs://kfserving/sklearn/iris", "sklearn",
                         json_string("100Mi"));
        old = json_deep_copy(obj);
        json_object_set_new(json_object_get(obj, "metadata"), "deletionTimestamp",
                            json_string("2024-01-01T00:00:00Z"));
        expect("UPDATE", obj, old, TM_ADMISSION_ALLOWED, NULL);
        name[63] = '\0';
        expect("CREATE",
               tm_fixture("bar", name, "gs://kfserving/sklearn/iris", "sklearn",
                          json_string("100Mi")),
               NULL, TM_ADMISSION_ALLOWED, NULL);
}

Test(webhook_rules, create_prefixes)
{
        static const char *const ok[] = { "s3://b/m", "gs://b/m", "https://h/m", "http://h/m" };
        static const char *const bad[] = { "S3://b/m", "s3//model1", "", "file:///m", " gs://b" };

        for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++)
                expect("CREATE", tm_fixture("bar", "p", ok[i], "sklearn", json_string("1Gi")), NULL,
                       TM_ADMISSION_ALLOWED, NULL);
        for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
                expect("CREATE", tm_fixture("bar", "p", bad[i], "sklearn", json_string("1Gi")),
                       NULL, TM_ADMISSION_DENIED, NULL);
}

Test(webhook_rules, first_failing_rule_wins)
{
        expect("CREATE", tm_fixture("a.b", "p", "foo://x", "f", json_string("bogus")), NULL,
               TM_ADMISSION_DENIED, TM_NAME_ERR("a.b"));
        expect("CREATE", tm_fixture("ab", "p", "foo://x", "f", json_string("bogus")), NULL,
               TM_ADMISSION_DENIED, TM_URI_ERR("ab", "foo://x"));
}

Test(webhook_rules, missing_fields_use_go_zero_values)
{
        json_t *o = tm_fixture_base();

        json_object_del(json_object_get(o, "metadata"), "name");
        expect("CREATE", o, NULL, TM_ADMISSION_DENIED, TM_NAME_ERR(""));

        o = tm_fixture_base();
        json_object_del(json_object_get(json_object_get(o, "spec"), "model"), "storageUri");
        expect("CREATE", o, NULL, TM_ADMISSION_DENIED, TM_URI_ERR("bar", ""));
}

/* Beyond KServe: spec.model.memory must be a non-negative quantity; the message names it. */
Test(webhook_rules, memory_must_be_a_non_negative_quantity)
{
        static const char *const bad[] = { "-1Gi", "1GB", "lots", "" };
        json_t *o;

        for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
                char *m = NULL;
                o = tm_fixture("bar", "p", "s3://m", "f", json_string(bad[i]));
                cr_assert_eq(tm_validate_admission("CREATE", o, NULL, &m), TM_ADMISSION_DENIED,
                             "memory \"%s\" must be denied", bad[i]);
                cr_assert_not_null(strstr(m, "spec.model.memory"), "message names the field: %s",
                                   m);
                cr_assert_not_null(strstr(m, "the Trained Model \"bar\""));
                free(m);
                json_decref(o);
        }

        o = tm_fixture("bar", "p", "s3://m", "f", json_true());
        expect("CREATE", o, NULL, TM_ADMISSION_DENIED,
               "the Trained Model \"bar\" memory field is invalid: spec.model.memory must be a "
               "non-negative quantity such as \"128Mi\" or \"1G\" (the memory given is \"true\")");

        o = tm_fixture_base();
        json_object_del(json_object_get(json_object_get(o, "spec"), "model"), "memory");
        expect("CREATE", o, NULL, TM_ADMISSION_DENIED,
               "the Trained Model \"bar\" memory field is invalid: spec.model.memory is required");

        expect("CREATE", tm_fixture("bar", "p", "s3://m", "f", json_integer(1073741824)), NULL,
               TM_ADMISSION_ALLOWED, NULL);
        expect("CREATE", tm_fixture("bar", "p", "s3://m", "f", json_string("0")), NULL,
               TM_ADMISSION_ALLOWED, NULL);
}

Test(webhook_rules, update)
{
        expect("UPDATE", tm_fixture_base(), tm_fixture_base(), TM_ADMISSION_ALLOWED, NULL);
        expect("UPDATE", named("Abc-123"), tm_fixture_base(), TM_ADMISSION_ALLOWED, NULL);
        expect("UPDATE", named("4abc-3"), tm_fixture_base(), TM_ADMISSION_ALLOWED, NULL);
        expect("UPDATE", named("-abc-3"), tm_fixture_base(), TM_ADMISSION_ALLOWED, NULL);
        expect("UPDATE", named("abc-3-"), tm_fixture_base(), TM_ADMISSION_ALLOWED, NULL);
        expect("UPDATE",
               tm_fixture("bar", "parent2", "gs://kfserving/sklearn/iris", "sklearn",
                          json_string("100Mi")),
               tm_fixture_base(), TM_ADMISSION_ALLOWED, NULL);
        expect("UPDATE",
               tm_fixture("bar", "Parent", "gs://kfserving/sklearn2/iris", "sklearn",
                          json_string("100Mi")),
               tm_fixture_base(), TM_ADMISSION_ALLOWED, NULL);
        expect("UPDATE",
               tm_fixture("bar", "Parent", "gs://kfserving/sklearn/iris", "sklearn2",
                          json_string("100Mi")),
               tm_fixture_base(), TM_ADMISSION_ALLOWED, NULL);
        expect("UPDATE", named("abc.123"), tm_fixture_base(), TM_ADMISSION_DENIED,
               TM_NAME_ERR("abc.123"));
        expect("UPDATE", named("abc 123"), tm_fixture_base(), TM_ADMISSION_DENIED,
               TM_NAME_ERR("abc 123"));
        expect("UPDATE",
               tm_fixture("bar", "Parent", "foo://kfserving/sklearn/iris", "sklearn",
                          json_string("100Mi")),
               tm_fixture_base(), TM_ADMISSION_DENIED,
               TM_URI_ERR("bar", "foo://kfserving/sklearn/iris"));
        expect("UPDATE", with_memory(json_string("300Mi")), tm_fixture_base(), TM_ADMISSION_DENIED,
               "the Trained Model \"bar\" memory field is immutable. The memory was \"100Mi\" but "
               "it is updated to \"300Mi\"");
}

Test(webhook_rules, update_memory_compares_values)
{
        /* 100Mi -> 104857600 is the same value */
        expect("UPDATE", with_memory(json_string("104857600")), tm_fixture_base(),
               TM_ADMISSION_ALLOWED, NULL);
        expect("UPDATE", with_memory(json_integer(104857600)), tm_fixture_base(),
               TM_ADMISSION_ALLOWED, NULL);
        /* printed in String() form: 1000M was "1G" */
        expect("UPDATE", tm_fixture("bar", "p", "s3://m", "f", json_string("2G")),
               tm_fixture("bar", "p", "s3://m", "f", json_string("1000M")), TM_ADMISSION_DENIED,
               "the Trained Model \"bar\" memory field is immutable. The memory was \"1G\" but it "
               "is updated to \"2G\"");
        /* an old value that never parsed may be repaired */
        expect("UPDATE", tm_fixture("bar", "p", "s3://m", "f", json_string("1G")),
               tm_fixture("bar", "p", "s3://m", "f", json_string("garbage")), TM_ADMISSION_ALLOWED,
               NULL);
}

Test(webhook_rules, update_while_deleting_is_allowed)
{
        json_t *o = tm_fixture("a.b", "Parent", "foo://x", "sklearn", json_string("300Mi"));

        json_object_set_new(json_object_get(o, "metadata"), "deletionTimestamp",
                            json_string("2026-01-01T00:00:00Z"));
        expect("UPDATE", o, tm_fixture_base(), TM_ADMISSION_ALLOWED, NULL);

        /* a deletionTimestamp on CREATE does not skip the rules */
        o = named("a.b");
        json_object_set_new(json_object_get(o, "metadata"), "deletionTimestamp",
                            json_string("2026-01-01T00:00:00Z"));
        expect("CREATE", o, NULL, TM_ADMISSION_DENIED, TM_NAME_ERR("a.b"));
}

Test(webhook_rules, delete_connect_and_unknown)
{
        expect("DELETE", NULL, tm_fixture_base(), TM_ADMISSION_ALLOWED, NULL);
        expect("DELETE", named("a.b"), NULL, TM_ADMISSION_ALLOWED, NULL);
        expect("CONNECT", NULL, NULL, TM_ADMISSION_ALLOWED, NULL);
        expect("PATCH", tm_fixture_base(), NULL, TM_ADMISSION_BAD_REQUEST,
               "unknown operation \"PATCH\"");
}

Test(webhook_rules, undecodable_objects_are_bad_requests)
{
        char *m = NULL;
        json_t *o;

        expect("CREATE", NULL, NULL, TM_ADMISSION_BAD_REQUEST, NULL);
        expect("CREATE", json_string("x"), NULL, TM_ADMISSION_BAD_REQUEST, NULL);

        o = tm_fixture_base();
        json_object_set_new(json_object_get(o, "metadata"), "name", json_integer(5));
        cr_assert_eq(tm_validate_admission("CREATE", o, NULL, &m), TM_ADMISSION_BAD_REQUEST);
        cr_assert_not_null(strstr(m, "metadata.name"), "names the field: %s", m);
        free(m);
        json_decref(o);

        o = tm_fixture_base();
        json_object_set_new(json_object_get(json_object_get(o, "spec"), "model"), "storageUri",
                            json_integer(5));
        cr_assert_eq(tm_validate_admission("CREATE", o, NULL, &m), TM_ADMISSION_BAD_REQUEST);
        cr_assert_not_null(strstr(m, "spec.model.storageUri"), "names the field: %s", m);
        free(m);
        json_decref(o);

        o = tm_fixture_base();
        json_object_set_new(o, "spec", json_string("nope"));
        cr_assert_eq(tm_validate_admission("CREATE", o, NULL, &m), TM_ADMISSION_BAD_REQUEST);
        free(m);
        json_decref(o);

        /* UPDATE without a usable oldObject */
        expect("UPDATE", tm_fixture_base(), NULL, TM_ADMISSION_BAD_REQUEST, NULL);
}

Test(webhook_rules, argument_errors)
{
        char *m = NULL;

        cr_assert_eq(tm_validate_admission(NULL, NULL, NULL, &m), -EINVAL);
        cr_assert_eq(tm_validate_admission("CREATE", NULL, NULL, NULL), -EINVAL);
        cr_assert_null(m);
}

/* Placement's copies annotation: a positive integer or "all"; anything else is refused with a
 * message naming the annotation and the value. */
static json_t *with_copies(json_t *value)
{
        json_t *o = tm_fixture_base();

        json_object_set_new(json_object_get(o, "metadata"), "annotations",
                            json_pack("{s:o}", "modelplane.io/copies", value));
        return o;
}

#define COPIES_ERR(v)                                                                         \
        "the Trained Model \"bar\" annotation modelplane.io/copies is invalid: it must be a " \
        "positive integer of at most 1000 or \"all\" (the value given is \"" v "\")"

Test(webhook_rules, copies_annotation)
{
        expect("CREATE", with_copies(json_string("2")), NULL, TM_ADMISSION_ALLOWED, NULL);
        expect("CREATE", with_copies(json_string("all")), NULL, TM_ADMISSION_ALLOWED, NULL);
        expect("CREATE", with_copies(json_string("0")), NULL, TM_ADMISSION_DENIED, COPIES_ERR("0"));
        expect("CREATE", with_copies(json_string("two")), NULL, TM_ADMISSION_DENIED,
               COPIES_ERR("two"));
        expect("CREATE", with_copies(json_string("-1")), NULL, TM_ADMISSION_DENIED,
               COPIES_ERR("-1"));
        expect("UPDATE", with_copies(json_string("1001")), tm_fixture_base(), TM_ADMISSION_DENIED,
               COPIES_ERR("1001"));
        expect("UPDATE", with_copies(json_string("3")), tm_fixture_base(), TM_ADMISSION_ALLOWED,
               NULL);
}
