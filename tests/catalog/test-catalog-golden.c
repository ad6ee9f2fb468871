/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Golden responses of the catalog index (issue 14 item 4): every list, get, artifact list, filter
 * options, sources, labels and MCP answer for the test fixtures and for a generated catalog (every
 * metadata type, repeated and unique values, models and artifacts without times) is compared byte
 * for byte with tests/fixtures/catalog/golden-responses.txt, written by the snapshot
 * representation that came before. A change of the snapshot's storage must not change one byte
 * of what a client sees. The load time given to models without times is replaced by LOAD_TIME.
 * MODELPLANE_GOLDEN_UPDATE=1 rewrites the file (only for a deliberate change of the answers).
 */
#include <criterion/criterion.h>
#include <ctype.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "catalog-fixture.h"
#include "catalog/service.h"
#include "filterq/filterq.h"
#include "util/base64.h"
#include "util/buf.h"
#include "util/time-util.h"

static struct buf out;
static int64_t t0_ms;

static void put_json(const char *label, json_t *j)
{
        char *t = json_dumps(j, JSON_COMPACT | JSON_ENCODE_ANY);

        cr_assert_not_null(t);
        cr_assert_geq(buf_printf(&out, "%s\n%s\n", label, t), 0);
        free(t);
}

static struct filterq_node *filter(const char *s)
{
        struct filterq_node *f = NULL;
        char err[256];

        cr_assert_eq(filterq_parse(s, &f, err, sizeof(err)), 0, "%s: %s", s, err);
        return f;
}

static const char *const model_orders[] = {
        "ID",
        "NAME",
        "CREATE_TIME",
        "LAST_UPDATE_TIME",
        "ACCURACY",
        "provider.string_value",
        "size.int_value",
        "score.double_value",
        "kind.string_value",
        "artifacts.ttft.double_value",
        "artifacts.ttft_p90.double_value",
        "artifacts.hardware_type.string_value",
};

static const char *const model_filters[] = {
        NULL,
        "license = 'mit'",
        "license IN ('mit', 'apache-2.0') AND tasks = 'common'",
        "provider ILIKE '%p1%' OR name LIKE 'Model%'",
        "size.int_value > 10",
        "score.double_value <= 50.5",
        "fast.bool_value = true",
        "kind.string_value = 'k3'",
        "artifacts.ttft.double_value < 40",
        "artifacts.fast.bool_value = false",
        "artifacts.uri LIKE 'oci://x/1%'",
        "artifacts.ttft_p90 < 100",
        "createTimeSinceEpoch > 1736000000000",
        "id < 5",
        "language = 'en'",
        "source_id = 'gen'",
        "zz_absent LIKE 5",
};

static void walk_models(struct catalog_index *idx, const char *label, const char *order_s,
                        bool desc, const char *fq, const char *qs)
{
        CLEANUP(filterq_freep) struct filterq_node *f = fq ? filter(fq) : NULL;
        AUTOFREE char *prop = NULL, *token = NULL;
        struct catalog_model_query q = { .page = { .page_size = 7, .desc = desc }, .q = qs };
        char err[512];
        int r;

        cr_assert_eq(catalog_order_parse_models(order_s, &q.order, &prop, &q.order_suffix), 0);
        q.order_property = prop;
        q.filter = f;
        for (int page = 0; page < 100; page++) {
                struct buf b = BUF_INIT(SIZE_MAX);
                json_auto_t *j = NULL;

                q.page.token = token;
                err[0] = '\0';
                r = WITH_DETAIL(err, catalog_index_list_models_text(idx, &q, &b, &detail_));
                cr_assert_geq(buf_printf(&out,
                                         "models %s order=%s desc=%d filter=%s q=%s page=%d\n",
                                         label, order_s, desc, fq ? fq : "-", qs ? qs : "-", page),
                              0);
                if (r < 0) {
                        cr_assert_geq(buf_printf(&out, "error %d %s\n", r, err), 0);
                        buf_release(&b);
                        return;
                }
                cr_assert_geq(buf_printf(&out, "%s\n", buf_str(&b)), 0);
                /* the JSON API answers the same page */
                r = WITH_DETAIL(err, catalog_index_list_models(idx, &q, &j, &detail_));
                cr_assert_eq(r, 0, "%s", err);
                {
                        char *t = json_dumps(j, JSON_COMPACT);

                        cr_assert_str_eq(t, buf_str(&b));
                        free(t);
                }
                free(token);
                token = strdup(json_string_value(json_object_get(j, "nextPageToken")));
                buf_release(&b);
                if (!token[0])
                        return;
        }
}

