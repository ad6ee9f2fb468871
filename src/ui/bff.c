/* SPDX-License-Identifier: Apache-2.0 */
#include "ui/bff.h"

#include <errno.h>
#include <microhttpd.h>
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

/*
 * Size: about 1,200 lines, over the ~1,000 of issue #11, because the three concerns here (the
 * Kubernetes views as the user, the forwarding to the registry and catalog, the front with its
 * route table) share struct call, struct ui_server, the client pools and the reply helpers.
 * The split planned is one internal module for those (bff-call) and one per concern
 * (bff-kube, bff-forward); every function here is already under 80 lines.
 */

#define CATALOG_API_PATH  "/api/model_catalog/v1alpha1"
#define POOL_MAX          16U
#define REG_PAGE_DEFAULT  "100"
#define REG_PAGE_MAX      1000U
#define KUBE_PAGE_DEFAULT 100U
#define KUBE_PAGE_MAX     500U
#define EVENTS_DEFAULT    50U
#define EVENTS_MAX        500U
#define LIST_PAGES_MAX    20U /* pages of KUBE_PAGE_MAX read for one answer (TMs, events) */
#define NAMESPACES_MAX    1000U
#define FILTER_QUERY_MAX  ((size_t)16 * 1024)

static const char CSP[] = "default-src 'self'; script-src 'self'; style-src 'self'; "
                          "img-src 'self' data:; font-src 'self' data:; connect-src 'self'; "
                          "object-src 'none'; base-uri 'none'; form-action 'self'; "
                          "frame-ancestors 'none'";

static const char NOT_BUILT_PAGE[] =
        "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
        "<title>modelplane ui</title></head><body>\n<h1>modelplane ui</h1>\n"
        "<p>The web console is not built, so there is nothing to show here. The API under "
        "<code>/api/v1/</code> works.</p>\n<p>Build it with <code>npm ci &amp;&amp; npm run "
        "build</code> in <code>ui/</code>, or start <code>modelplane ui</code> with "
        "<code>--static-dir</code> pointing at a built console.</p>\n</body></html>\n";

/* ---- pools of upstream clients (libcurl handles are one thread at a time) ---- */

struct pool {
        pthread_mutex_t lock;
        void *items[POOL_MAX];
        size_t n;
        void (*destroy)(void *item);
};

static void *pool_get(struct pool *p)
{
        void *it = NULL;

        (void)pthread_mutex_lock(&p->lock);
        if (p->n > 0)
                it = p->items[--p->n];
        (void)pthread_mutex_unlock(&p->lock);
        return it;
}

static void pool_put(struct pool *p, void *it)
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

enum upstream { UP_REGISTRY, UP_CATALOG };

struct ui_server {
        struct ui_static *st;
        char *registry_url, *registry_name, *catalog_url, *ca_file;
        long timeout_ms;
        struct ui_auth_config auth;
        uint8_t csrf_key[UI_CSRF_KEY_SIZE];
        struct kube_client *kube_own;   /* the server's credentials (impersonation, own calls) */
        struct kube_client *kube_token; /* no credentials of its own: bearer passthrough */
        char *kube_server;
        struct pool up[2]; /* enum upstream */
        struct pool kown, ktoken;
};

/* One API request. */
struct call {
        struct ui_server *s;
        struct ui_identity *id;
        struct http_req *req;
        struct http_resp *resp;
};

static int reply_data(struct call *c, unsigned status, json_t *data)
{
        json_t *body = ui_envelope(data);

        if (!body)
                return -ENOMEM;
        http_resp_set_json(c->resp, status, body);
        return 0;
}

static int reply_error(struct http_resp *resp, unsigned status, const char *source, const char *fmt,
                       ...) _printf_(4, 5);
