/* SPDX-License-Identifier: Apache-2.0 */
/* Unit tests: the index built from the test fixtures; ordering, pagination, status, filters. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "catalog-fixture.h"
#include "catalog/service.h"
#include "util/parse-util.h"
#include "util/time-util.h"
#include <inttypes.h>

static struct catalog_service *svc;
static struct catalog_index *idx;

static void setup(void)
{
        svc = catalog_fixture_service();
        idx = catalog_service_get(svc);
}

static void teardown(void)
{
        catalog_index_unref(idx);
        catalog_service_free(svc);
}

TestSuite(index, .init = setup, .fini = teardown);

static json_t *list(const struct catalog_model_query *q)
{
        json_t *out = NULL;
        char err[256];

        cr_assert_eq(WITH_DETAIL(err, catalog_index_list_models(idx, q, &out, &detail_)), 0, "%s",
                     err);
        return out;
}

static const char *item_name(json_t *l, size_t i)
{
        return json_string_value(
                json_object_get(json_array_get(json_object_get(l, "items"), i), "name"));
}

Test(index, sources_and_status)
{
        cr_assert_eq(catalog_index_source_state(idx, "acme_models"), CATALOG_SOURCE_AVAILABLE);
        cr_assert_eq(catalog_index_source_state(idx, "disabled_models"), CATALOG_SOURCE_DISABLED);
        cr_assert_eq(catalog_index_source_state(idx, "broken_models"), CATALOG_SOURCE_ERROR);
        cr_assert_eq(catalog_index_source_state(idx, "missing_models"), CATALOG_SOURCE_ERROR);
        cr_assert_eq(catalog_index_source_state(idx, "hf_models"), CATALOG_SOURCE_ERROR);
        /* acme: 5 models, one excluded by *-draft; community: 18 */
        cr_assert_eq(catalog_index_n_models(idx), 4 + 18);
}

Test(index, name_order_is_case_insensitive_and_deterministic)
{
        char s1[] = "acme_models";
        char *src[] = { s1, NULL };
        struct catalog_model_query q = { .page = { .page_size = 10 },
                                         .order = CATALOG_ORDER_NAME,
                                         .sources = src };
        json_auto_t *l = list(&q);

        cr_assert_eq(json_integer_value(json_object_get(l, "size")), 4);
        cr_assert_str_eq(item_name(l, 0), "acme/granite-8b-code");
        cr_assert_str_eq(item_name(l, 1), "alpha-model");
        cr_assert_str_eq(item_name(l, 2), "Beta-Model");
        cr_assert_str_eq(item_name(l, 3), "GAMMA-MODEL");
}

Test(index, names_differing_only_in_case)
{
        char s1[] = "community_models";
        char *src[] = { s1, NULL };
        struct catalog_model_query q = { .page = { .page_size = 100 },
                                         .order = CATALOG_ORDER_NAME,
                                         .sources = src };
        json_auto_t *l = list(&q);
        size_t n = json_array_size(json_object_get(l, "items"));

        /* "MODEL" < "Model" < "model" by byte order once case is folded equal */
        cr_assert_str_eq(item_name(l, n - 3), "MODEL");
        cr_assert_str_eq(item_name(l, n - 2), "Model");
        cr_assert_str_eq(item_name(l, n - 1), "model");
        q.page.desc = true;
        {
                json_auto_t *d = list(&q);

                cr_assert_str_eq(item_name(d, 0), "model");
                cr_assert_str_eq(item_name(d, 2), "MODEL");
        }
}

