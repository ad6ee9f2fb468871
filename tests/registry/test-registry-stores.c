/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Stores that never lose an acknowledged write (issue 16 item 2), on SQLite and PostgreSQL
 * alike: concurrent PATCH rounds, long strings, names that cannot change on upsert, dangling
 * references, NUL bytes, Unicode case folding, and the caps on custom properties and LIKE
 * patterns.
 */
#include <criterion/criterion.h>
#include <curl/curl.h>
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "helpers.h"
#include "util/buf.h"
#include "registry/codec.h"
#include "registry/kinds.h"
#include "registry/service.h"
#include "store/entity.h"
#include "store/store.h"
#include "util/base64.h"
#include "util/macro.h"

TestSuite(stores, .init = reg_setup, .fini = reg_teardown, .timeout = 240);

/* ---- concurrent PATCHes ---- */

struct patcher {
        char url[256];
        char body[128];
        pthread_barrier_t *go;
        long status;
};

static size_t discard(char *p, size_t size, size_t n, void *ud)
{
        (void)p;
        (void)ud;
        return size * n;
}

/* One PATCH from its own thread (no Criterion assertion off the main thread). */
static void *patch_thread(void *arg)
{
        struct patcher *p = arg;
        CURL *c = curl_easy_init();
        struct curl_slist *h = curl_slist_append(NULL, "Content-Type: application/json");

        p->status = -1;
        if (!c || !h)
                goto out;
        curl_easy_setopt(c, CURLOPT_URL, p->url);
        curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, "PATCH");
        curl_easy_setopt(c, CURLOPT_HTTPHEADER, h);
        curl_easy_setopt(c, CURLOPT_POSTFIELDS, p->body);
        curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, discard);
        curl_easy_setopt(c, CURLOPT_TIMEOUT, 120L);
        (void)pthread_barrier_wait(p->go);
        if (curl_easy_perform(c) == CURLE_OK)
                curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &p->status);
out:
        curl_slist_free_all(h);
        curl_easy_cleanup(c);
        return NULL;
}

/* 30 rounds of 3 concurrent PATCHes, each of another field of one model: all three survive. */
Test(stores, concurrent_patches_of_different_fields_all_survive)
{
        static const char *const fields[3] = { "description", "owner", "readme" };
        char *id = create(API "/registered_models", "{\"name\":\"contended\"}", 201);
        char path[128];

        (void)snprintf(path, sizeof(path), API "/registered_models/%s", id);
        for (int round = 0; round < 30; round++) {
                struct patcher p[3];
                pthread_t t[3];
                pthread_barrier_t go;
                json_t *j;

                cr_assert_eq(pthread_barrier_init(&go, NULL, 3), 0);
                for (int i = 0; i < 3; i++) {
                        p[i] = (struct patcher){ .go = &go };
                        (void)snprintf(p[i].url, sizeof(p[i].url), "%s%s", base_url(), path);
                        (void)snprintf(p[i].body, sizeof(p[i].body), "{\"%s\":\"%s-%d\"}",
                                       fields[i], fields[i], round);
                        cr_assert_eq(pthread_create(&t[i], NULL, patch_thread, &p[i]), 0);
                }
                for (int i = 0; i < 3; i++)
                        cr_assert_eq(pthread_join(t[i], NULL), 0);
                (void)pthread_barrier_destroy(&go);
                for (int i = 0; i < 3; i++)
                        cr_assert_eq(p[i].status, 200, "round %d: PATCH %s -> %ld", round,
                                     fields[i], p[i].status);
                j = get_ok(path);
                for (int i = 0; i < 3; i++) {
                        char want[64];

                        (void)snprintf(want, sizeof(want), "%s-%d", fields[i], round);
                        cr_assert_str_eq(js(j, fields[i]), want, "round %d lost %s: %s", round,
                                         fields[i], json_dumps(j, 0));
                }
                json_decref(j);
        }
}

/* ---- long strings ---- */

/* n random characters, ASCII and two- and three-byte UTF-8 mixed (incompressible). */
static char *random_text(size_t n, unsigned seed)
{
        static const char *const pool[] = { "a", "Z", "7", "-", "é", "ß", "Ж", "中", "✓", "~" };
        char *s = malloc(n * 3 + 1), *p = s;

        cr_assert_not_null(s);
        srand(seed);
        for (size_t i = 0; i < n; i++) {
                const char *c = pool[(size_t)rand() % (sizeof(pool) / sizeof(pool[0]))];
                size_t len = strlen(c);

                memcpy(p, c, len);
                p += len;
        }
        *p = 0;
        return s;
}

