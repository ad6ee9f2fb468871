/* SPDX-License-Identifier: Apache-2.0 */
/* catalog/wire.c writes the bytes jansson's compact, ordered dump gives. */
#include <criterion/criterion.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "catalog/wire.h"

static json_t *parse(const char *text)
{
        json_error_t e;
        json_t *v = json_loads(text, JSON_DECODE_ANY | JSON_ALLOW_NUL, &e);

        cr_assert_not_null(v, "%s: %s", text, e.text);
        return v;
}

Test(wire, same_bytes_as_jansson)
{
        static const char *const values[] = {
                "{}",
                "[]",
                "{\"a\":[1,-2,true,false,null,\"\"],\"b\":{\"c\":{}},\"z\":[[],{}]}",
                "\"quote \\\" backslash \\\\ slash / tab \\t nl \\n cr \\r bs \\b ff \\f\"",
                "\"controls \\u0001 \\u001f \\u0000 del \\u007f\"",
                "\"utf-8 \\u00e9 \\u4e2d \\ud83d\\ude00 \\u2028\"",
                "{\"k\\u0002\\\"\":\"v\"}",
                "9223372036854775807",
                "-9223372036854775808",
        };

        for (size_t i = 0; i < sizeof(values) / sizeof(values[0]); i++) {
                json_t *v = parse(values[i]);
                char *want = json_dumps(v, JSON_COMPACT | JSON_PRESERVE_ORDER | JSON_ENCODE_ANY);
                struct buf b = BUF_INIT(SIZE_MAX);

                cr_assert_eq(catalog_wire_append(&b, v), 0, "%s", values[i]);
                cr_assert_eq(b.len, strlen(want));
                cr_assert_eq(memcmp(b.p, want, b.len), 0, "%s vs %s", b.p, want);
                buf_release(&b);
                free(want);
                json_decref(v);
        }
}

/* What the index served before this module: a copy of the model with the three keys set. */
static char *model_by_jansson(const json_t *model, const char *id, const char *source_id)
{
        json_t *wire = json_copy((json_t *)model), *strings = json_object(), *v;
        const char *k;
        char *text;

        json_object_foreach(json_object_get(model, "customProperties"), k, v) {
                const char *t = json_string_value(json_object_get(v, "metadataType"));

                if (t && strcmp(t, "MetadataStringValue") == 0)
                        json_object_set(strings, k, v);
        }
        json_object_set_new(wire, "id", json_string(id));
        json_object_set_new(wire, "source_id", json_string(source_id));
        json_object_set_new(wire, "customProperties", strings);
        text = json_dumps(wire, JSON_COMPACT | JSON_PRESERVE_ORDER);
        json_decref(wire);
        return text;
}

Test(wire, model_same_bytes_as_a_dumped_copy)
{
        static const char *const models[] = {
                "{\"name\":\"m\",\"customProperties\":{\"s\":{\"metadataType\":"
                "\"MetadataStringValue\",\"string_value\":\"x\"},\"i\":{\"metadataType\":"
                "\"MetadataIntValue\",\"int_value\":\"3\"}},\"tasks\":[\"a\"]}",
                "{\"name\":\"no custom\",\"provider\":\"p\"}",
                "{\"id\":\"old\",\"name\":\"n\",\"source_id\":\"s0\",\"customProperties\":7}",
                "{}",
        };

        for (size_t i = 0; i < sizeof(models) / sizeof(models[0]); i++) {
                json_t *m = parse(models[i]);
                char *want = model_by_jansson(m, "12", "src \"1\"");
                char *got = NULL;
                size_t len = 0;

                struct catalog_record *rec = NULL;

                cr_assert_eq(catalog_record_from_json(m, &rec), 0);
                cr_assert_eq(catalog_wire_model(rec, "12", "src \"1\"", &got, &len), 0);
                cr_assert_str_eq(got, want);
                cr_assert_eq(len, strlen(want));
                free(got);
                free(want);
                catalog_record_unref(rec);
                json_decref(m);
        }
}

Test(wire, reals_are_left_to_jansson)
{
        json_t *m = parse("{\"name\":\"m\",\"score\":[1.5]}");
        struct buf b = BUF_INIT(SIZE_MAX);
        char *got = NULL;
        size_t len = 0;

        cr_assert_eq(catalog_wire_append(&b, m), -ENOTSUP);
        struct catalog_record *rec = NULL;

        cr_assert_eq(catalog_record_from_json(m, &rec), 0);
        cr_assert_eq(catalog_wire_model(rec, "1", "s", &got, &len), -ENOTSUP);
        cr_assert_null(got);
        catalog_record_unref(rec);
        buf_release(&b);
        json_decref(m);
}

Test(wire, size_limit)
{
        json_t *v = parse("[\"0123456789abcdef\"]");
        struct buf b = BUF_INIT(8);

        cr_assert_eq(catalog_wire_append(&b, v), -E2BIG);
        buf_release(&b);
        json_decref(v);
}
