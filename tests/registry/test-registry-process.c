/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The `modelplane registry` process: flags and environment, graceful SIGTERM, and durability —
 * SIGKILL during a concurrent write load, restart on the same database, every write that was
 * acknowledged with 201 is still there and the database opens cleanly.
 * MODELPLANE_BIN is the built executable; MODELPLANE_TEST_BACKEND as in the API suite.
 *
 * Operations (suite "ops"): the server started from a --config file and the precedence of flag,
 * environment and file (SQLite, always); and with MODELPLANE_TEST_BACKEND=pgops, against a
 * private PostgreSQL started by scripts/pg-start (skipped without Debian's PostgreSQL 15
 * binaries): the database stopped under a running server (503 with the error body, readiness
 * not ready, no crash), restarted (the server recovers by itself, data intact, a restart
 * without requests in between is invisible), and TLS (verify-full with the right CA works,
 * the wrong CA fails at start with libpq's verification error).
 */
#include <arpa/inet.h>
#include <criterion/criterion.h>
#include <curl/curl.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <sqlite3.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#define API "/api/model_registry/v1alpha3"

static char tmpdir[256];
static char dsn[512];
static bool postgres;

static void setup(void)
{
        const char *backend = getenv("MODELPLANE_TEST_BACKEND");

        cr_assert_not_null(getenv("MODELPLANE_BIN"));
        if (backend && strcmp(backend, "pgops") == 0)
                cr_skip_test("run by registry-process-sqlite/-postgres");
        postgres = backend && strcmp(backend, "postgres") == 0;
        /* skips first: a skipped test does not run the suite's fini, which removes tmpdir */
        if (postgres && (!getenv("MODELPLANE_PG_DSN") || !*getenv("MODELPLANE_PG_DSN")))
                cr_skip_test("MODELPLANE_PG_DSN is not set");
        (void)snprintf(tmpdir, sizeof(tmpdir), "/tmp/mp-registry-proc-XXXXXX");
        cr_assert_not_null(mkdtemp(tmpdir));
        if (postgres)
                (void)snprintf(dsn, sizeof(dsn), "%s", getenv("MODELPLANE_PG_DSN"));
        else
                (void)snprintf(dsn, sizeof(dsn), "%s/registry.db", tmpdir);
        curl_global_init(CURL_GLOBAL_DEFAULT);
}

static void teardown(void)
{
        char cmd[600];

        (void)snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
        (void)!system(cmd);
}

TestSuite(process, .init = setup, .fini = teardown, .timeout = 120);

struct server {
        pid_t pid;
        unsigned port;
};

/*
 * Reads the server's first stdout line (bounded to size - 1 bytes) into line and closes fd;
 * true when it is "listening on 127.0.0.1:PORT".
 */
static bool read_listening_port(int fd, char *line, size_t size, unsigned *port)
{
        size_t len = 0;

        while (len < size - 1) {
                ssize_t k = read(fd, line + len, 1);
                if (k <= 0 || line[len] == '\n')
                        break;
                len++;
        }
        line[len] = 0;
        close(fd);
        return sscanf(line, "listening on 127.0.0.1:%u", port) == 1;
}

/* Starts the registry with extra args; waits for its "listening on" line. */
static void start(struct server *s, const char *const *extra, size_t n_extra, const char *env_port)
{
        int p[2];
        char line[256] = "";
        const char *argv[16];
        size_t argc = 0;

        argv[argc++] = getenv("MODELPLANE_BIN");
        argv[argc++] = "registry";
        argv[argc++] = "--database";
        argv[argc++] = dsn;
        if (!env_port) {
                argv[argc++] = "--port";
                argv[argc++] = "0";
        }
        for (size_t i = 0; i < n_extra && argc < 15; i++)
                argv[argc++] = extra[i];
        argv[argc] = NULL;

        cr_assert_eq(pipe(p), 0);
        s->pid = fork();
        cr_assert_neq(s->pid, -1);
        if (s->pid == 0) {
                int null = open("/dev/null", O_WRONLY);
                dup2(p[1], 1);
                if (null >= 0)
                        dup2(null, 2);
                close(p[0]);
                if (env_port)
                        setenv("MODEL_REGISTRY_REST_SERVICE_PORT", env_port, 1);
                execv(argv[0], (char *const *)argv);
                _exit(127);
        }
        close(p[1]);
        cr_assert(read_listening_port(p[0], line, sizeof(line), &s->port), "got '%s'", line);
}

static int stop(struct server *s, int sig)
{
        int st = 0;

        kill(s->pid, sig);
        cr_assert_eq(waitpid(s->pid, &st, 0), s->pid);
        return st;
}

static size_t sink(char *p, size_t size, size_t n, void *ud)
{
        (void)p;
        (void)ud;
        return size * n;
}

static long http(unsigned port, const char *method, const char *path, const char *body)
{
        CURL *c = curl_easy_init();
        char url[1024];
        long status = 0;

        (void)snprintf(url, sizeof(url), "http://127.0.0.1:%u%s", port, path);
        curl_easy_setopt(c, CURLOPT_URL, url);
        curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, method);
        curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, sink);
        curl_easy_setopt(c, CURLOPT_TIMEOUT, 20L);
        if (body)
                curl_easy_setopt(c, CURLOPT_POSTFIELDS, body);
        if (curl_easy_perform(c) == CURLE_OK)
                curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
        curl_easy_cleanup(c);
        return status;
}

