/* SPDX-License-Identifier: Apache-2.0 */
/* modelplane ui's Kubernetes views, as the user (bff-internal.h). */
#include "ui/bff-internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json/json-util.h"
#include "kube/client.h"
#include "ui/views.h"
#include "util/time-util.h"

#define KUBE_PAGE_DEFAULT 100U
#define KUBE_PAGE_MAX     500U
#define EVENTS_DEFAULT    50U
#define EVENTS_MAX        500U
#define LIST_PAGES_MAX    20U /* pages of KUBE_PAGE_MAX read for one answer (TMs, events) */
#define NAMESPACES_MAX    1000U

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
        k = bff_pool_get(p);
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
        bff_pool_put(bearer ? &c->s->ktoken : &c->s->kown, k);
}

void bff_kube_holdp(struct kube_hold *h)
{
        if (h->k)
                kube_release(h->c, h->k, h->bearer);
}

int bff_kube_hold_get(struct call *c, bool own, struct kube_hold *h)
{
        h->c = c;
        h->bearer = !own && c->id->mode == UI_AUTH_BEARER;
        return kube_acquire(c, own, &h->k);
}

int bff_reply_kube_unconfigured(struct call *c, int r)
{
        if (r == -ENXIO)
                return bff_reply_error(
                        c->resp, 503, "kubernetes",
                        "no Kubernetes API configured for the ui server (kubeconfig or "
                        "in-cluster)");
        return bff_reply_error(c->resp, 500, "ui", "cannot prepare a Kubernetes client: %s",
                               ui_errno_text(r));
}

int bff_reply_kube_error(struct call *c, int r, const struct kube_status *st, const char *verb,
                         const char *resource, const char *ns, const char *name)
{
        char msg[1024];
        unsigned status = ui_kube_error(r, st, c->id->user, verb, resource, ns, name,
                                        c->s->kube_server, msg, sizeof(msg));

        return bff_reply_error(c->resp, status, "kubernetes", "%s", msg);
}

const struct gvr BFF_GVR_NAMESPACES = { "", "v1", "namespaces" };
const struct gvr BFF_GVR_EVENTS = { "", "v1", "events" };
const struct gvr BFF_GVR_ISVC = { "serving.kserve.io", "v1beta1", "inferenceservices" };
const struct gvr BFF_GVR_TM = { "serving.kserve.io", "v1alpha1", "trainedmodels" };
const struct gvr BFF_GVR_SERVICES = { "", "v1", "services" };

int bff_kube_post(struct kube_client *k, const char *path, json_t *body, json_t **ret_out,
                  struct kube_status *st)
{
        int r;

        if (!body)
                return -ENOMEM;
        r = kube_request(k, "POST", path, "application/json", body, ret_out, st);
        json_decref(body);
        return r;
}

int bff_access_review(struct kube_client *k, const char *verb, const char *group,
                      const char *resource, const char *ns)
{
        json_t *review = json_pack("{s:s,s:s,s:{s:{s:s,s:s,s:s,s:s?}}}", "apiVersion",
                                   "authorization.k8s.io/v1", "kind", "SelfSubjectAccessReview",
                                   "spec", "resourceAttributes", "verb", verb, "group", group,
                                   "resource", resource, "namespace", ns);
        json_t *out = NULL;
        struct kube_status st;
        int r;

        r = bff_kube_post(k, "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews", review, &out,
                          &st);
        if (r < 0)
                return r;
        r = json_is_true(json_get_path(out, "status", "allowed", NULL)) ? 1 : 0;
        json_decref(out);
        return r;
}

/* ---- authorization of the registry and catalog routes ---- */

static int review_self(struct call *c, struct kube_client *k);

static const char *const upstream_what[] = { "the model registry", "the model catalog" };

/* Asks the API server whether the caller may get svc: 1 allowed, 0 not; 2 when a reply saying
 * why it cannot be decided is written; negative errno. */
static int access_ask(struct call *c, const struct ui_service_ref *svc)
{
        CLEANUP(bff_kube_holdp) struct kube_hold h = { 0 };
        CLEANUP(ui_json_decrefp) json_t *out = NULL;
        bool bearer = c->id->mode == UI_AUTH_BEARER;
        struct kube_status st = { 0 };
        int r;

        /* The proxy's user is reviewed by the server (its own credentials); a bearer token
         * reviews itself. */
        r = bff_kube_hold_get(c, !bearer, &h);
        if (r < 0)
                return bff_reply_kube_unconfigured(c, r) < 0 ? -ENOMEM : 2;
        r = bff_kube_post(h.k, ui_access_review_path(c->id), ui_access_review_body(c->id, svc),
                          &out, &st);
        if (r == -ENOMEM)
                return r;
        if (r < 0 && !bearer && st.http_code == 403)
                r = bff_reply_error(c->resp, 500, "ui",
                                    "the ui server may not create subjectaccessreviews, so it "
                                    "cannot check who may use the registry; give its "
                                    "ServiceAccount the ClusterRole of deploy/base/ui/rbac.yaml");
        else if (r < 0)
                r = bff_reply_kube_error(c, r, &st, "create",
                                         bearer ? "selfsubjectaccessreviews.authorization.k8s.io"
                                                : "subjectaccessreviews.authorization.k8s.io",
                                         NULL, NULL);
        else
                return ui_access_review_allowed(out) ? 1 : 0;
        return r < 0 ? r : 2;
}