static int reply_error(struct http_resp *resp, unsigned status, const char *source, const char *fmt,
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
static int refused(int r)
{
        return r < 0 ? r : 1;
}

/* ---- Kubernetes, as the user ---- */

static int kube_acquire(struct call *c, bool own, struct kube_client **ret)
{
        struct ui_server *s = c->s;
        bool bearer = !own && c->id->mode == UI_AUTH_BEARER;
        struct pool *p = bearer ? &s->ktoken : &s->kown;
        struct kube_client *base = bearer ? s->kube_token : s->kube_own;
        struct kube_client *k;
        struct kube_identity kid = { 0 };
        int r;

        if (!base)
                return -ENXIO;
        k = pool_get(p);
        if (!k) {
                r = kube_client_dup(base, &k);
                if (r < 0)
                        return r;
        }
        if (bearer)
                kid.bearer = c->id->token;
        else if (!own) {
                kid.user = c->id->user;
                kid.groups = (const char *const *)c->id->groups;
                kid.n_groups = c->id->n_groups;
        }
        r = kube_client_set_identity(k, own ? NULL : &kid);
        if (r < 0) {
                (void)kube_client_free(k);
                return r;
        }
        *ret = k;
        return 0;
}

static void kube_release(struct call *c, struct kube_client *k, bool bearer)
{
        if (!k)
                return;
        if (kube_client_set_identity(k, NULL) < 0) {
                (void)kube_client_free(k);
                return;
        }
        pool_put(bearer ? &c->s->ktoken : &c->s->kown, k);
}

/* A held Kubernetes client, released by cleanup. */
struct kube_hold {
        struct call *c;
        struct kube_client *k;
        bool bearer;
};

static void kube_holdp(struct kube_hold *h)
{
        if (h->k)
                kube_release(h->c, h->k, h->bearer);
}

static int kube_hold_get(struct call *c, bool own, struct kube_hold *h)
{
        h->c = c;
        h->bearer = !own && c->id->mode == UI_AUTH_BEARER;
        return kube_acquire(c, own, &h->k);
}

static int reply_kube_unconfigured(struct call *c, int r)
{
        if (r == -ENXIO)
                return reply_error(c->resp, 503, "kubernetes",
                                   "no Kubernetes API configured for the ui server (kubeconfig or "
                                   "in-cluster)");
        return reply_error(c->resp, 500, "ui", "cannot prepare a Kubernetes client: %s",
                           ui_errno_text(r));
}

static int reply_kube_error(struct call *c, int r, const struct kube_status *st, const char *verb,
                            const char *resource, const char *ns, const char *name)
{
        char msg[1024];
        unsigned status = ui_kube_error(r, st, c->id->user, verb, resource, ns, name,
                                        c->s->kube_server, msg, sizeof(msg));

        return reply_error(c->resp, status, "kubernetes", "%s", msg);
}

static const struct gvr GVR_NAMESPACES = { "", "v1", "namespaces" };
static const struct gvr GVR_EVENTS = { "", "v1", "events" };
static const struct gvr GVR_ISVC = { "serving.kserve.io", "v1beta1", "inferenceservices" };
static const struct gvr GVR_TM = { "serving.kserve.io", "v1alpha1", "trainedmodels" };

/* POSTs body (takes ownership; NULL: -ENOMEM) to path as k; *ret_out: new reference. */
static int kube_post(struct kube_client *k, const char *path, json_t *body, json_t **ret_out,
                     struct kube_status *st)
{
        int r;

        if (!body)
                return -ENOMEM;
        r = kube_request(k, "POST", path, "application/json", body, ret_out, st);
        json_decref(body);
        return r;
}

/* SelfSubjectAccessReview as k's identity: 1 allowed, 0 not, negative errno. */
static int access_review(struct kube_client *k, const char *verb, const char *group,
                         const char *resource, const char *ns)
{
        json_t *review = json_pack("{s:s,s:s,s:{s:{s:s,s:s,s:s,s:s?}}}", "apiVersion",
                                   "authorization.k8s.io/v1", "kind", "SelfSubjectAccessReview",
                                   "spec", "resourceAttributes", "verb", verb, "group", group,
                                   "resource", resource, "namespace", ns);
        json_t *out = NULL;
        struct kube_status st;
        int r;

        r = kube_post(k, "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews", review, &out,
                      &st);
        if (r < 0)
                return r;
        r = json_is_true(json_get_path(out, "status", "allowed", NULL)) ? 1 : 0;
        json_decref(out);
        return r;
}

/*
 * A bearer token without a user name: asks the API server who it is (SelfSubjectReview) and
 * keeps the answer in c->id->user. 1 when the server refused the token (the reply is written),
 * 0 otherwise (another failure leaves the name empty).
 */
static int review_self(struct call *c, struct kube_client *k)
{
        json_t *ssr = json_pack("{s:s,s:s}", "apiVersion", "authentication.k8s.io/v1", "kind",
                                "SelfSubjectReview");
        json_t *out = NULL;
        struct kube_status st = { 0 };
        const char *u;
        int r;

        if (!ssr)
                return -ENOMEM;
        r = kube_post(k, "/apis/authentication.k8s.io/v1/selfsubjectreviews", ssr, &out, &st);
        if (r < 0 && st.http_code == 401)
                return refused(reply_kube_error(c, r, &st, "review", "", NULL, NULL));
        u = r >= 0 ? json_get_string_path(out, "status", "userInfo", "username", NULL) : NULL;
        if (u)
                (void)snprintf(c->id->user, sizeof(c->id->user), "%s", u);
        json_decref(out);
        return 0;
}

/* Who the caller is to Kubernetes: the user name (bearer tokens) and whether it may do all. */
static int kube_whoami(struct call *c, bool *ret_admin)
{
        CLEANUP(kube_holdp) struct kube_hold h = { 0 };
        int r;

        *ret_admin = false;
        if (!c->s->kube_own && !c->s->kube_token)
                return 0;
        if (kube_hold_get(c, false, &h) < 0)
                return 0;
        if (c->id->mode == UI_AUTH_BEARER && !c->id->user[0]) {
                r = review_self(c, h.k);
                if (r != 0)
                        return r;
        }
        *ret_admin = access_review(h.k, "*", "*", "*", NULL) == 1;
        return 0;
}

static int api_user(struct call *c)
{
        char token[UI_CSRF_TOKEN_LEN + 1];
        bool admin = false;
        json_t *data;
        int r;

        r = kube_whoami(c, &admin);
        if (r != 0)
                return r < 0 ? r : 0;
        r = ui_csrf_token(c->s->csrf_key, c->id, token);
        if (r < 0)
                return r;
        data = json_pack("{s:s,s:b,s:s,s:s}", "userId", c->id->user, "clusterAdmin", admin,
                         "csrfToken", token, "authMode", ui_auth_mode_name(c->id->mode));
        explicit_bzero(token, sizeof(token));
        if (!data)
                return -ENOMEM;
        return reply_data(c, 200, data);
}

static int names_of(const json_t *list, json_t *out)
{
        json_t *it;
        size_t i;

        json_array_foreach(json_object_get(list, "items"), i, it) {
                const char *n = json_get_string_path(it, "metadata", "name", NULL);

                if (n && json_array_append_new(out, json_pack("{s:s}", "name", n)) < 0)
                        return -ENOMEM;
        }
        return 0;
}

static int api_namespaces(struct call *c)
{
        CLEANUP(kube_holdp) struct kube_hold as_user = { 0 };
        CLEANUP(ui_json_decrefp) json_t *list = NULL;
        CLEANUP(ui_json_decrefp) json_t *out = json_array();
        struct kube_list_options lo = { .limit = NAMESPACES_MAX };
        struct kube_status st;
        json_t *it;
        size_t i;
        int r;

        if (!out)
                return -ENOMEM;
        r = kube_hold_get(c, false, &as_user);
        if (r < 0)
                return reply_kube_unconfigured(c, r);
        r = kube_list(as_user.k, &GVR_NAMESPACES, NULL, &lo, &list, &st);
        if (r >= 0) {
                if (names_of(list, out) < 0)
                        return -ENOMEM;
                return reply_data(c, 200, TAKE_PTR(out));
        }
        if (st.http_code != 403)
                return reply_kube_error(c, r, &st, "list", "namespaces", NULL, NULL);
        {
                /* The user may not list namespaces: list them as the server, then keep those in
                 * which the user may list InferenceServices. */
                CLEANUP(kube_holdp) struct kube_hold own = { 0 };

                r = kube_hold_get(c, true, &own);
                if (r < 0)
                        return reply_kube_unconfigured(c, r);
                r = kube_list(own.k, &GVR_NAMESPACES, NULL, &lo, &list, &st);
                if (r < 0)
                        return reply_error(c->resp, 403, "kubernetes",
                                           "%s%s may not list namespaces, and the ui server "
                                           "cannot list them either: %s",
                                           c->id->user[0] ? "user " : "you", c->id->user,
                                           st.message);
        }
        /* One cluster-wide review first: a user who may list InferenceServices everywhere sees
         * every namespace without one review per namespace (hundreds on a real cluster). */
        r = access_review(as_user.k, "list", GVR_ISVC.group, GVR_ISVC.resource, NULL);
        if (r == 1) {
                if (names_of(list, out) < 0)
                        return -ENOMEM;
                return reply_data(c, 200, TAKE_PTR(out));
        }
        json_array_foreach(json_object_get(list, "items"), i, it) {
                const char *n = json_get_string_path(it, "metadata", "name", NULL);

                if (!n)
                        continue;
                r = access_review(as_user.k, "list", GVR_ISVC.group, GVR_ISVC.resource, n);
                if (r < 0)
                        return reply_error(c->resp, 502, "kubernetes",
                                           "SelfSubjectAccessReview for namespace %s failed: %s", n,
                                           ui_errno_text(r));
                if (r == 1 && json_array_append_new(out, json_pack("{s:s}", "name", n)) < 0)
                        return -ENOMEM;
        }
        return reply_data(c, 200, TAKE_PTR(out));
}

/* Reads an unsigned query parameter with a default and a maximum; 400 when bad. */
static int query_uint(struct call *c, const char *key, unsigned def, unsigned max, unsigned *ret)
{
        const char *v = http_req_query(c->req, key);
        uint32_t u;

        if (!v) {
                *ret = def;
                return 0;
        }
        if (safe_atou32(v, &u) < 0 || u == 0 || u > max) {
                (void)reply_error(c->resp, 400, "ui", "%s must be an integer from 1 to %u", key,
                                  max);
                return -EINVAL;
        }
        *ret = u;
        return 0;
}

static int api_isvc_list(struct call *c)
{
        CLEANUP(kube_holdp) struct kube_hold h = { 0 };
        CLEANUP(ui_json_decrefp) json_t *list = NULL;
        CLEANUP(ui_json_decrefp) json_t *items = json_array();
        const char *ns = http_req_param(c->req, "ns");
        struct kube_list_options lo = { .continue_token = http_req_query(c->req, "nextPageToken") };
        struct kube_status st;
        const char *next;
        json_t *it;
        size_t i;
        int r;

        if (!items)
                return -ENOMEM;
        if (query_uint(c, "pageSize", KUBE_PAGE_DEFAULT, KUBE_PAGE_MAX, &lo.limit) < 0)
                return 0;
        if (lo.continue_token && !*lo.continue_token)
                lo.continue_token = NULL;
        r = kube_hold_get(c, false, &h);
        if (r < 0)
                return reply_kube_unconfigured(c, r);
        r = kube_list(h.k, &GVR_ISVC, ns, &lo, &list, &st);
        if (r < 0)
                return reply_kube_error(c, r, &st, "list", "inferenceservices.serving.kserve.io",
                                        ns, NULL);
        json_array_foreach(json_object_get(list, "items"), i, it)
                if (json_array_append_new(items, ui_isvc_view(it)) < 0)
                        return -ENOMEM;
        next = json_get_string_path(list, "metadata", "continue", NULL);
        return reply_data(c, 200,
                          json_pack("{s:O,s:s}", "items", items, "nextPageToken",
                                    next ? next : ""));
}

static int api_isvc_get(struct call *c)
{
        CLEANUP(kube_holdp) struct kube_hold h = { 0 };
        CLEANUP(ui_json_decrefp) json_t *obj = NULL;
        const char *ns = http_req_param(c->req, "ns"), *name = http_req_param(c->req, "name");
        struct kube_status st;
        int r;

        r = kube_hold_get(c, false, &h);
        if (r < 0)
                return reply_kube_unconfigured(c, r);
        r = kube_get(h.k, &GVR_ISVC, ns, name, &obj, &st);
        if (r < 0)
                return reply_kube_error(c, r, &st, "get", "inferenceservices.serving.kserve.io", ns,
                                        name);
        return reply_data(c, 200, ui_isvc_view(obj));
}

/*
 * Lists r in ns as h's identity, page by page (at most LIST_PAGES_MAX pages), calling fn for each
 * item. Returns 0 or a negative errno with st filled.
 */
static int list_all(struct kube_client *k, const struct gvr *r, const char *ns,
                    const char *field_selector, int (*fn)(void *ud, const json_t *item), void *ud,
                    struct kube_status *st)
{
        AUTOFREE char *cont = NULL;

        for (unsigned page = 0; page < LIST_PAGES_MAX; page++) {
                CLEANUP(ui_json_decrefp) json_t *list = NULL;
                struct kube_list_options lo = { .limit = KUBE_PAGE_MAX,
                                                .continue_token = cont,
                                                .field_selector = field_selector };
                const char *next;
                json_t *it;
                size_t i;
                int q;

                q = kube_list(k, r, ns, &lo, &list, st);
                if (q < 0)
                        return q;
                json_array_foreach(json_object_get(list, "items"), i, it) {
                        q = fn(ud, it);
                        if (q < 0)
                                return q;
                }
                next = json_get_string_path(list, "metadata", "continue", NULL);
                free(cont);
                cont = NULL;
                if (!next || !*next)
                        return 0;
                cont = strdup(next);
                if (!cont)
                        return -ENOMEM;
        }
        return 0;
}

struct tm_collect {
        const char *isvc;
        json_t *items;
};

static int tm_collect_one(void *ud, const json_t *tm)
{
        struct tm_collect *t = ud;
        const char *parent = json_get_string_path(tm, "spec", "inferenceService", NULL);

        if (!parent || !streq(parent, t->isvc))
                return 0;
        return json_array_append_new(t->items, ui_trainedmodel_view(tm)) < 0 ? -ENOMEM : 0;
}

static int api_trainedmodels(struct call *c)
{
        CLEANUP(kube_holdp) struct kube_hold h = { 0 };
        CLEANUP(ui_json_decrefp) json_t *items = json_array();
        const char *ns = http_req_param(c->req, "ns");
        struct tm_collect t = { .isvc = http_req_param(c->req, "name"), .items = items };
        struct kube_status st;
        int r;

        if (!items)
                return -ENOMEM;
        r = kube_hold_get(c, false, &h);
        if (r < 0)
                return reply_kube_unconfigured(c, r);
        r = list_all(h.k, &GVR_TM, ns, NULL, tm_collect_one, &t, &st);
        if (r == -ENOMEM)
                return r;
        if (r < 0)
                return reply_kube_error(c, r, &st, "list", "trainedmodels.serving.kserve.io", ns,
                                        NULL);
        return reply_data(c, 200, json_pack("{s:O}", "items", items));
}

static int event_collect_one(void *ud, const json_t *ev)
{
        return json_array_append_new(ud, ui_event_view(ev)) < 0 ? -ENOMEM : 0;
}

static const char *event_time(const json_t *v)
{
        const char *t = json_string_value(json_object_get(v, "lastTimestamp"));

        if (!t)
                t = json_string_value(json_object_get(v, "firstTimestamp"));
        return t ? t : "";
}

static int event_newest_first(const void *a, const void *b)
{
        const json_t *x = *(json_t *const *)a, *y = *(json_t *const *)b;

        return strcmp(event_time(y), event_time(x));
}

static bool selector_value_ok(const char *v)
{
        /* a field selector value: no operators of the selector syntax */
        return v && *v && strlen(v) <= 253 && !strpbrk(v, ",=!\\ ");
}

static int api_events(struct call *c)
{
        CLEANUP(kube_holdp) struct kube_hold h = { 0 };
        CLEANUP(ui_json_decrefp) json_t *items = json_array();
        CLEANUP(ui_json_decrefp) json_t *out = json_array();
        AUTOFREE json_t **sorted = NULL;
        const char *ns = http_req_param(c->req, "ns");
        const char *kind = http_req_query(c->req, "kind"), *name = http_req_query(c->req, "name");
        struct buf sel = BUF_INIT(1024);
        struct kube_status st;
        unsigned limit;
        size_t n;
        int r;

        if (!items || !out)
                return -ENOMEM;
        if (query_uint(c, "limit", EVENTS_DEFAULT, EVENTS_MAX, &limit) < 0)
                return 0;
        if ((kind && !selector_value_ok(kind)) || (name && !selector_value_ok(name)))
                return reply_error(c->resp, 400, "ui",
                                   "kind and name must be 1 to 253 characters without ',', '=', "
                                   "'!', '\\' or spaces");
        r = 0;
        if (kind)
                r = buf_printf(&sel, "involvedObject.kind=%s", kind);
        if (r >= 0 && name)
                r = buf_printf(&sel, "%sinvolvedObject.name=%s", kind ? "," : "", name);
        if (r < 0) {
                buf_release(&sel);
                return r;
        }
        r = kube_hold_get(c, false, &h);
        if (r < 0) {
                buf_release(&sel);
                return reply_kube_unconfigured(c, r);
        }
        r = list_all(h.k, &GVR_EVENTS, ns, sel.len ? buf_str(&sel) : NULL, event_collect_one, items,
                     &st);
        buf_release(&sel);
        if (r == -ENOMEM)
                return r;
        if (r < 0)
                return reply_kube_error(c, r, &st, "list", "events", ns, NULL);
        n = json_array_size(items);
        sorted = calloc(n ? n : 1, sizeof(json_t *));
        if (!sorted)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++)
                sorted[i] = json_array_get(items, i);
        qsort(sorted, n, sizeof(json_t *), event_newest_first);
        for (size_t i = 0; i < n && i < limit; i++)
                if (json_array_append(out, sorted[i]) < 0)
                        return -ENOMEM;
        return reply_data(c, 200, json_pack("{s:O}", "items", out));
}

