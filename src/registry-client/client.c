/* SPDX-License-Identifier: Apache-2.0 */
#include "registry-client/client.h"

#include <curl/curl.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/buf.h"

#define MR_API_PATH  "/api/model_registry/v1alpha3"
#define MR_REPLY_MAX ((size_t)64 * 1024 * 1024)
#define MR_URL_MAX   8192

struct mr_client {
        CURL *curl;
        char *base_url;
        char *api_path;
        char *auth_header;
        char *ca_file;
        char *ca_path;
        long timeout_ms;
        bool insecure;
        const struct mr_transport *transport; /* NULL: curl */
};

/* The kind of an answer's status (0: no answer, the registry is unavailable). */
static enum error_kind status_kind(long status)
{
        switch (status) {
        case 0:
                return ERROR_UNAVAILABLE;
        case 404:
                return ERROR_NOT_FOUND;
        case 409:
                return ERROR_CONFLICT;
        case 400:
        case 422:
                return ERROR_INVALID;
        default:
                return ERROR_INTERNAL;
        }
}

static void set_err(struct error_detail *e, long status, int r, const char *msg)
{
        if (!e)
                return;
        e->status = (int)status;
        (void)error_detail_set(e, status_kind(status), r, "%s", msg ? msg : "");
}

int mr_client_new(const struct mr_client_config *cfg, struct mr_client **ret)
{
        struct mr_client *c;
        size_t n;

        if (!cfg || !cfg->base_url || !*cfg->base_url)
                return -EINVAL;
        c = calloc(1, sizeof(*c));
        if (!c)
                return -ENOMEM;
        c->base_url = strdup(cfg->base_url);
        c->api_path = strdup(cfg->api_path ? cfg->api_path : MR_API_PATH);
        c->transport = cfg->transport;
        c->curl = c->transport ? NULL : curl_easy_init();
        c->timeout_ms = cfg->timeout_ms > 0 ? cfg->timeout_ms : 30000;
        c->insecure = cfg->insecure_skip_verify;
        if (cfg->ca_file)
                c->ca_file = strdup(cfg->ca_file);
        if (cfg->ca_path)
                c->ca_path = strdup(cfg->ca_path);
        if (cfg->token && *cfg->token) {
                struct buf b = BUF_INIT((size_t)64 * 1024);
                if (buf_printf(&b, "Authorization: Bearer %s", cfg->token) >= 0)
                        c->auth_header = buf_take(&b, NULL);
                buf_release(&b);
        }
        if (!c->base_url || !c->api_path || (!c->curl && !c->transport) ||
            (cfg->ca_file && !c->ca_file) || (cfg->ca_path && !c->ca_path) ||
            (cfg->token && *cfg->token && !c->auth_header)) {
                mr_client_free(c);
                return -ENOMEM;
        }
        n = strlen(c->base_url);
        while (n > 0 && c->base_url[n - 1] == '/')
                c->base_url[--n] = 0;
        *ret = c;
        return 0;
}

struct mr_client *mr_client_free(struct mr_client *c)
{
        if (!c)
                return NULL;
        if (c->curl)
                curl_easy_cleanup(c->curl);
        free(c->base_url);
        free(c->api_path);
        free(c->auth_header);
        free(c->ca_file);
        free(c->ca_path);
        free(c);
        return NULL;
}

static int status_errno(long status)
{
        switch (status) {
        case 404:
                return -ENOENT;
        case 409:
                return -EEXIST;
        case 400:
        case 422:
                return -EINVAL;
        default:
                return -EIO;
        }
}

static int curl_errno(CURLcode cc)
{
        switch (cc) {
        case CURLE_COULDNT_CONNECT:
                return -ECONNREFUSED;
        case CURLE_OPERATION_TIMEDOUT:
                return -ETIMEDOUT;
        case CURLE_COULDNT_RESOLVE_HOST:
                return -EHOSTUNREACH;
        case CURLE_OUT_OF_MEMORY:
                return -ENOMEM;
        case CURLE_WRITE_ERROR:
                return -E2BIG;
        default:
                return -EIO;
        }
}

