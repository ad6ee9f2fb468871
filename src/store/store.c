/* SPDX-License-Identifier: Apache-2.0 */
#include "store/store.h"

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "store/migrations.h"
#include "util/time-util.h"

/* After a lazy open failed, no other attempt before this long (the pool serves with the
 * connections it has meanwhile). */
#define OPEN_RETRY_USEC (1U * USEC_PER_SEC)

/*
 * The pool. Connection 0 is opened (and migrates) in store_open(); the others are opened on
 * demand, by store_acquire() when every open connection is busy, up to n_conns: a restart
 * serves as soon as one connection is up, and a pool never opens more connections than the
 * peak concurrency asks for. conns[0 .. n_open) are open; n_opening are being opened (outside
 * the lock) and count against n_conns.
 */
struct store {
        const struct store_backend_ops *ops;
        pthread_mutex_t lock;
        pthread_cond_t cond;
        struct store_conn **conns; /* owned */
        bool *busy;
        unsigned n_conns; /* the bound */
        unsigned n_open;
        unsigned n_opening;
        usec_t next_open;        /* monotonic; no lazy open before */
        char *dsn;               /* owned, for lazy opens */
        struct store_pg_tls tls; /* owned strings */
        int version;
};

static void tls_free(struct store_pg_tls *t)
{
        free((char *)t->sslmode);
        free((char *)t->sslcert);
        free((char *)t->sslkey);
        free((char *)t->sslrootcert);
        *t = (struct store_pg_tls){ .sslmode = NULL };
}

static int dup_or_null(const char *in, const char **out)
{
        *out = NULL;
        if (!in)
                return 0;
        *out = strdup(in);
        return *out ? 0 : -ENOMEM;
}

static int tls_copy(const struct store_pg_tls *in, struct store_pg_tls *out)
{
        if (dup_or_null(in->sslmode, &out->sslmode) < 0 ||
            dup_or_null(in->sslcert, &out->sslcert) < 0 ||
            dup_or_null(in->sslkey, &out->sslkey) < 0 ||
            dup_or_null(in->sslrootcert, &out->sslrootcert) < 0)
                return -ENOMEM;
        return 0;
}

static const struct store_backend_ops *backend_for(const char *dsn)
{
        if (strneq(dsn, "postgres://", 11) || strneq(dsn, "postgresql://", 13) ||
            strneq(dsn, "postgres:", 9))
                return store_postgres_ops;
        /* libpq key=value connection strings ("host=db user=mr dbname=registry") */
        if (strchr(dsn, '=') && (strstr(dsn, "host=") || strstr(dsn, "dbname=") ||
                                 strstr(dsn, "user=") || strstr(dsn, "port=")))
                return store_postgres_ops;
        return &store_sqlite_ops;
}

bool store_pg_sslmode_valid(const char *mode)
{
        static const char *const modes[] = { "disable", "allow",     "prefer",
                                             "require", "verify-ca", "verify-full" };

        if (!mode)
                return false;
        for (size_t i = 0; i < ELEMENTSOF(modes); i++)
                if (streq(mode, modes[i]))
                        return true;
        return false;
}

int store_pg_conn_params(const char *dsn, const struct store_pg_tls *tls,
                         const char *keywords[STORE_PG_PARAMS_MAX + 1],
                         const char *values[STORE_PG_PARAMS_MAX + 1])
{
        size_t n = 0;

#define ADD(k, v)                  \
        do {                       \
                keywords[n] = (k); \
                values[n] = (v);   \
                n++;               \
        } while (0)

        if (!dsn || !*dsn)
                return -EINVAL;
        if (tls && tls->sslmode && !store_pg_sslmode_valid(tls->sslmode))
                return -EINVAL;
        /* Defaults the DSN may override: never wait forever for an unreachable host, and
         * notice a silently dead peer within about a minute. */
        ADD("connect_timeout", "10");
        ADD("keepalives", "1");
        ADD("keepalives_idle", "30");
        ADD("keepalives_interval", "10");
        ADD("keepalives_count", "3");
        /* names the registry's sessions in pg_stat_activity unless the DSN names them */
        ADD("fallback_application_name", "modelplane");
        /* the session's settings in the startup packet, no round trip of their own (the
         * backend checks that they apply; a DSN's own options replace them) */
        ADD("options", STORE_PG_SESSION_OPTIONS);
        ADD("dbname", dsn);
        /* Explicit TLS settings win over the DSN's. */
        if (tls && tls->sslmode)
                ADD("sslmode", tls->sslmode);
        if (tls && tls->sslcert)
                ADD("sslcert", tls->sslcert);
        if (tls && tls->sslkey)
                ADD("sslkey", tls->sslkey);
        if (tls && tls->sslrootcert)
                ADD("sslrootcert", tls->sslrootcert);
#undef ADD
        keywords[n] = NULL;
        values[n] = NULL;
        return 0;
}