Test(process, flags_env_and_sigterm)
{
        struct server s;
        const char *wipe[] = { "--wipe" };
        int st;

        /* port from the ConfigMap variable; datastore type accepted */
        setenv("MODEL_REGISTRY_DATA_STORE_TYPE", "embedmd", 1);
        start(&s, wipe, 1, "0");
        cr_assert_gt(s.port, 0);
        cr_assert_eq(http(s.port, "GET", "/", NULL), 404);
        cr_assert_eq(http(s.port, "GET", "/readyz/isDirty", NULL), 200);
        st = stop(&s, SIGTERM);
        cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0, "status %d", st);

        {
                const char *bad[] = { "--datastore-type", "mlmd" };
                pid_t pid = fork();

                if (pid == 0) {
                        int null = open("/dev/null", O_WRONLY);
                        dup2(null, 1);
                        dup2(null, 2);
                        execl(getenv("MODELPLANE_BIN"), "modelplane", "registry", bad[0], bad[1],
                              "--database", dsn, (char *)NULL);
                        _exit(127);
                }
                cr_assert_eq(waitpid(pid, &st, 0), pid);
                cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 1);
        }
}

#define WRITERS 4

struct writer {
        unsigned port;
        int idx;
        atomic_bool *stop;
        atomic_int *acked_total;
        int acked[4096];
        int n_acked;
};

static void *write_loop(void *ud)
{
        struct writer *w = ud;

        for (int i = 0; i < 4096 && !atomic_load(w->stop); i++) {
                char body[128];
                long st;

                (void)snprintf(body, sizeof(body), "{\"name\":\"w%d-%d\"}", w->idx, i);
                st = http(w->port, "POST", API "/registered_models", body);
                if (st == 201) {
                        w->acked[w->n_acked++] = i;
                        atomic_fetch_add(w->acked_total, 1);
                } else if (st == 0)
                        break; /* server gone */
        }
        return NULL;
}

Test(process, sigkill_under_write_load_loses_no_acknowledged_write)
{
        struct server s;
        const char *wipe[] = { "--wipe" };
        static struct writer w[WRITERS];
        pthread_t t[WRITERS];
        atomic_bool stop_flag = false;
        atomic_int acked_total = 0;
        int total = 0;

        start(&s, wipe, 1, NULL);
        for (int i = 0; i < WRITERS; i++) {
                w[i] = (struct writer){
                        .port = s.port, .idx = i, .stop = &stop_flag, .acked_total = &acked_total
                };
                cr_assert_eq(pthread_create(&t[i], NULL, write_loop, &w[i]), 0);
        }
        /* kill once enough writes were acknowledged (bounded by the writers' own limit) */
        for (int spin = 0; spin < 200000 && atomic_load(&acked_total) < 200; spin++)
                usleep(1000);
        (void)stop(&s, SIGKILL);
        atomic_store(&stop_flag, true);
        for (int i = 0; i < WRITERS; i++) {
                pthread_join(t[i], NULL);
                total += w[i].n_acked;
        }
        cr_assert_geq(total, 200);

        if (!postgres) {
                sqlite3 *db = NULL;
                sqlite3_stmt *st = NULL;

                cr_assert_eq(sqlite3_open(dsn, &db), SQLITE_OK);
                cr_assert_eq(sqlite3_prepare_v2(db, "PRAGMA integrity_check", -1, &st, NULL),
                             SQLITE_OK);
                cr_assert_eq(sqlite3_step(st), SQLITE_ROW);
                cr_assert_str_eq((const char *)sqlite3_column_text(st, 0), "ok");
                sqlite3_finalize(st);
                sqlite3_close(db);
        }

        start(&s, NULL, 0, NULL);
        for (int i = 0; i < WRITERS; i++)
                for (int k = 0; k < w[i].n_acked; k++) {
                        char path[256];

                        (void)snprintf(path, sizeof(path), API "/registered_model?name=w%d-%d", i,
                                       w[i].acked[k]);
                        cr_assert_eq(http(s.port, "GET", path, NULL), 200, "lost %s", path);
                }
        cr_assert_eq(http(s.port, "GET", "/readyz/isDirty", NULL), 200);
        (void)stop(&s, SIGTERM);
}

/* ---- operations: config file, PostgreSQL down/up, TLS ---- */

