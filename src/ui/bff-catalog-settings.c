/* SPDX-License-Identifier: Apache-2.0 */
/*
 * modelplane ui: the catalog's source configurations for administrators (bff-internal.h;
 * docs/ui.md, "Settings"), upstream's /api/v1/settings/model_catalog/source_configs. The two
 * ConfigMaps and the API-key Secrets are read and written as the user (impersonation or the
 * user's token), in the namespace of the request's `namespace` parameter, else the catalog
 * Service's; what to write is ui/catalog-settings.h's decision. The user ConfigMap is replaced
 * with the resourceVersion it was read at, so two administrators' changes never overwrite each
 * other silently: the second gets a 409 in words.
 */
#include "ui/bff-internal.h"

#include <errno.h>
#include <string.h>

#include "json/json-util.h"
#include "kube/client.h"
#include "ui/catalog-settings.h"
#include "ui/deploy.h"
#include "ui/views.h"
#include "util/buf.h"
#include "util/uuid.h"

static const struct gvr GVR_CONFIGMAPS = { "", "v1", "configmaps" };
static const struct gvr GVR_SECRETS = { "", "v1", "secrets" };

/* What a route works on: a client as the caller, the namespace, both ConfigMaps as read. */
struct sources_ctx {
        struct kube_hold h;
        const char *ns;
        json_t *defaults_cm, *user_cm; /* owned; NULL when absent */
};

static void sources_ctx_done(struct sources_ctx *x)
{
        bff_kube_holdp(&x->h);
        json_decref(x->defaults_cm);
        json_decref(x->user_cm);
}

/* Reads ConfigMap name as the caller: 0 with *ret (NULL when it does not exist), 1 after a
 * reply, -ENOMEM. */
static int read_cm(struct call *c, struct sources_ctx *x, const char *name, json_t **ret)
{
        struct kube_status st = { 0 };
        int r = kube_get(x->h.k, &GVR_CONFIGMAPS, x->ns, name, ret, &st);

        if (r == -ENOENT) {
                *ret = NULL;
                return 0;
        }
        if (r == -ENOMEM)
                return r;
        if (r < 0)
                return bff_refused(
                        bff_reply_kube_error(c, r, &st, "get", "configmaps", x->ns, name));
        return 0;
}

/* The namespace, a client as the caller and both ConfigMaps; 1 after a reply. */
static int sources_begin(struct call *c, struct sources_ctx *x)
{
        const char *ns = http_req_query(c->req, "namespace");
        int r;

        if (ns && !ui_rfc1123_label(ns))
                return bff_refused(bff_reply_error(c->resp, 400, "ui",
                                                   "namespace \"%.80s\" is not a namespace name",
                                                   ns));
        x->ns = ns ? ns : c->s->access_svc[UP_CATALOG].ns;
        r = bff_kube_hold_get(c, false, &x->h);
        if (r < 0)
                return bff_refused(bff_reply_kube_unconfigured(c, r));
        r = read_cm(c, x, UI_CATALOG_DEFAULT_SOURCES_CM, &x->defaults_cm);
        if (r == 0)
                r = read_cm(c, x, UI_CATALOG_SOURCES_CM, &x->user_cm);
        return r;
}

static struct ui_catalog_cms cms_of(const struct sources_ctx *x)
{
        return (struct ui_catalog_cms){ json_object_get(x->defaults_cm, "data"),
                                        json_object_get(x->user_cm, "data") };
}

/* A core refusal r with err: its status in words. */
static int reply_refusal(struct call *c, int r, const struct error_detail *err)
{
        if (r == -ENOMEM)
                return r;
        return bff_reply_error(c->resp,
                               r == -ENOENT  ? 404
                               : r == -EPERM ? 403
                                             : 400,
                               "ui", "%s", err->message);
}

