/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

/*
 * The store port: a small pool of database connections behind a backend vtable (SQLite or
 * PostgreSQL/libpq). Backends only know how to run one SQL statement with bound parameters;
 * every statement text lives in store/queries.c (DML, dialect-neutral, '?' placeholders) and
 * store/migrations.c (DDL per dialect, numbered, recorded in schema_version). Values are
 * always bound, never spliced into SQL text.
 *
 * Errors: negative errno. -EEXIST = unique constraint violation, -ENOENT = no such row,
 * -EBUSY = database locked/serialization failure, -ECONNREFUSED = the database cannot be
 * reached (PostgreSQL down; the connection is re-established on its next use),
 * -ECONNRESET = the connection was lost during the statement or transaction, -EIO = any other
 * database error.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/macro.h"

enum store_vtype {
        STORE_NULL,
        STORE_INT,
        STORE_DOUBLE,
        STORE_TEXT,
};

/* A bound parameter or a result column. Text is borrowed. */
struct store_val {
        enum store_vtype type;
        int64_t i;
        double d;
        const char *s;
};

#define SV_INT(x)    ((struct store_val){ .type = STORE_INT, .i = (x) })
#define SV_DOUBLE(x) ((struct store_val){ .type = STORE_DOUBLE, .d = (x) })
#define SV_TEXT(x)   ((struct store_val){ .type = STORE_TEXT, .s = (x) })
#define SV_NULL      ((struct store_val){ .type = STORE_NULL })

enum store_dialect {
        STORE_DIALECT_SQLITE,
        STORE_DIALECT_POSTGRES,
};

struct store_conn;

/*
 * TLS settings of a PostgreSQL connection, mapped onto the libpq parameters of the same name.
 * NULL = not set: the DSN's value or libpq's default applies (sslmode "prefer"). SQLite ignores
 * them.
 */
struct store_pg_tls {
        const char *sslmode; /* disable, allow, prefer, require, verify-ca, verify-full */
        const char *sslcert;
        const char *sslkey;
        const char *sslrootcert;
};

/* Whether mode is one of libpq's sslmode values. */
bool store_pg_sslmode_valid(const char *mode);

#define STORE_PG_PARAMS_MAX 12

/* The settings every PostgreSQL session of the store runs with, as libpq's "options". */
#define STORE_PG_SESSION_OPTIONS "-c client_min_messages=warning -c standard_conforming_strings=on"

/*
 * Builds the NULL-terminated keyword/value arrays (at most STORE_PG_PARAMS_MAX entries plus the
 * terminator) handed to libpq's PQconnectdbParams(…, expand_dbname=1): a bounded connect timeout,
 * TCP keepalives and the session's settings (STORE_PG_SESSION_OPTIONS) that the DSN may override, then the DSN itself (as "dbname", which libpq
 * expands), then the TLS settings that are set, which override the DSN's. Strings are
 * borrowed. -EINVAL for an invalid sslmode or an empty dsn.
 */
_warn_unused_result_ int store_pg_conn_params(const char *dsn, const struct store_pg_tls *tls,
                                              const char *keywords[STORE_PG_PARAMS_MAX + 1],
                                              const char *values[STORE_PG_PARAMS_MAX + 1]);

/* Called once per result row; cols are borrowed for the call. A negative return stops. */
typedef int (*store_row_fn)(void *userdata, const struct store_val *cols, size_t n_cols);

/* The backend vtable. */
struct store_backend_ops {
        const char *name;
        enum store_dialect dialect;
        /* Opens one connection; dsn and tls borrowed (tls may be NULL). On failure the
         * database's own message goes to err (err_size bytes, may be 0). */
        int (*open)(const char *dsn, const struct store_pg_tls *tls, char *err, size_t err_size,
                    struct store_conn **ret);
        void (*close)(struct store_conn *c);
        /* Runs one statement ('?' placeholders). Returns rows changed (>= 0) or negative errno. */
        int (*exec)(struct store_conn *c, const char *sql, const struct store_val *params,
                    size_t n_params, store_row_fn fn, void *userdata);
        /* Optional: exec() of a text assembled per call, not worth keeping prepared. */
        int (*exec_adhoc)(struct store_conn *c, const char *sql, const struct store_val *params,
                          size_t n_params, store_row_fn fn, void *userdata);
        /* What the database named in the last unique violation (-EEXIST) on c: the constraint
         * (PostgreSQL) or its columns (SQLite); "" when it named nothing. Borrowed, valid until
         * the next statement on c. */
        const char *(*conflict)(struct store_conn *c);
        /* Starts a transaction that will write (SQLite: BEGIN IMMEDIATE). */
        int (*begin)(struct store_conn *c);
        int (*commit)(struct store_conn *c);
        int (*rollback)(struct store_conn *c);
};

