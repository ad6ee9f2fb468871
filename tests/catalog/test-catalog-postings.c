/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Unit tests of the snapshot's postings (src/catalog/postings.c: the (source, name) map of gets
 * and the equality candidates of filterQuery), and of a hot reload swapping them with the
 * snapshot: a reader holding the old snapshot keeps its old answers.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "catalog/index.h"
#include "catalog/postings.h"
#include "catalog/service.h"
#include "filterq/filterq.h"
#include "util/buf.h"
#include "catalog-fixture.h"

static void expect_list(const struct catalog_posting *p, const uint32_t *by_pos,
                        const uint32_t *by_rank, size_t n)
{
        cr_assert_eq(p->n, n);
        for (size_t i = 0; i < n; i++) {
                cr_assert_eq(p->by_pos[i], by_pos[i], "by_pos[%zu]", i);
                cr_assert_eq(p->by_rank[i], by_rank[i], "by_rank[%zu]", i);
        }
}

Test(postings, lists_in_both_orders_without_duplicates)
{
        /* position -> rank: 0->3, 1->0, 2->2, 3->1 */
        static const uint32_t rank[] = { 3, 0, 2, 1 };
        struct catalog_postings_builder b = { 0 };
        struct catalog_postings *p = NULL;
        struct catalog_posting l;

        cr_assert_eq(catalog_postings_add(&b, 1, "license", "mit", 0), 0);
        cr_assert_eq(catalog_postings_add(&b, 1, "tasks", "a", 0), 0);
        cr_assert_eq(catalog_postings_add(&b, 1, "tasks", "a", 0), 0); /* twice: kept once */
        cr_assert_eq(catalog_postings_add(&b, 1, "license", "mit", 1), 0);
        cr_assert_eq(catalog_postings_add(&b, 2, "license", "mit", 2), 0); /* another kind */
        cr_assert_eq(catalog_postings_add(&b, 1, "license", "mit", 3), 0);
        cr_assert_eq(catalog_postings_add(&b, 1, "lic", "ensemit", 3), 0); /* same bytes */
        cr_assert_eq(catalog_postings_add(&b, 1, "license", "mit", 2), -EINVAL, "out of order");
        cr_assert_eq(catalog_postings_build(&b, rank, 4, &p), 0);
        cr_assert_null(b.v, "the builder is released");
        cr_assert_eq(catalog_postings_n_keys(p), 4);

        cr_assert(catalog_postings_get(p, 1, "license", "mit", &l));
        expect_list(&l, (const uint32_t[]){ 0, 1, 3 }, (const uint32_t[]){ 1, 3, 0 }, 3);
        cr_assert(catalog_postings_get(p, 1, "tasks", "a", &l));
        expect_list(&l, (const uint32_t[]){ 0 }, (const uint32_t[]){ 0 }, 1);
        cr_assert(catalog_postings_get(p, 2, "license", "mit", &l));
        expect_list(&l, (const uint32_t[]){ 2 }, (const uint32_t[]){ 2 }, 1);
        cr_assert(catalog_postings_get(p, 1, "lic", "ensemit", &l));
        expect_list(&l, (const uint32_t[]){ 3 }, (const uint32_t[]){ 3 }, 1);
        cr_assert_not(catalog_postings_get(p, 1, "license", "MIT", &l), "case-sensitive");
        cr_assert_eq(l.n, 0);
        cr_assert_not(catalog_postings_get(p, 3, "license", "mit", &l));
        cr_assert_not(catalog_postings_get(p, 1, NULL, "mit", &l));
        cr_assert_not(catalog_postings_get(NULL, 1, "license", "mit", &l));
        catalog_postings_free(p);
}

Test(postings, bad_input_is_refused)
{
        static const uint32_t dup_rank[] = { 0, 0 }, rank[] = { 1, 0 };
        struct catalog_postings_builder b = { 0 };
        struct catalog_postings *p = NULL;

        cr_assert_eq(catalog_postings_add(&b, 0, NULL, "x", 0), -EINVAL);
        cr_assert_eq(catalog_postings_add(&b, 0, "a", "x", 1), 0);
        cr_assert_eq(catalog_postings_build(&b, dup_rank, 2, &p), -EINVAL, "not a permutation");
        cr_assert_null(p);
        cr_assert_eq(catalog_postings_add(&b, 0, "a", "x", 5), 0);
        cr_assert_eq(catalog_postings_build(&b, rank, 2, &p), -EINVAL, "position out of range");
        cr_assert_null(p);
        cr_assert_eq(catalog_postings_build(&b, rank, 2, &p), 0, "empty");
        cr_assert_eq(catalog_postings_n_keys(p), 0);
        catalog_postings_free(p);
}

