/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The PostgreSQL backend (libpq). Statement texts use '?' placeholders (shared with SQLite);
 * they are rewritten to $1, $2 … here, outside string literals. Parameters are sent as text
 * with explicit types (int8, float8, text), results come back as text.
 *
 * Lost connections: before a statement runs outside a transaction, the connection is checked
 * (a dead socket is noticed without a round trip) and re-established with PQreset() when the
 * server went away; while the server is unreachable every statement fails fast with
 * -ECONNREFUSED (one reconnect attempt per connection and second at most). Inside a
 * transaction a lost connection is -ECONNRESET: nothing is retried there, so a transaction
 * never continues on a new session. A read, or a BEGIN, that failed because the connection
 * was lost is retried once on a fresh connection.
 *
 * Prepared statements: each connection keeps up to PREPARED_MAX named statements, one per DML
 * text (SELECT/INSERT/UPDATE/DELETE of at most PREPARED_SQL_MAX bytes) and parameter type
 * signature, prepared on first use (PQprepare) and run with PQexecPrepared, so PostgreSQL
 * parses and analyses each text once per session instead of once per statement, and plans it
 * as PostgreSQL chooses (plan_cache_mode auto: after five executions a generic plan, kept when
 * it costs no more than the custom ones — a get by id then skips planning). Statements run
 * with store_exec_adhoc() (list queries, assembled per request: their texts follow the
 * filters users write) are prepared too, in a cache of their own of ADHOC_MAX texts per
 * session, the least recently used deallocated first, so no user's filters can fill the
 * session; PostgreSQL plans them with their values for the first five executions and keeps a
 * generic plan only when it costs no more than those (the same statement cache upstream's
 * server gets from pgx). Without it a list's text was parsed, analysed and planned on every
 * request, which made a name filter at one connection slower than upstream's (issue 27). A
 * text of more than ADHOC_PARAMS_MAX parameters (the properties of a page of entities, IN with
 * one parameter per entity) stays unnamed: prepared, its custom plans cost PostgreSQL twice
 * the CPU (a copy of the analysed query per execution; measured with a page of 100). A
 * reconnect forgets them (the new session has none). Past the cap, or when preparing fails,
 * statements run unnamed as before (PQexecParams), which also reports the error.
 */
#include "config.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "store/store.h"
#include "util/buf.h"
#include "util/time-util.h"

#if HAVE_LIBPQ
#include <libpq-fe.h>

#define RECONNECT_INTERVAL_USEC (1U * USEC_PER_SEC)

#define PREPARED_MAX     128
#define ADHOC_MAX        32
#define ADHOC_PARAMS_MAX 16
#define PREPARED_SQL_MAX ((size_t)16 * 1024)

/* A statement prepared on one session: its text, its parameter types, its name. */
struct prepared {
        uint64_t hash;   /* of sql and types */
        char *sql;       /* owned; as given (with '?') */
        unsigned *types; /* owned; n_params of them */
        size_t n_params;
        uint64_t used; /* the session's use counter when last run (the adhoc cache's LRU) */
        char name[16]; /* "mp_<n>" */
};

/* Bytes kept of a unique violation's constraint name (NAMEDATALEN is 64). */
#define CONFLICT_MAX 128

struct store_conn {
        PGconn *pg;
        char conflict[CONFLICT_MAX]; /* the last unique violation's constraint (store.h) */
        bool in_tx;                  /* between a successful BEGIN and COMMIT/ROLLBACK */
        usec_t next_connect;         /* monotonic; no reconnect attempt before */
        struct prepared prepared[PREPARED_MAX];
        size_t n_prepared;
        struct prepared adhoc[ADHOC_MAX]; /* store_exec_adhoc()'s texts, least recently used out */
        size_t n_adhoc;
        uint64_t uses;
        unsigned next_name;
};

#define OID_INT8   20
#define OID_FLOAT8 701
#define OID_TEXT   25

static int rewrite_placeholders(const char *sql, struct buf *out)
{
        unsigned n = 0;
        bool in_str = false;

        for (const char *p = sql; *p; p++) {
                int r;

                if (*p == '\'')
                        in_str = !in_str;
                if (*p == '?' && !in_str)
                        r = buf_printf(out, "$%u", ++n);
                else
                        r = buf_putc(out, *p);
                if (r < 0)
                        return r;
        }
        if (!out->p)
                return buf_puts(out, "");
        return 0;
}