/* libcurl's detail (e.g. "SSL certificate problem: unable to get local issuer certificate")
 * when it has one; certificate problems say so first. */
static void transport_err(struct error_detail *e, CURLcode cc, const char *detail)
{
        const char *msg = detail[0] ? detail : curl_easy_strerror(cc);

        if (!e)
                return;
        e->status = 0;
        if (cc == CURLE_PEER_FAILED_VERIFICATION || cc == CURLE_SSL_CACERT_BADFILE)
                (void)error_detail_set(e, ERROR_UNAVAILABLE, curl_errno(cc),
                                       "TLS certificate verification failed: %s", msg);
        else
                (void)error_detail_set(e, ERROR_UNAVAILABLE, curl_errno(cc), "%s", msg);
}

static void slist_freep(struct curl_slist **l)
{
        curl_slist_free_all(*l);
}

/* Appends line to *l; false (and *l unchanged) when out of memory. */
static bool slist_add(struct curl_slist **l, const char *line)
{
        struct curl_slist *t = curl_slist_append(*l, line);

        if (!t)
                return false;
        *l = t;
        return true;
}

/* The request headers: JSON answers, the body's type, the bearer token, no "Expect:
 * 100-continue". */
static int call_headers(const struct mr_client *c, const char *content_type,
                        struct curl_slist **ret)
{
        CLEANUP(slist_freep) struct curl_slist *h = NULL;
        char ct[256];

        if (content_type &&
            snprintf(ct, sizeof(ct), "Content-Type: %s", content_type) >= (int)sizeof(ct))
                return -EINVAL;
        if (!slist_add(&h, "Accept: application/json") || (content_type && !slist_add(&h, ct)) ||
            (c->auth_header && !slist_add(&h, c->auth_header)) || !slist_add(&h, "Expect:"))
                return -ENOMEM;
        *ret = TAKE_PTR(h);
        return 0;
}

/* Resets the handle for one request; reply and detail (CURL_ERROR_SIZE) are borrowed. */
static void call_setup(struct mr_client *c, const char *url, const char *method,
                       const struct curl_slist *h, const char *payload, size_t payload_len,
                       struct buf *reply, char *detail)
{
        curl_easy_reset(c->curl);
        curl_easy_setopt(c->curl, CURLOPT_URL, url);
        curl_easy_setopt(c->curl, CURLOPT_CUSTOMREQUEST, method);
        curl_easy_setopt(c->curl, CURLOPT_HTTPHEADER, h);
        curl_easy_setopt(c->curl, CURLOPT_WRITEFUNCTION, buf_write_cb);
        curl_easy_setopt(c->curl, CURLOPT_WRITEDATA, reply);
        curl_easy_setopt(c->curl, CURLOPT_TIMEOUT_MS, c->timeout_ms);
        curl_easy_setopt(c->curl, CURLOPT_NOSIGNAL, 1L);
        curl_easy_setopt(c->curl, CURLOPT_PROTOCOLS_STR, "http,https");
        curl_easy_setopt(c->curl, CURLOPT_USERAGENT, "modelplane-registry-client/1");
        curl_easy_setopt(c->curl, CURLOPT_ERRORBUFFER, detail);
        if (c->ca_file)
                curl_easy_setopt(c->curl, CURLOPT_CAINFO, c->ca_file);
        if (c->ca_path)
                curl_easy_setopt(c->curl, CURLOPT_CAPATH, c->ca_path);
        if (c->insecure) {
                curl_easy_setopt(c->curl, CURLOPT_SSL_VERIFYPEER, 0L);
                curl_easy_setopt(c->curl, CURLOPT_SSL_VERIFYHOST, 0L);
        }
        if (payload) {
                curl_easy_setopt(c->curl, CURLOPT_POSTFIELDS, payload);
                curl_easy_setopt(c->curl, CURLOPT_POSTFIELDSIZE, (long)payload_len);
        }
}

