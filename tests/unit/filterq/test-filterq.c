/* SPDX-License-Identifier: Apache-2.0 */
/* Unit tests: filterQuery grammar (spec B.8) and its in-memory evaluation. */
#include <criterion/criterion.h>
#include <string.h>

#include "filterq/eval.h"
#include "filterq/sql.h"

/* The entity under test: a flat JSON object; unknown properties go through customProperties. */
static int match_obj(void *ud, const struct filterq_cmp *cmp)
{
        json_t *o = ud;
        json_t *v = json_object_get(o, cmp->property);

        if (v)
                return filterq_match_value(cmp, v);
        return filterq_match_metadata(cmp, json_object_get(json_object_get(o, "customProperties"),
                                                           cmp->property));
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
        struct filterq_node *n = NULL;
        char err[256];
        json_t *o = entity();
        bool b;

        cr_assert_eq(filterq_parse(q, &n, err, sizeof(err)), 0, "parse '%s': %s", q, err);
        b = filterq_eval(n, match_obj, o) > 0;
        filterq_free(n);
        json_decref(o);
        return b;
}

static void parse_fails(const char *q)
{
        struct filterq_node *n = NULL;
        char err[256];

        cr_assert_eq(filterq_parse(q, &n, err, sizeof(err)), -EINVAL, "'%s' parsed", q);
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
        struct filterq_node *n = (struct filterq_node *)1;

        cr_assert_eq(filterq_parse("   ", &n, NULL, 0), 0);
        cr_assert_null(n);
        cr_assert_eq(filterq_parse("-- only a comment", &n, NULL, 0), 0);
        cr_assert_null(n);
        cr_assert_eq(filterq_eval(NULL, match_obj, NULL), 1);
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
        struct filterq_node *n = NULL;

        /* too many terms */
        for (int i = 0; i < 300; i++)
                k += (size_t)snprintf(q + k, sizeof(q) - k, "%sa = %d", i ? " OR " : "", i);
        cr_assert_eq(filterq_parse(q, &n, NULL, 0), -EINVAL);
        /* nesting */
        memset(q, '(', 100);
        snprintf(q + 100, sizeof(q) - 100, "a = 1");
        cr_assert_eq(filterq_parse(q, &n, NULL, 0), -EINVAL);
}

Test(filter, like)
{
        cr_assert(filterq_like("%", "", false));
        cr_assert(filterq_like("a%c", "abbbc", false));
        cr_assert_not(filterq_like("a%c", "abbbd", false));
        cr_assert(filterq_like("a\\%", "a%", false), "escaped percent");
        cr_assert_not(filterq_like("a\\%", "ab", false));
        cr_assert(filterq_like("%TEXT%", "some text here", true));
        cr_assert(filterq_like("_", "x", false));
        cr_assert_not(filterq_like("_", "", false));
}

/* ---- the tree ---- */

static struct filterq_node *parse_ok(const char *q)
{
        struct filterq_node *n = NULL;
        char err[256];

        cr_assert_eq(filterq_parse(q, &n, err, sizeof(err)), 0, "parse '%s': %s", q, err);
        cr_assert_not_null(n, "%s", q);
        return n;
}

Test(tree, chains_are_nary_and_precedence_holds)
{
        struct filterq_node *n = parse_ok("a = 1 AND b = 2 AND c = 3 OR d = 4 OR (e = 5 OR f = 6)");

        cr_assert_eq(n->kind, FILTERQ_OR);
        cr_assert_eq(n->n_kids, 3);
        cr_assert_eq(n->kids[0]->kind, FILTERQ_AND);
        cr_assert_eq(n->kids[0]->n_kids, 3);
        cr_assert_str_eq(n->kids[0]->kids[2]->cmp.property, "c");
        cr_assert_eq(n->kids[1]->kind, FILTERQ_CMP);
        cr_assert_eq(n->kids[2]->kind, FILTERQ_OR, "parentheses keep their own node");
        cr_assert_eq(n->kids[2]->n_kids, 2);
        filterq_free(n);
}

