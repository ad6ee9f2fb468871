/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Integration tests over real HTTP: the catalog service and the HTTP server run in-process on
 * 127.0.0.1 (port 0), queried with libcurl. Fixtures: tests/fixtures/catalog (our own), and the
 * shared demo catalogs when ../shared exists (skipped otherwise). The reload test swaps a
 * ConfigMap-style "..data" symlink 20 times while client threads keep querying.
 */
#include <criterion/criterion.h>
#include <curl/curl.h>
#include <dirent.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "catalog-fixture.h"
#include "catalog/handlers.h"
#include "catalog/service.h"
#include "http/server.h"

struct server {
        struct catalog_service *svc;
        struct http_server *http;
        char base[128];
};

static void server_start(struct server *s, char **paths, size_t n, bool watch)
{
        struct error_detail e = { 0 };
        struct http_server_config hc = { HTTP_SERVER_CONFIG_DEFAULTS };

        cr_assert_eq(catalog_service_new(&(struct catalog_service_config){ .config_paths = paths,
                                                                           .n_config_paths = n,
                                                                           .poll_interval_ms = 200,
                                                                           .debounce_ms = 20 },
                                         &s->svc, &e),
                     0, "service: %s:%u: %s", e.file, e.line, e.message);
        if (watch)
                cr_assert_eq(catalog_service_watch_start(s->svc), 0);
        hc.handler = catalog_http_handle;
        hc.userdata = s->svc;
        hc.body_max = 4U * 1024U * 1024U;
        cr_assert_eq(http_server_start(&hc, &s->http), 0);
        snprintf(s->base, sizeof(s->base), "http://127.0.0.1:%u" CATALOG_API_BASE,
                 (unsigned)http_server_port(s->http));
}

static void server_stop(struct server *s)
{
        s->http = http_server_free(s->http);
        s->svc = catalog_service_free(s->svc);
}

static size_t on_data(char *p, size_t size, size_t n, void *ud)
{
        struct buf *b = ud;

        return buf_append(b, p, size * n) < 0 ? 0 : size * n;
}

struct reply {
        long status;
        char *body;
        char content_type[128];
        json_t *json;
};

static void reply_release(struct reply *r)
{
        free(r->body);
        json_decref(r->json);
        *r = (struct reply){ 0 };
}

/* One request on the given handle (or a fresh one); never asserts (usable from threads). */
static int request(CURL *c, const char *method, const char *url, const char *content_type,
                   const char *body, struct reply *ret)
{
        struct buf b = BUF_INIT(64U * 1024U * 1024U);
        struct curl_slist *h = NULL;
        char hdr[256];
        char *ct = NULL;
        CURLcode cc;
        bool own = !c;

        if (own)
                c = curl_easy_init();
        if (!c)
                return -ENOMEM;
        curl_easy_reset(c);
        curl_easy_setopt(c, CURLOPT_URL, url);
        curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_data);
        curl_easy_setopt(c, CURLOPT_WRITEDATA, &b);
        curl_easy_setopt(c, CURLOPT_TIMEOUT, 30L);
        curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
        if (streq(method, "POST")) {
                curl_easy_setopt(c, CURLOPT_POST, 1L);
                curl_easy_setopt(c, CURLOPT_POSTFIELDS, body ? body : "");
                curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE, (long)(body ? strlen(body) : 0));
        } else if (!streq(method, "GET"))
                curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, method);
        if (content_type) {
                snprintf(hdr, sizeof(hdr), "Content-Type: %s", content_type);
                h = curl_slist_append(h, hdr);
                curl_easy_setopt(c, CURLOPT_HTTPHEADER, h);
        }
        cc = curl_easy_perform(c);
        *ret = (struct reply){ 0 };
        if (cc == CURLE_OK) {
                curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &ret->status);
                curl_easy_getinfo(c, CURLINFO_CONTENT_TYPE, &ct);
                snprintf(ret->content_type, sizeof(ret->content_type), "%s", ct ? ct : "");
                ret->body = buf_take(&b, NULL);
                ret->json = json_loads(ret->body ? ret->body : "", 0, NULL);
        }
        buf_release(&b);
        curl_slist_free_all(h);
        if (own)
                curl_easy_cleanup(c);
        return cc == CURLE_OK ? 0 : -EIO;
}

static struct reply get(struct server *s, const char *fmt, ...) _printf_(2, 3);
static struct reply get(struct server *s, const char *fmt, ...)
{
        char path[2048], url[2300];
        struct reply r;
        va_list ap;

        va_start(ap, fmt);
        vsnprintf(path, sizeof(path), fmt, ap);
        va_end(ap);
        snprintf(url, sizeof(url), "%s%s", s->base, path);
        cr_assert_eq(request(NULL, "GET", url, NULL, NULL, &r), 0, "GET %s failed", url);
        return r;
}

static struct server fx;

static void fx_start(void)
{
        char *p = catalog_fixture_path("sources.yaml");

        curl_global_init(CURL_GLOBAL_DEFAULT);
        server_start(&fx, &p, 1, false);
        free(p);
}

static void fx_stop(void)
{
        server_stop(&fx);
        curl_global_cleanup();
}

TestSuite(http, .init = fx_start, .fini = fx_stop, .timeout = 120);

static json_t *items(const struct reply *r)
{
        return json_object_get(r->json, "items");
}

static json_t *find_by(json_t *arr, const char *key, const char *value)
{
        size_t i;
        json_t *v;

        json_array_foreach(arr, i, v)
                if (json_string_value(json_object_get(v, key)) &&
                    streq(json_string_value(json_object_get(v, key)), value))
                        return v;
        return NULL;
}

static void assert_error(const struct reply *r, long status, const char *needle)
{
        cr_assert_eq(r->status, status, "status %ld, body %s", r->status, r->body);
        cr_assert(json_is_string(json_object_get(r->json, "code")), "error body (%ld): %s",
                  r->status, r->body);
        cr_assert(json_is_string(json_object_get(r->json, "message")), "error body: %s", r->body);
        if (needle)
                cr_assert(strstr(r->body, needle), "'%s' not in %s", needle, r->body);
}

