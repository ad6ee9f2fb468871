/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

/*
 * The TrainedModel validating-webhook rules (spec trainedmodel.md §7.2), as a pure function: no
 * I/O, no logging. The HTTPS server maps the verdict onto an AdmissionReview response:
 *
 *   TM_ADMISSION_ALLOWED      allowed: true, status {code: 200}
 *   TM_ADMISSION_DENIED       allowed: false, status {message, reason: "Forbidden", code: 403}
 *   TM_ADMISSION_BAD_REQUEST  allowed: false, status {message, code: 400} (no reason): the object
 *                             could not be decoded, or the operation is unknown
 *
 * Rules, first failure wins (KServe's exact messages):
 *   CREATE  1. metadata.name matches ^[a-zA-Z0-9_-]+$
 *           2. spec.model.storageUri starts with s3://, gs://, https:// or http://
 *           3. (beyond KServe) spec.model.memory is present and a non-negative quantity
 *           5. (placement, serving/spread.h) the annotation modelplane.io/copies, when present,
 *              is a positive integer up to SPREAD_COPIES_MAX or "all"
 *   UPDATE  0. new object has metadata.deletionTimestamp: allowed, nothing else is checked
 *           1-3, 5 as CREATE on the new object
 *           4. spec.model.memory is numerically unchanged (an old memory that does not parse is
 *              not compared, so a broken value can be repaired)
 *   DELETE, CONNECT: allowed.  Anything else: bad request `unknown operation "<op>"`.
 */

#include <jansson.h>

#include "util/macro.h"

enum tm_admission_verdict {
        TM_ADMISSION_ALLOWED = 0,
        TM_ADMISSION_DENIED = 1,
        TM_ADMISSION_BAD_REQUEST = 2,
};

/*
 * Validates an admission request for a TrainedModel. @object is request.object, @old_object is
 * request.oldObject (NULL or JSON null for CREATE); both borrowed.
 *
 * Returns a verdict (>= 0) and sets *ret_denial_message to NULL for TM_ADMISSION_ALLOWED, or to
 * an owned message (caller frees) for the other verdicts. Returns -EINVAL when @operation or
 * @ret_denial_message is NULL, -ENOMEM on allocation failure; *ret_denial_message is then untouched.
 */
_warn_unused_result_ int tm_validate_admission(const char *operation, const json_t *object,
                                               const json_t *old_object, char **ret_denial_message);
