/* SPDX-License-Identifier: Apache-2.0 */
/* Unit tests: the strict sources-file parser, the YAML catalog loader, limits and globs. */
#include <criterion/criterion.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "catalog-fixture.h"
#include "catalog/glob.h"
#include "catalog/limits.h"
#include "catalog/service.h"
#include "catalog/sources.h"
#include "catalog/yaml-catalog.h"
#include "util/buf.h"

static int parse_config(const char *text, struct catalog_config *c, struct error_detail *e)
{
        return catalog_config_parse("test.yaml", text, strlen(text), c, e);
}

Test(sources, fixture_parses)
{
        char *p = catalog_fixture_path("sources.yaml");
        struct catalog_config c = { 0 };
        struct error_detail e = { 0 };
        const struct catalog_source_config *s;

        cr_assert_eq(catalog_config_load(&p, 1, &c, &e), 0, "load failed: %s", e.message);
        cr_assert_eq(c.n_sources, 8);
        s = catalog_config_find(&c, "acme_models");
        cr_assert_not_null(s);
        cr_assert_str_eq(s->name, "Acme Models");
        cr_assert_eq(s->enabled, 1);
        cr_assert_eq(catalog_strv_length(s->labels), 2);
        cr_assert_str_eq(s->excluded[0], "*-draft");
        s = catalog_config_find(&c, "community_models");
        cr_assert_eq(s->enabled, 1, "enabled defaults to true");
        cr_assert_eq(catalog_strv_length(s->labels), 0, "labels default to []");
        cr_assert_eq(catalog_config_find(&c, "disabled_models")->enabled, 0);
        cr_assert(catalog_config_find(&c, "acme_mcp")->is_mcp);
        cr_assert_eq(json_array_size(c.labels), 4);
        cr_assert(json_is_null(json_object_get(json_array_get(c.labels, 3), "name")));
        cr_assert_str_eq(json_string_value(
                                 json_object_get(json_object_get(c.named_queries, "low_latency"),
                                                 "assetType")),
                         "models");
        {
                char *path = NULL;

                cr_assert_eq(catalog_source_yaml_path(catalog_config_find(&c, "acme_models"),
                                                      &path),
                             0);
                cr_assert(strstr(path, "tests/fixtures/catalog/acme-models.yaml"),
                          "relative path resolved against the sources file: %s", path);
                free(path);
        }
        catalog_config_release(&c);
        free(p);
}

Test(sources, later_file_overrides_field_by_field)
{
        char *files[2] = { catalog_fixture_path("sources.yaml"),
                           catalog_fixture_path("override.yaml") };
        struct catalog_config c = { 0 };
        struct error_detail e = { 0 };
        const struct catalog_source_config *s;
        json_t *v;

        cr_assert_eq(catalog_config_load(files, 2, &c, &e), 0, "load failed: %s", e.message);
        cr_assert_eq(c.n_sources, 8, "override adds no source");
        s = catalog_config_find(&c, "community_models");
        cr_assert_eq(catalog_strv_length(s->labels), 1);
        cr_assert_str_eq(s->labels[0], "Community");
        cr_assert_str_eq(s->name, "Community Models", "fields not set in the override stay");
        s = catalog_config_find(&c, "disabled_models");
        cr_assert_str_eq(s->name, "Disabled Models (renamed)");
        cr_assert_eq(s->enabled, 0, "enabled keeps the earlier value");
        cr_assert_not_null(s->properties, "properties keep the earlier value");
        v = json_object_get(json_object_get(json_object_get(json_object_get(c.named_queries,
                                                                            "low_latency"),
                                                            "filters"),
                                            "ttft_p90"),
                            "value");
        cr_assert_eq(json_integer_value(v), 80);
        catalog_config_release(&c);
        free(files[0]);
        free(files[1]);
}

