/* SPDX-License-Identifier: Apache-2.0 */
/*
 * hf (Hugging Face) sources. The pure part (patterns, Link cursors, durations, settings, the
 * conversion of model info), then the real client code (libcurl) against a local hub that
 * answers in the hub's wire format (tests/catalog/fake-hf-hub.py, fixtures in
 * tests/fixtures/catalog/hf): paging, maxModels, globs, 401, 404, 429 + Retry-After, a slow
 * server, bad JSON, API keys, HF_ENDPOINT, cancellation; then an hf source in the service
 * (refresh keeps the last data, the status names the error) and its source preview over HTTP.
 */
#include <criterion/criterion.h>
#include <curl/curl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "catalog/handlers.h"
#include "catalog/hf-sync.h"
#include "catalog/hf.h"
#include "catalog/service.h"
#include "http/server.h"
#include "util/buf.h"

/* ---- the pure part ---- */

Test(hfpure, patterns)
{
        static const struct {
                const char *p;
                enum catalog_hf_pattern type;
                const char *org, *prefix;
        } t[] = {
                { "ibm-granite/granite-3.0-2b", CATALOG_HF_PATTERN_EXACT, NULL, NULL },
                { "ibm-granite/*", CATALOG_HF_PATTERN_ORG_ALL, "ibm-granite", NULL },
                { " meta-llama/Llama-2-* ", CATALOG_HF_PATTERN_ORG_PREFIX, "meta-llama",
                  "Llama-2-" },
                { "*", CATALOG_HF_PATTERN_INVALID, NULL, NULL },
                { "*/*", CATALOG_HF_PATTERN_INVALID, NULL, NULL },
                { "*/granite", CATALOG_HF_PATTERN_INVALID, NULL, NULL },
                { "ibm*/x", CATALOG_HF_PATTERN_INVALID, NULL, NULL },
                { "ibm-granite/", CATALOG_HF_PATTERN_INVALID, NULL, NULL },
                { " /*", CATALOG_HF_PATTERN_INVALID, NULL, NULL },
                { "gpt2", CATALOG_HF_PATTERN_EXACT, NULL, NULL }, /* upstream: exact */
        };

        for (size_t i = 0; i < ELEMENTSOF(t); i++) {
                enum catalog_hf_pattern type;
                char *org, *prefix;

                cr_assert_eq(catalog_hf_pattern_parse(t[i].p, &type, &org, &prefix), 0);
                cr_assert_eq(type, t[i].type, "'%s'", t[i].p);
                if (t[i].org)
                        cr_assert_str_eq(org, t[i].org);
                if (t[i].prefix)
                        cr_assert_str_eq(prefix, t[i].prefix);
                free(org);
                free(prefix);
        }
}

Test(hfpure, link_header)
{
        char *c = NULL;

        cr_assert_eq(
                catalog_hf_link_next_cursor(
                        "<https://huggingface.co/api/models?author=x&limit=100&cursor=eyJhIjoxfQ%3D%3D>; "
                        "rel=\"next\"",
                        &c),
                0);
        cr_assert_str_eq(c, "eyJhIjoxfQ%3D%3D");
        free(c);
        cr_assert_eq(catalog_hf_link_next_cursor(
                             "<https://h/api/models?cursor=A&limit=1>; rel=\"prev\", "
                             "<https://h/api/models?cursor=B&limit=1>; rel=\"next\"",
                             &c),
                     0);
        cr_assert_str_eq(c, "B");
        free(c);
        cr_assert_eq(catalog_hf_link_next_cursor("<https://h/x?cursor=A>; rel=\"prev\"", &c), 0);
        cr_assert_null(c);
        cr_assert_eq(catalog_hf_link_next_cursor(NULL, &c), 0);
        cr_assert_null(c);
}

static const char *fake_env_endpoint;
static const char *fake_env_key;

static const char *fake_getenv(const char *name)
{
        if (streq(name, "HF_ENDPOINT"))
                return fake_env_endpoint;
        if (streq(name, "HF_API_KEY") || streq(name, "MY_KEY"))
                return fake_env_key;
        return NULL;
}

static struct catalog_source_config source(const char *properties_json, char **included,
                                           char **excluded)
{
        struct catalog_source_config s = { .id = (char *)"hf", .type = (char *)"hf", .enabled = 1 };

        s.properties = json_loads(properties_json, 0, NULL);
        cr_assert_not_null(s.properties, "%s", properties_json);
        s.included = included;
        s.excluded = excluded;
        return s;
}

