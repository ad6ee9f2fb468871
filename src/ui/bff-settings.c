/* SPDX-License-Identifier: Apache-2.0 */
/*
 * modelplane ui: the settings routes for administrators (bff-internal.h; docs/ui.md, "Settings"):
 * the registries as ModelRegistryKind, the RoleBindings that let users and groups use a registry,
 * and groups. Every call is made as the user (impersonation or the user's token), so Kubernetes
 * RBAC decides who administers what; the objects are ui/settings.h's.
 */
#include "ui/bff-internal.h"

#include <errno.h>
#include <string.h>

#include "json/json-util.h"
#include "kube/client.h"
#include "ui/settings.h"
#include "ui/views.h"
#include "util/error-detail.h"
#include "util/log.h"

#define RB_RESOURCE "rolebindings.rbac.authorization.k8s.io"
#define RB_LIST_MAX 500U

static const struct gvr GVR_ROLEBINDINGS = { "rbac.authorization.k8s.io", "v1", "rolebindings" };
static const struct gvr GVR_GROUPS = { "user.openshift.io", "v1", "groups" };

/* A client as the caller and the namespace of the request; 1 after a reply. */
static int settings_begin(struct call *c, struct kube_hold *h, const char **ret_ns)
{
        bool given;
        int r = 0;

        *ret_ns = bff_registry_namespace(c, &given, &r);
        if (!*ret_ns)
                return bff_refused(r);
        r = bff_kube_hold_get(c, false, h);
        if (r < 0)
                return bff_refused(bff_reply_kube_unconfigured(c, r));
        return 0;
}

/* A write's body (its "data", borrowed from *ret_in), a client as the caller and the namespace;
 * 1 after a reply. */
static int settings_write_begin(struct call *c, struct kube_hold *h, json_t **ret_in,
                                json_t **ret_data, const char **ret_ns)
{
        int r = bff_body_data(c, ret_in, ret_data);

        if (r != 0)
                return r;
        return settings_begin(c, h, ret_ns);
}

/* Replies with the views of the items of list (borrowed) that keep() accepts. */
static int reply_items(struct call *c, const json_t *list, bool (*keep)(const json_t *),
                       json_t *(*view)(const json_t *), bool wrap)
{
        CLEANUP(ui_json_decrefp) json_t *items = json_array();
        const json_t *it;
        size_t i;

        if (!items)
                return -ENOMEM;
        json_array_foreach(json_object_get(list, "items"), i, it)
                if ((!keep || keep(it)) && json_array_append_new(items, view(it)) < 0)
                        return -ENOMEM;
        if (!wrap)
                return bff_reply_data(c, 200, TAKE_PTR(items));
        return bff_reply_data(c, 200, json_pack("{s:o}", "items", TAKE_PTR(items)));
}

static bool is_registry_service(const json_t *svc)
{
        const char *comp = json_get_string_path(svc, "metadata", "labels", "component", NULL);

        return comp && streq(comp, "model-registry");
}

/* Lists @gvr in the request's namespace as the caller and replies with the kept items' views. */
static int settings_list(struct call *c, const struct gvr *gvr, const char *resource,
                         const char *selector, unsigned limit, bool (*keep)(const json_t *),
                         json_t *(*view)(const json_t *), bool wrap)
{
        CLEANUP(bff_kube_holdp) struct kube_hold h = { 0 };
        CLEANUP(ui_json_decrefp) json_t *list = NULL;
        struct kube_list_options lo = { .label_selector = selector, .limit = limit };
        struct kube_status st = { 0 };
        const char *ns;
        int r;

        r = settings_begin(c, &h, &ns);
        if (r != 0)
                return r < 0 ? r : 0;
        r = kube_list(h.k, gvr, ns, &lo, &list, &st);
        if (r < 0)
                return r == -ENOMEM ? r
                                    : bff_reply_kube_error(c, r, &st, "list", resource, ns, NULL);
        return reply_items(c, list, keep, view, wrap);
}