Test(http, sources_with_status)
{
        struct reply r = get(&fx, "/sources");
        json_t *s;

        cr_assert_eq(r.status, 200, "%s", r.body);
        cr_assert_eq(json_array_size(items(&r)), 7, "all model sources, incl. disabled/error: %s",
                     r.body);
        cr_assert_eq(json_integer_value(json_object_get(r.json, "pageSize")), 10);
        s = find_by(items(&r), "id", "acme_models");
        cr_assert_str_eq(json_string_value(json_object_get(s, "status")), "available");
        cr_assert(json_is_null(json_object_get(s, "error")));
        cr_assert_str_eq(json_string_value(json_array_get(json_object_get(s, "excludedModels"), 0)),
                         "*-draft");
        s = find_by(items(&r), "id", "disabled_models");
        cr_assert_str_eq(json_string_value(json_object_get(s, "status")), "disabled");
        cr_assert(json_is_false(json_object_get(s, "enabled")));
        s = find_by(items(&r), "id", "broken_models");
        cr_assert_str_eq(json_string_value(json_object_get(s, "status")), "error");
        cr_assert(strstr(json_string_value(json_object_get(s, "error")), "broken-models.yaml:6:"),
                  "error names file and line: %s", json_string_value(json_object_get(s, "error")));
        s = find_by(items(&r), "id", "missing_models");
        cr_assert_str_eq(json_string_value(json_object_get(s, "status")), "error");
        s = find_by(items(&r), "id", "hf_models");
        cr_assert_str_eq(json_string_value(json_object_get(s, "status")), "error");
        cr_assert(strstr(json_string_value(json_object_get(s, "error")),
                         "failed to expand model patterns: no models found: [ibm-granite/*]"),
                  "%s", json_string_value(json_object_get(s, "error")));
        s = find_by(items(&r), "id", "mlflow_models");
        cr_assert(strstr(json_string_value(json_object_get(s, "error")), "not registered"));
        reply_release(&r);

        r = get(&fx, "/sources?assetType=mcp_servers");
        cr_assert_eq(json_array_size(items(&r)), 1);
        cr_assert_str_eq(json_string_value(json_object_get(json_array_get(items(&r), 0), "id")),
                         "acme_mcp");
        reply_release(&r);
        r = get(&fx, "/sources?assetType=pictures");
        cr_assert_eq(r.status, 200);
        cr_assert_eq(json_array_size(items(&r)), 0);
        reply_release(&r);

        r = get(&fx, "/sources?name=MODELS&orderBy=NAME&sortOrder=DESC&pageSize=2");
        cr_assert_eq(json_array_size(items(&r)), 2);
        cr_assert_str_eq(json_string_value(json_object_get(json_array_get(items(&r), 0), "name")),
                         "Missing Models");
        {
                char tok[256];
                struct reply r2;

                snprintf(tok, sizeof(tok), "%s",
                         json_string_value(json_object_get(r.json, "nextPageToken")));
                cr_assert_neq(tok[0], '\0');
                r2 = get(
                        &fx,
                        "/sources?name=MODELS&orderBy=NAME&sortOrder=DESC&pageSize=2&nextPageToken=%s",
                        tok);
                cr_assert_str_eq(json_string_value(
                                         json_object_get(json_array_get(items(&r2), 0), "name")),
                                 "Community Models");
                reply_release(&r2);
        }
        reply_release(&r);
}

Test(http, models_list_paging_and_order)
{
        struct reply r = get(&fx, "/models");
        char names[64][128];
        size_t n = 0;
        char token[512] = "";

        cr_assert_eq(r.status, 200, "%s", r.body);
        cr_assert_eq(json_array_size(items(&r)), 10, "pageSize defaults to 10");
        cr_assert_eq(json_integer_value(json_object_get(r.json, "size")), 10);
        cr_assert_str_neq(json_string_value(json_object_get(r.json, "nextPageToken")), "");
        reply_release(&r);

        /* every model exactly once over pages of 4 */
        for (int page = 0; page < 20; page++) {
                size_t i;
                json_t *m;

                r = get(&fx, "/models?pageSize=4&orderBy=NAME%s%s",
                        token[0] ? "&nextPageToken=" : "", token);
                cr_assert_eq(r.status, 200, "%s", r.body);
                json_array_foreach(items(&r), i, m) {
                        cr_assert_lt(n, 64);
                        snprintf(names[n++], sizeof(names[0]), "%s",
                                 json_string_value(json_object_get(m, "name")));
                }
                snprintf(token, sizeof(token), "%s",
                         json_string_value(json_object_get(r.json, "nextPageToken")));
                reply_release(&r);
                if (!token[0])
                        break;
        }
        cr_assert_eq(n, 22, "4 acme + 18 community, got %zu", n);
        for (size_t i = 0; i < n; i++)
                for (size_t j = i + 1; j < n; j++)
                        cr_assert_str_neq(names[i], names[j], "repeated %s", names[i]);
        cr_assert_str_eq(names[0], "acme/granite-8b-code");
        cr_assert_str_eq(names[1], "alpha-model");
        cr_assert_str_eq(names[2], "Beta-Model");
        cr_assert_str_eq(names[n - 4], "GAMMA-MODEL");
        cr_assert_str_eq(names[n - 1], "model");

        r = get(&fx, "/models?source=acme_models&sortOrder=DESC&orderBy=NAME");
        cr_assert_str_eq(json_string_value(json_object_get(json_array_get(items(&r), 0), "name")),
                         "GAMMA-MODEL");
        reply_release(&r);
        r = get(&fx, "/models?source=acme_models,community_models&pageSize=100");
        cr_assert_eq(json_array_size(items(&r)), 22);
        reply_release(&r);
        r = get(&fx, "/models?source=disabled_models");
        cr_assert_eq(json_array_size(items(&r)), 0, "disabled sources serve nothing");
        reply_release(&r);
        /* acme/granite-8b-code has no createTimeSinceEpoch: it gets the load time (upstream) */
        r = get(&fx, "/models?orderBy=CREATE_TIME&sortOrder=DESC&pageSize=2&source=acme_models");
        cr_assert_str_eq(json_string_value(json_object_get(json_array_get(items(&r), 0), "name")),
                         "acme/granite-8b-code", "%s", r.body);
        cr_assert_str_eq(json_string_value(json_object_get(json_array_get(items(&r), 1), "name")),
                         "Beta-Model");
        cr_assert_not_null(
                json_object_get(json_array_get(items(&r), 0), "lastUpdateTimeSinceEpoch"));
        reply_release(&r);
}

