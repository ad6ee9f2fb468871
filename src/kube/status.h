/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

/*
 * The one place where an API-server outcome becomes an errno (house style 5.5):
 *
 *   400, 422 Invalid            -EINVAL     bug or bad spec: terminal
 *   401, 403                    -EACCES     credentials / RBAC: terminal (401: re-read token once)
 *   404 NotFound                -ENOENT     the object is gone
 *   409 AlreadyExists           -EEXIST     create raced: re-read
 *   409 Conflict, 410 Gone      -ESTALE     stale resourceVersion: re-read and retry / relist
 *   413                         -E2BIG
 *   other 4xx (405, 406, 415)   -EINVAL     a request we should not have sent: terminal
 *   429, 503                    -EAGAIN     retry after retry_after seconds
 *   504, transfer timeout       -ETIMEDOUT  retry with backoff
 *   connect failure             -ECONNREFUSED
 *   other 5xx, transport errors -EIO
 *   allocation failure          -ENOMEM
 *
 * Callers that need more detail read struct kube_status, decoded from the metav1.Status body;
 * kube_status_to_error_detail() gives it as the tree's one error-detail type.
 */

#include <jansson.h>

#include "util/error-detail.h"
#include "util/macro.h"

struct kube_status {
        int http_code;     /* 0 when no HTTP response was received */
        char reason[64];   /* metav1.Status reason: "NotFound", "Conflict", "Expired" ... */
        char message[512]; /* metav1.Status message, or the transport error */
        unsigned
                retry_after; /* seconds, from Retry-After or details.retryAfterSeconds; 0 if none */
};

/* Maps an HTTP code plus optional metav1.Status reason to a negative errno (0 for 2xx). */
int kube_status_to_errno(int http_code, const char *reason);

/*
 * Fills *ret from an error response: code, and reason/message from a metav1.Status body when the
 * body is one (body may be NULL or not JSON). Returns the errno of kube_status_to_errno().
 */
int kube_status_from_response(int http_code, const char *body, size_t len, struct kube_status *ret);

/*
 * The Status as a struct error_detail (util/error-detail.h), for code that reports errors of
 * several sources in one form: status http_code, error kube_status_to_errno(), message the
 * Status message, field "" and kind by the answer: 400/422 invalid, 404 not found, 409
 * conflict, 429/503/504 and no answer (0) unavailable, any other internal. Returns the errno.
 */
int kube_status_to_error_detail(const struct kube_status *st, struct error_detail *ret);

/* Decodes a watch ERROR event object (a metav1.Status) into *ret; returns its errno. */
int kube_status_from_json(const json_t *status, struct kube_status *ret);