int bff_api_settings_registries(struct call *c)
{
        return settings_list(c, &BFF_GVR_SERVICES, "services", UI_REGISTRY_LABEL_SELECTOR,
                             UI_REGISTRIES_MAX, is_registry_service, ui_registry_kind, false);
}

static const struct gvr GVR_DEPLOYMENTS = { "apps", "v1", "deployments" };

/* svc's ModelRegistryKind (borrowed Service), with spec.postgres from dep (borrowed), or for a
 * registry this console made from its Deployment read as the user (dep NULL; a read that fails
 * leaves it out). New reference; NULL on OOM. */
static json_t *kind_with_database(struct kube_client *k, const char *ns, const json_t *svc,
                                  const json_t *dep)
{
        CLEANUP(ui_json_decrefp) json_t *kind = ui_registry_kind(svc), *read = NULL;
        const char *name = json_get_string_path(svc, "metadata", "name", NULL);
        struct kube_status st = { 0 };

        if (!kind)
                return NULL;
        if (!dep && name && ui_registry_made_here(svc)) {
                int r = kube_get(k, &GVR_DEPLOYMENTS, ns, name, &read, &st);

                if (r == -ENOMEM)
                        return NULL;
                dep = read; /* NULL after a refusal or a miss: left out */
        }
        if (dep && ui_registry_kind_set_database(kind, dep) < 0)
                return NULL;
        return TAKE_PTR(kind);
}

int bff_api_settings_registry(struct call *c)
{
        CLEANUP(bff_kube_holdp) struct kube_hold h = { 0 };
        CLEANUP(ui_json_decrefp) json_t *svc = NULL;
        const char *id = http_req_param(c->req, "id");
        struct kube_status st = { 0 };
        const char *ns;
        int r;

        r = settings_begin(c, &h, &ns);
        if (r != 0)
                return r < 0 ? r : 0;
        r = kube_get(h.k, &BFF_GVR_SERVICES, ns, id, &svc, &st);
        if (r == -ENOMEM)
                return r;
        if ((r >= 0 && !is_registry_service(svc)) || r == -ENOENT)
                return bff_reply_error(c->resp, 404, "ui",
                                       "no model registry named '%s' in namespace %s", id, ns);
        if (r < 0)
                return bff_reply_kube_error(c, r, &st, "get", "services", ns, id);
        /* upstream's ModelRegistryAndCredentials; no database password is kept here */
        return bff_reply_data(c, 200,
                              json_pack("{s:o}", "modelRegistry",
                                        kind_with_database(h.k, ns, svc, NULL)));
}

int bff_api_role_bindings(struct call *c)
{
        return settings_list(c, &GVR_ROLEBINDINGS, RB_RESOURCE, UI_ROLE_BINDING_SELECTOR,
                             RB_LIST_MAX, ui_role_binding_is_registry, ui_role_binding_view, true);
}

int bff_api_role_binding_create(struct call *c)
{
        CLEANUP(bff_kube_holdp) struct kube_hold h = { 0 };
        CLEANUP(ui_json_decrefp) json_t *in = NULL, *rb = NULL, *made = NULL;
        struct kube_status st = { 0 };
        const char *ns, *name;
        json_t *data;
        char msg[512];
        int r;

        r = settings_write_begin(c, &h, &in, &data, &ns);
        if (r != 0)
                return r < 0 ? r : 0;
        r = ui_role_binding_request(data, ns, &rb, msg, sizeof(msg));
        if (r == -EINVAL)
                return bff_reply_error(c->resp, 400, "ui", "%s", msg);
        if (r < 0)
                return r;
        r = kube_create(h.k, &GVR_ROLEBINDINGS, ns, rb, NULL, &made, &st);
        name = json_get_string_path(rb, "metadata", "name", NULL);
        if (r == -EEXIST)
                return bff_reply_error(c->resp, 409, "kubernetes",
                                       "a RoleBinding named %s already exists in namespace %s",
                                       name ? name : "", ns);
        if (r < 0)
                return r == -ENOMEM
                               ? r
                               : bff_reply_kube_error(c, r, &st, "create", RB_RESOURCE, ns, name);
        return bff_reply_data(c, 201, ui_role_binding_view(made));
}

