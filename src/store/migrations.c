/* SPDX-License-Identifier: Apache-2.0 */
#include "store/migrations.h"

const char store_sql_schema_version_create[] =
        "CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL)";
const char store_sql_schema_version_get[] = "SELECT COALESCE(MAX(version), 0) FROM schema_version";
const char store_sql_schema_version_insert[] = "INSERT INTO schema_version (version) VALUES (?)";
const char *const store_sql_sqlite_analyze[] = {
        "PRAGMA analysis_limit=1000",
        "ANALYZE",
        NULL,
};

/* The indexes of the entity table in 0001, the same statements for both engines. */
#define ENTITY_INDEXES_0001                                                            \
        "CREATE UNIQUE INDEX entity_name ON entity (type, scope, name)",               \
                "CREATE UNIQUE INDEX entity_external_id ON entity (grp, external_id)", \
                "CREATE INDEX entity_type_id ON entity (type, id)",                    \
                "CREATE INDEX entity_type_create ON entity (type, create_ms, id)",     \
                "CREATE INDEX entity_type_update ON entity (type, update_ms, id)",     \
                "CREATE INDEX entity_parent ON entity (parent_id, type, id)",          \
                "CREATE INDEX entity_type_name ON entity (type, name)"

/* ---- SQLite ---- */

static const char *const sqlite_0001[] = {
        "CREATE TABLE seq (grp INTEGER PRIMARY KEY, next_id INTEGER NOT NULL)",
        "INSERT INTO seq (grp, next_id) VALUES (0, 0), (1, 0), (2, 0)",
        "CREATE TABLE entity ("
        " grp INTEGER NOT NULL,"
        " id INTEGER NOT NULL,"
        " type TEXT NOT NULL,"
        " parent_id INTEGER NOT NULL DEFAULT 0,"
        " scope TEXT NOT NULL,"
        " name TEXT NOT NULL,"
        " external_id TEXT,"
        " create_ms INTEGER NOT NULL,"
        " update_ms INTEGER NOT NULL,"
        " PRIMARY KEY (grp, id))",
        ENTITY_INDEXES_0001,
        "CREATE TABLE property ("
        " grp INTEGER NOT NULL,"
        " entity_id INTEGER NOT NULL,"
        " custom INTEGER NOT NULL,"
        " name TEXT NOT NULL,"
        " vtype TEXT NOT NULL,"
        " string_value TEXT,"
        " int_value INTEGER,"
        " double_value REAL,"
        " bool_value INTEGER,"
        " PRIMARY KEY (grp, entity_id, custom, name))",
        "CREATE INDEX property_name_string ON property (name, custom, string_value)",
        NULL,
};

/*
 * 0002: no name longer than upstream's VARCHAR(255) column. SQLite cannot add a CHECK to an
 * existing table, so triggers guard inserts and renames; rows already stored are kept.
 */
static const char *const sqlite_0002[] = {
        "CREATE TRIGGER entity_name_length_insert BEFORE INSERT ON entity"
        " WHEN length(NEW.name) > 255 OR length(NEW.scope) > 255"
        " BEGIN SELECT RAISE(ABORT, 'entity name longer than 255 characters'); END",
        "CREATE TRIGGER entity_name_length_update BEFORE UPDATE OF name, scope ON entity"
        " WHEN length(NEW.name) > 255 OR length(NEW.scope) > 255"
        " BEGIN SELECT RAISE(ABORT, 'entity name longer than 255 characters'); END",
        NULL,
};

/* 0003: nothing (SQLite indexes values of any length); keeps the numbering of PostgreSQL's. */
static const char *const sqlite_0003[] = { NULL };

/* 0004: nothing (SQLite has one writer at a time; its seq row costs no extra wait). */
static const char *const sqlite_0004[] = { NULL };

static const struct store_migration sqlite_migrations[] = {
        { 1, sqlite_0001 },
        { 2, sqlite_0002 },
        { 3, sqlite_0003 },
        { 4, sqlite_0004 },
};

