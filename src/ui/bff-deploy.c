/* SPDX-License-Identifier: Apache-2.0 */
/*
 * modelplane ui: deploying a registered version as a TrainedModel (as the user: RBAC decides),
 * the InferenceServices it can go to, the deployments of a model or a version, the events of one
 * InferenceService, and the refusal to archive what is deployed (bff-internal.h; the decisions
 * are ui/deploy.h's).
 */
#include "ui/bff-internal.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "json/json-util.h"
#include "kube/client.h"
#include "ui/deploy.h"
#include "ui/views.h"

#define DEPLOYMENTS_NAMESPACES_MAX 100U /* namespaces searched one by one for a model's */
#define GUARD_LIST_LIMIT           100U /* objects read per kind to name in an archive refusal */
#define EVENTS_DEFAULT             50U
#define EVENTS_MAX                 500U

/* ---- deploy ---- */

/* The registry side of a deploy: the version (deployable) and its artifacts; 1 after a reply. */
static int deploy_registry(struct call *c, const struct ui_deploy_request *rq,
                           struct ui_registry *reg, json_t **ret_version, json_t **ret_artifacts)
{
        char path[160], msg[512];
        int r;

        r = bff_registry_resolve(c, rq->registry, reg);
        if (r != 0)
                return r;
        (void)snprintf(path, sizeof(path), "/model_versions/%s", rq->version_id);
        r = bff_registry_get(c, path, ret_version);
        if (r != 0)
                return r;
        if (ui_deploy_version_check(*ret_version, msg, sizeof(msg)) < 0)
                return bff_refused(bff_reply_error(c->resp, 400, "registry", "%s", msg));
        (void)snprintf(path, sizeof(path), "/model_versions/%s/artifacts?pageSize=100",
                       rq->version_id);
        r = bff_registry_get(c, path, ret_artifacts);
        if (r != 0)
                return r;
        if (!ui_deploy_artifact(*ret_artifacts))
                return bff_refused(bff_reply_error(
                        c->resp, 400, "registry",
                        "version %s has no model artifact with a URI: register one (its URI "
                        "becomes the TrainedModel's storageUri)",
                        json_string_value(json_object_get(*ret_version, "name"))));
        return 0;
}

/* The InferenceService that will take it, read as the user; 1 after a reply. */
static int deploy_target(struct call *c, struct kube_client *k, const char *ns, const char *isvc,
                         json_t **ret)
{
        struct kube_status st = { 0 };
        char msg[512];
        int r;

        r = kube_get(k, &BFF_GVR_ISVC, ns, isvc, ret, &st);
        if (r == -ENOMEM)
                return r;
        if (r < 0)
                return bff_refused(bff_reply_kube_error(c, r, &st, "get",
                                                        "inferenceservices.serving.kserve.io", ns,
                                                        isvc));
        if (ui_deploy_target_check(*ret, msg, sizeof(msg)) < 0)
                return bff_refused(bff_reply_error(c->resp, 400, "ui", "%s", msg));
        return 0;
}

/* The TrainedModel of rq for isvc; NULL after a reply (*ret_r: its result) or on OOM. */
static json_t *deploy_object(struct call *c, const struct ui_deploy_request *rq,
                             const json_t *version, const json_t *arts, const json_t *isvc,
                             int *ret_r)
{
        CLEANUP(ui_json_decrefp) json_t *view = ui_isvc_view(isvc);
        const json_t *art = ui_deploy_artifact(arts);
        const char *fallback;

        *ret_r = -ENOMEM;
        if (!view)
                return NULL;
        fallback = json_get_string_path(view, "predictor", "modelFormat", NULL);
        if (!ui_deploy_framework(art, fallback)) {
                *ret_r = bff_reply_error(c->resp, 400, "registry",
                                         "the model artifact of version %s names no model "
                                         "format, and InferenceService %s none either: set the "
                                         "artifact's model format",
                                         json_string_value(json_object_get(version, "name")),
                                         rq->isvc);
                return NULL;
        }
        return ui_deploy_trainedmodel(rq, version, art, fallback, &c->reg->svc);
}

