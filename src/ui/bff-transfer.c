/* SPDX-License-Identifier: Apache-2.0 */
/*
 * modelplane ui: model transfer jobs (bff-internal.h; docs/ui.md, "Model transfer jobs"),
 * upstream's /model_registry/{mr}/model_transfer_jobs. For a user who may use the registry {mr}
 * (its Service's get, as every registry route), every Kubernetes call is made as the user
 * (impersonation or the user's token), so RBAC decides what the user may list, create and
 * delete. What to write is ui/transfer.h's decision; this shell writes it in upstream's order
 * (the metadata ConfigMap, the Secrets, the Job, then the Job as their owner) and removes what it
 * wrote when a later write is refused. Credentials go into Secrets only: never into an answer or
 * a log line.
 */
#include "ui/bff-internal.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "json/json-util.h"
#include "kube/client.h"
#include "ui/deploy.h"
#include "ui/transfer.h"
#include "ui/views.h"
#include "util/log.h"
#include "util/uuid.h"

static const struct gvr GVR_JOBS = { "batch", "v1", "jobs" };
static const struct gvr GVR_CONFIGMAPS = { "", "v1", "configmaps" };
static const struct gvr GVR_SECRETS = { "", "v1", "secrets" };
static const struct gvr GVR_PODS = { "", "v1", "pods" };

#define TRANSFER_PODS_MAX   50U  /* pods of one job whose events are read */
#define TRANSFER_EVENTS_MAX 500U /* events answered for one job */

/* What a route works on: the registry (authorized), a client as the caller. */
struct tctx {
        struct ui_registry reg;
        struct kube_hold h;
        const char *ns; /* the job's namespace */
};

static void tctx_done(struct tctx *x)
{
        bff_kube_holdp(&x->h);
}

/* The registry of the route, authorized, and a client as the caller; 1 after a reply. */
static int begin(struct call *c, struct tctx *x)
{
        int r = bff_registry_resolve(c, http_req_param(c->req, "mr"), &x->reg);

        if (r != 0)
                return r;
        if (streq(c->req->method, "POST") || streq(c->req->method, "PATCH")) {
                struct error_detail err = { 0 };

                /* the job is given the registry's address: one it can use, before any write */
                if (!x->reg.url[0])
                        return bff_refused(bff_reply_error(
                                c->resp, 503, "registry",
                                "the model registry '%s' has no address (--registry-url)",
                                x->reg.name));
                if (ui_transfer_registry_check(x->reg.url, &err) < 0)
                        return bff_refused(
                                bff_reply_error(c->resp, 502, "registry", "%s", err.message));
        }
        r = bff_kube_hold_get(c, false, &x->h);
        if (r < 0)
                return bff_refused(bff_reply_kube_unconfigured(c, r));
        return 0;
}

/* The jobNamespace query parameter: required (upstream's rule) unless optional; 1 after a 400. */
static int job_namespace(struct call *c, bool required, const char **ret)
{
        const char *ns = http_req_query(c->req, "jobNamespace");

        *ret = ns;
        if (!ns && required)
                return bff_refused(bff_reply_error(c->resp, 400, "ui",
                                                   "missing required query parameter: "
                                                   "jobNamespace"));
        if (ns && !ui_rfc1123_label(ns))
                return bff_refused(bff_reply_error(c->resp, 400, "ui",
                                                   "jobNamespace \"%.80s\" is not a namespace name",
                                                   ns));
        return 0;
}

static int reply_refusal(struct call *c, int r, const struct error_detail *err)
{
        if (r == -ENOMEM)
                return r;
        return bff_reply_error(c->resp, 400, "ui", "%s", err->message);
}

static int not_found(struct call *c, const char *ns, const char *name)
{
        return bff_refused(bff_reply_error(c->resp, 404, "ui",
                                           "no model transfer job named '%s' of the model "
                                           "registry '%s' in namespace %s",
                                           name, c->reg ? c->reg->name : "", ns));
}

/* Reads the transfer job name of this registry in x->ns; 1 after a reply (404 when it is no
 * transfer job of the registry). */