static int map_result(PGresult *res)
{
        const char *state = PQresultErrorField(res, PG_DIAG_SQLSTATE);

        if (!state)
                return -EIO;
        if (streq(state, "23505"))
                return -EEXIST;
        if (strneq(state, "23", 2))
                return -EINVAL;
        if (streq(state, "40001") || streq(state, "40P01") || streq(state, "55P03"))
                return -EBUSY;
        /* connection exceptions; admin/crash shutdown, server starting up */
        if (strneq(state, "08", 2) || strneq(state, "57P", 3))
                return -ECONNRESET;
        if (streq(state, "22P02") || strneq(state, "22", 2))
                return -EINVAL;
        return -EIO;
}

static void prepared_free(struct prepared *p)
{
        free(p->sql);
        free(p->types);
        *p = (struct prepared){ .sql = NULL };
}

/* Forgets every prepared statement (the session that held them is gone). */
static void prepared_forget(struct store_conn *c)
{
        for (size_t i = 0; i < c->n_prepared; i++)
                prepared_free(&c->prepared[i]);
        for (size_t i = 0; i < c->n_adhoc; i++)
                prepared_free(&c->adhoc[i]);
        c->n_prepared = 0;
        c->n_adhoc = 0;
}

static uint64_t fnv1a(uint64_t h, const void *p, size_t n)
{
        const unsigned char *b = p;

        for (size_t i = 0; i < n; i++)
                h = (h ^ b[i]) * UINT64_C(0x100000001b3);
        return h;
}

static bool preparable(const char *sql)
{
        return strlen(sql) <= PREPARED_SQL_MAX &&
               (strncasecmp(sql, "SELECT", 6) == 0 || strncasecmp(sql, "INSERT", 6) == 0 ||
                strncasecmp(sql, "UPDATE", 6) == 0 || strncasecmp(sql, "DELETE", 6) == 0);
}

/* The entry of v[0..n) for sql with these parameter types (hash h), or NULL. */
static struct prepared *prepared_find(struct prepared *v, size_t n, uint64_t h, const char *sql,
                                      const unsigned *types, size_t n_params)
{
        for (size_t i = 0; i < n; i++) {
                struct prepared *p = &v[i];

                if (p->sql && p->hash == h && p->n_params == n_params && streq(p->sql, sql) &&
                    (n_params == 0 || memcmp(p->types, types, n_params * sizeof(*types)) == 0))
                        return p;
        }
        return NULL;
}

/*
 * A free slot of the adhoc cache: an empty one (its PQprepare failed), a new one, or the least
 * recently used one, deallocated (DEALLOCATE: the session keeps at most ADHOC_MAX of them). NULL
 * when the DEALLOCATE failed: the caller then runs the statement unnamed.
 */
static struct prepared *adhoc_slot(struct store_conn *c)
{
        struct prepared *lru = &c->adhoc[0];
        char cmd[32];
        PGresult *res;
        bool ok;

        for (size_t i = 0; i < c->n_adhoc; i++)
                if (!c->adhoc[i].sql)
                        return &c->adhoc[i];
        if (c->n_adhoc < ADHOC_MAX)
                return &c->adhoc[c->n_adhoc++];
        for (size_t i = 1; i < ADHOC_MAX; i++)
                if (c->adhoc[i].used < lru->used)
                        lru = &c->adhoc[i];
        (void)snprintf(cmd, sizeof(cmd), "DEALLOCATE %s", lru->name);
        res = PQexec(c->pg, cmd);
        ok = res && PQresultStatus(res) == PGRES_COMMAND_OK;
        PQclear(res);
        if (!ok)
                return NULL;
        prepared_free(lru);
        return lru;
}

/*
 * The name of the statement prepared for sql with these parameter types, preparing it first
 * when new, in the adhoc cache when @adhoc; NULL when it is not prepared (not DML, too long, the
 * cache is full, or PQprepare failed): the caller then runs it unnamed.
 */
