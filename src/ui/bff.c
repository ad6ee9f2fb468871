/* SPDX-License-Identifier: Apache-2.0 */
#include "ui/bff.h"
#include "ui/bff-internal.h"

#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "http/router.h"
#include "json/json-util.h"
#include "kube/client.h"
#include "registry-client/client.h"
#include "ui/static-path.h"
#include "ui/static.h"
#include "ui/views.h"
#include "util/log.h"
#include "util/parse-util.h"
#include "util/string-util.h"

/*
 * The front of modelplane ui's request handler: the route table, identity and CSRF, static files,
 * caching and security headers, construction; the client pools and the reply helpers the views
 * (bff-kube.c) and the forwarding (bff-forward.c) share through bff-internal.h.
 */

/* img-src: no third-party host; a catalog logo is shown only as a data URI (ui/src/format.ts
 * logoSrc()), so no page makes a visitor's browser ask a host a catalog names */
static const char CSP[] = "default-src 'self'; script-src 'self'; style-src 'self'; "
                          "img-src 'self' data:; font-src 'self' data:; "
                          "connect-src 'self'; object-src 'none'; base-uri 'none'; "
                          "form-action 'self'; frame-ancestors 'none'";

static const char NOT_BUILT_PAGE[] =
        "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
        "<title>modelplane ui</title></head><body>\n<h1>modelplane ui</h1>\n"
        "<p>The web console is not built, so there is nothing to show here. The API under "
        "<code>/api/v1/</code> works.</p>\n<p>Build it with <code>npm ci &amp;&amp; npm run "
        "build</code> in <code>ui/</code>, or start <code>modelplane ui</code> with "
        "<code>--static-dir</code> pointing at a built console.</p>\n</body></html>\n";

/* ---- pools of upstream clients (libcurl handles are one thread at a time) ---- */

void *bff_pool_get(struct pool *p)
{
        void *it = NULL;

        (void)pthread_mutex_lock(&p->lock);
        if (p->n > 0)
                it = p->items[--p->n];
        (void)pthread_mutex_unlock(&p->lock);
        return it;
}

void bff_pool_put(struct pool *p, void *it)
{
        if (!it)
                return;
        (void)pthread_mutex_lock(&p->lock);
        if (p->n < POOL_MAX) {
                p->items[p->n++] = it;
                it = NULL;
        }
        (void)pthread_mutex_unlock(&p->lock);
        if (it)
                p->destroy(it);
}

static void pool_done(struct pool *p)
{
        for (size_t i = 0; i < p->n; i++)
                p->destroy(p->items[i]);
        p->n = 0;
        (void)pthread_mutex_destroy(&p->lock);
}

static void mr_destroy(void *it)
{
        (void)mr_client_free(it);
}

static void kube_destroy(void *it)
{
        (void)kube_client_free(it);
}

int bff_reply_data(struct call *c, unsigned status, json_t *data)
{
        json_t *body = ui_envelope(data);

        if (!body)
                return -ENOMEM;
        http_resp_set_json(c->resp, status, body);
        return 0;
}

int bff_reply_error(struct http_resp *resp, unsigned status, const char *source, const char *fmt,
                    ...)
{
        char msg[1024];
        va_list ap;
        json_t *body;

        va_start(ap, fmt);
        (void)vsnprintf(msg, sizeof(msg), fmt, ap);
        va_end(ap);
        body = ui_error_body(status, source, msg);
        if (!body)
                return -ENOMEM;
        http_resp_set_json(resp, status, body);
        return 0;
}

/* A refusal was written (r: what writing it returned): 1, or its error. */
int bff_refused(int r)
{
        return r < 0 ? r : 1;
}

/* Reads an unsigned query parameter with a default and a maximum; 400 when bad. */
int bff_query_uint(struct call *c, const char *key, unsigned def, unsigned max, unsigned *ret)
{
        const char *v = http_req_query(c->req, key);
        uint32_t u;

        if (!v) {
                *ret = def;
                return 0;
        }
        if (safe_atou32(v, &u) < 0 || u == 0 || u > max) {
                (void)bff_reply_error(c->resp, 400, "ui", "%s must be an integer from 1 to %u", key,
                                      max);
                return -EINVAL;
        }
        *ret = u;
        return 0;
}

/* ---- the API routes ---- */

/* The query parameters forwarded upstream. */

static const char *const Q_LIST[] = { "pageSize",      "orderBy",     "sortOrder",
                                      "nextPageToken", "filterQuery", NULL };