static int read_job(struct call *c, struct tctx *x, const char *name, json_t **ret)
{
        struct kube_status st = { 0 };
        int r = kube_get(x->h.k, &GVR_JOBS, x->ns, name, ret, &st);

        if (r == -ENOENT)
                return not_found(c, x->ns, name);
        if (r == -ENOMEM)
                return r;
        if (r < 0)
                return bff_refused(
                        bff_reply_kube_error(c, r, &st, "get", "jobs.batch", x->ns, name));
        if (!ui_transfer_job_of(*ret, x->reg.name))
                return not_found(c, x->ns, name);
        return 0;
}

/* ---- the pods (upstream shows an image pull failure before the Job does, and the ids the job
 * registered) ---- */

/* "ns/job" -> [pods] */
static int pod_collect(void *ud, const json_t *pod)
{
        json_t *by_job = ud, *list;
        const char *job = json_get_string_path(pod, "metadata", "labels", "job-name", NULL);
        const char *ns = json_get_string_path(pod, "metadata", "namespace", NULL);
        char key[2 * UI_K8S_NAME_MAX + 8];

        if (!job || !ns)
                return 0;
        (void)snprintf(key, sizeof(key), "%s/%s", ns, job);
        list = json_object_get(by_job, key);
        if (!list) {
                list = json_array();
                if (!list || json_object_set_new(by_job, key, list) < 0)
                        return -ENOMEM;
        }
        return json_array_append(list, (json_t *)pod) < 0 ? -ENOMEM : 0;
}

/* Applies what the jobs' pods show to the views (items); a failed read of the pods leaves the
 * views as the Jobs say (the user may not list pods: upstream goes on too). */
static int apply_pods(struct tctx *x, const char *ns, const char *selector, json_t *items)
{
        CLEANUP(ui_json_decrefp) json_t *by_job = json_object();
        struct kube_list_options lo = { .label_selector = selector };
        struct kube_status st = { 0 };
        json_t *v;
        size_t i;
        int r;

        if (!by_job)
                return -ENOMEM;
        r = bff_list_all(x->h.k, &GVR_PODS, ns, &lo, pod_collect, by_job, &st);
        if (r == -ENOMEM)
                return r;
        if (r < 0)
                return 0;
        json_array_foreach(items, i, v) {
                char key[2 * UI_K8S_NAME_MAX + 8];

                (void)snprintf(key, sizeof(key), "%s/%s",
                               json_string_value(json_object_get(v, "namespace")),
                               json_string_value(json_object_get(v, "name")));
                r = ui_transfer_view_pods(v, json_object_get(by_job, key));
                if (r < 0)
                        return r;
        }
        return 0;
}

/* ---- reads ---- */

static int list_one(void *ud, const json_t *job)
{
        json_t *items = ud;

        if (json_get_path(job, "metadata", "deletionTimestamp", NULL))
                return 0; /* going: upstream leaves it out */
        return json_array_append_new(items, ui_transfer_view(job)) < 0 ? -ENOMEM : 0;
}

int bff_api_transfer_jobs(struct call *c)
{
        CLEANUP(tctx_done) struct tctx x = { 0 };
        CLEANUP(ui_json_decrefp) json_t *items = json_array();
        char selector[128 + UI_K8S_NAME_MAX];
        struct kube_status st = { 0 };
        struct kube_list_options lo = { .label_selector = selector };
        size_t n;
        int r;

        if (!items)
                return -ENOMEM;
        r = job_namespace(c, false, &x.ns);
        if (r == 0)
                r = begin(c, &x);
        if (r != 0)
                return r < 0 ? r : 0;
        (void)snprintf(selector, sizeof(selector), "%s=%s,%s=%s", UI_TRANSFER_LABEL_TYPE,
                       UI_TRANSFER_JOB_TYPE, UI_TRANSFER_LABEL_REGISTRY, x.reg.name);
        r = bff_list_all(x.h.k, &GVR_JOBS, x.ns, &lo, list_one, items, &st);
        if (r == -EACCES && st.http_code == 403 && !x.ns)
                return bff_reply_error(c->resp, 403, "kubernetes",
                                       "user %s may not list jobs.batch in every namespace: give "
                                       "the jobNamespace query parameter",
                                       c->id->user);
        if (r == -ENOMEM)
                return r;
        if (r < 0)
                return bff_reply_kube_error(c, r, &st, "list", "jobs.batch", x.ns, NULL);
        if (json_array_size(items) > 0) {
                (void)snprintf(selector, sizeof(selector), "%s=%s", UI_TRANSFER_LABEL_TYPE,
                               UI_TRANSFER_JOB_TYPE);
                r = apply_pods(&x, x.ns, selector, items);
                if (r < 0)
                        return r;
        }
        n = json_array_size(items);
        return bff_reply_data(c, 200,
                              json_pack("{s:o,s:I,s:I,s:s}", "items", json_incref(items), "size",
                                        (json_int_t)n, "pageSize", (json_int_t)n, "nextPageToken",
                                        ""));
}