Test(sources, a_missing_later_file_adds_nothing_a_missing_first_file_fails)
{
        char *files[2] = { catalog_fixture_path("sources.yaml"),
                           catalog_fixture_path("no-such-dir/sources.yaml") };
        char *swapped[2] = { files[1], files[0] };
        struct catalog_config c = { 0 };
        struct error_detail e = { 0 };

        cr_assert_eq(catalog_config_load(files, 2, &c, &e), 0, "load failed: %s", e.message);
        cr_assert_eq(c.n_sources, 8);
        catalog_config_release(&c);
        cr_assert_lt(catalog_config_load(swapped, 2, &c, &e), 0, "the first file is required");
        cr_assert_not_null(strstr(e.file, "no-such-dir"), "%s", e.file);
        free(files[0]);
        free(files[1]);
}

Test(sources, unknown_key_names_file_and_line)
{
        struct catalog_config c = { 0 };
        struct error_detail e = { 0 };

        cr_assert_eq(parse_config("model_catalogs:\n"
                                  "  - id: a\n"
                                  "    type: yaml\n"
                                  "    enabeld: true\n",
                                  &c, &e),
                     -EINVAL);
        cr_assert_str_eq(e.file, "test.yaml");
        cr_assert_eq(e.line, 4, "line %u", e.line);
        cr_assert(strstr(e.message, "unknown key 'enabeld'"), "%s", e.message);

        cr_assert_eq(parse_config("model_catalogs: []\nsourcez: 1\n", &c, &e), -EINVAL);
        cr_assert_eq(e.line, 2);
        cr_assert(strstr(e.message, "sourcez"));
}

Test(sources, malformed_yaml_names_line)
{
        struct catalog_config c = { 0 };
        struct error_detail e = { 0 };
        char buf[1500];

        cr_assert_eq(parse_config("model_catalogs:\n"
                                  "  - id: a\n"
                                  "    name: \"unterminated\n"
                                  "    type: yaml\n",
                                  &c, &e),
                     -EINVAL);
        cr_assert_str_eq(e.file, "test.yaml");
        cr_assert_geq(e.line, 3, "line %u", e.line);
        error_detail_format(&e, buf, sizeof(buf));
        cr_assert(strneq(buf, "test.yaml:", 10), "%s", buf);
}

Test(sources, validation_errors)
{
        static const char *const bad[] = {
                "model_catalogs:\n  - name: no id\n",
                "model_catalogs:\n  - id: a\n  - id: a\n",
                "model_catalogs:\n  - id: a\nmcp_catalogs:\n  - id: a\n",
                "model_catalogs:\n  - id: a\n    includedModels: ['  ']\n",
                "model_catalogs:\n  - id: a\n    includedModels: ['x/*']\n    excludedModels: ['x/*']\n",
                "model_catalogs:\n  - id: a\n    enabled: maybe\n",
                "model_catalogs:\n  - id: a\n    assetType: pictures\n",
                "model_catalogs:\n  - id: a\n    id: b\n",
                "namedQueries:\n  q: {f: {operator: '~', value: 1}}\n",
                "namedQueries:\n  q: {f: {operator: '=', value: 1, extra: 2}}\n",
                "namedQueries:\n  q: {assetType: models, filters: {}}\n",
                "labels:\n  - displayName: no name\n",
                "- just a list\n",
        };

        for (size_t i = 0; i < ELEMENTSOF(bad); i++) {
                struct catalog_config c = { 0 };
                struct error_detail e = { 0 };

                cr_assert_eq(parse_config(bad[i], &c, &e), -EINVAL, "case %zu accepted: %s", i,
                             bad[i]);
                cr_assert_neq(e.message[0], '\0', "case %zu has no message", i);
        }
}

Test(sources, named_query_error_names_its_line)
{
        struct catalog_config c = { 0 };
        struct error_detail e = { 0 };

        cr_assert_eq(parse_config("namedQueries:\n"
                                  "  good: {f: {operator: '=', value: 1}}\n"
                                  "  bad: {f: {operator: '~', value: 1}}\n",
                                  &c, &e),
                     -EINVAL);
        cr_assert_eq(e.line, 3, "line %u: %s", e.line, e.message);
        cr_assert(strstr(e.message, "'bad'"), "%s", e.message);
}

