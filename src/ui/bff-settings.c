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
        return bff_reply_data(c, 200, json_pack("{s:o}", "modelRegistry", ui_registry_kind(svc)));
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