/* Reads the RoleBinding @name as the user: 0 with *ret, 1 after a reply (404 when it is not a
 * registry's), -ENOMEM. */
static int role_binding_get(struct call *c, struct kube_hold *h, const char *ns, const char *name,
                            json_t **ret)
{
        struct kube_status st = { 0 };
        int r;

        r = kube_get(h->k, &GVR_ROLEBINDINGS, ns, name, ret, &st);
        if (r == -ENOMEM)
                return r;
        if (r == -ENOENT || (r >= 0 && !ui_role_binding_is_registry(*ret))) {
                json_decref(*ret);
                *ret = NULL;
                r = bff_reply_error(c->resp, 404, "ui",
                                    "no model registry RoleBinding named %s in namespace %s", name,
                                    ns);
                return r < 0 ? r : 1;
        }
        if (r < 0) {
                r = bff_reply_kube_error(c, r, &st, "get", RB_RESOURCE, ns, name);
                return r < 0 ? r : 1;
        }
        return 0;
}

int bff_api_role_binding_delete(struct call *c)
{
        CLEANUP(bff_kube_holdp) struct kube_hold h = { 0 };
        CLEANUP(ui_json_decrefp) json_t *rb = NULL, *out = NULL;
        const char *name = http_req_param(c->req, "name");
        struct kube_status st = { 0 };
        struct kube_delete_options del = { 0 };
        const char *ns;
        int r;

        r = settings_begin(c, &h, &ns);
        if (r != 0)
                return r < 0 ? r : 0;
        /* only a registry's RoleBinding: read first, deleted by its uid */
        r = role_binding_get(c, &h, ns, name, &rb);
        if (r != 0)
                return r < 0 ? r : 0;
        del.precondition_uid = json_get_string_path(rb, "metadata", "uid", NULL);
        r = kube_delete(h.k, &GVR_ROLEBINDINGS, ns, name, &del, &out, &st);
        if (r < 0 && r != -ENOENT)
                return r == -ENOMEM
                               ? r
                               : bff_reply_kube_error(c, r, &st, "delete", RB_RESOURCE, ns, name);
        http_resp_set_text(c->resp, 204, "application/json", "");
        return 0;
}

int bff_api_role_binding_update(struct call *c)
{
        CLEANUP(bff_kube_holdp) struct kube_hold h = { 0 };
        CLEANUP(ui_json_decrefp) json_t *in = NULL, *rb = NULL, *next = NULL, *out = NULL;
        const char *name = http_req_param(c->req, "name");
        struct kube_status st = { 0 };
        const char *ns;
        json_t *data;
        char msg[512];
        int r;

        r = settings_write_begin(c, &h, &in, &data, &ns);
        if (r != 0)
                return r < 0 ? r : 0;
        r = role_binding_get(c, &h, ns, name, &rb);
        if (r != 0)
                return r < 0 ? r : 0;
        r = ui_role_binding_update(rb, data, &next, msg, sizeof(msg));
        if (r == -EINVAL)
                return bff_reply_error(c->resp, 400, "ui", "%s", msg);
        if (r < 0)
                return r;
        r = kube_update(h.k, &GVR_ROLEBINDINGS, ns, name, next, NULL, &out, &st);
        if (r == -ESTALE)
                return bff_reply_error(c->resp, 409, "kubernetes",
                                       "RoleBinding %s in namespace %s changed since it was read: "
                                       "reload it and apply the change again",
                                       name, ns);
        if (r < 0)
                return r == -ENOMEM
                               ? r
                               : bff_reply_kube_error(c, r, &st, "update", RB_RESOURCE, ns, name);
        return bff_reply_data(c, 200, ui_role_binding_view(out));
}