static char opsdir[256];
static char pgdir[256];
static pid_t ops_server; /* the last server launched, ended by the fini if a test failed */

static void ops_setup(void)
{
        cr_assert_not_null(getenv("MODELPLANE_BIN"));
        opsdir[0] = 0;
        pgdir[0] = 0;
        ops_server = 0;
        curl_global_init(CURL_GLOBAL_DEFAULT);
}

/* After the skip checks: a skipped test does not run the suite's fini. */
static void make_opsdir(void)
{
        (void)snprintf(opsdir, sizeof(opsdir), "/tmp/mp-registry-ops-XXXXXX");
        cr_assert_not_null(mkdtemp(opsdir));
}

static void run_script(const char *name, const char *args)
{
        char cmd[1024];
        const char *root = getenv("MODELPLANE_SOURCE_ROOT");

        (void)snprintf(cmd, sizeof(cmd), "'%s/scripts/%s' %s >/dev/null 2>&1", root ? root : ".",
                       name, args);
        (void)!system(cmd);
}

static void ops_teardown(void)
{
        char cmd[600];

        if (ops_server > 0 && waitpid(ops_server, NULL, WNOHANG) == 0) {
                kill(ops_server, SIGKILL);
                (void)waitpid(ops_server, NULL, 0);
        }
        ops_server = 0;
        if (pgdir[0]) {
                char args[300];

                (void)snprintf(args, sizeof(args), "'%s'", pgdir);
                run_script("pg-stop", args);
        }
        if (opsdir[0]) {
                (void)snprintf(cmd, sizeof(cmd), "rm -rf '%s'", opsdir);
                (void)!system(cmd);
        }
}

TestSuite(ops, .init = ops_setup, .fini = ops_teardown, .timeout = 240);

/* A response: status and body (bounded). */
struct reply {
        long status;
        char body[4096];
        size_t len;
};

static size_t collect(char *p, size_t size, size_t n, void *ud)
{
        struct reply *r = ud;
        size_t k = size * n, room = sizeof(r->body) - 1 - r->len;

        memcpy(r->body + r->len, p, k < room ? k : room);
        r->len += k < room ? k : room;
        r->body[r->len] = 0;
        return size * n;
}

static struct reply request(unsigned port, const char *method, const char *path, const char *body)
{
        struct reply r = { 0 };
        CURL *c = curl_easy_init();
        char url[1024];

        (void)snprintf(url, sizeof(url), "http://127.0.0.1:%u%s", port, path);
        curl_easy_setopt(c, CURLOPT_URL, url);
        curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, method);
        curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, collect);
        curl_easy_setopt(c, CURLOPT_WRITEDATA, &r);
        curl_easy_setopt(c, CURLOPT_TIMEOUT, 60L);
        if (body)
                curl_easy_setopt(c, CURLOPT_POSTFIELDS, body);
        if (curl_easy_perform(c) == CURLE_OK)
                curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &r.status);
        curl_easy_cleanup(c);
        return r;
}

/*
 * Runs `modelplane registry ARGS…` with extra environment (NAME=VALUE strings). Returns true
 * with s filled once it prints its "listening on" line; false when it exits first, with its
 * exit status in *ret_status and its stderr in errbuf.
 */
static bool launch(struct server *s, const char *const *args, const char *const *env,
                   int *ret_status, char *errbuf, size_t errsize)
{
        const char *argv[32];
        char errpath[300], line[256] = "";
        size_t argc = 0;
        int p[2], st = 0;

        argv[argc++] = getenv("MODELPLANE_BIN");
        argv[argc++] = "registry";
        for (size_t i = 0; args && args[i] && argc < 31; i++)
                argv[argc++] = args[i];
        argv[argc] = NULL;
        (void)snprintf(errpath, sizeof(errpath), "%s/stderr", opsdir);

        cr_assert_eq(pipe(p), 0);
        s->pid = fork();
        cr_assert_neq(s->pid, -1);
        if (s->pid == 0) {
                int e = open(errpath, O_WRONLY | O_CREAT | O_TRUNC, 0600);

                dup2(p[1], 1);
                if (e >= 0)
                        dup2(e, 2);
                close(p[0]);
                for (size_t i = 0; env && env[i]; i++)
                        putenv((char *)env[i]);
                execv(argv[0], (char *const *)argv);
                _exit(127);
        }
        close(p[1]);
        ops_server = s->pid;
        if (read_listening_port(p[0], line, sizeof(line), &s->port))
                return true;
        ops_server = 0;
        cr_assert_eq(waitpid(s->pid, &st, 0), s->pid);
        if (ret_status)
                *ret_status = st;
        if (errbuf && errsize) {
                FILE *f = fopen(errpath, "r");
                size_t n = f ? fread(errbuf, 1, errsize - 1, f) : 0;

                errbuf[n] = 0;
                if (f)
                        fclose(f);
        }
        return false;
}