Test(http, search_filter_and_labels)
{
        struct reply r = get(&fx, "/models?q=Embedding");

        cr_assert_eq(json_array_size(items(&r)), 1, "%s", r.body);
        reply_release(&r);
        r = get(&fx, "/models?filterQuery=%s",
                "license%3D%27apache-2.0%27%20AND%20provider%20ILIKE%20%27%25acme%25%27");
        cr_assert_eq(r.status, 200, "%s", r.body);
        cr_assert_eq(json_array_size(items(&r)), 2, "%s", r.body);
        reply_release(&r);
        r = get(&fx, "/models?filterQuery=%s",
                "artifacts.ttft_p90%20%3C%2050%20AND%20artifacts.hardware_count.int_value%20%3D%202");
        cr_assert_eq(json_array_size(items(&r)), 1, "%s", r.body);
        reply_release(&r);
        r = get(&fx, "/models?filterQuery=%s", "name%20IN%20(%27Model%27%2C%27model%27)");
        cr_assert_eq(json_array_size(items(&r)), 2, "%s", r.body);
        reply_release(&r);
        r = get(&fx, "/models?sourceLabel=acme&pageSize=100");
        cr_assert_eq(json_array_size(items(&r)), 4);
        reply_release(&r);
        r = get(&fx, "/models?sourceLabel=null&pageSize=100");
        cr_assert_eq(json_array_size(items(&r)), 18);
        reply_release(&r);
        /* a typed property compared with a literal of another type: upstream's 400 */
        r = get(&fx, "/models?filterQuery=%s", "hardware_type.string_value%20%3D%205.0");
        assert_error(&r, 400, "invalid filter query, type mismatch or invalid value in comparison");
        reply_release(&r);
        r = get(&fx, "/models?filterQuery=%s",
                "artifacts.hardware_count.int_value%20%3D%20%27two%27");
        assert_error(&r, 400, "type mismatch");
        reply_release(&r);
        r = get(&fx, "/sources/acme_models/models/alpha-model/artifacts?filterQuery=%s",
                "hardware_type.string_value%20%3D%205.0");
        assert_error(&r, 400, "invalid filter query, type mismatch or invalid value in comparison");
        reply_release(&r);
        r = get(&fx, "/sources/acme_models/models/alpha-model/artifacts/performance?filterQuery=%s",
                "ttft_p90.double_value%20%3D%20true");
        assert_error(&r, 400, "type mismatch");
        reply_release(&r);
        /* the same property with a literal of its type still filters */
        r = get(&fx, "/sources/acme_models/models/alpha-model/artifacts?filterQuery=%s",
                "hardware_type.string_value%20%3D%20%27H100%27");
        cr_assert_eq(json_array_size(items(&r)), 1, "%s", r.body);
        reply_release(&r);
        r = get(&fx, "/models?sourceLabel=nothing");
        cr_assert_eq(r.status, 200);
        cr_assert_eq(json_array_size(items(&r)), 0);
        reply_release(&r);
}

Test(http, model_and_artifacts)
{
        struct reply r = get(&fx, "/sources/acme_models/models/acme/granite-8b-code");
        char id[32];

        cr_assert_eq(r.status, 200, "%s", r.body);
        cr_assert_str_eq(json_string_value(json_object_get(r.json, "name")),
                         "acme/granite-8b-code");
        snprintf(id, sizeof(id), "%s", json_string_value(json_object_get(r.json, "id")));
        reply_release(&r);
        r = get(&fx, "/sources/acme_models/models/acme%%2Fgranite-8b-code");
        cr_assert_eq(r.status, 200, "an encoded slash works too: %s", r.body);
        cr_assert_str_eq(json_string_value(json_object_get(r.json, "id")), id);
        reply_release(&r);

        r = get(&fx, "/sources/acme_models/models/nope");
        assert_error(&r, 404, "No model found 'nope' in source 'acme_models'");
        reply_release(&r);
        r = get(&fx, "/sources/acme_models/models/acme/secret-draft");
        assert_error(&r, 404, NULL);
        reply_release(&r);

        r = get(&fx, "/sources/acme_models/models/alpha-model/artifacts");
        cr_assert_eq(r.status, 200, "%s", r.body);
        cr_assert_eq(json_array_size(items(&r)), 4);
        cr_assert_str_eq(json_string_value(
                                 json_object_get(json_array_get(items(&r), 0), "artifactType")),
                         "model-artifact");
        reply_release(&r);
        r = get(&fx, "/sources/acme_models/models/acme/granite-8b-code/artifacts");
        cr_assert_eq(r.status, 200, "unencoded slash + /artifacts: %s", r.body);
        cr_assert_eq(json_array_size(items(&r)), 1);
        reply_release(&r);
        r = get(&fx,
                "/sources/acme_models/models/alpha-model/artifacts?artifactType=metrics-artifact"
                "&orderBy=ttft_p90.double_value&sortOrder=DESC&pageSize=1");
        cr_assert_eq(r.status, 200, "%s", r.body);
        cr_assert_str_eq(json_string_value(json_object_get(json_array_get(items(&r), 0), "name")),
                         "alpha-perf-a100");
        cr_assert_str_neq(json_string_value(json_object_get(r.json, "nextPageToken")), "");
        reply_release(&r);
        r = get(&fx, "/sources/acme_models/models/alpha-model/artifacts/performance");
        cr_assert_eq(json_array_size(items(&r)), 2, "%s", r.body);
        reply_release(&r);
        r = get(&fx, "/sources/acme_models/models/alpha-model/artifacts?filterQuery=%s",
                "hardware_type%3D%27A100%27");
        cr_assert_eq(json_array_size(items(&r)), 1, "%s", r.body);
        reply_release(&r);
        r = get(&fx, "/sources/acme_models/models/nope/artifacts");
        assert_error(&r, 400, "invalid model name 'nope' for source 'acme_models'");
        reply_release(&r);
        r = get(&fx, "/sources/acme_models/models/alpha-model/artifacts?orderBy=x.bogus_value");
        assert_error(&r, 400, NULL);
        reply_release(&r);
        r = get(&fx, "/sources/acme_models/models/alpha-model/artifacts?artifactType=dataset");
        assert_error(&r, 400, NULL);
        reply_release(&r);
}

static const json_t *custom(const json_t *item, const char *k)
{
        return json_object_get(json_object_get(item, "customProperties"), k);
}