Test(postings, many_keys_grow_the_table)
{
        enum { N = 5000 };
        static uint32_t rank[N];
        static char names[N][16];
        struct catalog_postings_builder b = { 0 };
        struct catalog_postings *p = NULL;
        struct catalog_posting l;

        for (uint32_t i = 0; i < N; i++) {
                rank[i] = N - 1 - i;
                snprintf(names[i], sizeof(names[i]), "m-%u", i);
                cr_assert_eq(catalog_postings_add(&b, 0, "s", names[i], i), 0);
                cr_assert_eq(catalog_postings_add(&b, 1, "parity", i % 2 ? "odd" : "even", i), 0);
        }
        cr_assert_eq(catalog_postings_build(&b, rank, N, &p), 0);
        cr_assert_eq(catalog_postings_n_keys(p), N + 2);
        for (uint32_t i = 0; i < N; i++) {
                cr_assert(catalog_postings_get(p, 0, "s", names[i], &l));
                cr_assert_eq(l.n, 1);
                cr_assert_eq(l.by_pos[0], i);
        }
        cr_assert(catalog_postings_get(p, 1, "parity", "odd", &l));
        cr_assert_eq(l.n, N / 2);
        cr_assert_eq(l.by_pos[0], 1);
        cr_assert_eq(l.by_rank[0], N - 1, "the highest position has rank 0");
        catalog_postings_free(p);
}

/* ---- a hot reload swaps the postings with the snapshot ---- */

static char dir[] = "/tmp/catalog-postings-XXXXXX";

static void write_file(const char *name, const char *text)
{
        char path[256];
        FILE *f;

        snprintf(path, sizeof(path), "%s/%s", dir, name);
        f = fopen(path, "we");
        cr_assert_not_null(f);
        cr_assert_eq(fputs(text, f) >= 0, true);
        cr_assert_eq(fclose(f), 0);
}

static void write_models(const char *name, const char *license)
{
        char text[512];

        snprintf(text, sizeof(text),
                 "source: S\nmodels:\n"
                 "  - name: %s\n    license: %s\n"
                 "  - name: other\n    license: apache-2.0\n",
                 name, license);
        write_file("m.yaml", text);
}

/* The size of a filtered list of idx. */
static long filtered_size(struct catalog_index *idx, const char *filter)
{
        struct catalog_model_query q = { .page = { .page_size = 10 } };
        CLEANUP(filterq_freep) struct filterq_node *f = NULL;
        struct buf out = BUF_INIT(SIZE_MAX);
        char err[128];
        const char *s;
        long n;

        cr_assert_eq(filterq_parse(filter, &f, err, sizeof(err)), 0, "%s", err);
        q.filter = f;
        cr_assert_eq(WITH_DETAIL(err, catalog_index_list_models_text(idx, &q, &out, &detail_)), 0,
                     "%s", err);
        s = strstr(buf_str(&out), "\"size\":");
        cr_assert_not_null(s);
        n = strtol(s + strlen("\"size\":"), NULL, 10);
        buf_release(&out);
        return n;
}

Test(postings_reload, old_readers_keep_the_old_postings)
{
        char sources[256], *paths[] = { sources, NULL };
        struct catalog_service_config cfg = { .config_paths = paths, .n_config_paths = 1 };
        struct catalog_service *svc = NULL;
        struct error_detail e = { 0 };
        struct catalog_index *old, *cur;
        const char *text;
        size_t len;

        cr_assert_not_null(mkdtemp(dir));
        write_file("sources.yaml", "model_catalogs:\n"
                                   "  - {id: s, name: S, type: yaml, properties: "
                                   "{yamlCatalogPath: m.yaml}}\n");
        write_models("first", "mit");
        snprintf(sources, sizeof(sources), "%s/sources.yaml", dir);
        cr_assert_eq(catalog_service_new(&cfg, &svc, &e), 0, "%s", e.message);
        old = catalog_service_get(svc);
        cr_assert_eq(catalog_index_get_model_text(old, "s", "first", &text, &len), 0);
        cr_assert_eq(filtered_size(old, "license = 'mit'"), 1);

        write_models("second", "llama3");
        cr_assert_eq(catalog_service_reload(svc, &e), 0, "%s", e.message);
        cur = catalog_service_get(svc);
        cr_assert_neq(cur, old);
        cr_assert_eq(catalog_index_get_model_text(cur, "s", "first", &text, &len), -ENOENT);
        cr_assert_eq(catalog_index_get_model_text(cur, "s", "second", &text, &len), 0);
        cr_assert(strstr(text, "\"name\":\"second\""), "%s", text);
        cr_assert_eq(filtered_size(cur, "license = 'mit'"), 0);
        cr_assert_eq(filtered_size(cur, "license IN ('llama3', 'apache-2.0')"), 2);
        cr_assert_eq(filtered_size(cur, "name = 'second' AND source_id = 's'"), 1);

        /* the old snapshot answers from its own postings until its last reader leaves */
        cr_assert_eq(catalog_index_get_model_text(old, "s", "first", &text, &len), 0);
        cr_assert_eq(catalog_index_get_model_text(old, "s", "second", &text, &len), -ENOENT);
        cr_assert_eq(filtered_size(old, "license = 'mit'"), 1);
        catalog_index_unref(old);
        catalog_index_unref(cur);
        catalog_service_free(svc);

        snprintf(sources, sizeof(sources), "%s/m.yaml", dir);
        cr_assert_eq(unlink(sources), 0);
        snprintf(sources, sizeof(sources), "%s/sources.yaml", dir);
        cr_assert_eq(unlink(sources), 0);
        cr_assert_eq(rmdir(dir), 0);
}