/* A read: the list (id NULL) or one source. */
static int read_sources(struct call *c, const char *id)
{
        CLEANUP(sources_ctx_done) struct sources_ctx x = { 0 };
        struct ui_catalog_cms cms;
        json_t *out = NULL;
        struct error_detail err = { 0 };
        int r;

        r = sources_begin(c, &x);
        if (r != 0)
                return r < 0 ? r : 0;
        cms = cms_of(&x);
        r = id ? ui_catalog_source_get(&cms, id, &out, &err)
               : ui_catalog_sources_list(&cms, &out, &err);
        if (r < 0)
                return reply_refusal(c, r, &err);
        return bff_reply_data(c, 200, out);
}

int bff_api_catalog_sources(struct call *c)
{
        return read_sources(c, NULL);
}

int bff_api_catalog_source(struct call *c)
{
        return read_sources(c, http_req_param(c->req, "id"));
}

/* Creates or replaces the API-key Secret of a change, or deletes it. 0; 1 after a reply. */
static int write_secret(struct call *c, struct sources_ctx *x, const struct ui_catalog_change *ch)
{
        CLEANUP(ui_json_decrefp) json_t *secret = NULL, *cur = NULL, *out = NULL;
        struct kube_status st = { 0 };
        const char *verb = "create";
        int r;

        if (ch->secret == UI_CATALOG_SECRET_NONE)
                return 0;
        if (ch->secret == UI_CATALOG_SECRET_DELETE) {
                r = kube_delete(x->h.k, &GVR_SECRETS, x->ns, ch->secret_name, NULL, &out, &st);
                if (r < 0 && r != -ENOENT)
                        return r == -ENOMEM ? r
                                            : bff_refused(bff_reply_kube_error(c, r, &st, "delete",
                                                                               "secrets", x->ns,
                                                                               ch->secret_name));
                return 0;
        }
        secret = json_pack("{s:s,s:s,s:{s:s,s:s,s:{s:s,s:s}},s:s,s:{s:s}}", "apiVersion", "v1",
                           "kind", "Secret", "metadata", "name", ch->secret_name, "namespace",
                           x->ns, "labels", "app.kubernetes.io/component", "model-catalog",
                           "hub.kubeflow.org/hf-source", ch->source_label, "type", "Opaque",
                           "stringData", "apiKey", ch->api_key);
        if (!secret)
                return -ENOMEM;
        r = kube_create(x->h.k, &GVR_SECRETS, x->ns, secret, NULL, &out, &st);
        if (r == -EEXIST) {
                /* replace its key, at the version read */
                verb = "update";
                r = kube_get(x->h.k, &GVR_SECRETS, x->ns, ch->secret_name, &cur, &st);
                if (r >= 0) {
                        json_t *meta = json_object_get(secret, "metadata");

                        r = json_object_set(meta, "resourceVersion",
                                            json_object_get(json_object_get(cur, "metadata"),
                                                            "resourceVersion"));
                        if (r >= 0)
                                r = kube_update(x->h.k, &GVR_SECRETS, x->ns, ch->secret_name,
                                                secret, NULL, &out, &st);
                }
        }
        if (r == -ENOMEM)
                return r;
        if (r < 0)
                return bff_refused(
                        bff_reply_kube_error(c, r, &st, verb, "secrets", x->ns, ch->secret_name));
        return 0;
}

/* Writes the user ConfigMap's new data: a replace at the version read, or a create. 0; 1 after
 * a reply. */
static int write_user_cm(struct call *c, struct sources_ctx *x, json_t *data)
{
        CLEANUP(ui_json_decrefp) json_t *cm = NULL, *out = NULL;
        struct kube_status st = { 0 };
        int r;

        if (x->user_cm) {
                cm = json_deep_copy(x->user_cm);
                if (!cm || json_object_set(cm, "data", data) < 0)
                        return -ENOMEM;
                r = kube_update(x->h.k, &GVR_CONFIGMAPS, x->ns, UI_CATALOG_SOURCES_CM, cm, NULL,
                                &out, &st);
        } else {
                cm = json_pack("{s:s,s:s,s:{s:s,s:s,s:{s:s}},s:O}", "apiVersion", "v1", "kind",
                               "ConfigMap", "metadata", "name", UI_CATALOG_SOURCES_CM, "namespace",
                               x->ns, "labels", "app.kubernetes.io/component", "model-catalog",
                               "data", data);
                if (!cm)
                        return -ENOMEM;
                r = kube_create(x->h.k, &GVR_CONFIGMAPS, x->ns, cm, NULL, &out, &st);
        }
        if (r == -ESTALE || r == -EEXIST)
                return bff_refused(bff_reply_error(
                        c->resp, 409, "kubernetes",
                        "the catalog's sources (ConfigMap %s in namespace %s) changed since they "
                        "were read: reload them and apply the change again",
                        UI_CATALOG_SOURCES_CM, x->ns));
        if (r == -ENOMEM)
                return r;
        if (r < 0)
                return bff_refused(bff_reply_kube_error(c, r, &st, x->user_cm ? "update" : "create",
                                                        "configmaps", x->ns,
                                                        UI_CATALOG_SOURCES_CM));
        json_decref(x->user_cm);
        x->user_cm = TAKE_PTR(out);
        return 0;
}