/* ---- registry and catalog ---- */

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
static const char *const Q_NONE[] = { NULL };

enum { F_LIST = 1 << 0 };

struct api_route {
        int (*fn)(struct call *c); /* NULL: forwarded to upstream */
        enum upstream up;
        const char *path;         /* upstream path; "{x}" from the route's parameter x */
        const char *const *query; /* forwarded query parameters */
        unsigned flags;
};

struct query_ctx {
        const char *const *allowed;
        struct buf *b;
        const char *bad; /* the parameter over its limit */
};

static int forward_query(void *ud, const char *key, const char *value)
{
        struct query_ctx *q = ud;

        for (const char *const *a = q->allowed; *a; a++)
                if (streq(*a, key)) {
                        if (streq(key, "filterQuery") && strlen(value) > FILTER_QUERY_MAX) {
                                q->bad = key;
                                return -E2BIG;
                        }
                        return ui_query_add(q->b, key, value);
                }
        return 0;
}

/* Appends s percent-encoded as a path segment ('/' kept when keep_slash). */
static int add_segment(struct buf *b, const char *s, bool keep_slash)
{
        static const char hex[] = "0123456789ABCDEF";

        for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
                bool plain = (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
                             (*p >= '0' && *p <= '9') || strchr("-._~", *p) ||
                             (keep_slash && *p == '/');
                char e[3] = { '%', hex[*p >> 4], hex[*p & 15] };
                int r = plain ? buf_append(b, (const char *)p, 1) : buf_append(b, e, 3);

                if (r < 0)
                        return r;
        }
        return 0;
}