int bff_authorize_service(struct call *c, const struct ui_service_ref *svc, const char *what)
{
        struct ui_server *s = c->s;
        uint8_t key[UI_ACCESS_KEY_SIZE];
        char msg[512];
        int r;

        if (s->skip_access_review)
                return 0;
        if (!s->kube_own && !s->kube_token)
                return bff_refused(bff_reply_error(
                        c->resp, 503, "ui",
                        "cannot check who may use %s without the Kubernetes API (the ui server "
                        "runs with --no-kube); give it a kubeconfig, or start it with "
                        "--insecure-skip-access-review to let every signed-in user in",
                        what));
        r = ui_access_key(c->id, svc, key);
        if (r < 0)
                return r;
        (void)pthread_mutex_lock(&s->access_lock);
        r = ui_access_cache_get(s->access_cache, key, now_monotonic());
        (void)pthread_mutex_unlock(&s->access_lock);
        if (r == -ENOENT) {
                r = access_ask(c, svc);
                if (r < 0 || r == 2)
                        return r < 0 ? r : 1;
                (void)pthread_mutex_lock(&s->access_lock);
                ui_access_cache_put(s->access_cache, key, r == 1, now_monotonic());
                (void)pthread_mutex_unlock(&s->access_lock);
        }
        explicit_bzero(key, sizeof(key));
        if (r == 1)
                return 0;
        if (c->id->mode == UI_AUTH_BEARER && !c->id->user[0]) {
                /* a token has no name until the API server says whose it is */
                CLEANUP(bff_kube_holdp) struct kube_hold h = { 0 };

                if (bff_kube_hold_get(c, false, &h) >= 0) {
                        r = review_self(c, h.k);
                        if (r != 0)
                                return r;
                }
        }
        ui_access_refusal(c->id->user, what, svc, msg, sizeof(msg));
        return bff_refused(bff_reply_error(c->resp, 403, "kubernetes", "%s", msg));
}

int bff_authorize(struct call *c, enum upstream up)
{
        return bff_authorize_service(c, &c->s->access_svc[up], upstream_what[up]);
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
        r = bff_kube_post(k, "/apis/authentication.k8s.io/v1/selfsubjectreviews", ssr, &out, &st);
        if (r < 0 && st.http_code == 401)
                return bff_refused(bff_reply_kube_error(c, r, &st, "review", "", NULL, NULL));
        u = r >= 0 ? json_get_string_path(out, "status", "userInfo", "username", NULL) : NULL;
        if (u)
                (void)snprintf(c->id->user, sizeof(c->id->user), "%s", u);
        json_decref(out);
        return 0;
}

/* Who the caller is to Kubernetes: the user name (bearer tokens) and whether it may do all. */
static int kube_whoami(struct call *c, bool *ret_admin)
{
        CLEANUP(bff_kube_holdp) struct kube_hold h = { 0 };
        int r;

        *ret_admin = false;
        if (!c->s->kube_own && !c->s->kube_token)
                return 0;
        if (bff_kube_hold_get(c, false, &h) < 0)
                return 0;
        if (c->id->mode == UI_AUTH_BEARER && !c->id->user[0]) {
                r = review_self(c, h.k);
                if (r != 0)
                        return r;
        }
        *ret_admin = bff_access_review(h.k, "*", "*", "*", NULL) == 1;
        return 0;
}

int bff_api_user(struct call *c)
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
        return bff_reply_data(c, 200, data);
}

static int names_of(const json_t *list, json_t *out)
{
        json_t *it;
        size_t i;

        json_array_foreach(json_object_get(list, "items"), i, it) {
                const char *n = json_get_string_path(it, "metadata", "name", NULL);

                if (n && json_array_append_new(out, json_string(n)) < 0)
                        return -ENOMEM;
        }
        return 0;
}

/* The user may not list namespaces: lists them as the server into *ret_list; 1 after a
 * refusal is written. */
