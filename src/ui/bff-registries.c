/* SPDX-License-Identifier: Apache-2.0 */
/*
 * modelplane ui: several model registries (bff-internal.h; docs/ui.md, "Several registries"). The
 * configured one, and those discovered as upstream discovers them: the Services labelled
 * component=model-registry in a namespace, read as the user (a user who may not list Services
 * gets those a SelfSubjectRulesReview says it may get by name). Each registry route resolves its
 * registry here, after the caller is authorized for that registry's Service.
 */
#include "ui/bff-internal.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "json/json-util.h"
#include "kube/client.h"
#include "ui/deploy.h"
#include "ui/views.h"
#include "util/log.h"

#define RULES_REVIEW_PATH "/apis/authorization.k8s.io/v1/selfsubjectrulesreviews"

const char *bff_registry_namespace(struct call *c, bool *ret_given, int *ret_r)
{
        const char *ns = http_req_query(c->req, "namespace");

        *ret_given = ns != NULL;
        if (!ns)
                return c->s->registry_ns;
        if (ui_rfc1123_label(ns))
                return ns;
        *ret_r = bff_reply_error(c->resp, 400, "ui", "namespace \"%.80s\" is not a namespace name",
                                 ns);
        return NULL;
}

static bool is_default(const struct ui_server *s, const char *name, const char *ns, bool given)
{
        return streq(name, s->default_reg.name) && (!given || streq(ns, s->registry_ns));
}

/* Reads the Service of a registry the caller may use, as the caller; 1 after a reply. */
static int discovered(struct call *c, const struct ui_service_ref *svc, struct ui_registry *ret)
{
        CLEANUP(bff_kube_holdp) struct kube_hold h = { 0 };
        CLEANUP(ui_json_decrefp) json_t *obj = NULL;
        struct kube_status st = { 0 };
        char msg[256];
        int r;

        r = bff_kube_hold_get(c, false, &h);
        if (r < 0)
                return bff_refused(bff_reply_kube_unconfigured(c, r));
        r = kube_get(h.k, &BFF_GVR_SERVICES, svc->ns, svc->name, &obj, &st);
        if (r == -ENOENT)
                return bff_refused(bff_reply_error(c->resp, 404, "ui",
                                                   "no model registry named '%s' in namespace %s",
                                                   svc->name, svc->ns));
        if (r < 0)
                return r == -ENOMEM ? r
                                    : bff_refused(bff_reply_kube_error(c, r, &st, "get", "services",
                                                                       svc->ns, svc->name));
        r = ui_registry_from_service(obj, c->s->registry_external, ret, msg, sizeof(msg));
        if (r == -ENOENT)
                return bff_refused(bff_reply_error(
                        c->resp, 404, "ui",
                        "no model registry named '%s' in namespace %s (the Service is not "
                        "labelled component=model-registry)",
                        svc->name, svc->ns));
        if (r < 0)
                return bff_refused(bff_reply_error(c->resp, 503, "registry", "%s", msg));
        /* the annotations die with obj */
        ret->display_name = ret->description = NULL;
        return 0;
}

int bff_registry_resolve(struct call *c, const char *name, struct ui_registry *ret)
{
        struct ui_server *s = c->s;
        struct ui_service_ref svc = { 0 };
        char what[128];
        const char *ns;
        bool given;
        int r = 0;

        if (!name)
                name = s->default_reg.name;
        ns = bff_registry_namespace(c, &given, &r);
        if (!ns)
                return bff_refused(r);
        (void)snprintf(what, sizeof(what), "the model registry \"%s\"", name);
        if (is_default(s, name, ns, given)) {
                *ret = s->default_reg;
                r = bff_authorize_service(c, &ret->svc, what);
                if (r == 0)
                        c->reg = ret;
                return r;
        }
        if ((!s->kube_own && !s->kube_token) || !ui_rfc1123_label(name))
                return bff_refused(
                        bff_reply_error(c->resp, 404, "ui", "no model registry named '%s'", name));
        memcpy(svc.ns, ns, strlen(ns) + 1);
        memcpy(svc.name, name, strlen(name) + 1);
        /* authorized first, as upstream does: a refused user learns nothing of the Service */
        r = bff_authorize_service(c, &svc, what);
        if (r == 0)
                r = discovered(c, &svc, ret);
        if (r == 0)
                c->reg = ret;
        return r;
}

int bff_registry_named(struct call *c, const char *name, struct ui_registry *ret)
{
        struct ui_server *s = c->s;
        const char *ns;
        bool given;
        int r = 0;

        ns = bff_registry_namespace(c, &given, &r);
        if (!ns)
                return bff_refused(r);
        if (!name || is_default(s, name, ns, given)) {
                *ret = s->default_reg;
        } else if (ui_rfc1123_label(name)) {
                *ret = (struct ui_registry){ .https = false };
                memcpy(ret->name, name, strlen(name) + 1);
                memcpy(ret->svc.name, name, strlen(name) + 1);
                memcpy(ret->svc.ns, ns, strlen(ns) + 1);
        } else
                return bff_refused(bff_reply_error(c->resp, 400, "ui",
                                                   "no model registry named '%.80s'", name));
        c->reg = ret;
        return 0;
}