static int upstream_path(const struct call *c, const struct api_route *rt, struct buf *b)
{
        const char *p = rt->path;

        while (*p) {
                const char *o = strchr(p, '{'), *e, *v;
                char name[32];
                size_t n;
                int r;

                if (!o)
                        return buf_puts(b, p);
                r = buf_append(b, p, (size_t)(o - p));
                if (r < 0)
                        return r;
                e = strchr(o, '}');
                n = (size_t)(e - o - 1);
                if (n >= sizeof(name))
                        return -EINVAL;
                memcpy(name, o + 1, n);
                name[n] = '\0';
                v = http_req_param(c->req, name);
                if (!v)
                        return -EINVAL;
                r = add_segment(b, v, streq(name, "name"));
                if (r < 0)
                        return r;
                p = e + 1;
        }
        return 0;
}

static struct mr_client *upstream_get(struct ui_server *s, enum upstream up)
{
        struct mr_client *m = pool_get(&s->up[up]);

        if (!m) {
                struct mr_client_config mc = {
                        .base_url = up == UP_REGISTRY ? s->registry_url : s->catalog_url,
                        .api_path = up == UP_CATALOG ? CATALOG_API_PATH : NULL,
                        .timeout_ms = s->timeout_ms,
                        .ca_file = s->ca_file,
                };

                if (mr_client_new(&mc, &m) < 0)
                        return NULL;
        }
        return m;
}

