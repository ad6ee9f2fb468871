/* SPDX-License-Identifier: Apache-2.0 */
#include <criterion/criterion.h>
#include <string.h>

#include "serving/modelconfig.h"

#define M1 \
        "{\"modelName\":\"model1\",\"modelSpec\":{\"storageUri\":\"s3//model1\",\"framework\":\"framework1\",\"memory\":\"0\"}}"
#define M1_NEW \
        "{\"modelName\":\"model1\",\"modelSpec\":{\"storageUri\":\"s3//new-model1\",\"framework\":\"new-framework1\",\"memory\":\"0\"}}"
#define M2 \
        "{\"modelName\":\"model2\",\"modelSpec\":{\"storageUri\":\"s3//model2\",\"framework\":\"framework2\",\"memory\":\"0\"}}"
#define M3 \
        "{\"modelName\":\"model3\",\"modelSpec\":{\"storageUri\":\"s3//model3\",\"framework\":\"framework3\",\"memory\":\"0\"}}"

static void process(const char *before, const char *const *up, size_t n_up, const char *const *del,
                    size_t n_del, const char *want)
{
        CLEANUP(model_entries_release) struct model_entries u = { 0 };
        char err[256] = "", *after = NULL;

        for (size_t i = 0; i < n_up; i++) {
                char uri[64], fw[64];
                const char *name = up[i];
                bool fresh = strstr(name, "(new)") != NULL;
                char base[32];

                (void)snprintf(base, sizeof(base), "%.*s", (int)strcspn(name, "("), name);
                (void)snprintf(uri, sizeof(uri), "s3//%s%s", fresh ? "new-" : "", base);
                (void)snprintf(fw, sizeof(fw), "%sframework%s", fresh ? "new-" : "",
                               base + strlen("model"));
                cr_assert_eq(model_entries_upsert(&u, base, uri, fw, "0"), 0);
        }
        cr_assert_eq(modelconfig_process(before, &u, del, n_del, &after, err, sizeof(err)), 0, "%s",
                     err);
        cr_assert_str_eq(after, want);
        free(after);
}

/* §9.3 Process: upserts */
Test(modelconfig, process_upsert)
{
        static const char *const m1[] = { "model1" }, *const m2[] = { "model2" },
                                 *const m1n[] = { "model1(new)" };

        process(NULL, m1, 1, NULL, 0, "[" M1 "]");
        process("", m1, 1, NULL, 0, "[" M1 "]");
        process("[]", m1, 1, NULL, 0, "[" M1 "]");
        process("[" M1 "]", m2, 1, NULL, 0, "[" M1 "," M2 "]");
        process("[" M2 "," M1 "]", m1n, 1, NULL, 0, "[" M1_NEW "," M2 "]");
}

/* §9.3 Process: deletes and the mixed case */
Test(modelconfig, process_delete)
{
        static const char *const d1[] = { "model1" }, *const d2[] = { "model2" };
        static const char *const px_up[] = { "model1(new)", "model3" };

        process(NULL, NULL, 0, d1, 1, "[]");
        process("", NULL, 0, d1, 1, "[]");
        process("[]", NULL, 0, d1, 1, "[]");
        process("[" M2 "]", NULL, 0, d1, 1, "[" M2 "]");
        process("[" M1 "]", NULL, 0, d1, 1, "[]");
        process("[" M1 "," M2 "]", px_up, 2, d2, 1, "[" M1_NEW "," M3 "]");
}

/* §9.1 C2 and §9.2 M3: exact bytes, empty strings kept, zero memory "0". */
Test(modelconfig, serialize_exact_bytes)
{
        CLEANUP(model_entries_release) struct model_entries e = { 0 };
        char *s = NULL;
        size_t len = 0;

        cr_assert_eq(modelconfig_serialize(&e, &s, &len), 0);
        cr_assert_str_eq(s, "[]");
        cr_assert_eq(len, 2);
        free(s);

        cr_assert_eq(model_entries_upsert(&e, "model1-create", "s3//model1", "tensorflow", "1G"),
                     0);
        cr_assert_eq(modelconfig_serialize(&e, &s, NULL), 0);
        cr_assert_str_eq(s, "[{\"modelName\":\"model1-create\",\"modelSpec\":{\"storageUri\":"
                            "\"s3//model1\",\"framework\":\"tensorflow\",\"memory\":\"1G\"}}]");
        free(s);

        model_entries_release(&e);
        cr_assert_eq(model_entries_upsert(&e, "tm1", "gs://foo/bar", "", "0"), 0);
        cr_assert_eq(modelconfig_serialize(&e, &s, NULL), 0);
        cr_assert_str_eq(s,
                         "[{\"modelName\":\"tm1\",\"modelSpec\":{\"storageUri\":\"gs://foo/bar\","
                         "\"framework\":\"\",\"memory\":\"0\"}}]");
        free(s);
}

