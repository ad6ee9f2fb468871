/* SPDX-License-Identifier: Apache-2.0 */
#include "kube/client.h"

#include <stdio.h>
#include <string.h>

#include <curl/curl.h>
#include <jansson.h>

#include "kube/transport.h"
#include "util/buf.h"
#include "util/string-util.h"

/*
 * The client's lifecycle, identity, paths and verbs. The request engine under them is
 * transport.c, the watch stream watch-stream.c (docs/ARCHITECTURE.md).
 */

#define KUBE_DEFAULT_TIMEOUT (30 * USEC_PER_SEC)

static void shared_unref(struct kube_shared *sh)
{
        if (!sh || atomic_fetch_sub(&sh->refs, 1) != 1)
                return;
        if (sh->share)
                (void)curl_share_cleanup(sh->share);
        for (size_t i = 0; i < ELEMENTSOF(sh->share_locks); i++)
                (void)pthread_mutex_destroy(&sh->share_locks[i]);
        (void)pthread_mutex_destroy(&sh->limiter_lock);
        (void)pthread_mutex_destroy(&sh->token_lock);
        free(sh->server);
        free(sh->ca_pem);
        free(sh->client_cert_pem);
        kube__wipe_free(sh->client_key_pem);
        free(sh->token_file);
        free(sh->namespace);
        free(sh->user_agent);
        kube__wipe_free(sh->token);
        free(sh);
}

static void share_lock(CURL *h, curl_lock_data data, curl_lock_access access, void *userdata)
{
        struct kube_shared *sh = userdata;

        if (data >= 0 && data < CURL_LOCK_DATA_LAST)
                (void)pthread_mutex_lock(&sh->share_locks[data]);
}

static void share_unlock(CURL *h, curl_lock_data data, void *userdata)
{
        struct kube_shared *sh = userdata;

        if (data >= 0 && data < CURL_LOCK_DATA_LAST)
                (void)pthread_mutex_unlock(&sh->share_locks[data]);
}

/* Copies the configuration strings and the options into sh. */
static int shared_copy_config(struct kube_shared *sh, const struct kube_config *cfg,
                              const struct kube_client_options *opts)
{
        const char *ua = opts && opts->user_agent ? opts->user_agent : KUBE_USER_AGENT;

        if (strdup_opt(cfg->server, &sh->server) < 0 || strdup_opt(cfg->ca_pem, &sh->ca_pem) < 0 ||
            strdup_opt(cfg->client_cert_pem, &sh->client_cert_pem) < 0 ||
            strdup_opt(cfg->client_key_pem, &sh->client_key_pem) < 0 ||
            strdup_opt(cfg->token_file, &sh->token_file) < 0 ||
            strdup_opt(cfg->token, &sh->token) < 0 ||
            strdup_opt(cfg->namespace ? cfg->namespace : "default", &sh->namespace) < 0 ||
            strdup_opt(ua, &sh->user_agent) < 0)
                return -ENOMEM;

        sh->insecure = cfg->insecure_skip_tls_verify;
        if (!opts) {
                sh->timeout = KUBE_DEFAULT_TIMEOUT;
                sh->throttle_retries = KUBE_THROTTLE_RETRIES_DEFAULT;
                sh->throttle_wait_max = KUBE_THROTTLE_WAIT_MAX_DEFAULT;
                return 0;
        }
        sh->timeout = opts->request_timeout > 0 ? opts->request_timeout : KUBE_DEFAULT_TIMEOUT;
        sh->observer = opts->observer;
        sh->observer_userdata = opts->observer_userdata;
        sh->throttle_retries = opts->throttle_retries == 0  ? KUBE_THROTTLE_RETRIES_DEFAULT
                               : opts->throttle_retries < 0 ? 0
                                                            : (unsigned)opts->throttle_retries;
        sh->throttle_wait_max = opts->throttle_wait_max > 0 ? opts->throttle_wait_max
                                                            : KUBE_THROTTLE_WAIT_MAX_DEFAULT;
        sh->limited = opts->qps > 0;
        if (sh->limited)
                token_bucket_init(&sh->bucket, opts->qps, opts->burst, now_monotonic());
        return 0;
}