static const char *const upstream_names[] = { "model registry", "model catalog" };
static const char *const upstream_sources[] = { "registry", "catalog" };

/* The upstream path and query of a forwarded request; 1 when a refusal is already written. */
static int forward_path(struct call *c, const struct api_route *rt, struct buf *path)
{
        struct query_ctx q = { .allowed = rt->query, .b = path };
        unsigned ps;
        int r;

        r = upstream_path(c, rt, path);
        if (r >= 0)
                r = http_req_query_foreach(c->req, forward_query, &q);
        if (r == -E2BIG && q.bad)
                return refused(reply_error(c->resp, 400, "ui", "%s is longer than %zu bytes", q.bad,
                                           FILTER_QUERY_MAX));
        if (r == -E2BIG)
                return refused(reply_error(c->resp, 414, "ui", "query too long"));
        if (r < 0)
                return r;
        if (!(rt->flags & F_LIST) || !streq(c->req->method, "GET"))
                return 0;
        if (query_uint(c, "pageSize", 100, REG_PAGE_MAX, &ps) < 0)
                return 1;
        if (!http_req_query(c->req, "pageSize") &&
            ui_query_add(path, "pageSize", REG_PAGE_DEFAULT) < 0)
                return -ENOMEM;
        return 0;
}

/* The "data" object of a write's {"data": {...}} body (borrowed from *in); NULL after a refusal. */
static int forward_body(struct call *c, json_t **in, json_t **ret_data)
{
        char msg[256];
        json_t *data;

        *ret_data = NULL;
        if (streq(c->req->method, "GET"))
                return 0;
        if (json_parse_bounded(c->req->body.p, c->req->body.len, in, msg, sizeof(msg)) < 0)
                return refused(
                        reply_error(c->resp, 400, "ui", "request body is not JSON: %s", msg));
        data = json_object_get(*in, "data");
        if (!json_is_object(data))
                return refused(
                        reply_error(c->resp, 400, "ui", "request body must be {\"data\": {...}}"));
        *ret_data = data;
        return 0;
}

