/* SPDX-License-Identifier: Apache-2.0 */
#include "webhook/admission.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include <jansson.h>

#include "json/json-util.h"
#include "util/macro.h"

#define TM_GROUP      "serving.kserve.io"
#define TM_VERSION    "v1alpha1"
#define TM_KIND       "TrainedModel"
#define TM_APIVERSION TM_GROUP "/" TM_VERSION

void admission_request_release(struct admission_request *req)
{
        if (!req)
                return;
        free(req->api_version);
        free(req->uid);
        free(req->operation);
        free(req->kind_group);
        free(req->kind_version);
        free(req->kind_kind);
        free(req->sub_resource);
        free(req->name);
        free(req->namespace_);
        json_decref(req->object);
        json_decref(req->old_object);
        *req = (struct admission_request){ 0 };
}

void admission_answer_release(struct admission_answer *a)
{
        if (!a)
                return;
        free(a->body);
        *a = (struct admission_answer){ 0 };
}

/* request.kind: {group, version, kind}; group may be "" (core), version and kind may not. */
struct gvk {
        char *group;
        char *version;
        char *kind;
};

static int dispatch_gvk(const char *name, json_t *v, void *ret, struct error_detail *e)
{
        static const struct json_field table[] = {
                { "group", JSON_STRING, json_dispatch_string, offsetof(struct gvk, group), 0 },
                { "version", JSON_STRING, json_dispatch_string, offsetof(struct gvk, version),
                  JSON_MANDATORY },
                { "kind", JSON_STRING, json_dispatch_string, offsetof(struct gvk, kind),
                  JSON_MANDATORY },
                { 0 },
        };
        struct gvk *g = ret;
        int r;

        r = json_dispatch(v, table, JSON_DISPATCH_ALLOW_UNKNOWN, g, e);
        if (r < 0 && e && e->field[0] == '\0')
                (void)snprintf(e->field, sizeof(e->field), "%s", name);
        return r;
}

/* Type-checks a field we do not keep. */
static int dispatch_ignore(const char *name, json_t *v, void *ret, struct error_detail *e)
{
        (void)name;
        (void)v;
        (void)ret;
        (void)e;
        return 0;
}

/* object/oldObject: a JSON object or null. */
static int dispatch_object(const char *name, json_t *v, void *ret, struct error_detail *e)
{
        json_t **j = ret;

        if (json_is_null(v))
                return 0;
        if (!json_is_object(v)) {
                if (e) {
                        (void)snprintf(e->field, sizeof(e->field), "%s", name);
                        (void)snprintf(e->message, sizeof(e->message),
                                       "field \"%s\" must be an object", name);
                }
                return -EINVAL;
        }
        json_decref(*j);
        *j = json_incref(v);
        return 0;
}

struct review_top {
        char *api_version;
        char *kind;
        json_t *request;
};

struct request_fields {
        char *uid;
        char *operation;
        struct gvk kind;
        char *sub_resource;
        char *name;
        char *namespace_;
        json_t *object;
        json_t *old_object;
        bool dry_run;
};

static void request_fields_release(struct request_fields *f)
{
        free(f->uid);
        free(f->operation);
        free(f->kind.group);
        free(f->kind.version);
        free(f->kind.kind);
        free(f->sub_resource);
        free(f->name);
        free(f->namespace_);
        json_decref(f->object);
        json_decref(f->old_object);
}

static void review_top_release(struct review_top *t)
{
        free(t->api_version);
        free(t->kind);
        json_decref(t->request);
}

static void report(char *reterr, size_t reterr_len, const char *fmt, ...) _printf_(3, 4);
static void report(char *reterr, size_t reterr_len, const char *fmt, ...)
{
        va_list ap;

        if (reterr && reterr_len > 0) {
                va_start(ap, fmt);
                (void)vsnprintf(reterr, reterr_len, fmt, ap);
                va_end(ap);
        }
}

/* Writes the message into reterr and yields r (a macro: the caller's code path sees r itself). */
#define fail(reterr, reterr_len, r, ...) (report((reterr), (reterr_len), __VA_ARGS__), (r))