int bff_api_deploy(struct call *c)
{
        CLEANUP(bff_kube_holdp) struct kube_hold h = { 0 };
        CLEANUP(ui_json_decrefp) json_t *in = NULL, *version = NULL, *arts = NULL;
        CLEANUP(ui_json_decrefp) json_t *isvc = NULL, *tm = NULL, *made = NULL;
        const char *ns = http_req_param(c->req, "ns");
        struct ui_deploy_request rq;
        struct ui_registry reg;
        struct kube_status st = { 0 };
        json_t *data;
        char msg[1024];
        int r;

        r = bff_body_data(c, &in, &data);
        if (r != 0)
                return r < 0 ? r : 0;
        if (ui_deploy_request_read(data, &rq, msg, sizeof(msg)) < 0)
                return bff_reply_error(c->resp, 400, "ui", "%s", msg);
        r = deploy_registry(c, &rq, &reg, &version, &arts);
        if (r != 0)
                return r < 0 ? r : 0;
        r = bff_kube_hold_get(c, false, &h);
        if (r < 0)
                return bff_reply_kube_unconfigured(c, r);
        r = deploy_target(c, h.k, ns, rq.isvc, &isvc);
        if (r != 0)
                return r < 0 ? r : 0;
        tm = deploy_object(c, &rq, version, arts, isvc, &r);
        if (!tm)
                return r;
        r = kube_create(h.k, &BFF_GVR_TM, ns, tm, NULL, &made, &st);
        if (r == -ENOMEM)
                return r;
        if (r < 0) {
                unsigned code = ui_deploy_error(r, &st, c->id->user, ns, rq.name, c->s->kube_server,
                                                msg, sizeof(msg));

                return bff_reply_error(c->resp, code, "kubernetes", "%s", msg);
        }
        return bff_reply_data(c, 201, ui_trainedmodel_view(made));
}

/* ---- where a version can go ---- */

/* Memory counted against each InferenceService's limit: name -> bytes. */
static int memory_one(void *ud, const json_t *tm)
{
        json_t *by_isvc = ud;
        const char *isvc;
        int64_t b, sum;

        if (!ui_tm_assigned(tm, &isvc, &b))
                return 0;
        sum = (int64_t)json_integer_value(json_object_get(by_isvc, isvc));
        if (__builtin_add_overflow(sum, b, &sum))
                sum = INT64_MAX;
        return json_object_set_new(by_isvc, isvc, json_integer((json_int_t)sum)) < 0 ? -ENOMEM : 0;
}

struct targets {
        json_t *items;
        const json_t *assigned; /* NULL when the user may not list TrainedModels */
};

static int target_one(void *ud, const json_t *isvc)
{
        struct targets *t = ud;
        const char *name = json_get_string_path(isvc, "metadata", "name", NULL);
        char msg[256];
        json_t *v, *a;

        if (!name || ui_deploy_target_check(isvc, msg, sizeof(msg)) < 0)
                return 0;
        v = ui_isvc_view(isvc);
        if (!v || json_array_append_new(t->items, v) < 0)
                return -ENOMEM;
        if (!t->assigned) {
                a = json_null();
        } else {
                a = json_object_get(t->assigned, name);
                a = a ? json_incref(a) : json_integer(0);
        }
        return json_object_set_new(v, "memoryAssignedBytes", a) < 0 ? -ENOMEM : 0;
}

