/* SPDX-License-Identifier: Apache-2.0 */
#include "ui/deploy.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "json/json-util.h"
#include "serving/isvc.h"
#include "serving/quantity.h"
#include "ui/views.h"

static bool lower_alnum(char c)
{
        return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
}

static bool alnum(char c)
{
        return lower_alnum(c) || (c >= 'A' && c <= 'Z');
}

bool ui_rfc1123_label(const char *s)
{
        size_t n = s ? strlen(s) : 0;

        if (n == 0 || n > UI_K8S_NAME_MAX || !lower_alnum(s[0]) || !lower_alnum(s[n - 1]))
                return false;
        for (size_t i = 0; i < n; i++)
                if (!lower_alnum(s[i]) && s[i] != '-')
                        return false;
        return true;
}

bool ui_label_value(const char *s)
{
        size_t n = s ? strlen(s) : 0;

        if (!s || n > UI_LABEL_VALUE_MAX)
                return false;
        if (n == 0)
                return true;
        if (!alnum(s[0]) || !alnum(s[n - 1]))
                return false;
        for (size_t i = 0; i < n; i++)
                if (!alnum(s[i]) && !strchr("-_.", s[i]))
                        return false;
        return true;
}

/* A required string member of data; -EINVAL with msg when it is absent, not a string or empty. */
static int required(const json_t *data, const char *key, const char *what, const char **ret,
                    char *msg, size_t len)
{
        const char *v = json_string_value(json_object_get(data, key));

        if (!v || !*v) {
                (void)snprintf(msg, len, "%s is required (\"%s\")", what, key);
                return -EINVAL;
        }
        *ret = v;
        return 0;
}

static int check_name(const char *v, const char *what, char *msg, size_t len)
{
        if (ui_rfc1123_label(v))
                return 0;
        (void)snprintf(msg, len,
                       "%s \"%.80s\" is not valid: use 1 to 63 lower-case letters, digits and "
                       "'-', starting and ending with a letter or digit (an RFC 1123 label)",
                       what, v);
        return -EINVAL;
}

static int check_memory(const char *v, char *msg, size_t len)
{
        struct quantity q;

        if (quantity_parse(v, &q) < 0) {
                (void)snprintf(msg, len,
                               "memory \"%.80s\" is not a Kubernetes quantity (for example 256Mi, "
                               "1Gi or 500M)",
                               v);
                return -EINVAL;
        }
        if (quantity_sign(&q) <= 0) {
                (void)snprintf(msg, len, "memory must be more than zero, not \"%.80s\"", v);
                return -EINVAL;
        }
        return 0;
}

int ui_deploy_request_read(const json_t *data, struct ui_deploy_request *ret, char *msg, size_t len)
{
        struct ui_deploy_request rq = { 0 };
        int r;

        r = required(data, "name", "the TrainedModel's name", &rq.name, msg, len);
        if (r >= 0)
                r = check_name(rq.name, "the TrainedModel's name", msg, len);
        if (r >= 0)
                r = required(data, "inferenceService", "an InferenceService", &rq.isvc, msg, len);
        if (r >= 0)
                r = check_name(rq.isvc, "the InferenceService's name", msg, len);
        if (r >= 0)
                r = required(data, "modelVersionId", "a model version", &rq.version_id, msg, len);
        if (r >= 0 && (!ui_label_value(rq.version_id) || !*rq.version_id)) {
                (void)snprintf(msg, len, "modelVersionId \"%.80s\" is not a registry id",
                               rq.version_id);
                r = -EINVAL;
        }
        if (r >= 0)
                r = required(data, "memory", "the memory the model needs", &rq.memory, msg, len);
        if (r >= 0)
                r = check_memory(rq.memory, msg, len);
        if (r >= 0 && json_object_get(data, "modelRegistry")) {
                rq.registry = json_string_value(json_object_get(data, "modelRegistry"));
                if (!rq.registry || !*rq.registry) {
                        (void)snprintf(msg, len, "modelRegistry must be a registry's name");
                        r = -EINVAL;
                }
        }
        if (r < 0)
                return r;
        *ret = rq;
        return 0;
}

int ui_deploy_version_check(const json_t *version, char *msg, size_t len)
{
        const char *rm = json_string_value(json_object_get(version, "registeredModelId"));
        const char *state = json_string_value(json_object_get(version, "state"));
        const char *name = json_string_value(json_object_get(version, "name"));

        if (!rm || !*rm || !ui_label_value(rm)) {
                (void)snprintf(msg, len,
                               "the model version has no registered model id the link "
                               "labels can carry");
                return -EINVAL;
        }
        if (state && streq(state, "ARCHIVED")) {
                (void)snprintf(msg, len, "version %s is archived: restore it before deploying it",
                               name ? name : "");
                return -EINVAL;
        }
        return 0;
}