static int dispatch_failed(int r, const struct error_detail *e, char *reterr, size_t reterr_len)
{
        if (r == -ENOMEM)
                return r;
        return fail(reterr, reterr_len, -EINVAL, "invalid AdmissionReview: %s", e->message);
}

static int check_top(const struct review_top *top, char *reterr, size_t reterr_len)
{
        if (!streq(top->kind, "AdmissionReview"))
                return fail(reterr, reterr_len, -EINVAL,
                            "expected kind AdmissionReview, got \"%.64s\"", top->kind);
        if (!streq(top->api_version, ADMISSION_V1) && !streq(top->api_version, ADMISSION_V1BETA1))
                return fail(
                        reterr, reterr_len, -EINVAL,
                        "unsupported AdmissionReview apiVersion \"%.64s\" (expected " ADMISSION_V1
                        " or " ADMISSION_V1BETA1 ")",
                        top->api_version);
        return 0;
}

static int check_uid(const char *uid, char *reterr, size_t reterr_len)
{
        if (uid[0] == '\0')
                return fail(reterr, reterr_len, -EINVAL, "request.uid is empty");
        if (strlen(uid) > ADMISSION_UID_MAX)
                return fail(reterr, reterr_len, -EINVAL, "request.uid is longer than %u bytes",
                            ADMISSION_UID_MAX);
        return 0;
}

/* The AdmissionReview envelope. */
static const struct json_field top_table[] = {
        { "apiVersion", JSON_STRING, json_dispatch_string, offsetof(struct review_top, api_version),
          JSON_MANDATORY },
        { "kind", JSON_STRING, json_dispatch_string, offsetof(struct review_top, kind),
          JSON_MANDATORY },
        { "request", JSON_OBJECT, json_dispatch_json, offsetof(struct review_top, request),
          JSON_MANDATORY },
        { "response", JSON_ANY_TYPE, dispatch_ignore, 0, 0 },
        { 0 },
};
/* AdmissionReview.request: what we keep, what we accept and ignore. */
static const struct json_field request_table[] = {
        { "uid", JSON_STRING, json_dispatch_string, offsetof(struct request_fields, uid),
          JSON_MANDATORY },
        { "operation", JSON_STRING, json_dispatch_string,
          offsetof(struct request_fields, operation), JSON_MANDATORY },
        { "kind", JSON_OBJECT, dispatch_gvk, offsetof(struct request_fields, kind),
          JSON_MANDATORY },
        { "resource", JSON_OBJECT, dispatch_ignore, 0, JSON_NULLABLE },
        { "subResource", JSON_STRING, json_dispatch_string,
          offsetof(struct request_fields, sub_resource), JSON_NULLABLE },
        { "requestKind", JSON_OBJECT, dispatch_ignore, 0, JSON_NULLABLE },
        { "requestResource", JSON_OBJECT, dispatch_ignore, 0, JSON_NULLABLE },
        { "requestSubResource", JSON_STRING, dispatch_ignore, 0, JSON_NULLABLE },
        { "name", JSON_STRING, json_dispatch_string, offsetof(struct request_fields, name),
          JSON_NULLABLE },
        { "namespace", JSON_STRING, json_dispatch_string,
          offsetof(struct request_fields, namespace_), JSON_NULLABLE },
        { "userInfo", JSON_OBJECT, dispatch_ignore, 0, JSON_NULLABLE },
        { "object", JSON_ANY_TYPE, dispatch_object, offsetof(struct request_fields, object), 0 },
        { "oldObject", JSON_ANY_TYPE, dispatch_object, offsetof(struct request_fields, old_object),
          0 },
        { "dryRun", JSON_TRUE, dispatch_ignore, 0, JSON_NULLABLE },
        { "options", JSON_ANY_TYPE, dispatch_ignore, 0, JSON_NULLABLE },
        { 0 },
};

