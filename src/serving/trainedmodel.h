/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

/*
 * Reading and validating a TrainedModel (serving.kserve.io/v1alpha1, spec trainedmodel.md §1).
 * Pure. An invalid spec is not an error of the reader: the TrainedModel still has a name and a
 * status to write, so trained_model_from_json() succeeds and records the first invalid field; the planner
 * then gives the model a False condition naming that field (issue 3, "invalid specs").
 *
 * struct trained_model borrows every string and JSON value from the object it was read from: keep that JSON
 * alive (and unmodified) while the struct is used.
 */

#include <jansson.h>
#include <stdbool.h>

#include "serving/quantity.h"
#include "util/macro.h"
#include "util/time-util.h"

#define TM_FINALIZER       "trainedmodel.finalizer"
#define TM_LABEL_ISVC      "inferenceservice"
#define TM_LABEL_ALLOCATED "serving.kserve.io/trainedmodel-allocated"
/* A label value's limit (Kubernetes IsValidLabelValue): spec.inferenceService is the value of
 * TM_LABEL_ISVC and of the ConfigMap's serving.kserve.io/inferenceservice label. */
#define TM_LABEL_VALUE_MAX     63
#define TM_INVALID_FIELD_MAX   64
#define TM_INVALID_MESSAGE_MAX 512

struct trained_model {
        const char *name;               /* borrowed; metadata.name, never NULL */
        const char *namespace_;         /* borrowed; "" when absent */
        const char *uid;                /* borrowed; NULL when absent */
        const char *resource_version;   /* borrowed; NULL when absent */
        usec_t created;                 /* metadata.creationTimestamp, 0 when absent/unparsable */
        bool being_deleted;             /* metadata.deletionTimestamp is set */
        bool has_finalizer;             /* TM_FINALIZER is in metadata.finalizers */
        const json_t *labels;           /* borrowed; NULL when absent */
        const json_t *finalizers;       /* borrowed; NULL when absent */
        const json_t *owner_references; /* borrowed; NULL when absent */
        const json_t *status;           /* borrowed; NULL when absent */

        const char *isvc;        /* borrowed; spec.inferenceService, NULL when missing/invalid */
        const char *storage_uri; /* borrowed; NULL when missing/invalid */
        const char *framework;   /* borrowed; NULL when missing/invalid */
        struct quantity memory;  /* spec.model.memory; zero unless valid */

        bool valid;                                   /* spec passed every check */
        char invalid_field[TM_INVALID_FIELD_MAX];     /* e.g. "spec.model.memory" */
        char invalid_message[TM_INVALID_MESSAGE_MAX]; /* names the field */
};

/*
 * Reads a TrainedModel. Returns 0 (check ->valid for the spec), or -EINVAL when @obj is not an
 * object or has no string metadata.name.
 *
 * Spec checks, first failure recorded: spec is an object; spec.inferenceService a non-empty
 * string of at most TM_LABEL_VALUE_MAX characters (->isvc is set all the same); spec.model an
 * object; spec.model.storageUri a non-empty string; spec.model.framework a
 * string; spec.model.memory present, a quantity, not negative.
 */
_warn_unused_result_ int trained_model_from_json(const json_t *obj, struct trained_model *ret);

/* The value of label @key, NULL when absent. Borrowed. */
const char *trained_model_label(const struct trained_model *tm, const char *key);