/* W1: sorted by modelName, byte-wise. */
Test(modelconfig, sorted_by_name)
{
        CLEANUP(model_entries_release) struct model_entries e = { 0 };
        char *s = NULL;

        cr_assert_eq(model_entries_upsert(&e, "b", "u", "f", "0"), 0);
        cr_assert_eq(model_entries_upsert(&e, "a", "u", "f", "0"), 0);
        cr_assert_eq(model_entries_upsert(&e, "B", "u", "f", "0"), 0);
        cr_assert_eq(modelconfig_serialize(&e, &s, NULL), 0);
        cr_assert_str_eq(
                s,
                "[{\"modelName\":\"B\",\"modelSpec\":{\"storageUri\":\"u\",\"framework\":\"f\",\"memory\":\"0\"}},"
                "{\"modelName\":\"a\",\"modelSpec\":{\"storageUri\":\"u\",\"framework\":\"f\",\"memory\":\"0\"}},"
                "{\"modelName\":\"b\",\"modelSpec\":{\"storageUri\":\"u\",\"framework\":\"f\",\"memory\":\"0\"}}]");
        cr_assert_str_eq(e.items[0].name, "b", "serialisation does not reorder the entries");
        free(s);
}

/* §6.2: Go's encoding/json escaping, HTML-safe. */
Test(modelconfig, go_escaping)
{
        CLEANUP(model_entries_release) struct model_entries e = { 0 };
        char *s = NULL;

        cr_assert_eq(model_entries_upsert(&e, "m", "s3://b/<a>&\"q\"\\",
                                          "tab\there\n\r\b\f\x01\x1f\x7f",
                                          "\xe2\x80\xa8\xe2\x80\xa9\xc3\xa9"),
                     0);
        cr_assert_eq(modelconfig_serialize(&e, &s, NULL), 0);
        cr_assert_str_eq(s, "[{\"modelName\":\"m\",\"modelSpec\":{\"storageUri\":"
                            "\"s3://b/\\u003ca\\u003e\\u0026\\\"q\\\"\\\\\",\"framework\":"
                            "\"tab\\there\\n\\r\\b\\f\\u0001\\u001f\x7f\",\"memory\":"
                            "\"\\u2028\\u2029\xc3\xa9\"}}]");
        cr_assert_eq(modelconfig_entry_size(&e.items[0]), strlen(s) - 2);
        free(s);
}

Test(modelconfig, parse)
{
        CLEANUP(model_entries_release) struct model_entries e = { 0 };
        char err[256] = "";

        cr_assert_eq(
                modelconfig_parse("[{\"MODELNAME\":\"a\",\"modelspec\":{\"StorageUri\":\"s3://x\","
                                  "\"framework\":\"f\",\"memory\":\"1000M\",\"extra\":1},\"x\":2},"
                                  "{\"modelName\":\"b\"},null,"
                                  "{\"modelName\":\"a\",\"modelSpec\":{\"storageUri\":\"s3://y\","
                                  "\"memory\":1024}}]",
                                  &e, err, sizeof(err)),
                0, "%s", err);
        cr_assert_eq(e.n, 2);
        cr_assert_str_eq(model_entries_get(&e, "a")->storage_uri, "s3://y", "later duplicates win");
        cr_assert_str_eq(model_entries_get(&e, "a")->memory, "1024");
        cr_assert_str_eq(model_entries_get(&e, "b")->framework, "");
        cr_assert_str_eq(model_entries_get(&e, "b")->memory, "0");
        model_entries_release(&e);

        cr_assert_eq(
                modelconfig_parse("[{\"modelName\":\"a\",\"modelSpec\":{\"memory\":\"1000M\"}}]",
                                  &e, err, sizeof(err)),
                0);
        cr_assert_str_eq(e.items[0].memory, "1G", "memory is kept in String() form");
        model_entries_release(&e);

        cr_assert_eq(modelconfig_parse("{", &e, err, sizeof(err)), -EINVAL);
        cr_assert_neq(err[0], '\0');
        cr_assert_eq(modelconfig_parse("{}", &e, err, sizeof(err)), -EINVAL);
        cr_assert_eq(modelconfig_parse("[1]", &e, err, sizeof(err)), -EINVAL);
        cr_assert_eq(modelconfig_parse("[{\"modelName\":5}]", &e, err, sizeof(err)), -EINVAL);
        cr_assert_eq(modelconfig_parse("[{\"modelName\":\"a\",\"modelSpec\":{\"memory\":\"x\"}}]",
                                       &e, err, sizeof(err)),
                     -EINVAL);
        cr_assert_eq(modelconfig_parse(NULL, &e, NULL, 0), 0);
        cr_assert_eq(e.n, 0);
}