const json_t *ui_deploy_artifact(const json_t *artifacts)
{
        json_t *a;
        size_t i;

        json_array_foreach(json_object_get(artifacts, "items"), i, a) {
                const char *type = json_string_value(json_object_get(a, "artifactType"));
                const char *uri = json_string_value(json_object_get(a, "uri"));

                if (type && streq(type, "model-artifact") && uri && *uri)
                        return a;
        }
        return NULL;
}

int ui_deploy_target_check(const json_t *isvc, char *msg, size_t len)
{
        struct isvc_info info;

        if (isvc_info_from_json(isvc, &info) < 0) {
                (void)snprintf(msg, len, "the InferenceService could not be read");
                return -EINVAL;
        }
        if (info.being_deleted) {
                (void)snprintf(msg, len, "InferenceService %s is being deleted", info.name);
                return -EINVAL;
        }
        if (!info.mms) {
                (void)snprintf(msg, len,
                               "InferenceService %s does not serve several models: a "
                               "TrainedModel needs a multi-model InferenceService (a predictor "
                               "without a storageUri)",
                               info.name);
                return -EINVAL;
        }
        return 0;
}

const char *ui_deploy_framework(const json_t *artifact, const char *fallback_format)
{
        const char *f = json_string_value(json_object_get(artifact, "modelFormatName"));

        if (f && *f)
                return f;
        return fallback_format && *fallback_format ? fallback_format : NULL;
}

/* The storageUri of an artifact's URI. Upstream's object-storage form writes
 * s3://BUCKET/PATH?endpoint=...&defaultRegion=...: a TrainedModel's S3 endpoint and region are
 * its InferenceService's (the service account's S3 settings), and the agent would take the query
 * for part of the key, so the query is left out. Its length in *ret_len. */
static const char *storage_uri(const json_t *artifact, size_t *ret_len)
{
        const char *uri = json_string_value(json_object_get(artifact, "uri"));

        if (!uri)
                return NULL;
        *ret_len = strncmp(uri, "s3://", 5) == 0 ? strcspn(uri, "?") : strlen(uri);
        return uri;
}

json_t *ui_deploy_trainedmodel(const struct ui_deploy_request *rq, const json_t *version,
                               const json_t *artifact, const char *fallback_format,
                               const struct ui_service_ref *registry)
{
        const char *rm = json_string_value(json_object_get(version, "registeredModelId"));
        const char *framework = ui_deploy_framework(artifact, fallback_format);
        size_t uri_len = 0;
        const char *uri = storage_uri(artifact, &uri_len);

        if (!rm || !framework || !uri)
                return NULL;
        return json_pack("{s:s,s:s,s:{s:s,s:{s:s,s:s,s:s,s:s}},s:{s:s,s:{s:s%,s:s,s:s}}}",
                         "apiVersion", "serving.kserve.io/v1alpha1", "kind", "TrainedModel",
                         "metadata", "name", rq->name, "labels", UI_LABEL_REGISTERED_MODEL, rm,
                         UI_LABEL_MODEL_VERSION, rq->version_id, UI_LABEL_REGISTRY_NAME,
                         registry->name, UI_LABEL_REGISTRY_NAMESPACE, registry->ns, "spec",
                         "inferenceService", rq->isvc, "model", "storageUri", uri, uri_len,
                         "framework", framework, "memory", rq->memory);
}

int ui_link_selector(const char *rm_id, const char *mv_id, char *buf, size_t len)
{
        int n;

        if ((!rm_id && !mv_id) || (rm_id && (!*rm_id || !ui_label_value(rm_id))) ||
            (mv_id && (!*mv_id || !ui_label_value(mv_id))))
                return -EINVAL;
        if (rm_id && mv_id)
                n = snprintf(buf, len, "%s=%s,%s=%s", UI_LABEL_REGISTERED_MODEL, rm_id,
                             UI_LABEL_MODEL_VERSION, mv_id);
        else if (rm_id)
                n = snprintf(buf, len, "%s=%s", UI_LABEL_REGISTERED_MODEL, rm_id);
        else
                n = snprintf(buf, len, "%s=%s", UI_LABEL_MODEL_VERSION, mv_id);
        if (n < 0 || (size_t)n >= len)
                return -ENAMETOOLONG;
        return n;
}

bool ui_link_ours(const json_t *obj, const struct ui_service_ref *registry)
{
        const json_t *labels = json_get_path(obj, "metadata", "labels", NULL);
        const char *name = json_string_value(json_object_get(labels, UI_LABEL_REGISTRY_NAME));
        const char *ns = json_string_value(json_object_get(labels, UI_LABEL_REGISTRY_NAMESPACE));

        if (name && *name && !streq(name, registry->name))
                return false;
        return !(ns && *ns && !streq(ns, registry->ns));
}

bool ui_object_live(const json_t *obj)
{
        return json_is_object(obj) && !json_get_path(obj, "metadata", "deletionTimestamp", NULL);
}

static const char *condition_status(const json_t *obj, const char *type)
{
        json_t *c;
        size_t i;

        json_array_foreach(json_get_path(obj, "status", "conditions", NULL), i, c) {
                const char *t = json_string_value(json_object_get(c, "type"));

                if (t && streq(t, type))
                        return json_string_value(json_object_get(c, "status"));
        }
        return NULL;
}

