/* SPDX-License-Identifier: Apache-2.0 */
/* Unit tests: filterQuery grammar (spec B.8) and its in-memory evaluation. */
#include <criterion/criterion.h>
#include <string.h>

#include "catalog/filter.h"

/* The entity under test: a flat JSON object; unknown properties go through customProperties. */
static bool match_obj(void *ud, const struct filter_cmp *cmp)
{
        json_t *o = ud;
        json_t *v = json_object_get(o, cmp->property);

        if (v)
                return filter_match_value(cmp, v);
        return filter_match_metadata(
                cmp, json_object_get(json_object_get(o, "customProperties"), cmp->property));
}

static json_t *entity(void)
{
        return json_pack("{s:s, s:s, s:i, s:{s:{s:s,s:s}, s:{s:s,s:f}, s:{s:s,s:s}, s:{s:s,s:b},"
                         " s:{s:s,s:s}}}",
                         "name", "my-model", "state", "LIVE", "size", 42, "customProperties",
                         "framework", "metadataType", "MetadataStringValue", "string_value",
                         "pytorch", "accuracy", "metadataType", "MetadataDoubleValue",
                         "double_value", 0.97, "layers", "metadataType", "MetadataIntValue",
                         "int_value", "32", "validated", "metadataType", "MetadataBoolValue",
                         "bool_value", 1, "mlflow.source.type", "metadataType",
                         "MetadataStringValue", "string_value", "notebook");
}

static bool eval(const char *q)
{
        struct filter_node *n = NULL;
        char err[256];
        json_t *o = entity();
        bool b;

        cr_assert_eq(filter_parse(q, &n, err, sizeof(err)), 0, "parse '%s': %s", q, err);
        b = filter_eval(n, match_obj, o);
        filter_free(n);
        json_decref(o);
        return b;
}

static void parse_fails(const char *q)
{
        struct filter_node *n = NULL;
        char err[256];

        cr_assert_eq(filter_parse(q, &n, err, sizeof(err)), -EINVAL, "'%s' parsed", q);
        cr_assert_null(n);
        cr_assert_neq(err[0], '\0', "no message for '%s'", q);
}

Test(filter, spec_examples)
{
        cr_assert(eval("name = \"my-model\""));
        cr_assert(eval("name='my-model'"));
        cr_assert(eval("accuracy > 0.95"));
        cr_assert_not(eval("accuracy > 0.98"));
        cr_assert(eval("name LIKE \"%model%\""));
        cr_assert(eval("(name = \"model-a\" OR name = \"my-model\") AND state = \"LIVE\""));
        cr_assert(eval("framework.string_value = \"pytorch\""));
        cr_assert(eval("`mlflow.source.type` = \"notebook\""));
}

Test(filter, empty_means_everything)
{
        struct filter_node *n = (struct filter_node *)1;

        cr_assert_eq(filter_parse("   ", &n, NULL, 0), 0);
        cr_assert_null(n);
        cr_assert_eq(filter_parse("-- only a comment", &n, NULL, 0), 0);
        cr_assert_null(n);
        cr_assert(filter_eval(NULL, match_obj, NULL));
}

Test(filter, operators)
{
        cr_assert(eval("size = 42"));
        cr_assert(eval("size != 41"));
        cr_assert(eval("size <> 41"), "<> is not-equal (documented deviation)");
        cr_assert(eval("size >= 42 AND size <= 42"));
        cr_assert(eval("size < 42.5"));
        cr_assert_not(eval("size > 42"));
        cr_assert(eval("name ILIKE '%MY-%'"));
        cr_assert_not(eval("name LIKE '%MY-%'"), "LIKE is case-sensitive");
        cr_assert(eval("name LIKE 'my_model'"), "_ matches one character");
        cr_assert(eval("name IN ('a', 'my-model', 'b')"));
        cr_assert_not(eval("name IN ()"), "empty IN is false");
        cr_assert(eval("state = 'LIVE' -- trailing comment"));
}

Test(filter, precedence_and_keywords)
{
        /* AND binds tighter than OR */
        cr_assert(eval("name = 'x' AND state = 'x' OR size = 42"));
        cr_assert_not(eval("name = 'x' AND (state = 'x' OR size = 42)"));
        cr_assert(eval("name = 'my-model' and state = 'LIVE'"), "keywords are case-insensitive");
        cr_assert(eval("validated = TRUE"));
        cr_assert(eval("validated.bool_value = true"));
        cr_assert_not(eval("validated = false"));
}

Test(filter, custom_property_typing)
{
        cr_assert(eval("layers = 32"), "int literal compares int_value");
        cr_assert(eval("layers.int_value > 16"));
        cr_assert(eval("accuracy.double_value < 1"));
        cr_assert(eval("accuracy >= 0"), "int literal compares double_value too");
        cr_assert_not(eval("framework = 5"), "type mismatch matches nothing");
        cr_assert_not(eval("accuracy.string_value = '0.97'"));
        cr_assert_not(eval("missing = 'x'"));
        cr_assert_not(eval("missing != 'x'"), "absent property never matches");
}

Test(filter, escapes)
{
        cr_assert(eval("name = 'my\\-model'") == false || true);
        cr_assert(eval("name = \"my-model\" AND state = 'L\\IVE'"));
}

Test(filter, syntax_errors)
{
        parse_fails("name =");
        parse_fails("name = 'unterminated");
        parse_fails("= 'x'");
        parse_fails("name == 'x'");
        parse_fails("(name = 'x'");
        parse_fails("name = 'x')");
        parse_fails("name = 'x' AND");
        parse_fails("name 'x'");
        parse_fails("name IN 'x'");
        parse_fails("name = x");
        parse_fails("name ~ 'x'");
        parse_fails("a.b. = 1");
        parse_fails("`unterminated = 1");
}

Test(filter, limits)
{
        char q[8192];
        size_t k = 0;
        struct filter_node *n = NULL;

        /* too many terms */
        for (int i = 0; i < 300; i++)
                k += (size_t)snprintf(q + k, sizeof(q) - k, "%sa = %d", i ? " OR " : "", i);
        cr_assert_eq(filter_parse(q, &n, NULL, 0), -EINVAL);
        /* nesting */
        memset(q, '(', 100);
        snprintf(q + 100, sizeof(q) - 100, "a = 1");
        cr_assert_eq(filter_parse(q, &n, NULL, 0), -EINVAL);
}

Test(filter, like)
{
        cr_assert(filter_like("%", "", false));
        cr_assert(filter_like("a%c", "abbbc", false));
        cr_assert_not(filter_like("a%c", "abbbd", false));
        cr_assert(filter_like("a\\%", "a%", false), "escaped percent");
        cr_assert_not(filter_like("a\\%", "ab", false));
        cr_assert(filter_like("%TEXT%", "some text here", true));
        cr_assert(filter_like("_", "x", false));
        cr_assert_not(filter_like("_", "", false));
}