static void launch_ok(struct server *s, const char *const *args, const char *const *env)
{
        char err[4096] = "";
        int st = 0;

        cr_assert(launch(s, args, env, &st, err, sizeof(err)), "server did not start (%d): %s", st,
                  err);
}

static const char *write_file(const char *name, const char *text)
{
        static char path[2][300];
        static int which;
        char *p = path[which++ % 2];
        FILE *f;

        (void)snprintf(p, sizeof(path[0]), "%s/%s", opsdir, name);
        f = fopen(p, "w");
        cr_assert_not_null(f);
        cr_assert(fputs(text, f) >= 0);
        cr_assert_eq(fclose(f), 0);
        return p;
}

Test(ops, server_from_config_file_and_precedence)
{
        const char *backend = getenv("MODELPLANE_TEST_BACKEND");
        char yaml[1024], db[300], big[256], err[4096] = "";
        const char *cfg;
        struct server s;
        int st = 0;

        if (!backend || strcmp(backend, "sqlite") != 0)
                cr_skip_test("SQLite variant only");
        make_opsdir();
        (void)snprintf(db, sizeof(db), "%s/from-config.db", opsdir);
        (void)snprintf(yaml, sizeof(yaml),
                       "# modelplane registry settings\n"
                       "hostname: localhost\n"
                       "port: 0\n"
                       "datastore-type: embedmd\n"
                       "embedmd-database-dsn: %s\n"
                       "pool-size: 2\n"
                       "body-max: 100\n",
                       db);
        cfg = write_file("registry.yaml", yaml);
        memset(big, 'x', sizeof(big) - 1);
        big[sizeof(big) - 1] = 0;
        memcpy(big, "{\"name\":\"", 9);
        memcpy(big + sizeof(big) - 3, "\"}", 2);

        /* everything from the file: port 0, the database path, the body limit */
        {
                const char *args[] = { "--config", cfg, NULL };

                launch_ok(&s, args, NULL);
                cr_assert_eq(request(s.port, "POST", API "/registered_models", "{\"name\":\"cfg\"}")
                                     .status,
                             201);
                cr_assert_eq(request(s.port, "POST", API "/registered_models", big).status, 413);
                cr_assert_eq(access(db, F_OK), 0, "the DSN from the file was not used");
                st = stop(&s, SIGTERM);
                cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0);
        }
        /* environment beats the file */
        {
                const char *args[] = { "-c", cfg, NULL };
                const char *env[] = { "MR_BODY_MAX=100000", NULL };

                launch_ok(&s, args, env);
                cr_assert_eq(request(s.port, "POST", API "/registered_models", big).status, 201);
                (void)stop(&s, SIGTERM);
        }
        /* a flag beats the environment */
        {
                const char *args[] = { "-c", cfg, "--body-max", "100", NULL };
                const char *env[] = { "MR_BODY_MAX=100000", NULL };

                launch_ok(&s, args, env);
                cr_assert_eq(request(s.port, "POST", API "/registered_models", big).status, 413);
                cr_assert_eq(request(s.port, "GET", API "/registered_model?name=cfg", NULL).status,
                             200);
                (void)stop(&s, SIGTERM);
        }
        /* errors: unknown key and wrong type name the file, line and key; exit 2 */
        {
                const char *bad = write_file("bad.yaml", "port: 0\nhostnme: localhost\n");
                const char *args[] = { "--config", bad, NULL };

                cr_assert_not(launch(&s, args, NULL, &st, err, sizeof(err)));
                cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 2, "status %d", st);
                cr_assert_not_null(strstr(err, bad), "%s", err);
                cr_assert_not_null(strstr(err, ":2: unknown key 'hostnme'"), "%s", err);
        }
        {
                const char *bad = write_file("type.yaml", "port: eighty\n");
                const char *args[] = { "--config", bad, NULL };

                cr_assert_not(launch(&s, args, NULL, &st, err, sizeof(err)));
                cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 2, "status %d", st);
                cr_assert_not_null(strstr(err, ":1: key 'port'"), "%s", err);
                cr_assert_not_null(strstr(err, "expected an integer"), "%s", err);
        }
        {
                const char *args[] = { "--config", "/nonexistent/registry.yaml", NULL };

                cr_assert_not(launch(&s, args, NULL, &st, err, sizeof(err)));
                cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 2, "status %d", st);
                cr_assert_not_null(strstr(err, "/nonexistent/registry.yaml: cannot read"), "%s",
                                   err);
        }
}

static bool pg_available(void)
{
        return access("/usr/lib/postgresql/15/bin/initdb", X_OK) == 0 ||
               (getenv("PG_BINDIR") && *getenv("PG_BINDIR"));
}

