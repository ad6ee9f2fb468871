/* SPDX-License-Identifier: Apache-2.0 */
#include "ui/views.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "json/json-util.h"
#include "serving/isvc.h"
#include "serving/quantity.h"
#include "serving/replicas.h"
#include "util/parse-util.h"

#define REPLICAS_VIEW_MAX 64U                 /* entries of the per-replica table shown */
#define REPLICAS_TEXT_MAX ((size_t)64 * 1024) /* an annotation longer than this is not read */

json_t *ui_envelope(json_t *data)
{
        if (!data)
                return NULL;
        return json_pack("{s:o}", "data", data);
}

json_t *ui_error_body(unsigned status, const char *source, const char *message)
{
        char code[8];

        (void)snprintf(code, sizeof(code), "%u", status);
        return json_pack("{s:{s:s,s:s,s:s}}", "error", "code", code, "message",
                         message ? message : "", "source", source ? source : "ui");
}

void ui_etag(const char *body, size_t len, char ret[UI_ETAG_SIZE])
{
        uint64_t h = 0xcbf29ce484222325ULL; /* FNV-1a 64 */

        for (size_t i = 0; i < len; i++) {
                h ^= (unsigned char)body[i];
                h *= 0x100000001b3ULL;
        }
        (void)snprintf(ret, UI_ETAG_SIZE, "W/\"%016llx\"", (unsigned long long)h);
}

bool ui_etag_match(const char *inm, const char *etag)
{
        const char *want = strneq(etag, "W/", 2) ? etag + 2 : etag;
        size_t wn = strlen(want);
        const char *p = inm;

        if (!inm)
                return false;
        while (*p) {
                const char *e;
                size_t n;

                while (*p == ' ' || *p == ',')
                        p++;
                if (!*p)
                        break;
                e = strchr(p, ',');
                n = e ? (size_t)(e - p) : strlen(p);
                while (n > 0 && p[n - 1] == ' ')
                        n--;
                if (n == 1 && p[0] == '*')
                        return true;
                if (n > 2 && strneq(p, "W/", 2)) {
                        p += 2;
                        n -= 2;
                }
                if (n == wn && strneq(p, want, n))
                        return true;
                if (!e)
                        break;
                p = e + 1;
        }
        return false;
}

/* The whole part of q (value = mag * 10^-9 in base-10^9 limbs: limb 0 is the fraction). */
static int64_t quantity_whole(const struct quantity *q)
{
        int64_t v = 0;

        for (unsigned i = q->n; i > 1; i--) {
                if (__builtin_mul_overflow(v, (int64_t)1000000000, &v) ||
                    __builtin_add_overflow(v, (int64_t)q->mag[i - 1], &v))
                        return INT64_MAX;
        }
        return v;
}

bool ui_memory_bytes(const char *text, int64_t *ret)
{
        struct quantity q;

        if (!text || quantity_parse(text, &q) < 0 || quantity_sign(&q) < 0)
                return false;
        *ret = quantity_whole(&q);
        return true;
}

static json_t *bytes_or_null(const char *text)
{
        int64_t b;

        return ui_memory_bytes(text, &b) ? json_integer((json_int_t)b) : json_null();
}

/* Copies key of from into to when it is present (null stays absent). */
static int copy_field(json_t *to, const json_t *from, const char *key)
{
        json_t *v = json_object_get(from, key);

        return v ? json_object_set(to, key, v) : 0;
}

static json_t *string_or_null(const char *s)
{
        return s ? json_string(s) : json_null();
}

json_t *ui_conditions_view(const json_t *obj)
{
        json_t *conds = json_get_path(obj, "status", "conditions", NULL);
        json_t *out = json_array(), *c;
        size_t i;

        if (!out)
                return NULL;
        json_array_foreach(conds, i, c) {
                static const char *const keys[] = { "reason", "message", "lastTransitionTime",
                                                    "severity" };
                json_t *v = json_pack("{s:s?,s:s?}", "type",
                                      json_string_value(json_object_get(c, "type")), "status",
                                      json_string_value(json_object_get(c, "status")));

                if (!v || json_array_append_new(out, v) < 0) {
                        json_decref(out);
                        return NULL;
                }
                for (size_t k = 0; k < ELEMENTSOF(keys); k++) {
                        const char *s = json_string_value(json_object_get(c, keys[k]));

                        if (json_object_set_new(v, keys[k], string_or_null(s)) < 0) {
                                json_decref(out);
                                return NULL;
                        }
                }
        }
        return out;
}