/* Parses a request body into a JSON object, with the reason for a refusal in @reterr. */
static int parse_body(const char *data, size_t len, json_t **ret, char *reterr, size_t reterr_len)
{
        json_auto_t *root = NULL;
        char perr[160] = "";
        int r;

        if (len > ADMISSION_BODY_MAX)
                return fail(reterr, reterr_len, -EFBIG, "request body is larger than %zu bytes",
                            ADMISSION_BODY_MAX);
        if (len == 0)
                return fail(reterr, reterr_len, -EINVAL, "request body is empty");
        struct error_detail e = { 0 };

        r = json_parse_bounded(data, len, &root, &e);
        if (r == -ENOMEM)
                return r;
        /* the answer's words as before: jansson's text in 160 bytes */
        (void)snprintf(perr, sizeof(perr), "%.159s", e.message);
        if (r < 0)
                return fail(reterr, reterr_len, -EINVAL, "request body is not valid JSON: %s",
                            perr);
        if (!json_is_object(root))
                return fail(reterr, reterr_len, -EINVAL,
                            "request body is not an AdmissionReview (not a JSON object)");
        *ret = TAKE_PTR(root);
        return 0;
}

int admission_review_decode(const char *data, size_t len, struct admission_request *ret,
                            char *reterr, size_t reterr_len)
{
        CLEANUP(review_top_release) struct review_top top = { 0 };
        CLEANUP(request_fields_release) struct request_fields req = { 0 };
        struct error_detail e = { 0 };
        json_auto_t *root = NULL;
        char *kind_group;
        int r;

        if (!data || !ret)
                return -EINVAL;
        r = parse_body(data, len, &root, reterr, reterr_len);
        if (r < 0)
                return r;
        r = json_dispatch(root, top_table, 0, &top, &e);
        if (r < 0)
                return dispatch_failed(r, &e, reterr, reterr_len);
        r = check_top(&top, reterr, reterr_len);
        if (r < 0)
                return r;
        r = json_dispatch(top.request, request_table, JSON_DISPATCH_ALLOW_UNKNOWN, &req, &e);
        if (r < 0)
                return dispatch_failed(r, &e, reterr, reterr_len);
        r = check_uid(req.uid, reterr, reterr_len);
        if (r < 0)
                return r;
        kind_group = req.kind.group ? TAKE_PTR(req.kind.group) : strdup("");
        if (!kind_group)
                return -ENOMEM;

        *ret = (struct admission_request){
                .api_version = TAKE_PTR(top.api_version),
                .uid = TAKE_PTR(req.uid),
                .operation = TAKE_PTR(req.operation),
                .kind_version = TAKE_PTR(req.kind.version),
                .kind_kind = TAKE_PTR(req.kind.kind),
                .sub_resource = TAKE_PTR(req.sub_resource),
                .name = TAKE_PTR(req.name),
                .namespace_ = TAKE_PTR(req.namespace_),
                .object = TAKE_PTR(req.object),
                .old_object = TAKE_PTR(req.old_object),
                .dry_run = json_is_true(json_object_get(top.request, "dryRun")),
        };
        /* Stored on its own, as the one member that may be this function's allocation: a member
         * store lets clang-tidy's analyzer (which does not model CLEANUP()) name the caller's
         * variable that owns it from here on; the struct assignment above does not. */
        ret->kind_group = kind_group;
        return 0;
}

/*
 * Go's encoder escapes <, > and & (HTML safety) and U+2028/U+2029 inside strings; jansson does
 * not. They can only occur inside strings of jansson's compact output, so a byte-level rewrite is
 * exact. Also appends the trailing newline Go's Encoder writes. Returns an owned string or NULL.
 */