Test(http, performance_target_rps_and_recommendations)
{
        static const char base[] = "/sources/acme_models/models/alpha-model/artifacts/performance";
        struct reply r = get(&fx, "%s?targetRPS=25", base);
        json_t *h100, *a100;

        /* h100: rps 10 -> ceil(25/10) = 3 replicas, 30 rps; a100: no rps (1) -> 25, 25 */
        cr_assert_eq(r.status, 200, "%s", r.body);
        h100 = find_by(items(&r), "name", "alpha-perf-h100");
        a100 = find_by(items(&r), "name", "alpha-perf-a100");
        cr_assert(h100 && a100, "%s", r.body);
        cr_assert_str_eq(json_string_value(json_object_get(custom(h100, "replicas"), "int_value")),
                         "3");
        cr_assert_str_eq(json_string_value(
                                 json_object_get(custom(h100, "replicas"), "metadataType")),
                         "MetadataIntValue");
        cr_assert_float_eq(json_number_value(
                                   json_object_get(custom(h100, "total_requests_per_second"),
                                                   "double_value")),
                           30, 1e-9);
        cr_assert_str_eq(json_string_value(json_object_get(custom(a100, "replicas"), "int_value")),
                         "25");
        reply_release(&r);

        /* without targetRPS nothing is computed, and the stored artifact was not changed */
        r = get(&fx, "%s", base);
        cr_assert_null(custom(find_by(items(&r), "name", "alpha-perf-h100"), "replicas"), "%s",
                       r.body);
        reply_release(&r);

        /* two hardware types: each is its own front, both stay; pages of 1 by the id token */
        r = get(&fx, "%s?recommendations=true&pageSize=1", base);
        cr_assert_eq(r.status, 200, "%s", r.body);
        cr_assert_eq(json_array_size(items(&r)), 1);
        cr_assert_not_null(custom(json_array_get(items(&r), 0), "replicas"),
                           "targetRPS defaults to 1");
        {
                char tok[128];

                snprintf(tok, sizeof(tok), "%s",
                         json_string_value(json_object_get(r.json, "nextPageToken")));
                cr_assert_neq(tok[0], '\0');
                reply_release(&r);
                r = get(&fx, "%s?recommendations=true&pageSize=1&nextPageToken=%s", base, tok);
                cr_assert_eq(json_array_size(items(&r)), 1, "%s", r.body);
                cr_assert_str_eq(json_string_value(json_object_get(r.json, "nextPageToken")), "");
        }
        reply_release(&r);
        /* grouped by a property that is no string (ttft_p90): one group "". The a100 (120.25 ms,
         * 4 devices * 1 replica) is slower and dearer than the h100 (45.5 ms, 2 * 1): only the
         * h100 is recommended */
        r = get(&fx, "%s?recommendations=true&hardwareTypeProperty=ttft_p90", base);
        cr_assert_eq(json_array_size(items(&r)), 1, "%s", r.body);
        cr_assert_str_eq(json_string_value(json_object_get(json_array_get(items(&r), 0), "name")),
                         "alpha-perf-h100");
        reply_release(&r);
        r = get(&fx, "%s?recommendations=true&hardwareTypeProperty=metricsType_missing", base);
        assert_error(&r, 400,
                     "properties not found in any performance artifacts: [metricsType_missing]");
        reply_release(&r);
        r = get(&fx, "%s?recommendations=true&hardwareTypeProperty=format", base);
        assert_error(&r, 400, NULL);
        reply_release(&r);

        r = get(&fx, "%s?targetRPS=abc", base);
        assert_error(&r, 400, "invalid targetRPS 'abc': not an integer");
        reply_release(&r);
        r = get(&fx, "%s?targetRPS=-5", base);
        assert_error(&r, 400, "invalid targetRPS '-5': must not be negative");
        reply_release(&r);
        r = get(&fx, "%s?targetRPS=99999999999", base);
        assert_error(&r, 400, "not an integer");
        reply_release(&r);
        r = get(&fx, "%s?recommendations=maybe", base);
        assert_error(&r, 400, "invalid recommendations 'maybe'");
        reply_release(&r);
        r = get(&fx, "%s?latencyProperty=p99_nope&targetRPS=1", base);
        assert_error(&r, 400, "[p99_nope]");
        reply_release(&r);
}

Test(http, filter_options_and_labels)
{
        struct reply r = get(&fx, "/models/filter_options");

        cr_assert_eq(r.status, 200);
        cr_assert_not_null(json_object_get(json_object_get(r.json, "filters"), "license"));
        cr_assert_not_null(json_object_get(json_object_get(r.json, "namedQueries"), "low_latency"));
        reply_release(&r);

        r = get(&fx, "/labels");
        cr_assert_eq(r.status, 200);
        cr_assert_eq(json_array_size(items(&r)), 3, "%s", r.body);
        cr_assert(json_is_null(json_object_get(json_array_get(items(&r), 2), "name")));
        reply_release(&r);
        r = get(&fx, "/labels?assetType=mcp_servers");
        cr_assert_eq(json_array_size(items(&r)), 1);
        reply_release(&r);
        r = get(&fx, "/labels?orderBy=displayName&pageSize=2");
        cr_assert_str_eq(json_string_value(json_object_get(json_array_get(items(&r), 0), "name")),
                         "Acme");
        cr_assert_str_neq(json_string_value(json_object_get(r.json, "nextPageToken")), "");
        reply_release(&r);
        r = get(&fx, "/labels?assetType=bogus");
        assert_error(&r, 400,
                     "invalid value 'bogus' for assetType: valid values are [models mcp_servers]");
        reply_release(&r);
}

Test(http, source_preview)
{
        static const char body[] =
                "--XyZ\r\n"
                "Content-Disposition: form-data; name=\"config\"; filename=\"config.yaml\"\r\n"
                "Content-Type: application/yaml\r\n\r\n"
                "type: yaml\nincludedModels: ['ibm-granite/*', 'meta-llama/*']\n"
                "excludedModels: ['*-draft']\n\r\n"
                "--XyZ\r\n"
                "Content-Disposition: form-data; name=\"catalogData\"; filename=\"c.yaml\"\r\n\r\n"
                "models:\n  - name: ibm-granite/granite-3.0-8b-instruct\n"
                "  - name: ibm-granite/granite-3.0-2b-draft\n  - name: meta-llama/Llama-2-7b-hf\n"
                "  - name: other/model\n\r\n"
                "--XyZ--\r\n";
        char url[512];
        struct reply r;

        snprintf(url, sizeof(url), "%s/sources/preview?filterStatus=included", fx.base);
        cr_assert_eq(request(NULL, "POST", url, "multipart/form-data; boundary=XyZ", body, &r), 0);
        cr_assert_eq(r.status, 200, "%s", r.body);
        cr_assert_eq(json_array_size(items(&r)), 2, "%s", r.body);
        cr_assert_eq(json_integer_value(
                             json_object_get(json_object_get(r.json, "summary"), "totalModels")),
                     4);
        cr_assert_eq(json_integer_value(
                             json_object_get(json_object_get(r.json, "summary"), "excludedModels")),
                     2);
        reply_release(&r);

        /* path mode, relative to the sources file */
        {
                static const char pbody[] =
                        "--b\r\nContent-Disposition: form-data; name=\"config\"\r\n\r\n"
                        "type: yaml\nexcludedModels: ['community/*']\n"
                        "properties: {yamlCatalogPath: community-models.yaml}\n\r\n--b--\r\n";

                snprintf(url, sizeof(url), "%s/sources/preview?pageSize=5", fx.base);
                cr_assert_eq(request(NULL, "POST", url, "multipart/form-data; boundary=b", pbody,
                                     &r),
                             0);
                cr_assert_eq(r.status, 200, "%s", r.body);
                cr_assert_eq(json_array_size(items(&r)), 5);
                cr_assert_eq(json_integer_value(json_object_get(json_object_get(r.json, "summary"),
                                                                "includedModels")),
                             3);
                reply_release(&r);
        }
        {
                static const char evil[] =
                        "--b\r\nContent-Disposition: form-data; name=\"config\"\r\n\r\n"
                        "type: yaml\nproperties: {yamlCatalogPath: ../../../etc/passwd}\n\r\n--b--\r\n";
                static const char badcfg[] =
                        "--b\r\nContent-Disposition: form-data; name=\"config\"\r\n\r\n"
                        "type: yaml\nbogus: 1\n\r\n--b--\r\n";

                cr_assert_eq(request(NULL, "POST", url, "multipart/form-data; boundary=b", evil,
                                     &r),
                             0);
                assert_error(&r, 422, NULL);
                reply_release(&r);
                /* a file next to the sources file that no source uses is not read */
                cr_assert_eq(
                        request(NULL, "POST", url, "multipart/form-data; boundary=b",
                                "--b\r\nContent-Disposition: form-data; name=\"config\"\r\n\r\n"
                                "type: yaml\nproperties: {yamlCatalogPath: override.yaml}\n\r\n--b--\r\n",
                                &r),
                        0);
                assert_error(&r, 422, "yamlCatalogPath 'override.yaml' is not allowed");
                reply_release(&r);
                cr_assert_eq(request(NULL, "POST", url, "multipart/form-data; boundary=b", badcfg,
                                     &r),
                             0);
                assert_error(&r, 422, "unknown key 'bogus'");
                reply_release(&r);
                cr_assert_eq(request(NULL, "POST", url, "multipart/form-data; boundary=b",
                                     "--b--\r\n", &r),
                             0);
                assert_error(&r, 400, NULL);
                reply_release(&r);
        }
}