int bff_api_groups(struct call *c)
{
        CLEANUP(bff_kube_holdp) struct kube_hold h = { 0 };
        CLEANUP(ui_json_decrefp) json_t *list = NULL;
        struct kube_list_options lo = { .limit = RB_LIST_MAX };
        struct kube_status st = { 0 };
        int r;

        r = bff_kube_hold_get(c, false, &h);
        if (r < 0)
                return bff_reply_kube_unconfigured(c, r);
        r = kube_list(h.k, &GVR_GROUPS, NULL, &lo, &list, &st);
        if (r == -ENOENT) /* no OpenShift groups API: Kubernetes keeps no groups */
                return bff_reply_data(c, 200, json_array());
        if (r < 0)
                return r == -ENOMEM ? r
                                    : bff_reply_kube_error(c, r, &st, "list",
                                                           "groups.user.openshift.io", NULL, NULL);
        return reply_items(c, list, NULL, ui_group_view, false);
}

/* ---- registries made by the console: what the model-registry operator would write ---- */

static const struct gvr GVR_ROLES = { "rbac.authorization.k8s.io", "v1", "roles" };
static const struct gvr GVR_PVCS = { "", "v1", "persistentvolumeclaims" };
static const struct gvr GVR_CONFIGMAPS = { "", "v1", "configmaps" };
static const struct gvr GVR_SECRETS = { "", "v1", "secrets" };

/* One of a registry's objects: its type, the resource's name in words, its name. */
struct part {
        const struct gvr *gvr;
        const char *resource;
        const char *name;
};

static int reply_refusal(struct call *c, int r, const struct error_detail *err)
{
        if (r == -ENOMEM)
                return r;
        return bff_reply_error(c->resp, err->kind == ERROR_UNPROCESSABLE ? 422 : 400, "ui", "%s",
                               err->message);
}

/* The names of a registry's objects, kept by the caller. */
struct part_names {
        char role[UI_K8S_NAME_MAX + sizeof(UI_REGISTRY_ROLE_PREFIX)];
        char pvc[UI_K8S_NAME_MAX + sizeof(UI_REGISTRY_PVC_SUFFIX)];
};

/* The parts of registry name in creation order (SQLite's claim last: with_pvc), their names in
 * *names; returns how many. */
static size_t registry_parts(const char *name, bool with_pvc, struct part_names *names,
                             struct part ret[4])
{
        ui_registry_role_name(name, names->role, sizeof(names->role));
        ui_registry_pvc_name(name, names->pvc, sizeof(names->pvc));
        ret[0] = (struct part){ &GVR_DEPLOYMENTS, "deployments.apps", name };
        ret[1] = (struct part){ &BFF_GVR_SERVICES, "services", name };
        ret[2] = (struct part){ &GVR_ROLES, "roles.rbac.authorization.k8s.io", names->role };
        ret[3] = (struct part){ &GVR_PVCS, "persistentvolumeclaims", names->pvc };
        return with_pvc ? 4 : 3;
}

/* 409 when any part exists (asked first, as the user: nothing is written for a clash); 1 after
 * a reply. */
static int parts_free(struct call *c, struct kube_client *k, const char *ns, const struct part *p,
                      size_t n)
{
        for (size_t i = 0; i < n; i++) {
                CLEANUP(ui_json_decrefp) json_t *obj = NULL;
                struct kube_status st = { 0 };
                int r = kube_get(k, p[i].gvr, ns, p[i].name, &obj, &st);

                if (r == -ENOENT)
                        continue;
                if (r == -ENOMEM)
                        return r;
                if (r < 0)
                        return bff_refused(bff_reply_kube_error(c, r, &st, "get", p[i].resource, ns,
                                                                p[i].name));
                return bff_refused(bff_reply_error(c->resp, 409, "kubernetes",
                                                   "a %s named %s already exists in namespace %s",
                                                   p[i].resource, p[i].name, ns));
        }
        return 0;
}

