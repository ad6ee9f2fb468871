/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

/*
 * Numbered schema migrations per dialect. Migration N (1-based) is a NULL-terminated list of
 * DDL statements; store_migrate() applies the ones above the recorded schema_version, each in
 * its own transaction together with the schema_version row.
 */

#include <stddef.h>

#include "store/store.h"

struct store_migration {
        int version;
        const char *const *statements; /* NULL-terminated */
};

/* The migrations of a dialect, in order; count in *ret_n. */
const struct store_migration *store_migrations(enum store_dialect d, size_t *ret_n);

extern const char store_sql_schema_version_create[];
extern const char store_sql_schema_version_get[];
extern const char store_sql_schema_version_insert[];
/* Run at start on SQLite: bounded ANALYZE so the planner has statistics. */
extern const char *const store_sql_sqlite_analyze[];