Test(sources, legacy_catalogs_key_merges)
{
        struct catalog_config c = { 0 };
        struct error_detail e = { 0 };

        cr_assert_eq(parse_config("model_catalogs:\n  - {id: a, name: New}\n"
                                  "catalogs:\n  - {id: a, name: Old}\n  - {id: b, name: B}\n",
                                  &c, &e),
                     0, "%s", e.message);
        cr_assert_eq(c.n_sources, 2);
        cr_assert_str_eq(catalog_config_find(&c, "a")->name, "New");
        catalog_config_release(&c);
}

Test(sources, oversized_file_is_rejected)
{
        char path[] = "/tmp/catalog-big-XXXXXX";
        struct catalog_config c = { 0 };
        struct catalog_models *m = NULL;
        struct error_detail e = { 0 };
        int fd = mkstemp(path);

        cr_assert_geq(fd, 0);
        /* sparse: costs no disk */
        cr_assert_eq(ftruncate(fd, (off_t)CATALOG_FILE_MAX + 1), 0);
        close(fd);
        cr_assert_eq(catalog_config_load_file(path, &c, &e), -EFBIG);
        cr_assert(strstr(e.message, "too large"), "%s", e.message);
        cr_assert_eq(catalog_models_load_file(path, &m, &e), -EFBIG);
        cr_assert_null(m);
        unlink(path);
}

Test(sources, too_many_sources)
{
        char *text = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&text, &len);
        struct catalog_config c = { 0 };
        struct error_detail e = { 0 };

        fprintf(f, "model_catalogs:\n");
        for (unsigned i = 0; i <= CATALOG_SOURCES_MAX; i++)
                fprintf(f, "  - id: s%u\n", i);
        fclose(f);
        cr_assert_eq(parse_config(text, &c, &e), -E2BIG);
        free(text);
}

/* ---- catalog files ---- */

static int parse_models(const char *text, struct catalog_models **m, struct error_detail *e)
{
        return catalog_models_parse("models.yaml", text, strlen(text), m, e);
}

Test(catalog_file, fixture_parses)
{
        char *p = catalog_fixture_path("acme-models.yaml");
        struct catalog_models *m = NULL;
        struct error_detail e = { 0 };
        json_t *alpha, *cp;

        cr_assert_eq(catalog_models_load_file(p, &m, &e), 0, "%s", e.message);
        cr_assert_eq(m->n, 5);
        cr_assert_str_eq(m->v[0].name, "alpha-model");
        alpha = catalog_record_to_json(m->v[0].rec);
        cr_assert_str_eq(json_string_value(json_object_get(alpha, "createTimeSinceEpoch")),
                         "1736899200000");
        cp = json_object_get(json_object_get(alpha, "customProperties"), "context_window");
        cr_assert_str_eq(json_string_value(json_object_get(cp, "int_value")), "8192");
        cr_assert_eq(m->v[0].n_artifacts, 4);
        cr_assert_str_eq(json_string_value(
                                 catalog_record_get(m->v[0].artifacts[0], "artifactType")),
                         "model-artifact");
        cr_assert_str_eq(json_string_value(catalog_record_get(m->v[0].artifacts[1], "metricsType")),
                         "performance-metrics");
        cr_assert_null(m->v[0].artifacts_json, "the loader builds records only");
        json_decref(alpha);
        catalog_models_unref(m);
        free(p);
}

Test(catalog_file, broken_fixture_names_file_and_line)
{
        char *p = catalog_fixture_path("broken-models.yaml");
        struct catalog_models *m = NULL;
        struct error_detail e = { 0 };

        cr_assert_eq(catalog_models_load_file(p, &m, &e), -EINVAL);
        cr_assert(strstr(e.file, "broken-models.yaml"));
        cr_assert_eq(e.line, 6, "line %u (%s)", e.line, e.message);
        free(p);
}