/* scripts/pg-start [opts] pgdir; returns the printed DSN in dsn_out. */
static void pg_start(const char *opts, char *dsn_out, size_t n)
{
        char cmd[1024];
        const char *root = getenv("MODELPLANE_SOURCE_ROOT");
        FILE *f;
        size_t len;

        (void)snprintf(cmd, sizeof(cmd), "'%s/scripts/pg-start' %s '%s' 2>&1", root ? root : ".",
                       opts, pgdir);
        f = popen(cmd, "r");
        cr_assert_not_null(f);
        dsn_out[0] = 0;
        if (!fgets(dsn_out, (int)n, f))
                dsn_out[0] = 0;
        cr_assert_eq(pclose(f), 0, "pg-start failed: %s", dsn_out);
        len = strlen(dsn_out);
        while (len > 0 && dsn_out[len - 1] == '\n')
                dsn_out[--len] = 0;
        cr_assert(strncmp(dsn_out, "postgresql://", 13) == 0, "pg-start said: %s", dsn_out);
}

/*
 * Start of every PostgreSQL operations test: skips unless run by registry-process-pgops with the
 * PostgreSQL binaries at hand (and openssl for TLS), then starts a private server with pg-start
 * OPTS and returns its DSN.
 */
static void pgops_begin(const char *opts, char *dsn_out, size_t n)
{
        const char *backend = getenv("MODELPLANE_TEST_BACKEND");

        if (!backend || strcmp(backend, "pgops") != 0)
                cr_skip_test("run by registry-process-pgops");
        if (!pg_available())
                cr_skip_test("PostgreSQL 15 binaries not installed");
        if (strstr(opts, "--ssl") && system("command -v openssl >/dev/null 2>&1") != 0)
                cr_skip_test("openssl CLI not installed");
        make_opsdir();
        (void)snprintf(pgdir, sizeof(pgdir), "/tmp/mp-registry-pgops-XXXXXX");
        cr_assert_not_null(mkdtemp(pgdir));
        pg_start(opts, dsn_out, n);
}

/* The first number in pgdir/REL (pg-start's port file, the postmaster.pid). */
static long pg_file_number(const char *rel)
{
        char path[300];
        long v = 0;
        FILE *f;

        (void)snprintf(path, sizeof(path), "%s/%s", pgdir, rel);
        f = fopen(path, "re");
        cr_assert_not_null(f, "cannot open %s", path);
        cr_assert_eq(fscanf(f, "%ld", &v), 1, "no number in %s", path);
        fclose(f);
        return v;
}

static unsigned pg_port(void)
{
        long port = pg_file_number("port");

        cr_assert(port > 0 && port < 65536, "bad port %ld", port);
        return (unsigned)port;
}

/* Fast shutdown of the postmaster (SIGINT, as pg_ctl -m fast); waits until it is gone. */
static void pg_stop_keep_data(void)
{
        long pid = pg_file_number("data/postmaster.pid");

        cr_assert_gt(pid, 1);
        cr_assert_eq(kill((pid_t)pid, SIGINT), 0);
        /* bounded: the suite timeout ends a postmaster that never stops */
        while (kill((pid_t)pid, 0) == 0 || errno != ESRCH)
                usleep(20 * 1000);
}

static bool is_unavailable_body(const struct reply *r)
{
        return strstr(r->body, "\"code\":\"Service Unavailable\"") &&
               strstr(r->body, "Datastore service is down or unavailable") &&
               strstr(r->body, "database not reachable");
}

static void assert_alive(const struct server *s)
{
        int st = 0;

        cr_assert_eq(waitpid(s->pid, &st, WNOHANG), 0, "the server exited (status %d)", st);
}