static const char *prepared_name(struct store_conn *c, bool adhoc, const char *sql,
                                 const char *rewritten, const unsigned *types, size_t n_params)
{
        uint64_t h = fnv1a(UINT64_C(0xcbf29ce484222325), sql, strlen(sql));
        struct prepared *p;
        PGresult *res;
        bool ok;

        h = fnv1a(h, types, n_params * sizeof(*types));
        p = adhoc ? prepared_find(c->adhoc, c->n_adhoc, h, sql, types, n_params)
                  : prepared_find(c->prepared, c->n_prepared, h, sql, types, n_params);
        if (p) {
                p->used = ++c->uses;
                return p->name;
        }
        if (!preparable(sql) || (!adhoc && c->n_prepared >= PREPARED_MAX) ||
            (adhoc && n_params > ADHOC_PARAMS_MAX))
                return NULL;
        p = adhoc ? adhoc_slot(c) : &c->prepared[c->n_prepared];
        if (!p)
                return NULL;
        *p = (struct prepared){ .hash = h,
                                .used = ++c->uses,
                                .n_params = n_params,
                                .sql = strdup(sql),
                                .types = n_params ? malloc(n_params * sizeof(*types)) : NULL };
        if (!p->sql || (n_params && !p->types)) {
                free(p->sql);
                free(p->types);
                return NULL;
        }
        if (n_params)
                memcpy(p->types, types, n_params * sizeof(*types));
        (void)snprintf(p->name, sizeof(p->name), "mp_%u", c->next_name++);
        res = PQprepare(c->pg, p->name, rewritten, (int)n_params, types);
        ok = res && PQresultStatus(res) == PGRES_COMMAND_OK;
        PQclear(res);
        if (!ok) {
                /* an adhoc slot stays counted, empty: found by none, taken by the next text */
                prepared_free(p);
                return NULL;
        }
        if (!adhoc)
                c->n_prepared++;
        return p->name;
}

/* The parameters as libpq takes them: text values (numbers printed into tmp) and type oids. */
struct pg_params {
        const char **values;
        unsigned *types;
        char (*tmp)[40];
};

static void pg_params_done(struct pg_params *p)
{
        free(p->values);
        free(p->types);
        free(p->tmp);
}

static int pg_params_bind(struct pg_params *p, const struct store_val *params, size_t n)
{
        *p = (struct pg_params){ .values = NULL };
        if (n == 0)
                return 0;
        p->values = calloc(n, sizeof(*p->values));
        p->types = calloc(n, sizeof(*p->types));
        p->tmp = calloc(n, sizeof(*p->tmp));
        if (!p->values || !p->types || !p->tmp)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++) {
                switch (params[i].type) {
                case STORE_INT:
                        (void)snprintf(p->tmp[i], sizeof(p->tmp[i]), "%lld",
                                       (long long)params[i].i);
                        p->values[i] = p->tmp[i];
                        p->types[i] = OID_INT8;
                        break;
                case STORE_DOUBLE:
                        (void)snprintf(p->tmp[i], sizeof(p->tmp[i]), "%.17g", params[i].d);
                        p->values[i] = p->tmp[i];
                        p->types[i] = OID_FLOAT8;
                        break;
                case STORE_TEXT:
                        p->values[i] = params[i].s;
                        p->types[i] = OID_TEXT;
                        break;
                default:
                        p->values[i] = NULL;
                        p->types[i] = 0;
                        break;
                }
        }
        return 0;
}

/* Hands every row of a PGRES_TUPLES_OK result to fn; the number of rows, or fn's error. */
static int pg_rows(PGresult *res, store_row_fn fn, void *userdata)
{
        struct store_val cols[32];
        int rows = PQntuples(res), nf = PQnfields(res), r = 0;

        if (nf > (int)ELEMENTSOF(cols))
                return -E2BIG;
        for (int i = 0; i < rows && r >= 0; i++) {
                for (int j = 0; j < nf; j++)
                        cols[j] = PQgetisnull(res, i, j) ? SV_NULL : SV_TEXT(PQgetvalue(res, i, j));
                if (fn)
                        r = fn(userdata, cols, (size_t)nf);
        }
        return r < 0 ? r : rows;
}

/* What a statement's result means: rows changed or returned, or a negative errno. */
static int pg_result(struct store_conn *c, PGresult *res, store_row_fn fn, void *userdata)
{
        const char *t;
        int r;

        if (!res)
                /* libpq gives no result when it cannot send (the connection broke, for example
                 * under a PQprepare that failed on a terminated backend) */
                return PQstatus(c->pg) != CONNECTION_OK ? -ECONNRESET : -ENOMEM;
        switch (PQresultStatus(res)) {
        case PGRES_COMMAND_OK:
                t = PQcmdTuples(res);
                return (t && *t) ? (int)strtol(t, NULL, 10) : 0;
        case PGRES_TUPLES_OK:
                return pg_rows(res, fn, userdata);
        default:
                r = map_result(res);
                if (r == -EEXIST) {
                        const char *name = PQresultErrorField(res, PG_DIAG_CONSTRAINT_NAME);

                        (void)snprintf(c->conflict, sizeof(c->conflict), "%s", name ? name : "");
                }
                /* re-established on the next use, outside a transaction */
                return PQstatus(c->pg) != CONNECTION_OK ? -ECONNRESET : r;
        }
}