/* Walks all pages; checks every item appears exactly once and in the full-list order. */
static void walk(enum catalog_order order, bool desc, uint32_t page_size)
{
        struct catalog_model_query q = { .page = { .page_size = 1000, .desc = desc },
                                         .order = order };
        json_auto_t *all = list(&q);
        size_t n = json_array_size(json_object_get(all, "items")), seen = 0;
        char *token = NULL;

        for (unsigned pages = 0; pages < 1000; pages++) {
                json_t *l;
                size_t k;

                q.page.page_size = page_size;
                q.page.token = token;
                l = list(&q);
                k = json_array_size(json_object_get(l, "items"));
                cr_assert_leq(k, page_size);
                for (size_t i = 0; i < k; i++, seen++)
                        cr_assert_str_eq(item_name(l, i), item_name(all, seen),
                                         "order %d desc %d page size %u: item %zu", order, desc,
                                         page_size, seen);
                free(token);
                token = strdup(json_string_value(json_object_get(l, "nextPageToken")));
                json_decref(l);
                if (token[0] == '\0')
                        break;
        }
        free(token);
        cr_assert_eq(seen, n, "saw %zu of %zu", seen, n);
}

Test(index, pagination_never_repeats_or_skips)
{
        static const enum catalog_order orders[] = {
                CATALOG_ORDER_NAME,        CATALOG_ORDER_ID,
                CATALOG_ORDER_CREATE_TIME, CATALOG_ORDER_LAST_UPDATE_TIME,
                CATALOG_ORDER_ACCURACY,
        };

        for (size_t o = 0; o < ELEMENTSOF(orders); o++)
                for (uint32_t ps = 1; ps <= 7; ps += 2) {
                        walk(orders[o], false, ps);
                        walk(orders[o], true, ps);
                }
}

Test(index, token_format_and_errors)
{
        struct catalog_model_query q = { .page = { .page_size = 2 }, .order = CATALOG_ORDER_ID };
        json_auto_t *l = list(&q);
        json_t *out = NULL;
        char err[256];

        /* registry format: base64("<id>:<value>"); ordered by ID both are the id; the ids of
         * alpha-model's four artifacts come between alpha-model (1) and Beta-Model (6) */
        cr_assert_str_eq(json_string_value(
                                 json_object_get(json_array_get(json_object_get(l, "items"), 1),
                                                 "id")),
                         "6");
        cr_assert_str_eq(json_string_value(json_object_get(l, "nextPageToken")), "Njo2");
        q.page.token = "not base64!";
        cr_assert_eq(WITH_DETAIL(err, catalog_index_list_models(idx, &q, &out, &detail_)), -EINVAL);
        cr_assert(strstr(err, "invalid nextPageToken"), "%s", err);
        q.page.token = "eDp5"; /* "x:y" */
        cr_assert_eq(WITH_DETAIL(err, catalog_index_list_models(idx, &q, &out, &detail_)), -EINVAL);
}

Test(index, accuracy_and_property_order)
{
        struct catalog_model_query q = { .page = { .page_size = 3, .desc = true },
                                         .order = CATALOG_ORDER_ACCURACY };
        json_auto_t *l = list(&q);

        cr_assert_str_eq(item_name(l, 0), "Beta-Model");
        cr_assert_str_eq(item_name(l, 1), "alpha-model");
        {
                char *prop = NULL;
                enum filterq_suffix sfx;

                cr_assert_eq(catalog_order_parse_models("artifacts.ttft_p90.double_value", &q.order,
                                                        &prop, &sfx),
                             0);
                q.order_property = prop;
                q.order_suffix = sfx;
                q.page.desc = false;
                json_auto_t *p = list(&q);

                cr_assert_str_eq(item_name(p, 0), "alpha-model", "the only model with ttft_p90");
                free(prop);
        }
        {
                enum catalog_order o;
                char *prop = NULL;
                enum filterq_suffix sfx;

                cr_assert_eq(catalog_order_parse_models("BOGUS", &o, &prop, &sfx), -EINVAL);
        }
}