Test(http, preview_is_bounded)
{
        static const char head[] = "--b\r\nContent-Disposition: form-data; name=\"config\"\r\n\r\n"
                                   "type: yaml\n\r\n--b\r\nContent-Disposition: form-data; "
                                   "name=\"catalogData\"\r\n\r\nmodels: ";
        size_t depth = 150000, n = strlen(head);
        char *body = malloc(n + 2 * depth + 32), url[256];
        struct reply r;

        /* 300 KB of nested [ ] in catalogData: once 121 s of CPU; now refused at the depth limit */
        cr_assert_not_null(body);
        memcpy(body, head, n);
        memset(body + n, '[', depth);
        memset(body + n + depth, ']', depth);
        memcpy(body + n + 2 * depth, "\r\n--b--\r\n", sizeof("\r\n--b--\r\n"));
        snprintf(url, sizeof(url), "%s/sources/preview", fx.base);
        cr_assert_eq(request(NULL, "POST", url, "multipart/form-data; boundary=b", body, &r), 0);
        assert_error(&r, 422, "nesting deeper than 64 levels");
        reply_release(&r);
        free(body);

        /* a body over the preview's own limit (2 MiB) is a 413 */
        body = malloc(3U * 1024U * 1024U);
        cr_assert_not_null(body);
        memset(body, 'x', 3U * 1024U * 1024U - 1);
        body[3U * 1024U * 1024U - 1] = '\0';
        cr_assert_eq(request(NULL, "POST", url, "multipart/form-data; boundary=b", body, &r), 0);
        assert_error(&r, 413, "request body too large");
        reply_release(&r);
        free(body);
}

Test(http, invalid_parameters_are_400)
{
        static const char *const bad[] = {
                "/models?pageSize=abc",
                "/models?pageSize=0",
                "/models?pageSize=-5",
                "/models?sortOrder=up",
                "/models?orderBy=BOGUS",
                "/models?filterQuery=name%20%3D",
                "/models?filterQuery=%28name%3D%27x%27",
                "/models?source=a&sourceLabel=b",
                "/models?nextPageToken=%21%21%21",
                "/models?nextPageToken=eDp5",
                "/models?q=%5Cu0000",
                "/sources?orderBy=CREATE_TIME",
                "/sources?sortOrder=asc",
                "/sources?pageSize=x",
                "/labels?pageSize=0",
        };

        for (size_t i = 0; i < ELEMENTSOF(bad); i++) {
                struct reply r = get(&fx, "%s", bad[i]);

                cr_assert_eq(r.status, 400, "%s -> %ld %s", bad[i], r.status, r.body);
                cr_assert_str_eq(json_string_value(json_object_get(r.json, "code")), "Bad Request",
                                 "%s: %s", bad[i], r.body);
                cr_assert(json_is_string(json_object_get(r.json, "message")));
                reply_release(&r);
        }
}

/* Issue 16: a filter value with %00 was cut at the NUL (200, wrong result); now refused. */
static void assert_nul_refused(const char *path)
{
        struct reply r = get(&fx, "%s", path);

        /* the HTTP front refuses it (its body's code is the number, not "Bad Request") */
        cr_assert_eq(r.status, 400, "%s -> %ld %s", path, r.status, r.body);
        cr_assert(strstr(r.body, "%00"), "%s: %s", path, r.body);
        reply_release(&r);
}

Test(http, nul_in_filter_value_is_400)
{
        assert_nul_refused("/models?filterQuery=license%3D%27mit%00zzz%27");
        assert_nul_refused("/models?filterQuery=name%20LIKE%20%27%25%00%27");
        assert_nul_refused("/models?q=alpha%00zzz");
        assert_nul_refused("/sources/acme_models/models/alpha-model%00x");
        assert_nul_refused("/sources/acme_models/models/alpha-model%00x/artifacts");
}

Test(http, unknown_paths_and_methods)
{
        char url[512];
        struct reply r = get(&fx, "/nothing");

        cr_assert_eq(r.status, 404);
        cr_assert_str_eq(r.body, "404 page not found\n");
        cr_assert(strneq(r.content_type, "text/plain", 10));
        reply_release(&r);
        snprintf(url, sizeof(url), "%s/models", fx.base);
        cr_assert_eq(request(NULL, "DELETE", url, NULL, NULL, &r), 0);
        cr_assert_eq(r.status, 405);
        reply_release(&r);
}

/* ---- MCP catalog ---- */

static struct reply mcp_get(const char *fmt, ...) _printf_(1, 2);
static struct reply mcp_get(const char *fmt, ...)
{
        char path[1024], url[1400], base[128];
        struct reply r;
        va_list ap;

        va_start(ap, fmt);
        vsnprintf(path, sizeof(path), fmt, ap);
        va_end(ap);
        snprintf(base, sizeof(base), "%s", fx.base);
        *strstr(base, CATALOG_API_BASE) = '\0';
        snprintf(url, sizeof(url), "%s" CATALOG_MCP_API_BASE "%s", base, path);
        cr_assert_eq(request(NULL, "GET", url, NULL, NULL, &r), 0);
        return r;
}