/* The reply to a failed upstream call r with err. */
static int forward_failure(struct call *c, enum upstream up, const char *url, int r,
                           const struct mr_error *err)
{
        unsigned status = ui_upstream_status(r, err->status);
        const char *src = upstream_sources[up];

        if (err->status >= 400 && err->status < 500)
                return reply_error(c->resp, status, src, "%s", err->message);
        if (err->status == 0)
                return reply_error(c->resp, status, src, "%s at %s is unavailable: %s",
                                   upstream_names[up], url,
                                   err->message[0] ? err->message : ui_errno_text(r));
        return reply_error(c->resp, status, src, "%s at %s answered %ld: %s", upstream_names[up],
                           url, err->status, err->message);
}

static int forward(struct call *c, const struct api_route *rt)
{
        struct ui_server *s = c->s;
        const char *url = rt->up == UP_REGISTRY ? s->registry_url : s->catalog_url;
        CLEANUP(buf_releasep) struct buf path = BUF_INIT((size_t)16 * 1024 + 4096);
        CLEANUP(ui_json_decrefp) json_t *in = NULL;
        CLEANUP(ui_json_decrefp) json_t *out = NULL;
        struct mr_error err = { 0 };
        struct mr_client *m;
        json_t *data = NULL;
        int r;

        if (rt->up == UP_REGISTRY) {
                const char *mr = http_req_param(c->req, "mr");

                if (!mr || !streq(mr, s->registry_name))
                        return reply_error(c->resp, 404, "ui", "no model registry named '%s'",
                                           mr ? mr : "");
        }
        if (!url)
                return reply_error(c->resp, 503, upstream_sources[rt->up],
                                   "no %s configured for the ui server", upstream_names[rt->up]);
        r = forward_path(c, rt, &path);
        if (r == 0)
                r = forward_body(c, &in, &data);
        if (r != 0)
                return r < 0 ? r : 0;
        m = upstream_get(s, rt->up);
        if (!m)
                return -ENOMEM;
        r = mr_client_call(m, c->req->method, buf_str(&path), data, &out, &err);
        pool_put(&s->up[rt->up], m);
        if (r < 0)
                return forward_failure(c, rt->up, url, r, &err);
        return reply_data(c, (unsigned)r, TAKE_PTR(out));
}