/* every ordering and filter for some models (all: the plain list only) */
static void artifacts(struct catalog_index *idx, const char *source, const char *name, bool all)
{
        static const char *const orders[] = { NULL,
                                              "NAME",
                                              "CREATE_TIME",
                                              "LAST_UPDATE_TIME",
                                              "ttft.double_value",
                                              "ttft_p90.double_value",
                                              "hardware_type.string_value" };
        static const char *const filters[] = { NULL, "ttft.double_value > 30",
                                               "artifactType = 'model-artifact'",
                                               "hardware_count.int_value >= 2" };
        struct catalog_perf_params perf[] = {
                { .target_rps = 100 },
                { .recommendations = true },
                { .target_rps = 50, .recommendations = true },
        };

        for (size_t o = 0; o < (all ? ELEMENTSOF(orders) : 1); o++)
                for (size_t fi = 0; fi < (all ? ELEMENTSOF(filters) : 1); fi++)
                        for (int desc = 0; desc < (all ? 2 : 1); desc++) {
                                CLEANUP(filterq_freep)
                                struct filterq_node *f = filters[fi] ? filter(filters[fi]) : NULL;
                                struct catalog_artifact_query q = {
                                        .page = { .page_size = 100, .desc = desc },
                                        .filter = f,
                                        .order_by = orders[o],
                                };
                                json_auto_t *j = NULL;
                                char err[512] = "", label[1024];
                                int r = WITH_DETAIL(err,
                                                    catalog_index_list_artifacts(idx, source, name,
                                                                                 &q, &j, &detail_));

                                snprintf(label, sizeof(label),
                                         "artifacts %s/%s order=%s filter=%s desc=%d -> %d %s",
                                         source, name, orders[o] ? orders[o] : "-",
                                         filters[fi] ? filters[fi] : "-", desc, r, err);
                                put_json(label, j);
                        }
        for (size_t p = 0; p < ELEMENTSOF(perf); p++) {
                struct catalog_artifact_query q = { .page = { .page_size = 100 },
                                                    .performance_only = true,
                                                    .perf = &perf[p] };
                json_auto_t *j = NULL;
                char err[512] = "", label[1024];
                int r = WITH_DETAIL(err, catalog_index_list_artifacts(idx, source, name, &q, &j,
                                                                      &detail_));

                snprintf(label, sizeof(label), "perf artifacts %s/%s %zu -> %d %s", source, name, p,
                         r, err);
                put_json(label, j);
        }
}

static void dump_index(struct catalog_index *idx, const char *label)
{
        static const char *const searches[] = { "code", "TRANSLATION", "p3" };
        struct catalog_model_query all = { .page = { .page_size = 1000 },
                                           .order = CATALOG_ORDER_ID };
        json_auto_t *l = NULL;
        char err[256];
        size_t i;
        json_t *m;

        for (size_t o = 0; o < ELEMENTSOF(model_orders); o++)
                for (int desc = 0; desc < 2; desc++)
                        walk_models(idx, label, model_orders[o], desc, NULL, NULL);
        for (size_t fi = 1; fi < ELEMENTSOF(model_filters); fi++)
                for (size_t o = 0; o < 2; o++)
                        walk_models(idx, label, model_orders[o], fi % 2, model_filters[fi], NULL);
        for (size_t s = 0; s < ELEMENTSOF(searches); s++)
                walk_models(idx, label, "NAME", false, NULL, searches[s]);

        cr_assert_eq(WITH_DETAIL(err, catalog_index_list_models(idx, &all, &l, &detail_)), 0, "%s",
                     err);
        json_array_foreach(json_object_get(l, "items"), i, m) {
                const char *src = json_string_value(json_object_get(m, "source_id"));
                const char *name = json_string_value(json_object_get(m, "name"));
                const char *text;
                size_t len;

                cr_assert_eq(catalog_index_get_model_text(idx, src, name, &text, &len), 0);
                cr_assert_geq(buf_printf(&out, "get %s/%s\n", src, name), 0);
                cr_assert_geq(buf_append(&out, text, len), 0);
                cr_assert_geq(buf_putc(&out, '\n'), 0);
                artifacts(idx, src, name, i % 5 == 0);
        }
        {
                json_auto_t *fo = catalog_index_filter_options(idx);
                json_auto_t *mfo = catalog_index_mcp_filter_options(idx);

                put_json("filter options", fo);
                put_json("mcp filter options", mfo);
        }
        for (int by_name = 0; by_name < 2; by_name++) {
                struct catalog_source_query q = { .page = { .page_size = 100 },
                                                  .order_by_name = by_name };
                json_auto_t *j = NULL;

                cr_assert_eq(catalog_index_list_sources(idx, &q, &j), 0);
                put_json("sources", j);
        }
        {
                struct catalog_label_query q = { .page = { .page_size = 100 },
                                                 .asset_type = "models" };
                json_auto_t *j = NULL;

                cr_assert_eq(catalog_index_list_labels(idx, &q, &j), 0);
                put_json("labels", j);
        }
        {
                struct catalog_mcp_query q = { .page = { .page_size = 100 },
                                               .include_tools = true,
                                               .tool_limit = 10 };
                json_auto_t *j = NULL;

                cr_assert_eq(WITH_DETAIL(err, catalog_index_list_mcp(idx, &q, &j, &detail_)), 0,
                             "%s", err);
                put_json("mcp", j);
        }
}