Test(ops, postgres_down_gives_503_then_recovers_with_data_intact)
{
        char pgdsn[512], port_opt[64], path[256];
        struct server s;
        struct reply r;
        unsigned port;
        int i;

        pgops_begin("", pgdsn, sizeof(pgdsn));
        port = pg_port();

        {
                const char *args[] = {
                        "--database", pgdsn, "--port", "0", "--pool-size", "4", NULL
                };
                launch_ok(&s, args, NULL);
        }
        r = request(s.port, "POST", API "/registered_models", "{\"name\":\"before\"}");
        cr_assert_eq(r.status, 201, "%s", r.body);
        r = request(s.port, "POST", API "/model_versions",
                    "{\"name\":\"v1\",\"registeredModelId\":\"1\"}");
        cr_assert_eq(r.status, 201, "%s", r.body);
        cr_assert_eq(request(s.port, "GET", "/readyz/isDirty", NULL).status, 200);

        /* the database goes away under the running server */
        pg_stop_keep_data();
        {
                static const struct {
                        const char *method, *path, *body;
                } calls[] = {
                        { "GET", API "/registered_models/1", NULL },
                        { "GET", API "/registered_models", NULL },
                        { "GET", API "/registered_model?name=before", NULL },
                        { "GET", API "/registered_models/1/versions", NULL },
                        { "POST", API "/registered_models", "{\"name\":\"during\"}" },
                        { "PATCH", API "/registered_models/1", "{\"description\":\"during\"}" },
                        { "GET", API "/model_versions/2", NULL },
                };

                /* twice over: the first use of each pooled connection and the later ones */
                for (int round = 0; round < 2; round++)
                        for (size_t k = 0; k < sizeof(calls) / sizeof(calls[0]); k++) {
                                r = request(s.port, calls[k].method, calls[k].path, calls[k].body);
                                cr_assert_eq(r.status, 503, "%s %s: %ld %s", calls[k].method,
                                             calls[k].path, r.status, r.body);
                                cr_assert(is_unavailable_body(&r), "%s", r.body);
                        }
        }
        r = request(s.port, "GET", "/readyz/isDirty", NULL);
        cr_assert_eq(r.status, 503);
        cr_assert_not_null(strstr(r.body, "database not reachable"), "%s", r.body);
        cr_assert_eq(request(s.port, "GET", "/readyz/health", NULL).status, 503);
        r = request(s.port, "GET", "/readyz/health?format=json", NULL);
        cr_assert_eq(r.status, 503);
        cr_assert_not_null(strstr(r.body, "\"status\":\"fail\""), "%s", r.body);
        cr_assert_eq(request(s.port, "GET", "/", NULL).status, 404); /* still serving */
        assert_alive(&s);

        /* back on the same port: the server reconnects by itself */
        (void)snprintf(port_opt, sizeof(port_opt), "--port %u", port);
        pg_start(port_opt, pgdsn, sizeof(pgdsn));
        for (i = 0; i < 600; i++) {
                if (request(s.port, "GET", "/readyz/isDirty", NULL).status == 200)
                        break;
                usleep(50 * 1000);
        }
        cr_assert_lt(i, 600, "readiness never came back");
        /* every pooled connection serves again (more requests than connections) */
        for (i = 0; i < 12; i++) {
                r = request(s.port, "GET", API "/registered_models/1", NULL);
                if (r.status == 200)
                        break;
                cr_assert_eq(r.status, 503, "%ld %s", r.status, r.body);
                usleep(100 * 1000);
        }
        for (i = 0; i < 12; i++) {
                r = request(s.port, "GET", API "/registered_models/1", NULL);
                cr_assert_eq(r.status, 200, "%ld %s", r.status, r.body);
                cr_assert_not_null(strstr(r.body, "\"name\":\"before\""), "%s", r.body);
                cr_assert_null(strstr(r.body, "during"), "a write during the outage: %s", r.body);
        }
        r = request(s.port, "GET", API "/model_versions/2", NULL);
        cr_assert_eq(r.status, 200, "%s", r.body);
        cr_assert_eq(request(s.port, "GET", API "/registered_model?name=during", NULL).status, 404);
        r = request(s.port, "POST", API "/registered_models", "{\"name\":\"after\"}");
        cr_assert_eq(r.status, 201, "%s", r.body);

        /* a restart without requests in between is invisible: stale connections are noticed
         * before use and replaced, so not one request fails */
        pg_stop_keep_data();
        pg_start(port_opt, pgdsn, sizeof(pgdsn));
        for (i = 0; i < 12; i++) {
                (void)snprintf(path, sizeof(path), API "/registered_models/%d", i % 2 ? 1 : 3);
                r = request(s.port, "GET", path, NULL);
                cr_assert_eq(r.status, 200, "request %d after the restart: %ld %s", i, r.status,
                             r.body);
        }
        r = request(s.port, "POST", API "/registered_models", "{\"name\":\"after-restart\"}");
        cr_assert_eq(r.status, 201, "%s", r.body);
        r = request(s.port, "GET", API "/registered_models", NULL);
        cr_assert_eq(r.status, 200);
        cr_assert_not_null(strstr(r.body, "\"size\":3"), "%s", r.body);
        cr_assert_eq(request(s.port, "GET", "/readyz/health", NULL).status, 200);

        {
                int st = stop(&s, SIGTERM);
                cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0, "status %d", st);
        }
}

/* A free loopback TCP port (closed again; the server binds it right after). */
static unsigned free_tcp_port(void)
{
        struct sockaddr_in a = { .sin_family = AF_INET };
        socklen_t len = sizeof(a);
        int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

        cr_assert_geq(fd, 0);
        a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        cr_assert_eq(bind(fd, (struct sockaddr *)&a, sizeof(a)), 0);
        cr_assert_eq(getsockname(fd, (struct sockaddr *)&a, &len), 0);
        close(fd);
        return ntohs(a.sin_port);
}

/* Runs `modelplane registry ARGS…` without waiting for its "listening on" line (which it prints
 * only once the database is ready); stdout and stderr go to opsdir/out. */