int bff_api_deploy_targets(struct call *c)
{
        CLEANUP(bff_kube_holdp) struct kube_hold h = { 0 };
        CLEANUP(ui_json_decrefp) json_t *items = json_array(), *by_isvc = json_object();
        const char *ns = http_req_param(c->req, "ns");
        struct targets t = { .items = items };
        struct kube_status st = { 0 };
        char why[512] = "";
        int r, can;

        if (!items || !by_isvc)
                return -ENOMEM;
        r = bff_kube_hold_get(c, false, &h);
        if (r < 0)
                return bff_reply_kube_unconfigured(c, r);
        can = bff_access_review(h.k, "create", BFF_GVR_TM.group, BFF_GVR_TM.resource, ns);
        if (can < 0)
                return bff_reply_error(c->resp, 502, "kubernetes",
                                       "SelfSubjectAccessReview for namespace %s failed: %s", ns,
                                       ui_errno_text(can));
        if (can == 0)
                (void)ui_kube_error(-EACCES, &(struct kube_status){ .http_code = 403 }, c->id->user,
                                    "create", "trainedmodels.serving.kserve.io", ns, NULL, NULL,
                                    why, sizeof(why));
        r = bff_list_all(h.k, &BFF_GVR_TM, ns, NULL, memory_one, by_isvc, &st);
        if (r == -ENOMEM)
                return r;
        t.assigned = r < 0 ? NULL : by_isvc;
        r = bff_list_all(h.k, &BFF_GVR_ISVC, ns, NULL, target_one, &t, &st);
        if (r == -ENOMEM)
                return r;
        if (r < 0)
                return bff_reply_kube_error(c, r, &st, "list",
                                            "inferenceservices.serving.kserve.io", ns, NULL);
        return bff_reply_data(c, 200,
                              json_pack("{s:s,s:b,s:o,s:O}", "namespace", ns, "canDeploy", can == 1,
                                        "reason", can == 1 ? json_null() : json_string(why),
                                        "items", items));
}

/* ---- the deployments of a model or a version ---- */

struct found {
        json_t *items;
        const struct ui_service_ref *registry;
        json_t *(*view)(const json_t *obj);
};

static int found_one(void *ud, const json_t *obj)
{
        struct found *f = ud;

        if (!ui_link_ours(obj, f->registry))
                return 0;
        return json_array_append_new(f->items, f->view(obj)) < 0 ? -ENOMEM : 0;
}

/*
 * The labelled TrainedModels and InferenceServices in ns (NULL: everywhere) into tms and isvcs.
 * 0; -EACCES when the caller may list neither (a kind it may not list is skipped when it may list
 * the other); another negative errno with st filled.
 */
static int deployments_in(struct call *c, struct kube_client *k, const char *ns, const char *sel,
                          json_t *tms, json_t *isvcs, struct kube_status *st)
{
        const struct ui_service_ref *reg = c->reg ? &c->reg->svc : &c->s->default_reg.svc;
        struct found ft = { .items = tms, .registry = reg, .view = ui_trainedmodel_view };
        struct found fi = { .items = isvcs, .registry = reg, .view = ui_isvc_view };
        struct kube_list_options lo = { .label_selector = sel };
        int a, b;

        a = bff_list_all(k, &BFF_GVR_TM, ns, &lo, found_one, &ft, st);
        if (a < 0 && a != -EACCES)
                return a;
        b = bff_list_all(k, &BFF_GVR_ISVC, ns, &lo, found_one, &fi, st);
        if (b < 0 && b != -EACCES)
                return b;
        /* everywhere (ns NULL), both kinds must be readable, else the caller asks namespace by
         * namespace */
        if ((a < 0 && b < 0) || (!ns && (a < 0 || b < 0)))
                return -EACCES;
        return 0;
}

/* Namespace by namespace, those the caller may see; *ret_complete false when some were left. */
static int deployments_each(struct call *c, struct kube_client *k, const char *sel, json_t *tms,
                            json_t *isvcs, bool *ret_complete)
{
        CLEANUP(ui_json_decrefp) json_t *names = json_array();
        struct kube_status st;
        json_t *n;
        size_t i;
        int r;

        if (!names)
                return -ENOMEM;
        r = bff_visible_namespaces(c, names);
        if (r != 0)
                return r;
        json_array_clear(tms);
        json_array_clear(isvcs);
        json_array_foreach(names, i, n) {
                if (i >= DEPLOYMENTS_NAMESPACES_MAX)
                        break;
                r = deployments_in(c, k, json_string_value(n), sel, tms, isvcs, &st);
                if (r < 0 && r != -EACCES)
                        return bff_refused(bff_reply_kube_error(c, r, &st, "list",
                                                                "trainedmodels.serving.kserve.io",
                                                                json_string_value(n), NULL));
        }
        *ret_complete = json_array_size(names) <= DEPLOYMENTS_NAMESPACES_MAX;
        return 0;
}