static bool condition_true(const json_t *obj, const char *type, const json_t **ret_cond)
{
        json_t *conds = json_get_path(obj, "status", "conditions", NULL), *c;
        size_t i;

        json_array_foreach(conds, i, c) {
                const char *t = json_string_value(json_object_get(c, "type"));

                if (t && streq(t, type)) {
                        const char *s = json_string_value(json_object_get(c, "status"));

                        if (ret_cond)
                                *ret_cond = c;
                        return s && streq(s, "True");
                }
        }
        if (ret_cond)
                *ret_cond = NULL;
        return false;
}

/* name, namespace, uid, creationTimestamp, labels, annotations of metadata. */
static json_t *metadata_view(const json_t *obj)
{
        json_t *md = json_object_get(obj, "metadata");
        json_t *v = json_object();

        if (!v)
                return NULL;
        if (copy_field(v, md, "name") < 0 || copy_field(v, md, "namespace") < 0 ||
            copy_field(v, md, "uid") < 0 || copy_field(v, md, "creationTimestamp") < 0 ||
            json_object_set_new(v, "labels", json_object()) < 0 ||
            json_object_set_new(v, "annotations", json_object()) < 0 ||
            copy_field(v, md, "labels") < 0 || copy_field(v, md, "annotations") < 0) {
                json_decref(v);
                return NULL;
        }
        /* last-applied-configuration can be huge and says nothing to the console */
        (void)json_object_del(json_object_get(v, "annotations"),
                              "kubectl.kubernetes.io/last-applied-configuration");
        return v;
}

static int set_common(json_t *v, const json_t *obj)
{
        json_t *conds = ui_conditions_view(obj);

        if (!conds)
                return -ENOMEM;
        if (json_object_set_new(v, "conditions", conds) < 0 ||
            json_object_set_new(v, "ready", json_boolean(condition_true(obj, "Ready", NULL))) < 0 ||
            json_object_set_new(v, "url",
                                string_or_null(json_get_string_path(obj, "status", "url", NULL))) <
                    0)
                return -ENOMEM;
        return 0;
}

/* The predictor's model spec: v1beta1 "model" or the framework shorthand (sklearn, ...). */
static const json_t *predictor_model(const json_t *pred, const char **ret_format)
{
        static const char *const frameworks[] = { "sklearn", "xgboost",    "tensorflow", "pytorch",
                                                  "triton",  "onnx",       "pmml",       "lightgbm",
                                                  "paddle",  "huggingface" };
        json_t *m = json_object_get(pred, "model");

        if (m) {
                *ret_format = json_get_string_path(m, "modelFormat", "name", NULL);
                return m;
        }
        for (size_t i = 0; i < ELEMENTSOF(frameworks); i++) {
                m = json_object_get(pred, frameworks[i]);
                if (m) {
                        *ret_format = frameworks[i];
                        return m;
                }
        }
        *ret_format = NULL;
        return NULL;
}

/* What the TrainedModel controller reads: multi-model or not, and the limit it admits against. */
static int isvc_admission_view(json_t *v, json_t *predictor, const json_t *isvc)
{
        struct isvc_info info;
        json_t *limit = json_null();

        if (isvc_info_from_json(isvc, &info) < 0)
                info = (struct isvc_info){ .mms = false };
        if (info.has_impl && info.limit_known && !quantity_is_zero(&info.memory_limit))
                limit = json_integer((json_int_t)quantity_whole(&info.memory_limit));
        if (json_object_set_new(predictor, "memoryLimitBytes", limit) < 0 ||
            json_object_set_new(v, "multiModel", json_boolean(info.mms)) < 0)
                return -ENOMEM;
        return 0;
}

/*
 * Placement (docs/placement.md): the controller's per-pod summary in the InferenceService's
 * status.annotations["modelplane.io/placement"] as [{"pod","models","assigned","capacity",
 * "draining"}] (bytes), or null without placement or when it does not read (entries that do not
 * are skipped; at most 256).
 */