Test(index, search_filter_labels)
{
        struct filterq_node *f = NULL;
        char l1[] = "validated", l2[] = "null";
        char *labels[] = { l1, NULL };
        char *null_label[] = { l2, NULL };
        struct catalog_model_query q = { .page = { .page_size = 100 },
                                         .order = CATALOG_ORDER_NAME };
        json_t *l;

        q.q = "EMBEDDING";
        l = list(&q);
        cr_assert_eq(json_integer_value(json_object_get(l, "size")), 1);
        cr_assert_str_eq(item_name(l, 0), "GAMMA-MODEL", "q searches the description");
        json_decref(l);
        q.q = "gamma labs";
        l = list(&q);
        cr_assert_eq(json_integer_value(json_object_get(l, "size")), 1, "q searches the provider");
        json_decref(l);
        q.q = "code-generation";
        l = list(&q);
        cr_assert_eq(json_integer_value(json_object_get(l, "size")), 2, "q searches the tasks");
        json_decref(l);
        q.q = NULL;

        cr_assert_eq(filterq_parse("license = 'apache-2.0' AND artifacts.hardware_type = 'H100'",
                                   &f, NULL, 0),
                     0);
        q.filter = f;
        l = list(&q);
        cr_assert_eq(json_integer_value(json_object_get(l, "size")), 1);
        cr_assert_str_eq(item_name(l, 0), "alpha-model");
        json_decref(l);
        filterq_free(f);
        cr_assert_eq(filterq_parse("tasks = 'code-generation' AND context_window > 1", &f, NULL, 0),
                     0);
        q.filter = f;
        l = list(&q);
        cr_assert_eq(json_integer_value(json_object_get(l, "size")), 0);
        json_decref(l);
        filterq_free(f);
        q.filter = NULL;

        q.source_labels = labels;
        l = list(&q);
        cr_assert_eq(json_integer_value(json_object_get(l, "size")), 4,
                     "labels are case-insensitive");
        json_decref(l);
        q.source_labels = null_label;
        l = list(&q);
        cr_assert_eq(json_integer_value(json_object_get(l, "size")), 18,
                     "null = sources without labels");
        json_decref(l);
}

Test(index, stable_ids_across_reload)
{
        json_t *a = NULL, *b = NULL;
        struct error_detail e = { 0 };
        struct catalog_index *idx2;

        cr_assert_eq(catalog_index_get_model(idx, "acme_models", "Beta-Model", &a), 0);
        cr_assert_eq(catalog_service_reload(svc, &e), 0);
        idx2 = catalog_service_get(svc);
        cr_assert_neq(idx2, idx, "a reload swaps in a new snapshot");
        cr_assert_eq(catalog_index_get_model(idx2, "acme_models", "Beta-Model", &b), 0);
        cr_assert_str_eq(json_string_value(json_object_get(a, "id")),
                         json_string_value(json_object_get(b, "id")));
        cr_assert_eq(catalog_index_get_model(idx2, "acme_models", "acme/secret-draft", &b), -ENOENT,
                     "excluded by glob");
        json_decref(a);
        json_decref(b);
        catalog_index_unref(idx2);
}

Test(index, model_wire_shape)
{
        json_t *m = NULL, *cp;

        cr_assert_eq(catalog_index_get_model(idx, "acme_models", "alpha-model", &m), 0);
        cr_assert_str_eq(json_string_value(json_object_get(m, "source_id")), "acme_models");
        cr_assert(json_is_string(json_object_get(m, "id")));
        cp = json_object_get(m, "customProperties");
        cr_assert_not_null(json_object_get(cp, "model_type"));
        cr_assert_null(json_object_get(cp, "parameters_b"),
                       "model-level customProperties only carry string values");
        cr_assert_null(json_object_get(m, "artifacts"));
        json_decref(m);
}

Test(index, filter_options)
{
        json_auto_t *fo = catalog_index_filter_options(idx);
        json_t *f = json_object_get(fo, "filters");
        json_t *lic = json_object_get(f, "license");
        json_t *ttft = json_object_get(f, "artifacts.ttft_p90.double_value");

        cr_assert_str_eq(json_string_value(json_object_get(lic, "type")), "string");
        cr_assert_eq(json_array_size(json_object_get(lic, "values")), 3);
        cr_assert_str_eq(json_string_value(json_array_get(json_object_get(lic, "values"), 0)),
                         "apache-2.0");
        cr_assert_str_eq(json_string_value(json_object_get(ttft, "type")), "number");
        cr_assert_float_eq(json_real_value(json_object_get(json_object_get(ttft, "range"), "min")),
                           45.5, 1e-9);
        cr_assert_not_null(json_object_get(json_object_get(fo, "namedQueries"), "low_latency"));
        cr_assert_not_null(json_object_get(json_object_get(fo, "namedQueries"), "apache_only"));
        cr_assert_null(json_object_get(json_object_get(fo, "namedQueries"), "remote_verified"),
                       "MCP named queries are not model filter options");
}