/*
 * The CURLSH: clones share DNS and TLS sessions (cheap resumed handshakes). Connections stay per
 * handle: each thread's handle keeps its own keep-alive connection, which avoids cross-thread
 * connection-cache sharing in libcurl.
 */
static int shared_setup_curlsh(struct kube_shared *sh)
{
        sh->share = curl_share_init();
        if (!sh->share)
                return -ENOMEM;
        if (curl_share_setopt(sh->share, CURLSHOPT_LOCKFUNC, share_lock) != CURLSHE_OK ||
            curl_share_setopt(sh->share, CURLSHOPT_UNLOCKFUNC, share_unlock) != CURLSHE_OK ||
            curl_share_setopt(sh->share, CURLSHOPT_USERDATA, sh) != CURLSHE_OK ||
            curl_share_setopt(sh->share, CURLSHOPT_SHARE, CURL_LOCK_DATA_DNS) != CURLSHE_OK ||
            curl_share_setopt(sh->share, CURLSHOPT_SHARE, CURL_LOCK_DATA_SSL_SESSION) != CURLSHE_OK)
                return -ENOMEM;
        return 0;
}

static int shared_new(const struct kube_config *cfg, const struct kube_client_options *opts,
                      struct kube_shared **ret)
{
        struct kube_shared *sh;
        int r;

        sh = calloc(1, sizeof(*sh));
        if (!sh)
                return -ENOMEM;
        atomic_init(&sh->refs, 1);
        for (size_t i = 0; i < ELEMENTSOF(sh->share_locks); i++)
                (void)pthread_mutex_init(&sh->share_locks[i], NULL);
        (void)pthread_mutex_init(&sh->limiter_lock, NULL);
        (void)pthread_mutex_init(&sh->token_lock, NULL);

        r = shared_copy_config(sh, cfg, opts);
        if (r >= 0)
                r = shared_setup_curlsh(sh);
        if (r < 0) {
                shared_unref(sh);
                return r;
        }
        *ret = sh;
        return 0;
}

static int client_new_shared(struct kube_shared *sh, struct kube_client **ret)
{
        struct kube_client *c;

        c = calloc(1, sizeof(*c));
        if (!c)
                return -ENOMEM;
        c->curl = curl_easy_init();
        if (!c->curl) {
                free(c);
                return -ENOMEM;
        }
        atomic_fetch_add(&sh->refs, 1);
        c->sh = sh;
        *ret = c;
        return 0;
}

int kube_client_new(const struct kube_config *cfg, const struct kube_client_options *opts,
                    struct kube_client **ret)
{
        struct kube_shared *sh = NULL;
        int r;

        if (!cfg || !cfg->server || !ret)
                return -EINVAL;
        if (opts && opts->qps < 0)
                return -EINVAL;

        r = shared_new(cfg, opts, &sh);
        if (r < 0)
                return r;
        r = client_new_shared(sh, ret);
        shared_unref(sh); /* the client holds its own reference now */
        return r;
}

int kube_client_dup(struct kube_client *c, struct kube_client **ret)
{
        if (!c || !ret)
                return -EINVAL;
        return client_new_shared(c->sh, ret);
}

int kube_client_dup_budget(struct kube_client *c, double qps, unsigned burst,
                           struct kube_client **ret)
{
        struct kube_client *n = NULL;
        int r;

        if (!c || !ret || qps < 0)
                return -EINVAL;
        r = client_new_shared(c->sh, &n);
        if (r < 0)
                return r;
        n->own_budget = true;
        n->own_limited = qps > 0;
        if (n->own_limited)
                token_bucket_init(&n->own_bucket, qps, burst > 0 ? burst : 1, now_monotonic());
        *ret = n;
        return 0;
}

struct kube_client *kube_client_free(struct kube_client *c)
{
        if (!c)
                return NULL;
        if (c->curl)
                curl_easy_cleanup(c->curl);
        curl_slist_free_all(c->impersonate);
        kube__wipe_free(c->bearer);
        shared_unref(c->sh);
        free(c);
        return NULL;
}