static json_t *isvc_placement_view(const json_t *isvc)
{
        const char *text = json_get_string_path(isvc, "status", "annotations",
                                                "modelplane.io/placement", NULL);
        json_auto_t *doc = NULL;
        json_t *out, *e;
        size_t i;

        if (!text || strlen(text) > (size_t)256 * 1024)
                return json_null();
        doc = json_loads(text, JSON_REJECT_DUPLICATES, NULL);
        if (!json_is_array(doc))
                return json_null();
        out = json_array();
        json_array_foreach(doc, i, e) {
                const char *pod = json_string_value(json_object_get(e, "pod"));
                json_t *models = json_object_get(e, "models"),
                       *assigned = json_object_get(e, "assigned"),
                       *capacity = json_object_get(e, "capacity");

                if (!out || i >= 256)
                        break;
                if (!pod || !json_is_integer(models) || !json_is_integer(assigned) ||
                    !json_is_integer(capacity))
                        continue;
                if (json_array_append_new(out,
                                          json_pack("{s:s,s:I,s:I,s:I,s:b}", "pod", pod, "models",
                                                    json_integer_value(models), "assigned",
                                                    json_integer_value(assigned), "capacity",
                                                    json_integer_value(capacity), "draining",
                                                    json_is_true(json_object_get(e, "draining")))) <
                    0) {
                        json_decref(out);
                        return NULL;
                }
        }
        return out;
}

json_t *ui_isvc_view(const json_t *isvc)
{
        json_t *pred = json_get_path(isvc, "spec", "predictor", NULL);
        const char *format = NULL;
        const json_t *model = predictor_model(pred, &format);
        /* the memory limit may sit on the model container or on the predictor's first container */
        const json_t *res = json_object_get(model, "resources");
        json_t *v, *p;

        if (!res)
                res = json_object_get(json_array_get(json_object_get(pred, "containers"), 0),
                                      "resources");
        v = metadata_view(isvc);
        if (!v)
                return NULL;
        p = json_pack("{s:o,s:o,s:o,s:o,s:o}", "modelFormat", string_or_null(format), "runtime",
                      string_or_null(json_string_value(json_object_get(model, "runtime"))),
                      "storageUri",
                      string_or_null(json_string_value(json_object_get(model, "storageUri"))),
                      "memoryLimit",
                      string_or_null(json_get_string_path(res, "limits", "memory", NULL)),
                      "memoryRequest",
                      string_or_null(json_get_string_path(res, "requests", "memory", NULL)));
        if (!p || json_object_set_new(v, "predictor", p) < 0 || set_common(v, isvc) < 0 ||
            isvc_admission_view(v, p, isvc) < 0 ||
            json_object_set_new(v, "placement", isvc_placement_view(isvc)) < 0) {
                json_decref(v);
                return NULL;
        }
        return v;
}

bool ui_parse_loaded(const char *message, unsigned *ret_ready, unsigned *ret_total)
{
        unsigned long a = 0, b = 0;
        const char *p = message;
        size_t da = 0, db = 0;

        if (!p)
                return false;
        for (; *p >= '0' && *p <= '9' && da < 9; p++, da++)
                a = a * 10 + (unsigned long)(*p - '0');
        if (da == 0 || *p != '/')
                return false;
        for (p++; *p >= '0' && *p <= '9' && db < 9; p++, db++)
                b = b * 10 + (unsigned long)(*p - '0');
        if (db == 0 || a > b || (*p >= '0' && *p <= '9'))
                return false;
        *ret_ready = (unsigned)a;
        *ret_total = (unsigned)b;
        return true;
}

/* The string fields of one per-replica entry; NULL when it has no pod or state. */
static json_t *replica_view(const json_t *e)
{
        const char *pod = json_string_value(json_object_get(e, "pod"));
        const char *state = json_string_value(json_object_get(e, "state"));

        if (!pod || !state)
                return NULL;
        return json_pack("{s:s,s:s,s:o,s:o}", "pod", pod, "state", state, "reason",
                         string_or_null(json_string_value(json_object_get(e, "reason"))), "since",
                         string_or_null(json_string_value(json_object_get(e, "since"))));
}

/* The per-replica table of a TrainedModel: new reference, JSON null when it has none (or it
 * cannot be read); NULL on OOM. */
