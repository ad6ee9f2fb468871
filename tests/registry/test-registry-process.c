/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The `modelplane registry` process: flags and environment, graceful SIGTERM, and durability —
 * SIGKILL during a concurrent write load, restart on the same database, every write that was
 * acknowledged with 201 is still there and the database opens cleanly.
 * MODELPLANE_BIN is the built executable; MODELPLANE_TEST_BACKEND as in the API suite.
 */
#include <criterion/criterion.h>
#include <curl/curl.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <sqlite3.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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
        postgres = backend && strcmp(backend, "postgres") == 0;
        (void)snprintf(tmpdir, sizeof(tmpdir), "/tmp/mp-registry-proc-XXXXXX");
        cr_assert_not_null(mkdtemp(tmpdir));
        if (postgres) {
                const char *pg = getenv("MODELPLANE_PG_DSN");
                if (!pg || !*pg)
                        cr_skip_test("MODELPLANE_PG_DSN is not set");
                (void)snprintf(dsn, sizeof(dsn), "%s", pg);
        } else
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

/* Starts the registry with extra args; waits for its "listening on" line. */
static void start(struct server *s, const char *const *extra, size_t n_extra, const char *env_port)
{
        int p[2];
        char line[256] = "";
        size_t len = 0;
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
        /* bounded: one line of at most sizeof(line) bytes */
        while (len < sizeof(line) - 1) {
                ssize_t k = read(p[0], line + len, 1);
                if (k <= 0 || line[len] == '\n')
                        break;
                len++;
        }
        line[len] = 0;
        close(p[0]);
        cr_assert_eq(sscanf(line, "listening on 127.0.0.1:%u", &s->port), 1, "got '%s'", line);
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
                w[i] = (struct writer){ .port = s.port, .idx = i, .stop = &stop_flag,
                                        .acked_total = &acked_total };
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
                cr_assert_eq(sqlite3_prepare_v2(db, "PRAGMA integrity_check", -1, &st, NULL), SQLITE_OK);
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
