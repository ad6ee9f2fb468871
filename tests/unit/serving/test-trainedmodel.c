/* SPDX-License-Identifier: Apache-2.0 */
#include <criterion/criterion.h>
#include <string.h>

#include "serving/trainedmodel.h"

static json_t *load(const char *s)
{
        json_error_t err;
        json_t *v = json_loads(s, 0, &err);

        cr_assert_not_null(v, "bad test JSON (%s): %s", err.text, s);
        return v;
}

#define META                                                                                           \
        "\"metadata\":{\"name\":\"tm1\",\"namespace\":\"ns\",\"uid\":\"u\",\"resourceVersion\":\"7\"," \
        "\"creationTimestamp\":\"2024-05-01T12:00:00Z\"}"

static void expect_invalid(const char *spec, const char *field, const char *message)
{
        char buf[1024];
        json_t *v;
        struct trained_model tm;

        (void)snprintf(buf, sizeof(buf), "{" META ",%s}", spec);
        v = load(buf);
        cr_assert_eq(trained_model_from_json(v, &tm), 0, "%s", buf);
        cr_assert_not(tm.valid, "should be invalid: %s", buf);
        cr_assert_str_eq(tm.invalid_field, field, "%s", buf);
        if (message)
                cr_assert_str_eq(tm.invalid_message, message);
        cr_assert_not_null(strstr(tm.invalid_message, field), "message names the field: %s",
                           tm.invalid_message);
        json_decref(v);
}

Test(trainedmodel, valid)
{
        json_auto_t *v = load("{" META ",\"spec\":{\"inferenceService\":\"isvc\",\"model\":"
                              "{\"storageUri\":\"s3//model1\",\"framework\":\"tensorflow\","
                              "\"memory\":\"1000M\"}}}");
        struct trained_model tm;
        char s[QUANTITY_STRING_MAX];

        cr_assert_eq(trained_model_from_json(v, &tm), 0);
        cr_assert(tm.valid, "%s", tm.invalid_message);
        cr_assert_str_eq(tm.name, "tm1");
        cr_assert_str_eq(tm.namespace_, "ns");
        cr_assert_str_eq(tm.isvc, "isvc");
        cr_assert_str_eq(tm.storage_uri, "s3//model1");
        cr_assert_str_eq(tm.framework, "tensorflow");
        cr_assert_str_eq(tm.resource_version, "7");
        cr_assert_eq(tm.created, (usec_t)1714564800 * USEC_PER_SEC);
        cr_assert_not(tm.being_deleted);
        cr_assert_not(tm.has_finalizer);
        cr_assert_gt(quantity_to_string(&tm.memory, s, sizeof(s)), 0);
        cr_assert_str_eq(s, "1G");
}

Test(trainedmodel, metadata)
{
        json_auto_t *v = load(
                "{\"metadata\":{\"name\":\"tm1\",\"deletionTimestamp\":\"2024-01-01T00:00:00Z\","
                "\"finalizers\":[\"other\",\"trainedmodel.finalizer\"],"
                "\"labels\":{\"inferenceservice\":\"a\"}},\"spec\":{}}");
        struct trained_model tm;

        cr_assert_eq(trained_model_from_json(v, &tm), 0);
        cr_assert(tm.being_deleted);
        cr_assert(tm.has_finalizer);
        cr_assert_str_eq(trained_model_label(&tm, "inferenceservice"), "a");
        cr_assert_null(trained_model_label(&tm, "serving.kserve.io/trainedmodel-allocated"));
}

Test(trainedmodel, unreadable)
{
        json_auto_t *a = load("{\"spec\":{}}");
        json_auto_t *b = load("{\"metadata\":{\"name\":\"\"}}");
        json_auto_t *c = load("[1]");
        struct trained_model tm;

        cr_assert_eq(trained_model_from_json(a, &tm), -EINVAL);
        cr_assert_eq(trained_model_from_json(b, &tm), -EINVAL);
        cr_assert_eq(trained_model_from_json(c, &tm), -EINVAL);
        cr_assert_eq(trained_model_from_json(NULL, &tm), -EINVAL);
}