Test(index, memory_tokens_with_colons)
{
        char a[] = "x:1", b[] = "x:2", c2[] = "y";
        char *vals[] = { a, b, c2 };
        struct catalog_page page = { .page_size = 1 };
        size_t start, end;
        char *next = NULL;

        /* walk a list whose values and ids contain ':' one item at a time */
        for (size_t want = 0; want < 3; want++) {
                cr_assert_eq(catalog_page_memory(vals, vals, 3, &page, &start, &end, &next), 0);
                cr_assert_eq(start, want, "page %zu starts at %zu", want, start);
                cr_assert_eq(end, want + 1);
                free((char *)page.token);
                page.token = next;
                if (!next)
                        break;
        }
        cr_assert_null(page.token, "no token after the last page");
        page.token = "bm90LWEtdG9rZW4="; /* unknown token: restart */
        cr_assert_eq(catalog_page_memory(vals, vals, 3, &page, &start, &end, &next), 0);
        cr_assert_eq(start, 0);
        free(next);
}

/* ---- upstream behaviours on an index built from in-memory YAML (issue 14, item 2) ---- */

struct mem_index {
        struct catalog_ids *ids;
        struct catalog_index *idx;
};

/* One model source "s" (and an MCP source "m" when mcp_yaml is given), ids from and into ids. */
static struct catalog_index *index_build_with(struct catalog_ids *ids, const char *models_yaml,
                                              const char *mcp_yaml)
{
        static const char sources[] =
                "model_catalogs:\n"
                "  - {id: s, name: S, type: yaml, properties: {yamlCatalogPath: s.yaml}}\n"
                "mcp_catalogs:\n"
                "  - {id: m, name: M, type: yaml, properties: {yamlCatalogPath: m.yaml}}\n";
        struct catalog_config cfg = { 0 };
        struct catalog_source_load loads[2] = { 0 };
        struct error_detail e = { 0 };
        struct catalog_index *built = NULL;

        cr_assert_eq(catalog_config_parse("sources.yaml", sources, strlen(sources), &cfg, &e), 0,
                     "%s", e.message);
        cr_assert_eq(cfg.n_sources, 2);
        loads[0].state = CATALOG_SOURCE_AVAILABLE;
        cr_assert_eq(catalog_models_parse("s.yaml", models_yaml, strlen(models_yaml),
                                          &loads[0].data, &e),
                     0, "%s:%u: %s", e.file, e.line, e.message);
        loads[1].state = CATALOG_SOURCE_AVAILABLE;
        if (mcp_yaml)
                cr_assert_eq(catalog_models_parse("m.yaml", mcp_yaml, strlen(mcp_yaml),
                                                  &loads[1].data, &e),
                             0, "%s", e.message);
        cr_assert_eq(catalog_index_build(&cfg, loads, 2, ids, &built), 0);
        return built;
}

static struct mem_index mem_index_build(const char *models_yaml, const char *mcp_yaml)
{
        struct mem_index mi = { .ids = catalog_ids_new() };

        cr_assert_not_null(mi.ids);
        mi.idx = index_build_with(mi.ids, models_yaml, mcp_yaml);
        return mi;
}

static void mem_index_free(struct mem_index *mi)
{
        catalog_index_unref(mi->idx);
        catalog_ids_free(mi->ids);
}

static json_t *mem_list(const struct mem_index *mi, const struct catalog_model_query *q)
{
        json_t *out = NULL;
        char err[256];

        cr_assert_eq(WITH_DETAIL(err, catalog_index_list_models(mi->idx, q, &out, &detail_)), 0,
                     "%s", err);
        return out;
}