int bff_api_transfer_job(struct call *c)
{
        CLEANUP(tctx_done) struct tctx x = { 0 };
        CLEANUP(ui_json_decrefp) json_t *job = NULL, *items = NULL;
        const char *name = http_req_param(c->req, "name");
        char selector[UI_K8S_NAME_MAX + 16];
        int r;

        r = job_namespace(c, true, &x.ns);
        if (r == 0)
                r = begin(c, &x);
        if (r == 0)
                r = read_job(c, &x, name, &job);
        if (r != 0)
                return r < 0 ? r : 0;
        items = json_pack("[o]", ui_transfer_view(job));
        if (!items)
                return -ENOMEM;
        (void)snprintf(selector, sizeof(selector), "job-name=%s", name);
        r = apply_pods(&x, x.ns, selector, items);
        if (r < 0)
                return r;
        return bff_reply_data(c, 200, json_incref(json_array_get(items, 0)));
}

/* ---- events: those of the job's pods, as upstream reads them ---- */

struct events_acc {
        json_t *out;
};

static int event_one(void *ud, const json_t *ev)
{
        struct events_acc *a = ud;

        if (json_array_size(a->out) >= TRANSFER_EVENTS_MAX)
                return 0;
        return json_array_append_new(a->out, ui_transfer_event_view(ev)) < 0 ? -ENOMEM : 0;
}

int bff_api_transfer_job_events(struct call *c)
{
        CLEANUP(tctx_done) struct tctx x = { 0 };
        CLEANUP(ui_json_decrefp) json_t *job = NULL, *pods = NULL;
        CLEANUP(ui_json_decrefp) json_t *events = json_array();
        struct events_acc acc = { .out = events };
        const char *name = http_req_param(c->req, "name");
        char selector[UI_K8S_NAME_MAX + 16];
        struct kube_list_options lo = { .label_selector = selector, .limit = TRANSFER_PODS_MAX };
        struct kube_status st = { 0 };
        json_t *pod;
        size_t i;
        int r;

        if (!events)
                return -ENOMEM;
        r = job_namespace(c, true, &x.ns);
        if (r == 0)
                r = begin(c, &x);
        if (r == 0)
                r = read_job(c, &x, name, &job);
        if (r != 0)
                return r < 0 ? r : 0;
        (void)snprintf(selector, sizeof(selector), "job-name=%s", name);
        r = kube_list(x.h.k, &GVR_PODS, x.ns, &lo, &pods, &st);
        if (r == -ENOMEM)
                return r;
        if (r < 0)
                return bff_reply_kube_error(c, r, &st, "list", "pods", x.ns, NULL);
        json_array_foreach(json_object_get(pods, "items"), i, pod) {
                char field[UI_K8S_NAME_MAX * 2 + 64];
                struct kube_list_options elo = { .field_selector = field };
                const char *pod_name = json_get_string_path(pod, "metadata", "name", NULL);

                if (!pod_name)
                        continue;
                (void)snprintf(field, sizeof(field),
                               "involvedObject.kind=Pod,involvedObject.name=%s", pod_name);
                r = bff_list_all(x.h.k, &BFF_GVR_EVENTS, x.ns, &elo, event_one, &acc, &st);
                if (r == -ENOMEM)
                        return r;
                if (r < 0)
                        return bff_reply_kube_error(c, r, &st, "list", "events", x.ns, NULL);
        }
        return bff_reply_data(c, 200, json_pack("{s:O}", "events", events));
}

