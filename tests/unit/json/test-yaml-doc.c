/* SPDX-License-Identifier: Apache-2.0 */
/* json/yaml-doc: the one YAML reader: bounds, positions, YAML->JSON, dispatch tables. */
#include <criterion/criterion.h>
#include <errno.h>
#include <stddef.h>
#include <string.h>

#include "json/yaml-doc.h"

#define SIZE_MAX_TEST 4096

static const struct yaml_limits limits = {
        .size_max = SIZE_MAX_TEST,
        .depth_max = 8,
        .nodes_max = 1000,
        .cpu_usec_max = 5ULL * 1000000ULL,
};

static int load(struct ydoc *d, const char *text, struct error_detail *e)
{
        return ydoc_load(d, "t.yaml", text, strlen(text), &limits, e);
}

/* The whole document as compact JSON text (owned), or NULL with e filled. */
static char *as_json(const char *text, struct error_detail *e)
{
        struct ydoc d;
        json_t *v = NULL;
        char *s = NULL;

        if (load(&d, text, e) == 0 && ydoc_to_json(&d, ydoc_root(&d), &v, e) == 0)
                s = json_dumps(v, JSON_COMPACT | JSON_SORT_KEYS | JSON_ENCODE_ANY);
        json_decref(v);
        ydoc_release(&d);
        return s;
}

static void expect_json(const char *text, const char *want)
{
        struct error_detail e = { 0 };
        char *got = as_json(text, &e);

        cr_assert_not_null(got, "%s: %s", text, e.message);
        cr_assert_str_eq(got, want, "%s", text);
        free(got);
}

static void expect_refusal(const char *text, int r, unsigned line, const char *words)
{
        struct error_detail e = { 0 };
        char *got = as_json(text, &e);

        cr_assert_null(got, "%s gave %s", text, got);
        cr_assert_eq(e.error, r, "%s: %d %s", text, e.error, e.message);
        cr_assert_eq(e.kind, ERROR_INVALID);
        cr_assert_str_eq(e.file, "t.yaml");
        cr_assert_eq(e.line, line, "%s: line %u (%s)", text, e.line, e.message);
        cr_assert(strstr(e.message, words), "'%s' not in '%s'", words, e.message);
}

Test(yaml_doc, core_schema_scalars)
{
        expect_json("a: 1\nb: -2.5\nc: true\nd: ~\ne: '007'\nf: 007\ng: text\nh: \"true\"\n",
                    "{\"a\":1,\"b\":-2.5,\"c\":true,\"d\":null,\"e\":\"007\",\"f\":7,"
                    "\"g\":\"text\",\"h\":\"true\"}");
        expect_json("[1, [2, {x: y}], null]", "[1,[2,{\"x\":\"y\"}],null]");
}

Test(yaml_doc, anchors_aliases_and_merge_keys_as_before)
{
        /* aliases resolve to the anchored node; "<<" is an ordinary key (no merge semantics) */
        expect_json("base: &b {a: 1}\nuse: *b\nmerged:\n  <<: *b\n  c: 2\n",
                    "{\"base\":{\"a\":1},\"merged\":{\"<<\":{\"a\":1},\"c\":2},\"use\":{\"a\":1}}");
        expect_refusal("a: *nope\n", -EINVAL, 1, "invalid YAML: found undefined alias");
        expect_refusal("a: &x 1\nb: &x 2\n", -EINVAL, 2, "duplicate anchor");
}

Test(yaml_doc, bounds)
{
        char big[SIZE_MAX_TEST + 2];

        memset(big, 'a', sizeof(big) - 1);
        big[sizeof(big) - 1] = '\0';
        expect_refusal(big, -EFBIG, 0, "file too large (limit 4096 bytes)");
        expect_refusal("a: [[[[[[[[[1]]]]]]]]]\n", -E2BIG, 1, "nesting deeper than 8 levels");
        expect_refusal("a: 1\n---\nb: 2\n", -EINVAL, 2, "more than one YAML document");
        /* 4^5 leaves from 25 nodes: the visit budget stops the conversion, at an aliased node of
         * line 1 */
        expect_refusal("a: &a [x, x, x, x]\nb: &b [*a, *a, *a, *a]\nc: &c [*b, *b, *b, *b]\n"
                       "d: &d [*c, *c, *c, *c]\ne: &e [*d, *d, *d, *d]\n",
                       -E2BIG, 1, "too many YAML nodes (aliases expand past 1000)");
        {
                struct error_detail e = { 0 };
                struct ydoc d;

                cr_assert_eq(ydoc_load(&d, "t.yaml", "a: 1\0b", 6, &limits, &e), -EINVAL);
                cr_assert_str_eq(e.message, "file contains NUL bytes");
        }
}

