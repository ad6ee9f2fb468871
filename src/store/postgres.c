/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The PostgreSQL backend (libpq). Statement texts use '?' placeholders (shared with SQLite);
 * they are rewritten to $1, $2 … here, outside string literals. Parameters are sent as text
 * with explicit types (int8, float8, text), results come back as text.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store/store.h"
#include "util/buf.h"

#if HAVE_LIBPQ
#include <libpq-fe.h>

struct store_conn {
        PGconn *pg;
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
        if (strneq(state, "08", 2))
                return -ECONNRESET;
        if (streq(state, "22P02") || strneq(state, "22", 2))
                return -EINVAL;
        return -EIO;
}

static int pg_exec(struct store_conn *c, const char *sql, const struct store_val *params,
                   size_t n_params, store_row_fn fn, void *userdata)
{
        struct buf q = BUF_INIT(1024 * 1024);
        const char **values = NULL;
        unsigned *types = NULL;
        char (*tmp)[40] = NULL;
        PGresult *res = NULL;
        struct store_val cols[32];
        int r;

        r = rewrite_placeholders(sql, &q);
        if (r < 0)
                goto out;
        if (n_params > 0) {
                values = calloc(n_params, sizeof(*values));
                types = calloc(n_params, sizeof(*types));
                tmp = calloc(n_params, sizeof(*tmp));
                if (!values || !types || !tmp) {
                        r = -ENOMEM;
                        goto out;
                }
        }
        for (size_t i = 0; i < n_params; i++) {
                switch (params[i].type) {
                case STORE_INT:
                        (void)snprintf(tmp[i], sizeof(tmp[i]), "%lld", (long long)params[i].i);
                        values[i] = tmp[i];
                        types[i] = OID_INT8;
                        break;
                case STORE_DOUBLE:
                        (void)snprintf(tmp[i], sizeof(tmp[i]), "%.17g", params[i].d);
                        values[i] = tmp[i];
                        types[i] = OID_FLOAT8;
                        break;
                case STORE_TEXT:
                        values[i] = params[i].s;
                        types[i] = OID_TEXT;
                        break;
                default:
                        values[i] = NULL;
                        types[i] = 0;
                        break;
                }
        }
        res = PQexecParams(c->pg, buf_str(&q), (int)n_params, types, values, NULL, NULL, 0);
        if (!res) {
                r = -ENOMEM;
                goto out;
        }
        switch (PQresultStatus(res)) {
        case PGRES_COMMAND_OK: {
                const char *t = PQcmdTuples(res);
                r = (t && *t) ? (int)strtol(t, NULL, 10) : 0;
                break;
        }
        case PGRES_TUPLES_OK: {
                int rows = PQntuples(res), nf = PQnfields(res);

                if (nf > (int)ELEMENTSOF(cols)) {
                        r = -E2BIG;
                        break;
                }
                r = 0;
                for (int i = 0; i < rows && r >= 0; i++) {
                        for (int j = 0; j < nf; j++)
                                cols[j] = PQgetisnull(res, i, j) ? SV_NULL
                                                                 : SV_TEXT(PQgetvalue(res, i, j));
                        if (fn)
                                r = fn(userdata, cols, (size_t)nf);
                }
                if (r >= 0)
                        r = rows;
                break;
        }
        default:
                r = map_result(res);
                if (PQstatus(c->pg) != CONNECTION_OK) {
                        PQreset(c->pg);
                        r = -ECONNRESET;
                }
                break;
        }
out:
        PQclear(res);
        free(values);
        free(types);
        free(tmp);
        buf_release(&q);
        return r;
}

static void pg_close(struct store_conn *c)
{
        if (!c)
                return;
        PQfinish(c->pg);
        free(c);
}

static int simple(struct store_conn *c, const char *sql)
{
        int r = pg_exec(c, sql, NULL, 0, NULL, NULL);
        return r < 0 ? r : 0;
}

static int pg_open(const char *dsn, struct store_conn **ret)
{
        struct store_conn *c = calloc(1, sizeof(*c));
        int r;

        if (!c)
                return -ENOMEM;
        c->pg = PQconnectdb(dsn);
        if (!c->pg) {
                free(c);
                return -ENOMEM;
        }
        if (PQstatus(c->pg) != CONNECTION_OK) {
                pg_close(c);
                return -ECONNREFUSED;
        }
        r = simple(c, "SET client_min_messages TO warning");
        if (r >= 0)
                r = simple(c, "SET standard_conforming_strings TO on");
        if (r < 0) {
                pg_close(c);
                return r;
        }
        *ret = c;
        return 0;
}

static int pg_begin(struct store_conn *c)
{
        return simple(c, "BEGIN");
}

static int pg_commit(struct store_conn *c)
{
        return simple(c, "COMMIT");
}

static int pg_rollback(struct store_conn *c)
{
        return simple(c, "ROLLBACK");
}

static const struct store_backend_ops pg_ops = {
        .name = "postgres",
        .dialect = STORE_DIALECT_POSTGRES,
        .open = pg_open,
        .close = pg_close,
        .exec = pg_exec,
        .begin = pg_begin,
        .commit = pg_commit,
        .rollback = pg_rollback,
};

const struct store_backend_ops *const store_postgres_ops = &pg_ops;
#else
const struct store_backend_ops *const store_postgres_ops = NULL;
#endif
