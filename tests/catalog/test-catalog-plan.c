/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Unit tests of list planning (issue 14 item 4): a list in a presorted order (ID, NAME) stops
 * after the page instead of scanning every model. Its answers must be byte-identical to the full
 * scan's, page by page and token by token: each query is also run with a comparison appended
 * (`OR zz_absent LIKE 5`) that matches nothing but can fail, which forces the full scan.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "catalog-fixture.h"
#include "catalog/index.h"
#include "filterq/filterq.h"
#include "util/buf.h"

static struct catalog_ids *ids;
static struct catalog_index *idx;

/* Model i: a mixed-case name, partly equal to others ignoring case. */
static void plan_model(struct buf *b, unsigned i, void *userdata)
{
        static const char *const licenses[] = { "mit", "apache-2.0", "llama3" };

        cr_assert_geq(
                buf_printf(
                        b,
                        "  - name: %s-%02u\n"
                        "    provider: P%u\n"
                        "    license: %s\n"
                        "    tasks: [t%u, common]\n"
                        "    description: model %u %s\n"
                        "    customProperties:\n"
                        "      size: {metadataType: MetadataIntValue, int_value: \"%u\"}\n"
                        "      kind: {metadataType: MetadataStringValue, string_value: k%u}\n"
                        "    artifacts:\n"
                        "      - uri: oci://x/%u\n"
                        "        customProperties:\n"
                        "          ttft: {metadataType: MetadataDoubleValue, double_value: %u.5}\n"
                        "          fast: {metadataType: MetadataBoolValue, bool_value: %s}\n",
                        i % 2   ? "model"
                        : i % 4 ? "MODEL"
                                : "Model",
                        i / 2, i % 5, licenses[i % 3], i % 4, i, i % 7 ? "plain" : "translation",
                        i % 11, i % 3, i, (i * 13) % 100, i % 2 ? "true" : "false"),
                0);
}

/* n models (n prime to 37) with mixed-case names, in a shuffled file order, then extra_model */
static char *models_yaml(unsigned n, const char *extra_model)
{
        struct buf b = BUF_INIT(SIZE_MAX);

        catalog_fixture_models(&b, "S", n, plan_model, NULL);
        if (extra_model)
                cr_assert_geq(buf_puts(&b, extra_model), 0);
        return buf_take(&b, NULL);
}

/* extra_model is appended to the file; ill_typed sets the last model's double_value to "abc" */
static void build(const char *extra_model, bool ill_typed)
{
        static const char sources[] =
                "model_catalogs:\n"
                "  - {id: s, name: S, type: yaml, labels: [L], properties: {yamlCatalogPath: s.yaml}}\n";
        struct catalog_config cfg = { 0 };
        struct catalog_source_load load = { .state = CATALOG_SOURCE_AVAILABLE };
        struct error_detail e = { 0 };
        char *yaml = models_yaml(61, extra_model);

        ids = catalog_ids_new();
        cr_assert_not_null(ids);
        cr_assert_eq(catalog_config_parse("sources.yaml", sources, strlen(sources), &cfg, &e), 0,
                     "%s", e.message);
        cr_assert_eq(catalog_models_parse("s.yaml", yaml, strlen(yaml), &load.data, &e), 0,
                     "%s:%u: %s", e.file, e.line, e.message);
        free(yaml);
        if (ill_typed) {
                /* the YAML loader normalises typed values; other loaders might not */
                json_t *mv = json_object_get(catalog_record_get(load.data->v[load.data->n - 1].rec,
                                                                "customProperties"),
                                             "ttft");

                cr_assert_not_null(mv);
                cr_assert_eq(json_object_set_new(mv, "double_value", json_string("abc")), 0);
        }
        cr_assert_eq(catalog_index_build(&cfg, &load, 1, ids, &idx), 0);
}

static void teardown(void)
{
        catalog_index_unref(idx);
        catalog_ids_free(ids);
}

static void setup(void)
{
        build(NULL, false);
}

TestSuite(plan, .init = setup, .fini = teardown);

/* One page as text; returns the list function's result. */
static int page_text(const struct catalog_model_query *q, struct buf *out)
{
        char err[256];

        buf_reset(out);
        return WITH_DETAIL(err, catalog_index_list_models_text(idx, q, out, &detail_));
}