/* ---- PostgreSQL ---- */

static const char *const pg_0001[] = {
        "CREATE TABLE seq (grp INTEGER PRIMARY KEY, next_id BIGINT NOT NULL)",
        "INSERT INTO seq (grp, next_id) VALUES (0, 0), (1, 0), (2, 0)",
        "CREATE TABLE entity ("
        " grp INTEGER NOT NULL,"
        " id BIGINT NOT NULL,"
        " type TEXT NOT NULL,"
        " parent_id BIGINT NOT NULL DEFAULT 0,"
        " scope TEXT NOT NULL,"
        " name TEXT NOT NULL,"
        " external_id TEXT,"
        " create_ms BIGINT NOT NULL,"
        " update_ms BIGINT NOT NULL,"
        " PRIMARY KEY (grp, id))",
        ENTITY_INDEXES_0001,
        "CREATE TABLE property ("
        " grp INTEGER NOT NULL,"
        " entity_id BIGINT NOT NULL,"
        " custom INTEGER NOT NULL,"
        " name TEXT NOT NULL,"
        " vtype TEXT NOT NULL,"
        " string_value TEXT,"
        " int_value BIGINT,"
        " double_value DOUBLE PRECISION,"
        " bool_value INTEGER,"
        " PRIMARY KEY (grp, entity_id, custom, name))",
        "CREATE INDEX property_name_string ON property (name, custom, string_value)",
        NULL,
};

/* 0002: as SQLite's 0002; NOT VALID keeps rows already stored and checks every new write. */
static const char *const pg_0002[] = {
        "ALTER TABLE entity ADD CONSTRAINT entity_name_length"
        " CHECK (length(name) <= 255 AND length(scope) <= 255) NOT VALID",
        NULL,
};

/*
 * 0003: a btree index entry holds at most about 2,700 bytes, so the (name, custom,
 * string_value) index made every long string property (a description, a readme, a custom
 * property) fail with 500. A hash index stores only a hash of the value: equality lookups keep
 * an index, and any length can be stored (as in SQLite).
 */
static const char *const pg_0003[] = {
        "DROP INDEX IF EXISTS property_name_string",
        "CREATE INDEX IF NOT EXISTS property_string_hash ON property USING hash (string_value)",
        NULL,
};

/*
 * 0004: ids from one SEQUENCE per group instead of `UPDATE seq … RETURNING`, whose row lock
 * serialised every create until its COMMIT. nextval() takes no lock that lasts (a rolled-back
 * create leaves a gap, as upstream's serial ids do). Each sequence starts past both the old
 * counter and the largest id stored (the seq table is left as it is).
 */
#define PG_SEQ_START(g)                                                                       \
        "SELECT setval('entity_id_" #g "', GREATEST((SELECT next_id FROM seq WHERE grp = " #g \
        "), (SELECT COALESCE(MAX(id), 0) FROM entity WHERE grp = " #g ")) + 1, false)"
static const char *const pg_0004[] = {
        "CREATE SEQUENCE IF NOT EXISTS entity_id_0 AS BIGINT",
        "CREATE SEQUENCE IF NOT EXISTS entity_id_1 AS BIGINT",
        "CREATE SEQUENCE IF NOT EXISTS entity_id_2 AS BIGINT",
        PG_SEQ_START(0),
        PG_SEQ_START(1),
        PG_SEQ_START(2),
        NULL,
};

static const struct store_migration pg_migrations[] = {
        { 1, pg_0001 },
        { 2, pg_0002 },
        { 3, pg_0003 },
        { 4, pg_0004 },
};

const struct store_migration *store_migrations(enum store_dialect d, size_t *ret_n)
{
        if (d == STORE_DIALECT_POSTGRES) {
                *ret_n = ELEMENTSOF(pg_migrations);
                return pg_migrations;
        }
        *ret_n = ELEMENTSOF(sqlite_migrations);
        return sqlite_migrations;
}
