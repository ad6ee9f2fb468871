/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

/*
 * What the TrainedModel controller reads from a parent InferenceService (serving.kserve.io/v1beta1,
 * spec trainedmodel.md §4): readiness, the first predictor implementation, the multi-model rule,
 * the protocol that picks the URL path, the URLs and the memory limit. Pure.
 *
 * struct isvc_info borrows every string from the InferenceService JSON it was read from: keep that
 * JSON alive (and unmodified) while the info is used.
 */

#include <jansson.h>
#include <stdbool.h>

#include "serving/quantity.h"
#include "util/macro.h"

/* The implementation candidates, in KServe's fixed order (§4.2), then custom containers. */
enum isvc_impl {
        ISVC_IMPL_XGBOOST,
        ISVC_IMPL_PYTORCH,
        ISVC_IMPL_TRITON,
        ISVC_IMPL_SKLEARN,
        ISVC_IMPL_TENSORFLOW,
        ISVC_IMPL_ONNX,
        ISVC_IMPL_PMML,
        ISVC_IMPL_LIGHTGBM,
        ISVC_IMPL_PADDLE,
        ISVC_IMPL_HUGGINGFACE,
        ISVC_IMPL_MODEL,
        ISVC_IMPL_CUSTOM,
        ISVC_IMPL__MAX,
        ISVC_IMPL__INVALID = -EINVAL,
};

/* The spec.predictor key ("sklearn", …, "model"), "custom" for containers; NULL out of range. */
const char *isvc_impl_to_string(enum isvc_impl i);

struct isvc_info {
        const char *name;        /* borrowed; metadata.name, "" when absent */
        const char *namespace_;  /* borrowed; metadata.namespace, "" when absent */
        const char *uid;         /* borrowed; metadata.uid, NULL when absent */
        const json_t *labels;    /* borrowed; metadata.labels, NULL when absent */
        bool being_deleted;      /* metadata.deletionTimestamp is set */
        bool ready;              /* status.conditions[type=Ready].status == "True" (§4.1) */
        const char *url;         /* borrowed; status.url, NULL when absent */
        const char *address_url; /* borrowed; status.address.url, NULL when absent */
        bool has_impl;           /* at least one implementation (§4.2) */
        enum isvc_impl impl;     /* the first implementation, when has_impl */
        bool mms;                /* IsMMSPredictor (§4.3), false without an implementation */
        const char *protocol;    /* borrowed or static; "v1" default (§4.4) */
        bool limit_known;        /* false: custom without kserve-container, or unparsable limit */
        struct quantity memory_limit; /* §4.5; zero when limits.memory is absent */
};

/*
 * Reads @isvc (borrowed; must outlive @ret). Returns 0, or -EINVAL when @isvc is not a JSON
 * object. Never fails on odd content: missing or ill-typed fields take their defaults.
 */
_warn_unused_result_ int isvc_info_from_json(const json_t *isvc, struct isvc_info *ret);

/*
 * IsMemoryResourceAvailable: an implementation exists, its limit is known and limit >= total
 * (exact; equality fits).
 */
bool isvc_memory_available(const struct isvc_info *info, const struct quantity *total);

/*
 * The URL path for model @tm under @protocol: "/v1/models/<tm>:predict" for "v1",
 * "/v2/models/<tm>/infer" for "v2", "" for anything else (grpc-v1, grpc-v2, custom values).
 * Returns an owned string, NULL on OOM.
 */
char *isvc_model_path(const char *protocol, const char *tm);

/* base + isvc_model_path(). Returns an owned string, NULL on OOM. */
char *isvc_model_url(const char *base, const char *protocol, const char *tm);

/*
 * The InferenceService as the controllers keep it in their cache (a cache_transform_fn):
 * apiVersion, kind, spec, status and the metadata fields the TrainedModel and model registry
 * controllers read (name, namespace, uid, labels, annotations, finalizers, resourceVersion,
 * generation, deletionTimestamp); managedFields and the rest are dropped to save memory.
 * obj is borrowed. Returns: new reference; NULL on OOM.
 */
json_t *isvc_cache_transform(void *userdata, json_t *obj);