/* The nextPageToken of a page's text (static buffer). */
static const char *next_token(const struct buf *page)
{
        static char tok[512];
        const char *p = strstr(buf_str(page), "\"nextPageToken\":\"");
        const char *e;

        cr_assert_not_null(p);
        p += strlen("\"nextPageToken\":\"");
        e = strchr(p, '"');
        cr_assert_not_null(e);
        cr_assert_lt((size_t)(e - p), sizeof(tok));
        memcpy(tok, p, (size_t)(e - p));
        tok[e - p] = '\0';
        return tok;
}

/* Walks all pages of q with filter f both ways and asserts identical pages; returns the pages. */
static unsigned walk_both(struct catalog_model_query q, const char *f)
{
        char forced[512], tok_a[512] = "", tok_b[512] = "";
        CLEANUP(filterq_freep) struct filterq_node *fa = NULL, *fb = NULL;
        struct buf a = BUF_INIT(SIZE_MAX), b = BUF_INIT(SIZE_MAX);
        char err[256];
        unsigned pages = 0;

        snprintf(forced, sizeof(forced), "%s%s%s%szz_absent LIKE 5", f ? "(" : "", f ? f : "",
                 f ? ")" : "", f ? " OR " : "id >= 0 OR ");
        if (f)
                cr_assert_eq(filterq_parse(f, &fa, err, sizeof(err)), 0, "%s: %s", f, err);
        cr_assert_eq(filterq_parse(forced, &fb, err, sizeof(err)), 0, "%s: %s", forced, err);
        for (;; pages++) {
                cr_assert_lt(pages, 200, "too many pages for %s", f ? f : "(none)");
                q.filter = fa;
                q.page.token = tok_a;
                cr_assert_eq(page_text(&q, &a), 0);
                q.filter = fb;
                q.page.token = tok_b;
                cr_assert_eq(page_text(&q, &b), 0);
                cr_assert_str_eq(buf_str(&a), buf_str(&b),
                                 "filter %s, order %d, %s, page size %u, page %u", f ? f : "(none)",
                                 q.order, q.page.desc ? "DESC" : "ASC", q.page.page_size, pages);
                snprintf(tok_a, sizeof(tok_a), "%s", next_token(&a));
                snprintf(tok_b, sizeof(tok_b), "%s", next_token(&b));
                if (!tok_a[0])
                        break;
        }
        buf_release(&a);
        buf_release(&b);
        return pages + 1;
}

Test(plan, presorted_pages_equal_the_full_scan)
{
        static const char *const filters[] = {
                NULL,
                "license='mit'",
                "license = 'mit' AND artifacts.ttft < 50",
                "provider IN ('P1', 'P3') OR tasks = 't2'",
                "name ILIKE 'model-1%'",
                "size.int_value >= 5 AND kind = 'k1'",
                "artifacts.fast = true",
                "artifacts.ttft.double_value > 90",
                "license = 'nope'",
                "id > 20",
                /* equalities that postings serve (candidates instead of every model) */
                "kind = 'k1'",
                "kind.string_value IN ('k0', 'k2') AND license = 'mit'",
                "tasks = 'common' AND provider = 'P2'",
                "tasks IN ('t1', 't3', 'none')",
                "source_id = 's' AND license IN ('llama3')",
                "source_id = 'other'",
                "name = 'model-03'",
                "license = 'mit' AND kind = 'k0' AND artifacts.ttft < 70",
                "license IN ()",
        };
        static const uint32_t sizes[] = { 1, 3, 7, 100 };
        static const char *const qs[] = { NULL, "translation", "MODEL-2" };
        unsigned total = 0;

        for (size_t fi = 0; fi < sizeof(filters) / sizeof(*filters); fi++)
                for (int order = 0; order < 2; order++)
                        for (int desc = 0; desc < 2; desc++)
                                for (size_t si = 0; si < sizeof(sizes) / sizeof(*sizes); si++)
                                        for (size_t qi = 0; qi < sizeof(qs) / sizeof(*qs); qi++) {
                                                struct catalog_model_query q = {
                                                        .page = { .page_size = sizes[si],
                                                                  .desc = desc },
                                                        .order = order ? CATALOG_ORDER_NAME
                                                                       : CATALOG_ORDER_ID,
                                                        .q = qs[qi],
                                                };

                                                total += walk_both(q, filters[fi]);
                                        }
        cr_assert_gt(total, 1000, "the walks cover many pages (%u)", total);
}