Test(catalog_file, strictness)
{
        static const char *const bad[] = {
                "models:\n  - name: a\n    colour: red\n",
                "models:\n  - description: no name\n",
                "models:\n  - name: a\n  - name: a\n",
                "models:\n  - name: a\n    artifacts:\n      - name: no uri\n",
                "models:\n  - name: a\n    artifacts:\n      - uri: not a uri\n",
                "models:\n  - name: a\n    artifacts:\n      - {artifactType: dataset-artifact, uri: 's3://x'}\n",
                "models:\n  - name: a\n    artifacts:\n      - {artifactType: metrics-artifact}\n",
                "models:\n  - name: a\n    customProperties:\n      x: {metadataType: MetadataFooValue, string_value: y}\n",
                "models:\n  - name: a\n    customProperties:\n      x: {metadataType: MetadataIntValue, int_value: abc}\n",
                "models:\n  - name: a\n    createTimeSinceEpoch: yesterday\n",
                "models:\n  - name: a\n    tasks: text\n",
                "models: {name: a}\n",
                "source: x\nextra: 1\n",
                "models:\n  - name: a\n---\nmodels: []\n",
        };

        for (size_t i = 0; i < ELEMENTSOF(bad); i++) {
                struct catalog_models *m = NULL;
                struct error_detail e = { 0 };

                cr_assert_lt(parse_models(bad[i], &m, &e), 0, "case %zu accepted:\n%s", i, bad[i]);
                cr_assert_null(m);
                cr_assert_gt(e.line, 0, "case %zu: error without line (%s)", i, e.message);
        }
}

/* A property {metadataType, <value key>} is read from the nodes (no jansson object in between):
 * the same values and errors as through the general conversion, in either member order, quoted
 * or plain. */
Test(catalog_file, custom_property_shapes)
{
        static const char *const cases[][2] = {
                { "{metadataType: MetadataStringValue, string_value: 1.50}",
                  "{\"metadataType\":\"MetadataStringValue\",\"string_value\":\"1.5\"}" },
                { "{string_value: true, metadataType: MetadataStringValue}",
                  "{\"metadataType\":\"MetadataStringValue\",\"string_value\":\"true\"}" },
                { "{\"metadataType\": \"MetadataIntValue\", int_value: 42}",
                  "{\"metadataType\":\"MetadataIntValue\",\"int_value\":\"42\"}" },
                { "{int_value: '7', metadataType: MetadataIntValue}",
                  "{\"metadataType\":\"MetadataIntValue\",\"int_value\":\"7\"}" },
                { "{metadataType: MetadataDoubleValue, double_value: '2.5'}",
                  "{\"metadataType\":\"MetadataDoubleValue\",\"double_value\":2.5}" },
                { "{metadataType: MetadataBoolValue, bool_value: true}",
                  "{\"metadataType\":\"MetadataBoolValue\",\"bool_value\":true}" },
                { "{metadataType: MetadataStructValue, struct_value: '{\"a\": 1}'}",
                  "{\"metadataType\":\"MetadataStructValue\",\"struct_value\":\"{\\\"a\\\": 1}\"}" },
        };
        static const char *const bad[][2] = {
                { "{metadataType: MetadataIntValue, int_value: abc}",
                  "custom property 'x': invalid int_value" },
                { "{metadataType: MetadataBoolValue, bool_value: 3}",
                  "custom property 'x': MetadataBoolValue needs exactly metadataType and bool_value" },
                { "{metadataType: MetadataStringValue, int_value: 3}",
                  "custom property 'x': MetadataStringValue needs exactly metadataType and "
                  "string_value" },
                { "{metadataType: 3, int_value: 3}", "custom property 'x' needs a metadataType" },
                { "{metadataType: MetadataFooValue, foo_value: 3}",
                  "custom property 'x': unknown metadataType 'MetadataFooValue'" },
                { "{metadataType: MetadataIntValue, int_value: [1]}",
                  "custom property 'x': invalid int_value" },
        };
        char yaml[512];

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                struct catalog_models *m = NULL;
                struct error_detail e = { 0 };
                char *got;

                snprintf(yaml, sizeof(yaml),
                         "models:\n  - name: a\n    customProperties:\n      x: %s\n", cases[i][0]);
                cr_assert_eq(parse_models(yaml, &m, &e), 0, "case %zu: %s", i, e.message);
                got = json_dumps(
                        json_object_get(catalog_record_get(m->v[0].rec, "customProperties"), "x"),
                        JSON_COMPACT | JSON_PRESERVE_ORDER);
                cr_assert_str_eq(got, cases[i][1], "case %zu", i);
                free(got);
                catalog_models_unref(m);
        }
        for (size_t i = 0; i < ELEMENTSOF(bad); i++) {
                struct catalog_models *m = NULL;
                struct error_detail e = { 0 };

                snprintf(yaml, sizeof(yaml),
                         "models:\n  - name: a\n    customProperties:\n      x: %s\n", bad[i][0]);
                cr_assert_eq(parse_models(yaml, &m, &e), -EINVAL, "case %zu accepted", i);
                cr_assert_str_eq(e.message, bad[i][1], "case %zu", i);
                cr_assert_eq(e.line, 4, "case %zu", i);
        }
}

