/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The registry's domain operations (service.h) without HTTP, against an in-memory SQLite store:
 * each operation's result and the error kind, errno and message of its failures.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <string.h>

#include "registry/codec.h"
#include "registry/kinds.h"
#include "registry/service.h"
#include "store/entity.h"
#include "store/store.h"

static struct store *store;
static struct store_conn *conn;
static struct error_detail err;
static struct reg_db db;

static void setup(void)
{
        cr_assert_eq(store_open(":memory:", 1, &store), 0);
        cr_assert_eq(store_acquire(store, &conn), 0);
        err = (struct error_detail){ 0 };
        db = (struct reg_db){ .store = store, .conn = conn, .err = &err };
}

static void teardown(void)
{
        store_release(store, conn);
        store = store_free(store);
}

TestSuite(service, .init = setup, .fini = teardown, .timeout = 60);

/* Decodes body (JSON text) as kind k's schema into *in; asserts success. */
static void decode(enum reg_kind_id k, enum reg_schema schema, const char *body,
                   struct reg_input *in)
{
        json_t *j = json_loads(body, 0, NULL);

        cr_assert_not_null(j, "%s", body);
        cr_assert_eq(reg_decode(reg_kind(k), schema, j, in, &err), 0, "%s", err.message);
        json_decref(j);
}

/* Creates body as kind k; returns the new id. */
static int64_t create(enum reg_kind_id k, const char *body)
{
        struct reg_input in = { 0 };
        struct reg_create_req rq = { .in = &in, .schema = REG_SCHEMA_CREATE };
        struct reg_result res;
        int64_t id;

        decode(k, REG_SCHEMA_CREATE, body, &in);
        cr_assert_eq(reg_create(&db, &rq, &res), 0, "%s: %s", body, err.message);
        cr_assert_eq(res.kind, reg_kind(k));
        id = res.e.id;
        reg_result_done(&res);
        reg_input_done(&in);
        return id;
}

static void expect_error(int r, enum error_kind kind, int error, const char *msg_part)
{
        cr_assert_eq(r, error, "r = %d (%s)", r, err.message);
        cr_assert_eq(err.kind, kind, "kind %d: %s", err.kind, err.message);
        cr_assert_eq(err.error, error);
        cr_assert(strstr(err.message, msg_part), "'%s' lacks '%s'", err.message, msg_part);
}

Test(service, create_get_and_not_found)
{
        struct reg_result res;
        int64_t id = create(REG_REGISTERED_MODEL, "{\"name\":\"m\",\"owner\":\"me\"}");

        cr_assert_eq(reg_get(&db, reg_kind(REG_REGISTERED_MODEL), id, &res), 0);
        cr_assert_str_eq(res.e.name, "m");
        cr_assert_str_eq(store_entity_prop(&res.e, "owner", false)->s, "me");
        cr_assert_str_eq(store_entity_prop(&res.e, "state", false)->s, "LIVE", "create default");
        reg_result_done(&res);
        expect_error(reg_get(&db, reg_kind(REG_REGISTERED_MODEL), 99, &res), ERROR_NOT_FOUND,
                     -ENOENT, "no registered model found for id 99");
        expect_error(reg_get(&db, reg_kind(REG_MODEL_VERSION), id, &res), ERROR_NOT_FOUND, -ENOENT,
                     "no model version found");
}

Test(service, create_errors_have_kinds)
{
        struct reg_input in = { 0 };
        struct reg_create_req rq = { .in = &in, .schema = REG_SCHEMA_CREATE };
        struct reg_result res;

        (void)create(REG_REGISTERED_MODEL, "{\"name\":\"m\"}");
        decode(REG_REGISTERED_MODEL, REG_SCHEMA_CREATE, "{\"name\":\"m\"}", &in);
        expect_error(reg_create(&db, &rq, &res), ERROR_CONFLICT, -EEXIST, "already exists");
        reg_input_done(&in);

        decode(REG_MODEL_VERSION, REG_SCHEMA_CREATE, "{\"name\":\"v\"}", &in);
        expect_error(reg_create(&db, &rq, &res), ERROR_UNPROCESSABLE, -EINVAL,
                     "required field 'registeredModelId' is zero value.");
        reg_input_done(&in);

        decode(REG_MODEL_VERSION, REG_SCHEMA_CREATE, "{\"name\":\"v\",\"registeredModelId\":\"7\"}",
               &in);
        expect_error(reg_create(&db, &rq, &res), ERROR_NOT_FOUND, -ENOENT,
                     "no registered model found for id 7");
        reg_input_done(&in);
}