Test(yaml_doc, syntax_errors_have_line_and_column)
{
        struct error_detail e = { 0 };
        struct ydoc d;
        char buf[256];

        cr_assert_eq(load(&d, "a: 1\nb: [1, 2\nc: 3\n", &e), -EINVAL);
        cr_assert_eq(e.line, 3, "%u", e.line);
        cr_assert_gt(e.column, 0);
        cr_assert_str_eq(error_detail_format(&e, buf, sizeof(buf)),
                         "t.yaml:3: invalid YAML: did not find expected ',' or ']' while parsing a "
                         "flow sequence");
}

Test(yaml_doc, empty_and_null_documents)
{
        struct error_detail e = { 0 };
        struct ydoc d;

        cr_assert_eq(load(&d, "", &e), 0);
        cr_assert_null(ydoc_root(&d));
        ydoc_release(&d);
        cr_assert_eq(load(&d, "# only a comment\n", &e), 0);
        cr_assert_null(ydoc_root(&d));
        ydoc_release(&d);
        cr_assert_eq(load(&d, "~\n", &e), 0);
        cr_assert(ynode_is_null(ydoc_root(&d)));
        ydoc_release(&d);
}

Test(yaml_doc, map_get)
{
        struct error_detail e = { 0 };
        struct ydoc d;
        yaml_node_t *root;

        cr_assert_eq(load(&d, "a: x\nb:\nc: 'null'\n[k]: v\nd: [1]\n", &e), 0, "%s", e.message);
        root = ydoc_root(&d);
        cr_assert_str_eq(ynode_scalar(ydoc_map_get(&d, root, "a")), "x");
        cr_assert_null(ydoc_map_get(&d, root, "b"), "a plain null is absent");
        cr_assert_str_eq(ynode_scalar(ydoc_map_get(&d, root, "c")), "null", "quoted: a string");
        cr_assert_null(ydoc_map_get(&d, root, "k"));
        cr_assert_eq(ydoc_map_get(&d, root, "d")->type, YAML_SEQUENCE_NODE);
        cr_assert_str_eq(ynode_kind(ydoc_map_get(&d, root, "d")), "a list");
        cr_assert_eq(ynode_line(ydoc_map_get(&d, root, "d")), 5);
        cr_assert_null(ydoc_map_get(&d, ydoc_map_get(&d, root, "a"), "a"), "not a mapping");
        ydoc_release(&d);
}

struct target {
        char *name;
        int enabled;
        json_t *extra;
};

static const struct yfield fields[] = {
        { "name", ydoc_field_string, offsetof(struct target, name) },
        { "enabled", ydoc_field_tristate, offsetof(struct target, enabled) },
        { "extra", ydoc_field_json, offsetof(struct target, extra) },
        { "ignored", NULL, 0 },
        { NULL, NULL, 0 },
};

static int dispatch(const char *text, struct target *t, struct error_detail *e)
{
        struct ydoc d;
        int r;

        *t = (struct target){ .enabled = -1 };
        r = load(&d, text, e);
        if (r == 0)
                r = ydoc_dispatch(&d, ydoc_root(&d), fields, t, e);
        ydoc_release(&d);
        return r;
}

static void target_release(struct target *t)
{
        free(t->name);
        json_decref(t->extra);
}

Test(yaml_doc, dispatch_tables)
{
        struct error_detail e = { 0 };
        struct target t;

        cr_assert_eq(dispatch("name: n\nenabled: True\nextra: {k: [1]}\nignored: [x]\n", &t, &e), 0,
                     "%s", e.message);
        cr_assert_str_eq(t.name, "n");
        cr_assert_eq(t.enabled, 1);
        cr_assert_eq(json_integer_value(json_array_get(json_object_get(t.extra, "k"), 0)), 1);
        target_release(&t);

        cr_assert_eq(dispatch("name: n\nbogus: 1\n", &t, &e), -EINVAL);
        cr_assert_eq(e.line, 2);
        cr_assert_str_eq(e.message, "unknown key 'bogus'");
        target_release(&t);
        cr_assert_eq(dispatch("name: n\nname: m\n", &t, &e), -EINVAL);
        cr_assert_str_eq(e.message, "duplicate key 'name'");
        target_release(&t);
        cr_assert_eq(dispatch("enabled: maybe\n", &t, &e), -EINVAL);
        cr_assert_str_eq(e.message, "expected true or false, got 'maybe'");
        target_release(&t);
        cr_assert_eq(dispatch("name: [a]\n", &t, &e), -EINVAL);
        cr_assert_str_eq(e.message, "expected a string, got a list");
        target_release(&t);
        cr_assert_eq(dispatch("- a\n", &t, &e), -EINVAL);
        cr_assert_str_eq(e.message, "expected a mapping, got a list");
        target_release(&t);
}