/* ---- writes ---- */

/* Deletes what a job owns (its ConfigMap and Secrets), as the caller; a missing one is fine.
 * 0, or the first failure with st, *ret_res and *ret_name filled. */
static int delete_owned(struct tctx *x, const struct ui_transfer_names *n, struct kube_status *st,
                        const char **ret_res, const char **ret_name)
{
        const struct {
                const struct gvr *gvr;
                const char *res, *name;
        } objs[] = {
                { &GVR_CONFIGMAPS, "configmaps", n->configmap },
                { &GVR_SECRETS, "secrets", n->source_secret },
                { &GVR_SECRETS, "secrets", n->dest_secret },
        };
        int first = 0;

        for (size_t i = 0; i < ELEMENTSOF(objs); i++) {
                int r;

                if (!objs[i].name)
                        continue;
                r = kube_delete(x->h.k, objs[i].gvr, x->ns, objs[i].name, NULL, NULL, st);
                if (r < 0 && r != -ENOENT && first == 0) {
                        first = r;
                        *ret_res = objs[i].res;
                        *ret_name = objs[i].name;
                }
        }
        return first;
}

/* Removes what a failed create wrote (as the caller); a removal that fails is logged. */
static void undo(struct tctx *x, const struct ui_transfer_names *n)
{
        struct kube_status st = { 0 };
        const char *res = NULL, *name = NULL;
        int r = delete_owned(x, n, &st, &res, &name);

        if (r < 0)
                log_warn_errno(r,
                               "ui: transfer job: cannot remove %s %s in namespace %s after a "
                               "failed create",
                               res, name, x->ns);
}

/* Creates obj (takes ownership; NULL: -ENOMEM) as the caller: *ret_name its generated name
 * (owned). 0; 1 after the refusal is written. */
static int create_named(struct call *c, struct tctx *x, const struct gvr *gvr, const char *res,
                        json_t *obj, char **ret_name)
{
        CLEANUP(ui_json_decrefp) json_t *in = obj, *out = NULL;
        struct kube_status st = { 0 };
        const char *name;
        int r;

        if (!in)
                return -ENOMEM;
        r = kube_create(x->h.k, gvr, x->ns, in, NULL, &out, &st);
        if (r == -ENOMEM)
                return r;
        if (r < 0)
                return bff_refused(bff_reply_kube_error(c, r, &st, "create", res, x->ns, NULL));
        name = json_get_string_path(out, "metadata", "name", NULL);
        *ret_name = strdup(name ? name : "");
        return *ret_name ? 0 : -ENOMEM;
}

/* Makes the Job the owner of what it uses, so that Kubernetes collects them with it; a refusal
 * is logged (the objects stay until the job is deleted through this API). */
static void own(struct tctx *x, const json_t *job, const struct gvr *gvr, const char *name)
{
        CLEANUP(ui_json_decrefp) json_t *patch = ui_transfer_owner_patch(job);
        struct kube_status st = { 0 };
        int r;

        if (!name || !patch)
                return;
        r = kube_patch(x->h.k, gvr, x->ns, name, KUBE_PATCH_MERGE, patch, NULL, NULL, &st);
        if (r < 0)
                log_warn_errno(r,
                               "ui: transfer job: cannot set the Job as the owner of %s in "
                               "namespace %s",
                               name, x->ns);
}

struct made {
        char *configmap, *source_secret, *dest_secret;
};

static void made_done(struct made *m)
{
        free(m->configmap);
        free(m->source_secret);
        free(m->dest_secret);
}

static struct ui_transfer_names names_of(const struct made *m)
{
        return (struct ui_transfer_names){ m->configmap, m->source_secret, m->dest_secret };
}

/* The job's ConfigMap and Secrets; dest_data (borrowed, may be NULL): a retry's reused
 * destination credentials. 0; 1 after a reply (what was written is removed). */
