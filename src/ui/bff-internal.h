/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

/*
 * What the files of modelplane ui's request handler share (not an API): bff.c (the front: the
 * route table, identity and CSRF, static files, caching and security headers; construction; the
 * client pools and the reply helpers), bff-kube.c (the Kubernetes views, as the user; the access
 * checks), bff-deploy.c (deploying, deployments, the archive guard), bff-forward.c (the
 * forwarding to a model registry and the catalog), bff-registries.c (which registries there
 * are, and the one a registry route names), bff-settings.c (the administrators' settings),
 * bff-catalog-settings.c (the catalog's sources) and bff-transfer.c (model transfer jobs).
 */

#include <jansson.h>
#include <pthread.h>
#include <stdbool.h>

#include "ui/access.h"
#include "ui/bff.h"
#include "ui/registries.h"
#include "util/macro.h"

#define POOL_MAX 16U

struct kube_client;
struct ui_static;

/* ---- pools of upstream clients (libcurl handles are one thread at a time) ---- */

struct pool {
        pthread_mutex_t lock;
        void *items[POOL_MAX];
        size_t n;
        void (*destroy)(void *item);
};

/* A pooled client, or NULL when the pool is empty (the caller makes one). */
void *bff_pool_get(struct pool *p);
/* Gives it (may be NULL) back; destroyed when the pool is full. */
void bff_pool_put(struct pool *p, void *it);

enum upstream { UP_REGISTRY, UP_CATALOG };

struct ui_server {
        struct ui_static *st;
        char *registry_url, *registry_name, *catalog_url, *ca_file;
        /* The configured registry (--registry-url; url empty when none), always offered, and
         * where the others are discovered (docs/ui.md, "Several registries"). */
        struct ui_registry default_reg;
        char registry_ns[UI_K8S_NAME_MAX + 1];
        bool registry_external; /* use the Services' external-address-rest */
        long timeout_ms;
        struct ui_auth_config auth;
        uint8_t csrf_key[UI_CSRF_KEY_SIZE];
        struct kube_client *kube_own;   /* the server's credentials (impersonation, own calls) */
        struct kube_client *kube_token; /* no credentials of its own: bearer passthrough */
        char *kube_server;
        struct pool up[2]; /* enum upstream */
        struct pool kown, ktoken;
        /* Authorization of the registry and catalog routes (docs/ui.md, "Authorization"): the
         * Service whose get permission grants each upstream, and the decisions of late. */
        struct ui_service_ref access_svc[2]; /* enum upstream */
        bool skip_access_review;
        char *transfer_image;                 /* the model transfer jobs' container image */
        struct ui_access_cache *access_cache; /* under access_lock */
        pthread_mutex_t access_lock;
};

/* One API request. */
struct call {
        struct ui_server *s;
        struct ui_identity *id;
        struct http_req *req;
        struct http_resp *resp;
        const struct ui_registry *reg; /* borrowed: the registry of a registry route, resolved */
};

int bff_reply_data(struct call *c, unsigned status, json_t *data);
int bff_reply_error(struct http_resp *resp, unsigned status, const char *source, const char *fmt,
                    ...) _printf_(4, 5);
/* A refusal was written (r: what writing it returned): 1, or its error. */
int bff_refused(int r);
/* An unsigned query parameter with a default and a maximum; -EINVAL after a 400 is written. */
int bff_query_uint(struct call *c, const char *key, unsigned def, unsigned max, unsigned *ret);

enum {
        F_LIST = 1 << 0,
        F_GUARD_MODEL = 1 << 1,   /* a PATCH archiving it is refused while it is deployed */
        F_GUARD_VERSION = 1 << 2, /* likewise for a model version */
};

struct api_route {
        int (*fn)(struct call *c); /* NULL: forwarded to upstream */
        enum upstream up;
        const char *path;         /* upstream path; "{x}" from the route's parameter x */
        const char *const *query; /* forwarded query parameters */
        unsigned flags;
};

/*
 * bff-kube.c: whether the caller may use what the Service svc grants (what: "the model registry
 * \"x\"", named in a refusal). 0 allowed; 1 when a refusal is written; negative errno.
 */
int bff_authorize_service(struct call *c, const struct ui_service_ref *svc, const char *what);
/*
 * bff-kube.c: whether the caller may use upstream up (RBAC: get on its Service, asked with a
 * SubjectAccessReview or SelfSubjectAccessReview, cached briefly). 0 allowed; 1 when a refusal
 * (403, or 5xx when it cannot be decided) is written; negative errno.
 */
int bff_authorize(struct call *c, enum upstream up);

/* ---- bff-kube.c: Kubernetes clients and calls, shared with bff-deploy.c ---- */

struct gvr;
struct kube_list_options;
struct kube_status;
struct error_detail;

extern const struct gvr BFF_GVR_NAMESPACES, BFF_GVR_EVENTS, BFF_GVR_ISVC, BFF_GVR_TM,
        BFF_GVR_SERVICES;

/* A held Kubernetes client, released (back to its pool) by cleanup. */
struct kube_hold {
        struct call *c;
        struct kube_client *k;
        bool bearer;
};
void bff_kube_holdp(struct kube_hold *h);
/* A client as the caller (own = false: impersonating, or the bearer token), or as the server
 * itself (own = true). -ENXIO when there is no Kubernetes API configured. */
int bff_kube_hold_get(struct call *c, bool own, struct kube_hold *h);
/* The replies for a client that could not be had (r), and for a failed call. */
int bff_reply_kube_unconfigured(struct call *c, int r);
int bff_reply_kube_error(struct call *c, int r, const struct kube_status *st, const char *verb,
                         const char *resource, const char *ns, const char *name);