/* Names of every model over pages of page_size, joined with ','. */
static void walk_names(const struct mem_index *mi, struct catalog_model_query q, uint32_t page_size,
                       char *out, size_t n_out)
{
        char token[256] = "";

        out[0] = '\0';
        for (unsigned pages = 0; pages < 100; pages++) {
                json_t *l;
                size_t i;

                q.page.page_size = page_size;
                q.page.token = token;
                l = mem_list(mi, &q);
                for (i = 0; i < json_array_size(json_object_get(l, "items")); i++) {
                        size_t len = strlen(out);

                        snprintf(out + len, n_out - len, "%s%s", len ? "," : "", item_name(l, i));
                }
                snprintf(token, sizeof(token), "%s",
                         json_string_value(json_object_get(l, "nextPageToken")));
                json_decref(l);
                if (!token[0])
                        return;
        }
        cr_assert_fail("too many pages");
}

#define SCORE(v) \
        "    customProperties: {score: {metadataType: MetadataDoubleValue, double_value: " v "}}\n"

static const char tie_models[] =
        "models:\n"
        "  - name: m1\n" SCORE("2") "  - name: m2\n" SCORE("5") "  - name: m3\n" SCORE(
                "5") "  - name: m4\n"
                     "  - name: m5\n" SCORE("2") "  - name: m6\n";

Test(behaviour, property_order_ties_by_id_ascending_and_absent_last)
{
        struct mem_index mi = mem_index_build(tie_models, NULL);
        struct catalog_model_query q = { .order = CATALOG_ORDER_PROPERTY,
                                         .order_property = "score",
                                         .order_suffix = FILTERQ_SUFFIX_DOUBLE };
        char names[256];

        /* ids follow the file order: m1 < m2 < ... < m6 */
        q.page.desc = true;
        for (uint32_t ps = 1; ps <= 7; ps++) {
                walk_names(&mi, q, ps, names, sizeof(names));
                cr_assert_str_eq(names, "m2,m3,m1,m5,m4,m6", "DESC, page size %u", ps);
        }
        q.page.desc = false;
        for (uint32_t ps = 1; ps <= 7; ps++) {
                walk_names(&mi, q, ps, names, sizeof(names));
                cr_assert_str_eq(names, "m1,m5,m2,m3,m4,m6", "ASC, page size %u", ps);
        }
        mem_index_free(&mi);
}

#define PERF(n, v)                                                                            \
        "      - {artifactType: metrics-artifact, metricsType: performance-metrics, name: " n \
        ", customProperties: {ttft_p90: {metadataType: MetadataDoubleValue, double_value: " v \
        "}}}\n"

Test(behaviour, artifact_property_order_ties_by_id_ascending)
{
        static const char yaml[] =
                "models:\n"
                "  - name: m\n"
                "    artifacts:\n" PERF("a1", "30") PERF("a2", "50")
                        PERF("a3", "30") "      - {uri: 'oci://x/y:1', name: a4}\n" PERF("a5",
                                                                                         "50");
        struct mem_index mi = mem_index_build(yaml, NULL);
        struct catalog_artifact_query q = { .page = { .page_size = 1, .desc = true },
                                            .order_by = "ttft_p90.double_value" };
        char names[256] = "", token[256] = "";

        for (unsigned pages = 0; pages < 10; pages++) {
                json_t *out = NULL;
                char err[256];
                size_t len = strlen(names);

                q.page.token = token;
                cr_assert_eq(WITH_DETAIL(err, catalog_index_list_artifacts(mi.idx, "s", "m", &q,
                                                                           &out, &detail_)),
                             0, "%s", err);
                snprintf(names + len, sizeof(names) - len, "%s%s", len ? "," : "",
                         item_name(out, 0));
                snprintf(token, sizeof(token), "%s",
                         json_string_value(json_object_get(out, "nextPageToken")));
                json_decref(out);
                if (!token[0])
                        break;
        }
        cr_assert_str_eq(names, "a2,a5,a1,a3,a4");
        mem_index_free(&mi);
}