/* Model i of the generated catalog: every metadata type, repeated and unique values. */
static void generated_model(struct buf *b, unsigned i, void *userdata)
{
        static const char *const licenses[] = { "mit", "apache-2.0", "llama3" };

        cr_assert_geq(buf_printf(b,
                                 "  - name: %s-%02u\n"
                                 "    provider: P%u\n"
                                 "    license: %s\n"
                                 "    language: [en%s]\n"
                                 "    tasks: [t%u, common]\n"
                                 "    description: model %u %s\n"
                                 "%s"
                                 "    customProperties:\n"
                                 "      size: {metadataType: MetadataIntValue, int_value: \"%u\"}\n"
                                 "      kind: {metadataType: MetadataStringValue, string_value: "
                                 "k%u}\n"
                                 "      score: {metadataType: MetadataDoubleValue, "
                                 "double_value: %u.25}\n"
                                 "      fast: {metadataType: MetadataBoolValue, bool_value: %s}\n"
                                 "      blob: {metadataType: MetadataStructValue, struct_value: "
                                 "'{\"a\": %u}'}\n"
                                 "    artifacts:\n"
                                 "      - uri: oci://x/%u\n"
                                 "        name: a%u\n"
                                 "        customProperties:\n"
                                 "          ttft: {metadataType: MetadataDoubleValue, "
                                 "double_value: %u.5}\n"
                                 "          fast: {metadataType: MetadataBoolValue, bool_value: "
                                 "%s}\n"
                                 "      - artifactType: metrics-artifact\n"
                                 "        metricsType: performance-metrics\n"
                                 "%s"
                                 "        customProperties:\n"
                                 "          hardware_type: {metadataType: MetadataStringValue, "
                                 "string_value: H%u}\n"
                                 "          hardware_count: {metadataType: MetadataIntValue, "
                                 "int_value: \"%u\"}\n"
                                 "          ttft_p90: {metadataType: MetadataDoubleValue, "
                                 "double_value: %u}\n"
                                 "          requests_per_second: {metadataType: "
                                 "MetadataDoubleValue, double_value: %u.5}\n"
                                 "          overall_average: {metadataType: MetadataDoubleValue, "
                                 "double_value: 0.%u}\n",
                                 i % 2   ? "model"
                                 : i % 4 ? "MODEL"
                                         : "Model",
                                 i / 2, i % 5, licenses[i % 3], i % 3 ? "" : ", fr", i % 4, i,
                                 i % 7 ? "plain" : "translation",
                                 i % 5 ? "    createTimeSinceEpoch: \"1736000000000\"\n"
                                         "    lastUpdateTimeSinceEpoch: 1737000000000\n"
                                       : "",
                                 i % 11, i % 3, i % 4 * 20, i % 2 ? "true" : "false", i % 3, i,
                                 i % 4, (i * 13) % 100, i % 3 ? "true" : "false",
                                 i % 3 ? "        createTimeSinceEpoch: \"1736000005000\"\n" : "",
                                 i % 4, 1 + i % 3, 50 + (i * 7) % 90, 10 + i % 6, i % 9),
                      0);
}

/* n models with every metadata type, repeated and unique values, some without times */
static char *generated_yaml(unsigned n)
{
        struct buf b = BUF_INIT(SIZE_MAX);

        catalog_fixture_models(&b, "G", n, generated_model, NULL);
        return buf_take(&b, NULL);
}

static char *normalize(const char *s, int64_t lo, int64_t hi);

/* Removes every "<root>/" (error messages name files by the path they were loaded from). */
static char *strip_root(const char *s, const char *root)
{
        struct buf b = BUF_INIT(SIZE_MAX);
        AUTOFREE char *prefix = NULL;
        const char *hit;

        cr_assert(asprintf(&prefix, "%s/", root) > 0);
        while ((hit = strstr(s, prefix))) {
                cr_assert_geq(buf_append(&b, s, (size_t)(hit - s)), 0);
                s = hit + strlen(prefix);
        }
        cr_assert_geq(buf_puts(&b, s), 0);
        return buf_take(&b, NULL);
}

