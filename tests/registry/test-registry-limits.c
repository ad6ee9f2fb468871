/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Upstream's limits and leniencies (issue 14): name lengths as upstream's VARCHAR(255) column
 * holds them, artifactType on POST /model_artifacts, a metric's timestamp as given, and the
 * order of an experiment run's checks.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "helpers.h"
#include "store/entity.h"
#include "store/store.h"

TestSuite(limits, .init = reg_setup, .fini = reg_teardown, .timeout = 60);

/* The ids from create() are never NULL once asserted; gcc with sanitizers cannot see it. */
#define S(x) ((x) ? (x) : "")

static char *name_of(size_t n, char c)
{
        char *s = malloc(n + 1);

        cr_assert_not_null(s);
        memset(s, c, n);
        s[n] = 0;
        return s;
}

/* POST path with {"name": <n x c>, <extra>}; returns the status and asserts the 400's message. */
static long post_named(const char *path, size_t n, char c, const char *extra)
{
        char *name = name_of(n, c);
        size_t len = n + strlen(extra) + 64;
        char *body = malloc(len);
        json_t *j = NULL;
        long st;

        cr_assert_not_null(body);
        (void)snprintf(body, len, "{\"name\":\"%s\"%s%s}", name, *extra ? "," : "", extra);
        st = req("POST", path, body, &j);
        if (st == 201 || st == 200)
                cr_assert_str_eq(js(j, "name"), name, "%s: the name is returned as given", path);
        if (st == 400) {
                const char *m = js(j, "message");
                cr_assert(m && strstr(m, "name") && strstr(m, "at most"), "%s: %s", path,
                          m ? m : "");
        }
        json_decref(j);
        free(body);
        free(name);
        return st;
}

/* The longest name accepted under a parent of id pid: "<pid>:<name>" in 255 characters. */
static size_t limit_under(const char *pid)
{
        return 255 - strlen(pid) - 1;
}

static void boundary(const char *path, size_t max, const char *extra, long ok)
{
        cr_assert_eq(post_named(path, max, 'a', extra), ok, "%s: %zu characters", path, max);
        cr_assert_eq(post_named(path, max + 1, 'b', extra), 400, "%s: %zu characters", path,
                     max + 1);
        cr_assert_eq(post_named(path, 5000, 'c', extra), 400, "%s: 5000 characters", path);
}

Test(limits, name_length_at_255_and_256_for_every_kind)
{
        char extra[256], path[256];
        char *rm = create(API "/registered_models", "{\"name\":\"rm\"}", 201);
        char *se = create(API "/serving_environments", "{\"name\":\"se\"}", 201);
        char *ex = create(API "/experiments", "{\"name\":\"ex\"}", 201);
        char *mv, *is, *run;

        cr_assert(rm && se && ex);

        /* top-level kinds: the name alone */
        boundary(API "/registered_models", 255, "", 201);
        boundary(API "/serving_environments", 255, "", 201);
        boundary(API "/experiments", 255, "", 201);

        /* children: "<parentId>:<name>" */
        (void)snprintf(extra, sizeof(extra), "\"registeredModelId\":\"%s\"", S(rm));
        boundary(API "/model_versions", limit_under(S(rm)), extra, 201);
        (void)snprintf(path, sizeof(path), API "/registered_models/%s/versions", S(rm));
        cr_assert_eq(post_named(path, limit_under(S(rm)) + 1, 'd', extra), 400);
        {
                char body[512];
                (void)snprintf(body, sizeof(body), "{\"name\":\"v1\",%s}", extra);
                mv = create(API "/model_versions", body, 201);
        }

        (void)snprintf(extra, sizeof(extra),
                       "\"registeredModelId\":\"%s\",\"servingEnvironmentId\":\"%s\"", S(rm),
                       S(se));
        boundary(API "/inference_services", limit_under(S(se)), extra, 201);
        {
                char body[512];
                (void)snprintf(body, sizeof(body), "{\"name\":\"is\",%s}", extra);
                is = create(API "/inference_services", body, 201);
        }
        (void)snprintf(path, sizeof(path), API "/inference_services/%s/serves", S(is));
        (void)snprintf(extra, sizeof(extra), "\"modelVersionId\":\"%s\"", S(mv));
        boundary(path, limit_under(S(is)), extra, 201);

        (void)snprintf(extra, sizeof(extra), "\"experimentId\":\"%s\"", S(ex));
        boundary(API "/experiment_runs", limit_under(S(ex)), extra, 201);
        {
                char body[512];
                (void)snprintf(body, sizeof(body), "{\"name\":\"run\",%s}", extra);
                run = create(API "/experiment_runs", body, 201);
        }

        /* artifacts under a parent (the upsert path): "<parentId>:<name>" */
        (void)snprintf(path, sizeof(path), API "/model_versions/%s/artifacts", S(mv));
        boundary(path, limit_under(S(mv)), "\"artifactType\":\"model-artifact\"", 201);
        (void)snprintf(path, sizeof(path), API "/experiment_runs/%s/artifacts", S(run));
        boundary(path, limit_under(S(run)), "\"artifactType\":\"metric\",\"value\":1", 200);

        /* standalone artifacts: "<uuid>:<name>", 36 + 1 + 218 */
        boundary(API "/model_artifacts", 218, "", 201);
        boundary(API "/artifacts", 218, "\"artifactType\":\"doc-artifact\"", 201);
}