static bool header_value_ok(const char *s, size_t max)
{
        size_t n = 0;

        for (; s[n]; n++)
                if ((unsigned char)s[n] < 0x20 || s[n] == 0x7f || n >= max)
                        return false;
        return n > 0;
}

/* Appends "<prefix>: <value>" to *l (value checked: one header value, at most max bytes). */
static int slist_append_header(struct curl_slist **l, const char *prefix, const char *value,
                               size_t max)
{
        AUTOFREE char *line = NULL;
        struct curl_slist *t;

        if (!header_value_ok(value, max))
                return -EINVAL;
        if (asprintf(&line, "%s: %s", prefix, value) < 0) {
                line = NULL;
                return -ENOMEM;
        }
        t = curl_slist_append(*l, line);
        if (!t)
                return -ENOMEM;
        *l = t;
        return 0;
}

/* The Impersonate-User / Impersonate-Group lines of id (nothing without a user). */
static int impersonation_headers(const struct kube_identity *id, struct curl_slist **ret)
{
        CLEANUP(kube__slist_freep) struct curl_slist *l = NULL;
        int r;

        if (!id || !id->user) {
                *ret = NULL;
                return 0;
        }
        if (id->n_groups > KUBE_IDENTITY_GROUPS_MAX)
                return -EINVAL;
        r = slist_append_header(&l, "Impersonate-User", id->user, KUBE_IDENTITY_VALUE_MAX);
        for (size_t i = 0; r >= 0 && i < id->n_groups; i++)
                r = slist_append_header(&l, "Impersonate-Group", id->groups[i],
                                        KUBE_IDENTITY_VALUE_MAX);
        if (r < 0)
                return r;
        *ret = TAKE_PTR(l);
        return 0;
}

int kube_client_set_identity(struct kube_client *c, const struct kube_identity *id)
{
        CLEANUP(kube__slist_freep) struct curl_slist *l = NULL;
        AUTOFREE char *bearer = NULL;
        int r;

        if (!c)
                return -EINVAL;
        r = impersonation_headers(id, &l);
        if (r < 0)
                return r;
        if (id && id->bearer) {
                /* a client certificate would authenticate the connection as the server */
                if (c->sh->client_cert_pem)
                        return -EPERM;
                if (!header_value_ok(id->bearer, KUBE_IDENTITY_TOKEN_MAX))
                        return -EINVAL;
                bearer = strdup(id->bearer);
                if (!bearer)
                        return -ENOMEM;
        }
        curl_slist_free_all(c->impersonate);
        c->impersonate = TAKE_PTR(l);
        kube__wipe_free(c->bearer);
        c->bearer = TAKE_PTR(bearer);
        return 0;
}

const char *kube_client_namespace(const struct kube_client *c)
{
        return c ? c->sh->namespace : NULL;
}

const char *kube_client_server(const struct kube_client *c)
{
        return c ? c->sh->server : NULL;
}

/* ---- paths ---- */

static bool segment_ok(const char *s)
{
        if (!s || !*s || streq(s, ".") || streq(s, ".."))
                return false;
        for (const char *p = s; *p; p++) {
                unsigned char ch = (unsigned char)*p;

                if (ch <= 0x20 || ch >= 0x7f || ch == '/' || ch == '?' || ch == '#' || ch == '%' ||
                    ch == '\\')
                        return false;
        }
        return true;
}

/* Every part of a resource path is one safe segment; a subresource needs a name. */
static bool path_parts_ok(const struct gvr *r, const char *ns, const char *name,
                          const char *subresource)
{
        if (!segment_ok(r->version) || !segment_ok(r->resource))
                return false;
        if (r->group && r->group[0] != '\0' && !segment_ok(r->group))
                return false;
        if (ns && *ns && !segment_ok(ns))
                return false;
        if (name && !segment_ok(name))
                return false;
        return !subresource || (name && segment_ok(subresource));
}