Test(tree, comparisons_literals_and_suffixes)
{
        struct filterq_node *n = parse_ok("a.b.c.double_value >= -1.5e3");

        cr_assert_str_eq(n->cmp.property, "a.b.c");
        cr_assert_eq(n->cmp.suffix, FILTERQ_SUFFIX_DOUBLE);
        cr_assert_eq(n->cmp.op, FILTERQ_OP_GE);
        cr_assert_eq(n->cmp.value.type, FILTERQ_LIT_FLOAT);
        cr_assert_eq(n->cmp.value.f, -1500.0);
        filterq_free(n);

        n = parse_ok("`a.b` IN ('x', \"y\", 'z\\'q', 7, true)");
        cr_assert_str_eq(n->cmp.property, "a.b");
        cr_assert_eq(n->cmp.suffix, FILTERQ_SUFFIX_NONE);
        cr_assert_eq(n->cmp.n_list, 5);
        cr_assert_str_eq(n->cmp.list[2].s, "z'q");
        cr_assert_eq(n->cmp.list[3].type, FILTERQ_LIT_INT);
        cr_assert_eq(n->cmp.list[3].i, 7);
        cr_assert_str_eq(n->cmp.list[3].s, "7", "numbers keep their text");
        cr_assert_eq(n->cmp.list[4].type, FILTERQ_LIT_BOOL);
        filterq_free(n);

        n = parse_ok("x.string_value.y = 1");
        cr_assert_str_eq(n->cmp.property, "x.string_value.y", "a suffix only ends the path");
        filterq_free(n);

        parse_fails("n = 99999999999999999999");
        parse_fails("n = 1e999");
}

static char *chain(unsigned n, const char *op)
{
        size_t cap = (size_t)n * 32 + 1, k = 0;
        char *q = malloc(cap);

        cr_assert_not_null(q);
        q[0] = '\0';
        for (unsigned i = 0; i < n; i++)
                k += (size_t)snprintf(q + k, cap - k, "%sp%u = %u", i ? op : "", i, i);
        return q;
}

Test(limits, comparisons_256_pass_257_fail)
{
        struct filterq_node *n = NULL;
        char err[256];
        char *q = chain(FILTERQ_CMP_MAX, " AND ");

        cr_assert_eq(filterq_parse(q, &n, err, sizeof(err)), 0, "%s", err);
        cr_assert_eq(n->kind, FILTERQ_AND);
        cr_assert_eq(n->n_kids, FILTERQ_CMP_MAX);
        filterq_free(n);
        free(q);

        q = chain(FILTERQ_CMP_MAX + 1, " OR ");
        n = NULL;
        cr_assert_eq(filterq_parse(q, &n, err, sizeof(err)), -EINVAL);
        cr_assert_null(n);
        cr_assert(strstr(err, "too many comparisons (limit 256)"), "%s", err);
        free(q);
}

Test(limits, depth_bytes_and_in_values)
{
        char q[FILTERQ_QUERY_MAX + 64], err[256];
        struct filterq_node *n = NULL;
        size_t k;

        /* 32 levels of parentheses pass, 33 fail */
        memset(q, '(', FILTERQ_DEPTH_MAX);
        k = FILTERQ_DEPTH_MAX;
        k += (size_t)snprintf(q + k, sizeof(q) - k, "a = 1");
        memset(q + k, ')', FILTERQ_DEPTH_MAX);
        q[k + FILTERQ_DEPTH_MAX] = '\0';
        cr_assert_eq(filterq_parse(q, &n, err, sizeof(err)), 0, "%s", err);
        n = filterq_free(n);
        memmove(q + 1, q, strlen(q) + 1);
        q[0] = '(';
        k = strlen(q);
        q[k] = ')';
        q[k + 1] = '\0';
        cr_assert_eq(filterq_parse(q, &n, err, sizeof(err)), -EINVAL);
        cr_assert(strstr(err, "too deep"), "%s", err);

        /* the byte limit */
        memset(q, ' ', FILTERQ_QUERY_MAX);
        memcpy(q, "a = 1", 5);
        q[FILTERQ_QUERY_MAX] = '\0';
        cr_assert_eq(filterq_parse(q, &n, err, sizeof(err)), 0, "%s", err);
        n = filterq_free(n);
        q[FILTERQ_QUERY_MAX] = ' ';
        q[FILTERQ_QUERY_MAX + 1] = '\0';
        cr_assert_eq(filterq_parse(q, &n, err, sizeof(err)), -EINVAL);
        cr_assert(strstr(err, "too long"), "%s", err);

        /* IN values */
        k = (size_t)snprintf(q, sizeof(q), "a IN (");
        for (unsigned i = 0; i < FILTERQ_IN_MAX; i++)
                k += (size_t)snprintf(q + k, sizeof(q) - k, "%s%u", i ? "," : "", i);
        (void)snprintf(q + k, sizeof(q) - k, ")");
        cr_assert_eq(filterq_parse(q, &n, err, sizeof(err)), 0, "%s", err);
        cr_assert_eq(n->cmp.n_list, FILTERQ_IN_MAX);
        n = filterq_free(n);
        (void)snprintf(q + k, sizeof(q) - k, ",9)");
        cr_assert_eq(filterq_parse(q, &n, err, sizeof(err)), -EINVAL);
        cr_assert(strstr(err, "IN list too long"), "%s", err);
}