bool ui_tm_assigned(const json_t *tm, const char **ret_isvc, int64_t *ret_bytes)
{
        const char *isvc = json_get_string_path(tm, "spec", "inferenceService", NULL);
        const char *mem = json_get_string_path(tm, "spec", "model", "memory", NULL);
        const char *avail = condition_status(tm, "MemoryResourceAvailable");
        int64_t b;

        if (!isvc || !ui_object_live(tm) || !ui_memory_bytes(mem, &b) ||
            (avail && streq(avail, "False")))
                return false;
        *ret_isvc = isvc;
        *ret_bytes = b;
        return true;
}

/* The names gathered for a refusal: "A, B, C" of at most UI_ARCHIVE_NAMED_MAX, and a count. */
struct named {
        char text[768];
        size_t shown, more;
};

static void named_add(struct named *n, const char *kind, const char *ns, const char *name,
                      const char *extra)
{
        size_t used = strlen(n->text);

        if (n->shown >= UI_ARCHIVE_NAMED_MAX) {
                n->more++;
                return;
        }
        (void)snprintf(n->text + used, sizeof(n->text) - used, "%s%s %s%s%s%s",
                       n->shown ? ", " : "", kind, ns ? ns : "", ns ? "/" : "", name,
                       extra ? extra : "");
        n->shown++;
}

static void objects_add(struct named *n, const char *kind, const json_t *list,
                        const struct ui_service_ref *registry)
{
        json_t *o;
        size_t i;

        json_array_foreach(list, i, o) {
                const char *name = json_get_string_path(o, "metadata", "name", NULL);

                if (name && ui_object_live(o) && ui_link_ours(o, registry))
                        named_add(n, kind, json_get_string_path(o, "metadata", "namespace", NULL),
                                  name, NULL);
        }
}

/* Whether an InferenceService called name (up to len bytes) is among the live ones in isvcs. */
static bool isvc_listed(const json_t *isvcs, const char *name, size_t len,
                        const struct ui_service_ref *registry)
{
        json_t *o;
        size_t i;

        json_array_foreach(isvcs, i, o) {
                const char *n = json_get_string_path(o, "metadata", "name", NULL);

                if (n && strlen(n) == len && strneq(n, name, len) && ui_object_live(o) &&
                    ui_link_ours(o, registry))
                        return true;
        }
        return false;
}

static void records_add(struct named *n, const json_t *records, const json_t *isvcs,
                        const struct ui_service_ref *registry)
{
        json_t *rec;
        size_t i;

        json_array_foreach(records, i, rec) {
                const char *state = json_string_value(json_object_get(rec, "desiredState"));
                const char *name = json_string_value(json_object_get(rec, "name"));
                const char *id = json_string_value(json_object_get(rec, "id"));
                char extra[96];
                size_t base;

                if (!state || !streq(state, "DEPLOYED") || !name)
                        continue;
                /* the registry controller names a record "<InferenceService>/<uid>" */
                base = strcspn(name, "/");
                if (isvc_listed(isvcs, name, base, registry))
                        continue;
                (void)snprintf(extra, sizeof(extra), " (recorded DEPLOYED in the registry%s%s)",
                               id ? ", id " : "", id ? id : "");
                named_add(n, "InferenceService", NULL, name, extra);
        }
}

bool ui_archive_refusal(const char *what, const json_t *tms, const json_t *isvcs,
                        const json_t *records, const struct ui_service_ref *registry, char *msg,
                        size_t len)
{
        struct named n = { .text = "" };
        char more[48] = "";

        objects_add(&n, "TrainedModel", tms, registry);
        objects_add(&n, "InferenceService", isvcs, registry);
        records_add(&n, records, isvcs, registry);
        if (n.shown == 0)
                return false;
        if (n.more)
                (void)snprintf(more, sizeof(more), " and %zu more", n.more);
        (void)snprintf(msg, len,
                       "%s cannot be archived while it is deployed: it is served by %s%s. "
                       "Delete %s first.",
                       what, n.text, more, n.shown + n.more > 1 ? "those deployments" : "it");
        return true;
}

unsigned ui_deploy_error(int r, const struct kube_status *st, const char *user, const char *ns,
                         const char *name, const char *server, char *msg, size_t len)
{
        if (st && st->http_code == 409) {
                (void)snprintf(msg, len,
                               "a TrainedModel named %s already exists in namespace %s: choose "
                               "another name",
                               name, ns);
                return 409;
        }
        /* an admission webhook's denial is not RBAC: its message says what is wrong */
        if (st && (st->http_code == 400 || st->http_code == 403 || st->http_code == 422) &&
            strstr(st->message, "admission webhook")) {
                (void)snprintf(msg, len, "the TrainedModel was refused: %s", st->message);
                return 400;
        }
        return ui_kube_error(r, st, user, "create", "trainedmodels.serving.kserve.io", ns, NULL,
                             server, msg, len);
}
