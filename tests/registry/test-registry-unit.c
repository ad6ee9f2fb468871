/* SPDX-License-Identifier: Apache-2.0 */
/* Pure parts of the registry: base64, the filterQuery compiler, the codec. No I/O. */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "registry/base64.h"
#include "registry/codec.h"
#include "registry/filter.h"
#include "registry/kinds.h"

Test(base64, roundtrip_and_rejects)
{
        static const char *const in[] = { "", "f", "fo", "foo", "foob", "fooba", "foobar", "2:2" };
        static const char *const out[] = { "", "Zg==", "Zm8=", "Zm9v", "Zm9vYg==", "Zm9vYmE=", "Zm9vYmFy", "Mjoy" };

        for (size_t i = 0; i < sizeof(in) / sizeof(in[0]); i++) {
                char *e = base64_encode(in[i], strlen(in[i])), *d = NULL;
                size_t n;

                cr_assert_str_eq(e, out[i]);
                cr_assert_eq(base64_decode(e, &d, &n), 0);
                cr_assert_eq(n, strlen(in[i]));
                cr_assert_str_eq(d, in[i]);
                free(e);
                free(d);
        }
        {
                char *d = NULL;
                cr_assert_eq(base64_decode("abc", &d, NULL), -EINVAL);
                cr_assert_eq(base64_decode("ab=c", &d, NULL), -EINVAL);
                cr_assert_eq(base64_decode("a!==", &d, NULL), -EINVAL);
                cr_assert_eq(base64_decode("Zg==Zg==", &d, NULL), -EINVAL);
        }
}

static struct store_cond *compile_ok(const char *q)
{
        struct reg_error err = { 0 };
        struct store_cond *c = NULL;
        int r = reg_filter_compile(reg_kind(REG_REGISTERED_MODEL), q, &c, &err);

        cr_assert_eq(r, 0, "%s: %s", q, err.message);
        return c;
}

static void compile_bad(const char *q)
{
        struct reg_error err = { 0 };
        struct store_cond *c = NULL;

        cr_assert_lt(reg_filter_compile(reg_kind(REG_REGISTERED_MODEL), q, &c, &err), 0, "%s", q);
        cr_assert_eq(err.status, 400, "%s", q);
        cr_assert_null(c);
}

Test(filter, precedence_and_resolution)
{
        struct store_cond *c;

        cr_assert_null(compile_ok(""));
        cr_assert_null(compile_ok("  -- only a comment"));

        /* a = 1 OR b = 2 AND c = 3  ==  a OR (b AND c) */
        c = compile_ok("name = 'a' OR owner = 'b' AND x = 3");
        cr_assert_eq(c->kind, STORE_COND_OR);
        cr_assert_eq(c->left->kind, STORE_COND_CMP);
        cr_assert(c->left->is_column);
        cr_assert_eq(c->left->column, STORE_COL_NAME);
        cr_assert_eq(c->right->kind, STORE_COND_AND);
        cr_assert_str_eq(c->right->left->prop, "owner");
        cr_assert(!c->right->left->custom);
        cr_assert_str_eq(c->right->right->prop, "x");
        cr_assert(c->right->right->custom);
        cr_assert_eq(c->right->right->vcol, STORE_VCOL_INT_OR_DOUBLE);
        store_cond_free(c);

        c = compile_ok("licenseLink <> \"u\"");
        cr_assert_str_eq(c->prop, "license_link");
        cr_assert_eq(c->op, STORE_OP_NE);
        store_cond_free(c);

        c = compile_ok("a.b.c.double_value >= -1.5e3");
        cr_assert_str_eq(c->prop, "a.b.c");
        cr_assert_eq(c->vcol, STORE_VCOL_DOUBLE);
        cr_assert_eq(c->vals[0].type, STORE_DOUBLE);
        cr_assert_eq(c->vals[0].d, -1500.0);
        store_cond_free(c);

        c = compile_ok("`a.b` IN ('x', \"y\", 'z\\'q')");
        cr_assert_str_eq(c->prop, "a.b");
        cr_assert_eq(c->op, STORE_OP_IN);
        cr_assert_eq(c->n_vals, 3);
        cr_assert_str_eq(c->vals[2].s, "z'q");
        store_cond_free(c);

        c = compile_ok("id = 'abc'"); /* cannot match an integer column */
        cr_assert_eq(c->kind, STORE_COND_FALSE);
        store_cond_free(c);

        c = compile_ok("flag = TRUE");
        cr_assert_eq(c->vcol, STORE_VCOL_BOOL);
        cr_assert_eq(c->vals[0].i, 1);
        store_cond_free(c);
}