static char *body_with(const char *fmt, ...) _printf_(1, 2);
static char *body_with(const char *fmt, ...)
{
        va_list ap;
        char *b = NULL;

        va_start(ap, fmt);
        cr_assert_geq(vasprintf(&b, fmt, ap), 0);
        va_end(ap);
        return b;
}

/* ~3,000 random characters: stored where upstream stores them, 400 naming the field elsewhere. */
Test(stores, long_strings_are_stored_or_refused_with_the_limit)
{
        char *text = random_text(3000, 16), *b;
        char path[128];
        json_t *j;
        char *id;

        b = body_with("{\"name\":\"long\",\"description\":\"%s\",\"readme\":\"%s\","
                      "\"customProperties\":{\"k\":{\"metadataType\":\"MetadataStringValue\","
                      "\"string_value\":\"%s\"}}}",
                      text, text, text);
        id = create(API "/registered_models", b, 201);
        free(b);
        (void)snprintf(path, sizeof(path), API "/registered_models/%s", id);
        j = get_ok(path);
        cr_assert_str_eq(js(j, "description"), text);
        cr_assert_str_eq(js(j, "readme"), text);
        cr_assert_str_eq(json_string_value(json_object_get(
                                 json_object_get(json_object_get(j, "customProperties"), "k"),
                                 "string_value")),
                         text);
        json_decref(j);
        b = body_with("{\"name\":\"%s\"}", text);
        expect("POST", API "/registered_models", b, 400, "at most 255");
        free(b);
        b = body_with("{\"name\":\"x\",\"externalId\":\"%s\"}", text);
        expect("POST", API "/registered_models", b, 400,
               "externalId: 3000 characters, at most 255");
        free(b);
        b = body_with("{\"externalId\":\"%s\"}", text);
        expect("PATCH", path, b, 400, "externalId");
        free(b);
        b = body_with("{\"name\":\"y\",\"customProperties\":{\"%s\":{\"metadataType\":"
                      "\"MetadataIntValue\",\"int_value\":\"1\"}}}",
                      text);
        expect("POST", API "/registered_models", b, 400, "key of 3000 characters, at most 255");
        free(b);
        /* at the limits: 255 characters are fine */
        text[0] = 0;
        free(text);
        text = random_text(255, 17);
        b = body_with("{\"name\":\"z\",\"externalId\":\"%s\",\"customProperties\":{\"%s\":"
                      "{\"metadataType\":\"MetadataIntValue\",\"int_value\":\"1\"}}}",
                      text, text);
        (void)create(API "/registered_models", b, 201);
        free(b);
        free(text);
}

/* A 4 MiB description (over the test server's body limit, so written below the API) is kept. */
Test(stores, four_mib_string_property_is_stored)
{
        struct store *s = test_store();
        struct store_conn *c;
        size_t n = 4u << 20;
        char *big = malloc(n + 1);
        struct store_entity e = { .group = STORE_GROUP_CONTEXT,
                                  .type = (char *)"RegisteredModel",
                                  .scope = (char *)"",
                                  .name = (char *)"big",
                                  .create_ms = 1,
                                  .update_ms = 1 };
        struct store_entity got = { 0 };
        const struct store_prop *p;

        cr_assert_not_null(big);
        srand(4);
        for (size_t i = 0; i < n; i++)
                big[i] = (char)('!' + rand() % 90);
        big[n] = 0;
        cr_assert_eq(store_entity_set_string(&e, "description", false, STORE_P_STRING, big), 0);
        cr_assert_eq(store_acquire(s, &c), 0);
        cr_assert_eq(store_begin(s, c), 0);
        cr_assert_eq(store_entity_insert(s, c, &e, NULL), 0);
        cr_assert_eq(store_commit(s, c), 0);
        cr_assert_eq(store_entity_get(s, c, STORE_GROUP_CONTEXT, e.id, &got), 0);
        store_release(s, c);
        p = store_entity_prop(&got, "description", false);
        cr_assert(p && p->s && strlen(p->s) == n && memcmp(p->s, big, n) == 0);
        store_entity_done(&got);
        for (size_t i = 0; i < e.n_props; i++)
                store_prop_done(&e.props[i]);
        free(e.props);
        free(big);
}

/* Issue 28 item 6: a unique clash says which uniqueness it was, from the pre-check (PostgreSQL
 * inserts) and from the database's own refusal (SQLite, and updates on both). */