static int create_parts(struct call *c, struct tctx *x, const struct ui_transfer_req *q,
                        const char *job_id, json_t *dest_data, struct made *m)
{
        int r;

        r = create_named(c, x, &GVR_CONFIGMAPS, "configmaps", ui_transfer_configmap(q, job_id),
                         &m->configmap);
        if (r == 0 && streq(q->source_type, "s3"))
                r = create_named(c, x, &GVR_SECRETS, "secrets",
                                 ui_transfer_source_secret(q, job_id), &m->source_secret);
        if (r == 0)
                r = create_named(c, x, &GVR_SECRETS, "secrets",
                                 dest_data ? ui_transfer_dest_secret_copy(q, job_id, dest_data)
                                           : ui_transfer_dest_secret(q, job_id),
                                 &m->dest_secret);
        if (r != 0) {
                struct ui_transfer_names n = names_of(m);

                undo(x, &n);
        }
        return r;
}

/* Writes a validated job; *ret: the created Job. 0; 1 after a reply. */
static int create_job(struct call *c, struct tctx *x, const struct ui_transfer_req *q,
                      json_t *dest_data, json_t **ret)
{
        CLEANUP(made_done) struct made m = { 0 };
        CLEANUP(ui_json_decrefp) json_t *job = NULL;
        struct ui_transfer_target t = { .registry_name = x->reg.name,
                                        .registry_url = x->reg.url,
                                        .image = c->s->transfer_image };
        struct ui_transfer_names n;
        struct kube_status st = { 0 };
        struct error_detail err = { 0 };
        char job_id[UUID_STRING_LEN];
        int r;

        if (uuid_random(job_id) < 0)
                return -EIO;
        r = create_parts(c, x, q, job_id, dest_data, &m);
        if (r != 0)
                return r;
        n = names_of(&m);
        r = ui_transfer_job(q, job_id, &n, &t, &job, &err);
        if (r == 0)
                r = kube_create(x->h.k, &GVR_JOBS, x->ns, job, NULL, ret, &st);
        if (r < 0)
                undo(x, &n);
        if (r == -ENOMEM)
                return r;
        if (r == -EEXIST)
                return bff_refused(bff_reply_error(c->resp, 409, "kubernetes",
                                                   "a model transfer job named %s already exists "
                                                   "in namespace %s",
                                                   q->name, x->ns));
        if (r == -EINVAL && err.message[0])
                return bff_refused(bff_reply_error(c->resp, 502, "registry", "%s", err.message));
        if (r < 0)
                return bff_refused(
                        bff_reply_kube_error(c, r, &st, "create", "jobs.batch", x->ns, q->name));
        own(x, *ret, &GVR_CONFIGMAPS, n.configmap);
        own(x, *ret, &GVR_SECRETS, n.source_secret);
        own(x, *ret, &GVR_SECRETS, n.dest_secret);
        return 0;
}

/* 409 when a Job of that name exists (asked first: nothing is written for a clash); 1 after a
 * reply. */
static int name_free(struct call *c, struct tctx *x, const char *name)
{
        CLEANUP(ui_json_decrefp) json_t *job = NULL;
        struct kube_status st = { 0 };
        int r = kube_get(x->h.k, &GVR_JOBS, x->ns, name, &job, &st);

        if (r == -ENOENT)
                return 0;
        if (r == -ENOMEM)
                return r;
        if (r < 0)
                return bff_refused(
                        bff_reply_kube_error(c, r, &st, "get", "jobs.batch", x->ns, name));
        return bff_refused(bff_reply_error(c->resp, 409, "kubernetes",
                                           "a model transfer job named %s already exists in "
                                           "namespace %s",
                                           name, x->ns));
}

static int reply_job(struct call *c, unsigned status, const json_t *job)
{
        json_t *v = ui_transfer_view(job);

        return v ? bff_reply_data(c, status, v) : -ENOMEM;
}