/* ---- evaluation: type mismatches are a distinct result ---- */

static int compare(const char *q, int (*fn)(const struct filterq_cmp *, const json_t *),
                   const char *json)
{
        struct filterq_node *n = parse_ok(q);
        json_t *v = json_loads(json, JSON_DECODE_ANY, NULL);
        int r;

        cr_assert_not_null(v, "%s", json);
        r = fn(&n->cmp, v);
        json_decref(v);
        filterq_free(n);
        return r;
}

Test(eval, type_mismatch_is_edom)
{
        const char *hw = "{\"metadataType\":\"MetadataStringValue\",\"string_value\":\"gpu\"}";

        cr_assert_eq(compare("hardware_type.string_value = 5.0", filterq_compare_metadata, hw),
                     -EDOM);
        cr_assert_eq(compare("hardware_type.string_value = 'gpu'", filterq_compare_metadata, hw),
                     1);
        cr_assert_eq(compare("hardware_type.string_value = 'cpu'", filterq_compare_metadata, hw),
                     0);
        cr_assert_eq(compare("hardware_type.int_value = 'x'", filterq_compare_metadata, hw), -EDOM);
        cr_assert_eq(compare("hardware_type.bool_value = 1", filterq_compare_metadata, hw), -EDOM);
        cr_assert_eq(compare("hardware_type.int_value = 3", filterq_compare_metadata, hw), 0,
                     "another metadataType is no match, not a mismatch");
        cr_assert_eq(compare("hardware_type = 3", filterq_compare_metadata, hw), 0);

        cr_assert_eq(compare("name = 5", filterq_compare_value, "\"x\""), -EDOM);
        cr_assert_eq(compare("name LIKE 5", filterq_compare_value, "\"x\""), -EDOM);
        cr_assert_eq(compare("flag < true", filterq_compare_value, "true"), -EDOM);
        cr_assert_eq(compare("size = 'a'", filterq_compare_value, "3"), -EDOM);
        cr_assert_eq(compare("size IN ('a', 3)", filterq_compare_value, "3"), 1);
        cr_assert_eq(compare("size IN ('a', 4)", filterq_compare_value, "3"), 0);
        cr_assert_eq(compare("size IN ('a', 'b')", filterq_compare_value, "3"), -EDOM);
        cr_assert_eq(compare("size = 3", filterq_compare_value, "null"), 0);
}

static int mismatch_on_b(void *ud, const struct filterq_cmp *cmp)
{
        (*(int *)ud)++;
        return cmp->property[0] == 'b' ? -EDOM : cmp->property[0] == 't';
}

Test(eval, errors_propagate_and_short_circuit)
{
        struct filterq_node *n = parse_ok("t = 1 AND (f = 1 OR b = 1)");
        int calls = 0;

        cr_assert_eq(filterq_eval(n, mismatch_on_b, &calls), -EDOM);
        cr_assert_eq(calls, 3);
        filterq_free(n);
        n = parse_ok("f = 1 AND b = 1");
        calls = 0;
        cr_assert_eq(filterq_eval(n, mismatch_on_b, &calls), 0, "AND stops at the first false");
        cr_assert_eq(calls, 1);
        filterq_free(n);
        n = parse_ok("t = 1 OR b = 1");
        calls = 0;
        cr_assert_eq(filterq_eval(n, mismatch_on_b, &calls), 1, "OR stops at the first true");
        cr_assert_eq(calls, 1);
        filterq_free(n);
}