/* Deletes parts[0..n) in reverse order as the user, each missing one skipped; the first other
 * failure is returned with *ret_failed and st, the others are still tried. */
static int parts_delete(struct kube_client *k, const char *ns, const struct part *p, size_t n,
                        struct kube_status *st, const struct part **ret_failed)
{
        struct kube_delete_options opt = { .propagation_policy = "Background" };
        int ret = 0;

        while (n-- > 0) {
                struct kube_status one = { 0 };
                int r = kube_delete(k, p[n].gvr, ns, p[n].name, &opt, NULL, &one);

                if (r < 0 && r != -ENOENT && ret == 0) {
                        ret = r;
                        *st = one;
                        *ret_failed = &p[n];
                }
        }
        return ret;
}

/* Creates the objects in order as the user; on a refusal removes what it wrote (as the user)
 * and replies. *ret_svc: the Service as created. 0; 1 after a reply. */
static int parts_create(struct call *c, struct kube_client *k, const char *ns, const struct part *p,
                        json_t *const *objs, size_t n, json_t **ret_svc)
{
        for (size_t i = 0; i < n; i++) {
                CLEANUP(ui_json_decrefp) json_t *made = NULL;
                struct kube_status st = { 0 }, ust = { 0 };
                const struct part *failed = NULL;
                int r = kube_create(k, p[i].gvr, ns, objs[i], NULL, &made, &st);

                if (r >= 0) {
                        if (p[i].gvr == &BFF_GVR_SERVICES)
                                *ret_svc = TAKE_PTR(made);
                        continue;
                }
                if (parts_delete(k, ns, p, i, &ust, &failed) < 0)
                        log_warn("ui: registry %s: %s %s in namespace %s was left behind "
                                 "(%s)",
                                 p[0].name, failed->resource, failed->name, ns, ust.message);
                if (r == -ENOMEM)
                        return r;
                if (r == -EEXIST)
                        return bff_refused(
                                bff_reply_error(c->resp, 409, "kubernetes",
                                                "a %s named %s already exists in namespace %s",
                                                p[i].resource, p[i].name, ns));
                return bff_refused(
                        bff_reply_kube_error(c, r, &st, "create", p[i].resource, ns, p[i].name));
        }
        return 0;
}

int bff_api_settings_registry_create(struct call *c)
{
        CLEANUP(bff_kube_holdp) struct kube_hold h = { 0 };
        CLEANUP(ui_json_decrefp)
        json_t *in = NULL, *dep = NULL, *svc = NULL, *role = NULL, *pvc = NULL, *made = NULL;
        struct ui_registry_req q = { 0 };
        struct error_detail err = { 0 };
        struct part_names names;
        struct part parts[4];
        size_t n;
        const char *ns;
        json_t *data;
        int r;

        r = settings_write_begin(c, &h, &in, &data, &ns);
        if (r != 0)
                return r < 0 ? r : 0;
        r = ui_registry_req_read(data, ns, true, NULL, &q, &err);
        if (r < 0)
                return reply_refusal(c, r, &err);
        n = registry_parts(q.name, !q.db.postgres, &names, parts);
        dep = ui_registry_deployment(&q, ns, c->s->transfer_image);
        svc = ui_registry_service(&q, ns);
        role = ui_registry_role(q.name, ns);
        pvc = ui_registry_pvc(q.name, ns);
        if (!dep || !svc || !role || !pvc)
                return -ENOMEM;
        r = parts_free(c, h.k, ns, parts, n);
        if (r == 0)
                r = parts_create(c, h.k, ns, parts, (json_t *const[]){ dep, svc, role, pvc }, n,
                                 &made);
        if (r != 0)
                return r < 0 ? r : 0;
        return bff_reply_data(c, 201, kind_with_database(h.k, ns, made, dep));
}