Test(service, nested_create_takes_the_path_parent)
{
        struct reg_input in = { 0 };
        struct reg_create_req rq = { .in = &in,
                                     .schema = REG_SCHEMA_FULL,
                                     .path_parent = true,
                                     .parent_kind = REG_REGISTERED_MODEL };
        struct reg_result res;
        int64_t rm = create(REG_REGISTERED_MODEL, "{\"name\":\"m\"}"), got = 0;

        rq.parent_id = rm;
        decode(REG_MODEL_VERSION, REG_SCHEMA_FULL, "{\"name\":\"v\",\"registeredModelId\":\"999\"}",
               &in);
        cr_assert_eq(reg_create(&db, &rq, &res), 0, "%s", err.message);
        cr_assert_eq(reg_prop_int(&res.e, "registered_model_id", &got), 0);
        cr_assert_eq(got, rm);
        cr_assert_eq(res.e.parent_id, rm);
        reg_result_done(&res);
        reg_input_done(&in);
}

Test(service, patch_merges_and_checks)
{
        const struct reg_kind *rm = reg_kind(REG_REGISTERED_MODEL), *kind = NULL;
        struct reg_input in = { 0 };
        struct reg_result res;
        int64_t id = create(REG_REGISTERED_MODEL, "{\"name\":\"m\",\"owner\":\"me\"}");

        decode(REG_REGISTERED_MODEL, REG_SCHEMA_UPDATE,
               "{\"description\":\"d\",\"customProperties\":{\"a\":"
               "{\"metadataType\":\"MetadataIntValue\",\"int_value\":\"3\"}}}",
               &in);
        cr_assert_eq(reg_patch_kind(&db, rm, id, rm->word, &kind), 0, "%s", err.message);
        cr_assert_eq(kind, rm);
        cr_assert_eq(reg_patch(&db, rm, id, rm->word, &in, &res), 0, "%s", err.message);
        cr_assert_str_eq(store_entity_prop(&res.e, "description", false)->s, "d");
        cr_assert_str_eq(store_entity_prop(&res.e, "owner", false)->s, "me", "kept");
        cr_assert_eq(store_entity_prop(&res.e, "a", true)->i, 3);
        reg_result_done(&res);
        reg_input_done(&in);

        expect_error(reg_patch_kind(&db, rm, 42, rm->word, &kind), ERROR_NOT_FOUND, -ENOENT,
                     "no registered model found for id 42");
        decode(REG_REGISTERED_MODEL, REG_SCHEMA_UPDATE, "{\"description\":\"e\"}", &in);
        expect_error(reg_patch(&db, rm, 42, rm->word, &in, &res), ERROR_NOT_FOUND, -ENOENT,
                     "no registered model found for id 42");
        reg_input_done(&in);
}

/* A generic artifact's PATCH decodes its body as the stored artifact's kind. */
Test(service, patch_kind_of_an_artifact_is_the_stored_one)
{
        const struct reg_kind *kind = NULL;
        int64_t id = create(REG_MODEL_ARTIFACT, "{\"name\":\"a\"}");

        cr_assert_eq(reg_patch_kind(&db, NULL, id, "artifact", &kind), 0, "%s", err.message);
        cr_assert_eq(kind, reg_kind(REG_MODEL_ARTIFACT));
        expect_error(reg_patch_kind(&db, NULL, id + 1000, "artifact", &kind), ERROR_NOT_FOUND,
                     -ENOENT, "no artifact found for id");
}

Test(service, list_pages_and_filters)
{
        struct reg_list_req rq = { .kind = reg_kind(REG_REGISTERED_MODEL), .page_size = 2 };
        struct reg_list l;
        char *tok;

        for (int i = 0; i < 5; i++) {
                char b[64];

                (void)snprintf(b, sizeof(b), "{\"name\":\"m%d\",\"owner\":\"%s\"}", i,
                               i % 2 ? "odd" : "even");
                (void)create(REG_REGISTERED_MODEL, b);
        }
        cr_assert_eq(reg_list(&db, &rq, &l), 0, "%s", err.message);
        cr_assert_eq(l.n, 2);
        cr_assert_not_null(l.next_page_token);
        tok = strdup(l.next_page_token);
        reg_list_done(&l);
        rq.page_token = tok;
        cr_assert_eq(reg_list(&db, &rq, &l), 0);
        cr_assert_eq(l.n, 2);
        cr_assert_str_eq(l.items[0].name, "m2");
        reg_list_done(&l);
        free(tok);

        rq = (struct reg_list_req){ .kind = reg_kind(REG_REGISTERED_MODEL),
                                    .filter = "owner = 'odd'" };
        cr_assert_eq(reg_list(&db, &rq, &l), 0);
        cr_assert_eq(l.n, 2);
        cr_assert_null(l.next_page_token);
        reg_list_done(&l);

        rq.filter = "owner = ";
        expect_error(reg_list(&db, &rq, &l), ERROR_INVALID, -EINVAL, "invalid filter query");
        rq.filter = NULL;
        rq.page_token = "!!";
        expect_error(reg_list(&db, &rq, &l), ERROR_INVALID, -EINVAL, "invalid nextPageToken");
}