Test(hfpure, settings)
{
        char inc1[] = "granite-*", exc1[] = "*-draft";
        char *inc[] = { inc1, NULL }, *exc[] = { exc1, NULL };
        struct catalog_source_config s = source("{\"allowedOrganization\": \"ibm-granite\"}", inc,
                                                exc);
        struct catalog_hf_config c;
        char err[256];

        fake_env_endpoint = "http://mirror.example:8080//";
        fake_env_key = "hf_abc";
        cr_assert_eq(catalog_hf_config_from_source(&s, fake_getenv, &c, err, sizeof(err)), 0, "%s",
                     err);
        cr_assert_str_eq(c.base_url, "http://mirror.example:8080",
                         "HF_ENDPOINT, trailing '/' dropped");
        cr_assert_str_eq(c.api_key, "hf_abc");
        cr_assert_str_eq(c.included[0], "ibm-granite/granite-*", "allowedOrganization prefixes");
        cr_assert_str_eq(c.excluded[0], "ibm-granite/*-draft");
        cr_assert_eq(c.max_models, 500);
        cr_assert_eq(c.sync_interval, 24ULL * 3600 * USEC_PER_SEC);
        catalog_hf_config_release(&c);
        json_decref(s.properties);

        /* url wins over HF_ENDPOINT; apiKeyEnvVar; a key without hf_ is not sent; org alone */
        s = source(
                "{\"url\": \"http://127.0.0.1:9/\", \"apiKeyEnvVar\": \"MY_KEY\", "
                "\"allowedOrganization\": \"acme\", \"maxModels\": 7, \"syncInterval\": \"90s\"}",
                NULL, NULL);
        fake_env_key = "plain-token";
        cr_assert_eq(catalog_hf_config_from_source(&s, fake_getenv, &c, err, sizeof(err)), 0, "%s",
                     err);
        cr_assert_str_eq(c.base_url, "http://127.0.0.1:9");
        cr_assert_null(c.api_key);
        cr_assert(c.has_key);
        cr_assert_str_eq(c.included[0], "acme/*");
        cr_assert_eq(c.max_models, 7);
        cr_assert_eq(c.sync_interval, 90 * USEC_PER_SEC);
        catalog_hf_config_release(&c);
        json_decref(s.properties);

        /* defaults; a bad syncInterval falls back to 24h (upstream warns) */
        fake_env_endpoint = NULL;
        fake_env_key = NULL;
        s = source("{\"syncInterval\": \"soon\"}", inc, NULL);
        cr_assert_eq(catalog_hf_config_from_source(&s, fake_getenv, &c, err, sizeof(err)), 0, "%s",
                     err);
        cr_assert_str_eq(c.base_url, "https://huggingface.co");
        cr_assert_eq(c.sync_interval, 24ULL * 3600 * USEC_PER_SEC);
        cr_assert(!c.has_key);
        catalog_hf_config_release(&c);
        json_decref(s.properties);

        s = source("{}", NULL, NULL);
        cr_assert_eq(catalog_hf_config_from_source(&s, fake_getenv, &c, err, sizeof(err)), -EINVAL);
        cr_assert_str_eq(err, "includedModels cannot be empty for Hugging Face catalog");
        json_decref(s.properties);
        s = source("{\"maxModels\": \"many\"}", inc, NULL);
        cr_assert_eq(catalog_hf_config_from_source(&s, fake_getenv, &c, err, sizeof(err)), -EINVAL);
        json_decref(s.properties);
}

static json_t *load_fixture(const char *name)
{
        const char *root = getenv("MODELPLANE_SOURCE_ROOT");
        char path[1024];
        json_error_t je;
        json_t *j;

        cr_assert_not_null(root);
        snprintf(path, sizeof(path), "%s/tests/fixtures/catalog/hf/%s", root, name);
        j = json_load_file(path, 0, &je);
        cr_assert_not_null(j, "%s: %s", path, je.text);
        return j;
}

static const char *cp(const json_t *m, const char *k)
{
        return json_string_value(
                json_object_get(json_object_get(json_object_get(m, "customProperties"), k),
                                "string_value"));
}

static const char *cp_rec(const struct catalog_record *m, const char *k)
{
        return json_string_value(
                json_object_get(json_object_get(catalog_record_get(m, "customProperties"), k),
                                "string_value"));
}