static int insert_clash(struct store *s, struct store_conn *c, const char *name, const char *ext,
                        enum store_unique *ret_clash)
{
        struct store_entity e = { .group = STORE_GROUP_CONTEXT,
                                  .type = (char *)"RegisteredModel",
                                  .scope = (char *)"",
                                  .name = (char *)name,
                                  .external_id = (char *)ext,
                                  .create_ms = 1,
                                  .update_ms = 1 };
        int r;

        cr_assert_eq(store_begin(s, c), 0);
        r = store_entity_insert(s, c, &e, ret_clash);
        if (r < 0)
                store_rollback(s, c);
        else
                cr_assert_eq(store_commit(s, c), 0);
        return r < 0 ? r : (int)e.id;
}

Test(stores, a_unique_clash_names_the_name_or_the_external_id)
{
        struct store *s = test_store();
        struct store_conn *c;
        enum store_unique clash = STORE_UNIQUE_NAME;
        struct store_entity e = { 0 };
        int id;

        cr_assert_eq(store_acquire(s, &c), 0);
        cr_assert_gt(insert_clash(s, c, "a", "ext-a", NULL), 0);
        id = insert_clash(s, c, "b", "ext-b", NULL);
        cr_assert_gt(id, 0);
        cr_assert_eq(insert_clash(s, c, "c", "ext-a", &clash), -EEXIST);
        cr_assert_eq(clash, STORE_UNIQUE_EXTERNAL_ID);
        clash = STORE_UNIQUE_EXTERNAL_ID;
        cr_assert_eq(insert_clash(s, c, "a", "ext-c", &clash), -EEXIST);
        cr_assert_eq(clash, STORE_UNIQUE_NAME);
        /* an update, refused by the database's unique index on both */
        cr_assert_eq(store_entity_get(s, c, STORE_GROUP_CONTEXT, id, &e), 0);
        free(e.external_id);
        e.external_id = strdup("ext-a");
        cr_assert_not_null(e.external_id);
        cr_assert_eq(store_begin(s, c), 0);
        clash = STORE_UNIQUE_NAME;
        cr_assert_eq(store_entity_update(s, c, &e, &clash), -EEXIST);
        cr_assert_eq(clash, STORE_UNIQUE_EXTERNAL_ID, "%s", store_conflict(s, c));
        store_rollback(s, c);
        free(e.name);
        e.name = strdup("a");
        free(e.external_id);
        e.external_id = strdup("ext-b");
        cr_assert(e.name && e.external_id);
        cr_assert_eq(store_begin(s, c), 0);
        cr_assert_eq(store_entity_update(s, c, &e, &clash), -EEXIST);
        cr_assert_eq(clash, STORE_UNIQUE_NAME, "%s", store_conflict(s, c));
        store_rollback(s, c);
        store_entity_done(&e);
        store_release(s, c);
}

/* ---- upsert: the name cannot change ---- */

Test(stores, upsert_with_id_and_a_new_name_is_refused)
{
        json_t *j = NULL;
        char path[128], body[256];
        char *rm = create(API "/registered_models", "{\"name\":\"m\"}", 201), *mv, *art;

        (void)snprintf(body, sizeof(body), "{\"name\":\"v\",\"registeredModelId\":\"%s\"}", rm);
        mv = create(API "/model_versions", body, 201);
        (void)snprintf(path, sizeof(path), API "/model_versions/%s/artifacts", mv);
        art = create(path, "{\"artifactType\":\"model-artifact\",\"name\":\"weights\"}", 201);
        (void)snprintf(body, sizeof(body),
                       "{\"artifactType\":\"model-artifact\",\"id\":\"%s\",\"name\":\"renamed\"}",
                       art);
        expect("POST", path, body, 400, "name is immutable");
        (void)snprintf(body, sizeof(body),
                       "{\"artifactType\":\"model-artifact\",\"id\":\"%s\",\"name\":\"weights\","
                       "\"uri\":\"s3://b/k\"}",
                       art);
        cr_assert_eq(req("POST", path, body, &j), 200);
        cr_assert_str_eq(js(j, "name"), "weights");
        cr_assert_str_eq(js(j, "uri"), "s3://b/k");
        json_decref(j);
        /* without a name the stored one is kept */
        (void)snprintf(body, sizeof(body), "{\"artifactType\":\"model-artifact\",\"id\":\"%s\"}",
                       art);
        cr_assert_eq(req("POST", path, body, &j), 200);
        cr_assert_str_eq(js(j, "name"), "weights");
        json_decref(j);
}