enum change_kind { CHANGE_CREATE, CHANGE_UPDATE, CHANGE_DELETE };

/* Writes a decided change: the Secret first (a ConfigMap never names a key that is not there),
 * then the ConfigMap, then a Secret that goes. 0; 1 after a reply. */
static int apply_change(struct call *c, struct sources_ctx *x, const struct ui_catalog_change *ch)
{
        int r = 0;

        if (ch->secret == UI_CATALOG_SECRET_PUT)
                r = write_secret(c, x, ch);
        if (r == 0)
                r = write_user_cm(c, x, ch->user_data);
        if (r == 0 && ch->secret == UI_CATALOG_SECRET_DELETE)
                r = write_secret(c, x, ch);
        return r;
}

static int change(struct call *c, enum change_kind kind)
{
        CLEANUP(sources_ctx_done) struct sources_ctx x = { 0 };
        CLEANUP(ui_json_decrefp) json_t *in = NULL, *view = NULL;
        CLEANUP(ui_catalog_change_done) struct ui_catalog_change ch = { 0 };
        const char *id = http_req_param(c->req, "id");
        struct ui_catalog_cms cms;
        json_t *data = NULL;
        struct error_detail err = { 0 };
        int r = 0;

        if (kind != CHANGE_DELETE)
                r = bff_body_data(c, &in, &data);
        if (r == 0)
                r = sources_begin(c, &x);
        if (r != 0)
                return r < 0 ? r : 0;
        cms = cms_of(&x);
        if (kind == CHANGE_CREATE)
                r = ui_catalog_source_create(&cms, data, &ch, &err);
        else if (kind == CHANGE_UPDATE)
                r = ui_catalog_source_update(&cms, id, data, &ch, &err);
        else
                r = ui_catalog_source_delete(&cms, id, &ch, &view, &err);
        if (r < 0)
                return reply_refusal(c, r, &err);
        r = apply_change(c, &x, &ch);
        if (r != 0)
                return r < 0 ? r : 0;
        if (kind == CHANGE_DELETE) {
                http_resp_set_text(c->resp, 204, "application/json", "");
                return 0;
        }
        if (kind == CHANGE_CREATE)
                id = json_string_value(json_object_get(data, "id"));
        cms = cms_of(&x);
        r = ui_catalog_source_get(&cms, id, &view, &err);
        if (r < 0)
                return reply_refusal(c, r, &err);
        return bff_reply_data(c, kind == CHANGE_CREATE ? 201 : 200, TAKE_PTR(view));
}

int bff_api_catalog_source_create(struct call *c)
{
        return change(c, CHANGE_CREATE);
}

int bff_api_catalog_source_update(struct call *c)
{
        return change(c, CHANGE_UPDATE);
}

int bff_api_catalog_source_delete(struct call *c)
{
        return change(c, CHANGE_DELETE);
}

static void key_wipep(char **p)
{
        if (*p) {
                explicit_bzero(*p, strlen(*p));
                free(*p);
        }
}

/*
 * The key of a configured hf source the preview names without one (ui_catalog_preview_secret()):
 * both ConfigMaps, then the source's Secret, read as the user, so the user's RBAC decides (a
 * refusal is a 403 naming the verb, the Secret and the namespace). 0 with *ret (owned; NULL: the
 * preview reads none), 1 after a reply, -ENOMEM.
 */