static const char *const Q_VERSIONS[] = { "pageSize",    "orderBy", "sortOrder",  "nextPageToken",
                                          "filterQuery", "name",    "externalId", NULL };
static const char *const Q_CATALOG_MODELS[] = { "source",        "sourceLabel", "q",
                                                "pageSize",      "orderBy",     "sortOrder",
                                                "nextPageToken", "filterQuery", NULL };
static const char *const Q_SOURCES[] = { "name",      "assetType",     "pageSize", "orderBy",
                                         "sortOrder", "nextPageToken", NULL };
static const char *const Q_ARTIFACTS[] = { "artifactType", "filterQuery",   "pageSize", "orderBy",
                                           "sortOrder",    "nextPageToken", NULL };
static const char *const Q_PERF[] = { "targetRPS",
                                      "recommendations",
                                      "rpsProperty",
                                      "latencyProperty",
                                      "hardwareCountProperty",
                                      "hardwareTypeProperty",
                                      "filterQuery",
                                      "pageSize",
                                      "orderBy",
                                      "sortOrder",
                                      "nextPageToken",
                                      NULL };
static const char *const Q_MCP_SERVERS[] = {
        "name",      "q",        "sourceLabel", "filterQuery", "namedQuery",    "includeTools",
        "toolLimit", "pageSize", "orderBy",     "sortOrder",   "nextPageToken", NULL
};
static const char *const Q_MCP_SERVER[] = { "includeTools", "toolLimit", NULL };
static const char *const Q_MCP_TOOLS[] = { "filterQuery", "pageSize",      "orderBy",
                                           "sortOrder",   "nextPageToken", NULL };
static const char *const Q_NONE[] = { NULL };

#define MR   "/api/v1/model_registry/{mr}"
#define MC   "/api/v1/model_catalog"
#define MCPC "/api/v1/mcp_catalog"
#define MCS  "/api/v1/settings/model_catalog/source_configs"
/* the catalog server's paths, under the catalog client's "/api" */
#define CAT "/model_catalog/v1alpha1"
#define MCP "/mcp_catalog/v1alpha1"
#define ROUTE(m, p, ...)                                      \
        {                                                     \
                m, p, NULL, (void *)&(const struct api_route) \
                {                                             \
                        __VA_ARGS__                           \
                }                                             \
        }