/* ---- dangling references ---- */

Test(stores, dangling_references_are_404)
{
        char body[256], path[128];
        char *rm = create(API "/registered_models", "{\"name\":\"m\"}", 201), *se, *mv, *is;

        (void)snprintf(body, sizeof(body), "{\"name\":\"v\",\"registeredModelId\":\"%s\"}", rm);
        mv = create(API "/model_versions", body, 201);
        se = create(API "/serving_environments", "{\"name\":\"se\"}", 201);

        (void)snprintf(
                body, sizeof(body),
                "{\"name\":\"a\",\"registeredModelId\":\"999999\",\"servingEnvironmentId\":\"%s\"}",
                se);
        expect("POST", API "/inference_services", body, 404,
               "no registered model found for id 999999");
        (void)snprintf(path, sizeof(path), API "/serving_environments/%s/inference_services", se);
        expect("POST", path, body, 404, "no registered model found for id 999999");
        (void)snprintf(
                body, sizeof(body),
                "{\"name\":\"b\",\"registeredModelId\":\"%s\",\"servingEnvironmentId\":\"999999\"}",
                rm);
        expect("POST", API "/inference_services", body, 404,
               "no serving environment found for id 999999");
        (void)snprintf(
                body, sizeof(body),
                "{\"name\":\"c\",\"registeredModelId\":\"%s\",\"servingEnvironmentId\":\"%s\","
                "\"modelVersionId\":\"999999\"}",
                rm, se);
        expect("POST", API "/inference_services", body, 404,
               "no model version found for id 999999");
        cr_assert_eq(list_size(API "/inference_services"), 0, "nothing half-created");

        (void)snprintf(
                body, sizeof(body),
                "{\"name\":\"d\",\"registeredModelId\":\"%s\",\"servingEnvironmentId\":\"%s\"}", rm,
                se);
        is = create(API "/inference_services", body, 201);
        (void)snprintf(path, sizeof(path), API "/inference_services/%s", is);
        expect("PATCH", path, "{\"modelVersionId\":\"999999\"}", 404, "no model version found");
        (void)snprintf(body, sizeof(body), "{\"modelVersionId\":\"%s\"}", mv);
        expect("PATCH", path, body, 200, NULL);

        (void)snprintf(path, sizeof(path), API "/inference_services/%s/serves", is);
        expect("POST", path, "{\"modelVersionId\":\"999999\"}", 404,
               "no model version found for id 999999");
        cr_assert_eq(list_size(path), 0);
        (void)snprintf(body, sizeof(body), "{\"modelVersionId\":\"%s\"}", mv);
        (void)create(path, body, 201);
}

/* ---- NUL ---- */

Test(stores, nul_bytes_are_refused_never_truncated)
{
        static const char with_nul[] = "{\"a\":\"x\0y\"}";
        char *b64 = base64_encode(with_nul, sizeof(with_nul) - 1), *body;

        cr_assert_not_null(b64);
        body = body_with("{\"name\":\"n\",\"customProperties\":{\"s\":{\"metadataType\":"
                         "\"MetadataStructValue\",\"struct_value\":\"%s\"}}}",
                         b64);
        expect("POST", API "/registered_models", body, 400,
               "struct_value for key s contains a NUL byte");
        free(body);
        free(b64);
        /* prefix valid JSON, NUL, garbage: refused too, not cut to the prefix */
        {
                static const char cut[] = "{\"a\":1}\0trailing";

                b64 = base64_encode(cut, sizeof(cut) - 1);
                body = body_with("{\"name\":\"n\",\"customProperties\":{\"s\":{\"metadataType\":"
                                 "\"MetadataStructValue\",\"struct_value\":\"%s\"}}}",
                                 b64);
                expect("POST", API "/registered_models", body, 400, "NUL");
                free(body);
                free(b64);
        }
        expect("POST", API "/registered_models", "{\"name\":\"n\",\"description\":\"a\\u0000b\"}",
               400, "null bytes which are not allowed: description: contains U+0000");
        /* the message names the field, wherever it is */
        expect("POST", API "/registered_models",
               "{\"name\":\"n\",\"customProperties\":{\"k\":{\"metadataType\":"
               "\"MetadataStringValue\",\"string_value\":\"x\\u0000\"}}}",
               400, ": customProperties.k.string_value: contains U+0000");
        expect("POST", API "/registered_models", "{\"name\":\"n\",\"externalId\":\"\\\\u0000\"}",
               400, ": externalId: contains U+0000");
        cr_assert_eq(list_size(API "/registered_models"), 0);
}