/* Issue 3: invalid specs get a named field, never a crash. */
Test(trainedmodel, invalid_specs)
{
        expect_invalid("\"nospec\":1", "spec", NULL);
        expect_invalid("\"spec\":\"x\"", "spec", NULL);
        expect_invalid("\"spec\":{\"model\":{}}", "spec.inferenceService",
                       "spec.inferenceService is required");
        expect_invalid("\"spec\":{\"inferenceService\":\"\",\"model\":{}}", "spec.inferenceService",
                       "spec.inferenceService must not be empty");
        expect_invalid("\"spec\":{\"inferenceService\":5,\"model\":{}}", "spec.inferenceService",
                       NULL);
        expect_invalid("\"spec\":{\"inferenceService\":\"i\"}", "spec.model", NULL);
        expect_invalid("\"spec\":{\"inferenceService\":\"i\",\"model\":{\"framework\":\"f\","
                       "\"memory\":\"1Gi\"}}",
                       "spec.model.storageUri", "spec.model.storageUri is required");
        expect_invalid("\"spec\":{\"inferenceService\":\"i\",\"model\":{\"storageUri\":\"\","
                       "\"framework\":\"f\",\"memory\":\"1Gi\"}}",
                       "spec.model.storageUri", "spec.model.storageUri must not be empty");
        expect_invalid("\"spec\":{\"inferenceService\":\"i\",\"model\":{\"storageUri\":\"s3://x\","
                       "\"memory\":\"1Gi\"}}",
                       "spec.model.framework", NULL);
        expect_invalid("\"spec\":{\"inferenceService\":\"i\",\"model\":{\"storageUri\":\"s3://x\","
                       "\"framework\":\"f\"}}",
                       "spec.model.memory", "spec.model.memory is required");
        expect_invalid(
                "\"spec\":{\"inferenceService\":\"i\",\"model\":{\"storageUri\":\"s3://x\","
                "\"framework\":\"f\",\"memory\":\"lots\"}}",
                "spec.model.memory",
                "spec.model.memory \"lots\" is not a valid quantity (e.g. \"128Mi\", \"1G\")");
        expect_invalid("\"spec\":{\"inferenceService\":\"i\",\"model\":{\"storageUri\":\"s3://x\","
                       "\"framework\":\"f\",\"memory\":\"-1Gi\"}}",
                       "spec.model.memory", "spec.model.memory \"-1Gi\" must not be negative");
        expect_invalid("\"spec\":{\"inferenceService\":\"i\",\"model\":{\"storageUri\":\"s3://x\","
                       "\"framework\":\"f\",\"memory\":true}}",
                       "spec.model.memory", NULL);
        expect_invalid("\"spec\":{\"inferenceService\":\"i\",\"model\":{\"storageUri\":\"s3://x\","
                       "\"framework\":\"f\",\"memory\":null}}",
                       "spec.model.memory", NULL);
}

Test(trainedmodel, invalid_keeps_parent)
{
        json_auto_t *v = load("{" META ",\"spec\":{\"inferenceService\":\"isvc\",\"model\":"
                              "{\"storageUri\":\"\",\"framework\":\"f\",\"memory\":\"1\"}}}");
        struct trained_model tm;

        cr_assert_eq(trained_model_from_json(v, &tm), 0);
        cr_assert_not(tm.valid);
        cr_assert_str_eq(tm.isvc, "isvc", "an invalid model still names its parent");
}

/* A parent name is a label value: at most 63 characters (issue 28 item 6). */
Test(trainedmodel, parent_name_over_a_label_value_is_invalid)
{
        static const char model[] =
                "\"model\":{\"storageUri\":\"s3://b/m\",\"framework\":\"f\",\"memory\":\"1\"}";
        char name[65], buf[512];
        struct trained_model tm;

        memset(name, 'a', 64);
        name[64] = '\0';
        (void)snprintf(buf, sizeof(buf), "\"spec\":{\"inferenceService\":\"%s\",%s}", name, model);
        expect_invalid(buf, "spec.inferenceService",
                       "spec.inferenceService must be no more than 63 characters, the limit of a "
                       "label value (it is the value of label inferenceservice); it has 64");
        name[63] = '\0';
        {
                char obj[1024];
                json_t *v;

                (void)snprintf(obj, sizeof(obj),
                               "{" META ",\"spec\":{\"inferenceService\":\"%s\",%s}}", name, model);
                v = load(obj);
                cr_assert_eq(trained_model_from_json(v, &tm), 0);
                cr_assert(tm.valid, "63 characters: %s", tm.invalid_message);
                json_decref(v);
        }
        name[63] = 'a';
        (void)snprintf(buf, sizeof(buf), "{" META ",\"spec\":{\"inferenceService\":\"%s\",%s}}",
                       name, model);
        {
                json_t *v = load(buf);

                cr_assert_eq(trained_model_from_json(v, &tm), 0);
                cr_assert_str_eq(tm.isvc, name, "an invalid model still names its parent");
                json_decref(v);
        }
}

Test(trainedmodel, zero_and_integer_memory)
{
        json_auto_t *v = load(
                "{" META ",\"spec\":{\"inferenceService\":\"i\",\"model\":"
                "{\"storageUri\":\"s3://x\",\"framework\":\"\",\"memory\":1073741824}}}");
        struct trained_model tm;
        char s[QUANTITY_STRING_MAX];

        cr_assert_eq(trained_model_from_json(v, &tm), 0);
        cr_assert(tm.valid, "%s", tm.invalid_message);
        cr_assert_str_eq(tm.framework, "", "an empty framework is free text");
        cr_assert_gt(quantity_to_string(&tm.memory, s, sizeof(s)), 0);
        cr_assert_str_eq(s, "1073741824");
}

Test(trainedmodel, nul_in_a_string_is_invalid_and_names_the_field)
{
        static const char *const fields[] = { "storageUri", "framework", "memory" };

        for (size_t i = 0; i < 3; i++) {
                json_auto_t *v = load("{" META ",\"spec\":{\"inferenceService\":\"isvc\",\"model\":"
                                      "{\"storageUri\":\"s3//m\",\"framework\":\"tf\","
                                      "\"memory\":\"1G\"}}}");
                json_t *model = json_object_get(json_object_get(v, "spec"), "model");
                struct trained_model tm;
                char want[128];

                cr_assert_eq(json_object_set_new(model, fields[i], json_stringn("1G\0x", 4)), 0);
                cr_assert_eq(trained_model_from_json(v, &tm), 0);
                cr_assert_not(tm.valid, "%s with a NUL must be invalid", fields[i]);
                (void)snprintf(want, sizeof(want), "spec.model.%s contains a NUL character",
                               fields[i]);
                cr_assert_str_eq(tm.invalid_message, want);
                (void)snprintf(want, sizeof(want), "spec.model.%s", fields[i]);
                cr_assert_str_eq(tm.invalid_field, want);
        }
}