static const struct http_route api_routes[] = {
        ROUTE("GET", "/api/v1/user", .fn = bff_api_user),
        ROUTE("GET", "/api/v1/namespaces", .fn = bff_api_namespaces),
        ROUTE("GET", "/api/v1/model_registry", .fn = bff_api_registries),
        ROUTE("GET", "/api/v1/settings/model_registry", .fn = bff_api_settings_registries),
        ROUTE("POST", "/api/v1/settings/model_registry", .fn = bff_api_settings_registry_create),
        ROUTE("GET", "/api/v1/settings/model_registry/{id}", .fn = bff_api_settings_registry),
        ROUTE("PATCH", "/api/v1/settings/model_registry/{id}",
              .fn = bff_api_settings_registry_update),
        ROUTE("DELETE", "/api/v1/settings/model_registry/{id}",
              .fn = bff_api_settings_registry_delete),
        ROUTE("GET", "/api/v1/settings/certificates", .fn = bff_api_settings_certificates),
        ROUTE("GET", "/api/v1/settings/role_bindings", .fn = bff_api_role_bindings),
        ROUTE("POST", "/api/v1/settings/role_bindings", .fn = bff_api_role_binding_create),
        ROUTE("PATCH", "/api/v1/settings/role_bindings/{name}", .fn = bff_api_role_binding_update),
        ROUTE("DELETE", "/api/v1/settings/role_bindings/{name}", .fn = bff_api_role_binding_delete),
        ROUTE("GET", "/api/v1/settings/groups", .fn = bff_api_groups),
        ROUTE("GET", MCS, .fn = bff_api_catalog_sources),
        ROUTE("POST", MCS, .fn = bff_api_catalog_source_create),
        ROUTE("GET", MCS "/{id}", .fn = bff_api_catalog_source),
        ROUTE("PATCH", MCS "/{id}", .fn = bff_api_catalog_source_update),
        ROUTE("DELETE", MCS "/{id}", .fn = bff_api_catalog_source_delete),
        ROUTE("POST", "/api/v1/settings/model_catalog/source_preview",
              .fn = bff_api_catalog_source_preview),
        ROUTE("GET", MR "/model_transfer_jobs", .fn = bff_api_transfer_jobs),
        ROUTE("POST", MR "/model_transfer_jobs", .fn = bff_api_transfer_job_create),
        ROUTE("GET", MR "/model_transfer_jobs/{name}", .fn = bff_api_transfer_job),
        ROUTE("PATCH", MR "/model_transfer_jobs/{name}", .fn = bff_api_transfer_job_update),
        ROUTE("DELETE", MR "/model_transfer_jobs/{name}", .fn = bff_api_transfer_job_delete),
        ROUTE("GET", MR "/model_transfer_jobs/{name}/events", .fn = bff_api_transfer_job_events),
        ROUTE("GET", MR "/registered_models", .path = "/registered_models", .query = Q_LIST,
              .flags = F_LIST),
        ROUTE("POST", MR "/registered_models", .path = "/registered_models", .query = Q_NONE),
        ROUTE("GET", MR "/registered_models/{id}", .path = "/registered_models/{id}",
              .query = Q_NONE),
        ROUTE("PATCH", MR "/registered_models/{id}", .path = "/registered_models/{id}",
              .query = Q_NONE, .flags = F_GUARD_MODEL),
        ROUTE("GET", MR "/registered_models/{id}/versions",
              .path = "/registered_models/{id}/versions", .query = Q_VERSIONS, .flags = F_LIST),
        ROUTE("POST", MR "/registered_models/{id}/versions",
              .path = "/registered_models/{id}/versions", .query = Q_NONE),
        ROUTE("GET", MR "/model_versions/{id}", .path = "/model_versions/{id}", .query = Q_NONE),
        ROUTE("PATCH", MR "/model_versions/{id}", .path = "/model_versions/{id}", .query = Q_NONE,
              .flags = F_GUARD_VERSION),
        ROUTE("GET", MR "/model_versions/{id}/artifacts", .path = "/model_versions/{id}/artifacts",
              .query = Q_LIST, .flags = F_LIST),
        ROUTE("POST", MR "/model_versions/{id}/artifacts", .path = "/model_versions/{id}/artifacts",
              .query = Q_NONE),
        ROUTE("PATCH", MR "/model_artifact/{id}", .path = "/model_artifacts/{id}", .query = Q_NONE),
        ROUTE("GET", MR "/inference_services", .path = "/inference_services", .query = Q_LIST,
              .flags = F_LIST),
        ROUTE("GET", MC "/sources", .up = UP_CATALOG, .path = CAT "/sources", .query = Q_SOURCES),
        ROUTE("GET", MC "/models", .up = UP_CATALOG, .path = CAT "/models",
              .query = Q_CATALOG_MODELS),
        ROUTE("GET", MC "/models/filter_options", .up = UP_CATALOG,
              .path = CAT "/models/filter_options", .query = Q_NONE),
        ROUTE("GET", MC "/labels", .up = UP_CATALOG, .path = CAT "/labels", .query = Q_SOURCES),
        ROUTE("GET", MC "/sources/{sid}/models/{name+}", .up = UP_CATALOG,
              .path = CAT "/sources/{sid}/models/{name}", .query = Q_NONE),
        ROUTE("GET", MC "/sources/{sid}/artifacts/{name+}", .up = UP_CATALOG,
              .path = CAT "/sources/{sid}/models/{name}/artifacts", .query = Q_ARTIFACTS),
        ROUTE("GET", MC "/sources/{sid}/performance_artifacts/{name+}", .up = UP_CATALOG,
              .path = CAT "/sources/{sid}/models/{name}/artifacts/performance", .query = Q_PERF),
        ROUTE("GET", MCPC "/mcp_servers", .up = UP_CATALOG, .path = MCP "/mcp_servers",
              .query = Q_MCP_SERVERS),
        ROUTE("GET", MCPC "/mcp_servers_filter_options", .up = UP_CATALOG,
              .path = MCP "/mcp_servers/filter_options", .query = Q_NONE),
        ROUTE("GET", MCPC "/mcp_servers/{sid}", .up = UP_CATALOG, .path = MCP "/mcp_servers/{sid}",
              .query = Q_MCP_SERVER),
        ROUTE("GET", MCPC "/mcp_servers/{sid}/tools", .up = UP_CATALOG,
              .path = MCP "/mcp_servers/{sid}/tools", .query = Q_MCP_TOOLS),
        ROUTE("GET", "/api/v1/namespaces/{ns}/inferenceservices", .fn = bff_api_isvc_list),
        ROUTE("GET", "/api/v1/namespaces/{ns}/inferenceservices/{name}", .fn = bff_api_isvc_get),
        ROUTE("GET", "/api/v1/namespaces/{ns}/inferenceservices/{name}/trainedmodels",
              .fn = bff_api_trainedmodels),
        ROUTE("GET", "/api/v1/namespaces/{ns}/events", .fn = bff_api_events),
        ROUTE("GET", "/api/v1/namespaces/{ns}/inferenceservices/{name}/events",
              .fn = bff_api_isvc_events),
        ROUTE("POST", "/api/v1/namespaces/{ns}/trainedmodels", .fn = bff_api_deploy),
        ROUTE("GET", "/api/v1/namespaces/{ns}/deploy_targets", .fn = bff_api_deploy_targets),
        ROUTE("GET", "/api/v1/deployments", .fn = bff_api_deployments),
};

