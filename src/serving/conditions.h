/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

/*
 * struct conditions: knative's "living condition set" (knative.dev/pkg apis/condition_set.go) as
 * used by TrainedModel status (spec trainedmodel.md §3). Pure: "now" is always a parameter.
 *
 * The set has the happy type "Ready" and three dependents, in declaration order:
 * InferenceServiceReady, MemoryResourceAvailable, IsMMSPredictor. Terminal types (Ready and the
 * dependents) have severity ""; any other type gets "Info".
 *
 * Invariants (fields read-only outside conditions.c):
 *  - items is sorted by type (byte-wise) after any change, as knative sorts;
 *  - a condition's ltt changes only when its status, severity, reason or message changes;
 *  - seq orders conditions set within one pass (knative compares sub-second times in memory,
 *    which a seconds-resolution "now" cannot); conditions read from JSON have seq 0.
 */

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/macro.h"
#include "util/time-util.h"

#define CONDITION_READY                     "Ready"
#define CONDITION_INFERENCE_SERVICE_READY   "InferenceServiceReady"
#define CONDITION_MEMORY_RESOURCE_AVAILABLE "MemoryResourceAvailable"
#define CONDITION_IS_MMS_PREDICTOR          "IsMMSPredictor"

#define CONDITION_STATUS_TRUE    "True"
#define CONDITION_STATUS_FALSE   "False"
#define CONDITION_STATUS_UNKNOWN "Unknown"

/* KServe's reasons and messages (§2.2 step 6). */
#define REASON_INFERENCE_SERVICE_NOT_READY "InferenceServiceNotReady"
#define MESSAGE_INFERENCE_SERVICE_NOT_READY \
        "Inference Service needs to be ready before Trained Model can be ready"
#define REASON_IS_NOT_MMS_PREDICTOR "IsNotMMSPredictor"
#define MESSAGE_IS_NOT_MMS_PREDICTOR \
        "Inference Service predictor is not configured for multi-model serving"
#define REASON_MEMORY_RESOURCE_NOT_AVAILABLE "MemoryResourceNotAvailable"
#define MESSAGE_MEMORY_RESOURCE_NOT_AVAILABLE \
        "Inference Service does not have enough memory resources for Trained Model"

/*
 * modelplane's extra reasons (beyond KServe, issue 3 and §10 W3/W4). Messages are built by the
 * caller and name the offending field or ConfigMap.
 *  InvalidSpec        a field of spec is missing or malformed (on MemoryResourceAvailable, so
 *                     knative propagates it to Ready)
 *  ModelConfigFull    models.json would exceed the ConfigMap size limit (on Ready)
 *  ModelConfigPending admitted, but models.json does not hold the entry yet (Ready Unknown)
 */
#define REASON_INVALID_SPEC         "InvalidSpec"
#define REASON_MODEL_CONFIG_FULL    "ModelConfigFull"
#define REASON_MODEL_CONFIG_PENDING "ModelConfigPending"

struct condition {
        char *type;     /* owned */
        char *status;   /* owned: "True", "False", "Unknown" (other strings kept as read) */
        char *severity; /* owned, "" for terminal types */
        usec_t ltt;     /* lastTransitionTime, CLOCK_REALTIME usec; 0 when absent */
        char *reason;   /* owned, "" when none */
        char *message;  /* owned, "" when none */
        uint64_t seq;   /* order of setting within a pass, 0 for conditions read from JSON */
};

struct conditions {
        struct condition *items; /* owned array */
        size_t n;
        uint64_t next_seq;
};

void conditions_init(struct conditions *c);
void conditions_release(struct conditions *c);

/*
 * Reads status.conditions (a JSON array or NULL). Entries without a string "type" are dropped.
 * Returns 0, -EINVAL when @v is neither NULL/null nor an array, -ENOMEM.
 */
_warn_unused_result_ int conditions_from_json(const json_t *v, struct conditions *ret);

/*
 * Builds the JSON array in Go's field order (type, status, severity, lastTransitionTime, reason,
 * message; empty severity/reason/message omitted). Returns: new reference, NULL on OOM.
 */
json_t *conditions_to_json(const struct conditions *c);

/* Returns: borrowed; NULL when no condition has that type. */
const struct condition *conditions_get(const struct conditions *c, const char *type);

bool conditions_is_true(const struct conditions *c, const char *type);
/* Ready is present and "True". */
bool conditions_is_ready(const struct conditions *c);

/* knative SetCondition: a no-op when only ltt would change, otherwise ltt = now and re-sort. */
_warn_unused_result_ int conditions_set(struct conditions *c, const char *type, const char *status,
                                        const char *severity, const char *reason,
                                        const char *message, usec_t now);

_warn_unused_result_ int conditions_mark_true(struct conditions *c, const char *type, usec_t now);
_warn_unused_result_ int conditions_mark_false(struct conditions *c, const char *type,
                                               const char *reason, const char *message, usec_t now);
_warn_unused_result_ int conditions_mark_unknown(struct conditions *c, const char *type,
                                                 const char *reason, const char *message,
                                                 usec_t now);

/*
 * TrainedModelStatus.SetCondition: dispatches on @status ("True" → mark_true, "False" →
 * mark_false, "Unknown" → mark_unknown, anything else or NULL → no-op).
 */
_warn_unused_result_ int conditions_set_condition(struct conditions *c, const char *type,
                                                  const char *status, const char *reason,
                                                  const char *message, usec_t now);

/*
 * For every condition of @c that has a counterpart of the same type in @observed with equal
 * status, severity, reason and message, copies the observed ltt. Makes a status recomputed from
 * scratch idempotent: only real transitions move lastTransitionTime.
 */
void conditions_keep_transition_times(struct conditions *c, const struct conditions *observed);

/* Deep copy. */
_warn_unused_result_ int conditions_copy(const struct conditions *c, struct conditions *ret);

static inline void conditions_releasep(struct conditions *c)
{
        conditions_release(c);
}