int bff_api_deployments(struct call *c)
{
        CLEANUP(bff_kube_holdp) struct kube_hold h = { 0 };
        CLEANUP(ui_json_decrefp) json_t *tms = json_array(), *isvcs = json_array();
        const char *rm = http_req_query(c->req, "registeredModelId");
        const char *mv = http_req_query(c->req, "modelVersionId");
        struct kube_status st = { 0 };
        struct ui_registry reg;
        bool complete = true;
        char sel[256];
        int r;

        if (!tms || !isvcs)
                return -ENOMEM;
        r = bff_registry_named(c, http_req_query(c->req, "modelRegistry"), &reg);
        if (r != 0)
                return r < 0 ? r : 0;
        if (ui_link_selector(rm, mv, sel, sizeof(sel)) < 0)
                return bff_reply_error(c->resp, 400, "ui",
                                       "registeredModelId and/or modelVersionId must be registry "
                                       "ids");
        r = bff_kube_hold_get(c, false, &h);
        if (r < 0)
                return bff_reply_kube_unconfigured(c, r);
        r = deployments_in(c, h.k, NULL, sel, tms, isvcs, &st);
        if (r == -EACCES)
                r = deployments_each(c, h.k, sel, tms, isvcs, &complete);
        else if (r < 0 && r != -ENOMEM)
                return bff_reply_kube_error(c, r, &st, "list", "trainedmodels.serving.kserve.io",
                                            NULL, NULL);
        if (r != 0)
                return r < 0 ? r : 0;
        return bff_reply_data(c, 200,
                              json_pack("{s:O,s:O,s:b}", "trainedModels", tms, "inferenceServices",
                                        isvcs, "complete", complete));
}

/* ---- the events of one InferenceService ---- */

struct isvc_events {
        const char *isvc;
        json_t *tm_names; /* object: name -> true */
        json_t *items;
};

static int tm_name_one(void *ud, const json_t *tm)
{
        struct isvc_events *e = ud;
        const char *parent = json_get_string_path(tm, "spec", "inferenceService", NULL);
        const char *name = json_get_string_path(tm, "metadata", "name", NULL);

        if (!parent || !name || !streq(parent, e->isvc))
                return 0;
        return json_object_set_new(e->tm_names, name, json_true()) < 0 ? -ENOMEM : 0;
}

static int isvc_event_one(void *ud, const json_t *ev)
{
        struct isvc_events *e = ud;

        if (!ui_event_of_isvc(ev, e->isvc, e->tm_names))
                return 0;
        return json_array_append_new(e->items, ui_event_view(ev)) < 0 ? -ENOMEM : 0;
}

int bff_api_isvc_events(struct call *c)
{
        CLEANUP(bff_kube_holdp) struct kube_hold h = { 0 };
        CLEANUP(ui_json_decrefp) json_t *names = json_object(), *items = json_array();
        const char *ns = http_req_param(c->req, "ns");
        struct isvc_events e = { .isvc = http_req_param(c->req, "name"),
                                 .tm_names = names,
                                 .items = items };
        struct kube_status st = { 0 };
        unsigned limit;
        int r;

        if (!names || !items)
                return -ENOMEM;
        if (bff_query_uint(c, "limit", EVENTS_DEFAULT, EVENTS_MAX, &limit) < 0)
                return 0;
        r = bff_kube_hold_get(c, false, &h);
        if (r < 0)
                return bff_reply_kube_unconfigured(c, r);
        /* its TrainedModels' names; a user who may not list them sees the rest */
        r = bff_list_all(h.k, &BFF_GVR_TM, ns, NULL, tm_name_one, &e, &st);
        if (r == -ENOMEM)
                return r;
        r = bff_list_all(h.k, &BFF_GVR_EVENTS, ns, NULL, isvc_event_one, &e, &st);
        if (r == -ENOMEM)
                return r;
        if (r < 0)
                return bff_reply_kube_error(c, r, &st, "list", "events", ns, NULL);
        return bff_reply_events(c, items, limit);
}