Test(hfpure, model_from_info)
{
        json_t *info = load_fixture("model-ibm-granite--granite-3.0-2b-instruct.json");
        struct catalog_model_data d = { 0 };
        const json_t *m, *a;

        cr_assert_eq(catalog_hf_model_from_info(info, "x", "# card", 1700000000000, &d), 0);
        m = d.model;
        cr_assert_str_eq(d.name, "ibm-granite/granite-3.0-2b-instruct");
        cr_assert_str_eq(json_string_value(json_object_get(m, "externalId")), d.name);
        cr_assert_str_eq(json_string_value(json_object_get(m, "provider")), "ibm-granite");
        cr_assert_str_eq(json_string_value(json_object_get(m, "license")), "apache-2.0");
        cr_assert_str_eq(json_string_value(json_object_get(m, "libraryName")), "transformers");
        cr_assert_str_eq(json_string_value(json_object_get(m, "readme")), "# card");
        cr_assert_str_eq(json_string_value(json_object_get(m, "createTimeSinceEpoch")),
                         "1727903783000");
        cr_assert_str_eq(json_string_value(json_object_get(m, "lastUpdateTimeSinceEpoch")),
                         "1734637893000");
        cr_assert_str_eq(json_string_value(json_array_get(json_object_get(m, "tasks"), 0)),
                         "text-generation");
        cr_assert_eq(json_array_size(json_object_get(m, "tasks")), 1);
        cr_assert(strneq(json_string_value(json_object_get(m, "logo")),
                         "data:image/svg+xml;base64,", 26));
        /* the card is flat on the real hub: upstream reads cardData.data, so no description */
        cr_assert_null(json_object_get(m, "description"));
        cr_assert_str_eq(cp(m, "model_type"), "generative");
        cr_assert_str_eq(cp(m, "hf_private"), "false");
        cr_assert_str_eq(cp(m, "hf_gated"), "false");
        cr_assert_str_eq(cp(m, "hf_architectures"), "[\"GraniteForCausalLM\"]");
        cr_assert_str_eq(cp(m, "hf_model_type"), "granite");
        cr_assert_str_eq(cp(m, "last_synced"), "1700000000000");
        cr_assert_null(strstr(cp(m, "hf_tags"), "license:"), "license tags are not in hf_tags");
        cr_assert(strstr(cp(m, "hf_tags"), "\"text-generation\""));
        a = json_array_get(d.artifacts_json, 0);
        cr_assert_str_eq(json_string_value(json_object_get(a, "uri")),
                         "hf://ibm-granite/granite-3.0-2b-instruct");
        cr_assert_str_eq(json_string_value(json_object_get(a, "name")),
                         "ibm-granite/granite-3.0-2b-instruct-hf-artifact");
        cr_assert_str_eq(json_string_value(json_object_get(a, "artifactType")), "model-artifact");
        cr_assert_str_eq(json_string_value(json_object_get(a, "createTimeSinceEpoch")),
                         "1727903783000");
        json_decref(d.model);
        json_decref(d.artifacts_json);
        json_decref(info);

        info = load_fixture("model-ibm-granite--granite-3.0-8b-instruct.json");
        cr_assert_eq(catalog_hf_model_from_info(info, "x", NULL, 1, &d), 0);
        m = d.model;
        cr_assert_str_eq(json_string_value(json_object_get(m, "description")),
                         "An 8B instruction model.");
        cr_assert_eq(json_array_size(json_object_get(m, "language")), 2, "empty languages dropped");
        cr_assert_str_eq(json_string_value(json_object_get(m, "licenseLink")),
                         "https://www.apache.org/licenses/LICENSE-2.0");
        cr_assert_null(json_object_get(m, "readme"));
        json_decref(d.model);
        json_decref(d.artifacts_json);
        json_decref(info);

        /* gated "auto", feature-extraction = predictive; no id: the fallback name, no artifact */
        info = json_pack("{s:s, s:s, s:b}", "gated", "auto", "pipeline_tag", "feature-extraction",
                         "private", 1);
        cr_assert_eq(catalog_hf_model_from_info(info, "org/fallback", NULL, 1, &d), 0);
        cr_assert_str_eq(d.name, "org/fallback");
        cr_assert_str_eq(cp(d.model, "hf_gated"), "auto");
        cr_assert_str_eq(cp(d.model, "hf_private"), "true");
        cr_assert_str_eq(cp(d.model, "model_type"), "predictive");
        cr_assert_eq(json_array_size(d.artifacts_json), 0);
        json_decref(d.model);
        json_decref(d.artifacts_json);
        json_decref(info);
        info = json_string("nope");
        cr_assert_eq(catalog_hf_model_from_info(info, "x", NULL, 1, &d), -EINVAL);
        json_decref(info);
}

/* ---- the client against the local hub ---- */

static pid_t hub_pid = -1;
static char hub_url[64];

