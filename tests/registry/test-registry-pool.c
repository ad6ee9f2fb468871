/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The store's pool and planner statistics (issue 14 item 5): on SQLite, statistics gathered
 * after a bulk load reach every pooled connection, not only the one that ran ANALYZE; on
 * PostgreSQL, the pool opens connections as they are needed, never more than its bound, and
 * recovers from backends killed under it.
 */
#include <criterion/criterion.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "store/queries.h"
#include "store/store.h"
#include "util/macro.h"

TestSuite(pool, .timeout = 240);

static char tmpdir[64];
static char dbpath[128];

static void sqlite_file(void)
{
        const char *backend = getenv("MODELPLANE_TEST_BACKEND");

        if (backend && !streq(backend, "sqlite"))
                cr_skip_test("SQLite only");
        (void)snprintf(tmpdir, sizeof(tmpdir), "/tmp/mp-pool-test-XXXXXX");
        cr_assert_not_null(mkdtemp(tmpdir));
        (void)snprintf(dbpath, sizeof(dbpath), "%s/registry.db", tmpdir);
}

static void sqlite_file_remove(void)
{
        static const char *const suffixes[] = { "", "-wal", "-shm" };
        char p[160];

        for (size_t i = 0; i < ELEMENTSOF(suffixes); i++) {
                (void)snprintf(p, sizeof(p), "%s%s", dbpath, suffixes[i]);
                (void)unlink(p);
        }
        (void)rmdir(tmpdir);
}

static int plan_row(void *userdata, const struct store_val *cols, size_t n)
{
        char *plan = userdata;
        const char *detail = n >= 4 ? store_val_text(&cols[3]) : NULL;

        size_t used = strlen(plan);

        if (detail)
                (void)snprintf(plan + used, 512 - used, "%s; ", detail);
        return 0;
}

/* The plan SQLite picks on connection c for a name filter as the registry's list runs it. */
static void name_filter_plan(struct store *s, struct store_conn *c, char plan[512])
{
        static const char q[] = "EXPLAIN QUERY PLAN SELECT e.grp, e.id, e.type, e.parent_id,"
                                " e.scope, e.name, e.external_id, e.create_ms, e.update_ms"
                                " FROM entity e WHERE e.grp = ? AND e.type IN (?)"
                                " AND (e.name = ?) ORDER BY e.id ASC LIMIT ?";
        struct store_val p[] = { SV_INT(0), SV_TEXT("mr.ModelVersion"), SV_TEXT("v-777"),
                                 SV_INT(21) };

        plan[0] = 0;
        cr_assert_geq(store_exec(s, c, q, p, ELEMENTSOF(p), plan_row, plan), 0);
}

Test(pool, sqlite_statistics_reach_every_connection_after_a_bulk_load)
{
        CLEANUP(store_freep) struct store *s = NULL;
        struct store_conn *c[4];
        char plan[512];

        sqlite_file();
        cr_assert_eq(store_open(dbpath, 4, &s), 0);
        for (size_t i = 0; i < ELEMENTSOF(c); i++)
                cr_assert_eq(store_acquire(s, &c[i]), 0);
        /* an idle connection plans on the empty database's statistics: the id order */
        name_filter_plan(s, c[3], plan);
        cr_assert(!strstr(plan, "entity_type_name"), "empty database plan: %s", plan);

        /* a bulk load, one commit per entity as the API writes them, on connection 0 only */
        for (int i = 0; i < 2000; i++) {
                char name[32];
                struct store_val v[] = { SV_INT(0), SV_INT(i + 1), SV_TEXT("mr.ModelVersion"),
                                         SV_INT(1), SV_TEXT("1"),  SV_TEXT(name),
                                         SV_NULL,   SV_INT(0),     SV_INT(0) };

                (void)snprintf(name, sizeof(name), "v-%d", i);
                cr_assert_eq(store_begin(s, c[0]), 0);
                cr_assert_eq(store_exec(s, c[0], q_entity_insert, v, ELEMENTSOF(v), NULL, NULL), 1);
                cr_assert_eq(store_commit(s, c[0]), 0);
        }
        /* every connection, also those that wrote nothing, now finds the name in its index */
        for (size_t i = 0; i < ELEMENTSOF(c); i++) {
                name_filter_plan(s, c[i], plan);
                cr_assert(strstr(plan, "entity_type_name"), "connection %zu plan: %s", i, plan);
        }
        for (size_t i = 0; i < ELEMENTSOF(c); i++)
                store_release(s, c[i]);
        s = store_free(s);
        sqlite_file_remove();
}

/* ---- PostgreSQL: a lazy pool that stays bounded ---- */

static char pg_dsn[1024];
static char app_name[64];