int bff_api_transfer_job_create(struct call *c)
{
        CLEANUP(tctx_done) struct tctx x = { 0 };
        CLEANUP(ui_json_decrefp) json_t *in = NULL, *job = NULL;
        CLEANUP(ui_transfer_req_done) struct ui_transfer_req q = { 0 };
        struct error_detail err = { 0 };
        char location[512];
        json_t *data = NULL;
        int r;

        r = bff_body_data(c, &in, &data);
        if (r != 0)
                return r < 0 ? r : 0;
        r = ui_transfer_req_read(data, &q, &err);
        if (r >= 0)
                r = ui_transfer_validate(&q, false, &err);
        if (r < 0)
                return reply_refusal(c, r, &err);
        x.ns = q.ns;
        r = begin(c, &x);
        if (r == 0)
                r = name_free(c, &x, q.name);
        if (r == 0)
                r = create_job(c, &x, &q, NULL, &job);
        if (r != 0)
                return r < 0 ? r : 0;
        (void)snprintf(location, sizeof(location), "%s/%s", c->req->path, q.name);
        r = reply_job(c, 201, job);
        return r < 0 ? r : http_resp_add_header(c->resp, "Location", location);
}

/* Deletes a transfer job and what it owns, each refusal asked first (SelfSubjectAccessReview)
 * so that nothing is half deleted. 0; 1 after a reply. */
static int delete_job(struct call *c, struct tctx *x, const json_t *job)
{
        static const char *const need[][2] = { { "batch", "jobs" },
                                               { "", "configmaps" },
                                               { "", "secrets" } };
        const char *name = json_get_string_path(job, "metadata", "name", NULL);
        struct ui_transfer_names n = ui_transfer_names_of(job);
        struct kube_delete_options opt = { .propagation_policy = "Background" };
        struct kube_status st = { 0 };
        const char *res = NULL, *obj = NULL;
        int r;

        for (size_t i = 0; i < ELEMENTSOF(need); i++) {
                r = bff_access_review(x->h.k, "delete", need[i][0], need[i][1], x->ns);
                if (r == 0)
                        return bff_refused(bff_reply_error(
                                c->resp, 403, "kubernetes",
                                "user %s may not delete %s%s%s in namespace %s (a transfer job is "
                                "deleted with its ConfigMap and Secrets)",
                                c->id->user, need[i][1], *need[i][0] ? "." : "", need[i][0],
                                x->ns));
                if (r == -ENOMEM)
                        return r;
                /* a review that cannot be made: the deletes themselves decide */
        }
        r = kube_delete(x->h.k, &GVR_JOBS, x->ns, name, &opt, NULL, &st);
        if (r == -ENOENT)
                return not_found(c, x->ns, name);
        if (r == -ENOMEM)
                return r;
        if (r < 0)
                return bff_refused(
                        bff_reply_kube_error(c, r, &st, "delete", "jobs.batch", x->ns, name));
        r = delete_owned(x, &n, &st, &res, &obj);
        if (r == -ENOMEM)
                return r;
        if (r < 0)
                return bff_refused(bff_reply_kube_error(c, r, &st, "delete", res, x->ns, obj));
        return 0;
}

int bff_api_transfer_job_delete(struct call *c)
{
        CLEANUP(tctx_done) struct tctx x = { 0 };
        CLEANUP(ui_json_decrefp) json_t *job = NULL;
        int r;

        r = job_namespace(c, true, &x.ns);
        if (r == 0)
                r = begin(c, &x);
        if (r == 0)
                r = read_job(c, &x, http_req_param(c->req, "name"), &job);
        if (r == 0)
                r = delete_job(c, &x, job);
        if (r != 0)
                return r < 0 ? r : 0;
        return reply_job(c, 200, job);
}

/* ?deleteOldJob=true: the old job and what it owns go, as upstream does it: a failure is
 * logged, the new job stands. */
static void delete_old(struct tctx *x, const json_t *job)
{
        const char *name = json_get_string_path(job, "metadata", "name", NULL);
        struct ui_transfer_names n = ui_transfer_names_of(job);
        struct kube_delete_options opt = { .propagation_policy = "Background" };
        struct kube_status st = { 0 };
        const char *res = NULL, *obj = NULL;
        int r;

        r = kube_delete(x->h.k, &GVR_JOBS, x->ns, name, &opt, NULL, &st);
        if (r >= 0 || r == -ENOENT)
                r = delete_owned(x, &n, &st, &res, &obj);
        else
                res = "jobs.batch", obj = name;
        if (r < 0)
                log_warn_errno(r,
                               "ui: transfer job: the old job's %s %s in namespace %s was not "
                               "deleted",
                               res, obj, x->ns);
}