int kube_resource_path(const struct gvr *r, const char *ns, const char *name,
                       const char *subresource, char *buf, size_t len)
{
        bool core;
        int n;

        if (!r || !buf || len == 0 || !path_parts_ok(r, ns, name, subresource))
                return -EINVAL;
        core = !r->group || r->group[0] == '\0';

        /* /api/v1 or /apis/<group>/<version>, [/namespaces/<ns>], /<resource>, [/<name>] */
        n = snprintf(buf, len, "%s%s/%s%s%s/%s%s%s", core ? "/api" : "/apis/", core ? "" : r->group,
                     r->version, ns && *ns ? "/namespaces/" : "", ns && *ns ? ns : "", r->resource,
                     name ? "/" : "", name ? name : "");
        if (n < 0 || (size_t)n >= len)
                return -ENOBUFS;
        if (subresource) {
                int m = snprintf(buf + n, len - (size_t)n, "/%s", subresource);

                if (m < 0 || (size_t)m >= len - (size_t)n)
                        return -ENOBUFS;
        }
        return 0;
}

/* ---- throttling policy (used by the request engine) ---- */

bool kube_throttle_is_retryable(int http_code, unsigned retry_after)
{
        /* API Priority and Fairness rejects with 429 and Retry-After; an overloaded or starting
         * server may answer 503 with Retry-After. Neither processed the request: safe to resend
         * whatever the method (client-go's checkWait does the same). */
        return http_code == 429 || (http_code == 503 && retry_after > 0);
}

usec_t kube_throttle_delay(unsigned retry_after, unsigned attempt, usec_t cap)
{
        usec_t backoff = KUBE_THROTTLE_BACKOFF_BASE << MIN(attempt, 16U);
        usec_t d = (usec_t)retry_after * USEC_PER_SEC;

        if (backoff > d)
                d = backoff;
        return MIN(d, cap);
}

void kube_client_throttle_stats(const struct kube_client *c, unsigned long *ret_throttled,
                                unsigned long *ret_exhausted)
{
        if (ret_throttled)
                *ret_throttled = atomic_load(&c->sh->throttled);
        if (ret_exhausted)
                *ret_exhausted = atomic_load(&c->sh->throttle_exhausted);
}

static int dump_body(const json_t *obj, char **ret)
{
        char *s;

        s = json_dumps(obj, JSON_COMPACT);
        if (!s)
                return -ENOMEM;
        *ret = s;
        return 0;
}

/* The URL of one named object; -EINVAL without a client or a name. */
static int object_url(struct kube_client *c, struct buf *url, const struct gvr *r, const char *ns,
                      const char *name)
{
        if (!c || !name)
                return -EINVAL;
        return kube__build_url(c, url, r, ns, name, NULL);
}

int kube_get(struct kube_client *c, const struct gvr *r, const char *ns, const char *name,
             json_t **ret_obj, struct kube_status *reterr)
{
        struct buf url CLEANUP(buf_releasep) = BUF_INIT(KUBE_URL_MAX);
        int k;

        k = object_url(c, &url, r, ns, name);
        if (k < 0)
                return k;
        return kube__perform(c, "GET", buf_str(&url), NULL, NULL, ret_obj, reterr);
}

int kube_list(struct kube_client *c, const struct gvr *r, const char *ns,
              const struct kube_list_options *opts, json_t **ret_list, struct kube_status *reterr)
{
        struct buf url CLEANUP(buf_releasep) = BUF_INIT(KUBE_URL_MAX);
        static const struct kube_list_options none = { 0 };
        int k;

        if (!c)
                return -EINVAL;
        if (!opts)
                opts = &none;
        k = kube__build_url(c, &url, r, ns, NULL, NULL);
        if (k >= 0)
                k = kube__query_add(c, &url, "labelSelector", opts->label_selector);
        if (k >= 0)
                k = kube__query_add(c, &url, "fieldSelector", opts->field_selector);
        if (k >= 0)
                k = kube__query_add_uint(c, &url, "limit", opts->limit);
        if (k >= 0 && opts->continue_token && *opts->continue_token)
                k = kube__query_add(c, &url, "continue", opts->continue_token);
        if (k >= 0)
                k = kube__query_add(c, &url, "resourceVersion", opts->resource_version);
        if (k >= 0)
                k = kube__query_add(c, &url, "resourceVersionMatch", opts->resource_version_match);
        if (k < 0)
                return k;
        return kube__perform(c, "GET", buf_str(&url), NULL, NULL, ret_list, reterr);
}

