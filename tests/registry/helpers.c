/* SPDX-License-Identifier: Apache-2.0 */
#include "helpers.h"

#include <criterion/criterion.h>
#include <curl/curl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "http/server.h"
#include "registry/registry.h"
#include "store/entity.h"
#include "store/store.h"
#include "util/buf.h"

static struct store *store;
static struct registry *reg;
static struct http_server *srv;
static char tmpdir[256];
static char url[64];
static char dsn[512];

void reg_setup(void)
{
        const char *backend = getenv("MODELPLANE_TEST_BACKEND");
        struct store_conn *c;
        int r;

        if (backend && strcmp(backend, "postgres") == 0) {
                const char *pg = getenv("MODELPLANE_PG_DSN");
                if (!pg || !*pg)
                        cr_skip_test("MODELPLANE_PG_DSN is not set");
                (void)snprintf(dsn, sizeof(dsn), "%s", pg);
        } else {
                (void)snprintf(tmpdir, sizeof(tmpdir), "/tmp/mp-registry-test-XXXXXX");
                cr_assert_not_null(mkdtemp(tmpdir));
                (void)snprintf(dsn, sizeof(dsn), "%s/registry.db", tmpdir);
        }
        r = store_open(dsn, 4, &store);
        cr_assert_eq(r, 0, "store_open(%s): %d", dsn, r);
        cr_assert_eq(store_acquire(store, &c), 0);
        cr_assert_eq(store_wipe(store, c), 0);
        store_release(store, c);
        cr_assert_eq(registry_new(store, &reg), 0);
        {
                struct http_server_config cfg = { HTTP_SERVER_CONFIG_DEFAULTS,
                                                  .handler = registry_handle, .userdata = reg,
                                                  .too_large_json = REG_TOO_LARGE_JSON,
                                                  .error_style = HTTP_ERROR_REASON };
                cfg.body_max = 64 * 1024;
                cr_assert_eq(http_server_start(&cfg, &srv), 0);
        }
        (void)snprintf(url, sizeof(url), "http://127.0.0.1:%u", (unsigned)http_server_port(srv));
        curl_global_init(CURL_GLOBAL_DEFAULT);
}

void reg_teardown(void)
{
        char path[512];

        srv = http_server_free(srv);
        reg = registry_free(reg);
        store = store_free(store);
        if (tmpdir[0]) {
                static const char *const files[] = { "registry.db", "registry.db-wal",
                                                     "registry.db-shm" };
                for (size_t i = 0; i < 3; i++) {
                        (void)snprintf(path, sizeof(path), "%s/%s", tmpdir, files[i]);
                        (void)unlink(path);
                }
                (void)rmdir(tmpdir);
        }
}

const char *base_url(void)
{
        return url;
}

static size_t on_data(char *p, size_t size, size_t n, void *ud)
{
        struct buf *b = ud;
        return buf_append(b, p, size * n) < 0 ? 0 : size * n;
}

static size_t on_header(char *p, size_t size, size_t n, void *ud)
{
        char **ctype = ud;
        size_t len = size * n;

        if (len > 13 && strncasecmp(p, "Content-Type:", 13) == 0) {
                const char *v = p + 13;
                while (*v == ' ')
                        v++;
                free(*ctype);
                *ctype = strndup(v, len - (size_t)(v - p));
                if (*ctype)
                        (*ctype)[strcspn(*ctype, "\r\n")] = 0;
        }
        return len;
}

void reply_done(struct reply *r)
{
        free(r->body);
        free(r->ctype);
        json_decref(r->json);
        *r = (struct reply){ 0 };
}