/* A retry's credentials from the old job's Secrets: the S3 source's where the request gives
 * none, and the destination's data to reuse when it gives no username and password
 * (*ret_dest_data, new reference, NULL when not reused). 0; 1 after a reply. */
static int retry_creds(struct call *c, struct tctx *x, struct ui_transfer_req *q,
                       const struct ui_transfer_names *old, json_t **ret_dest_data)
{
        CLEANUP(ui_json_decrefp) json_t *src = NULL, *dest = NULL;
        struct kube_status st = { 0 };
        json_t *data;
        int r;

        if (old->source_secret && streq(q->source_type ? q->source_type : "", "s3") &&
            kube_get(x->h.k, &GVR_SECRETS, x->ns, old->source_secret, &src, &st) >= 0) {
                r = ui_transfer_retry_source_creds(q, json_object_get(src, "data"));
                if (r == -ENOMEM)
                        return r;
        }
        if (q->username || q->password || !old->dest_secret)
                return 0;
        r = kube_get(x->h.k, &GVR_SECRETS, x->ns, old->dest_secret, &dest, &st);
        if (r == -ENOMEM)
                return r;
        if (r < 0)
                return bff_refused(
                        bff_reply_kube_error(c, r, &st, "get", "secrets", x->ns, old->dest_secret));
        data = json_object_get(dest, "data");
        if (json_string_length(json_object_get(data, ".dockerconfigjson")) > 0)
                *ret_dest_data = json_incref(data);
        return 0;
}

/* PATCH: upstream's retry of a failed job: a new job (the body's name, in its namespace) from
 * the old one's settings and credentials, what the body gives replacing them; the old job
 * deleted too with ?deleteOldJob=true. */
int bff_api_transfer_job_update(struct call *c)
{
        CLEANUP(tctx_done) struct tctx x = { 0 };
        CLEANUP(ui_json_decrefp)
        json_t *in = NULL, *old = NULL, *cm = NULL, *dest = NULL, *job = NULL;
        CLEANUP(ui_transfer_req_done) struct ui_transfer_req q = { 0 };
        const char *old_name = http_req_param(c->req, "name");
        const char *del = http_req_query(c->req, "deleteOldJob");
        struct ui_transfer_names old_names;
        struct error_detail err = { 0 };
        struct kube_status st = { 0 };
        json_t *data = NULL;
        int r;

        r = bff_body_data(c, &in, &data);
        if (r != 0)
                return r < 0 ? r : 0;
        r = ui_transfer_req_read(data, &q, &err);
        if (r >= 0 && !q.ns)
                r = error_detail_set_field(&err, ERROR_INVALID, -EINVAL, "namespace",
                                           "namespace: the job's namespace is required in the "
                                           "request body for a retry");
        if (r >= 0 && !ui_rfc1123_label(q.ns))
                r = error_detail_set_field(&err, ERROR_INVALID, -EINVAL, "namespace",
                                           "namespace: is not a namespace name");
        if (r < 0)
                return reply_refusal(c, r, &err);
        x.ns = q.ns;
        r = begin(c, &x);
        if (r == 0)
                r = read_job(c, &x, old_name, &old);
        if (r != 0)
                return r < 0 ? r : 0;
        old_names = ui_transfer_names_of(old);
        if (old_names.configmap &&
            kube_get(x.h.k, &GVR_CONFIGMAPS, x.ns, old_names.configmap, &cm, &st) == -ENOMEM)
                return -ENOMEM;
        r = ui_transfer_retry_fill(&q, old_name, old, json_object_get(cm, "data"), &err);
        if (r < 0)
                return reply_refusal(c, r, &err);
        r = retry_creds(c, &x, &q, &old_names, &dest);
        if (r != 0)
                return r < 0 ? r : 0;
        r = ui_transfer_validate(&q, dest != NULL, &err);
        if (r < 0)
                return reply_refusal(c, r, &err);
        r = name_free(c, &x, q.name);
        if (r == 0)
                r = create_job(c, &x, &q, dest, &job);
        if (r == 0 && del && streq(del, "true"))
                delete_old(&x, old);
        if (r != 0)
                return r < 0 ? r : 0;
        return reply_job(c, 200, job);
}