static char *go_escape(const char *s)
{
        size_t n = strlen(s), extra = 2;
        char *out, *o;

        for (const char *p = s; *p; p++)
                if (*p == '<' || *p == '>' || *p == '&')
                        extra += 5;
                else if ((unsigned char)p[0] == 0xe2 && (unsigned char)p[1] == 0x80 &&
                         ((unsigned char)p[2] == 0xa8 || (unsigned char)p[2] == 0xa9))
                        extra += 3;
        out = malloc(n + extra);
        if (!out)
                return NULL;
        o = out;
        for (const char *p = s; *p; p++) {
                if (*p == '<' || *p == '>' || *p == '&') {
                        o += snprintf(o, 7, "\\u%04x", (unsigned)*p);
                } else if ((unsigned char)p[0] == 0xe2 && (unsigned char)p[1] == 0x80 &&
                           ((unsigned char)p[2] == 0xa8 || (unsigned char)p[2] == 0xa9)) {
                        o += snprintf(o, 7, "\\u%04x", 0x2000U + ((unsigned char)p[2] - 0x80U));
                        p += 2;
                } else
                        *o++ = *p;
        }
        *o++ = '\n';
        *o = '\0';
        return out;
}

char *admission_review_format_response(const char *api_version, const char *uid, bool allowed,
                                       int code, const char *reason, const char *message)
{
        json_auto_t *status = NULL, *response = NULL, *review = NULL;
        AUTOFREE char *s = NULL;

        status = json_object();
        response = json_object();
        review = json_object();
        if (!status || !response || !review)
                return NULL;
        if (json_object_set_new(status, "metadata", json_object()) < 0 ||
            (message && json_object_set_new(status, "message", json_string(message)) < 0) ||
            (reason && json_object_set_new(status, "reason", json_string(reason)) < 0) ||
            json_object_set_new(status, "code", json_integer(code)) < 0)
                return NULL;
        if (json_object_set_new(response, "uid", json_string(uid ? uid : "")) < 0 ||
            json_object_set_new(response, "allowed", json_boolean(allowed)) < 0 ||
            json_object_set(response, "status", status) < 0)
                return NULL;
        if (json_object_set_new(review, "kind", json_string("AdmissionReview")) < 0 ||
            json_object_set_new(review, "apiVersion",
                                json_string(api_version ? api_version : ADMISSION_V1)) < 0 ||
            json_object_set(review, "response", response) < 0)
                return NULL;
        /* json_string() returns NULL for invalid UTF-8; the set then fails above. */
        s = json_dumps(review, JSON_COMPACT | JSON_PRESERVE_ORDER);
        if (!s)
                return NULL;
        return go_escape(s);
}

/* "application/json", any case, optionally followed by parameters ("; charset=utf-8"). */
static bool content_type_is_json(const char *ct)
{
        static const char json[] = "application/json";
        size_t n = sizeof(json) - 1;

        if (!ct)
                return false;
        while (*ct == ' ' || *ct == '\t')
                ct++;
        if (strncasecmp(ct, json, n) != 0)
                return false;
        ct += n;
        while (*ct == ' ' || *ct == '\t')
                ct++;
        return *ct == '\0' || *ct == ';';
}

/* Fills *a; message must be valid UTF-8 (ours always are: ASCII plus the rules' messages). */
static int answer(struct admission_answer *a, unsigned http_status, const char *api_version,
                  const char *uid, bool allowed, int code, const char *reason, const char *message)
{
        char *body;

        body = admission_review_format_response(api_version, uid, allowed, code, reason, message);
        if (!body && message) /* a message that is not UTF-8 (it quotes user input) */
                body = admission_review_format_response(api_version, uid, allowed, code, reason,
                                                        "denied (message not valid UTF-8)");
        if (!body)
                return -ENOMEM;
        *a = (struct admission_answer){
                .http_status = http_status,
                .body = body,
                .body_len = strlen(body),
                .allowed = allowed,
                .code = code,
                .api_version = api_version && streq(api_version, ADMISSION_V1BETA1)
                                       ? ADMISSION_V1BETA1
                                       : ADMISSION_V1,
        };
        return 0;
}

static const char *json_str_or(const json_t *v, const char *key, const char *dflt)
{
        const char *s = json_string_value(json_object_get(v, key));

        return s ? s : dflt;
}

/* The object (or old object) must be a TrainedModel when it says what it is. */
static bool object_is_tm(const json_t *obj)
{
        return streq(json_str_or(obj, "apiVersion", TM_APIVERSION), TM_APIVERSION) &&
               streq(json_str_or(obj, "kind", TM_KIND), TM_KIND);
}