static int add_write_query(struct kube_client *c, struct buf *url,
                           const struct kube_write_options *opts)
{
        int k = 0;

        if (!opts)
                return 0;
        k = kube__query_add(c, url, "fieldManager", opts->field_manager);
        if (k >= 0 && opts->force)
                k = kube__query_add(c, url, "force", "true");
        if (k >= 0 && opts->dry_run)
                k = kube__query_add(c, url, "dryRun", "All");
        return k;
}

/* POST/PUT/PATCH of body to the resource URL with the write options' query. */
static int write_request(struct kube_client *c, const char *method, const struct gvr *r,
                         const char *ns, const char *name, const struct kube_write_options *opts,
                         const char *content_type, const json_t *obj, json_t **ret_obj,
                         struct kube_status *reterr)
{
        struct buf url CLEANUP(buf_releasep) = BUF_INIT(KUBE_URL_MAX);
        AUTOFREE char *body = NULL;
        int k;

        k = kube__build_url(c, &url, r, ns, name, opts ? opts->subresource : NULL);
        if (k >= 0)
                k = add_write_query(c, &url, opts);
        if (k >= 0)
                k = dump_body(obj, &body);
        if (k < 0)
                return k;
        return kube__perform(c, method, buf_str(&url), content_type, body, ret_obj, reterr);
}

int kube_create(struct kube_client *c, const struct gvr *r, const char *ns, const json_t *obj,
                const struct kube_write_options *opts, json_t **ret_obj, struct kube_status *reterr)
{
        if (!c || !json_is_object(obj) || (opts && opts->subresource))
                return -EINVAL;
        return write_request(c, "POST", r, ns, NULL, opts, "application/json", obj, ret_obj,
                             reterr);
}

int kube_update(struct kube_client *c, const struct gvr *r, const char *ns, const char *name,
                const json_t *obj, const struct kube_write_options *opts, json_t **ret_obj,
                struct kube_status *reterr)
{
        if (!c || !name || !json_is_object(obj))
                return -EINVAL;
        return write_request(c, "PUT", r, ns, name, opts, "application/json", obj, ret_obj, reterr);
}

static const char *patch_content_type(enum kube_patch_type type)
{
        switch (type) {
        case KUBE_PATCH_MERGE:
                return "application/merge-patch+json";
        case KUBE_PATCH_JSON:
                return "application/json-patch+json";
        case KUBE_PATCH_APPLY:
                return "application/apply-patch+yaml";
        case KUBE_PATCH_STRATEGIC:
                return "application/strategic-merge-patch+json";
        }
        return NULL;
}

int kube_patch(struct kube_client *c, const struct gvr *r, const char *ns, const char *name,
               enum kube_patch_type type, const json_t *patch,
               const struct kube_write_options *opts, json_t **ret_obj, struct kube_status *reterr)
{
        const char *ctype = patch_content_type(type);

        if (!c || !name || !patch || !ctype)
                return -EINVAL;
        if (type == KUBE_PATCH_JSON ? !json_is_array(patch) : !json_is_object(patch))
                return -EINVAL;
        if (type == KUBE_PATCH_APPLY && (!opts || !opts->field_manager))
                return -EINVAL;
        return write_request(c, "PATCH", r, ns, name, opts, ctype, patch, ret_obj, reterr);
}

/* The DeleteOptions body of opts: propagation policy and preconditions. */
static int delete_options_body(const struct kube_delete_options *opts, char **ret)
{
        json_auto_t *o = json_pack("{s:s, s:s}", "kind", "DeleteOptions", "apiVersion", "v1");
        json_t *pre;

        if (!o)
                return -ENOMEM;
        if (opts->propagation_policy &&
            json_object_set_new(o, "propagationPolicy", json_string(opts->propagation_policy)) < 0)
                return -ENOMEM;
        if (opts->precondition_uid || opts->precondition_rv) {
                pre = json_object();
                if (!pre || json_object_set_new(o, "preconditions", pre) < 0)
                        return -ENOMEM;
                if (opts->precondition_uid &&
                    json_object_set_new(pre, "uid", json_string(opts->precondition_uid)) < 0)
                        return -ENOMEM;
                if (opts->precondition_rv &&
                    json_object_set_new(pre, "resourceVersion",
                                        json_string(opts->precondition_rv)) < 0)
                        return -ENOMEM;
        }
        return dump_body(o, ret);
}