Test(filter, errors)
{
        compile_bad("name");
        compile_bad("name =");
        compile_bad("= 'x'");
        compile_bad("name = 'x' AND");
        compile_bad("(name = 'x'");
        compile_bad("name = 'x')");
        compile_bad("name = 'unterminated");
        compile_bad("name ~ 'x'");
        compile_bad("name IN 'x'");
        compile_bad("name IN ('a' 'b')");
        compile_bad("name = 99999999999999999999");
        compile_bad("a. = 1");
}

Test(codec, strict_decode)
{
        struct reg_input in = { 0 };
        struct reg_error err = { 0 };
        json_t *j = json_loads("{\"name\":\"n\",\"state\":\"ARCHIVED\",\"tasks\":[\"a\"],"
                               "\"customProperties\":{\"k\":{\"metadataType\":\"MetadataIntValue\",\"int_value\":\"7\"}}}",
                               0, NULL);

        cr_assert_eq(reg_decode(reg_kind(REG_REGISTERED_MODEL), REG_SCHEMA_CREATE, j, &in, &err), 0);
        cr_assert(in.has_name && in.has_custom);
        cr_assert_str_eq(store_entity_prop(&in.vals, "state", false)->s, "ARCHIVED");
        cr_assert_eq(store_entity_prop(&in.vals, "k", true)->i, 7);
        cr_assert_str_eq(store_entity_prop(&in.vals, "tasks", false)->s, "[\"a\"]");
        reg_input_done(&in);
        /* name is not part of the Update schema */
        cr_assert_lt(reg_decode(reg_kind(REG_REGISTERED_MODEL), REG_SCHEMA_UPDATE, j, &in, &err), 0);
        cr_assert_eq(err.status, 400);
        cr_assert_str_eq(err.message, "json: unknown field \"name\"");
        json_decref(j);
}

Test(codec, encode_shape)
{
        struct store_entity e = { .group = STORE_GROUP_ARTIFACT, .id = 12, .create_ms = 1714400000123,
                                  .update_ms = 1714400000124 };
        json_t *j;

        e.name = strdup("m");
        cr_assert_eq(store_entity_set_string(&e, "uri", false, STORE_P_STRING, "s3://x"), 0);
        cr_assert_eq(store_entity_set_int(&e, "n", true, -3), 0);
        cr_assert_eq(store_entity_set_string(&e, "st", true, STORE_P_STRUCT, "{\"a\":1}"), 0);
        j = reg_encode(reg_kind(REG_MODEL_ARTIFACT), &e);
        cr_assert_str_eq(json_string_value(json_object_get(j, "id")), "12");
        cr_assert_str_eq(json_string_value(json_object_get(j, "createTimeSinceEpoch")), "1714400000123");
        cr_assert_str_eq(json_string_value(json_object_get(j, "artifactType")), "model-artifact");
        cr_assert_null(json_object_get(j, "externalId"));
        cr_assert_null(json_object_get(j, "description"));
        cr_assert_str_eq(json_string_value(json_object_get(json_object_get(json_object_get(j, "customProperties"), "n"), "int_value")), "-3");
        cr_assert_str_eq(json_string_value(json_object_get(json_object_get(json_object_get(j, "customProperties"), "st"), "struct_value")), "{\"a\":1}");
        json_decref(j);
        store_entity_done(&e);
}