static int read_version(void *userdata, const struct store_val *cols, size_t n)
{
        int *v = userdata;

        if (n >= 1)
                *v = (int)store_val_int(&cols[0]);
        return 0;
}

int store_migrate(const struct store_backend_ops *ops, struct store_conn *c, int *ret_version)
{
        const struct store_migration *m;
        size_t n;
        int cur = 0, r;

        /* a restart finds the table: one statement, unnamed (read once: preparing it would
         * cost a round trip more); a new database creates it first */
        r = (ops->exec_adhoc ? ops->exec_adhoc : ops->exec)(c, store_sql_schema_version_get, NULL,
                                                            0, read_version, &cur);
        if (r < 0) {
                r = ops->exec(c, store_sql_schema_version_create, NULL, 0, NULL, NULL);
                if (r < 0)
                        return r;
                r = ops->exec(c, store_sql_schema_version_get, NULL, 0, read_version, &cur);
                if (r < 0)
                        return r;
        }
        m = store_migrations(ops->dialect, &n);
        for (size_t i = 0; i < n; i++) {
                struct store_val v = SV_INT(m[i].version);

                if (m[i].version <= cur)
                        continue;
                r = ops->begin(c);
                if (r < 0)
                        return r;
                for (const char *const *st = m[i].statements; *st; st++) {
                        r = ops->exec(c, *st, NULL, 0, NULL, NULL);
                        if (r < 0)
                                goto fail;
                }
                r = ops->exec(c, store_sql_schema_version_insert, &v, 1, NULL, NULL);
                if (r < 0)
                        goto fail;
                r = ops->commit(c);
                if (r < 0)
                        goto fail;
                cur = m[i].version;
        }
        *ret_version = cur;
        return 0;
fail:
        (void)ops->rollback(c);
        return r;
}

int store_open_with(const char *dsn, const struct store_open_options *o, struct store **ret)
{
        const struct store_backend_ops *ops;
        const struct store_pg_tls *tls = &o->tls;
        unsigned n_conns = o->n_conns;
        struct store *s;
        int r;

        if (o->error && o->error_size > 0)
                o->error[0] = 0;
        if (!dsn || !*dsn || n_conns == 0 || n_conns > 256)
                return -EINVAL;
        if (tls->sslmode && !store_pg_sslmode_valid(tls->sslmode))
                return -EINVAL;
        ops = backend_for(dsn);
        if (!ops)
                return -EPROTONOSUPPORT;
        s = calloc(1, sizeof(*s));
        if (!s)
                return -ENOMEM;
        s->ops = ops;
        pthread_mutex_init(&s->lock, NULL);
        pthread_cond_init(&s->cond, NULL);
        s->n_conns = n_conns;
        s->conns = calloc(n_conns, sizeof(struct store_conn *));
        s->busy = calloc(n_conns, sizeof(*s->busy));
        s->dsn = strdup(dsn);
        if (!s->conns || !s->busy || !s->dsn || tls_copy(tls, &s->tls) < 0) {
                r = -ENOMEM;
                goto fail;
        }
        /* The first connection creates the database file and runs the migrations. */
        r = ops->open(dsn, tls, o->error, o->error_size, &s->conns[0]);
        if (r < 0)
                goto fail;
        s->n_open = 1;
        r = store_migrate(ops, s->conns[0], &s->version);
        if (r < 0)
                goto fail;
        if (ops->dialect == STORE_DIALECT_SQLITE)
                for (const char *const *st = store_sql_sqlite_analyze; *st; st++)
                        (void)ops->exec(s->conns[0], *st, NULL, 0, NULL, NULL); /* best effort */
        *ret = s;
        return 0;
fail:
        store_free(s);
        return r;
}

int store_open(const char *dsn, unsigned n_conns, struct store **ret)
{
        struct store_open_options o = { .n_conns = n_conns };

        return store_open_with(dsn, &o, ret);
}

struct store *store_free(struct store *s)
{
        if (!s)
                return NULL;
        for (unsigned i = 0; s->conns && i < s->n_open; i++)
                s->ops->close(s->conns[i]);
        free(s->conns);
        free(s->busy);
        free(s->dsn);
        tls_free(&s->tls);
        pthread_cond_destroy(&s->cond);
        pthread_mutex_destroy(&s->lock);
        free(s);
        return NULL;
}