Test(behaviour, missing_times_get_the_load_time)
{
        static const char yaml[] =
                "models:\n"
                "  - name: old\n"
                "    createTimeSinceEpoch: '1000'\n"
                "    lastUpdateTimeSinceEpoch: '2000'\n"
                "    artifacts: [{uri: 'oci://x/y:1'}]\n"
                "  - name: new\n"
                "    artifacts: [{uri: 'oci://x/y:2', createTimeSinceEpoch: '5'}]\n";
        int64_t before = (int64_t)(now_realtime() / USEC_PER_MSEC), after, v;
        struct mem_index mi;
        struct catalog_model_query q = { .page = { .page_size = 10, .desc = true },
                                         .order = CATALOG_ORDER_CREATE_TIME };
        struct catalog_artifact_query aq = { .page = { .page_size = 10 } };
        json_t *l, *m, *a, *out = NULL;
        char err[256];

        mi = mem_index_build(yaml, NULL);
        after = (int64_t)(now_realtime() / USEC_PER_MSEC);
        l = mem_list(&mi, &q);
        cr_assert_str_eq(item_name(l, 0), "new", "the load time is newer than 1000");
        m = json_array_get(json_object_get(l, "items"), 0);
        cr_assert_eq(safe_atoi64(json_string_value(json_object_get(m, "createTimeSinceEpoch")), &v),
                     0);
        cr_assert(v >= before && v <= after, "%" PRId64 " not in [%" PRId64 ", %" PRId64 "]", v,
                  before, after);
        cr_assert_str_eq(json_string_value(json_object_get(m, "lastUpdateTimeSinceEpoch")),
                         json_string_value(json_object_get(m, "createTimeSinceEpoch")));
        m = json_array_get(json_object_get(l, "items"), 1);
        cr_assert_str_eq(json_string_value(json_object_get(m, "createTimeSinceEpoch")), "1000",
                         "given times are kept");
        json_decref(l);
        q.order = CATALOG_ORDER_LAST_UPDATE_TIME;
        q.page.desc = false;
        l = mem_list(&mi, &q);
        cr_assert_str_eq(item_name(l, 0), "old");
        json_decref(l);

        cr_assert_eq(WITH_DETAIL(err, catalog_index_list_artifacts(mi.idx, "s", "new", &aq, &out,
                                                                   &detail_)),
                     0);
        a = json_array_get(json_object_get(out, "items"), 0);
        cr_assert_str_eq(json_string_value(json_object_get(a, "createTimeSinceEpoch")), "5");
        cr_assert_eq(safe_atoi64(json_string_value(json_object_get(a, "lastUpdateTimeSinceEpoch")),
                                 &v),
                     0);
        cr_assert(v >= before && v <= after);
        json_decref(out);
        mem_index_free(&mi);
}

#define SAME_PERF                                                                     \
        "      - {artifactType: metrics-artifact, metricsType: performance-metrics, " \
        "customProperties: {ttft_p90: {metadataType: MetadataDoubleValue, double_value: 7}}}\n"

/* Equal artifacts and customProperties maps are one shared value in the loader's data; each
 * artifact is still served on its own with its own id. */