Test(yaml_doc, root_mapping)
{
        struct error_detail e = { 0 };
        yaml_node_t *root = (yaml_node_t *)&e; /* any non-NULL: must be reset */
        struct ydoc d;

        cr_assert_eq(load(&d, "", &e), 0);
        cr_assert_eq(ydoc_root_mapping(&d, "a config", &root, &e), 0);
        cr_assert_null(root);
        ydoc_release(&d);
        cr_assert_eq(load(&d, "\n- a\n", &e), 0);
        cr_assert_eq(ydoc_root_mapping(&d, "a config", &root, &e), -EINVAL);
        cr_assert_null(root);
        cr_assert_str_eq(e.message, "a config must be a mapping");
        cr_assert_eq(e.line, 2);
        ydoc_release(&d);
        cr_assert_eq(load(&d, "k: v\n", &e), 0);
        cr_assert_eq(ydoc_root_mapping(&d, "a config", &root, &e), 0);
        cr_assert_eq(root, ydoc_root(&d));
        ydoc_release(&d);
}

/* ---- the writer ---- */

/* v -> YAML -> JSON again: the same value (and the YAML text for the caller, owned). */
static char *round_trip(const json_t *v)
{
        struct error_detail e = { 0 };
        struct ydoc d;
        json_t *back = NULL;
        char *yaml = NULL;
        size_t len = 0;

        cr_assert_eq(ydoc_dump_json(v, 8, &yaml, &len), 0);
        cr_assert_eq(len, strlen(yaml));
        cr_assert_eq(ydoc_load(&d, "t.yaml", yaml, len, &limits, &e), 0, "%s\n%s", e.message, yaml);
        cr_assert_eq(ydoc_to_json(&d, ydoc_root(&d), &back, &e), 0, "%s", e.message);
        ydoc_release(&d);
        cr_assert(json_equal(v, back), "round trip changed the value:\n%s", yaml);
        json_decref(back);
        return yaml;
}

Test(yaml_doc, dump_round_trips_every_kind_and_quotes_what_would_change_type)
{
        json_t *v = json_loads(
                "{\"catalogs\": [{\"id\": \"a_1\", \"name\": \"A: the first\", \"enabled\": true,"
                " \"labels\": [], \"properties\": {\"yamlCatalogPath\": \"a.yaml\", \"n\": 3,"
                " \"f\": 1.5, \"none\": null}, \"includedModels\": [\"org/*\", \"-x\"]}],"
                " \"s\": [\"true\", \"yes\", \"No\", \"on\", \"OFF\", \"y\", \"null\", \"~\","
                " \"\", \"12\", \"1.5e3\", \"0x1F\", \"# not a comment\", \"a: b\", \"- c\","
                " \"*alias\", \"&anchor\", \"!tag\", \"'q'\", \"\\\"dq\\\"\", \"tab\\there\","
                " \"é ünïcode\", \"line1\\nline2\\n\", \"trailing space \"],"
                " \"true\": \"key that reads as a boolean\", \"{}\": {}, \"[]\": []}",
                0, NULL);
        char *yaml;

        cr_assert_not_null(v);
        yaml = round_trip(v);
        /* block style, a literal block for the line breaks, quotes only where needed */
        cr_assert_not_null(strstr(yaml, "catalogs:\n- id: a_1\n"), "%s", yaml);
        cr_assert_not_null(strstr(yaml, "- \"yes\"\n"), "%s", yaml);
        cr_assert_not_null(strstr(yaml, "  yamlCatalogPath: a.yaml\n"), "%s", yaml);
        cr_assert_not_null(strstr(yaml, "|"), "%s", yaml);
        free(yaml);
        json_decref(v);
}

Test(yaml_doc, dump_refuses_what_it_cannot_write)
{
        json_t *deep = json_array(), *nul = json_stringn("a\0b", 3);
        char *yaml = NULL;

        for (int i = 0; i < 10; i++)
                deep = json_pack("[o]", deep);
        cr_assert_eq(ydoc_dump_json(deep, 8, &yaml, NULL), -E2BIG);
        cr_assert_eq(ydoc_dump_json(nul, 8, &yaml, NULL), -EINVAL);
        cr_assert_null(yaml);
        json_decref(deep);
        json_decref(nul);
}