enum store_dialect store_dialect(const struct store *s)
{
        return s->ops->dialect;
}

int store_schema_version(const struct store *s)
{
        return s->version;
}

int store_ping(struct store *s)
{
        struct store_conn *c;
        int r;

        r = store_acquire(s, &c);
        if (r < 0)
                return r;
        r = store_exec(s, c, "SELECT COALESCE(MAX(version), 0) FROM schema_version", NULL, 0, NULL,
                       NULL);
        store_release(s, c);
        return r < 0 ? r : 0;
}

/*
 * Opens one more connection, called with the lock held and returning with it held (it is
 * dropped while connecting). Returns its index, or -1 when it failed: then the pool makes do
 * with the connections it has, and tries again after OPEN_RETRY_USEC.
 */
static int open_one_locked(struct store *s)
{
        struct store_conn *c = NULL;
        int r;

        s->n_opening++;
        pthread_mutex_unlock(&s->lock);
        r = s->ops->open(s->dsn, &s->tls, NULL, 0, &c);
        pthread_mutex_lock(&s->lock);
        s->n_opening--;
        if (r < 0) {
                s->next_open = now_monotonic() + OPEN_RETRY_USEC;
                return -1;
        }
        s->conns[s->n_open] = c;
        return (int)s->n_open++;
}

int store_acquire(struct store *s, struct store_conn **ret)
{
        pthread_mutex_lock(&s->lock);
        for (;;) {
                int i;

                for (unsigned j = 0; j < s->n_open; j++)
                        if (!s->busy[j]) {
                                s->busy[j] = true;
                                *ret = s->conns[j];
                                pthread_mutex_unlock(&s->lock);
                                return 0;
                        }
                if (s->n_open + s->n_opening < s->n_conns &&
                    (s->next_open == 0 || now_monotonic() >= s->next_open)) {
                        i = open_one_locked(s);
                        if (i >= 0) {
                                s->busy[i] = true;
                                *ret = s->conns[i];
                                pthread_mutex_unlock(&s->lock);
                                return 0;
                        }
                        continue; /* one may have been released meanwhile */
                }
                pthread_cond_wait(&s->cond, &s->lock);
        }
}

void store_release(struct store *s, struct store_conn *c)
{
        if (!c)
                return;
        pthread_mutex_lock(&s->lock);
        for (unsigned i = 0; i < s->n_open; i++)
                if (s->conns[i] == c)
                        s->busy[i] = false;
        pthread_cond_signal(&s->cond);
        pthread_mutex_unlock(&s->lock);
}

int store_exec(struct store *s, struct store_conn *c, const char *sql,
               const struct store_val *params, size_t n_params, store_row_fn fn, void *userdata)
{
        return s->ops->exec(c, sql, params, n_params, fn, userdata);
}

const char *store_conflict(struct store *s, struct store_conn *c)
{
        const char *t = s->ops->conflict ? s->ops->conflict(c) : NULL;

        return t ? t : "";
}

int store_exec_adhoc(struct store *s, struct store_conn *c, const char *sql,
                     const struct store_val *params, size_t n_params, store_row_fn fn,
                     void *userdata)
{
        return (s->ops->exec_adhoc ? s->ops->exec_adhoc : s->ops->exec)(c, sql, params, n_params,
                                                                        fn, userdata);
}

int store_begin(struct store *s, struct store_conn *c)
{
        return s->ops->begin(c);
}

int store_commit(struct store *s, struct store_conn *c)
{
        int r = s->ops->commit(c);

        if (r < 0)
                (void)s->ops->rollback(c);
        return r;
}

void store_rollback(struct store *s, struct store_conn *c)
{
        (void)s->ops->rollback(c);
}

int64_t store_val_int(const struct store_val *v)
{
        switch (v->type) {
        case STORE_INT:
                return v->i;
        case STORE_DOUBLE:
                return (int64_t)v->d;
        case STORE_TEXT:
                return v->s ? (int64_t)strtoll(v->s, NULL, 10) : 0;
        default:
                return 0;
        }
}

double store_val_double(const struct store_val *v)
{
        switch (v->type) {
        case STORE_INT:
                return (double)v->i;
        case STORE_DOUBLE:
                return v->d;
        case STORE_TEXT:
                return v->s ? strtod(v->s, NULL) : 0.0;
        default:
                return 0.0;
        }
}

const char *store_val_text(const struct store_val *v)
{
        return v->type == STORE_TEXT ? v->s : NULL;
}