/* Reads registry id's Service as the user: 0 with *ret; 1 after a reply (404 when it is no
 * registry, 409 when the console did not make it). */
static int made_registry_get(struct call *c, struct kube_client *k, const char *ns, const char *id,
                             json_t **ret)
{
        struct kube_status st = { 0 };
        int r = kube_get(k, &BFF_GVR_SERVICES, ns, id, ret, &st);

        if (r == -ENOMEM)
                return r;
        if ((r >= 0 && !is_registry_service(*ret)) || r == -ENOENT)
                return bff_refused(bff_reply_error(c->resp, 404, "ui",
                                                   "no model registry named '%s' in namespace %s",
                                                   id, ns));
        if (r < 0)
                return bff_refused(bff_reply_kube_error(c, r, &st, "get", "services", ns, id));
        if (!ui_registry_made_here(*ret))
                return bff_refused(bff_reply_error(
                        c->resp, 409, "ui",
                        "the model registry '%s' in namespace %s was not made by this console "
                        "(no app.kubernetes.io/managed-by: " UI_REGISTRY_MANAGED_BY "): change "
                        "it where it was deployed",
                        id, ns));
        return 0;
}

/* A SelfSubjectAccessReview per need (verb, group, resource) before any write, so that a refusal
 * leaves nothing half done; 1 after a 403. */
static int may_all(struct call *c, struct kube_client *k, const char *ns,
                   const char *const (*need)[3], size_t n, const char *why)
{
        for (size_t i = 0; i < n; i++) {
                int r = bff_access_review(k, need[i][0], need[i][1], need[i][2], ns);

                if (r == 0)
                        return bff_refused(bff_reply_error(c->resp, 403, "kubernetes",
                                                           "user %s may not %s %s%s%s in "
                                                           "namespace %s (%s)",
                                                           c->id->user, need[i][0], need[i][2],
                                                           *need[i][1] ? "." : "", need[i][1], ns,
                                                           why));
                if (r == -ENOMEM)
                        return r;
                /* a review that cannot be made: the writes themselves decide */
        }
        return 0;
}

/* PUT of a PATCH's next object; 1 after a reply. */
static int put(struct call *c, struct kube_client *k, const struct gvr *gvr, const char *res,
               const char *ns, const char *id, const json_t *obj, json_t **ret)
{
        struct kube_status st = { 0 };
        int r = kube_update(k, gvr, ns, id, obj, NULL, ret, &st);

        if (r == -ENOMEM)
                return r;
        if (r == -ESTALE)
                return bff_refused(bff_reply_error(c->resp, 409, "kubernetes",
                                                   "the %s %s in namespace %s changed while it "
                                                   "was updated: apply the change again",
                                                   res, id, ns));
        if (r < 0)
                return bff_refused(bff_reply_kube_error(c, r, &st, "update", res, ns, id));
        return 0;
}

/* SQLite's claim, created as the user when it is missing (a registry that was on PostgreSQL);
 * 1 after a reply. */
static int ensure_pvc(struct call *c, struct kube_client *k, const char *ns, const char *name)
{
        CLEANUP(ui_json_decrefp) json_t *pvc = NULL, *made = NULL;
        char pvc_name[UI_K8S_NAME_MAX + sizeof(UI_REGISTRY_PVC_SUFFIX)];
        struct kube_status st = { 0 };
        int r;

        ui_registry_pvc_name(name, pvc_name, sizeof(pvc_name));
        r = kube_get(k, &GVR_PVCS, ns, pvc_name, &pvc, &st);
        if (r >= 0 || r == -ENOMEM)
                return r < 0 ? r : 0;
        if (r != -ENOENT)
                return bff_refused(bff_reply_kube_error(c, r, &st, "get", "persistentvolumeclaims",
                                                        ns, pvc_name));
        pvc = ui_registry_pvc(name, ns);
        if (!pvc)
                return -ENOMEM;
        r = kube_create(k, &GVR_PVCS, ns, pvc, NULL, &made, &st);
        if (r == -ENOMEM)
                return r;
        if (r < 0 && r != -EEXIST)
                return bff_refused(bff_reply_kube_error(c, r, &st, "create",
                                                        "persistentvolumeclaims", ns, pvc_name));
        return 0;
}