/* The postings' candidates on the scanning path (orders other than ID and NAME). */
Test(plan, candidates_in_other_orders_equal_the_full_scan)
{
        static const char *const filters[] = {
                "license = 'mit'",
                "kind IN ('k0', 'k2') AND tasks = 'common'",
                "provider = 'P4' AND artifacts.ttft < 60",
                "license = 'none'",
        };
        static const enum catalog_order orders[] = {
                CATALOG_ORDER_CREATE_TIME,
                CATALOG_ORDER_ACCURACY,
                CATALOG_ORDER_PROPERTY,
        };

        for (size_t fi = 0; fi < sizeof(filters) / sizeof(*filters); fi++)
                for (size_t oi = 0; oi < sizeof(orders) / sizeof(*orders); oi++)
                        for (int desc = 0; desc < 2; desc++) {
                                struct catalog_model_query q = {
                                        .page = { .page_size = 4, .desc = desc },
                                        .order = orders[oi],
                                        .order_property = "artifacts.ttft",
                                        .order_suffix = FILTERQ_SUFFIX_DOUBLE,
                                };

                                walk_both(q, filters[fi]);
                        }
}

Test(plan, sources_and_labels_are_applied_on_the_planned_path)
{
        static char *none[] = { (char *)"other", NULL }, *mine[] = { (char *)"s", NULL };
        static char *label[] = { (char *)"l", NULL };
        struct catalog_model_query q = { .page = { .page_size = 5 }, .order = CATALOG_ORDER_ID };
        struct buf out = BUF_INIT(SIZE_MAX);

        q.sources = none;
        cr_assert_eq(page_text(&q, &out), 0);
        cr_assert(strstr(buf_str(&out), "\"size\":0}"), "%s", buf_str(&out));
        q.sources = mine;
        q.source_labels = label;
        cr_assert_eq(page_text(&q, &out), 0);
        cr_assert(strstr(buf_str(&out), "\"size\":5}"), "%s", buf_str(&out));
        cr_assert_neq(next_token(&out)[0], '\0');
        walk_both(q, "license='llama3'");
        buf_release(&out);
}

Test(plan, bad_token_is_still_an_error)
{
        struct catalog_model_query q = { .page = { .page_size = 5, .token = "!!!" },
                                         .order = CATALOG_ORDER_NAME };
        struct buf out = BUF_INIT(SIZE_MAX);

        cr_assert_eq(page_text(&q, &out), -EINVAL);
        buf_release(&out);
}

/*
 * A value that does not have its declared type (double_value "abc") makes `ttft > 1` fail with
 * -EDOM (upstream: 400) when the scan meets it. The planned path must not answer a page that
 * stops before that model: the snapshot is not well-typed, so every list scans.
 */
Test(plan_typed, ill_typed_value_fails_like_the_full_scan, .fini = teardown)
{
        struct catalog_model_query q = { .page = { .page_size = 1 }, .order = CATALOG_ORDER_ID };
        CLEANUP(filterq_freep) struct filterq_node *f = NULL;
        struct buf out = BUF_INIT(SIZE_MAX);
        char err[64];

        build("  - name: zz-last\n"
              "    customProperties:\n"
              "      ttft: {metadataType: MetadataDoubleValue, double_value: 1.5}\n",
              true);
        cr_assert_eq(filterq_parse("ttft > 1", &f, err, sizeof(err)), 0);
        q.filter = f;
        cr_assert_eq(page_text(&q, &out), -EDOM);
        q.order = CATALOG_ORDER_NAME;
        cr_assert_eq(page_text(&q, &out), -EDOM);
        /* a filter that never reaches the bad value still answers on the planned path */
        walk_both(q, "license = 'mit'");
        buf_release(&out);
}