Test(catalog_file, alias_bomb_is_bounded)
{
        /* 9 levels of 10x fan-out: 10^9 nodes if expanded */
        char *text = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&text, &len);
        struct catalog_models *m = NULL;
        struct error_detail e = { 0 };

        fprintf(f, "models:\n  - name: bomb\n    customProperties:\n      x:\n"
                   "        metadataType: MetadataStringValue\n        string_value: y\n"
                   "        a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n");
        for (int i = 1; i < 9; i++)
                fprintf(f,
                        "        a%d: &a%d [*a%d, *a%d, *a%d, *a%d, *a%d, *a%d, *a%d, *a%d, *a%d, "
                        "*a%d]\n",
                        i, i, i - 1, i - 1, i - 1, i - 1, i - 1, i - 1, i - 1, i - 1, i - 1, i - 1);
        fclose(f);
        cr_assert_eq(parse_models(text, &m, &e), -E2BIG, "%s", e.message);
        cr_assert_null(m);
        free(text);
}

/* The one-pass composer (json/yaml-doc.c) reads anchors, aliases and documents as libyaml's loader. */
Test(catalog_file, anchors_aliases_and_documents)
{
        static const struct {
                const char *text, *message;
                unsigned line;
        } bad[] = {
                { "models:\n  - name: a\n    provider: *nope\n",
                  "invalid YAML: found undefined alias", 3 },
                { "models:\n  - name: &n a\n    provider: &n b\n",
                  "invalid YAML: second occurrence found duplicate anchor; first occurrence", 3 },
                { "models: []\n---\nmodels: []\n", "more than one YAML document in file", 2 },
                { "models: [\n", "invalid YAML: ", 2 },
        };
        struct catalog_models *m = NULL;
        struct error_detail e = { 0 };

        for (size_t i = 0; i < ELEMENTSOF(bad); i++) {
                cr_assert_eq(parse_models(bad[i].text, &m, &e), -EINVAL, "case %zu", i);
                cr_assert_null(m);
                cr_assert(strncmp(e.message, bad[i].message, strlen(bad[i].message)) == 0,
                          "case %zu: %s", i, e.message);
                cr_assert_eq(e.line, bad[i].line, "case %zu: line %u", i, e.line);
        }
        cr_assert_eq(parse_models("models:\n  - name: &n shared/name\n    provider: Acme\n"
                                  "    description: *n\n...\n",
                                  &m, &e),
                     0, "%s", e.message);
        cr_assert_eq(m->n, 1);
        cr_assert_str_eq(json_string_value(catalog_record_get(m->v[0].rec, "description")),
                         "shared/name");
        catalog_models_unref(m);
        cr_assert_eq(parse_models("", &m, &e), 0, "%s", e.message);
        cr_assert_eq(m->n, 0);
        catalog_models_unref(m);
}

/* ---- globs ---- */

/* The composer copies scalars into blocks of 256 KiB: values that fill many blocks, one larger
 * than a block and the ones around it come out whole and NUL-terminated. */