Test(modelconfig, invalid_before_is_an_error)
{
        char err[256] = "", *after = NULL;

        cr_assert_eq(modelconfig_process("not json", NULL, NULL, 0, &after, err, sizeof(err)),
                     -EINVAL);
        cr_assert_null(after);
}

/* W4: greedy fit in priority order. */
Test(modelconfig, fit)
{
        CLEANUP(model_entries_release) struct model_entries e = { 0 };
        bool fits[3];
        size_t order[] = { 2, 0, 1 }, one, total;

        cr_assert_eq(model_entries_upsert(&e, "a", "s3://aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
                                          "f", "1"),
                     0);
        cr_assert_eq(model_entries_upsert(&e, "b", "s3://b", "f", "1"), 0);
        cr_assert_eq(model_entries_upsert(&e, "c", "s3://c", "f", "1"), 0);
        one = modelconfig_entry_size(&e.items[2]);

        total = modelconfig_fit(&e, order, 3, 2 + one + 1 + one, fits);
        cr_assert(fits[2]);
        cr_assert_not(fits[0], "a is larger than the budget left");
        cr_assert(fits[1], "a smaller later entry still fits");
        cr_assert_eq(total, 2 + 2 * one + 1);

        total = modelconfig_fit(&e, order, 3, 2, fits);
        cr_assert_not(fits[0] || fits[1] || fits[2]);
        cr_assert_eq(total, 2);
}

/* §9.3 E1 and W3: the ConfigMap created for a multi-model parent. */
Test(modelconfig, configmap_new)
{
        struct isvc_info info = { .name = "foo", .namespace_ = "default" };
        json_auto_t *labels = json_pack("{s:s}", "app", "x");
        json_auto_t *cm = modelconfig_configmap_new(&info, "[]");
        char *s;

        cr_assert_not_null(cm);
        s = json_dumps(cm, JSON_COMPACT);
        cr_assert_str_eq(s, "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":"
                            "\"modelconfig-foo-0\",\"namespace\":\"default\"},\"data\":"
                            "{\"models.json\":\"[]\"}}");
        free(s);
        json_decref(cm);

        info.labels = labels;
        info.uid = "uid-1";
        cm = modelconfig_configmap_new(&info, "[]");
        s = json_dumps(cm, JSON_COMPACT | JSON_SORT_KEYS);
        cr_assert_str_eq(s,
                         "{\"apiVersion\":\"v1\",\"data\":{\"models.json\":\"[]\"},\"kind\":"
                         "\"ConfigMap\",\"metadata\":{\"labels\":{\"app\":\"x\"},\"name\":"
                         "\"modelconfig-foo-0\",\"namespace\":\"default\",\"ownerReferences\":"
                         "[{\"apiVersion\":\"serving.kserve.io/v1beta1\",\"blockOwnerDeletion\":"
                         "true,\"controller\":true,\"kind\":\"InferenceService\",\"name\":\"foo\","
                         "\"uid\":\"uid-1\"}]}}");
        free(s);
}

Test(modelconfig, name)
{
        char buf[MODELCONFIG_NAME_MAX];

        cr_assert_eq(modelconfig_name("my-isvc", buf, sizeof(buf)), 0);
        cr_assert_str_eq(buf, "modelconfig-my-isvc-0");
        cr_assert_eq(modelconfig_name("my-isvc", buf, 8), -ENAMETOOLONG);
}

Test(modelconfig, parse_sorts_and_finds)
{
        CLEANUP(model_entries_release) struct model_entries e = { 0 };

        cr_assert_eq(modelconfig_parse(
                             "[{\"modelName\":\"c\"},{\"modelName\":\"a\"},{\"modelName\":\"b\"},"
                             "{\"modelName\":\"a\",\"modelSpec\":{\"framework\":\"last\"}}]",
                             &e, NULL, 0),
                     0);
        cr_assert_eq(e.n, 3);
        cr_assert_str_eq(e.items[0].name, "a");
        cr_assert_str_eq(e.items[2].name, "c");
        cr_assert_str_eq(model_entries_find_sorted(&e, "a")->framework, "last");
        cr_assert_not_null(model_entries_find_sorted(&e, "c"));
        cr_assert_null(model_entries_find_sorted(&e, "d"));
        cr_assert_null(model_entries_find_sorted(&e, ""));
}