/* ---- the front ---- */

static const struct sockaddr *peer_of(const struct http_req *req)
{
        return http_req_client_address(req);
}

static int handle_api(struct ui_server *s, struct http_req *req, struct http_resp *resp)
{
        struct ui_identity id = { 0 };
        struct call c = { .s = s, .id = &id, .req = req, .resp = resp };
        const struct api_route *rt;
        char msg[512];
        int r;

        r = http_route_match(api_routes, ELEMENTSOF(api_routes), req->method, req->path, req);
        if (r == -ENOMEM)
                return r;
        if (r == -EOPNOTSUPP)
                return bff_reply_error(resp, 405, "ui", "%s is not allowed on %s", req->method,
                                       req->path);
        if (r < 0)
                return bff_reply_error(resp, r == -EINVAL ? 400 : 404, "ui", "no API route %s",
                                       req->path);
        rt = req->route_data;

        r = ui_auth_decide(&s->auth,
                           &(struct ui_auth_input){
                                   .peer = peer_of(req),
                                   .user = http_req_header(req, s->auth.user_header),
                                   .groups = s->auth.groups_header
                                                     ? http_req_header(req, s->auth.groups_header)
                                                     : NULL,
                                   .proxy_secret = http_req_header(req, "X-Proxy-Secret"),
                                   .authorization = http_req_header(req, "Authorization"),
                           },
                           &id, msg, sizeof(msg));
        if (r == -ENOMEM)
                return r;
        if (r < 0) {
                r = bff_reply_error(resp, r == -EACCES ? 401 : 400, "ui", "%s", msg);
                if (r >= 0 && resp->status == 401)
                        r = http_resp_add_header(resp, "WWW-Authenticate", "Bearer");
                goto out;
        }
        if (ui_method_writes(req->method)) {
                unsigned status = 0;
                const char *why;

                if (!ui_csrf_valid(s->csrf_key, &id, http_req_header(req, "X-CSRF-Token"))) {
                        r = bff_reply_error(
                                resp, 403, "ui",
                                "missing or invalid X-CSRF-Token header (get one from GET "
                                "/api/v1/user)");
                        goto out;
                }
                why = ui_write_refusal(http_req_header(req, "Content-Type"), req->body.len > 0,
                                       http_req_header(req, "Origin"), http_req_header(req, "Host"),
                                       &status);
                if (why) {
                        r = bff_reply_error(resp, status, "ui", "%s", why);
                        goto out;
                }
        }
        r = rt->fn ? rt->fn(&c) : bff_forward(&c, rt);
out:
        ui_identity_done(&id);
        http_req_params_release(req);
        return r;
}

static bool accepts_gzip(const struct http_req *req)
{
        const char *ae = http_req_header(req, "Accept-Encoding");

        return ae && strcasestr(ae, "gzip");
}

static int handle_static(struct ui_server *s, struct http_req *req, struct http_resp *resp)
{
        AUTOFREE char *decoded = NULL;
        char rel[UI_STATIC_PATH_MAX + 1];
        int r;

        if (!streq(req->method, "GET") && !streq(req->method, "HEAD")) {
                http_resp_set_text(resp, 405, "text/plain; charset=utf-8", "method not allowed\n");
                return http_resp_add_header(resp, "Allow", "GET, HEAD");
        }
        if (!ui_static_has_index(s->st)) {
                http_resp_set_text(resp, 503, "text/html; charset=utf-8", NOT_BUILT_PAGE);
                return http_resp_add_header(resp, "Cache-Control", "no-cache");
        }
        r = percent_decode(req->path, strlen(req->path), &decoded);
        if (r == -ENOMEM)
                return r;
        if (r < 0 || ui_static_path(decoded, rel, sizeof(rel)) < 0) {
                http_resp_set_text(resp, 404, "text/plain; charset=utf-8", "not found\n");
                return 0;
        }
        r = ui_static_serve(s->st, rel, accepts_gzip(req), resp);
        if (r == -ENOENT && ui_spa_fallback(rel))
                r = ui_static_serve(s->st, "index.html", accepts_gzip(req), resp);
        if (r == -ENOENT || r == -EISDIR) {
                http_resp_set_text(resp, 404, "text/plain; charset=utf-8", "not found\n");
                return 0;
        }
        if (r == -EFBIG) {
                http_resp_set_text(resp, 500, "text/plain; charset=utf-8", "file too large\n");
                return 0;
        }
        return r;
}