Test(catalog_file, scalars_across_text_blocks)
{
        enum { N = 6000, BIG = 300 * 1024 };
        struct buf y = BUF_INIT(SIZE_MAX);
        struct catalog_models *m = NULL;
        struct error_detail e = { 0 };
        char *big = malloc(BIG + 1);
        char name[32];

        cr_assert_not_null(big);
        memset(big, 'x', BIG);
        big[BIG] = '\0';
        cr_assert_eq(buf_puts(&y, "models:\n"), 0);
        for (size_t i = 0; i < N; i++) {
                snprintf(name, sizeof(name), "m%05zu", i);
                cr_assert_eq(buf_puts(&y, "  - name: "), 0);
                cr_assert_eq(buf_puts(&y, name), 0);
                cr_assert_eq(buf_puts(&y, "\n    description: "), 0);
                cr_assert_eq(buf_puts(&y, i == N / 2 ? big : "a description of some length"), 0);
                cr_assert_eq(buf_puts(&y, "\n    provider: p\n"), 0);
        }
        cr_assert_eq(catalog_models_parse("big.yaml", buf_str(&y), y.len, &m, &e), 0, "%s",
                     e.message);
        cr_assert_eq(m->n, N);
        for (size_t i = 0; i < N; i++) {
                const char *d = json_string_value(catalog_record_get(m->v[i].rec, "description"));

                snprintf(name, sizeof(name), "m%05zu", i);
                cr_assert_str_eq(m->v[i].name, name);
                cr_assert_str_eq(json_string_value(catalog_record_get(m->v[i].rec, "provider")),
                                 "p");
                if (i == N / 2)
                        cr_assert_eq(strlen(d), BIG);
                else
                        cr_assert_str_eq(d, "a description of some length");
        }
        catalog_models_unref(m);
        buf_release(&y);
        free(big);
}

Test(glob, matching)
{
        cr_assert(catalog_glob_match("ibm-granite/*", "ibm-granite/granite-8b"));
        cr_assert(catalog_glob_match("Granite/*", "granite/model"), "case-insensitive");
        cr_assert(catalog_glob_match("Granite/*", "GRANITE/model"));
        cr_assert(catalog_glob_match("*", ""));
        cr_assert(catalog_glob_match("*-draft", "x-draft"));
        cr_assert_not(catalog_glob_match("*-draft", "x-draft2"), "anchored at the end");
        cr_assert_not(catalog_glob_match("granite/*", "ibm/granite/x"), "anchored at the start");
        cr_assert(catalog_glob_match("*deprecated*", "old-DEPRECATED-model"));
        cr_assert(catalog_glob_match("*/beta-*", "org/beta-1"));
        cr_assert(catalog_glob_match("a*b*c", "aXXbYYc"));
        cr_assert_not(catalog_glob_match("a*b*c", "aXXbYY"));
        cr_assert(catalog_glob_match("a?b", "a?b"), "only * is special");
        cr_assert_not(catalog_glob_match("a?b", "axb"));
        cr_assert_not(catalog_glob_match("a.b", "axb"));
        cr_assert_eq(catalog_glob_validate("  "), -EINVAL);
        cr_assert_eq(catalog_glob_validate(""), -EINVAL);
        cr_assert_eq(catalog_glob_validate("x"), 0);
}

Test(glob, include_exclude)
{
        char i1[] = "acme/*", i2[] = "beta-*", e1[] = "*-draft";
        char *inc[] = { i1, i2, NULL };
        char *exc[] = { e1, NULL };

        cr_assert(catalog_glob_included(inc, exc, "acme/x"));
        cr_assert_not(catalog_glob_included(inc, exc, "acme/x-draft"), "exclude wins");
        cr_assert_not(catalog_glob_included(inc, exc, "other/x"));
        cr_assert(catalog_glob_included(NULL, exc, "other/x"), "empty include list = all");
        cr_assert(catalog_glob_included(NULL, NULL, "anything"));
}

Test(glob, pathological_pattern_is_fast)
{
        /* backtracking bounded: would be exponential with naive recursion */
        char name[4001];

        memset(name, 'a', 4000);
        name[4000] = '\0';
        cr_assert_not(catalog_glob_match("*a*a*a*a*a*a*a*a*a*a*b", name));
}

/* ---- hostile files (issue 16, item 4) ---- */

static char *nested(size_t depth)
{
        char *s = malloc(2 * depth + 16);

        cr_assert_not_null(s);
        memcpy(s, "models: ", 8);
        memset(s + 8, '[', depth);
        memset(s + 8 + depth, ']', depth);
        s[8 + 2 * depth] = '\n';
        s[9 + 2 * depth] = '\0';
        return s;
}

