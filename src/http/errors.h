/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

/*
 * The REST servers' error table (house style 5.5): one place that turns an error kind into the
 * HTTP status and the `{"code": "<reason phrase>", "message": "…"}` body of the Model Registry
 * API (spec B.2), shared by the registry and the catalog, plus the one table of reason phrases
 * (Go's http.StatusText, which the upstream servers put into "code").
 */

#include <jansson.h>

struct http_resp;

enum http_error_kind {
        HTTP_ERR_INTERNAL,      /* 500 */
        HTTP_ERR_INVALID,       /* 400: malformed request, bad parameter or body */
        HTTP_ERR_UNPROCESSABLE, /* 422 "Unprocessable Entity" */
        /*
         * 422 whose code says "Bad Request": upstream's generated server answers a zero-valued
         * required field that way (spec B.2, quirk kept for wire compatibility).
         */
        HTTP_ERR_REQUIRED_FIELD,
        HTTP_ERR_NOT_FOUND,   /* 404 */
        HTTP_ERR_METHOD,      /* 405 */
        HTTP_ERR_CONFLICT,    /* 409 */
        HTTP_ERR_TOO_LARGE,   /* 413 */
        HTTP_ERR_UNAVAILABLE, /* 503: retry later (database down or busy) */
        HTTP_ERR__MAX,
};

/* The status of kind (500 for an out-of-range kind). */
unsigned http_error_status(enum http_error_kind kind);

/* The "code" text of kind's body: the reason phrase of its status, but see REQUIRED_FIELD. */
const char *http_error_code(enum http_error_kind kind);

/* Go's http.StatusText for the statuses the servers send, NULL for any other. */
const char *http_status_text(unsigned status);
/* http_status_text(), or "Internal Server Error" for a status it does not know. */
const char *http_reason_phrase(unsigned status);

/*
 * The inverse of kube/status.c's table for the servers: -EINVAL 400, -ENOENT 404,
 * -EEXIST/-ESTALE 409, -E2BIG 413, -EAGAIN/-EBUSY/-ECONNREFUSED/-ECONNRESET 503, else 500.
 */
enum http_error_kind http_error_kind_from_errno(int r);

/* Returns: new reference, {"code","message"} for kind; NULL on OOM. */
json_t *http_error_body(enum http_error_kind kind, const char *message);

/* Sets resp to kind's status and body (500 "out of memory" text when the body cannot be built). */
void http_resp_set_error(struct http_resp *resp, enum http_error_kind kind, const char *message);