static void launch_nowait(struct server *s, const char *const *args, unsigned port)
{
        const char *argv[32];
        char out[300];
        size_t argc = 0;

        argv[argc++] = getenv("MODELPLANE_BIN");
        argv[argc++] = "registry";
        for (size_t i = 0; args[i] && argc < 31; i++)
                argv[argc++] = args[i];
        argv[argc] = NULL;
        (void)snprintf(out, sizeof(out), "%s/out", opsdir);
        s->port = port;
        s->pid = fork();
        cr_assert_neq(s->pid, -1);
        if (s->pid == 0) {
                int fd = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0600);

                if (fd < 0 || dup2(fd, 1) < 0 || dup2(fd, 2) < 0)
                        _exit(126);
                execv(argv[0], (char *const *)argv);
                _exit(127);
        }
        ops_server = s->pid;
}

static bool out_contains(const char *needle)
{
        char path[300], buf[16384];
        size_t n;
        FILE *f;

        (void)snprintf(path, sizeof(path), "%s/out", opsdir);
        f = fopen(path, "re");
        if (!f)
                return false;
        n = fread(buf, 1, sizeof(buf) - 1, f);
        fclose(f);
        buf[n] = 0;
        return strstr(buf, needle) != NULL;
}

/* Upstream's startup sequence (B.1): listen at once, 503 until the datastore is ready. Beyond
 * upstream: a PostgreSQL that is not up yet is waited for (no exit, no crash loop). */
Test(ops, postgres_not_up_yet_503_until_it_is)
{
        char pgdsn[512], port_opt[64], pstr[16];
        struct server s;
        struct reply r;
        unsigned pgport, port;
        int i, st = 0;

        pgops_begin("", pgdsn, sizeof(pgdsn));
        pgport = pg_port();

        /* a server that answers and refuses (here: no such database) is not waited for */
        {
                char bad[600], err[4096] = "";
                const char *args[] = { "--database", bad, "--port", "0", NULL };
                char *slash = strrchr(pgdsn, '/');

                cr_assert_not_null(slash);
                (void)snprintf(bad, sizeof(bad), "%.*s/nosuchdb?sslmode=disable",
                               (int)(slash - pgdsn), pgdsn);
                cr_assert_not(launch(&s, args, NULL, &st, err, sizeof(err)),
                              "started on a database that does not exist");
                cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 1, "status %d: %s", st, err);
                cr_assert_not_null(strstr(err, "nosuchdb"), "%s", err);
                cr_assert_null(strstr(err, "retrying"), "a refusal was retried: %s", err);
        }
        pg_stop_keep_data(); /* the registry starts before its database */

        port = free_tcp_port();
        (void)snprintf(pstr, sizeof(pstr), "%u", port);
        {
                const char *args[] = { "--database", pgdsn, "--port", pstr, NULL };
                launch_nowait(&s, args, port);
        }
        for (i = 0; i < 600; i++) {
                r = request(port, "GET", API "/registered_models", NULL);
                if (r.status != 0)
                        break;
                assert_alive(&s);
                usleep(50 * 1000);
        }
        cr_assert_eq(r.status, 503, "%ld %s", r.status, r.body);
        cr_assert_str_eq(r.body, "Datastore service is down or unavailable. Please check that the "
                                 "database is reachable and try again later.\n");
        cr_assert_eq(request(port, "POST", API "/registered_models", "{\"name\":\"x\"}").status,
                     503);
        cr_assert_eq(request(port, "GET", "/readyz/isDirty", NULL).status, 503);
        for (i = 0; i < 200 && !out_contains("database not reachable"); i++)
                usleep(50 * 1000);
        cr_assert(out_contains("database not reachable"), "no retry logged");
        assert_alive(&s);

        /* the database comes up: the server connects, migrates and serves by itself */
        (void)snprintf(port_opt, sizeof(port_opt), "--port %u", pgport);
        pg_start(port_opt, pgdsn, sizeof(pgdsn));
        for (i = 0; i < 900; i++) { /* the retry backoff is at most 30 s */
                r = request(port, "GET", API "/registered_models", NULL);
                if (r.status != 503)
                        break;
                assert_alive(&s);
                usleep(100 * 1000);
        }
        cr_assert_eq(r.status, 200, "%ld %s", r.status, r.body);
        cr_assert(out_contains("listening on 127.0.0.1:"), "no listening line once ready");
        r = request(port, "POST", API "/registered_models", "{\"name\":\"late\"}");
        cr_assert_eq(r.status, 201, "%s", r.body);
        cr_assert_eq(request(port, "GET", "/readyz/isDirty", NULL).status, 200);
        st = stop(&s, SIGTERM);
        cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0, "status %d", st);

        /* and SIGTERM while still waiting ends it cleanly */
        pg_stop_keep_data();
        port = free_tcp_port();
        (void)snprintf(pstr, sizeof(pstr), "%u", port);
        {
                const char *args[] = { "--database", pgdsn, "--port", pstr, NULL };
                launch_nowait(&s, args, port);
        }
        for (i = 0; i < 600 && request(port, "GET", "/readyz/isDirty", NULL).status != 503; i++)
                usleep(50 * 1000);
        cr_assert_lt(i, 600, "the waiting server did not answer 503");
        st = stop(&s, SIGTERM);
        cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0, "status %d", st);
}