/* ETag and 304 for JSON GET answers of the API. */
static int api_caching(const struct http_req *req, struct http_resp *resp)
{
        char etag[UI_ETAG_SIZE];

        if (http_resp_add_header(resp, "Cache-Control", "no-cache, private") < 0)
                return -ENOMEM;
        if (!streq(req->method, "GET") || resp->status != 200)
                return 0;
        ui_etag(buf_str(&resp->body), resp->body.len, etag);
        if (ui_etag_match(http_req_header(req, "If-None-Match"), etag)) {
                buf_reset(&resp->body);
                resp->status = 304;
        }
        return http_resp_add_header(resp, "ETag", etag);
}

static int security_headers(struct http_resp *resp)
{
        if (http_resp_add_header(resp, "Content-Security-Policy", CSP) < 0 ||
            http_resp_add_header(resp, "X-Content-Type-Options", "nosniff") < 0 ||
            http_resp_add_header(resp, "X-Frame-Options", "DENY") < 0 ||
            http_resp_add_header(resp, "Referrer-Policy", "no-referrer") < 0)
                return -ENOMEM;
        return 0;
}

int ui_server_handle(void *userdata, struct http_req *req, struct http_resp *resp)
{
        struct ui_server *s = userdata;
        int r;

        if (streq(req->path, "/healthcheck")) {
                r = 0;
                http_resp_set_json(resp, 200,
                                   json_pack("{s:s,s:{s:s}}", "status", "available", "system_info",
                                             "version", MODELPLANE_UI_VERSION));
        } else if (streq(req->path, "/api") || strneq(req->path, "/api/", 5)) {
                r = handle_api(s, req, resp);
                if (r >= 0)
                        r = api_caching(req, resp);
        } else
                r = handle_static(s, req, resp);
        if (r < 0) {
                log_warn_errno(r, "ui: %s %s failed", req->method, req->path);
                r = bff_reply_error(resp, 500, "ui", "internal error: %s", ui_errno_text(r));
                if (r < 0)
                        return r;
        }
        return security_headers(resp);
}

/* ---- construction ---- */

int ui_access_service(const char *explicit, const char *url, const char *own_ns, const char *def,
                      struct ui_service_ref *ret)
{
        if (explicit)
                return ui_service_ref_parse(explicit, ret);
        if (ui_service_ref_from_url(url, own_ns, ret) >= 0)
                return 0;
        return ui_service_ref_parse(def, ret);
}

static int kube_clients(struct ui_server *s, const struct kube_config *cfg)
{
        /* The passthrough client has the cluster's address and CA only: no credentials. */
        struct kube_config bare = {
                .server = cfg->server,
                .ca_pem = cfg->ca_pem,
                .namespace = cfg->namespace,
                .source = cfg->source,
                .insecure_skip_tls_verify = cfg->insecure_skip_tls_verify,
        };
        struct kube_client_options ko = { .user_agent = "modelplane-ui/" MODELPLANE_UI_VERSION };
        int r;

        r = kube_client_new(cfg, &ko, &s->kube_own);
        if (r < 0)
                return r;
        r = kube_client_new(&bare, &ko, &s->kube_token);
        if (r < 0)
                return r;
        s->kube_server = strdup(cfg->server);
        return s->kube_server ? 0 : -ENOMEM;
}