Test(behaviour, equal_artifacts_are_shared_and_served_apart)
{
        static const char yaml[] = "models:\n"
                                   "  - name: m1\n" SCORE(
                                           "1") "    artifacts:\n" SAME_PERF SAME_PERF
                                                "  - name: m2\n" SCORE(
                                                        "1") "    artifacts:\n" SAME_PERF;
        struct catalog_artifact_query aq = { .page = { .page_size = 10 } };
        struct catalog_source_load load = { 0 };
        struct error_detail e = { 0 };
        const char *ids[3];
        struct mem_index mi;
        json_t *out = NULL;
        char err[256];

        cr_assert_eq(catalog_models_parse("s.yaml", yaml, strlen(yaml), &load.data, &e), 0, "%s",
                     e.message);
        cr_assert_eq(load.data->v[0].artifacts[0], load.data->v[1].artifacts[0]);
        cr_assert_eq(load.data->v[0].artifacts[1], load.data->v[1].artifacts[0]);
        cr_assert_eq(load.data->v[0].artifacts[0]->refs, 3, "one record, three references");
        cr_assert_eq(catalog_record_get(load.data->v[0].rec, "customProperties"),
                     catalog_record_get(load.data->v[1].rec, "customProperties"));
        catalog_source_load_release(&load);

        mi = mem_index_build(yaml, NULL);
        cr_assert_eq(WITH_DETAIL(err, catalog_index_list_artifacts(mi.idx, "s", "m1", &aq, &out,
                                                                   &detail_)),
                     0, "%s", err);
        cr_assert_eq(json_array_size(json_object_get(out, "items")), 2);
        for (size_t i = 0; i < 2; i++)
                ids[i] = json_string_value(
                        json_object_get(json_array_get(json_object_get(out, "items"), i), "id"));
        cr_assert_str_neq(ids[0], ids[1]);
        json_t *out2 = NULL;
        cr_assert_eq(WITH_DETAIL(err, catalog_index_list_artifacts(mi.idx, "s", "m2", &aq, &out2,
                                                                   &detail_)),
                     0, "%s", err);
        cr_assert_eq(json_array_size(json_object_get(out2, "items")), 1);
        ids[2] = json_string_value(
                json_object_get(json_array_get(json_object_get(out2, "items"), 0), "id"));
        cr_assert(strcmp(ids[2], ids[0]) != 0 && strcmp(ids[2], ids[1]) != 0);
        json_decref(out);
        json_decref(out2);
        mem_index_free(&mi);
}

/* An artifact's properties metricsType and model_id are no filter options (a model's are); the
 * artifacts' maps are read in place, not copied. Artifacts without customProperties share one
 * empty map, and a MetadataValue that repeats is one value. */
Test(behaviour, artifact_filter_options_and_shared_maps)
{
        static const char yaml[] =
                "models:\n"
                "  - name: m1\n"
                "    customProperties: {model_id: {metadataType: MetadataStringValue, "
                "string_value: a}}\n"
                "    artifacts:\n"
                "      - {uri: 'oci://x/y:1'}\n"
                "      - artifactType: metrics-artifact\n"
                "        metricsType: accuracy-metrics\n"
                "        customProperties:\n"
                "          model_id: {metadataType: MetadataStringValue, string_value: m}\n"
                "          metricsType: {metadataType: MetadataStringValue, string_value: t}\n"
                "          hw: {metadataType: MetadataStringValue, string_value: H100}\n"
                "          n: {metadataType: MetadataIntValue, int_value: '4'}\n"
                "  - name: m2\n"
                "    artifacts:\n"
                "      - {uri: 'oci://x/y:2'}\n"
                "      - artifactType: metrics-artifact\n"
                "        metricsType: accuracy-metrics\n"
                "        customProperties:\n"
                "          hw: {metadataType: MetadataStringValue, string_value: H100}\n"
                "          n: {metadataType: MetadataIntValue, int_value: '9'}\n";
        struct catalog_source_load load = { 0 };
        struct error_detail e = { 0 };
        struct mem_index mi;
        const struct catalog_record *a1, *a2;
        json_t *f;

        cr_assert_eq(catalog_models_parse("s.yaml", yaml, strlen(yaml), &load.data, &e), 0, "%s",
                     e.message);
        a1 = load.data->v[0].artifacts[0];
        a2 = load.data->v[1].artifacts[0];
        cr_assert_neq(a1, a2);
        cr_assert_eq(json_object_size(catalog_record_get(a1, "customProperties")), 0);
        cr_assert_eq(catalog_record_get(a1, "customProperties"),
                     catalog_record_get(a2, "customProperties"), "one shared empty map");
        cr_assert_eq(json_object_get(catalog_record_get(load.data->v[0].artifacts[1],
                                                        "customProperties"),
                                     "hw"),
                     json_object_get(catalog_record_get(load.data->v[1].artifacts[1],
                                                        "customProperties"),
                                     "hw"),
                     "one shared MetadataValue");
        catalog_source_load_release(&load);

        mi = mem_index_build(yaml, NULL);
        json_auto_t *fo = catalog_index_filter_options(mi.idx);
        f = json_object_get(fo, "filters");
        cr_assert_not_null(json_object_get(f, "model_id.string_value"), "a model's model_id");
        cr_assert_null(json_object_get(f, "artifacts.model_id.string_value"));
        cr_assert_null(json_object_get(f, "artifacts.metricsType.string_value"));
        cr_assert_str_eq(json_string_value(json_array_get(
                                 json_object_get(json_object_get(f, "artifacts.hw.string_value"),
                                                 "values"),
                                 0)),
                         "H100");
        cr_assert_float_eq(json_real_value(json_object_get(
                                   json_object_get(json_object_get(f, "artifacts.n.int_value"),
                                                   "range"),
                                   "max")),
                           9.0, 1e-9);
        mem_index_free(&mi);
}