/* POSTs body (takes ownership; NULL: -ENOMEM) to path as k; *ret_out: new reference. */
int bff_kube_post(struct kube_client *k, const char *path, json_t *body, json_t **ret_out,
                  struct kube_status *st);
/* SelfSubjectAccessReview as k's identity (ns NULL: cluster-wide): 1 allowed, 0 not, errno. */
int bff_access_review(struct kube_client *k, const char *verb, const char *group,
                      const char *resource, const char *ns);
/* Lists r in ns (NULL: every namespace) with sel's selectors (may be NULL) page by page, at most
 * 20 pages of 500, calling fn for each item. 0, or a negative errno with st filled. */
int bff_list_all(struct kube_client *k, const struct gvr *r, const char *ns,
                 const struct kube_list_options *sel, int (*fn)(void *ud, const json_t *item),
                 void *ud, struct kube_status *st);
/* Appends to out (an array) the names of the namespaces in which the caller may list
 * InferenceServices (GET /namespaces). 0; 1 when a refusal is written; negative errno. */
int bff_visible_namespaces(struct call *c, json_t *out);
/* Replies {"items": events} newest first, at most limit of them (items borrowed). */
int bff_reply_events(struct call *c, const json_t *items, unsigned limit);

/* bff-kube.c: the routes answered from the Kubernetes API, as the caller. */
int bff_api_user(struct call *c);
int bff_api_namespaces(struct call *c);
int bff_api_isvc_list(struct call *c);
int bff_api_isvc_get(struct call *c);
int bff_api_trainedmodels(struct call *c);
int bff_api_events(struct call *c);

/* bff-deploy.c: deploying a registered version, its targets, the deployments of a model or a
 * version, an InferenceService's own events, and the refusal to archive what is deployed. */
int bff_api_deploy(struct call *c);
int bff_api_deploy_targets(struct call *c);
int bff_api_deployments(struct call *c);
int bff_api_isvc_events(struct call *c);
/* Before a forwarded PATCH of rt with body data: 1 when it archives a deployed model or
 * version and the refusal is written, 0 to go on, negative errno. */
int bff_archive_guard(struct call *c, const struct api_route *rt, const json_t *data);

/* bff-forward.c: a route forwarded to rt's upstream. */
int bff_forward(struct call *c, const struct api_route *rt);
/* A POST of body (len bytes of content_type) to path (relative to the catalog's API, already
 * encoded, with its query) of the configured catalog; replies with its answer or the failure in
 * words. The caller has authorized the catalog. */
int bff_catalog_post(struct call *c, const char *path, const char *content_type, const char *body,
                     size_t len);
/* A GET of path (relative to its API, already encoded) from c->reg, the registry the caller was
 * authorized for; *ret: new reference. 0, or 1 after the failure is replied in words, or errno. */
int bff_registry_get(struct call *c, const char *path, json_t **ret);
/*
 * bff-registries.c: the registry named name (NULL: the configured one), in the namespace of the
 * request's `namespace` parameter or the discovery namespace, if the caller may use it (its
 * Service's `get`, as for any registry route); fills *ret and sets c->reg = ret. 0; 1 when a
 * refusal (400, 403, 404, 503) is written; negative errno.
 */
int bff_registry_resolve(struct call *c, const char *name, struct ui_registry *ret);
/* The registry named name (NULL: the configured one) for its link labels only: no access check
 * and no address; sets c->reg = ret. 0; 1 after a 400 is written. */
int bff_registry_named(struct call *c, const char *name, struct ui_registry *ret);
/* GET /model_registry: the configured registry and those discovered for the caller. */
int bff_api_registries(struct call *c);
/* The namespace of the request's `namespace` parameter (*ret_given), else the discovery
 * namespace; NULL after a 400 is written (*ret_r: what writing it returned). */
const char *bff_registry_namespace(struct call *c, bool *ret_given, int *ret_r);

/* bff-settings.c: the settings routes, as the user (docs/ui.md, "Settings"). */
int bff_api_settings_registries(struct call *c);
int bff_api_settings_registry(struct call *c);
int bff_api_settings_registry_create(struct call *c);
int bff_api_settings_registry_update(struct call *c);
int bff_api_settings_registry_delete(struct call *c);
int bff_api_settings_certificates(struct call *c);
int bff_api_role_bindings(struct call *c);
int bff_api_role_binding_create(struct call *c);
int bff_api_role_binding_update(struct call *c);
int bff_api_role_binding_delete(struct call *c);
int bff_api_groups(struct call *c);

/* bff-catalog-settings.c: the catalog's source configurations, as the user. */
int bff_api_catalog_sources(struct call *c);
int bff_api_catalog_source(struct call *c);
int bff_api_catalog_source_create(struct call *c);
int bff_api_catalog_source_update(struct call *c);
int bff_api_catalog_source_delete(struct call *c);
int bff_api_catalog_source_preview(struct call *c);

/* bff-transfer.c: model transfer jobs, as the user (docs/ui.md, "Model transfer jobs"). */
int bff_api_transfer_jobs(struct call *c);
int bff_api_transfer_job(struct call *c);
int bff_api_transfer_job_create(struct call *c);
int bff_api_transfer_job_update(struct call *c);
int bff_api_transfer_job_delete(struct call *c);
int bff_api_transfer_job_events(struct call *c);

/* The "data" object of a write's {"data": {...}} body (borrowed from *in, a new reference the
 * caller releases); 1 after a refusal is written. */
int bff_body_data(struct call *c, json_t **in, json_t **ret_data);