Test(limits, patch_cannot_store_a_long_name)
{
        char *rm = create(API "/registered_models", "{\"name\":\"rm\"}", 201);
        char *name = name_of(256, 'x');
        char path[128], body[512];
        json_t *j = NULL;

        (void)snprintf(path, sizeof(path), API "/registered_models/%s", S(rm));
        (void)snprintf(body, sizeof(body), "{\"name\":\"%s\"}", name);
        cr_assert_eq(req("PATCH", path, body, NULL), 400);
        cr_assert_eq(req("GET", path, NULL, &j), 200);
        cr_assert_str_eq(js(j, "name"), "rm");
        json_decref(j);
        free(name);
}

/* The schema's own constraint: a write below the API cannot store a name over 255 characters. */
Test(limits, schema_refuses_a_long_name)
{
        struct store *s = test_store();
        struct store_conn *c;
        char *ok = name_of(255, 'a'), *bad = name_of(256, 'b');
        struct store_entity e = { .group = STORE_GROUP_CONTEXT,
                                  .type = (char *)"RegisteredModel",
                                  .scope = (char *)"",
                                  .create_ms = 1,
                                  .update_ms = 1 };

        cr_assert_eq(store_acquire(s, &c), 0);
        e.name = ok;
        cr_assert_eq(store_entity_insert(s, c, &e, NULL), 0);
        e.name = bad;
        e.id = 0;
        cr_assert_eq(store_entity_insert(s, c, &e, NULL), -EINVAL);
        store_release(s, c);
        free(ok);
        free(bad);
}

/* Puts the database back at schema version 1 (before the name constraint). */
static void run_sql(struct store *s, struct store_conn *c, const char *sql)
{
        int r = store_exec(s, c, sql, NULL, 0, NULL, NULL);

        cr_assert_geq(r, 0, "%s: %d", sql, r);
}

static void downgrade_to_v1(struct store *s, struct store_conn *c)
{
        if (store_dialect(s) == STORE_DIALECT_POSTGRES)
                run_sql(s, c, "ALTER TABLE entity DROP CONSTRAINT entity_name_length");
        else {
                run_sql(s, c, "DROP TRIGGER entity_name_length_insert");
                run_sql(s, c, "DROP TRIGGER entity_name_length_update");
        }
        run_sql(s, c, "DELETE FROM schema_version WHERE version >= 2");
}

/* A database of the earlier schema holding a longer name still opens, and keeps the row. */
Test(limits, migration_keeps_existing_long_names)
{
        struct store *s = test_store(), *s2 = NULL;
        struct store_conn *c;
        char *long_name = name_of(300, 'l');
        struct store_entity e = { .group = STORE_GROUP_CONTEXT,
                                  .type = (char *)"RegisteredModel",
                                  .scope = (char *)"",
                                  .name = long_name,
                                  .create_ms = 1,
                                  .update_ms = 1 };
        struct store_entity got = { 0 };
        int64_t id;

        cr_assert_eq(store_schema_version(s), 4);
        cr_assert_eq(store_acquire(s, &c), 0);
        downgrade_to_v1(s, c);
        cr_assert_eq(store_entity_insert(s, c, &e, NULL), 0);
        id = e.id;
        store_release(s, c);

        cr_assert_eq(store_open(test_dsn(), 1, &s2), 0);
        cr_assert_eq(store_schema_version(s2), 4);
        cr_assert_eq(store_acquire(s2, &c), 0);
        cr_assert_eq(store_entity_get(s2, c, STORE_GROUP_CONTEXT, id, &got), 0);
        cr_assert_str_eq(got.name, long_name);
        store_entity_done(&got);
        e.id = 0;
        e.name = (char *)"another-name-of-the-right-length";
        cr_assert_eq(store_entity_insert(s2, c, &e, NULL), 0);
        e.id = 0;
        long_name[0] = 'm';
        e.name = long_name;
        cr_assert_eq(store_entity_insert(s2, c, &e, NULL), -EINVAL,
                     "the new constraint holds for new rows");
        store_release(s2, c);
        s2 = store_free(s2);
        free(long_name);
}