/* ---- the list ---- */

static const struct gvr GVR_ENDPOINTS = { "", "v1", "endpoints" };

/* Whether the registry's Service has a ready address, read as the caller; a failed read (the
 * caller may not read Endpoints, typically) counts as available, as upstream decides it. */
static bool available(struct kube_client *k, const struct ui_service_ref *svc)
{
        CLEANUP(ui_json_decrefp) json_t *ep = NULL;
        struct kube_status st = { 0 };

        if (kube_get(k, &GVR_ENDPOINTS, svc->ns, svc->name, &ep, &st) < 0)
                return true;
        return ui_endpoints_ready(ep);
}

/* Appends the entry of a Service (borrowed) when it is a registry other than the configured. */
static int add_service(struct call *c, struct kube_client *k, const json_t *obj, json_t *items)
{
        const struct ui_service_ref *def = &c->s->default_reg.svc;
        struct ui_registry reg;
        char msg[256];

        if (ui_registry_from_service(obj, c->s->registry_external, &reg, msg, sizeof(msg)) < 0) {
                if (msg[0])
                        log_debug("ui: %s, not offered", msg);
                return 0;
        }
        if (streq(reg.svc.ns, def->ns) && streq(reg.svc.name, def->name))
                return 0; /* the configured registry's own Service: offered once */
        if (json_array_size(items) > UI_REGISTRIES_MAX)
                return 0;
        return json_array_append_new(items, ui_registry_entry(&reg, available(k, &reg.svc))) < 0
                       ? -ENOMEM
                       : 0;
}

/* The user may not list Services in ns: those it may get by name (SelfSubjectRulesReview). */
static int discover_by_rules(struct call *c, struct kube_client *k, const char *ns, json_t *items,
                             struct kube_status *st)
{
        CLEANUP(ui_json_decrefp) json_t *review = NULL;
        CLEANUP(ui_json_decrefp) json_t *names = json_array();
        json_t *n;
        size_t i;
        int r;

        if (!names)
                return -ENOMEM;
        r = bff_kube_post(k, RULES_REVIEW_PATH, ui_rules_review_body(ns), &review, st);
        if (r < 0)
                return r;
        r = ui_rules_service_names(review, UI_REGISTRIES_MAX, names);
        if (r < 0)
                return r;
        json_array_foreach(names, i, n) {
                CLEANUP(ui_json_decrefp) json_t *obj = NULL;
                struct kube_status gst = { 0 };

                r = kube_get(k, &BFF_GVR_SERVICES, ns, json_string_value(n), &obj, &gst);
                if (r == -ENOMEM)
                        return r;
                if (r >= 0 && add_service(c, k, obj, items) < 0)
                        return -ENOMEM;
        }
        return 0;
}

/* The registries the caller may see in ns, appended to items; 1 after a refusal is written. */
static int discover(struct call *c, const char *ns, json_t *items)
{
        CLEANUP(bff_kube_holdp) struct kube_hold h = { 0 };
        CLEANUP(ui_json_decrefp) json_t *list = NULL;
        struct kube_list_options lo = { .label_selector = UI_REGISTRY_LABEL_SELECTOR,
                                        .limit = UI_REGISTRIES_MAX };
        struct kube_status st = { 0 };
        json_t *it;
        size_t i;
        int r;

        r = bff_kube_hold_get(c, false, &h);
        if (r < 0)
                return bff_refused(bff_reply_kube_unconfigured(c, r));
        r = kube_list(h.k, &BFF_GVR_SERVICES, ns, &lo, &list, &st);
        if (r == -EACCES && st.http_code == 403)
                r = discover_by_rules(c, h.k, ns, items, &st);
        else if (r >= 0)
                json_array_foreach(json_object_get(list, "items"), i, it)
                        if (add_service(c, h.k, it, items) < 0)
                                return -ENOMEM;
        if (r == -ENOMEM)
                return r;
        if (r < 0)
                return bff_refused(bff_reply_kube_error(c, r, &st, "list", "services", ns, NULL));
        return 0;
}

static json_t *default_entry(const struct ui_server *s)
{
        const struct ui_registry *d = &s->default_reg;

        return json_pack("{s:s,s:s,s:s,s:s,s:b,s:b}", "name", d->name, "displayName",
                         d->display_name, "description", d->description, "serverAddress",
                         s->registry_url ? s->registry_url : "", "isHttps", d->https, "isAvailable",
                         d->url[0] != '\0');
}

int bff_api_registries(struct call *c)
{
        CLEANUP(ui_json_decrefp) json_t *items = json_array();
        const char *ns;
        bool given;
        int r = 0;

        if (!items)
                return -ENOMEM;
        ns = bff_registry_namespace(c, &given, &r);
        if (!ns)
                return r;
        if (!given || streq(ns, c->s->registry_ns))
                if (json_array_append_new(items, default_entry(c->s)) < 0)
                        return -ENOMEM;
        if (c->s->kube_own || c->s->kube_token) {
                r = discover(c, ns, items);
                if (r != 0)
                        return r < 0 ? r : 0;
        }
        return bff_reply_data(c, 200, TAKE_PTR(items));
}