/* The MCP server's stable id does not depend on which models (and artifacts) the snapshot has. */
Test(behaviour, mcp_server_id_is_stable_when_models_change)
{
        static const char mcp[] = "mcp_servers:\n  - name: srv\n    tools: []\n";
        struct mem_index mi = mem_index_build("models:\n  - name: a\n    artifacts:\n"
                                              "      - uri: oci://x/a\n",
                                              mcp);
        char *first = strdup(json_string_value(
                json_object_get(json_array_get(catalog_index_mcp_servers(mi.idx), 0), "id")));
        const char *again;

        cr_assert_not_null(first);
        catalog_index_unref(mi.idx);
        mi.idx = index_build_with(mi.ids,
                                  "models:\n  - name: a\n    artifacts:\n      - uri: oci://x/a\n"
                                  "  - name: b\n    artifacts:\n      - uri: oci://x/b\n",
                                  mcp);
        again = json_string_value(
                json_object_get(json_array_get(catalog_index_mcp_servers(mi.idx), 0), "id"));
        cr_assert_str_eq(again, first, "the MCP server changed id when a model was added");
        free(first);
        mem_index_free(&mi);
}

Test(behaviour, mcp_tools_default_to_read_only)
{
        static const char mcp[] = "mcp_servers:\n"
                                  "  - name: srv\n"
                                  "    tools:\n"
                                  "      - {name: t1}\n"
                                  "      - {name: t2, accessType: execute}\n";
        struct mem_index mi = mem_index_build("models: []\n", mcp);
        const char *id = json_string_value(
                json_object_get(json_array_get(catalog_index_mcp_servers(mi.idx), 0), "id"));
        struct catalog_page page = { .page_size = 10 };
        struct catalog_mcp_query q = { .page = page, .include_tools = true, .tool_limit = 10 };
        json_t *out = NULL;
        char err[256];

        cr_assert_eq(catalog_index_get_mcp_tool(mi.idx, id, "t1", &out), 0);
        cr_assert_str_eq(json_string_value(
                                 json_object_get(json_object_get(out, "tool"), "accessType")),
                         "read_only");
        json_decref(out);
        cr_assert_eq(catalog_index_get_mcp_tool(mi.idx, id, "t2", &out), 0);
        cr_assert_str_eq(json_string_value(
                                 json_object_get(json_object_get(out, "tool"), "accessType")),
                         "execute");
        json_decref(out);
        cr_assert_eq(catalog_index_list_mcp_tools(mi.idx, id, &page, NULL, &out), 0);
        cr_assert_str_eq(json_string_value(
                                 json_object_get(json_array_get(json_object_get(out, "items"), 0),
                                                 "accessType")),
                         "read_only");
        json_decref(out);
        cr_assert_eq(WITH_DETAIL(err, catalog_index_list_mcp(mi.idx, &q, &out, &detail_)), 0, "%s",
                     err);
        cr_assert_str_eq(
                json_string_value(json_object_get(
                        json_array_get(json_object_get(json_array_get(json_object_get(out, "items"),
                                                                      0),
                                                       "tools"),
                                       0),
                        "accessType")),
                "read_only");
        json_decref(out);
        cr_assert_eq(catalog_index_get_mcp(mi.idx, id, true, 10, &out), 0);
        cr_assert_str_eq(json_string_value(
                                 json_object_get(json_array_get(json_object_get(out, "tools"), 0),
                                                 "accessType")),
                         "read_only");
        json_decref(out);
        mem_index_free(&mi);
}