Test(limits, model_artifacts_ignores_artifact_type)
{
        json_t *j = NULL;
        char path[128];

        cr_assert_eq(req("POST", API "/model_artifacts",
                         "{\"artifactType\":\"doc-artifact\",\"name\":\"m\",\"uri\":\"s3://b/m\"}",
                         &j),
                     201);
        cr_assert_str_eq(js(j, "artifactType"), "model-artifact");
        (void)snprintf(path, sizeof(path), API "/model_artifacts/%s", js(j, "id"));
        json_decref(j);
        cr_assert_eq(req("GET", path, NULL, &j), 200);
        cr_assert_str_eq(js(j, "artifactType"), "model-artifact");
        cr_assert_str_eq(js(j, "uri"), "s3://b/m");
        json_decref(j);
        /* still refused where the type selects the kind */
        cr_assert_eq(req("POST", API "/artifacts", "{\"artifactType\":\"bogus\"}", NULL), 400);
}

Test(limits, metric_timestamp_is_stored_as_given)
{
        char *ex = create(API "/experiments", "{\"name\":\"ex\"}", 201);
        char body[256], path[128];
        static const char *const ts[] = { "", "abc", "1700000000000" };
        json_t *j = NULL;
        char *run;

        (void)snprintf(body, sizeof(body), "{\"name\":\"run\",\"experimentId\":\"%s\"}", S(ex));
        run = create(API "/experiment_runs", body, 201);
        (void)snprintf(path, sizeof(path), API "/experiment_runs/%s/artifacts", S(run));
        for (size_t i = 0; i < 3; i++) {
                (void)snprintf(
                        body, sizeof(body),
                        "{\"artifactType\":\"metric\",\"name\":\"m%zu\",\"value\":1,\"timestamp\":\"%s\"}",
                        i, ts[i]);
                cr_assert_eq(req("POST", path, body, &j), 200, "timestamp \"%s\"", ts[i]);
                cr_assert_str_eq(js(j, "timestamp"), ts[i]);
                json_decref(j);
        }
        (void)snprintf(path, sizeof(path),
                       API "/experiment_runs/%s/artifacts?artifactType=metric&orderBy=ID", S(run));
        cr_assert_eq(req("GET", path, NULL, &j), 200);
        for (size_t i = 0; i < 3; i++)
                cr_assert_str_eq(js(json_array_get(json_object_get(j, "items"), i), "timestamp"),
                                 ts[i]);
        json_decref(j);
        /* not a string is still a type error */
        cr_assert_eq(req("POST", API "/artifacts",
                         "{\"artifactType\":\"metric\",\"value\":1,\"timestamp\":5}", NULL),
                     400);
}

Test(limits, experiment_run_checks_the_experiment_first)
{
        char *ex = create(API "/experiments", "{\"name\":\"ex\"}", 201);
        char body[256];
        json_t *j = NULL;

        /* a missing experiment is 404 before the times are looked at */
        cr_assert_eq(
                req("POST", API "/experiment_runs",
                    "{\"experimentId\":\"999\",\"startTimeSinceEpoch\":\"abc\",\"endTimeSinceEpoch\":\"1\"}",
                    NULL),
                404);
        cr_assert_eq(
                req("POST", API "/experiment_runs",
                    "{\"experimentId\":\"999\",\"startTimeSinceEpoch\":\"5\",\"endTimeSinceEpoch\":\"1\"}",
                    NULL),
                404);
        /* one time alone is stored as given */
        (void)snprintf(body, sizeof(body),
                       "{\"name\":\"a\",\"experimentId\":\"%s\",\"startTimeSinceEpoch\":\"abc\"}",
                       S(ex));
        cr_assert_eq(req("POST", API "/experiment_runs", body, &j), 201);
        cr_assert_str_eq(js(j, "startTimeSinceEpoch"), "abc");
        json_decref(j);
        (void)snprintf(body, sizeof(body),
                       "{\"name\":\"b\",\"experimentId\":\"%s\",\"endTimeSinceEpoch\":\"x\"}",
                       S(ex));
        cr_assert_eq(req("POST", API "/experiment_runs", body, NULL), 201);
        /* both: parsed and compared */
        (void)snprintf(
                body, sizeof(body),
                "{\"name\":\"c\",\"experimentId\":\"%s\",\"startTimeSinceEpoch\":\"abc\",\"endTimeSinceEpoch\":\"1\"}",
                S(ex));
        cr_assert_eq(req("POST", API "/experiment_runs", body, &j), 400);
        cr_assert(strstr(js(j, "message"), "startTimeSinceEpoch"));
        json_decref(j);
        (void)snprintf(
                body, sizeof(body),
                "{\"name\":\"d\",\"experimentId\":\"%s\",\"startTimeSinceEpoch\":\"5\",\"endTimeSinceEpoch\":\"1\"}",
                S(ex));
        cr_assert_eq(req("POST", API "/experiment_runs", body, NULL), 400);
        (void)snprintf(
                body, sizeof(body),
                "{\"name\":\"e\",\"experimentId\":\"%s\",\"startTimeSinceEpoch\":\"1\",\"endTimeSinceEpoch\":\"5\"}",
                S(ex));
        cr_assert_eq(req("POST", API "/experiment_runs", body, &j), 201);
        cr_assert_str_eq(js(j, "endTimeSinceEpoch"), "5");
        json_decref(j);
}