static json_t *replicas_view(const json_t *tm)
{
        const char *text = json_get_string_path(tm, "status", "annotations", REPLICAS_ANNOTATION,
                                                NULL);
        json_t *doc = NULL, *out, *e;
        size_t i;

        if (!text || strlen(text) > REPLICAS_TEXT_MAX ||
            json_parse_bounded(text, strlen(text), &doc, /* reterr= */ NULL) < 0 ||
            !json_is_array(doc)) {
                json_decref(doc);
                return json_null();
        }
        out = json_array();
        json_array_foreach(doc, i, e) {
                json_t *r;

                if (!out || i >= REPLICAS_VIEW_MAX)
                        break;
                r = replica_view(e);
                if (r && json_array_append_new(out, r) < 0) {
                        json_decref(out);
                        out = NULL;
                }
        }
        json_decref(doc);
        return out;
}

json_t *ui_trainedmodel_view(const json_t *tm)
{
        json_t *spec = json_object_get(tm, "spec");
        const json_t *loaded_cond = NULL;
        unsigned ready, total;
        json_t *v = metadata_view(tm), *loaded;

        if (!v)
                return NULL;
        (void)condition_true(tm, "ModelLoaded", &loaded_cond);
        if (loaded_cond &&
            ui_parse_loaded(json_string_value(json_object_get(loaded_cond, "message")), &ready,
                            &total))
                loaded = json_pack("{s:I,s:I}", "ready", (json_int_t)ready, "total",
                                   (json_int_t)total);
        else
                loaded = json_null();
        if (!loaded ||
            json_object_set_new(v, "inferenceService",
                                string_or_null(json_string_value(
                                        json_object_get(spec, "inferenceService")))) < 0 ||
            json_object_set_new(v, "storageUri",
                                string_or_null(json_get_string_path(spec, "model", "storageUri",
                                                                    NULL))) < 0 ||
            json_object_set_new(v, "framework",
                                string_or_null(json_get_string_path(spec, "model", "framework",
                                                                    NULL))) < 0 ||
            json_object_set_new(v, "memory",
                                string_or_null(
                                        json_get_string_path(spec, "model", "memory", NULL))) < 0 ||
            json_object_set_new(v, "memoryBytes",
                                bytes_or_null(
                                        json_get_string_path(spec, "model", "memory", NULL))) < 0 ||
            json_object_set_new(v, "replicas", replicas_view(tm)) < 0 ||
            json_object_set_new(v, "loaded", loaded) < 0 || set_common(v, tm) < 0) {
                json_decref(v);
                return NULL;
        }
        return v;
}

json_t *ui_event_view(const json_t *ev)
{
        json_t *io = json_object_get(ev, "involvedObject");
        json_t *count = json_object_get(ev, "count");
        const char *last = json_string_value(json_object_get(ev, "lastTimestamp"));

        /* events.k8s.io-style writers leave lastTimestamp empty and set eventTime */
        if (!last)
                last = json_string_value(json_object_get(ev, "eventTime"));
        return json_pack("{s:o,s:o,s:o,s:I,s:o,s:o,s:{s:o,s:o}}", "type",
                         string_or_null(json_string_value(json_object_get(ev, "type"))), "reason",
                         string_or_null(json_string_value(json_object_get(ev, "reason"))),
                         "message",
                         string_or_null(json_string_value(json_object_get(ev, "message"))), "count",
                         json_is_integer(count) ? json_integer_value(count) : 1, "firstTimestamp",
                         string_or_null(json_string_value(json_object_get(ev, "firstTimestamp"))),
                         "lastTimestamp", string_or_null(last), "involvedObject", "kind",
                         string_or_null(json_string_value(json_object_get(io, "kind"))), "name",
                         string_or_null(json_string_value(json_object_get(io, "name"))));
}

static bool has_prefix_then(const char *s, const char *prefix, const char *isvc, const char *suffix)
{
        size_t a = strlen(prefix), b = strlen(isvc), c = strlen(suffix);

        return strneq(s, prefix, a) && strneq(s + a, isvc, b) && strneq(s + a + b, suffix, c);
}