/* The test DSN with an application_name of this test's own, to count its sessions. */
static void pg_test_dsn(void)
{
        const char *backend = getenv("MODELPLANE_TEST_BACKEND");
        const char *dsn = getenv("MODELPLANE_PG_DSN");

        if (!backend || !streq(backend, "postgres"))
                cr_skip_test("PostgreSQL only");
        if (!dsn || !*dsn)
                cr_skip_test("MODELPLANE_PG_DSN is not set");
        (void)snprintf(app_name, sizeof(app_name), "mp-pool-test-%ld", (long)getpid());
        if (strstr(dsn, "://"))
                (void)snprintf(pg_dsn, sizeof(pg_dsn), "%s%capplication_name=%s", dsn,
                               strchr(dsn, '?') ? '&' : '?', app_name);
        else
                (void)snprintf(pg_dsn, sizeof(pg_dsn), "%s application_name=%s", dsn, app_name);
}

static int read_count(void *userdata, const struct store_val *cols, size_t n)
{
        long *v = userdata;

        if (n >= 1)
                *v = (long)store_val_int(&cols[0]);
        return 0;
}

/* Sessions of this test's pool, as PostgreSQL sees them (asked on connection c). */
static long sessions(struct store *s, struct store_conn *c)
{
        static const char q[] = "SELECT count(*) FROM pg_stat_activity WHERE application_name = ?";
        struct store_val p = SV_TEXT(app_name);
        long n = -1;

        cr_assert_eq(store_exec(s, c, q, &p, 1, read_count, &n), 1);
        return n;
}

struct acquirer {
        struct store *s;
        atomic_bool done;
        int r;
};

static void *acquire_thread(void *arg)
{
        struct acquirer *a = arg;
        struct store_conn *c = NULL;

        a->r = store_acquire(a->s, &c);
        atomic_store(&a->done, true);
        if (a->r >= 0)
                store_release(a->s, c);
        return NULL;
}

Test(pool, postgres_opens_lazily_stays_bounded_and_survives_killed_backends)
{
        CLEANUP(store_freep) struct store *s = NULL;
        struct store_conn *c[4];
        struct acquirer a = { .done = false };
        pthread_t t;
        long n;

        pg_test_dsn();
        cr_assert_eq(store_open(pg_dsn, 4, &s), 0);
        /* one session after open: the others are opened when needed */
        cr_assert_eq(store_acquire(s, &c[0]), 0);
        cr_assert_eq(sessions(s, c[0]), 1);
        store_release(s, c[0]);
        /* sequential use keeps reusing that one */
        for (int i = 0; i < 10; i++) {
                cr_assert_eq(store_acquire(s, &c[0]), 0);
                store_release(s, c[0]);
        }
        cr_assert_eq(store_acquire(s, &c[0]), 0);
        cr_assert_eq(sessions(s, c[0]), 1);
        /* four held at once: four sessions */
        for (size_t i = 1; i < ELEMENTSOF(c); i++)
                cr_assert_eq(store_acquire(s, &c[i]), 0);
        cr_assert_eq(sessions(s, c[0]), 4);

        /* a fifth caller waits instead of opening a fifth session */
        a.s = s;
        cr_assert_eq(pthread_create(&t, NULL, acquire_thread, &a), 0);
        usleep(300 * 1000);
        cr_assert(!atomic_load(&a.done), "a fifth connection was handed out");
        cr_assert_eq(sessions(s, c[0]), 4);
        store_release(s, c[3]);
        cr_assert_eq(pthread_join(t, NULL), 0);
        cr_assert_eq(a.r, 0);
        cr_assert_eq(store_acquire(s, &c[3]), 0);

        /* kill the other three backends under the pool */
        {
                static const char q[] =
                        "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity"
                        " WHERE application_name = ? AND pid <> pg_backend_pid()";
                struct store_val p = SV_TEXT(app_name);

                n = -1;
                cr_assert_eq(store_exec(s, c[0], q, &p, 1, read_count, &n), 1);
                cr_assert_eq(n, 3);
        }
        for (size_t i = 0; i < ELEMENTSOF(c); i++)
                store_release(s, c[i]);
        /* every pooled connection serves again (re-established on use), still four at most */
        for (size_t i = 0; i < ELEMENTSOF(c); i++)
                cr_assert_eq(store_acquire(s, &c[i]), 0);
        for (size_t i = 0; i < ELEMENTSOF(c); i++) {
                n = -1;
                int r = store_exec(s, c[i], "SELECT 1", NULL, 0, read_count, &n);
                cr_assert_eq(r, 1, "connection %zu after pg_terminate_backend: %d", i, r);
                cr_assert_eq(n, 1);
        }
        /* (a terminated backend may linger in pg_stat_activity for a moment) */
        for (int i = 0; i < 100 && (n = sessions(s, c[0])) != 4; i++)
                usleep(50 * 1000);
        cr_assert_eq(n, 4);
        for (size_t i = 0; i < ELEMENTSOF(c); i++)
                store_release(s, c[i]);
}
