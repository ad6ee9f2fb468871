/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

/*
 * Per-replica model status, aggregated into a TrainedModel's ModelLoaded condition (pure: no
 * I/O, no clock; issue 13 item 5, docs/agent.md "Status").
 *
 * Each serving replica's agent keeps one ConfigMap "modelstatus-<pod>" (agent/status-writer.h):
 * labels serving.kserve.io/inferenceservice=<isvc> and modelplane.io/model-status=agent, an
 * ownerReference to its Pod, data as serving/report.h encodes it (the one codec of both sides).
 *
 * Who counts as a replica (m in "n/m replicas loaded"): every such report of the
 * InferenceService that has an ownerReference to a Pod and is not being deleted. The owner
 * reference is what makes the count follow the pods: the garbage collector deletes a pod's
 * report with the pod, so a deleted or replaced pod leaves the count. A report without a pod
 * owner (the agent could not read its pod) is not counted: nothing would ever remove it.
 *
 * Per replica, a model's state is the agent's, except: absent from the report -> Pending;
 * Loaded from another storageUri than the TrainedModel's -> Pending (the reload has not begun);
 * a report whose models.json does not parse -> Unknown; a stale report -> Stale.
 *
 * Heartbeat: the agent rewrites its report at least every data.heartbeatPeriodSeconds (default
 * 10) with data.heartbeat = the time (RFC 3339, the agent's clock). A report whose heartbeat is
 * more than REPLICAS_STALE_PERIODS periods older than the controller's clock is stale: a
 * SIGKILLed or hung agent whose pod lives on (so the garbage collector keeps its report) stops
 * counting as loaded. As kubelet's node lease (renewed every 10 s, 40 s to expire), clocks are
 * assumed synchronised within a period; a heartbeat from the future counts as fresh. A report
 * without a heartbeat (an older agent) is never stale.
 *
 * The condition (type ModelLoaded, severity Info, so it never changes knative's Ready by itself):
 *   all m loaded (m >= 1)             True    Loaded            "m/m replicas loaded"
 *   some replica FailedToLoad         False   FailedToLoad      "n/m replicas loaded; <pod>: <reason>"
 *   else some FailedToDownload        False   FailedToDownload  likewise
 *   else some replica stale           Unknown Stale             "n/m replicas loaded; <pod>: Stale:
 *                                             no heartbeat since <time> (over <N>s)"
 *   else (in progress)                Unknown the least advanced state among the others
 *                                             (Unknown, Pending, Unloading, Downloading, Loading)
 *   no replica reports (m = 0)        Unknown NoReplicas "0/0 replicas loaded: no serving replica
 *                                             reports model status" -- only when the TrainedModel
 *                                             had a ModelLoaded condition or Ready requires
 *                                             Loaded; otherwise no condition is added (a cluster
 *                                             with KServe's agent sees KServe's conditions only).
 * The per-replica detail goes to status.annotations["modelplane.io/replicas"] (KServe's CRD
 * prunes unknown status fields; annotations is a string map it keeps): compact JSON
 * [{"pod","state","reason"?,"since"}] sorted by pod, at most REPLICAS_DETAIL_MAX entries, reasons
 * cut to REPLICAS_REASON_MAX bytes (at a UTF-8 boundary). "since" (RFC 3339) is when the
 * controller first wrote that pod in that state: kept from the status as read while the state
 * is unchanged, so a pass that changes nothing writes nothing.
 *
 * Ready requires Loaded (the controller's --ready-requires-loaded, default off): a Ready=True
 * is replaced, while no replica has loaded the model (n = 0), by Ready=False (every reporting
 * replica failed) or Ready=Unknown, with the ModelLoaded reason and message. One loaded replica
 * suffices: the model answers requests, as an InferenceService is Ready with one ready pod.
 */

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "serving/report.h"
#include "util/macro.h"
#include "util/time-util.h"

#define CONDITION_MODEL_LOADED      "ModelLoaded"
#define REPLICAS_ISVC_LABEL         "serving.kserve.io/inferenceservice"
#define REPLICAS_STATUS_LABEL       "modelplane.io/model-status"
#define REPLICAS_STATUS_LABEL_VAL   "agent"
#define REPLICAS_STATUS_PREFIX      "modelstatus-"
#define REPLICAS_ANNOTATION         "modelplane.io/replicas"
#define REPLICAS_REASON_NO_REPLICAS "NoReplicas"
#define REPLICAS_DETAIL_MAX         32
#define REPLICAS_REASON_MAX         256
#define REPLICAS_STALE_PERIODS      4U
#define REPLICAS_STATE_STALE        "Stale"
/* Placement's assignment ConfigMaps, modelconfig-<isvc>-<pod> (docs/placement.md, spread.h):
 * labelled with their InferenceService and REPLICAS_PLACEMENT_LABEL=assignment. */
#define REPLICAS_PLACEMENT_LABEL      "modelplane.io/placement"
#define REPLICAS_PLACEMENT_ASSIGNMENT "assignment"
/* The controller's ConfigMap informer selects these: the agents' reports and the modelconfig
 * ConfigMaps, which the controller labels with their InferenceService (serving/plan.h). */
#define REPLICAS_CONFIGMAP_SELECTOR REPLICAS_ISVC_LABEL