static int namespaces_as_server(struct call *c, json_t **ret_list)
{
        CLEANUP(bff_kube_holdp) struct kube_hold own = { 0 };
        struct kube_list_options lo = { .limit = NAMESPACES_MAX };
        struct kube_status st;
        int r;

        r = bff_kube_hold_get(c, true, &own);
        if (r < 0)
                return bff_refused(bff_reply_kube_unconfigured(c, r));
        r = kube_list(own.k, &BFF_GVR_NAMESPACES, NULL, &lo, ret_list, &st);
        if (r < 0)
                return bff_refused(bff_reply_error(c->resp, 403, "kubernetes",
                                                   "%s%s may not list namespaces, and the ui "
                                                   "server cannot list them either: %s",
                                                   c->id->user[0] ? "user " : "you", c->id->user,
                                                   st.message));
        return 0;
}

int bff_visible_namespaces(struct call *c, json_t *out)
{
        CLEANUP(bff_kube_holdp) struct kube_hold as_user = { 0 };
        CLEANUP(ui_json_decrefp) json_t *list = NULL;
        struct kube_list_options lo = { .limit = NAMESPACES_MAX };
        struct kube_status st;
        json_t *it;
        size_t i;
        int r;

        r = bff_kube_hold_get(c, false, &as_user);
        if (r < 0)
                return bff_refused(bff_reply_kube_unconfigured(c, r));
        r = kube_list(as_user.k, &BFF_GVR_NAMESPACES, NULL, &lo, &list, &st);
        if (r >= 0)
                return names_of(list, out);
        if (st.http_code != 403)
                return bff_refused(
                        bff_reply_kube_error(c, r, &st, "list", "namespaces", NULL, NULL));
        /* The user may not list namespaces: list them as the server, then keep those in which
         * the user may list InferenceServices. */
        r = namespaces_as_server(c, &list);
        if (r != 0)
                return r;
        /* One cluster-wide review first: a user who may list InferenceServices everywhere sees
         * every namespace without one review per namespace (hundreds on a real cluster). */
        r = bff_access_review(as_user.k, "list", BFF_GVR_ISVC.group, BFF_GVR_ISVC.resource, NULL);
        if (r == 1)
                return names_of(list, out);
        json_array_foreach(json_object_get(list, "items"), i, it) {
                const char *n = json_get_string_path(it, "metadata", "name", NULL);

                if (!n)
                        continue;
                r = bff_access_review(as_user.k, "list", BFF_GVR_ISVC.group, BFF_GVR_ISVC.resource,
                                      n);
                if (r < 0)
                        return bff_refused(bff_reply_error(
                                c->resp, 502, "kubernetes",
                                "SelfSubjectAccessReview for namespace %s failed: %s", n,
                                ui_errno_text(r)));
                if (r == 1 && json_array_append_new(out, json_string(n)) < 0)
                        return -ENOMEM;
        }
        return 0;
}

int bff_api_namespaces(struct call *c)
{
        CLEANUP(ui_json_decrefp) json_t *names = json_array();
        CLEANUP(ui_json_decrefp) json_t *out = json_array();
        json_t *n;
        size_t i;
        int r;

        if (!names || !out)
                return -ENOMEM;
        r = bff_visible_namespaces(c, names);
        if (r != 0)
                return r < 0 ? r : 0;
        json_array_foreach(names, i, n)
                if (json_array_append_new(out, json_pack("{s:O}", "name", n)) < 0)
                        return -ENOMEM;
        return bff_reply_data(c, 200, TAKE_PTR(out));
}

int bff_api_isvc_list(struct call *c)
{
        CLEANUP(bff_kube_holdp) struct kube_hold h = { 0 };
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
        if (bff_query_uint(c, "pageSize", KUBE_PAGE_DEFAULT, KUBE_PAGE_MAX, &lo.limit) < 0)
                return 0;
        if (lo.continue_token && !*lo.continue_token)
                lo.continue_token = NULL;
        r = bff_kube_hold_get(c, false, &h);
        if (r < 0)
                return bff_reply_kube_unconfigured(c, r);
        r = kube_list(h.k, &BFF_GVR_ISVC, ns, &lo, &list, &st);
        if (r < 0)
                return bff_reply_kube_error(c, r, &st, "list",
                                            "inferenceservices.serving.kserve.io", ns, NULL);
        json_array_foreach(json_object_get(list, "items"), i, it)
                if (json_array_append_new(items, ui_isvc_view(it)) < 0)
                        return -ENOMEM;
        next = json_get_string_path(list, "metadata", "continue", NULL);
        return bff_reply_data(c, 200,
                              json_pack("{s:O,s:s}", "items", items, "nextPageToken",
                                        next ? next : ""));
}