static int preview_key(struct call *c, const json_t *data, char **ret)
{
        CLEANUP(sources_ctx_done) struct sources_ctx x = { 0 };
        CLEANUP(ui_json_decrefp) json_t *secret = NULL;
        struct ui_catalog_cms cms;
        struct kube_status st = { 0 };
        struct error_detail err = { 0 };
        char name[UI_CATALOG_SECRET_NAME_MAX + 1];
        const char *id = json_string_value(json_object_get(data, "id")),
                   *type = json_string_value(json_object_get(data, "type"));
        int r;

        *ret = NULL;
        /* only an hf preview naming a source reads anything */
        if (!id || !id[0] || !type || !streq(type, "hf"))
                return 0;
        r = sources_begin(c, &x);
        if (r != 0)
                return r;
        cms = cms_of(&x);
        r = ui_catalog_preview_secret(&cms, data, name, &err);
        if (r < 0)
                return r == -ENOMEM ? r : bff_refused(reply_refusal(c, r, &err));
        if (r == 0)
                return 0;
        r = kube_get(x.h.k, &GVR_SECRETS, x.ns, name, &secret, &st);
        if (r == -ENOMEM)
                return r;
        if (r < 0)
                return bff_refused(bff_reply_kube_error(c, r, &st, "get", "secrets", x.ns, name));
        r = ui_catalog_secret_key(secret, ret, &err);
        /* the Secret's data goes with the answer; the copy in *ret is wiped by the caller */
        if (r < 0)
                return r == -ENOMEM ? r : bff_refused(reply_refusal(c, r, &err));
        return 0;
}

/* POST /settings/model_catalog/source_preview: upstream's JSON request as the catalog's multipart
 * /sources/preview, for a user who may use the catalog; its page and filter forwarded
 * (statusFilter is the catalog's filterStatus). An hf request naming a configured source by id
 * without a key is previewed with the source's key, read from its Secret as the user. */
int bff_api_catalog_source_preview(struct call *c)
{
        static const char *const page[][2] = { { "pageSize", "pageSize" },
                                               { "nextPageToken", "nextPageToken" },
                                               { "statusFilter", "filterStatus" } };
        CLEANUP(ui_json_decrefp) json_t *in = NULL;
        CLEANUP(buf_releasep) struct buf path = BUF_INIT(4096);
        CLEANUP(key_wipep) char *key = NULL;
        CLEANUP(key_wipep) char *body = NULL;
        struct error_detail err = { 0 };
        char uuid[UUID_STRING_LEN], boundary[64], ct[128];
        json_t *data = NULL;
        size_t len = 0;
        int r;

        r = bff_body_data(c, &in, &data);
        if (r == 0)
                r = bff_authorize(c, UP_CATALOG);
        if (r == 0)
                r = preview_key(c, data, &key);
        if (r != 0)
                return r < 0 ? r : 0;
        r = -EEXIST;
        for (int tries = 0; r == -EEXIST && tries < 4; tries++) {
                if (uuid_random(uuid) < 0)
                        return -ENOMEM;
                (void)snprintf(boundary, sizeof(boundary), "modelplane-%s", uuid);
                r = ui_catalog_preview_body(data, key, boundary, &body, &len, &err);
        }
        if (r == -EINVAL)
                return bff_reply_error(c->resp, 400, "ui", "%s", err.message);
        if (r < 0)
                return r == -EEXIST ? -EIO : r;
        r = buf_puts(&path, "/model_catalog/v1alpha1/sources/preview");
        for (size_t i = 0; r >= 0 && i < ELEMENTSOF(page); i++) {
                const char *v = http_req_query(c->req, page[i][0]);

                if (v)
                        r = ui_query_add(&path, page[i][1], v);
        }
        if (r < 0)
                return r == -E2BIG ? bff_reply_error(c->resp, 414, "ui", "query too long") : r;
        (void)snprintf(ct, sizeof(ct), "multipart/form-data; boundary=%s", boundary);
        return bff_catalog_post(c, buf_str(&path), ct, body, len);
}