/* ---- Unicode case folding ---- */

Test(stores, ilike_folds_unicode_the_same_on_both_databases)
{
        static const char *const names[] = { "École-1", "école-2", "ÉCOLE-3", "ecole-4",
                                             "ΣΟΦΊΑ",   "Straße",  "STRASSE", "Дом" };
        char body[128];

        for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
                (void)snprintf(body, sizeof(body), "{\"name\":\"%s\",\"description\":\"%s\"}",
                               names[i], names[i]);
                (void)create(API "/registered_models", body, 201);
        }
        cr_assert_eq(filter_size("registered_models", "name ILIKE 'école-%'"), 3);
        cr_assert_eq(filter_size("registered_models", "name ILIKE 'ÉCOLE-_'"), 3);
        cr_assert_eq(filter_size("registered_models", "name LIKE 'école-%'"), 1,
                     "LIKE stays case-sensitive");
        cr_assert_eq(filter_size("registered_models", "name ILIKE 'σοφία'"), 1);
        cr_assert_eq(filter_size("registered_models", "name ILIKE 'дом'"), 1);
        cr_assert_eq(filter_size("registered_models", "name ILIKE 'strasse'"), 1,
                     "simple folding: ß is not ss");
        cr_assert_eq(filter_size("registered_models", "name ILIKE 'STRAßE'"), 1);
        cr_assert_eq(filter_size("registered_models", "description ILIKE '%COLE%'"), 4);
        cr_assert_eq(filter_size("registered_models", "description ILIKE '%ÉCOLE%'"), 3);
}

/* ---- caps ---- */

static char *custom_props_body(size_t n, bool named)
{
        size_t cap = 64 + n * 64, len;
        char *b = malloc(cap);

        cr_assert_not_null(b);
        len = named ? (size_t)snprintf(b, cap, "{\"name\":\"many-%zu\",\"customProperties\":{", n)
                    : (size_t)snprintf(b, cap, "{\"customProperties\":{");
        for (size_t i = 0; i < n; i++)
                len += (size_t)snprintf(
                        b + len, cap - len,
                        "%s\"k%zu\":{\"metadataType\":\"MetadataBoolValue\",\"bool_value\":true}",
                        i ? "," : "", i);
        (void)snprintf(b + len, cap - len, "}}");
        return b;
}

Test(stores, custom_properties_are_capped)
{
        char *b = custom_props_body(REG_CUSTOM_PROPS_MAX, true), path[128];
        char *id = create(API "/registered_models", b, 201);
        json_t *j;

        free(b);
        (void)snprintf(path, sizeof(path), API "/registered_models/%s", id);
        j = get_ok(path);
        cr_assert_eq(json_object_size(json_object_get(j, "customProperties")),
                     REG_CUSTOM_PROPS_MAX);
        json_decref(j);
        b = custom_props_body(REG_CUSTOM_PROPS_MAX + 1, true);
        expect("POST", API "/registered_models", b, 400, "1001 properties, at most 1000");
        free(b);
        b = custom_props_body(REG_CUSTOM_PROPS_MAX + 1, false);
        expect("PATCH", path, b, 400, "1001 properties, at most 1000");
        free(b);
        b = custom_props_body(10, false);
        expect("PATCH", path, b, 200, NULL);
        free(b);
}

/* The byte cap on custom properties, through the service layer (the test server's body limit
 * is below it). */
Test(stores, custom_property_bytes_are_capped)
{
        struct store *s = test_store();
        struct error_detail err = { 0 };
        struct reg_db db = { .store = s, .err = &err };
        const struct reg_kind *k = reg_kind(REG_REGISTERED_MODEL);
        struct store_entity e = { .group = STORE_GROUP_CONTEXT,
                                  .type = strdup(k->type),
                                  .scope = strdup(""),
                                  .name = strdup("bytes"),
                                  .create_ms = 1,
                                  .update_ms = 1 };
        size_t half = REG_CUSTOM_BYTES_MAX / 2;
        char *v = malloc(half + 1);
        int r;

        cr_assert_not_null(v);
        memset(v, 'v', half);
        v[half] = 0;
        cr_assert_eq(store_entity_set_string(&e, "a", true, STORE_P_STRING, v), 0);
        cr_assert_eq(store_entity_set_string(&e, "b", true, STORE_P_STRING, v), 0);
        cr_assert_eq(store_acquire(s, &db.conn), 0);
        cr_assert_eq(reg_tx_begin(&db), 0);
        r = reg_tx_end(&db, reg_insert(&db, k, &e));
        cr_assert_eq(r, -EINVAL);
        cr_assert_eq(err.kind, ERROR_INVALID);
        cr_assert(strstr(err.message, "at most 1048576"), "%s", err.message);
        v[half - 16] = 0;
        cr_assert_eq(store_entity_set_string(&e, "b", true, STORE_P_STRING, v), 0);
        cr_assert_eq(reg_tx_begin(&db), 0);
        cr_assert_eq(reg_tx_end(&db, reg_insert(&db, k, &e)), 0, "%s", err.message);
        store_release(s, db.conn);
        store_entity_done(&e);
        free(v);
}