int kube_delete(struct kube_client *c, const struct gvr *r, const char *ns, const char *name,
                const struct kube_delete_options *opts, json_t **ret_obj,
                struct kube_status *reterr)
{
        struct buf url CLEANUP(buf_releasep) = BUF_INIT(KUBE_URL_MAX);
        AUTOFREE char *body = NULL;
        int k;

        k = object_url(c, &url, r, ns, name);
        if (k < 0)
                return k;

        if (opts && (opts->propagation_policy || opts->precondition_uid || opts->precondition_rv)) {
                k = delete_options_body(opts, &body);
                if (k < 0)
                        return k;
        }
        return kube__perform(c, "DELETE", buf_str(&url), "application/json", body, ret_obj, reterr);
}

int kube_request(struct kube_client *c, const char *method, const char *path,
                 const char *content_type, const json_t *body, json_t **ret_obj,
                 struct kube_status *reterr)
{
        struct buf url CLEANUP(buf_releasep) = BUF_INIT(KUBE_URL_MAX);
        AUTOFREE char *data = NULL;
        int k;

        if (!c || !method || !path || path[0] != '/')
                return -EINVAL;
        k = buf_printf(&url, "%s%s", c->sh->server, path);
        if (k >= 0 && body)
                k = dump_body(body, &data);
        if (k < 0)
                return k;
        return kube__perform(c, method, buf_str(&url),
                             content_type ? content_type : "application/json", data, ret_obj,
                             reterr);
}

/* The port (api.h): thin adapters from void *userdata to the client. */
static int api_get(void *userdata, const struct gvr *r, const char *ns, const char *name,
                   json_t **ret_obj, struct kube_status *reterr)
{
        return kube_get(userdata, r, ns, name, ret_obj, reterr);
}

static int api_list(void *userdata, const struct gvr *r, const char *ns,
                    const struct kube_list_options *opts, json_t **ret_list,
                    struct kube_status *reterr)
{
        return kube_list(userdata, r, ns, opts, ret_list, reterr);
}

static int api_create(void *userdata, const struct gvr *r, const char *ns, const json_t *obj,
                      const struct kube_write_options *opts, json_t **ret_obj,
                      struct kube_status *reterr)
{
        return kube_create(userdata, r, ns, obj, opts, ret_obj, reterr);
}

static int api_update(void *userdata, const struct gvr *r, const char *ns, const char *name,
                      const json_t *obj, const struct kube_write_options *opts, json_t **ret_obj,
                      struct kube_status *reterr)
{
        return kube_update(userdata, r, ns, name, obj, opts, ret_obj, reterr);
}

static int api_patch(void *userdata, const struct gvr *r, const char *ns, const char *name,
                     enum kube_patch_type type, const json_t *patch,
                     const struct kube_write_options *opts, json_t **ret_obj,
                     struct kube_status *reterr)
{
        return kube_patch(userdata, r, ns, name, type, patch, opts, ret_obj, reterr);
}

static int api_delete(void *userdata, const struct gvr *r, const char *ns, const char *name,
                      const struct kube_delete_options *opts, json_t **ret_obj,
                      struct kube_status *reterr)
{
        return kube_delete(userdata, r, ns, name, opts, ret_obj, reterr);
}

static const struct kube_api_ops kube_client_api_ops = {
        .get = api_get,
        .list = api_list,
        .create = api_create,
        .update = api_update,
        .patch = api_patch,
        .remove = api_delete,
};

struct kube_api kube_client_api(struct kube_client *c)
{
        return (struct kube_api){ .ops = &kube_client_api_ops, .userdata = c };
}