/* The configured registry, as the routes see it: -EINVAL when its name or URL is too long. */
static int default_registry(struct ui_server *s, const struct ui_config *cfg)
{
        struct ui_registry *d = &s->default_reg;
        const char *ns = cfg->registry_namespace ? cfg->registry_namespace
                                                 : s->access_svc[UP_REGISTRY].ns;
        const char *url = s->registry_url ? s->registry_url : "";

        if (strlen(s->registry_name) >= sizeof(d->name) || strlen(url) >= sizeof(d->url) ||
            strlen(ns) >= sizeof(s->registry_ns))
                return -EINVAL;
        memcpy(d->name, s->registry_name, strlen(s->registry_name) + 1);
        memcpy(d->url, url, strlen(url) + 1);
        memcpy(s->registry_ns, ns, strlen(ns) + 1);
        d->svc = s->access_svc[UP_REGISTRY];
        d->https = strncasecmp(url, "https:", 6) == 0;
        d->display_name = "Model registry";
        d->description = "modelplane registry";
        s->registry_external = cfg->registry_external;
        return 0;
}

static int dup_opt(const char *in, char **out)
{
        if (!in)
                return 0;
        *out = strdup(in);
        return *out ? 0 : -ENOMEM;
}

int ui_server_new(const struct ui_config *cfg, struct ui_server **ret)
{
        CLEANUP(ui_server_freep) struct ui_server *s = NULL;
        const char *own_ns;
        int r;

        s = calloc(1, sizeof(*s));
        if (!s)
                return -ENOMEM;
        for (size_t i = 0; i < ELEMENTSOF(s->up); i++) {
                (void)pthread_mutex_init(&s->up[i].lock, NULL);
                s->up[i].destroy = mr_destroy;
        }
        (void)pthread_mutex_init(&s->kown.lock, NULL);
        (void)pthread_mutex_init(&s->access_lock, NULL);
        (void)pthread_mutex_init(&s->ktoken.lock, NULL);
        s->kown.destroy = s->ktoken.destroy = kube_destroy;
        s->auth = cfg->auth;
        memcpy(s->csrf_key, cfg->csrf_key, sizeof(s->csrf_key));
        s->timeout_ms = cfg->upstream_timeout_ms;
        if (dup_opt(cfg->registry_url, &s->registry_url) < 0 ||
            dup_opt(cfg->registry_name ? cfg->registry_name : "modelplane", &s->registry_name) <
                    0 ||
            dup_opt(cfg->catalog_url, &s->catalog_url) < 0 ||
            dup_opt(cfg->ca_file, &s->ca_file) < 0 ||
            dup_opt(cfg->transfer_image ? cfg->transfer_image : UI_TRANSFER_IMAGE_DEFAULT,
                    &s->transfer_image) < 0)
                return -ENOMEM;
        s->skip_access_review = cfg->skip_access_review;
        own_ns = cfg->kube ? cfg->kube->namespace : NULL;
        r = ui_access_service(cfg->registry_service, cfg->registry_url, own_ns,
                              UI_REGISTRY_SERVICE_DEFAULT, &s->access_svc[UP_REGISTRY]);
        if (r < 0)
                return r;
        r = ui_access_service(cfg->catalog_service, cfg->catalog_url, own_ns,
                              UI_CATALOG_SERVICE_DEFAULT, &s->access_svc[UP_CATALOG]);
        if (r < 0)
                return r;
        r = default_registry(s, cfg);
        if (r < 0)
                return r;
        r = ui_access_cache_new(UI_ACCESS_CACHE_SIZE, UI_ACCESS_TTL_ALLOW, UI_ACCESS_TTL_DENY,
                                &s->access_cache);
        if (r < 0)
                return r;
        if (cfg->static_dir) {
                r = ui_static_open(cfg->static_dir, &s->st);
                if (r < 0)
                        return r;
        }
        if (cfg->kube) {
                r = kube_clients(s, cfg->kube);
                if (r < 0)
                        return r;
        }
        *ret = TAKE_PTR(s);
        return 0;
}

struct ui_server *ui_server_free(struct ui_server *s)
{
        if (!s)
                return NULL;
        for (size_t i = 0; i < ELEMENTSOF(s->up); i++)
                pool_done(&s->up[i]);
        pool_done(&s->kown);
        pool_done(&s->ktoken);
        (void)kube_client_free(s->kube_own);
        (void)kube_client_free(s->kube_token);
        (void)ui_static_free(s->st);
        (void)ui_access_cache_free(s->access_cache);
        (void)pthread_mutex_destroy(&s->access_lock);
        free(s->registry_url);
        free(s->registry_name);
        free(s->catalog_url);
        free(s->ca_file);
        free(s->transfer_image);
        free(s->kube_server);
        explicit_bzero(s->csrf_key, sizeof(s->csrf_key));
        free(s);
        return NULL;
}

bool ui_server_has_frontend(const struct ui_server *s)
{
        return ui_static_has_index(s->st);
}