/* The outcome of an answer with HTTP status: the status, or the errno of an error answer. */
static int call_answer(long status, const struct buf *reply, json_t **ret,
                       struct error_detail *reterr)
{
        if (status < 200 || status > 299) {
                json_t *j = json_loads(buf_str(reply), 0, NULL);
                const char *m = json_string_value(json_object_get(j, "message"));

                set_err(reterr, status, status_errno(status), m ? m : buf_str(reply));
                json_decref(j);
                return status_errno(status);
        }
        if (ret) {
                json_t *j = json_loads(buf_str(reply), JSON_DECODE_ANY, NULL);

                if (!j) {
                        set_err(reterr, status, -EBADMSG, "reply body is not JSON");
                        return -EBADMSG;
                }
                *ret = j;
        }
        set_err(reterr, status, 0, "");
        return (int)status;
}

int mr_client_call_raw(struct mr_client *c, const char *method, const char *path_and_query,
                       const char *content_type, const char *body, size_t body_len, json_t **ret,
                       struct error_detail *reterr)
{
        struct buf reply CLEANUP(buf_releasep) = BUF_INIT(MR_REPLY_MAX);
        CLEANUP(slist_freep) struct curl_slist *h = NULL;
        char url[MR_URL_MAX], detail[CURL_ERROR_SIZE] = "";
        long status = 0;
        CURLcode cc;
        int r;

        if (snprintf(url, sizeof(url), "%s%s%s", c->base_url, c->api_path, path_and_query) >=
            (int)sizeof(url))
                return -ENAMETOOLONG;
        if (c->transport) {
                struct error_detail t = { 0 };

                r = c->transport->ops->round_trip(c->transport->userdata, method, url, body,
                                                  &status, &reply, &t);
                if (r < 0) {
                        set_err(reterr, 0, r, t.message);
                        return r;
                }
                return call_answer(status, &reply, ret, reterr);
        }
        r = call_headers(c, body ? content_type : NULL, &h);
        if (r < 0)
                return r;

        call_setup(c, url, method, h, body, body_len, &reply, detail);
        cc = curl_easy_perform(c->curl);
        curl_easy_setopt(c->curl, CURLOPT_ERRORBUFFER, NULL);
        if (cc != CURLE_OK) {
                transport_err(reterr, cc, detail);
                return curl_errno(cc);
        }
        curl_easy_getinfo(c->curl, CURLINFO_RESPONSE_CODE, &status);
        return call_answer(status, &reply, ret, reterr);
}

int mr_client_call(struct mr_client *c, const char *method, const char *path_and_query,
                   json_t *body, json_t **ret, struct error_detail *reterr)
{
        AUTOFREE char *payload = NULL;

        if (body) {
                payload = json_dumps(body, JSON_COMPACT | JSON_SORT_KEYS);
                if (!payload)
                        return -ENOMEM;
        }
        return mr_client_call_raw(c, method, path_and_query, "application/json", payload,
                                  payload ? strlen(payload) : 0, ret, reterr);
}

/* Appends key=value (form-encoded) to a query string buffer. */
static int add_query(struct mr_client *c, struct buf *b, const char *key, const char *value)
{
        char *e;
        int r;

        if (!value)
                return 0;
        e = curl_easy_escape(c->curl, value, 0);
        if (!e)
                return -ENOMEM;
        r = buf_printf(b, "%c%s=%s", b->len == 0 || !strchr(buf_str(b), '?') ? '?' : '&', key, e);
        curl_free(e);
        return r;
}

static int find(struct mr_client *c, const char *path, const char *name, const char *parent,
                json_t **ret, struct error_detail *reterr)
{
        struct buf b = BUF_INIT(MR_URL_MAX);
        int r;

        r = buf_puts(&b, path);
        if (r >= 0)
                r = add_query(c, &b, "name", name);
        if (r >= 0)
                r = add_query(c, &b, "parentResourceId", parent);
        if (r >= 0)
                r = mr_client_call(c, "GET", buf_str(&b), NULL, ret, reterr);
        buf_release(&b);
        return r;
}

int mr_find_registered_model(struct mr_client *c, const char *name, json_t **ret,
                             struct error_detail *reterr)
{
        return find(c, "/registered_model", name, NULL, ret, reterr);
}