static int api_registries(struct call *c)
{
        return reply_data(c, 200,
                          json_pack("[{s:s,s:s,s:s,s:s}]", "name", c->s->registry_name,
                                    "displayName", "Model registry", "description",
                                    "modelplane registry", "serverAddress",
                                    c->s->registry_url ? c->s->registry_url : ""));
}

#define MR "/api/v1/model_registry/{mr}"
#define MC "/api/v1/model_catalog"
#define ROUTE(m, p, ...)                                      \
        {                                                     \
                m, p, NULL, (void *)&(const struct api_route) \
                {                                             \
                        __VA_ARGS__                           \
                }                                             \
        }

static const struct http_route api_routes[] = {
        ROUTE("GET", "/api/v1/user", .fn = api_user),
        ROUTE("GET", "/api/v1/namespaces", .fn = api_namespaces),
        ROUTE("GET", "/api/v1/model_registry", .fn = api_registries),
        ROUTE("GET", MR "/registered_models", .path = "/registered_models", .query = Q_LIST,
              .flags = F_LIST),
        ROUTE("POST", MR "/registered_models", .path = "/registered_models", .query = Q_NONE),
        ROUTE("GET", MR "/registered_models/{id}", .path = "/registered_models/{id}",
              .query = Q_NONE),
        ROUTE("PATCH", MR "/registered_models/{id}", .path = "/registered_models/{id}",
              .query = Q_NONE),
        ROUTE("GET", MR "/registered_models/{id}/versions",
              .path = "/registered_models/{id}/versions", .query = Q_VERSIONS, .flags = F_LIST),
        ROUTE("POST", MR "/registered_models/{id}/versions",
              .path = "/registered_models/{id}/versions", .query = Q_NONE),
        ROUTE("GET", MR "/model_versions/{id}", .path = "/model_versions/{id}", .query = Q_NONE),
        ROUTE("PATCH", MR "/model_versions/{id}", .path = "/model_versions/{id}", .query = Q_NONE),
        ROUTE("GET", MR "/model_versions/{id}/artifacts", .path = "/model_versions/{id}/artifacts",
              .query = Q_LIST, .flags = F_LIST),
        ROUTE("POST", MR "/model_versions/{id}/artifacts", .path = "/model_versions/{id}/artifacts",
              .query = Q_NONE),
        ROUTE("PATCH", MR "/model_artifact/{id}", .path = "/model_artifacts/{id}", .query = Q_NONE),
        ROUTE("GET", MR "/inference_services", .path = "/inference_services", .query = Q_LIST,
              .flags = F_LIST),
        ROUTE("GET", MC "/sources", .up = UP_CATALOG, .path = "/sources", .query = Q_SOURCES),
        ROUTE("GET", MC "/models", .up = UP_CATALOG, .path = "/models", .query = Q_CATALOG_MODELS),
        ROUTE("GET", MC "/models/filter_options", .up = UP_CATALOG,
              .path = "/models/filter_options", .query = Q_NONE),
        ROUTE("GET", MC "/labels", .up = UP_CATALOG, .path = "/labels", .query = Q_SOURCES),
        ROUTE("GET", MC "/sources/{sid}/models/{name+}", .up = UP_CATALOG,
              .path = "/sources/{sid}/models/{name}", .query = Q_NONE),
        ROUTE("GET", MC "/sources/{sid}/artifacts/{name+}", .up = UP_CATALOG,
              .path = "/sources/{sid}/models/{name}/artifacts", .query = Q_ARTIFACTS),
        ROUTE("GET", MC "/sources/{sid}/performance_artifacts/{name+}", .up = UP_CATALOG,
              .path = "/sources/{sid}/models/{name}/artifacts/performance", .query = Q_PERF),
        ROUTE("GET", "/api/v1/namespaces/{ns}/inferenceservices", .fn = api_isvc_list),
        ROUTE("GET", "/api/v1/namespaces/{ns}/inferenceservices/{name}", .fn = api_isvc_get),
        ROUTE("GET", "/api/v1/namespaces/{ns}/inferenceservices/{name}/trainedmodels",
              .fn = api_trainedmodels),
        ROUTE("GET", "/api/v1/namespaces/{ns}/events", .fn = api_events),
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
                return reply_error(resp, 405, "ui", "%s is not allowed on %s", req->method,
                                   req->path);
        if (r < 0)
                return reply_error(resp, r == -EINVAL ? 400 : 404, "ui", "no API route %s",
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
                r = reply_error(resp, r == -EACCES ? 401 : 400, "ui", "%s", msg);
                if (r >= 0 && resp->status == 401)
                        r = http_resp_add_header(resp, "WWW-Authenticate", "Bearer");
                goto out;
        }
        if (ui_method_writes(req->method)) {
                unsigned status = 0;
                const char *why;

                if (!ui_csrf_valid(s->csrf_key, &id, http_req_header(req, "X-CSRF-Token"))) {
                        r = reply_error(resp, 403, "ui",
                                        "missing or invalid X-CSRF-Token header (get one from GET "
                                        "/api/v1/user)");
                        goto out;
                }
                why = ui_write_refusal(http_req_header(req, "Content-Type"), req->body.len > 0,
                                       http_req_header(req, "Origin"), http_req_header(req, "Host"),
                                       &status);
                if (why) {
                        r = reply_error(resp, status, "ui", "%s", why);
                        goto out;
                }
        }
        r = rt->fn ? rt->fn(&c) : forward(&c, rt);
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
        r = http_percent_decode(req->path, strlen(req->path), &decoded);
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
                r = reply_error(resp, 500, "ui", "internal error: %s", ui_errno_text(r));
                if (r < 0)
                        return r;
        }
        return security_headers(resp);
}