/* ---- no archive while deployed ---- */

/* The labelled objects of kind r everywhere, read as the server (users may not see every
 * namespace); 1 after a reply. */
static int guard_list(struct call *c, struct kube_client *k, const struct gvr *r, const char *what,
                      const char *sel, json_t **ret)
{
        struct kube_list_options lo = { .label_selector = sel, .limit = GUARD_LIST_LIMIT };
        struct kube_status st = { 0 };
        int q;

        q = kube_list(k, r, NULL, &lo, ret, &st);
        if (q == -ENOMEM)
                return q;
        if (q < 0 && st.http_code == 403)
                return bff_refused(bff_reply_error(
                        c->resp, 500, "ui",
                        "the ui server may not list %s in every namespace, so it cannot check "
                        "whether this is deployed; give its ServiceAccount the ClusterRole of "
                        "deploy/base/ui/rbac.yaml",
                        what));
        if (q < 0)
                return bff_refused(bff_reply_kube_error(c, q, &st, "list", what, NULL, NULL));
        return 0;
}

/* The registry's DEPLOYED records of a model (or version) id; 1 after a reply. */
static int guard_records(struct call *c, bool model, const char *id, json_t **ret)
{
        CLEANUP(buf_releasep) struct buf path = BUF_INIT(1024);
        char fq[256];
        int r;

        (void)snprintf(fq, sizeof(fq), "%s = '%s' AND desiredState = 'DEPLOYED'",
                       model ? "registeredModelId" : "modelVersionId", id);
        r = buf_puts(&path, "/inference_services");
        if (r >= 0)
                r = ui_query_add(&path, "filterQuery", fq);
        if (r >= 0)
                r = ui_query_add(&path, "pageSize", "100");
        if (r < 0)
                return r;
        return bff_registry_get(c, buf_str(&path), ret);
}

int bff_archive_guard(struct call *c, const struct api_route *rt, const json_t *data)
{
        CLEANUP(bff_kube_holdp) struct kube_hold h = { 0 };
        CLEANUP(ui_json_decrefp) json_t *records = NULL, *tms = NULL, *isvcs = NULL;
        const char *state = json_string_value(json_object_get(data, "state"));
        const char *id = http_req_param(c->req, "id");
        bool model = rt->flags & F_GUARD_MODEL;
        char sel[256], msg[1024];
        int r;

        /* an id that no label can carry is no deployment's: the registry answers for it */
        if (!state || !streq(state, "ARCHIVED") || !id ||
            ui_link_selector(model ? id : NULL, model ? NULL : id, sel, sizeof(sel)) < 0)
                return 0;
        r = guard_records(c, model, id, &records);
        if (r != 0)
                return r;
        r = bff_kube_hold_get(c, true, &h);
        if (r < 0 && r != -ENXIO)
                return r;
        if (r >= 0) {
                r = guard_list(c, h.k, &BFF_GVR_TM, "trainedmodels.serving.kserve.io", sel, &tms);
                if (r == 0)
                        r = guard_list(c, h.k, &BFF_GVR_ISVC, "inferenceservices.serving.kserve.io",
                                       sel, &isvcs);
                if (r != 0)
                        return r;
        }
        if (!ui_archive_refusal(model ? "The registered model" : "The model version",
                                json_object_get(tms, "items"), json_object_get(isvcs, "items"),
                                json_object_get(records, "items"), &c->reg->svc, msg, sizeof(msg)))
                return 0;
        return bff_refused(bff_reply_error(c->resp, 409, "ui", "%s", msg));
}