bool ui_event_of_isvc(const json_t *ev, const char *isvc, const json_t *tm_names)
{
        const json_t *io = json_object_get(ev, "involvedObject");
        const char *kind = json_string_value(json_object_get(io, "kind"));
        const char *name = json_string_value(json_object_get(io, "name"));

        if (!kind || !name)
                return false;
        if (streq(kind, "InferenceService"))
                return streq(name, isvc);
        if (streq(kind, "TrainedModel"))
                return json_object_get(tm_names, name) != NULL;
        if (streq(kind, "ConfigMap"))
                return has_prefix_then(name, "modelconfig-", isvc, "-") ||
                       has_prefix_then(name, REPLICAS_STATUS_PREFIX, isvc, "-predictor-");
        return false;
}

/* A 403: the ui server's own impersonation refused (500), or the user's request (403). */
static unsigned forbidden(const struct kube_status *st, const char *who, const char *verb,
                          const char *what, const char *where, char *msg, size_t len)
{
        if (strstr(st->message, "cannot impersonate")) {
                (void)snprintf(msg, len,
                               "the ui server may not impersonate %s (its RBAC: "
                               "deploy/base/ui/rbac.yaml): %s",
                               who ? who : "the user", st->message);
                return 500;
        }
        (void)snprintf(msg, len, "%s%s may not %s %s%s", who ? "user " : "you", who ? who : "",
                       verb, what, where);
        return 403;
}

unsigned ui_kube_error(int r, const struct kube_status *st, const char *user, const char *verb,
                       const char *resource, const char *ns, const char *name, const char *server,
                       char *msg, size_t len)
{
        const char *who = user && *user ? user : NULL;
        char where[320] = "";
        char what[320];

        if (ns)
                (void)snprintf(where, sizeof(where), " in namespace %s", ns);
        if (name)
                (void)snprintf(what, sizeof(what), "%s %s", resource, name);
        else
                (void)snprintf(what, sizeof(what), "%s", resource);
        switch (st ? st->http_code : 0) {
        case 401:
                (void)snprintf(msg, len, "the Kubernetes API did not accept the credentials: %s",
                               st->message);
                return 401;
        case 403:
                return forbidden(st, who, verb, what, where, msg, len);
        case 404:
                (void)snprintf(msg, len, "%s not found%s", what, where);
                return 404;
        case 0:
                /* refused before anything was sent: a name (from the URL) the API cannot have */
                if (r == -EINVAL) {
                        (void)snprintf(msg, len,
                                       "%.160s%s: not a name the Kubernetes API accepts (no "
                                       "such object can exist)",
                                       what, where);
                        return 400;
                }
                break;
        default:
                if (st->http_code >= 400 && st->http_code < 500) {
                        (void)snprintf(msg, len, "Kubernetes API: %s", st->message);
                        return (unsigned)st->http_code;
                }
                (void)snprintf(msg, len, "Kubernetes API at %s answered %d: %s",
                               server ? server : "?", st->http_code, st->message);
                return 502;
        }
        (void)snprintf(msg, len, "Kubernetes API at %s is unavailable: %s", server ? server : "?",
                       st && st->message[0] ? st->message : ui_errno_text(r));
        return r == -EBADMSG ? 502 : 503;
}

unsigned ui_upstream_status(int r, long upstream_status)
{
        if (upstream_status == 0)
                return r == -E2BIG || r == -EBADMSG ? 502 : 503;
        if (upstream_status >= 400 && upstream_status < 500)
                return (unsigned)upstream_status;
        return 502;
}

static int add_encoded(struct buf *b, const char *s)
{
        static const char hex[] = "0123456789ABCDEF";

        for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
                char e[3] = { '%', hex[*p >> 4], hex[*p & 15] };
                bool plain = (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
                             (*p >= '0' && *p <= '9') || *p == '-' || *p == '_' || *p == '.' ||
                             *p == '~';
                int r = plain ? buf_append(b, (const char *)p, 1) : buf_append(b, e, 3);

                if (r < 0)
                        return r;
        }
        return 0;
}

int ui_query_add(struct buf *b, const char *key, const char *value)
{
        int r;

        if (!value)
                return 0;
        r = buf_append(b, strchr(buf_str(b), '?') ? "&" : "?", 1);
        if (r >= 0)
                r = add_encoded(b, key);
        if (r >= 0)
                r = buf_append(b, "=", 1);
        if (r >= 0)
                r = add_encoded(b, value);
        return r;
}

const char *ui_errno_text(int r)
{
        const char *s = strerrordesc_np(r < 0 ? -r : r);

        return s ? s : "unknown error";
}