/* ---- the SQL back end ---- */

static const char *const states[] = { "UNKNOWN", "LIVE" };

static void resolve(void *ud, const char *name, struct filterq_sql_target *t)
{
        if (strcmp(name, "id") == 0) {
                t->is_column = true;
                t->column = STORE_COL_ID;
                t->vcol = STORE_VCOL_INT;
        } else if (strcmp(name, "state") == 0) {
                t->prop = "state";
                t->vcol = STORE_VCOL_STRING;
                t->enum_names = states;
                t->n_enum_names = 2;
        } else {
                t->custom = true;
                t->prop = name;
        }
}

static struct store_cond *lower(const char *q)
{
        struct filterq_node *n = parse_ok(q);
        struct store_cond *c = NULL;

        cr_assert_eq(filterq_sql_lower(n, resolve, NULL, &c), 0);
        filterq_free(n);
        cr_assert_not_null(c);
        return c;
}

Test(sql, lowering)
{
        struct store_cond *c = lower("id = 3 AND x = 1 AND y = 'a' OR state = 1");

        cr_assert_eq(c->kind, STORE_COND_OR);
        cr_assert_eq(c->n_kids, 2);
        cr_assert_eq(c->kids[0]->kind, STORE_COND_AND);
        cr_assert_eq(c->kids[0]->n_kids, 3);
        cr_assert(c->kids[0]->kids[0]->is_column);
        cr_assert_eq(c->kids[0]->kids[0]->vals[0].i, 3);
        cr_assert_eq(c->kids[0]->kids[1]->vcol, STORE_VCOL_INT_OR_DOUBLE);
        cr_assert(c->kids[0]->kids[1]->custom);
        cr_assert_str_eq(c->kids[0]->kids[2]->prop, "y");
        cr_assert_eq(c->kids[0]->kids[2]->vcol, STORE_VCOL_STRING);
        cr_assert_str_eq(c->kids[1]->vals[0].s, "LIVE", "enum index -> name");
        store_cond_free(c);

        c = lower("id = 'abc'");
        cr_assert_eq(c->kind, STORE_COND_FALSE, "cannot match an integer column");
        store_cond_free(c);
        c = lower("id LIKE '1%'");
        cr_assert_eq(c->kind, STORE_COND_FALSE);
        store_cond_free(c);
        c = lower("x IN ()");
        cr_assert_eq(c->kind, STORE_COND_FALSE);
        store_cond_free(c);
        c = lower("x.double_value IN (1, '2.5', 'z')");
        cr_assert_eq(c->vcol, STORE_VCOL_DOUBLE);
        cr_assert_eq(c->n_vals, 2, "unconvertible values drop out");
        cr_assert_eq(c->vals[1].d, 2.5);
        store_cond_free(c);
        c = lower("flag = TRUE");
        cr_assert_eq(c->vcol, STORE_VCOL_BOOL);
        cr_assert_eq(c->vals[0].i, 1);
        store_cond_free(c);
}

Test(errors, messages_are_ascii)
{
        static const char *const bad[] = { "\xc2\x95 = 1", "name = 1 \xf1\xab\x94\xbe", "\x01",
                                           "a ~ 1" };
        struct filterq_node *n = NULL;
        char err[256];

        for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
                cr_assert_eq(filterq_parse(bad[i], &n, err, sizeof(err)), -EINVAL);
                for (const char *c = err; *c; c++)
                        cr_assert((unsigned char)*c < 0x80, "non-ASCII in message: %s", err);
        }
        cr_assert_eq(filterq_parse("a ~ 1", &n, err, sizeof(err)), -EINVAL);
        cr_assert_str_eq(err, "unexpected character '~' at position 2");
        cr_assert_eq(filterq_parse("\xc2 = 1", &n, err, sizeof(err)), -EINVAL);
        cr_assert_str_eq(err, "unexpected byte 0xc2 at position 0");
}