static void hub_start(void)
{
        const char *root = getenv("MODELPLANE_SOURCE_ROOT");
        char script[1024], fixtures[1024], line[64] = "";
        int pfd[2];
        FILE *f;

        cr_assert_not_null(root);
        snprintf(script, sizeof(script), "%s/tests/catalog/fake-hf-hub.py", root);
        snprintf(fixtures, sizeof(fixtures), "%s/tests/fixtures/catalog/hf", root);
        cr_assert_eq(pipe(pfd), 0);
        hub_pid = fork();
        cr_assert_geq(hub_pid, 0);
        if (hub_pid == 0) {
                dup2(pfd[1], STDOUT_FILENO);
                close(pfd[0]);
                close(pfd[1]);
                execlp("python3", "python3", script, fixtures, (char *)NULL);
                _exit(127);
        }
        close(pfd[1]);
        f = fdopen(pfd[0], "r");
        cr_assert_not_null(f);
        cr_assert_not_null(fgets(line, sizeof(line), f), "the fake hub did not start");
        fclose(f);
        cr_assert(strneq(line, "port ", 5), "%s", line);
        snprintf(hub_url, sizeof(hub_url), "http://127.0.0.1:%ld", strtol(line + 5, NULL, 10));
        curl_global_init(CURL_GLOBAL_DEFAULT);
}

static void hub_stop(void)
{
        if (hub_pid > 0) {
                kill(hub_pid, SIGTERM);
                waitpid(hub_pid, NULL, 0);
                hub_pid = -1;
        }
        curl_global_cleanup();
}

static size_t on_data(char *p, size_t size, size_t n, void *ud)
{
        return buf_append(ud, p, size * n) < 0 ? 0 : size * n;
}

/* A request to the hub itself (control endpoints); the parsed JSON answer. */
static json_t *hub_call(const char *method, const char *path)
{
        struct buf b = BUF_INIT(16U * 1024U * 1024U);
        char url[256];
        CURL *c = curl_easy_init();
        json_t *j;

        snprintf(url, sizeof(url), "%s%s", hub_url, path);
        curl_easy_setopt(c, CURLOPT_URL, url);
        curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_data);
        curl_easy_setopt(c, CURLOPT_WRITEDATA, &b);
        if (streq(method, "POST"))
                curl_easy_setopt(c, CURLOPT_POSTFIELDS, "");
        cr_assert_eq(curl_easy_perform(c), CURLE_OK);
        curl_easy_cleanup(c);
        j = json_loads(buf_str(&b), 0, NULL);
        buf_release(&b);
        return j;
}

/* Requests seen by the hub whose path contains needle; optionally the last one's authorization. */
static size_t hub_count(const char *needle, char *last_auth, size_t n)
{
        json_t *all = hub_call("GET", "/_requests"), *r;
        size_t i, count = 0;

        json_array_foreach(all, i, r)
                if (strstr(json_string_value(json_object_get(r, "path")), needle)) {
                        count++;
                        if (last_auth)
                                snprintf(last_auth, n, "%s",
                                         json_string_value(json_object_get(r, "authorization")));
                }
        json_decref(all);
        return count;
}

static struct catalog_hf_config hf_cfg(const char *included, const char *excluded)
{
        struct catalog_hf_config c = { .max_models = CATALOG_HF_DEFAULT_MAX_MODELS,
                                       .sync_interval = CATALOG_HF_DEFAULT_SYNC_USEC };

        c.source_id = strdup("hf");
        c.base_url = strdup(hub_url);
        cr_assert_eq(catalog_strv_copy((char *[]){ (char *)included, NULL }, &c.included), 0);
        if (excluded)
                cr_assert_eq(catalog_strv_copy((char *[]){ (char *)excluded, NULL }, &c.excluded),
                             0);
        return c;
}

static const struct catalog_hf_opts fast_opts = { .timeout = 2 * USEC_PER_SEC,
                                                  .retry_wait_max = 5 * USEC_PER_SEC };

static struct catalog_hf_result sync_ok(const struct catalog_hf_config *c)
{
        struct catalog_hf_result res;

        cr_assert_eq(catalog_hf_sync(c, &fast_opts, &res), 0);
        return res;
}

static const struct catalog_model_data *find_model(const struct catalog_models *m, const char *name)
{
        for (size_t i = 0; m && i < m->n; i++)
                if (streq(m->v[i].name, name))
                        return &m->v[i];
        return NULL;
}

TestSuite(hf, .init = hub_start, .fini = hub_stop, .timeout = 120);