extern const struct store_backend_ops store_sqlite_ops;
/* NULL when built without libpq. */
extern const struct store_backend_ops *const store_postgres_ops;

struct store;

/*
 * Opens a pool of up to n_conns connections to dsn and runs the migrations. One connection is
 * opened here; the others when store_acquire() finds every open one busy (see store.c). dsn is a SQLite file path
 * (created on first use, WAL mode) or "postgres://…"/"postgresql://…" or a libpq key=value
 * string with host=/dbname=/user=/port= (PostgreSQL). -EPROTONOSUPPORT when PostgreSQL is asked
 * for but not compiled in.
 */
_warn_unused_result_ int store_open(const char *dsn, unsigned n_conns, struct store **ret);

struct store_open_options {
        unsigned n_conns;
        struct store_pg_tls tls; /* PostgreSQL only */
        char *error;             /* optional: the database's message when opening fails */
        size_t error_size;
};
/*
 * store_open() with TLS settings and the database's error message. -EHOSTDOWN: no PostgreSQL
 * server answered (nothing listening, a name that does not resolve yet, a server starting up):
 * worth retrying; -ECONNREFUSED: a server answered and refused, or TLS verification failed.
 */
_warn_unused_result_ int store_open_with(const char *dsn, const struct store_open_options *o,
                                         struct store **ret);
/* Closes every connection. Accepts NULL; returns NULL. */
struct store *store_free(struct store *s);
DEFINE_CLEANUP_FUNC(struct store *, store_free)

enum store_dialect store_dialect(const struct store *s);
/* The schema version after migrations. */
int store_schema_version(const struct store *s);

/* Whether the database answers now (readiness): a connection from the pool and one query of
 * its schema version. 0 or a negative errno. */
_warn_unused_result_ int store_ping(struct store *s);

/* Takes a connection from the pool: an idle one, else a new one while fewer than n_conns are
 * open, else it waits for one. When opening fails it waits for an open one (and tries opening
 * again a second later). Give it back with store_release(). */
_warn_unused_result_ int store_acquire(struct store *s, struct store_conn **ret);
void store_release(struct store *s, struct store_conn *c);

_warn_unused_result_ int store_exec(struct store *s, struct store_conn *c, const char *sql,
                                    const struct store_val *params, size_t n_params,
                                    store_row_fn fn, void *userdata);
/* store_exec() of a statement text assembled per call (list queries): never kept prepared on
 * PostgreSQL, so always planned with its values. */
_warn_unused_result_ int store_exec_adhoc(struct store *s, struct store_conn *c, const char *sql,
                                          const struct store_val *params, size_t n_params,
                                          store_row_fn fn, void *userdata);
/* The backend's conflict(): what the last -EEXIST on c clashed with. Borrowed; never NULL. */
const char *store_conflict(struct store *s, struct store_conn *c);
_warn_unused_result_ int store_begin(struct store *s, struct store_conn *c);
_warn_unused_result_ int store_commit(struct store *s, struct store_conn *c);
/* Never fails visibly. */
void store_rollback(struct store *s, struct store_conn *c);

/* Helpers for reading result columns whatever the backend's wire type (PG returns text). */
int64_t store_val_int(const struct store_val *v);
double store_val_double(const struct store_val *v);
/* Borrowed; NULL for SQL NULL. */
const char *store_val_text(const struct store_val *v);

/* Runs the numbered migrations on one connection (used by store_open). */
_warn_unused_result_ int store_migrate(const struct store_backend_ops *ops, struct store_conn *c,
                                       int *ret_version);
