/* SPDX-License-Identifier: Apache-2.0 */
/* The SQLite backend: one sqlite3 handle per pooled connection, WAL mode, busy timeout. */
#include <errno.h>
#include <locale.h>
#include <pthread.h>
#include <sqlite3.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <wctype.h>

#include "store/store.h"

#define BUSY_TIMEOUT_MS 10000

/*
 * Planner statistics. A bounded ANALYZE (analysis_limit) runs at start (store.c) and again after
 * ANALYZE_FIRST commits in the process, then each time the number of commits has doubled, and
 * at least every ANALYZE_EVERY_MAX commits: a database that grew from empty (a bulk load) gets
 * statistics after its first hundred writes, not after thousands.
 *
 * ANALYZE reloads the statistics only in the connection that ran it; SQLite's other
 * connections keep the plans of the statistics they loaded with the schema. So every ANALYZE
 * bumps stats_generation, and each connection whose stats_seen is older reloads them
 * ("ANALYZE sqlite_schema", as SQLite documents) before its next statement outside a
 * transaction. That reload needs the write lock for a moment: it is tried without waiting
 * (busy timeout 0) and, when a writer holds the lock, tried again at the next statement.
 */
#define ANALYZE_FIRST     100U
#define ANALYZE_EVERY_MAX 5000U

static atomic_ulong commits;
static atomic_ulong next_analyze = ANALYZE_FIRST;
static atomic_uint stats_generation;

/* Bytes kept of a unique violation's message ("UNIQUE constraint failed: entity.grp, …"). */
#define CONFLICT_MAX 128

struct store_conn {
        sqlite3 *db;
        unsigned stats_seen;         /* the stats_generation this connection's planner has loaded */
        char conflict[CONFLICT_MAX]; /* the last unique violation's columns (store.h conflict()) */
};

/* ---- mp_lower(): Unicode lowercase, as PostgreSQL's lower() under a UTF-8 libc locale ---- */

static locale_t utf8_locale;
static pthread_once_t utf8_locale_once = PTHREAD_ONCE_INIT;

static void utf8_locale_init(void)
{
        utf8_locale = newlocale(LC_CTYPE_MASK, "C.UTF-8", (locale_t)0);
}