Test(ops, postgres_tls_verify_full)
{
        char pgdsn[512], base[256], ca[300], other[300], yaml[1024], err[4096] = "";
        struct server s;
        struct reply r;
        int st = 0;

        pgops_begin("--ssl", pgdsn, sizeof(pgdsn));
        /* the DSN without TLS parameters: the flags decide */
        (void)snprintf(base, sizeof(base), "postgresql://postgres@127.0.0.1:%u/modelplane",
                       pg_port());
        (void)snprintf(ca, sizeof(ca), "%s/tls/ca.crt", pgdir);
        (void)snprintf(other, sizeof(other), "%s/tls/other-ca.crt", pgdir);

        /* verify-full with the CA that signed the server's certificate (TLS is required) */
        {
                const char *args[] = { "--database",
                                       base,
                                       "--port",
                                       "0",
                                       "--wipe",
                                       "--embedmd-database-ssl-mode",
                                       "verify-full",
                                       "--embedmd-database-ssl-root-cert",
                                       ca,
                                       NULL };

                launch_ok(&s, args, NULL);
                r = request(s.port, "POST", API "/registered_models", "{\"name\":\"tls\"}");
                cr_assert_eq(r.status, 201, "%s", r.body);
                cr_assert_eq(request(s.port, "GET", "/readyz/isDirty", NULL).status, 200);
                (void)stop(&s, SIGTERM);
        }
        /* a wrong CA: no start, exit 1, libpq's verification error in the log */
        {
                const char *args[] = { "--database",
                                       base,
                                       "--port",
                                       "0",
                                       "--embedmd-database-ssl-verify-server-cert",
                                       "--embedmd-database-ssl-root-cert",
                                       other,
                                       NULL };

                cr_assert_not(launch(&s, args, NULL, &st, err, sizeof(err)));
                cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 1, "status %d", st);
                cr_assert_not_null(strstr(err, "error connecting to datastore"), "%s", err);
                cr_assert_not_null(strstr(err, "SSL error: certificate verify failed"), "%s", err);
        }
        /* the flag overrides the DSN's own sslmode=disable */
        {
                char off[300];
                const char *args[] = { "--database",
                                       off,
                                       "--port",
                                       "0",
                                       "--embedmd-database-ssl-mode",
                                       "verify-ca",
                                       "--embedmd-database-ssl-ca",
                                       other,
                                       NULL };

                (void)snprintf(off, sizeof(off), "%s?sslmode=disable", base);
                cr_assert_not(launch(&s, args, NULL, &st, err, sizeof(err)));
                cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 1, "status %d", st);
                cr_assert_not_null(strstr(err, "certificate verify failed"), "%s", err);
        }
        /* an invalid mode is refused before any connection */
        {
                const char *args[] = { "--database", base, "--embedmd-database-ssl-mode", "verify",
                                       NULL };

                cr_assert_not(launch(&s, args, NULL, &st, err, sizeof(err)));
                cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 2, "status %d", st);
                cr_assert_not_null(strstr(err, "invalid TLS mode 'verify'"), "%s", err);
        }
        /* the same settings from the environment and from a config file */
        {
                char e1[400], e2[400];
                const char *env[] = { e1, e2, NULL };
                const char *args[] = { "--port", "0", NULL };

                (void)snprintf(e1, sizeof(e1), "MR_EMBEDMD_DATABASE_DSN=%s", base);
                (void)snprintf(e2, sizeof(e2), "MR_EMBEDMD_DATABASE_SSL_ROOT_CERT=%s", ca);
                launch_ok(&s, args, (const char *const *)env);
                cr_assert_eq(request(s.port, "GET", API "/registered_model?name=tls", NULL).status,
                             200);
                (void)stop(&s, SIGTERM);
        }
        {
                const char *cfg;
                const char *args[2] = { "--config", NULL };

                (void)snprintf(yaml, sizeof(yaml),
                               "port: 0\n"
                               "embedmd-database-dsn: \"%s\"\n"
                               "embedmd-database-ssl-verify-server-cert: true\n"
                               "embedmd-database-ssl-root-cert: %s\n",
                               base, ca);
                cfg = write_file("tls.yaml", yaml);
                {
                        const char *a[] = { args[0], cfg, NULL };

                        launch_ok(&s, a, NULL);
                }
                cr_assert_eq(request(s.port, "GET", API "/registered_model?name=tls", NULL).status,
                             200);
                (void)stop(&s, SIGTERM);
        }
}