Test(service, find_one)
{
        struct reg_find_req rq = { .kind = reg_kind(REG_REGISTERED_MODEL), .name = "m" };
        struct reg_result res;

        (void)create(REG_REGISTERED_MODEL, "{\"name\":\"m\",\"externalId\":\"ext\"}");
        cr_assert_eq(reg_find(&db, &rq, &res), 0);
        cr_assert_str_eq(res.e.external_id, "ext");
        reg_result_done(&res);
        rq = (struct reg_find_req){ .kind = reg_kind(REG_REGISTERED_MODEL), .external_id = "nope" };
        expect_error(reg_find(&db, &rq, &res), ERROR_NOT_FOUND, -ENOENT,
                     "no registered models found");
        rq = (struct reg_find_req){ .kind = reg_kind(REG_MODEL_VERSION), .name = "v" };
        expect_error(reg_find(&db, &rq, &res), ERROR_INVALID, -EINVAL,
                     "supply either (name and parentResourceId)");
}

Test(service, upsert_creates_then_updates)
{
        struct reg_input in = { 0 };
        struct reg_upsert_req rq = { .parent_kind = REG_MODEL_VERSION, .in = &in };
        struct reg_result res;
        int64_t rm = create(REG_REGISTERED_MODEL, "{\"name\":\"m\"}"), art;
        char b[128];

        (void)snprintf(b, sizeof(b), "{\"name\":\"v\",\"registeredModelId\":\"%lld\"}",
                       (long long)rm);
        rq.parent_id = create(REG_MODEL_VERSION, b);
        decode(REG_MODEL_ARTIFACT, REG_SCHEMA_FULL,
               "{\"artifactType\":\"model-artifact\",\"name\":\"w\"}", &in);
        cr_assert_eq(reg_upsert(&db, &rq, &res), 0, "%s", err.message);
        cr_assert(res.created);
        art = res.e.id;
        reg_result_done(&res);
        reg_input_done(&in);

        (void)snprintf(b, sizeof(b),
                       "{\"artifactType\":\"model-artifact\",\"id\":\"%lld\",\"uri\":\"u\"}",
                       (long long)art);
        decode(REG_MODEL_ARTIFACT, REG_SCHEMA_FULL, b, &in);
        cr_assert_eq(reg_upsert(&db, &rq, &res), 0, "%s", err.message);
        cr_assert(!res.created);
        cr_assert_eq(res.e.id, art);
        cr_assert_str_eq(store_entity_prop(&res.e, "uri", false)->s, "u");
        reg_result_done(&res);
        reg_input_done(&in);

        rq.parent_id = 999;
        decode(REG_MODEL_ARTIFACT, REG_SCHEMA_FULL, "{\"artifactType\":\"model-artifact\"}", &in);
        expect_error(reg_upsert(&db, &rq, &res), ERROR_NOT_FOUND, -ENOENT,
                     "no model version found for id 999");
        reg_input_done(&in);
}

Test(service, inference_service_derived_resources)
{
        struct reg_result res;
        int64_t rm = create(REG_REGISTERED_MODEL, "{\"name\":\"m\"}"),
                se = create(REG_SERVING_ENVIRONMENT, "{\"name\":\"se\"}"), is;
        char b[160];

        (void)snprintf(
                b, sizeof(b),
                "{\"name\":\"is\",\"registeredModelId\":\"%lld\",\"servingEnvironmentId\":\"%lld\"}",
                (long long)rm, (long long)se);
        is = create(REG_INFERENCE_SERVICE, b);
        cr_assert_eq(reg_is_model(&db, is, &res), 0);
        cr_assert_eq(res.e.id, rm);
        cr_assert_eq(res.kind, reg_kind(REG_REGISTERED_MODEL));
        reg_result_done(&res);
        expect_error(reg_is_version(&db, is, &res), ERROR_NOT_FOUND, -ENOENT,
                     "no model versions found");
        (void)snprintf(b, sizeof(b), "{\"name\":\"v\",\"registeredModelId\":\"%lld\"}",
                       (long long)rm);
        (void)create(REG_MODEL_VERSION, b);
        cr_assert_eq(reg_is_version(&db, is, &res), 0);
        cr_assert_str_eq(res.e.name, "v");
        reg_result_done(&res);
        expect_error(reg_is_model(&db, 77, &res), ERROR_NOT_FOUND, -ENOENT,
                     "no inference service found");
}
