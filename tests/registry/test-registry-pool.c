/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The store's pool and planner statistics (issue 14 item 5): on SQLite, statistics gathered
 * after a bulk load reach every pooled connection, not only the one that ran ANALYZE.
 */
#include <criterion/criterion.h>
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
                struct store_val v[] = { SV_INT(0),        SV_INT(i + 1), SV_TEXT("mr.ModelVersion"),
                                         SV_INT(1),        SV_TEXT("1"),  SV_TEXT(name),
                                         SV_NULL,          SV_INT(0),     SV_INT(0) };

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