/* *ret: the Deployment as written. */
static int update_deployment(struct call *c, struct kube_client *k, const char *ns,
                             const struct ui_registry_req *q, json_t **ret)
{
        CLEANUP(ui_json_decrefp) json_t *cur = NULL, *next = NULL;
        struct kube_status st = { 0 };
        int r = kube_get(k, &GVR_DEPLOYMENTS, ns, q->name, &cur, &st);

        if (r == -ENOMEM)
                return r;
        if (r < 0)
                return bff_refused(
                        bff_reply_kube_error(c, r, &st, "get", "deployments.apps", ns, q->name));
        r = ui_registry_deployment_update(cur, q, c->s->transfer_image, &next);
        if (r < 0)
                return r;
        return put(c, k, &GVR_DEPLOYMENTS, "deployments.apps", ns, q->name, next, ret);
}

int bff_api_settings_registry_update(struct call *c)
{
        static const char *const need[][3] = { { "update", "", "services" },
                                               { "update", "apps", "deployments" } };
        CLEANUP(bff_kube_holdp) struct kube_hold h = { 0 };
        CLEANUP(ui_json_decrefp)
        json_t *in = NULL, *svc = NULL, *next = NULL, *out = NULL, *dep = NULL;
        const char *id = http_req_param(c->req, "id");
        struct ui_registry_req q = { 0 };
        struct error_detail err = { 0 };
        const char *ns;
        json_t *data;
        int r;

        r = settings_write_begin(c, &h, &in, &data, &ns);
        if (r != 0)
                return r < 0 ? r : 0;
        r = ui_registry_req_read(data, ns, false, id, &q, &err);
        if (r < 0)
                return reply_refusal(c, r, &err);
        r = made_registry_get(c, h.k, ns, id, &svc);
        if (r == 0)
                r = may_all(c, h.k, ns, need, q.has_db ? 2 : 1,
                            "a registry's settings are its "
                            "Service and Deployment");
        if (r == 0 && q.has_db && !q.db.postgres)
                r = ensure_pvc(c, h.k, ns, q.name);
        if (r == 0 && q.has_db)
                r = update_deployment(c, h.k, ns, &q, &dep);
        if (r == 0 && (q.display_name || q.description)) {
                r = ui_registry_service_update(svc, &q, &next);
                if (r == 0)
                        r = put(c, h.k, &BFF_GVR_SERVICES, "services", ns, id, next, &out);
        }
        if (r != 0)
                return r < 0 ? r : 0;
        return bff_reply_data(c, 200, kind_with_database(h.k, ns, out ? out : svc, dep));
}

/* The RoleBindings of registry id's Role (any the console's role-binding route made), deleted
 * as the user; 1 after a reply. */
static int delete_bindings(struct call *c, struct kube_client *k, const char *ns, const char *role)
{
        CLEANUP(ui_json_decrefp) json_t *list = NULL;
        struct kube_list_options lo = { .label_selector = UI_ROLE_BINDING_SELECTOR,
                                        .limit = RB_LIST_MAX };
        struct kube_status st = { 0 };
        const json_t *rb;
        size_t i;
        int r = kube_list(k, &GVR_ROLEBINDINGS, ns, &lo, &list, &st);

        if (r == -ENOMEM)
                return r;
        if (r < 0)
                return bff_refused(bff_reply_kube_error(c, r, &st, "list", RB_RESOURCE, ns, NULL));
        json_array_foreach(json_object_get(list, "items"), i, rb) {
                const char *kind = json_get_string_path(rb, "roleRef", "kind", NULL);
                const char *ref = json_get_string_path(rb, "roleRef", "name", NULL);
                const char *name = json_get_string_path(rb, "metadata", "name", NULL);

                if (!kind || !ref || !name || !streq(kind, "Role") || !streq(ref, role))
                        continue;
                r = kube_delete(k, &GVR_ROLEBINDINGS, ns, name, NULL, NULL, &st);
                if (r == -ENOMEM)
                        return r;
                if (r < 0 && r != -ENOENT)
                        return bff_refused(
                                bff_reply_kube_error(c, r, &st, "delete", RB_RESOURCE, ns, name));
        }
        return 0;
}