/* ---- construction ---- */

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
        int r;

        s = calloc(1, sizeof(*s));
        if (!s)
                return -ENOMEM;
        for (size_t i = 0; i < ELEMENTSOF(s->up); i++) {
                (void)pthread_mutex_init(&s->up[i].lock, NULL);
                s->up[i].destroy = mr_destroy;
        }
        (void)pthread_mutex_init(&s->kown.lock, NULL);
        (void)pthread_mutex_init(&s->ktoken.lock, NULL);
        s->kown.destroy = s->ktoken.destroy = kube_destroy;
        s->auth = cfg->auth;
        memcpy(s->csrf_key, cfg->csrf_key, sizeof(s->csrf_key));
        s->timeout_ms = cfg->upstream_timeout_ms;
        if (dup_opt(cfg->registry_url, &s->registry_url) < 0 ||
            dup_opt(cfg->registry_name ? cfg->registry_name : "modelplane", &s->registry_name) <
                    0 ||
            dup_opt(cfg->catalog_url, &s->catalog_url) < 0 ||
            dup_opt(cfg->ca_file, &s->ca_file) < 0)
                return -ENOMEM;
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
        free(s->registry_url);
        free(s->registry_name);
        free(s->catalog_url);
        free(s->ca_file);
        free(s->kube_server);
        explicit_bzero(s->csrf_key, sizeof(s->csrf_key));
        free(s);
        return NULL;
}

bool ui_server_has_frontend(const struct ui_server *s)
{
        return ui_static_has_index(s->st);
}