Test(stores, like_patterns_are_bounded)
{
        char pat[600];

        memset(pat, 'p', REG_LIKE_PATTERN_MAX);
        pat[REG_LIKE_PATTERN_MAX] = 0;
        {
                char *f = body_with("name LIKE '%s'", pat);
                cr_assert_eq(filter_size("registered_models", f), 0);
                free(f);
        }
        pat[REG_LIKE_PATTERN_MAX] = 'p';
        pat[REG_LIKE_PATTERN_MAX + 1] = 0;
        {
                char *f = body_with("description ILIKE '%s'", pat), *e = urlenc(f);
                char *path = body_with(API "/registered_models?filterQuery=%s", e);

                expect("GET", path, NULL, 400, "LIKE pattern of 257 characters, at most 256");
                free(path);
                free(e);
                free(f);
        }
        /* 16 wildcards fine, 17 refused; escaped ones do not count */
        (void)snprintf(pat, sizeof(pat), "%s", "%a%a%a%a%a%a%a%a_a_a_a_a_a_a_a_\\\\%\\\\_");
        {
                char *f = body_with("name LIKE '%s'", pat);
                cr_assert_eq(filter_size("registered_models", f), 0);
                free(f);
        }
        (void)snprintf(pat, sizeof(pat), "%s", "%a%a%a%a%a%a%a%a_a_a_a_a_a_a_a_%");
        {
                char *f = body_with("name LIKE '%s'", pat), *e = urlenc(f);
                char *path = body_with(API "/registered_models?filterQuery=%s", e);

                expect("GET", path, NULL, 400, "17 wildcards, at most 16");
                free(path);
                free(e);
                free(f);
        }
}

/* ---- PostgreSQL: prepared statements per connection ---- */

static int read_count(void *userdata, const struct store_val *cols, size_t n)
{
        *(int64_t *)userdata = n ? store_val_int(&cols[0]) : -1;
        return 0;
}

Test(stores, postgres_prepares_each_statement_once_per_connection)
{
        struct store *s = test_store();
        struct store_conn *c;
        struct store_val one = SV_INT(1), txt = SV_TEXT("1");
        int64_t n = -1;

        if (store_dialect(s) != STORE_DIALECT_POSTGRES)
                cr_skip_test("PostgreSQL only");
        cr_assert_eq(store_acquire(s, &c), 0);
        for (int i = 0; i < 3; i++)
                cr_assert_eq(store_exec(s, c, "SELECT 1 WHERE 1 = ?", &one, 1, NULL, NULL), 1);
        /* the same text with another parameter type is another statement */
        cr_assert_eq(store_exec(s, c, "SELECT 1 WHERE '1' = ?", &txt, 1, NULL, NULL), 1);
        cr_assert_eq(store_exec(s, c,
                                "SELECT count(*) FROM pg_prepared_statements WHERE statement LIKE"
                                " 'SELECT 1 WHERE %= $1'",
                                NULL, 0, read_count, &n),
                     1);
        cr_assert_eq(n, 2, "prepared: %lld", (long long)n);
        /* DDL and session statements run unnamed */
        cr_assert_eq(store_exec(s, c, "SET client_min_messages TO warning", NULL, 0, NULL, NULL),
                     0);
        cr_assert_eq(
                store_exec(
                        s, c,
                        "SELECT count(*) FROM pg_prepared_statements WHERE statement LIKE 'SET %'",
                        NULL, 0, read_count, &n),
                1);
        cr_assert_eq(n, 0);
        store_release(s, c);
}

/* List queries (store_exec_adhoc(): texts that follow the users' filters) are prepared too, but
 * a session keeps at most 32 of them, the least recently used deallocated first: 40 texts leave
 * the last 32, and an evicted text runs again (prepared anew). Before, none was prepared. */