Test(hf, org_listing_model_info_and_cards)
{
        struct catalog_hf_config c = hf_cfg("ibm-granite/*", NULL);
        struct catalog_hf_result res = sync_ok(&c);
        const struct catalog_model_data *m;
        char auth[128] = "x";

        cr_assert_null(res.error, "%s", res.error);
        cr_assert_eq(res.data->n, 3);
        m = find_model(res.data, "ibm-granite/granite-3.0-2b-instruct");
        cr_assert_not_null(m);
        cr_assert(strstr(json_string_value(catalog_record_get(m->rec, "readme")),
                         "# Granite-3.0-2B-Instruct"));
        m = find_model(res.data, "ibm-granite/granite-embedding-30m-english");
        cr_assert(strstr(json_string_value(catalog_record_get(m->rec, "readme")),
                         "lowercase readme.md"),
                  "the first README sibling that can be fetched");
        cr_assert_null(
                catalog_record_get(find_model(res.data, "ibm-granite/granite-3.0-8b-instruct")->rec,
                                   "readme"),
                "no README sibling, no card request");
        cr_assert_eq(hub_count("/granite-3.0-8b-instruct/raw/", NULL, 0), 0);
        cr_assert_geq(hub_count("/api/models?author=ibm-granite&limit=100", auth, sizeof(auth)), 1);
        cr_assert_str_eq(auth, "", "no key, no Authorization header");
        catalog_hf_result_release(&res);
        catalog_hf_config_release(&c);

        /* excludedModels; an exact id next to a prefix pattern (the hub's search is fuzzy) */
        c = hf_cfg("ibm-granite/granite-3.0-*", "*-8b-*");
        res = sync_ok(&c);
        cr_assert_null(res.error, "%s", res.error);
        cr_assert_eq(res.data->n, 1);
        cr_assert_str_eq(res.data->v[0].name, "ibm-granite/granite-3.0-2b-instruct");
        cr_assert_eq(hub_count("/api/models/ibm-granite/granite-3.0-8b-instruct", NULL, 0), 1,
                     "excluded models are not fetched");
        catalog_hf_result_release(&res);
        catalog_hf_config_release(&c);
}

Test(hf, paging_follows_link_and_stops_at_max_models)
{
        struct catalog_hf_config c = hf_cfg("bigorg/*", NULL);
        struct catalog_hf_result res = sync_ok(&c);

        cr_assert_null(res.error, "%s", res.error);
        cr_assert_eq(res.data->n, 250, "three pages of 100, 100, 50: %zu", res.data->n);
        cr_assert_not_null(find_model(res.data, "bigorg/model-249"));
        cr_assert_eq(hub_count("author=bigorg", NULL, 0), 3);
        cr_assert_eq(hub_count("author=bigorg&limit=100&cursor=", NULL, 0), 2);
        catalog_hf_result_release(&res);
        c.max_models = 150;
        res = sync_ok(&c);
        cr_assert_eq(res.data->n, 150);
        cr_assert_eq(hub_count("author=bigorg", NULL, 0), 3 + 2, "stops after the second page");
        catalog_hf_result_release(&res);
        catalog_hf_config_release(&c);
}

Test(hf, missing_model_is_partial_and_named)
{
        struct catalog_hf_config c = hf_cfg("ibm-granite/granite-3.0-2b-instruct", NULL);
        struct catalog_hf_result res;

        catalog_strv_free(c.included);
        cr_assert_eq(catalog_strv_copy((char *[]){ (char *)"ibm-granite/granite-3.0-2b-instruct",
                                                   (char *)"ibm-granite/does-not-exist", NULL },
                                       &c.included),
                     0);
        res = sync_ok(&c);
        cr_assert_eq(res.data->n, 1);
        cr_assert_not_null(res.error);
        cr_assert(strstr(res.error, "Failed to fetch some models, ensure models exist and are "
                                    "accessible with given credentials. Failed models: "
                                    "[ibm-granite/does-not-exist]"),
                  "%s", res.error);
        cr_assert(strstr(res.error, "status 404"), "%s", res.error);
        catalog_hf_result_release(&res);
        catalog_hf_config_release(&c);

        /* nothing left: the sync fails, naming the model */
        c = hf_cfg("ibm-granite/does-not-exist", NULL);
        res = sync_ok(&c);
        cr_assert_null(res.data);
        cr_assert(strstr(res.error, "Failed models: [ibm-granite/does-not-exist]"), "%s",
                  res.error);
        catalog_hf_result_release(&res);
        catalog_hf_config_release(&c);
}

static void expect_failure(const char *included, const char *needle)
{
        struct catalog_hf_config c = hf_cfg(included, NULL);
        struct catalog_hf_result res = sync_ok(&c);

        cr_assert_null(res.data, "%s: no data expected", included);
        cr_assert_not_null(res.error, "%s", included);
        cr_assert(strstr(res.error, needle), "'%s' not in: %s", needle, res.error);
        catalog_hf_result_release(&res);
        catalog_hf_config_release(&c);
}