static int exec_once(struct store_conn *c, bool adhoc, const char *sql,
                     const struct store_val *params, size_t n_params, store_row_fn fn,
                     void *userdata)
{
        struct buf q = BUF_INIT((size_t)1024 * 1024);
        struct pg_params p = { .values = NULL };
        PGresult *res;
        const char *name;
        int r;

        r = rewrite_placeholders(sql, &q);
        if (r >= 0)
                r = pg_params_bind(&p, params, n_params);
        if (r < 0) {
                pg_params_done(&p);
                buf_release(&q);
                return r;
        }
        /* never inside a failed transaction: PQprepare would fail there, and so will the
         * statement, which reports why */
        name = PQtransactionStatus(c->pg) == PQTRANS_INERROR
                       ? NULL
                       : prepared_name(c, adhoc, sql, buf_str(&q), p.types, n_params);
        if (name)
                res = PQexecPrepared(c->pg, name, (int)n_params, p.values, NULL, NULL, 0);
        else
                res = PQexecParams(c->pg, buf_str(&q), (int)n_params, p.types, p.values, NULL, NULL,
                                   0);
        r = pg_result(c, res, fn, userdata);
        PQclear(res);
        pg_params_done(&p);
        buf_release(&q);
        return r;
}

static void pg_close(struct store_conn *c)
{
        if (!c)
                return;
        prepared_forget(c);
        PQfinish(c->pg);
        free(c);
}

/*
 * The session's settings. They normally came in the startup packet (STORE_PG_SESSION_OPTIONS,
 * no round trip); when the DSN's own "options" replaced them they are set here, in one round
 * trip (one simple query; its statements run as one implicit transaction, so all or none apply).
 */
static int session_setup(struct store_conn *c)
{
        const char *sql =
                "SET client_min_messages TO warning; SET standard_conforming_strings TO on";
        PQconninfoOption *info = PQconninfo(c->pg);
        bool in_startup = false;
        PGresult *res;
        bool ok;

        for (PQconninfoOption *o = info; o && o->keyword; o++)
                if (streq(o->keyword, "options"))
                        in_startup = o->val && streq(o->val, STORE_PG_SESSION_OPTIONS);
        PQconninfoFree(info);
        if (in_startup)
                return 0;
        res = PQexec(c->pg, sql);
        ok = res && PQresultStatus(res) == PGRES_COMMAND_OK;
        PQclear(res);
        return ok ? 0 : -EIO;
}

/*
 * An idle connection has nothing to read. Readable data or EOF means the server sent its
 * shutdown error or closed the socket (restart, crash, idle timeout): consuming it makes libpq
 * notice, without a round trip.
 */
static bool alive(struct store_conn *c)
{
        for (int i = 0; i < 4 && PQstatus(c->pg) == CONNECTION_OK; i++) {
                struct pollfd p = { .fd = PQsocket(c->pg), .events = POLLIN };

                if (p.fd < 0 || poll(&p, 1, 0) <= 0)
                        break;
                if (!PQconsumeInput(c->pg))
                        break;
        }
        return PQstatus(c->pg) == CONNECTION_OK;
}

/* Makes sure c has a live session before a statement; see the comment at the top. */
static int ensure_connected(struct store_conn *c)
{
        usec_t now;

        if (alive(c))
                return 0;
        if (c->in_tx)
                return -ECONNRESET;
        now = now_monotonic();
        if (now < c->next_connect)
                return -ECONNREFUSED;
        PQreset(c->pg);
        prepared_forget(c); /* the new session has none */
        if (PQstatus(c->pg) != CONNECTION_OK || session_setup(c) < 0) {
                c->next_connect = now + RECONNECT_INTERVAL_USEC;
                return -ECONNREFUSED;
        }
        return 0;
}

/* Statements that may run twice without a visible effect. */
static bool retry_safe(const char *sql)
{
        return strncasecmp(sql, "SELECT", 6) == 0 || strncasecmp(sql, "BEGIN", 5) == 0;
}