void http_do(const char *method, const char *path, const char *body, size_t len, struct reply *ret)
{
        CURL *c = curl_easy_init();
        struct buf b = BUF_INIT(64 * 1024 * 1024);
        struct curl_slist *h = NULL;
        char full[8192];
        CURLcode cc;

        cr_assert_not_null(c);
        (void)snprintf(full, sizeof(full), "%s%s", url, path);
        *ret = (struct reply){ 0 };
        curl_easy_setopt(c, CURLOPT_URL, full);
        curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, method);
        curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_data);
        curl_easy_setopt(c, CURLOPT_WRITEDATA, &b);
        curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, on_header);
        curl_easy_setopt(c, CURLOPT_HEADERDATA, &ret->ctype);
        curl_easy_setopt(c, CURLOPT_TIMEOUT, 30L);
        if (body) {
                h = curl_slist_append(h, "Content-Type: application/json");
                h = curl_slist_append(h, "Expect:");
                curl_easy_setopt(c, CURLOPT_HTTPHEADER, h);
                curl_easy_setopt(c, CURLOPT_POSTFIELDS, body);
                curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE, (long)len);
        }
        cc = curl_easy_perform(c);
        cr_assert_eq(cc, CURLE_OK, "%s %s: %s", method, path, curl_easy_strerror(cc));
        curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &ret->status);
        ret->body = buf_take(&b, NULL);
        ret->json = json_loads(ret->body ? ret->body : "", JSON_DECODE_ANY, NULL);
        curl_slist_free_all(h);
        curl_easy_cleanup(c);
        buf_release(&b);
}

long req(const char *method, const char *path, const char *body, json_t **ret_json)
{
        struct reply r;
        long status;

        http_do(method, path, body, body ? strlen(body) : 0, &r);
        status = r.status;
        /* Every JSON error reply has the B.2 shape. */
        if (status >= 400 && r.json) {
                cr_assert(json_is_string(json_object_get(r.json, "code")), "%s", r.body);
                cr_assert(json_is_string(json_object_get(r.json, "message")), "%s", r.body);
                cr_assert_eq(json_object_size(r.json), 2, "%s", r.body);
        }
        if (ret_json)
                *ret_json = json_incref(r.json);
        reply_done(&r);
        return status;
}

char *create(const char *path, const char *body, long want_status)
{
        static char ids[64][32];
        static unsigned next;
        json_t *j = NULL;
        long st = req("POST", path, body, &j);
        char *id = ids[next++ % 64];

        cr_assert_eq(st, want_status, "POST %s %s -> %ld %s", path, body, st,
                     j ? json_dumps(j, 0) : "");
        cr_assert(json_is_string(json_object_get(j, "id")));
        (void)snprintf(id, 32, "%s", json_string_value(json_object_get(j, "id")));
        json_decref(j);
        return id;
}

long list_size(const char *path)
{
        json_t *j = NULL;
        long st = req("GET", path, NULL, &j), n;

        cr_assert_eq(st, 200, "GET %s -> %ld", path, st);
        n = (long)json_integer_value(json_object_get(j, "size"));
        cr_assert_eq((size_t)n, json_array_size(json_object_get(j, "items")));
        json_decref(j);
        return n;
}

char *urlenc(const char *s)
{
        CURL *c = curl_easy_init();
        char *e = curl_easy_escape(c, s, 0), *out = strdup(e);

        curl_free(e);
        curl_easy_cleanup(c);
        return out;
}

struct store *test_store(void)
{
        return store;
}

const char *test_dsn(void)
{
        return dsn;
}

const char *js(json_t *j, const char *key)
{
        const char *v = json_string_value(json_object_get(j, key));

        cr_assert_not_null(v, "missing string %s in %s", key, j ? json_dumps(j, 0) : "(null)");
        return v;
}

json_t *get_ok(const char *path)
{
        json_t *j = NULL;
        long st = req("GET", path, NULL, &j);

        cr_assert_eq(st, 200, "GET %s -> %ld %s", path, st, j ? json_dumps(j, 0) : "");
        return j;
}

void expect(const char *method, const char *path, const char *body, long status,
            const char *msg_part)
{
        json_t *j = NULL;
        long st = req(method, path, body, &j);
        const char *m = json_string_value(json_object_get(j, "message"));

        cr_assert_eq(st, status, "%s %s %s -> %ld %s", method, path, body ? body : "", st,
                     j ? json_dumps(j, 0) : "");
        if (msg_part)
                cr_assert(m && strstr(m, msg_part), "message %s lacks '%s'", m ? m : "(none)",
                          msg_part);
        json_decref(j);
}

long filter_size(const char *coll, const char *filter)
{
        char *e = urlenc(filter), path[2048];
        long n;

        cr_assert_not_null(e);
        (void)snprintf(path, sizeof(path), API "/%s?filterQuery=%s", coll, e);
        free(e);
        n = list_size(path);
        return n;
}
