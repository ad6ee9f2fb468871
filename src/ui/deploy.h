/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

/*
 * Deploying a registered model version from the console, and what ties a deployment to the
 * registry (docs/ui.md, "Deploying a registered version"). Pure: no I/O, no clock, no logging.
 *
 *  - the deploy request {"name", "inferenceService", "modelVersionId", "memory"} read and
 *    checked: names are RFC 1123 labels, memory a positive Kubernetes quantity;
 *  - the version's model artifact (storageUri, format) and the TrainedModel to create, with the
 *    registry's link labels (the ones upstream's InferenceService controller reads);
 *  - whether an InferenceService can take TrainedModels (multi-model, not being deleted), as the
 *    TrainedModel controller judges it (serving/isvc.h);
 *  - the label selector of a model's or a version's deployments, and whether an object's link
 *    names this registry;
 *  - the refusal to archive a model or version that a live deployment serves;
 *  - a failed create in words (a name clash, an admission webhook's denial, RBAC).
 */

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kube/status.h"
#include "ui/access.h"
#include "util/macro.h"

/* The link labels (upstream's params.env; docs/mrlink.md). */
#define UI_LABEL_REGISTERED_MODEL   "modelregistry.kubeflow.org/registered-model-id"
#define UI_LABEL_MODEL_VERSION      "modelregistry.kubeflow.org/model-version-id"
#define UI_LABEL_REGISTRY_NAME      "modelregistry.kubeflow.org/name"
#define UI_LABEL_REGISTRY_NAMESPACE "modelregistry.kubeflow.org/namespace"

#define UI_LABEL_VALUE_MAX 63U
/* Deployments named in an archive refusal; the rest are counted. */
#define UI_ARCHIVE_NAMED_MAX 3U

/* A deploy request; every string borrowed from the body it was read from. */
struct ui_deploy_request {
        const char *name;       /* the TrainedModel's name */
        const char *isvc;       /* its InferenceService (spec.inferenceService) */
        const char *version_id; /* the registered model version */
        const char *memory;     /* spec.model.memory */
        const char *registry;   /* "modelRegistry": the registry's name; NULL = the configured */
};

/* An RFC 1123 label: 1-63 of [a-z0-9-], starting and ending with [a-z0-9]. */
bool ui_rfc1123_label(const char *s);
/* A Kubernetes label value: 0-63 of [A-Za-z0-9._-], starting and ending alphanumeric. */
bool ui_label_value(const char *s);

/*
 * Reads the "data" object of a deploy request (borrowed). Returns 0, or -EINVAL with a message
 * naming the field and what it must be in msg.
 */
_warn_unused_result_ int ui_deploy_request_read(const json_t *data, struct ui_deploy_request *ret,
                                                char *msg, size_t len);

/*
 * Whether version (the registry's ModelVersion, borrowed) can be deployed: 0, or -EINVAL with the
 * reason in msg (it is archived, or has no registeredModelId that a label can carry).
 */
_warn_unused_result_ int ui_deploy_version_check(const json_t *version, char *msg, size_t len);

/* The artifact that gives a TrainedModel its storageUri: the first item of an artifact list
 * (the registry's {"items": [...]}) of type "model-artifact" with a non-empty uri; borrowed,
 * NULL when there is none. */
const json_t *ui_deploy_artifact(const json_t *artifacts);

/*
 * Whether isvc (borrowed) can take TrainedModels: 0, or -EINVAL with the reason in msg (it is
 * being deleted, or is not a multi-model InferenceService: its predictor has a storageUri or no
 * implementation).
 */
_warn_unused_result_ int ui_deploy_target_check(const json_t *isvc, char *msg, size_t len);

/*
 * The TrainedModel to create: rq's name, InferenceService and memory; storageUri from artifact
 * (borrowed, see ui_deploy_artifact); framework from the artifact's modelFormatName, else
 * fallback_format (the InferenceService's, may be NULL); the link labels from rq's version id,
 * version's registeredModelId (checked by ui_deploy_version_check) and registry (the registry's
 * Service). Returns: new reference; NULL on OOM, or when there is no framework (check with
 * ui_deploy_framework first) or no registeredModelId.
 */
json_t *ui_deploy_trainedmodel(const struct ui_deploy_request *rq, const json_t *version,
                               const json_t *artifact, const char *fallback_format,
                               const struct ui_service_ref *registry);

/* The framework a TrainedModel of artifact gets (see above); NULL when neither names one. */
const char *ui_deploy_framework(const json_t *artifact, const char *fallback_format);

/*
 * The label selector of the deployments of registered model rm_id, of its version mv_id, or of
 * version mv_id whatever its model (rm_id NULL). Returns the length, -EINVAL when an id is not a
 * label value (or both are NULL), -ENAMETOOLONG when buf is too small.
 */
_warn_unused_result_ int ui_link_selector(const char *rm_id, const char *mv_id, char *buf,
                                          size_t len);

/* Whether obj's link labels name this registry: a registry name or namespace label that names
 * another Service makes it another registry's; without them it is taken as ours. */
bool ui_link_ours(const json_t *obj, const struct ui_service_ref *registry);

/* Whether obj (a Kubernetes object) serves: it exists and is not being deleted. */
bool ui_object_live(const json_t *obj);

/*
 * Whether TrainedModel tm (borrowed) counts against its InferenceService's memory limit: it is
 * live, its memory parses, and the controller has not refused it (MemoryResourceAvailable is
 * not False). Then its InferenceService's name (borrowed) and its bytes.
 */
bool ui_tm_assigned(const json_t *tm, const char **ret_isvc, int64_t *ret_bytes);

/*
 * The refusal to archive what ("the registered model", "the model version") while it is
 * deployed: tms and isvcs are the Kubernetes objects labelled with its id (arrays, borrowed;
 * objects that are being deleted or name another registry do not count), records the registry's
 * InferenceService records of it (items of its list, borrowed; those whose desiredState is
 * DEPLOYED count, except one already named as an InferenceService above). True with the
 * message (naming up to UI_ARCHIVE_NAMED_MAX of them) when something counts.
 */
bool ui_archive_refusal(const char *what, const json_t *tms, const json_t *isvcs,
                        const json_t *records, const struct ui_service_ref *registry, char *msg,
                        size_t len);

/*
 * A failed create of TrainedModel name in ns by user, in words: 409 "a TrainedModel named … already
 * exists …", an admission webhook's denial as 400 with its message, else as ui_kube_error()
 * (403 naming the user and the namespace, 404, 503 …). server: the API server's URL.
 */
unsigned ui_deploy_error(int r, const struct kube_status *st, const char *user, const char *ns,
                         const char *name, const char *server, char *msg, size_t len);
