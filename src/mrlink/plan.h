/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

/*
 * The pure decisions of the InferenceService <-> model registry controller (spec A.5-A.9): what
 * an InferenceService asks for, which registry URL a Service yields, whether customProperties.url
 * must be patched and with what, whether the record must go UNDEPLOYED, when a deleted
 * InferenceService stops waiting for the registry. No I/O, no clock, no logging: the shell
 * (reconciler.h) passes everything in.
 */

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "mrlink/config.h"
#include "util/macro.h"
#include "util/time-util.h"

/* What one InferenceService says; every string borrowed from the object. "has_*" is "key
 * exists", even with an empty value (A.5 step 2). */
struct mrlink_isvc {
        const char *ns, *name, *uid, *resource_version;
        bool has_isid, has_rmid, has_name, has_url;
        const char *isid, *rmid, *mvid; /* mvid NULL when absent or empty */
        const char *mr_name;            /* NAME_LABEL value or NULL */
        const char *mr_url;             /* URL_ANNOTATION value or NULL */
        const char *mr_namespace;       /* NAMESPACE_LABEL value, else REGISTRIES_NAMESPACE */
        const char *status_url;         /* status.url, NULL when unset */
        const char *runtime;            /* spec.predictor.model.runtime, NULL when unset */
        const char *deletion_timestamp; /* NULL when not being deleted */
        bool has_finalizer;
        const char *parent; /* a TrainedModel's spec.inferenceService; NULL for an ISVC */
};

/* Reads isvc (borrowed; ret's strings point into it). -EINVAL without metadata.name/namespace. */
_warn_unused_result_ int mrlink_isvc_read(const struct mrlink_config *cfg, const json_t *isvc,
                                          struct mrlink_isvc *ret);

/*
 * Reads a TrainedModel (borrowed) into the same view: the ids, the labels and annotation naming
 * the registry, status.url, deletion, parent (spec.inferenceService). Nothing writes the IS-id
 * label or our finalizer on TrainedModels, so has_isid and has_finalizer stay false (the record
 * is found by name); runtime stays NULL (the shell takes the parent's). -EINVAL without
 * metadata.name/namespace.
 */
_warn_unused_result_ int mrlink_tm_read(const struct mrlink_config *cfg, const json_t *tm,
                                        struct mrlink_isvc *ret);

/* Whether the controller records this TrainedModel: it has the RM-id label. */
bool mrlink_tm_relevant(const struct mrlink_config *cfg, const json_t *tm);

/* The customProperties a TrainedModel's record is created with beside "url": its parent
 * InferenceService, "trainedModelInferenceService". Returns: owned, NULL on OOM. */
json_t *mrlink_tm_properties(const char *parent);

/* What the record of a live object should say (mrlink_record_patch). */
struct mrlink_record_want {
        const char *url;     /* status.url, NULL when unset (the record's url is then "") */
        bool follow_version; /* modelVersionId follows mvid (TrainedModels) */
        const char *mvid;    /* NULL: the record's modelVersionId is left alone */
        bool deployed;       /* desiredState brought back to DEPLOYED (TrainedModels) */
};

/*
 * The PATCH body that brings record in line with want: customProperties (all of them, url set)
 * when the url differs (checkURLDiff), modelVersionId, desiredState. *ret NULL when nothing
 * differs. Returns 0 or -ENOMEM.
 */
_warn_unused_result_ int mrlink_record_patch(const json_t *record,
                                             const struct mrlink_record_want *want, json_t **ret);

/* Whether the controller acts on this InferenceService at all: an IS-id or RM-id label (A.5
 * step 3), or our finalizer left on it (then it only removes the finalizer). */
bool mrlink_isvc_relevant(const struct mrlink_config *cfg, const json_t *isvc);

/*
 * Base URL of the registry behind Service svc (A.6): "https://<SERVICE_ANNOTATION value>" when
 * the Service carries it, else "http://<name>.<ns>.svc.cluster.local:<port named http-api>".
 * -ENOPROTOOPT when neither; -ENAMETOOLONG when buf is too small.
 */
_warn_unused_result_ int mrlink_service_url(const struct mrlink_config *cfg, const json_t *svc,
                                            char *buf, size_t len);

/*
 * Picks the one Service of a list's items (A.6, no NAME_LABEL): *ret_svc borrowed. -ENOENT when
 * there is none; -ENOTUNIQ when there are several, with their names ("a, b") in names.
 */
_warn_unused_result_ int mrlink_pick_service(const json_t *items, const json_t **ret_svc,
                                             char *names, size_t names_len);

/* The test hook: url rewritten by a "from=to,..." map (exact match) into buf; unchanged when
 * map is NULL or nothing matches. -ENAMETOOLONG when buf is too small. */
_warn_unused_result_ int mrlink_rewrite_url(const char *map, const char *url, char *buf,
                                            size_t len);

/* customProperties.url.string_value of a registry InferenceService, NULL when absent. */
const char *mrlink_record_url(const json_t *record);

/* checkURLDiff (A.5 step 10): whether the record's url differs from status_url (NULL = unset). */
bool mrlink_url_differs(const json_t *record, const char *status_url);

/* The PATCH body of call 4: all custom properties of the record plus url = status_url or "".
 * Returns: owned, NULL on OOM. */
json_t *mrlink_url_patch(const json_t *record, const char *status_url);

/* Whether a deleted InferenceService's record still needs PATCH desiredState UNDEPLOYED: its
 * desiredState is set and is not UNDEPLOYED (A.5 step 12). */
bool mrlink_needs_undeploy(const json_t *record);

/* The record's "id" (string, or an integer printed into buf); NULL when it has none. */
const char *mrlink_record_id(const json_t *record, char *buf, size_t len);

/*
 * Whether a deleted InferenceService has waited long enough for the registry: now (real time)
 * is at least timeout past deletion_timestamp (RFC 3339). An unparsable timestamp counts as
 * expired (no finalizer kept forever on garbage). *ret_remaining gets the time left (0 when
 * expired).
 */
bool mrlink_undeploy_expired(const char *deletion_timestamp, usec_t now, usec_t timeout,
                             usec_t *ret_remaining);

/* Delay before the next attempt of a deletion whose registry calls fail: a quarter of the time
 * spent since deletion, in [1 s, 60 s], never past the deadline (+1 s). */
usec_t mrlink_undeploy_retry_delay(usec_t elapsed, usec_t remaining);

/*
 * A fingerprint of everything a reconcile of isvc depends on (uid, ids, labels and annotation
 * naming the registry, status.url, deletion, finalizer), with isid replaced by id when id is not
 * NULL. Equal fingerprints mean a reconcile would make no registry call: the shell skips them
 * (resyncs and its own label write cost nothing). Written into buf; -ENAMETOOLONG when too small.
 */
_warn_unused_result_ int mrlink_fingerprint(const struct mrlink_isvc *v, const char *id, char *buf,
                                            size_t len);

/* metadata.finalizers of isvc with finalizer added (add) or removed (!add), for a merge patch
 * that also carries resourceVersion rv as precondition. Returns: owned, NULL on OOM. */
json_t *mrlink_finalizer_patch(const json_t *isvc, const char *finalizer, bool add, const char *rv);