Test(http, mcp_servers)
{
        struct reply r = mcp_get("/mcp_servers");
        char id[32];

        cr_assert_eq(r.status, 200, "%s", r.body);
        cr_assert_eq(json_array_size(items(&r)), 2);
        cr_assert_null(json_object_get(json_array_get(items(&r), 0), "tools"),
                       "includeTools defaults to false");
        cr_assert_eq(json_integer_value(json_object_get(json_array_get(items(&r), 0), "toolCount")),
                     2);
        reply_release(&r);

        r = mcp_get("/mcp_servers?namedQuery=remote_verified");
        cr_assert_eq(json_array_size(items(&r)), 1, "%s", r.body);
        cr_assert_str_eq(json_string_value(json_object_get(json_array_get(items(&r), 0), "name")),
                         "acme-search");
        snprintf(id, sizeof(id), "%s",
                 json_string_value(json_object_get(json_array_get(items(&r), 0), "id")));
        reply_release(&r);
        r = mcp_get("/mcp_servers?filterQuery=%s&includeTools=true&toolLimit=1",
                    "securityIndicators.verifiedSource%3Dfalse");
        cr_assert_eq(json_array_size(items(&r)), 1, "%s", r.body);
        cr_assert_eq(json_array_size(json_object_get(json_array_get(items(&r), 0), "tools")), 1);
        reply_release(&r);
        r = mcp_get("/mcp_servers?q=deploy&orderBy=NAME");
        cr_assert_eq(json_array_size(items(&r)), 1);
        reply_release(&r);
        r = mcp_get("/mcp_servers?name=acme-%%25");
        cr_assert_eq(json_array_size(items(&r)), 2, "%s", r.body);
        reply_release(&r);

        r = mcp_get("/mcp_servers/%s?includeTools=true", id);
        cr_assert_eq(r.status, 200);
        cr_assert_eq(json_array_size(json_object_get(r.json, "tools")), 2);
        reply_release(&r);
        r = mcp_get("/mcp_servers/%s/tools?filterQuery=%s", id, "name%3D%27fetch%27");
        cr_assert_eq(json_array_size(items(&r)), 1, "%s", r.body);
        reply_release(&r);
        r = mcp_get("/mcp_servers/%s/tools/search", id);
        cr_assert_eq(r.status, 200);
        cr_assert_str_eq(json_string_value(json_object_get(r.json, "serverName")), "acme-search");
        reply_release(&r);
        /* "fetch" has no accessType in the YAML: served as read_only (upstream's default) */
        r = mcp_get("/mcp_servers/%s/tools/fetch", id);
        cr_assert_eq(r.status, 200);
        cr_assert_str_eq(json_string_value(
                                 json_object_get(json_object_get(r.json, "tool"), "accessType")),
                         "read_only", "%s", r.body);
        reply_release(&r);
        r = mcp_get("/mcp_servers/%s/tools?filterQuery=%s", id, "accessType%3D%27read_only%27");
        cr_assert_eq(json_array_size(items(&r)), 2, "%s", r.body);
        reply_release(&r);
        r = mcp_get("/mcp_servers/%s/tools/nope", id);
        assert_error(&r, 404, NULL);
        reply_release(&r);
        r = mcp_get("/mcp_servers/12345678");
        assert_error(&r, 404, NULL);
        reply_release(&r);
        r = mcp_get("/mcp_servers/filter_options");
        cr_assert_eq(r.status, 200);
        cr_assert_not_null(
                json_object_get(json_object_get(r.json, "namedQueries"), "remote_verified"));
        cr_assert_not_null(json_object_get(json_object_get(r.json, "filters"), "deploymentMode"));
        reply_release(&r);
        r = mcp_get("/mcp_servers?namedQuery=apache_only");
        assert_error(&r, 400, "unknown named query");
        reply_release(&r);
        r = mcp_get("/mcp_servers?toolLimit=500");
        assert_error(&r, 400, NULL);
        reply_release(&r);
}

/* ---- the shared demo catalogs (skipped when ../shared is absent) ---- */

static int copy_file(const char *from, const char *to)
{
        char *data = NULL;
        size_t len;
        FILE *f;
        int r = catalog_read_file(from, 1U << 26, &data, &len);

        if (r < 0)
                return r;
        f = fopen(to, "we");
        if (!f) {
                free(data);
                return -errno;
        }
        fwrite(data, 1, len, f);
        fclose(f);
        free(data);
        return 0;
}

Test(shared, demo_catalogs, .timeout = 120)
{
        const char *root = getenv("MODELPLANE_SOURCE_ROOT");
        char samples[1024], dir[] = "/tmp/catalog-demo-XXXXXX", *cfg = NULL;
        struct server s = { 0 };
        struct reply r;
        DIR *d;
        struct dirent *de;
        size_t total = 0, seen = 0;
        char token[512] = "";

        snprintf(samples, sizeof(samples), "%s/../shared/fixtures/model-registry/catalog-samples",
                 root);
        d = opendir(samples);
        if (!d)
                cr_skip_test("no shared demo catalogs at %s", samples);
        cr_assert_not_null(mkdtemp(dir));
        /* the demo sources name their files dev-*.yaml; the samples are stored as demo-dev-*.yaml */
        while ((de = readdir(d))) {
                char from[2048], to[2048];

                if (!strneq(de->d_name, "demo-", 5))
                        continue;
                snprintf(from, sizeof(from), "%s/%s", samples, de->d_name);
                snprintf(to, sizeof(to), "%s/%s", dir, de->d_name + 5);
                cr_assert_eq(copy_file(from, to), 0);
                if (strstr(de->d_name, "-models.yaml")) {
                        struct catalog_models *m = NULL;
                        struct error_detail e = { 0 };

                        cr_assert_eq(catalog_models_load_file(from, &m, &e), 0, "%s:%u: %s", e.file,
                                     e.line, e.message);
                        total += m->n;
                        catalog_models_unref(m);
                }
        }
        closedir(d);
        cr_assert(asprintf(&cfg, "%s/dev-sources.yaml", dir) > 0);
        curl_global_init(CURL_GLOBAL_DEFAULT);
        server_start(&s, &cfg, 1, false);

        r = get(&s, "/sources");
        cr_assert_eq(json_array_size(items(&r)), 3, "%s", r.body);
        for (size_t i = 0; i < 3; i++)
                cr_assert_str_eq(json_string_value(
                                         json_object_get(json_array_get(items(&r), i), "status")),
                                 "available", "%s", r.body);
        reply_release(&r);
        for (int page = 0; page < 100; page++) {
                r = get(&s, "/models?pageSize=3%s%s", token[0] ? "&nextPageToken=" : "", token);
                cr_assert_eq(r.status, 200);
                seen += json_array_size(items(&r));
                snprintf(token, sizeof(token), "%s",
                         json_string_value(json_object_get(r.json, "nextPageToken")));
                reply_release(&r);
                if (!token[0])
                        break;
        }
        cr_assert_eq(seen, total, "paged %zu of %zu demo models", seen, total);
        r = get(&s, "/sources/organization_ai_models/models/acme-ai/neural-7b-instruct/artifacts");
        cr_assert_eq(r.status, 200, "%s", r.body);
        reply_release(&r);
        r = get(&s, "/models/filter_options");
        cr_assert_eq(r.status, 200);
        reply_release(&r);
        server_stop(&s);
        curl_global_cleanup();
        free(cfg);
        {
                char cmd[128];

                snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
                (void)!system(cmd);
        }
}

/* ---- hot reload under load ---- */

struct reload_env {
        char dir[64];
        unsigned gen;
};

static void write_text(const char *path, const char *text)
{
        FILE *f = fopen(path, "we");

        cr_assert_not_null(f, "%s", path);
        fputs(text, f);
        cr_assert_eq(fclose(f), 0);
}

/*
 * Publishes a new version the way the kubelet updates a ConfigMap volume: write a fresh
 * timestamped directory, point "..data_tmp" at it, rename it over "..data".
 */