Test(stores, postgres_keeps_the_32_list_texts_used_last)
{
        struct store *s = test_store();
        struct store_conn *c;
        struct store_val one = SV_INT(1);
        char sql[96];
        int64_t n = -1;

        if (store_dialect(s) != STORE_DIALECT_POSTGRES)
                cr_skip_test("PostgreSQL only");
        cr_assert_eq(store_acquire(s, &c), 0);
        for (int i = 0; i < 40; i++) {
                (void)snprintf(sql, sizeof(sql), "SELECT %d WHERE 1 = ?", 1000 + i);
                for (int k = 0; k < 2; k++)
                        cr_assert_eq(store_exec_adhoc(s, c, sql, &one, 1, NULL, NULL), 1);
        }
        cr_assert_eq(store_exec(s, c,
                                "SELECT count(*) FROM pg_prepared_statements WHERE statement LIKE"
                                " 'SELECT 1___ WHERE 1 = $1'",
                                NULL, 0, read_count, &n),
                     1);
        cr_assert_eq(n, 32, "prepared list texts: %lld", (long long)n);
        cr_assert_eq(store_exec(s, c,
                                "SELECT count(*) FROM pg_prepared_statements WHERE statement IN"
                                " ('SELECT 1000 WHERE 1 = $1', 'SELECT 1039 WHERE 1 = $1')",
                                NULL, 0, read_count, &n),
                     1);
        cr_assert_eq(n, 1, "the oldest text is out, the newest in");
        /* the oldest again: it runs, prepared in place of the least recently used */
        cr_assert_eq(store_exec_adhoc(s, c, "SELECT 1000 WHERE 1 = ?", &one, 1, NULL, NULL), 1);
        cr_assert_eq(store_exec(s, c,
                                "SELECT count(*) FROM pg_prepared_statements WHERE statement IN"
                                " ('SELECT 1000 WHERE 1 = $1', 'SELECT 1008 WHERE 1 = $1')",
                                NULL, 0, read_count, &n),
                     1);
        cr_assert_eq(n, 1, "SELECT 1000 back, SELECT 1008 (least recently used) out");
        /* a text of more than 16 parameters (a page's properties: IN, one per entity) stays
         * unnamed: prepared, its custom plans cost PostgreSQL twice the CPU */
        {
                struct store_val many[17];
                struct buf q = BUF_INIT(1024);

                cr_assert_eq(buf_puts(&q, "SELECT 2000 WHERE 1 IN (?"), 0);
                for (size_t i = 0; i < ELEMENTSOF(many); i++) {
                        many[i] = one;
                        if (i > 0)
                                cr_assert_eq(buf_puts(&q, ", ?"), 0);
                }
                cr_assert_eq(buf_puts(&q, ")"), 0);
                for (int k = 0; k < 2; k++)
                        cr_assert_eq(store_exec_adhoc(s, c, buf_str(&q), many, ELEMENTSOF(many),
                                                      NULL, NULL),
                                     1);
                buf_release(&q);
        }
        cr_assert_eq(store_exec(s, c,
                                "SELECT count(*) FROM pg_prepared_statements WHERE statement LIKE"
                                " 'SELECT 2000 %'",
                                NULL, 0, read_count, &n),
                     1);
        cr_assert_eq(n, 0, "a 17-parameter list text was prepared");
        store_release(s, c);
}

/* ---- a get by id: the entity and its properties in one statement ---- */

static int64_t insert_entity(struct store *s, struct store_conn *c, const char *name,
                             size_t n_props)
{
        static const char *const names[] = { "zeta", "alpha", "mid" };
        struct store_entity e = { .group = STORE_GROUP_CONTEXT,
                                  .type = (char *)"RegisteredModel",
                                  .scope = (char *)"",
                                  .name = (char *)name,
                                  .create_ms = 1,
                                  .update_ms = 2 };

        for (size_t i = 0; i < n_props; i++) {
                cr_assert_eq(store_entity_set_string(&e, names[i % 3], i >= 3, STORE_P_STRING,
                                                     names[i % 3]),
                             0);
        }
        if (n_props > 0)
                cr_assert_eq(store_entity_set_int(&e, "n", true, 42), 0);
        cr_assert_eq(store_begin(s, c), 0);
        cr_assert_eq(store_entity_insert(s, c, &e, NULL), 0);
        cr_assert_eq(store_commit(s, c), 0);
        for (size_t i = 0; i < e.n_props; i++)
                store_prop_done(&e.props[i]);
        free(e.props);
        return e.id;
}

