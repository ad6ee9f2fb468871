/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

/*
 * The BFF's wire shapes (docs/ui.md), pure: the {"data": ...} envelope, the error body, weak
 * ETags, the views of InferenceServices, TrainedModels and Events, the messages that turn a
 * Kubernetes refusal into one a person can act on, and the pass-through query strings.
 */

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kube/status.h"
#include "util/buf.h"
#include "util/macro.h"

static inline void ui_json_decrefp(json_t **p)
{
        json_decref(*p);
}

/* Returns: new reference, {"data": data}; takes ownership of data. NULL on OOM. */
json_t *ui_envelope(json_t *data);

/* Returns: new reference, {"error": {"code": "<status>", "message", "source"}}; NULL on OOM. */
json_t *ui_error_body(unsigned status, const char *source, const char *message);

#define UI_ETAG_SIZE 24U /* W/"<16 hex>" plus NUL */
/* The weak ETag of a body. */
void ui_etag(const char *body, size_t len, char ret[UI_ETAG_SIZE]);
/* True when an If-None-Match value (a list, "*", weak or strong) matches etag. */
bool ui_etag_match(const char *if_none_match, const char *etag);

/*
 * The whole bytes of a Kubernetes quantity text ("256Mi", "1G"; a fraction of a byte dropped,
 * beyond INT64_MAX saturated). False when it does not parse or is negative.
 */
bool ui_memory_bytes(const char *text, int64_t *ret);

/*
 * Returns: new references; the views of docs/ui.md ("Deployments"). NULL on OOM. A TrainedModel
 * view carries memoryBytes and the per-replica table of status.annotations
 * ["modelplane.io/replicas"] ("replicas": [{pod, state, reason, since}] or null); an
 * InferenceService view multiModel (as the TrainedModel controller judges it) and
 * predictor.memoryLimitBytes (the limit admission counts against, null when unknown).
 */
json_t *ui_conditions_view(const json_t *obj);
json_t *ui_isvc_view(const json_t *isvc);
json_t *ui_trainedmodel_view(const json_t *tm);
json_t *ui_event_view(const json_t *ev);

/*
 * Whether an Event (the Kubernetes object, borrowed) concerns InferenceService isvc: it is about
 * the InferenceService itself, one of its TrainedModels (tm_names: an object whose keys are their
 * names, borrowed, may be NULL), or one of its ConfigMaps (modelconfig-<isvc>-..., the agents'
 * reports modelstatus-<isvc>-predictor-...).
 */
bool ui_event_of_isvc(const json_t *ev, const char *isvc, const json_t *tm_names);

/* Parses "n/m ..." at the start of a ModelLoaded message. */
bool ui_parse_loaded(const char *message, unsigned *ret_ready, unsigned *ret_total);

/*
 * The status and message for a failed Kubernetes call made as user (may be empty: "you"):
 * 403 "user alice may not list inferenceservices.serving.kserve.io in namespace team-b", 401,
 * 404 naming the object, 400 for a request the client refused to send (a name from the URL no
 * object can have), 503 naming the API server when it could not be reached, 502 otherwise.
 */
unsigned ui_kube_error(int r, const struct kube_status *st, const char *user, const char *verb,
                       const char *resource, const char *ns, const char *name, const char *server,
                       char *msg, size_t len);

/*
 * The status for a failed registry/catalog call: the upstream 4xx as is, 503 when unreachable
 * (status 0), 502 for a 5xx or an answer that is not JSON.
 */
unsigned ui_upstream_status(int r, long upstream_status);

/* Appends "&key=value" (the first one with '?'), percent-encoding both; value NULL adds nothing. */
_warn_unused_result_ int ui_query_add(struct buf *b, const char *key, const char *value);

/* A description of a negative errno (thread-safe, never NULL). */
const char *ui_errno_text(int r);