static int run(struct store_conn *c, bool adhoc, const char *sql, const struct store_val *params,
               size_t n_params, store_row_fn fn, void *userdata)
{
        int r = ensure_connected(c);

        if (r < 0)
                return r;
        r = exec_once(c, adhoc, sql, params, n_params, fn, userdata);
        if (r == -ECONNRESET && !c->in_tx && retry_safe(sql)) {
                r = ensure_connected(c);
                if (r >= 0)
                        r = exec_once(c, adhoc, sql, params, n_params, fn, userdata);
        }
        return r;
}

static int pg_exec(struct store_conn *c, const char *sql, const struct store_val *params,
                   size_t n_params, store_row_fn fn, void *userdata)
{
        return run(c, false, sql, params, n_params, fn, userdata);
}

static int pg_exec_adhoc(struct store_conn *c, const char *sql, const struct store_val *params,
                         size_t n_params, store_row_fn fn, void *userdata)
{
        return run(c, true, sql, params, n_params, fn, userdata);
}

/*
 * Whether a failed connection met no server (nothing listening, no route, a name that does not
 * resolve yet, a server starting up or shutting down), as opposed to a server that answered and
 * refused (authentication, unknown database) or a TLS handshake that failed verification: the
 * first may pass by itself, the others are configuration errors.
 */
static bool pg_unreachable(const char *const *keywords, const char *const *values, const char *msg)
{
        PGPing p;

        if (msg && (strstr(msg, "SSL") || strstr(msg, "certificate")))
                return false;
        p = PQpingParams(keywords, values, 1);
        return p == PQPING_NO_RESPONSE || p == PQPING_REJECT;
}

static int pg_open(const char *dsn, const struct store_pg_tls *tls, char *err, size_t err_size,
                   struct store_conn **ret)
{
        const char *keywords[STORE_PG_PARAMS_MAX + 1], *values[STORE_PG_PARAMS_MAX + 1];
        struct store_conn *c;
        int r;

        r = store_pg_conn_params(dsn, tls, keywords, values);
        if (r < 0)
                return r;
        c = calloc(1, sizeof(*c));
        if (!c)
                return -ENOMEM;
        c->pg = PQconnectdbParams(keywords, values, 1);
        if (!c->pg) {
                free(c);
                return -ENOMEM;
        }
        if (PQstatus(c->pg) != CONNECTION_OK) {
                if (err && err_size > 0) {
                        size_t n;

                        (void)snprintf(err, err_size, "%s", PQerrorMessage(c->pg));
                        n = strlen(err);
                        while (n > 0 && (err[n - 1] == '\n' || err[n - 1] == ' '))
                                err[--n] = 0;
                }
                r = pg_unreachable(keywords, values, PQerrorMessage(c->pg)) ? -EHOSTDOWN
                                                                            : -ECONNREFUSED;
                pg_close(c);
                return r;
        }
        r = session_setup(c);
        if (r < 0) {
                pg_close(c);
                return r;
        }
        *ret = c;
        return 0;
}

static int pg_begin(struct store_conn *c)
{
        int r = pg_exec(c, "BEGIN", NULL, 0, NULL, NULL);

        if (r < 0)
                return r;
        c->in_tx = true;
        return 0;
}

static int pg_commit(struct store_conn *c)
{
        int r = pg_exec(c, "COMMIT", NULL, 0, NULL, NULL);

        c->in_tx = false;
        return r < 0 ? r : 0;
}

static int pg_rollback(struct store_conn *c)
{
        int r = pg_exec(c, "ROLLBACK", NULL, 0, NULL, NULL);

        c->in_tx = false;
        return r < 0 ? r : 0;
}

static const char *pg_conflict(struct store_conn *c)
{
        return c->conflict;
}

static const struct store_backend_ops pg_ops = {
        .name = "postgres",
        .dialect = STORE_DIALECT_POSTGRES,
        .open = pg_open,
        .close = pg_close,
        .exec = pg_exec,
        .exec_adhoc = pg_exec_adhoc,
        .begin = pg_begin,
        .commit = pg_commit,
        .rollback = pg_rollback,
        .conflict = pg_conflict,
};

const struct store_backend_ops *const store_postgres_ops = &pg_ops;
#else
const struct store_backend_ops *const store_postgres_ops = NULL;
#endif