Test(hf, errors_name_their_cause)
{
        expect_failure("locked/*", "failed to expand model patterns: no models found: [locked/*]");
        expect_failure("locked/*",
                       "Hugging Face API returned status 401: {\"error\": \"Invalid username "
                       "or password.\"} for author locked");
        expect_failure("badjson/*", "failed to decode models list for author badjson");
        expect_failure("badjson/x", "failed to decode model info for badjson/x");
        expect_failure("*", "wildcard pattern \"*\" is not supported");
        expect_failure("alwayslimited/*", "429 (Retry-After 1)");
        /* 1 try + 3 retries */
        cr_assert_eq(hub_count("author=alwayslimited", NULL, 0), 4);
}

Test(hf, rate_limit_is_retried_after_retry_after)
{
        struct catalog_hf_config c = hf_cfg("ratelimited/*", NULL);
        struct catalog_hf_result res = sync_ok(&c);

        cr_assert_null(res.error, "%s", res.error);
        cr_assert_eq(res.data->n, 1);
        cr_assert_eq(hub_count("author=ratelimited", NULL, 0), 2, "one 429, then the page");
        catalog_hf_result_release(&res);
        catalog_hf_config_release(&c);
}

Test(hf, slow_server_times_out)
{
        struct catalog_hf_config c = hf_cfg("slow/*", NULL);
        struct catalog_hf_opts o = { .timeout = 1 * USEC_PER_SEC };
        struct catalog_hf_result res;

        cr_assert_eq(catalog_hf_sync(&c, &o, &res), 0);
        cr_assert_null(res.data);
        cr_assert(strstr(res.error, "failed to list models for author slow: Timeout was reached"),
                  "%s", res.error);
        catalog_hf_result_release(&res);
        catalog_hf_config_release(&c);
}

struct cancel_arg {
        atomic_bool flag;
};

static void *set_cancel(void *p)
{
        struct timespec ts = { 0, 300 * 1000 * 1000 };

        nanosleep(&ts, NULL);
        atomic_store(&((struct cancel_arg *)p)->flag, true);
        return NULL;
}

Test(hf, a_sync_can_be_cancelled)
{
        struct catalog_hf_config c = hf_cfg("slow/*", NULL);
        struct cancel_arg a = { 0 };
        struct catalog_hf_opts o = { .timeout = 60 * USEC_PER_SEC, .cancel = &a.flag };
        struct catalog_hf_result res;
        pthread_t t;
        usec_t start = now_monotonic();

        cr_assert_eq(pthread_create(&t, NULL, set_cancel, &a), 0);
        cr_assert_eq(catalog_hf_sync(&c, &o, &res), -ECANCELED);
        pthread_join(t, NULL);
        /* generous: only detects waiting for the 60 s timeout or the 5 s answer */
        cr_assert_lt(now_monotonic() - start, 4 * USEC_PER_SEC);
        catalog_hf_config_release(&c);
}

Test(hf, api_keys)
{
        struct catalog_hf_config c = hf_cfg("acme-private/secret-model", NULL);
        struct catalog_hf_result res;
        char auth[128];

        /* without a key the private model is a 401 */
        res = sync_ok(&c);
        cr_assert_null(res.data);
        cr_assert(strstr(res.error, "status 401"), "%s", res.error);
        catalog_hf_result_release(&res);

        c.api_key = strdup("hf_good");
        res = sync_ok(&c);
        cr_assert_null(res.error, "%s", res.error);
        cr_assert_eq(res.data->n, 1);
        cr_assert_str_eq(cp_rec(res.data->v[0].rec, "hf_private"), "true");
        cr_assert_eq(hub_count("/api/models/acme-private/secret-model", auth, sizeof(auth)), 2);
        cr_assert_str_eq(auth, "Bearer hf_good");
        cr_assert_geq(hub_count("/api/whoami-v2", NULL, 0), 1, "the key is checked first");
        catalog_hf_result_release(&res);

        free(c.api_key);
        c.api_key = strdup("hf_revoked");
        res = sync_ok(&c);
        cr_assert_null(res.data);
        cr_assert(strstr(res.error, "failed to validate Hugging Face catalog credentials: invalid "
                                    "Hugging Face API credentials"),
                  "%s", res.error);
        catalog_hf_result_release(&res);
        catalog_hf_config_release(&c);
}

/* ---- an hf source in the service; its preview over HTTP ---- */

static char tmpdir[] = "/tmp/mp-hf-test-XXXXXX";

static char *write_sources(const char *extra_props)
{
        char *path = NULL;
        FILE *f;

        cr_assert_not_null(mkdtemp(tmpdir));
        cr_assert(asprintf(&path, "%s/sources.yaml", tmpdir) > 0);
        f = fopen(path, "we");
        cr_assert_not_null(f);
        fprintf(f,
                "model_catalogs:\n"
                "  - id: hub\n"
                "    name: Hub\n"
                "    type: hf\n"
                "    includedModels: [\"granite-*\"]\n"
                "    excludedModels: [\"*embedding*\"]\n"
                "    properties:\n"
                "      url: %s\n"
                "      allowedOrganization: ibm-granite\n"
                "%s",
                hub_url, extra_props);
        fclose(f);
        return path;
}

