/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

/*
 * The TrainedModel admission webhook's wire layer: the admission.k8s.io/v1 and v1beta1
 * AdmissionReview codec and the one-call exchange webhook_review() that turns an HTTP request
 * body into the HTTP status and body to answer with. Pure: no I/O, no clock, no logging; it
 * depends on util and json only. The rules themselves are a callback (admission_validate_fn; the
 * server passes tm_validate_admission() from serving/webhook-rules.h), so this module is
 * unit-testable and fuzzable on its own.
 *
 * Answers (docs/webhook.md has the table):
 *  - a review we can read: HTTP 200 and a review with the request's apiVersion and uid;
 *    allowed, or denied with status {code 403, reason "Forbidden", message} by a rule, or denied
 *    with status {code 400, message} when the request is not about a TrainedModel (another
 *    request kind, an object of another kind), the object cannot be decoded or the operation is
 *    unknown;
 *  - a body we cannot read as a review (not JSON, not an AdmissionReview, no request, no uid, a
 *    field of the wrong type): HTTP 400 with a review carrying code 400 and the reason;
 *  - a Content-Type other than application/json: HTTP 415 (review code 415);
 *  - a body over ADMISSION_BODY_MAX: HTTP 413 (the HTTP server usually answers this first).
 */

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "util/macro.h"

/* controller-runtime's limit on an AdmissionReview body. */
#define ADMISSION_BODY_MAX ((size_t)7 * 1024 * 1024)
/* Longest request.uid we accept (the API server sends a 36-character UUID). */
#define ADMISSION_UID_MAX 256U

#define ADMISSION_V1      "admission.k8s.io/v1"
#define ADMISSION_V1BETA1 "admission.k8s.io/v1beta1"

/*
 * A decoded AdmissionReview request. Fields are read-only outside this module; release with
 * admission_request_release().
 */
struct admission_request {
        char *api_version;  /* owned; ADMISSION_V1 or ADMISSION_V1BETA1 */
        char *uid;          /* owned; non-empty */
        char *operation;    /* owned; as sent ("CREATE", "UPDATE", "DELETE", "CONNECT", ...) */
        char *kind_group;   /* owned; request.kind.group ("" for the core group) */
        char *kind_version; /* owned; request.kind.version */
        char *kind_kind;    /* owned; request.kind.kind */
        char *sub_resource; /* owned; NULL when absent */
        char *name;         /* owned; request.name, NULL when absent */
        char *namespace_;   /* owned; request.namespace, NULL when absent */
        json_t *object;     /* new reference; NULL when absent or null */
        json_t *old_object; /* new reference; NULL when absent or null */
        bool dry_run;
};

void admission_request_release(struct admission_request *req);

/*
 * Decodes an AdmissionReview body of len bytes (not necessarily NUL-terminated) into *ret, which
 * is zeroed first and owned by the caller on success. Strict: exactly one JSON object, no
 * duplicate keys, apiVersion one of the two above, kind "AdmissionReview", no unknown top-level
 * fields, a request object with a non-empty uid and an operation, known request fields of the
 * right JSON type (unknown request fields are tolerated, as newer API servers may add some).
 * Returns 0, -EFBIG when len > ADMISSION_BODY_MAX, -EINVAL with a reason in reterr (when
 * non-NULL, size reterr_len), or -ENOMEM.
 */
_warn_unused_result_ int admission_review_decode(const char *data, size_t len,
                                                 struct admission_request *ret, char *reterr,
                                                 size_t reterr_len);

/*
 * Formats a response review the way Go's encoder writes it (field order kind, apiVersion,
 * response{uid, allowed, status{metadata, message, reason, code}}, trailing newline). reason and
 * message may be NULL (omitted). Returns an owned string, NULL on OOM.
 */
char *admission_review_format_response(const char *api_version, const char *uid, bool allowed,
                                       int code, const char *reason, const char *message);

/*
 * The rules, with the contract of tm_validate_admission() (serving/webhook-rules.h): returns
 * ADMISSION_ALLOWED (0); ADMISSION_DENIED (1, answered with code 403 and reason "Forbidden");
 * ADMISSION_BAD_REQUEST (2, code 400: undecodable object, unknown operation); or a negative errno
 * (-ENOMEM is passed up, anything else is answered with code 400). For the non-zero verdicts
 * *ret_denial_message is an owned message (or NULL). @object and @old_object are request.object
 * and request.oldObject, NULL when absent or null, borrowed.
 */
enum {
        ADMISSION_ALLOWED = 0,
        ADMISSION_DENIED = 1,
        ADMISSION_BAD_REQUEST = 2,
};

typedef int admission_validate_fn(const char *operation, const json_t *object,
                                  const json_t *old_object, char **ret_denial_message);

/* What to send back for one request. Release with admission_answer_release(). */
struct admission_answer {
        unsigned http_status; /* 200, or 400/413/415 for a body that is not a readable review */
        char *body;           /* owned; a JSON AdmissionReview, NUL-terminated */
        size_t body_len;
        bool allowed;            /* response.allowed */
        int code;                /* response.status.code */
        const char *api_version; /* static; ADMISSION_V1 or ADMISSION_V1BETA1, as answered */
};

void admission_answer_release(struct admission_answer *a);

/*
 * Handles one webhook call for TrainedModels: checks the content type (NULL counts as missing),
 * decodes the review, checks that it is about serving.kserve.io/v1alpha1 TrainedModel (request
 * kind, and the kind of the objects when they say), runs validate for every operation (the rules
 * decide about DELETE, CONNECT and unknown ones) and encodes the answer. Returns 0 with
 * *ret filled (denials included), or -ENOMEM.
 */
_warn_unused_result_ int webhook_review(const char *content_type, const char *body, size_t len,
                                        admission_validate_fn *validate,
                                        struct admission_answer *ret);