int mr_find_model_version(struct mr_client *c, const char *name, const char *registered_model_id,
                          json_t **ret, struct error_detail *reterr)
{
        return find(c, "/model_version", name, registered_model_id, ret, reterr);
}

int mr_get_under(struct mr_client *c, const char *prefix, const char *id, const char *suffix,
                 const char *query, json_t **ret, struct error_detail *reterr)
{
        char *e = curl_easy_escape(c->curl, id, 0);
        struct buf b = BUF_INIT(MR_URL_MAX);
        int r;

        if (!e)
                return -ENOMEM;
        r = buf_printf(&b, "%s/%s%s%s%s", prefix, e, suffix ? suffix : "", query ? "?" : "",
                       query ? query : "");
        curl_free(e);
        if (r >= 0)
                r = mr_client_call(c, "GET", buf_str(&b), NULL, ret, reterr);
        buf_release(&b);
        return r;
}

int mr_find_serving_environment(struct mr_client *c, const char *name, json_t **ret,
                                struct error_detail *reterr)
{
        return find(c, "/serving_environment", name, NULL, ret, reterr);
}

int mr_create_serving_environment(struct mr_client *c, const char *name, json_t **ret,
                                  struct error_detail *reterr)
{
        json_auto_t *body = json_pack("{s:s}", "name", name);

        if (!body)
                return -ENOMEM;
        return mr_client_call(c, "POST", "/serving_environments", body, ret, reterr);
}

static int id_path(struct mr_client *c, const char *prefix, const char *id, char *buf, size_t len)
{
        char *e = curl_easy_escape(c->curl, id, 0);
        int n;

        if (!e)
                return -ENOMEM;
        n = snprintf(buf, len, "%s/%s", prefix, e);
        curl_free(e);
        return n >= (int)len ? -ENAMETOOLONG : 0;
}

int mr_get_inference_service(struct mr_client *c, const char *id, json_t **ret,
                             struct error_detail *reterr)
{
        char path[1024];
        int r = id_path(c, "/inference_services", id, path, sizeof(path));

        return r < 0 ? r : mr_client_call(c, "GET", path, NULL, ret, reterr);
}

int mr_find_inference_service(struct mr_client *c, const char *name,
                              const char *serving_environment_id, json_t **ret,
                              struct error_detail *reterr)
{
        return find(c, "/inference_service", name, serving_environment_id, ret, reterr);
}

int mr_create_inference_service(struct mr_client *c, const struct mr_inference_service_create *in,
                                json_t **ret, struct error_detail *reterr)
{
        json_auto_t *body = json_pack("{s:s,s:s,s:s,s:s}", "name", in->name, "registeredModelId",
                                      in->registered_model_id, "servingEnvironmentId",
                                      in->serving_environment_id, "desiredState",
                                      in->desired_state ? in->desired_state : "DEPLOYED");

        if (!body)
                return -ENOMEM;
        if (in->model_version_id &&
            json_object_set_new(body, "modelVersionId", json_string(in->model_version_id)) < 0)
                return -ENOMEM;
        if (in->runtime && json_object_set_new(body, "runtime", json_string(in->runtime)) < 0)
                return -ENOMEM;
        if (in->url || in->custom_properties) {
                json_t *props = in->custom_properties ? json_deep_copy(in->custom_properties)
                                                      : json_object();

                if (json_object_set_new(body, "customProperties", props) < 0)
                        return -ENOMEM;
                if (in->url && json_object_set_new(props, "url",
                                                   json_pack("{s:s,s:s}", "metadataType",
                                                             "MetadataStringValue", "string_value",
                                                             in->url)) < 0)
                        return -ENOMEM;
        }
        return mr_client_call(c, "POST", "/inference_services", body, ret, reterr);
}

int mr_update_inference_service(struct mr_client *c, const char *id, json_t *update, json_t **ret,
                                struct error_detail *reterr)
{
        char path[1024];
        int r = id_path(c, "/inference_services", id, path, sizeof(path));

        return r < 0 ? r : mr_client_call(c, "PATCH", path, update, ret, reterr);
}