static void publish(struct reload_env *env, char kind, bool broken_models, bool broken_sources)
{
        char d[256], p[320], link[320], tmp[320];
        struct buf b = BUF_INIT(1U << 20);
        unsigned n = kind == 'A' ? 12 : 7;

        env->gen++;
        snprintf(d, sizeof(d), "%s/..v%u", env->dir, env->gen);
        cr_assert_eq(mkdir(d, 0755), 0);
        snprintf(p, sizeof(p), "%s/sources.yaml", d);
        (void)!buf_printf(&b,
                          "model_catalogs:\n  - id: s\n    name: \"S %c\"\n    type: yaml\n"
                          "    properties: {yamlCatalogPath: models.yaml}\n%s",
                          kind, broken_sources ? "bogus_key: 1\n" : "");
        write_text(p, buf_str(&b));
        buf_reset(&b);
        (void)!buf_printf(&b, "source: %c\nmodels:\n", kind);
        for (unsigned i = 0; i < n; i++)
                (void)!buf_printf(&b, "  - name: v%c/m-%02u\n    description: version %c\n",
                                  kind == 'A' ? 'a' : 'b', i, kind);
        if (broken_models)
                (void)!buf_puts(&b, "  - name: [unclosed\n");
        snprintf(p, sizeof(p), "%s/models.yaml", d);
        write_text(p, buf_str(&b));
        buf_release(&b);
        snprintf(tmp, sizeof(tmp), "%s/..data_tmp", env->dir);
        snprintf(link, sizeof(link), "..v%u", env->gen);
        cr_assert_eq(symlink(link, tmp), 0);
        snprintf(p, sizeof(p), "%s/..data", env->dir);
        cr_assert_eq(rename(tmp, p), 0);
}

static void reload_env_init(struct reload_env *env, char kind)
{
        char p[320];

        snprintf(env->dir, sizeof(env->dir), "/tmp/catalog-reload-XXXXXX");
        cr_assert_not_null(mkdtemp(env->dir));
        env->gen = 0;
        publish(env, kind, false, false);
        snprintf(p, sizeof(p), "%s/sources.yaml", env->dir);
        cr_assert_eq(symlink("..data/sources.yaml", p), 0);
        snprintf(p, sizeof(p), "%s/models.yaml", env->dir);
        cr_assert_eq(symlink("..data/models.yaml", p), 0);
}

static void wait_generation(struct catalog_service *svc, uint64_t after)
{
        /* bounded wait for the watcher: 6000 x 10 ms (generous: shared, overloaded CI machines) */
        for (int i = 0; i < 6000; i++) {
                if (catalog_service_generation(svc) > after)
                        return;
                nanosleep(&(struct timespec){ .tv_nsec = 10 * 1000 * 1000 }, NULL);
        }
        cr_assert_fail("no reload after generation %llu", (unsigned long long)after);
}

struct load {
        const char *base;
        atomic_bool stop;
        atomic_uint ok_a, ok_b, bad, server_errors;
        char last_bad[512];
};

/* Checks a /models page is whole from one version: one prefix, and that version's count. */
static bool page_consistent(json_t *j, char *which)
{
        json_t *it = json_object_get(j, "items"), *m;
        size_t i;
        char kind = 0;

        if (!json_is_array(it) || json_array_size(it) == 0)
                return false;
        json_array_foreach(it, i, m) {
                const char *name = json_string_value(json_object_get(m, "name"));
                char k;

                if (!name || strlen(name) < 2)
                        return false;
                k = name[1];
                if (kind && k != kind)
                        return false;
                kind = k;
        }
        *which = kind;
        return json_array_size(it) == (kind == 'a' ? 12U : 7U) &&
               json_integer_value(json_object_get(j, "size")) == (json_int_t)json_array_size(it);
}

static void *load_thread(void *arg)
{
        struct load *l = arg;
        CURL *c = curl_easy_init();
        char url[512];

        snprintf(url, sizeof(url), "%s/models?pageSize=100", l->base);
        for (unsigned i = 0; i < 1000000 && !atomic_load(&l->stop); i++) {
                struct reply r;
                char which = 0;

                if (request(c, "GET", url, NULL, NULL, &r) < 0) {
                        atomic_fetch_add(&l->bad, 1);
                        continue;
                }
                if (r.status >= 500)
                        atomic_fetch_add(&l->server_errors, 1);
                if (r.status == 200 && page_consistent(r.json, &which))
                        atomic_fetch_add(which == 'a' ? &l->ok_a : &l->ok_b, 1);
                else {
                        atomic_fetch_add(&l->bad, 1);
                        snprintf(l->last_bad, sizeof(l->last_bad), "%ld %.400s", r.status,
                                 r.body ? r.body : "");
                }
                reply_release(&r);
                /* steady load, not a CPU hog on shared machines */
                nanosleep(&(struct timespec){ .tv_nsec = 2 * 1000 * 1000 }, NULL);
        }
        curl_easy_cleanup(c);
        return NULL;
}

static const char *source_status(struct server *s, char *error, size_t n)
{
        static char st[32];
        struct reply r = get(s, "/sources");
        json_t *src = json_array_get(items(&r), 0);

        snprintf(st, sizeof(st), "%s", json_string_value(json_object_get(src, "status")));
        snprintf(error, n, "%s",
                 json_string_value(json_object_get(src, "error"))
                         ? json_string_value(json_object_get(src, "error"))
                         : "");
        reply_release(&r);
        return st;
}

Test(reload, configmap_swaps_under_load, .timeout = 240)
{
        struct reload_env env;
        struct server s = { 0 };
        struct load l = { 0 };
        pthread_t th[4];
        char *cfg = NULL, err[1024];
        struct reply r;

        curl_global_init(CURL_GLOBAL_DEFAULT);
        reload_env_init(&env, 'A');
        cr_assert(asprintf(&cfg, "%s/sources.yaml", env.dir) > 0);
        server_start(&s, &cfg, 1, true);
        l.base = s.base;
        for (size_t i = 0; i < ELEMENTSOF(th); i++)
                cr_assert_eq(pthread_create(&th[i], NULL, load_thread, &l), 0);

        for (unsigned i = 1; i <= 20; i++) {
                uint64_t g = catalog_service_generation(s.svc);

                publish(&env, i % 2 ? 'B' : 'A', false, false);
                wait_generation(s.svc, g);
                r = get(&s, "/models?pageSize=100");
                {
                        char which = 0;

                        cr_assert(page_consistent(r.json, &which), "%s", r.body);
                        cr_assert_eq(which, i % 2 ? 'b' : 'a', "swap %u not served", i);
                }
                reply_release(&r);
        }
        /* 20 swaps done (last one: A). A broken catalog file keeps the previous models. */
        {
                uint64_t g = catalog_service_generation(s.svc);

                publish(&env, 'B', true, false);
                wait_generation(s.svc, g);
                cr_assert_str_eq(source_status(&s, err, sizeof(err)), "error");
                cr_assert(strstr(err, "models.yaml:"), "error names the file: %s", err);
                r = get(&s, "/models?pageSize=100");
                {
                        char which = 0;

                        cr_assert(page_consistent(r.json, &which), "%s", r.body);
                        cr_assert_eq(which, 'a', "the last good catalog keeps serving");
                }
                reply_release(&r);
        }
        /* A broken sources file is rejected as a whole: the previous snapshot stays. */
        {
                struct error_detail e = { 0 };
                uint64_t g;

                publish(&env, 'B', false, true);
                g = catalog_service_generation(s.svc);
                cr_assert_eq(catalog_service_reload(s.svc, &e), -EINVAL);
                cr_assert(strstr(e.message, "bogus_key"), "%s", e.message);
                cr_assert_eq(e.line, 6);
                cr_assert_eq(catalog_service_generation(s.svc), g);
                r = get(&s, "/models?pageSize=100");
                cr_assert_eq(r.status, 200);
                reply_release(&r);
        }
        /* and the next good version is picked up again */
        {
                uint64_t g = catalog_service_generation(s.svc);

                publish(&env, 'B', false, false);
                wait_generation(s.svc, g);
                cr_assert_str_eq(source_status(&s, err, sizeof(err)), "available");
        }

        atomic_store(&l.stop, true);
        for (size_t i = 0; i < ELEMENTSOF(th); i++)
                pthread_join(th[i], NULL);
        cr_assert_eq(atomic_load(&l.server_errors), 0, "5xx responses during reloads");
        cr_assert_eq(atomic_load(&l.bad), 0, "%u mixed or failed responses, last: %s",
                     atomic_load(&l.bad), l.last_bad);
        cr_assert_gt(atomic_load(&l.ok_a) + atomic_load(&l.ok_b), 0);
        server_stop(&s);
        curl_global_cleanup();
        free(cfg);
        {
                char cmd[128];

                snprintf(cmd, sizeof(cmd), "rm -rf '%s'", env.dir);
                (void)!system(cmd);
        }
}