int bff_api_isvc_get(struct call *c)
{
        CLEANUP(bff_kube_holdp) struct kube_hold h = { 0 };
        CLEANUP(ui_json_decrefp) json_t *obj = NULL;
        const char *ns = http_req_param(c->req, "ns"), *name = http_req_param(c->req, "name");
        struct kube_status st;
        int r;

        r = bff_kube_hold_get(c, false, &h);
        if (r < 0)
                return bff_reply_kube_unconfigured(c, r);
        r = kube_get(h.k, &BFF_GVR_ISVC, ns, name, &obj, &st);
        if (r < 0)
                return bff_reply_kube_error(c, r, &st, "get", "inferenceservices.serving.kserve.io",
                                            ns, name);
        return bff_reply_data(c, 200, ui_isvc_view(obj));
}

int bff_list_all(struct kube_client *k, const struct gvr *r, const char *ns,
                 const struct kube_list_options *sel, int (*fn)(void *ud, const json_t *item),
                 void *ud, struct kube_status *st)
{
        AUTOFREE char *cont = NULL;

        for (unsigned page = 0; page < LIST_PAGES_MAX; page++) {
                CLEANUP(ui_json_decrefp) json_t *list = NULL;
                struct kube_list_options lo = {
                        .limit = KUBE_PAGE_MAX,
                        .continue_token = cont,
                        .label_selector = sel ? sel->label_selector : NULL,
                        .field_selector = sel ? sel->field_selector : NULL,
                };
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

int bff_api_trainedmodels(struct call *c)
{
        CLEANUP(bff_kube_holdp) struct kube_hold h = { 0 };
        CLEANUP(ui_json_decrefp) json_t *items = json_array();
        const char *ns = http_req_param(c->req, "ns");
        struct tm_collect t = { .isvc = http_req_param(c->req, "name"), .items = items };
        struct kube_status st;
        int r;

        if (!items)
                return -ENOMEM;
        r = bff_kube_hold_get(c, false, &h);
        if (r < 0)
                return bff_reply_kube_unconfigured(c, r);
        r = bff_list_all(h.k, &BFF_GVR_TM, ns, NULL, tm_collect_one, &t, &st);
        if (r == -ENOMEM)
                return r;
        if (r < 0)
                return bff_reply_kube_error(c, r, &st, "list", "trainedmodels.serving.kserve.io",
                                            ns, NULL);
        return bff_reply_data(c, 200, json_pack("{s:O}", "items", items));
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

int bff_api_events(struct call *c)
{
        CLEANUP(bff_kube_holdp) struct kube_hold h = { 0 };
        CLEANUP(ui_json_decrefp) json_t *items = json_array();
        const char *ns = http_req_param(c->req, "ns");
        const char *kind = http_req_query(c->req, "kind"), *name = http_req_query(c->req, "name");
        struct buf sel = BUF_INIT(1024);
        struct kube_status st;
        unsigned limit;
        int r;

        if (!items)
                return -ENOMEM;
        if (bff_query_uint(c, "limit", EVENTS_DEFAULT, EVENTS_MAX, &limit) < 0)
                return 0;
        if ((kind && !selector_value_ok(kind)) || (name && !selector_value_ok(name)))
                return bff_reply_error(
                        c->resp, 400, "ui",
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
        r = bff_kube_hold_get(c, false, &h);
        if (r < 0) {
                buf_release(&sel);
                return bff_reply_kube_unconfigured(c, r);
        }
        r = bff_list_all(h.k, &BFF_GVR_EVENTS, ns,
                         &(struct kube_list_options){ .field_selector = sel.len ? buf_str(&sel)
                                                                                : NULL },
                         event_collect_one, items, &st);
        buf_release(&sel);
        if (r == -ENOMEM)
                return r;
        if (r < 0)
                return bff_reply_kube_error(c, r, &st, "list", "events", ns, NULL);
        return bff_reply_events(c, items, limit);
}

int bff_reply_events(struct call *c, const json_t *items, unsigned limit)
{
        CLEANUP(ui_json_decrefp) json_t *out = json_array();
        AUTOFREE json_t **sorted = NULL;
        size_t n = json_array_size(items);

        if (!out)
                return -ENOMEM;
        sorted = calloc(n ? n : 1, sizeof(json_t *));
        if (!sorted)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++)
                sorted[i] = json_array_get(items, i);
        qsort(sorted, n, sizeof(json_t *), event_newest_first);
        for (size_t i = 0; i < n && i < limit; i++)
                if (json_array_append(out, sorted[i]) < 0)
                        return -ENOMEM;
        return bff_reply_data(c, 200, json_pack("{s:O}", "items", out));
}