static void remove_sources(char *path)
{
        unlink(path);
        rmdir(tmpdir);
        free(path);
        snprintf(tmpdir, sizeof(tmpdir), "/tmp/mp-hf-test-XXXXXX");
}

static const char *state_error(struct catalog_service *svc, enum catalog_source_state *st)
{
        struct catalog_index *idx = catalog_service_get(svc);
        struct catalog_source_query q = { .page = { .page_size = 10 } };
        json_t *out = NULL;
        static char err[2048];

        *st = catalog_index_source_state(idx, "hub");
        cr_assert_eq(catalog_index_list_sources(idx, &q, &out), 0);
        {
                const char *v = json_string_value(
                        json_object_get(json_array_get(json_object_get(out, "items"), 0), "error"));

                snprintf(err, sizeof(err), "%s", v ? v : "");
        }
        json_decref(out);
        catalog_index_unref(idx);
        return err;
}

Test(hf, service_refresh_keeps_the_last_data)
{
        char *path = write_sources("");
        struct catalog_service *svc = NULL;
        struct error_detail e = { 0 };
        struct catalog_index *idx;
        enum catalog_source_state st;
        const char *err;
        json_t *m = NULL;

        cr_assert_eq(catalog_service_new(&(struct catalog_service_config){ .config_paths = &path,
                                                                           .n_config_paths = 1,
                                                                           .hf_opts = &fast_opts },
                                         &svc, &e),
                     0, "%s", e.message);
        idx = catalog_service_get(svc);
        cr_assert_eq(catalog_index_n_models(idx), 2,
                     "2 granite-3.0 models, the embedding excluded");
        cr_assert_eq(catalog_index_get_model(idx, "hub", "ibm-granite/granite-3.0-8b-instruct", &m),
                     0);
        cr_assert_str_eq(json_string_value(json_object_get(m, "source_id")), "hub");
        json_decref(m);
        catalog_index_unref(idx);
        err = state_error(svc, &st);
        cr_assert_eq(st, CATALOG_SOURCE_AVAILABLE, "%s", err);

        /* the hub fails: the models stay, the status names the error */
        json_decref(hub_call("POST", "/_fail/on"));
        cr_assert_eq(catalog_service_sync_hf(svc, true), 1);
        idx = catalog_service_get(svc);
        cr_assert_eq(catalog_index_n_models(idx), 2);
        catalog_index_unref(idx);
        err = state_error(svc, &st);
        cr_assert_eq(st, CATALOG_SOURCE_ERROR);
        cr_assert(strstr(err, "status 503"), "%s", err);

        /* it recovers */
        json_decref(hub_call("POST", "/_fail/off"));
        cr_assert_eq(catalog_service_sync_hf(svc, true), 1);
        err = state_error(svc, &st);
        cr_assert_eq(st, CATALOG_SOURCE_AVAILABLE, "%s", err);
        cr_assert_eq(catalog_service_sync_hf(svc, false), 0, "nothing due before syncInterval");
        catalog_service_free(svc);
        remove_sources(path);
}

static void on_reload(void *ud, int r, const struct error_detail *err,
                      const struct catalog_index *idx)
{
        (void)r, (void)err, (void)idx;
        atomic_fetch_add((atomic_int *)ud, 1);
}

Test(hf, watcher_syncs_every_sync_interval)
{
        char *path = write_sources("      syncInterval: 1s\n");
        struct catalog_service *svc = NULL;
        struct error_detail e = { 0 };
        atomic_int reloads = 0;
        size_t before = hub_count("author=ibm-granite", NULL, 0);

        cr_assert_eq(catalog_service_new(&(struct catalog_service_config){ .config_paths = &path,
                                                                           .n_config_paths = 1,
                                                                           .hf_opts = &fast_opts,
                                                                           .on_reload = on_reload,
                                                                           .userdata = &reloads },
                                         &svc, &e),
                     0, "%s", e.message);
        cr_assert_eq(catalog_service_watch_start(svc), 0);
        /* a hang detector only: 1 s syncs, waited for up to 60 s */
        for (int i = 0; i < 600 && atomic_load(&reloads) < 2; i++)
                usleep(100 * 1000);
        cr_assert_geq(atomic_load(&reloads), 2);
        cr_assert_geq(hub_count("author=ibm-granite", NULL, 0), before + 3);
        catalog_service_free(svc);
        remove_sources(path);
}