/* 415 for a body that is not JSON. */
static int answer_content_type(const char *content_type, struct admission_answer *ret)
{
        char msg[640];
        int r;

        (void)snprintf(msg, sizeof(msg), "contentType=%.200s, expected application/json",
                       content_type ? content_type : "");
        r = answer(ret, 415, ADMISSION_V1, "", false, 415, NULL, msg);
        /* The header is user input: if it is not UTF-8, say so without quoting it. */
        if (r == 0 || !content_type)
                return r;
        return answer(ret, 415, ADMISSION_V1, "", false, 415, NULL,
                      "unsupported content type, expected application/json");
}

/* Refuses a review of anything but TrainedModels. Returns 1 when it answered, 0 to go on. */
static int answer_not_tm(const struct admission_request *req, struct admission_answer *ret)
{
        char msg[640];
        int r;

        if (!streq(req->kind_group, TM_GROUP) || !streq(req->kind_version, TM_VERSION) ||
            !streq(req->kind_kind, TM_KIND)) {
                (void)snprintf(msg, sizeof(msg),
                               "this webhook validates " TM_APIVERSION " " TM_KIND
                               ", not %.64s/%.64s %.64s",
                               req->kind_group, req->kind_version, req->kind_kind);
                r = answer(ret, 200, req->api_version, req->uid, false, 400, NULL, msg);
                return r < 0 ? r : 1;
        }
        /* Presence and shape of the objects are the rules' business; the kind is ours. */
        if ((req->object && !object_is_tm(req->object)) ||
            (req->old_object && !object_is_tm(req->old_object))) {
                (void)snprintf(msg, sizeof(msg),
                               "expected a " TM_APIVERSION " " TM_KIND " object, got %.64s %.64s",
                               json_str_or(req->object, "apiVersion", ""),
                               json_str_or(req->object, "kind", ""));
                r = answer(ret, 200, req->api_version, req->uid, false, 400, NULL, msg);
                return r < 0 ? r : 1;
        }
        return 0;
}

/* The answer for the validator's verdict @v (ADMISSION_ALLOWED, ADMISSION_DENIED, or an error). */
static int answer_verdict(const struct admission_request *req, int v, const char *denial,
                          struct admission_answer *ret)
{
        char msg[640];

        if (v == ADMISSION_ALLOWED)
                return answer(ret, 200, req->api_version, req->uid, true, 200, NULL, NULL);
        if (v == ADMISSION_DENIED)
                return answer(ret, 200, req->api_version, req->uid, false, 403, "Forbidden",
                              denial ? denial : "denied");
        if (!denial)
                (void)snprintf(msg, sizeof(msg), "cannot validate the object (%s)",
                               v < 0 && strerrorname_np(-v) ? strerrorname_np(-v) : "bad request");
        return answer(ret, 200, req->api_version, req->uid, false, 400, NULL,
                      denial ? denial : msg);
}

int webhook_review(const char *content_type, const char *body, size_t len,
                   admission_validate_fn *validate, struct admission_answer *ret)
{
        CLEANUP(admission_request_release) struct admission_request req = { 0 };
        char err[512] = "";
        AUTOFREE char *denial = NULL;
        int r;

        if (!ret || !validate)
                return -EINVAL;
        if (!content_type_is_json(content_type))
                return answer_content_type(content_type, ret);
        if (len > ADMISSION_BODY_MAX)
                return answer(ret, 413, ADMISSION_V1, "", false, 413, NULL,
                              "request body is larger than 7 MiB");

        r = admission_review_decode(body ? body : "", body ? len : 0, &req, err, sizeof(err));
        if (r == -ENOMEM)
                return r;
        if (r < 0)
                return answer(ret, r == -EFBIG ? 413 : 400, ADMISSION_V1, "", false,
                              r == -EFBIG ? 413 : 400, NULL, err);
        r = answer_not_tm(&req, ret);
        if (r != 0)
                return r < 0 ? r : 0;

        r = validate(req.operation, req.object, req.old_object, &denial);
        if (r == -ENOMEM)
                return r;
        return answer_verdict(&req, r, denial, ret);
}