/* The cache index of the controller's ConfigMaps: "ns/<isvc>" of counted reports and of
 * placement assignment ConfigMaps (readers tell them apart: replica_report_counts(),
 * replicas_is_assignment()). */
#define REPLICAS_INDEX_ISVC "replica-isvc"

struct replica {
        const char *pod;        /* borrowed from the ConfigMap */
        const char *owner_name; /* borrowed; the Pod of the report's ownerReference */
        const char *owner_uid;  /* borrowed; its uid, NULL when absent */
        struct report report;   /* owned; report.doc NULL when models.json is unreadable */
        bool stale;
        char stale_reason[96]; /* "no heartbeat since <time> (over <N>s)" */
};

struct replica_set {
        json_t *configmaps;    /* owned reference to the input array */
        struct replica *items; /* sorted by pod */
        size_t n;
        usec_t next_stale; /* the earliest time a fresh report turns stale; 0: none can */
};

/* A placement assignment ConfigMap: labelled with its InferenceService and
 * REPLICAS_PLACEMENT_LABEL=REPLICAS_PLACEMENT_ASSIGNMENT (and not a report). */
bool replicas_is_assignment(const json_t *cm);
/* A counted report: labelled model-status=agent, owned by a Pod, not being deleted. */
bool replica_report_counts(const json_t *cm);

/* A report's heartbeat: its time and how long after it the report is stale (the period times
 * REPLICAS_STALE_PERIODS). False when it has no readable heartbeat (never stale). */
bool replica_report_heartbeat(const json_t *cm, usec_t *ret_beat, usec_t *ret_stale_after);
/* True when the report's heartbeat is more than its stale time older than @now. */
bool replica_report_stale(const json_t *cm, usec_t now);
/* True when @new_cm differs from @old_cm only in its heartbeat (and object metadata the API
 * server maintains: resourceVersion, managedFields): a refresh that changes no state. */
bool replica_report_heartbeat_only(const json_t *old_cm, const json_t *new_cm);

/* Reads the counted reports among @configmaps (a JSON array, borrowed; a reference is kept),
 * judging staleness at @now. Returns 0, -ENOMEM. */
_warn_unused_result_ int replica_set_build(json_t *configmaps, usec_t now, struct replica_set *ret);
void replica_set_release(struct replica_set *s);

struct model_loaded {
        unsigned loaded, total;
        const char *status; /* static: "True", "False", "Unknown" */
        const char *reason; /* static */
        char *message;      /* owned */
        json_t *detail;     /* owned; [{"pod","state","reason"?}] */
        bool force;         /* applied even when nobody reports (placement: serving/spread.h) */
};

/* Aggregates the replicas' states of @model (wanted from @storage_uri, may be NULL: any). */
_warn_unused_result_ int model_loaded_summarize(const struct replica_set *s, const char *model,
                                                const char *storage_uri, struct model_loaded *ret);
void model_loaded_release(struct model_loaded *m);

/* The same over the replicas named in @pods only (placement: the replicas a model is assigned
 * to), counting copies: "2/2 copies loaded". Pods not in @s are not counted. */
_warn_unused_result_ int model_loaded_summarize_copies(const struct replica_set *s,
                                                       const char *model, const char *storage_uri,
                                                       const char *const *pods, size_t n_pods,
                                                       struct model_loaded *ret);

/* False when model_loaded_apply() would change nothing: nobody reports @m (and it is not
 * forced), Ready does not wait for Loaded and @observed has no ModelLoaded condition. */
bool model_loaded_applies(const json_t *observed, const struct model_loaded *m,
                          bool ready_requires_loaded);

/*
 * Merges @m into @status (a desired TrainedModel status, modified in place): the ModelLoaded
 * condition, the annotation (@m's detail with each entry's "since") and, with
 * @ready_requires_loaded, Ready. @observed (may be NULL) is the status as read: unchanged states
 * keep their lastTransitionTime and their "since", so the same inputs give the same status. Returns 0, -EINVAL when @status is not an object, -ENOMEM.
 */
_warn_unused_result_ int model_loaded_apply(json_t *status, const json_t *observed,
                                            const struct model_loaded *m,
                                            bool ready_requires_loaded, usec_t now);

/* For the controller's ConfigMap cache and informer (pure; borrowed objects). */
/* Index REPLICAS_INDEX_ISVC: "ns/<isvc>" for a counted report or an assignment ConfigMap, no
 * value otherwise. */
int replicas_index_isvc(void *userdata, const json_t *obj, json_t **ret_values);
/* Reconcile keys ("ns/<isvc>") for a ConfigMap event: a report's InferenceService (counted or
 * not, so that one losing its owner is recounted), an assignment ConfigMap's (by its label), or
 * the InferenceService of a ConfigMap named modelconfig-<isvc>-0 (drift repair); NULL for any
 * other ConfigMap. */
int replicas_map_configmap(void *userdata, const json_t *obj, json_t **ret_keys);
/* Cache transform: a report, an assignment ConfigMap and a modelconfig-<isvc>-0 keep their
 * data (the reconcile plans from the cached models.json); any other ConfigMap the selector lets
 * through is kept as its metadata only. No managedFields. */
json_t *replicas_transform_configmap(void *userdata, json_t *obj);