/* POSTs @config (YAML) as the multipart part "config" of a preview with c (its URL, headers and
 * writer set); the answer's body in b (reset first). Returns the status. */
static long post_config(CURL *c, struct buf *b, const char *config)
{
        char body[1024];
        long status = 0;

        buf_reset(b);
        snprintf(body, sizeof(body),
                 "--B\r\nContent-Disposition: form-data; name=\"config\"\r\n\r\n%s\r\n--B--\r\n",
                 config);
        curl_easy_setopt(c, CURLOPT_COPYPOSTFIELDS, body);
        cr_assert_eq(curl_easy_perform(c), CURLE_OK);
        curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
        return status;
}

Test(hf, source_preview_over_http)
{
        char *path = write_sources("");
        struct catalog_service *svc = NULL;
        struct error_detail e = { 0 };
        struct http_server *http = NULL;
        struct http_server_config hc = { HTTP_SERVER_CONFIG_DEFAULTS };
        struct buf b = BUF_INIT(1U << 20);
        char url[256];
        struct curl_slist *h = NULL;
        json_t *out, *items;
        long status = 0;
        CURL *c;

        /* previews go to the catalog's own hub address, never to one the config names */
        cr_assert_eq(setenv("HF_ENDPOINT", hub_url, 1), 0);
        cr_assert_eq(catalog_service_new(&(struct catalog_service_config){ .config_paths = &path,
                                                                           .n_config_paths = 1,
                                                                           .hf_opts = &fast_opts },
                                         &svc, &e),
                     0, "%s", e.message);
        hc.handler = catalog_http_handle;
        hc.userdata = svc;
        cr_assert_eq(http_server_start(&hc, &http), 0);
        snprintf(url, sizeof(url), "http://127.0.0.1:%u" CATALOG_API_BASE "/sources/preview",
                 (unsigned)http_server_port(http));
        c = curl_easy_init();
        h = curl_slist_append(h, "Content-Type: multipart/form-data; boundary=B");
        curl_easy_setopt(c, CURLOPT_URL, url);
        curl_easy_setopt(c, CURLOPT_HTTPHEADER, h);
        curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_data);
        curl_easy_setopt(c, CURLOPT_WRITEDATA, &b);
        status = post_config(c, &b,
                             "type: hf\nincludedModels: [\"ibm-granite/*\", \"ibm-granite/gone\"]\n"
                             "excludedModels: [\"*embedding*\"]\n"
                             "properties: {url: \"http://127.0.0.1:9\"}\n");
        cr_assert_eq(status, 200, "%s", buf_str(&b));
        out = json_loads(buf_str(&b), 0, NULL);
        items = json_object_get(out, "items");
        /* 3 listed + the exact id that cannot be fetched keeps its name (upstream) */
        cr_assert_eq(json_integer_value(
                             json_object_get(json_object_get(out, "summary"), "totalModels")),
                     4, "%s", buf_str(&b));
        cr_assert_eq(json_integer_value(
                             json_object_get(json_object_get(out, "summary"), "excludedModels")),
                     1);
        cr_assert_eq(json_array_size(items), 4);
        json_decref(out);

        /* an unsupported pattern is a 422 naming it */
        status = post_config(c, &b, "type: hf\nincludedModels: [\"*\"]\nproperties: {}\n");
        cr_assert_eq(status, 422, "%s", buf_str(&b));
        cr_assert(strstr(buf_str(&b), "is not supported"), "%s", buf_str(&b));

        /* the config's own key (the console's): checked first and sent; a rejected one is a 422 */
        status = post_config(c, &b,
                             "type: hf\nincludedModels: [\"acme-private/secret-model\"]\n"
                             "properties: {apiKey: hf_good}\n");
        cr_assert_eq(status, 200, "%s", buf_str(&b));
        {
                char auth[128] = "";

                cr_assert_geq(hub_count("/api/whoami-v2", auth, sizeof(auth)), 1);
                cr_assert_str_eq(auth, "Bearer hf_good");
                cr_assert_geq(hub_count("/api/models/acme-private/secret-model", auth,
                                        sizeof(auth)),
                              1);
                cr_assert_str_eq(auth, "Bearer hf_good");
        }
        status = post_config(c, &b,
                             "type: hf\nincludedModels: [\"acme-private/secret-model\"]\n"
                             "properties: {apiKey: hf_revoked}\n");
        cr_assert_eq(status, 422, "%s", buf_str(&b));
        cr_assert(strstr(buf_str(&b), "invalid Hugging Face API credentials"), "%s", buf_str(&b));
        curl_easy_cleanup(c);
        curl_slist_free_all(h);
        buf_release(&b);
        http_server_free(http);
        catalog_service_free(svc);
        remove_sources(path);
}