Test(reload, plain_file_rewrite_is_seen, .timeout = 120)
{
        char dir[] = "/tmp/catalog-plain-XXXXXX", p[256], *cfg = NULL;
        struct server s = { 0 };
        struct reply r;
        uint64_t g;

        curl_global_init(CURL_GLOBAL_DEFAULT);
        cr_assert_not_null(mkdtemp(dir));
        snprintf(p, sizeof(p), "%s/m.yaml", dir);
        write_text(p, "models:\n  - name: one\n");
        cr_assert(asprintf(&cfg, "%s/sources.yaml", dir) > 0);
        write_text(
                cfg,
                "model_catalogs:\n  - {id: s, type: yaml, properties: {yamlCatalogPath: m.yaml}}\n");
        server_start(&s, &cfg, 1, true);
        r = get(&s, "/models");
        cr_assert_eq(json_array_size(items(&r)), 1);
        reply_release(&r);
        g = catalog_service_generation(s.svc);
        write_text(p, "models:\n  - name: one\n  - name: two\n");
        wait_generation(s.svc, g);
        /* an in-place rewrite may be seen half-written first; the close then reloads again */
        for (int i = 0; i < 2000; i++) {
                r = get(&s, "/models");
                cr_assert_eq(r.status, 200);
                if (json_array_size(items(&r)) == 2)
                        break;
                reply_release(&r);
                nanosleep(&(struct timespec){ .tv_nsec = 10 * 1000 * 1000 }, NULL);
        }
        cr_assert_eq(json_array_size(items(&r)), 2, "%s", r.body);
        reply_release(&r);
        server_stop(&s);
        curl_global_cleanup();
        unlink(p);
        unlink(cfg);
        rmdir(dir);
        free(cfg);
}

/* ---- the real command: flags, startup, SIGTERM ---- */

#include <signal.h>
#include <sys/wait.h>

Test(cmd, serves_and_stops_on_sigterm, .timeout = 60)
{
        const char *build = getenv("MODELPLANE_BUILD_ROOT");
        char *bin = NULL, *paths = NULL, *a = catalog_fixture_path("sources.yaml"),
             *b = catalog_fixture_path("override.yaml");
        char line[256] = "", url[512];
        int out[2], status = 0;
        unsigned port = 0;
        struct reply r;
        FILE *f;
        pid_t pid;

        cr_assert_not_null(build);
        cr_assert(asprintf(&bin, "%s/src/cmd/modelplane", build) > 0);
        if (access(bin, X_OK) < 0)
                cr_skip_test("%s not built", bin);
        cr_assert(asprintf(&paths, "%s,%s", a, b) > 0);
        cr_assert_eq(pipe(out), 0);
        pid = fork();
        cr_assert_geq(pid, 0);
        if (pid == 0) {
                dup2(out[1], STDOUT_FILENO);
                close(out[0]);
                execl(bin, bin, "catalog", "--listen", "127.0.0.1:0", "--log-level", "warn",
                      "--catalogs-path", paths, (char *)NULL);
                _exit(127);
        }
        close(out[1]);
        f = fdopen(out[0], "r");
        cr_assert_not_null(fgets(line, sizeof(line), f), "no output from the server");
        cr_assert_eq(sscanf(line, "listening on 127.0.0.1:%u", &port), 1, "%s", line);

        curl_global_init(CURL_GLOBAL_DEFAULT);
        snprintf(url, sizeof(url), "http://127.0.0.1:%u" CATALOG_API_BASE "/sources?pageSize=100",
                 port);
        cr_assert_eq(request(NULL, "GET", url, NULL, NULL, &r), 0);
        cr_assert_eq(r.status, 200);
        /* the comma-separated second file overrode community_models' labels */
        cr_assert_str_eq(json_string_value(json_array_get(
                                 json_object_get(find_by(items(&r), "id", "community_models"),
                                                 "labels"),
                                 0)),
                         "Community");
        reply_release(&r);
        curl_global_cleanup();

        cr_assert_eq(kill(pid, SIGTERM), 0);
        cr_assert_eq(waitpid(pid, &status, 0), pid);
        cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0, "exit status %d", status);
        fclose(f);
        free(bin);
        free(paths);
        free(a);
        free(b);
}

Test(cmd, broken_sources_file_is_fatal_at_startup, .timeout = 60)
{
        const char *build = getenv("MODELPLANE_BUILD_ROOT");
        char *bin = NULL, cfg[] = "/tmp/catalog-bad-XXXXXX";
        int fd = mkstemp(cfg), status = 0;
        pid_t pid;

        cr_assert(asprintf(&bin, "%s/src/cmd/modelplane", build ? build : ".") > 0);
        if (access(bin, X_OK) < 0)
                cr_skip_test("%s not built", bin);
        cr_assert_geq(fd, 0);
        cr_assert_gt(write(fd, "model_catalogs:\n  - id: a\n    tpye: yaml\n", 41), 0);
        close(fd);
        pid = fork();
        if (pid == 0) {
                int null = open("/dev/null", O_WRONLY);

                dup2(null, STDOUT_FILENO);
                dup2(null, STDERR_FILENO);
                execl(bin, bin, "catalog", "--listen", "127.0.0.1:0", "--catalogs-path", cfg,
                      (char *)NULL);
                _exit(127);
        }
        cr_assert_eq(waitpid(pid, &status, 0), pid);
        cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 1, "exit status %d", status);
        unlink(cfg);
        free(bin);
}