/* n_props properties of insert_entity(), each once, in any order (a get sorts nothing) */
static void assert_loaded(const struct store_entity *got, int64_t id, const char *name,
                          size_t n_props)
{
        static const char *const want[] = { "alpha", "mid", "zeta", "alpha", "mid", "n", "zeta" };

        cr_assert_eq(got->id, id);
        cr_assert_str_eq(got->name, name);
        cr_assert_str_eq(got->type, "RegisteredModel");
        cr_assert_eq(got->create_ms, 1);
        cr_assert_eq(got->update_ms, 2);
        cr_assert_null(got->external_id);
        cr_assert_eq(got->n_props, n_props ? 7 : 0, "props: %zu", got->n_props);
        for (size_t i = 0; i < got->n_props; i++) {
                unsigned seen = 0;

                for (size_t j = 0; j < got->n_props; j++)
                        seen += streq(got->props[j].name, want[i]) &&
                                got->props[j].custom == (i >= 3);
                cr_assert_eq(seen, 1, "%s property %s: %u times", i >= 3 ? "custom" : "fixed",
                             want[i], seen);
        }
        if (n_props)
                cr_assert_eq(store_entity_prop(got, "n", true)->i, 42);
}

Test(stores, get_by_id_loads_the_entity_and_every_property)
{
        struct store *s = test_store();
        struct store_conn *c;
        struct store_entity got = { 0 };
        int64_t bare, full;

        cr_assert_eq(store_acquire(s, &c), 0);
        bare = insert_entity(s, c, "bare", 0);
        full = insert_entity(s, c, "full", 6);
        /* then the same inside a write transaction, locked */
        for (int locked = 0; locked < 2; locked++) {
                int (*get)(struct store *, struct store_conn *, enum store_group, int64_t,
                           struct store_entity *) = locked ? store_entity_get_for_update
                                                           : store_entity_get;

                if (locked)
                        cr_assert_eq(store_begin(s, c), 0);
                cr_assert_eq(get(s, c, STORE_GROUP_CONTEXT, bare, &got), 0);
                assert_loaded(&got, bare, "bare", 0);
                store_entity_done(&got);
                cr_assert_eq(get(s, c, STORE_GROUP_CONTEXT, full, &got), 0);
                assert_loaded(&got, full, "full", 6);
                store_entity_done(&got);
                cr_assert_eq(get(s, c, STORE_GROUP_CONTEXT, full + 1000, &got), -ENOENT);
                cr_assert_eq(get(s, c, STORE_GROUP_ARTIFACT, full, &got), -ENOENT);
        }
        store_rollback(s, c);
        store_release(s, c);
}

/* ---- PostgreSQL: the session's settings, from the startup packet or from SET ---- */

struct setting {
        char value[64];
};

static int read_setting(void *userdata, const struct store_val *cols, size_t n)
{
        struct setting *s = userdata;
        const char *t = n ? store_val_text(&cols[0]) : NULL;

        (void)snprintf(s->value, sizeof(s->value), "%s", t ? t : "(null)");
        return 0;
}

static void assert_setting(struct store *s, struct store_conn *c, const char *sql, const char *want)
{
        struct setting got = { "" };

        cr_assert_eq(store_exec(s, c, sql, NULL, 0, read_setting, &got), 1, "%s", sql);
        cr_assert_str_eq(got.value, want, "%s", sql);
}

Test(stores, postgres_sessions_have_their_settings_with_or_without_dsn_options)
{
        const char *dsn = getenv("MODELPLANE_PG_DSN");
        char with_options[1024];
        struct store *s = NULL;
        struct store_conn *c;

        if (store_dialect(test_store()) != STORE_DIALECT_POSTGRES || !dsn)
                cr_skip_test("PostgreSQL only");
        cr_assert(strchr(dsn, '?'), "a URL DSN with parameters: %s", dsn);
        /* the DSN's own options replace the store's: the store then sets them itself */
        (void)snprintf(with_options, sizeof(with_options), "%s&options=-c%%20work_mem%%3D7MB", dsn);
        for (int i = 0; i < 2; i++) {
                cr_assert_eq(store_open(i ? with_options : dsn, 2, &s), 0);
                cr_assert_eq(store_acquire(s, &c), 0);
                assert_setting(s, c, "SHOW client_min_messages", "warning");
                assert_setting(s, c, "SHOW standard_conforming_strings", "on");
                if (i)
                        assert_setting(s, c, "SHOW work_mem", "7MB");
                store_release(s, c);
                s = store_free(s);
        }
}