int bff_api_settings_registry_delete(struct call *c)
{
        static const char *const need[][3] = {
                { "delete", "rbac.authorization.k8s.io", "rolebindings" },
                { "list", "rbac.authorization.k8s.io", "rolebindings" },
                { "delete", "rbac.authorization.k8s.io", "roles" },
                { "delete", "", "services" },
                { "delete", "apps", "deployments" },
                { "delete", "", "persistentvolumeclaims" },
        };
        CLEANUP(bff_kube_holdp) struct kube_hold h = { 0 };
        CLEANUP(ui_json_decrefp) json_t *svc = NULL;
        const char *id = http_req_param(c->req, "id");
        struct kube_status st = { 0 };
        const struct part *failed = NULL;
        struct part_names names;
        struct part parts[4];
        size_t n;
        const char *ns;
        int r;

        r = settings_begin(c, &h, &ns);
        if (r == 0)
                r = made_registry_get(c, h.k, ns, id, &svc);
        if (r == 0)
                r = may_all(c, h.k, ns, need, ELEMENTSOF(need),
                            "a registry is deleted with its Deployment, Role, RoleBindings and "
                            "claim");
        n = registry_parts(id, true, &names, parts);
        if (r == 0)
                r = delete_bindings(c, h.k, ns, names.role);
        if (r != 0)
                return r < 0 ? r : 0;
        r = parts_delete(h.k, ns, parts, n, &st, &failed);
        if (r == -ENOMEM)
                return r;
        if (r < 0)
                return bff_reply_kube_error(c, r, &st, "delete", failed->resource, ns,
                                            failed->name);
        http_resp_set_text(c->resp, 204, "application/json", "");
        return 0;
}

/* The certificate items of gvr in ns, listed as the user; 1 after a reply. */
static int certificates_of(struct call *c, struct kube_client *k, const char *ns,
                           const struct gvr *gvr, const char *res, json_t **ret)
{
        CLEANUP(ui_json_decrefp) json_t *list = NULL;
        struct kube_list_options lo = { .limit = UI_CERTIFICATES_MAX };
        struct kube_status st = { 0 };
        int r = kube_list(k, gvr, ns, &lo, &list, &st);

        if (r == -ENOMEM)
                return r;
        if (r < 0)
                return bff_refused(bff_reply_kube_error(c, r, &st, "list", res, ns, NULL));
        *ret = ui_certificate_items(list, gvr == &GVR_SECRETS);
        return *ret ? 0 : -ENOMEM;
}

int bff_api_settings_certificates(struct call *c)
{
        CLEANUP(bff_kube_holdp) struct kube_hold h = { 0 };
        CLEANUP(ui_json_decrefp) json_t *cms = NULL, *secrets = NULL;
        const char *ns;
        int r;

        r = settings_begin(c, &h, &ns);
        if (r == 0)
                r = certificates_of(c, h.k, ns, &GVR_CONFIGMAPS, "configmaps", &cms);
        if (r == 0)
                r = certificates_of(c, h.k, ns, &GVR_SECRETS, "secrets", &secrets);
        if (r != 0)
                return r < 0 ? r : 0;
        return bff_reply_data(c, 200,
                              json_pack("{s:O,s:O}", "secrets", secrets, "configMaps", cms));
}