/* Replaces every 13-digit number in [lo, hi] (the load time) by LOAD_TIME. */
static char *normalize(const char *s, int64_t lo, int64_t hi)
{
        struct buf b = BUF_INIT(SIZE_MAX);

        while (*s) {
                static const char tok[] = "\"nextPageToken\":\"";
                size_t n = 0;

                /* tokens carry sort values (the load time among them): compare them decoded */
                if (strneq(s, tok, strlen(tok)) && s[strlen(tok)] != '"') {
                        const char *v = s + strlen(tok), *end = strchr(v, '"');
                        AUTOFREE char *b64 = strndup(v, (size_t)(end - v)), *plain = NULL,
                                      *norm = NULL;
                        size_t len;

                        cr_assert_not_null(end);
                        cr_assert_eq(base64_decode(b64, &plain, &len), 0, "%s", b64);
                        norm = normalize(plain, lo, hi);
                        cr_assert_geq(buf_printf(&b, "%sdecoded:%s\"", tok, norm), 0);
                        s = end + 1;
                        continue;
                }
                while (isdigit((unsigned char)s[n]))
                        n++;
                if (n == 13) {
                        int64_t v = strtoll(s, NULL, 10);

                        cr_assert_geq(v >= lo && v <= hi ? buf_puts(&b, "LOAD_TIME")
                                                         : buf_append(&b, s, n),
                                      0);
                        s += n;
                } else if (n > 0) {
                        cr_assert_geq(buf_append(&b, s, n), 0);
                        s += n;
                } else {
                        cr_assert_geq(buf_putc(&b, *s), 0);
                        s++;
                }
        }
        return buf_take(&b, NULL);
}

Test(golden, responses_are_byte_identical)
{
        const char *root = getenv("MODELPLANE_SOURCE_ROOT");
        AUTOFREE char *path = NULL, *golden = NULL, *yaml = NULL, *got = NULL;
        static const char sources[] = "model_catalogs:\n"
                                      "  - {id: gen, name: Gen, type: yaml, labels: [Bench],\n"
                                      "     properties: {yamlCatalogPath: g.yaml}}\n";
        struct error_detail e = { 0 };
        struct catalog_service *svc = NULL;
        struct catalog_index *idx;
        int64_t t1_ms;

        cr_assert_not_null(root);
        out = BUF_INIT(SIZE_MAX);
        t0_ms = (int64_t)(now_realtime() / USEC_PER_MSEC);

        svc = catalog_fixture_service();
        idx = catalog_service_get(svc);
        dump_index(idx, "fixtures");
        catalog_index_unref(idx);
        catalog_service_free(svc);

        {
                struct catalog_config cfg = { 0 };
                struct catalog_source_load load = { .state = CATALOG_SOURCE_AVAILABLE };
                struct catalog_ids *ids = catalog_ids_new();

                yaml = generated_yaml(31);
                cr_assert_eq(catalog_config_parse("sources.yaml", sources, strlen(sources), &cfg,
                                                  &e),
                             0, "%s", e.message);
                cr_assert_eq(catalog_models_parse("g.yaml", yaml, strlen(yaml), &load.data, &e), 0,
                             "%s:%u: %s", e.file, e.line, e.message);
                cr_assert_eq(catalog_index_build(&cfg, &load, 1, ids, &idx), 0);
                dump_index(idx, "generated");
                catalog_index_unref(idx);
                catalog_ids_free(ids);
        }
        t1_ms = (int64_t)(now_realtime() / USEC_PER_MSEC);
        {
                AUTOFREE char *stripped = strip_root(buf_str(&out), root);

                got = normalize(stripped, t0_ms, t1_ms);
        }
        buf_release(&out);

        path = catalog_fixture_path("golden-responses.txt");
        if (getenv("MODELPLANE_GOLDEN_UPDATE")) {
                FILE *f = fopen(path, "we");

                cr_assert_not_null(f);
                cr_assert_eq(fputs(got, f) >= 0, true);
                cr_assert_eq(fclose(f), 0);
                return;
        }
        {
                FILE *f = fopen(path, "re");
                size_t cap = strlen(got) + 2, n;

                cr_assert_not_null(f, "%s: run with MODELPLANE_GOLDEN_UPDATE=1 to write it", path);
                golden = malloc(cap + 1);
                cr_assert_not_null(golden);
                n = fread(golden, 1, cap, f);
                fclose(f);
                golden[n] = '\0';
        }
        if (!streq(golden, got)) {
                size_t i = 0, line = 1;

                while (golden[i] && golden[i] == got[i]) {
                        if (got[i] == '\n')
                                line++;
                        i++;
                }
                cr_assert_fail("responses differ from %s at line %zu:\n  golden: %.300s\n  now:    "
                               "%.300s",
                               path, line, golden + i, got + i);
        }
}