Test(hostile, deep_nesting_is_refused_before_the_parse)
{
        struct catalog_models *m = NULL;
        struct catalog_config c = { 0 };
        struct error_detail e = { 0 };
        char *deep = nested(60000), *ok = nested(CATALOG_YAML_DEPTH_MAX - 1);

        /* 120 KB of [ ]: once 7 s of CPU in libyaml; now stops at the limit */
        cr_assert_eq(catalog_models_parse("deep.yaml", deep, strlen(deep), &m, &e), -E2BIG);
        cr_assert(strstr(e.message, "nesting deeper than 64 levels"), "%s", e.message);
        cr_assert_eq(e.line, 1);
        cr_assert_eq(catalog_config_parse("deep-sources.yaml", deep, strlen(deep), &c, &e), -E2BIG);
        cr_assert(strstr(e.message, "nesting deeper"), "%s", e.message);
        /* just under the limit parses (and is then refused for its shape, not its depth) */
        e = (struct error_detail){ 0 };
        cr_assert_neq(catalog_models_parse("ok.yaml", ok, strlen(ok), &m, &e), -E2BIG, "%s",
                      e.message);
        free(deep);
        free(ok);
}

Test(hostile, a_fifo_is_refused_without_blocking)
{
        char dir[] = "/tmp/mp-hostile-XXXXXX", fifo[64], *data = NULL;
        struct catalog_models *m = NULL;
        struct error_detail e = { 0 };
        size_t len;

        cr_assert_not_null(mkdtemp(dir));
        snprintf(fifo, sizeof(fifo), "%s/catalog.yaml", dir);
        cr_assert_eq(mkfifo(fifo, 0600), 0);
        /* no writer: a blocking open would never return (the test's timeout would fire) */
        cr_assert_eq(catalog_read_file(fifo, 1024, &data, &len), -EFTYPE_CATALOG);
        cr_assert_eq(catalog_models_load_file(fifo, &m, &e), -EFTYPE_CATALOG);
        cr_assert(strstr(e.message, "not a regular file"), "%s", e.message);
        cr_assert_eq(catalog_read_file("/dev/zero", 1024, &data, &len), -EFTYPE_CATALOG,
                     "a device is no file either");
        unlink(fifo);
        rmdir(dir);
}

Test(hostile, a_fifo_source_does_not_stop_the_service)
{
        char dir[] = "/tmp/mp-hostile-XXXXXX", path[96], cat[96];
        char *paths[] = { path };
        struct catalog_service *svc = NULL;
        struct error_detail e = { 0 };
        struct catalog_index *idx;
        FILE *f;

        cr_assert_not_null(mkdtemp(dir));
        snprintf(path, sizeof(path), "%s/sources.yaml", dir);
        snprintf(cat, sizeof(cat), "%s/models.yaml", dir);
        f = fopen(path, "we");
        cr_assert_not_null(f);
        fputs("model_catalogs:\n  - {id: s, type: yaml, properties: {yamlCatalogPath: models.yaml}}\n",
              f);
        fclose(f);
        cr_assert_eq(mkfifo(cat, 0600), 0);
        cr_assert_eq(catalog_service_new(&(struct catalog_service_config){ .config_paths = paths,
                                                                           .n_config_paths = 1 },
                                         &svc, &e),
                     0, "%s", e.message);
        idx = catalog_service_get(svc);
        cr_assert_eq(catalog_index_source_state(idx, "s"), CATALOG_SOURCE_ERROR);
        catalog_index_unref(idx);
        /* the FIFO is replaced by a good file: the next reload serves it */
        unlink(cat);
        f = fopen(cat, "we");
        cr_assert_not_null(f);
        fputs("models:\n  - name: m\n", f);
        fclose(f);
        cr_assert_eq(catalog_service_reload(svc, &e), 0, "%s", e.message);
        idx = catalog_service_get(svc);
        cr_assert_eq(catalog_index_source_state(idx, "s"), CATALOG_SOURCE_AVAILABLE);
        cr_assert_eq(catalog_index_n_models(idx), 1);
        catalog_index_unref(idx);
        catalog_service_free(svc);
        unlink(cat);
        unlink(path);
        rmdir(dir);
}