/* Decodes one UTF-8 sequence at s (n bytes left); returns its length, or 0 when invalid. */
static size_t utf8_decode(const unsigned char *s, size_t n, uint32_t *ret)
{
        static const uint32_t min[] = { 0, 0, 0x80, 0x800, 0x10000 };
        size_t len = s[0] < 0x80             ? 1
                     : (s[0] & 0xE0) == 0xC0 ? 2
                     : (s[0] & 0xF0) == 0xE0 ? 3
                     : (s[0] & 0xF8) == 0xF0 ? 4
                                             : 0;
        uint32_t cp;

        if (len == 0 || len > n)
                return 0;
        cp = len == 1 ? s[0] : (uint32_t)(s[0] & (0x7F >> len));
        for (size_t i = 1; i < len; i++) {
                if ((s[i] & 0xC0) != 0x80)
                        return 0;
                cp = cp << 6 | (uint32_t)(s[i] & 0x3F);
        }
        if (cp < min[len] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
                return 0;
        *ret = cp;
        return len;
}

static size_t utf8_encode(uint32_t cp, unsigned char *out)
{
        if (cp < 0x80) {
                out[0] = (unsigned char)cp;
                return 1;
        }
        if (cp < 0x800) {
                out[0] = (unsigned char)(0xC0 | cp >> 6);
                out[1] = (unsigned char)(0x80 | (cp & 0x3F));
                return 2;
        }
        if (cp < 0x10000) {
                out[0] = (unsigned char)(0xE0 | cp >> 12);
                out[1] = (unsigned char)(0x80 | (cp >> 6 & 0x3F));
                out[2] = (unsigned char)(0x80 | (cp & 0x3F));
                return 3;
        }
        out[0] = (unsigned char)(0xF0 | cp >> 18);
        out[1] = (unsigned char)(0x80 | (cp >> 12 & 0x3F));
        out[2] = (unsigned char)(0x80 | (cp >> 6 & 0x3F));
        out[3] = (unsigned char)(0x80 | (cp & 0x3F));
        return 4;
}

/*
 * Lowercases every code point with the C library's Unicode tables (towlower_l in C.UTF-8), the
 * same simple mapping PostgreSQL's lower() applies in a database whose LC_CTYPE is a UTF-8 libc
 * locale. Bytes that are not valid UTF-8 pass through unchanged; so does everything when the
 * C.UTF-8 locale is missing (then only ASCII is folded).
 */
static void sql_mp_lower(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
        const unsigned char *in;
        unsigned char *out;
        size_t n, o = 0;

        (void)argc;
        if (sqlite3_value_type(argv[0]) == SQLITE_NULL) {
                sqlite3_result_null(ctx);
                return;
        }
        in = sqlite3_value_text(argv[0]);
        n = (size_t)sqlite3_value_bytes(argv[0]);
        if (!in) {
                sqlite3_result_error_nomem(ctx);
                return;
        }
        (void)pthread_once(&utf8_locale_once, utf8_locale_init);
        /* a lowercase letter never needs more than 4 bytes, and one byte never grows past 2 */
        out = sqlite3_malloc64((sqlite3_uint64)n * 2 + 4);
        if (!out) {
                sqlite3_result_error_nomem(ctx);
                return;
        }
        for (size_t i = 0; i < n;) {
                uint32_t cp;
                size_t len = utf8_decode(in + i, n - i, &cp);

                if (len == 0) {
                        out[o++] = in[i++];
                        continue;
                }
                if (cp < 0x80)
                        cp = cp >= 'A' && cp <= 'Z' ? cp + 32 : cp;
                else if (utf8_locale)
                        cp = (uint32_t)towlower_l((wint_t)cp, utf8_locale);
                o += utf8_encode(cp, out + o);
                i += len;
        }
        sqlite3_result_text64(ctx, (const char *)out, o, sqlite3_free, SQLITE_UTF8);
}

static int map_rc(sqlite3 *db, int rc)
{
        switch (rc & 0xff) {
        case SQLITE_OK:
        case SQLITE_DONE:
        case SQLITE_ROW:
                return 0;
        case SQLITE_CONSTRAINT:
                if (rc == SQLITE_CONSTRAINT_UNIQUE || rc == SQLITE_CONSTRAINT_PRIMARYKEY)
                        return -EEXIST;
                return -EINVAL;
        case SQLITE_BUSY:
        case SQLITE_LOCKED:
                return -EBUSY;
        case SQLITE_NOMEM:
                return -ENOMEM;
        case SQLITE_CANTOPEN:
        case SQLITE_PERM:
        case SQLITE_READONLY:
                return -EACCES;
        case SQLITE_FULL:
                return -ENOSPC;
        default:
                (void)db;
                return -EIO;
        }
}

/* Binds params[i] to parameter i + 1 of st; an SQLite result code. */
static int bind_params(sqlite3_stmt *st, const struct store_val *params, size_t n_params)
{
        for (size_t i = 0; i < n_params; i++) {
                const struct store_val *v = &params[i];
                int idx = (int)i + 1, rc;

                switch (v->type) {
                case STORE_INT:
                        rc = sqlite3_bind_int64(st, idx, v->i);
                        break;
                case STORE_DOUBLE:
                        rc = sqlite3_bind_double(st, idx, v->d);
                        break;
                case STORE_TEXT:
                        rc = v->s ? sqlite3_bind_text(st, idx, v->s, -1, SQLITE_STATIC)
                                  : sqlite3_bind_null(st, idx);
                        break;
                default:
                        rc = sqlite3_bind_null(st, idx);
                        break;
                }
                if (rc != SQLITE_OK)
                        return rc;
        }
        return SQLITE_OK;
}

/* The current row of st as n values in cols (views valid until the next step): 0 or -E2BIG for
 * more columns than max, -ENOMEM when SQLite could not make a text. */
static int row_values(sqlite3_stmt *st, struct store_val *cols, size_t max, size_t *ret_n)
{
        int n = sqlite3_column_count(st);

        if (n > (int)max)
                return -E2BIG;
        for (int i = 0; i < n; i++) {
                switch (sqlite3_column_type(st, i)) {
                case SQLITE_INTEGER:
                        cols[i] = SV_INT(sqlite3_column_int64(st, i));
                        break;
                case SQLITE_FLOAT:
                        cols[i] = SV_DOUBLE(sqlite3_column_double(st, i));
                        break;
                case SQLITE_NULL:
                        cols[i] = SV_NULL;
                        break;
                default:
                        cols[i] = SV_TEXT((const char *)sqlite3_column_text(st, i));
                        if (!cols[i].s)
                                return -ENOMEM;
                        break;
                }
        }
        *ret_n = (size_t)n;
        return 0;
}

/* Steps st to the end, handing each row to fn: the changes count, or a negative errno. */
static int step_rows(struct store_conn *c, sqlite3_stmt *st, store_row_fn fn, void *userdata)
{
        struct store_val cols[32];

        for (;;) {
                size_t n;
                int rc = sqlite3_step(st), r;

                if (rc == SQLITE_DONE)
                        return sqlite3_changes(c->db);
                if (rc != SQLITE_ROW) {
                        r = map_rc(c->db, sqlite3_extended_errcode(c->db));
                        if (r == -EEXIST) /* sqlite3_errmsg() names the index's columns */
                                (void)snprintf(c->conflict, sizeof(c->conflict), "%s",
                                               sqlite3_errmsg(c->db));
                        return r;
                }
                r = row_values(st, cols, ELEMENTSOF(cols), &n);
                if (r < 0)
                        return r;
                if (fn) {
                        r = fn(userdata, cols, n);
                        if (r < 0)
                                return r;
                }
        }
}

static int run(struct store_conn *c, const char *sql, const struct store_val *params,
               size_t n_params, store_row_fn fn, void *userdata)
{
        sqlite3_stmt *st = NULL;
        int rc, r;

        rc = sqlite3_prepare_v2(c->db, sql, -1, &st, NULL);
        if (rc != SQLITE_OK)
                return map_rc(c->db, sqlite3_extended_errcode(c->db));
        rc = bind_params(st, params, n_params);
        r = rc != SQLITE_OK ? map_rc(c->db, rc) : step_rows(c, st, fn, userdata);
        sqlite3_finalize(st);
        return r;
}

static int simple(struct store_conn *c, const char *sql)
{
        int r = run(c, sql, NULL, 0, NULL, NULL);
        return r < 0 ? r : 0;
}

/* Loads the statistics another connection gathered, when there are newer ones (see the top). */
static void stats_reload(struct store_conn *c)
{
        unsigned gen = atomic_load(&stats_generation);
        int r;

        if (gen == c->stats_seen || !sqlite3_get_autocommit(c->db))
                return;
        (void)sqlite3_busy_timeout(c->db, 0);
        r = simple(c, "ANALYZE sqlite_schema");
        (void)sqlite3_busy_timeout(c->db, BUSY_TIMEOUT_MS);
        if (r >= 0)
                c->stats_seen = gen;
}

/* Counts a commit and runs the bounded ANALYZE when one is due (see the top). */
static void stats_refresh(struct store_conn *c)
{
        unsigned long n = atomic_fetch_add(&commits, 1) + 1;
        unsigned long due = atomic_load(&next_analyze);
        unsigned long step = n < ANALYZE_FIRST ? ANALYZE_FIRST : n;

        if (n < due)
                return;
        if (step > ANALYZE_EVERY_MAX)
                step = ANALYZE_EVERY_MAX;
        /* one connection claims it */
        if (!atomic_compare_exchange_strong(&next_analyze, &due, n + step))
                return;
        if (simple(c, "PRAGMA analysis_limit=1000") < 0 || simple(c, "ANALYZE") < 0)
                return; /* best effort; the next one is due after step commits */
        /* this connection has the new statistics loaded already */
        c->stats_seen = atomic_fetch_add(&stats_generation, 1) + 1;
}

static int sqlite_exec(struct store_conn *c, const char *sql, const struct store_val *params,
                       size_t n_params, store_row_fn fn, void *userdata)
{
        stats_reload(c);
        return run(c, sql, params, n_params, fn, userdata);
}

static void sqlite_close(struct store_conn *c)
{
        if (!c)
                return;
        sqlite3_close_v2(c->db);
        free(c);
}

static int sqlite_open(const char *dsn, const struct store_pg_tls *tls, char *err, size_t err_size,
                       struct store_conn **ret)
{
        struct store_conn *c;
        const char *path = dsn;
        int rc, r;

        if (strneq(path, "sqlite://", 9))
                path += 9;
        else if (strneq(path, "sqlite:", 7))
                path += 7;
        if (!*path)
                return -EINVAL;
        c = calloc(1, sizeof(*c));
        if (!c)
                return -ENOMEM;
        rc = sqlite3_open_v2(path, &c->db,
                             SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX,
                             NULL);
        if (rc != SQLITE_OK) {
                r = map_rc(c->db, rc);
                if (err && err_size > 0)
                        (void)snprintf(err, err_size, "%s: %s", path, sqlite3_errmsg(c->db));
                sqlite_close(c);
                return r;
        }
        (void)sqlite3_extended_result_codes(c->db, 1);
        (void)sqlite3_busy_timeout(c->db, BUSY_TIMEOUT_MS);
        c->stats_seen = atomic_load(&stats_generation); /* loaded with the schema below */
        /* The first statements read the file's header and schema: a file that is not SQLite,
         * or is damaged, fails here and is named as such. */
        r = simple(c, "PRAGMA journal_mode=WAL");
        if (r >= 0)
                r = simple(c, "SELECT count(*) FROM sqlite_master");
        if (r < 0 && err && err_size > 0) {
                int xrc = sqlite3_errcode(c->db);

                if (xrc == SQLITE_NOTADB || xrc == SQLITE_CORRUPT)
                        (void)snprintf(err, err_size, "%s: not a database, or a damaged one (%s)",
                                       path, sqlite3_errmsg(c->db));
                else
                        (void)snprintf(err, err_size, "%s: %s", path, sqlite3_errmsg(c->db));
        }
        if (r >= 0)
                r = simple(c, "PRAGMA synchronous=FULL");
        if (r >= 0)
                r = simple(c, "PRAGMA foreign_keys=ON");
        /* LIKE is case-sensitive as in PostgreSQL; ILIKE is compiled to mp_lower() LIKE mp_lower(). */
        if (r >= 0)
                r = simple(c, "PRAGMA case_sensitive_like=ON");
        if (r >= 0 &&
            sqlite3_create_function_v2(c->db, "mp_lower", 1, SQLITE_UTF8 | SQLITE_DETERMINISTIC,
                                       NULL, sql_mp_lower, NULL, NULL, NULL) != SQLITE_OK)
                r = -ENOMEM;
        if (r < 0) {
                sqlite_close(c);
                return r;
        }
        *ret = c;
        return 0;
}

static int sqlite_begin(struct store_conn *c)
{
        stats_reload(c);
        return simple(c, "BEGIN IMMEDIATE");
}

static int sqlite_commit(struct store_conn *c)
{
        int r = simple(c, "COMMIT");

        if (r >= 0)
                stats_refresh(c);
        return r;
}

static int sqlite_rollback(struct store_conn *c)
{
        return simple(c, "ROLLBACK");
}

static const char *sqlite_conflict(struct store_conn *c)
{
        return c->conflict;
}

const struct store_backend_ops store_sqlite_ops = {
        .name = "sqlite",
        .dialect = STORE_DIALECT_SQLITE,
        .open = sqlite_open,
        .close = sqlite_close,
        .exec = sqlite_exec,
        .begin = sqlite_begin,
        .commit = sqlite_commit,
        .rollback = sqlite_rollback,
        .conflict = sqlite_conflict,
};
