/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

/*
 * The TrainedModel controller's pure core: one call per InferenceService computes, from fresh
 * state, everything the shell has to write (house style 5.12, spec trainedmodel.md §2 with the
 * fixes of §10). No I/O, no clock (now is an input), no logging; same inputs, same output.
 *
 * Inputs: the InferenceService name, its JSON (NULL when it does not exist), the ConfigMap JSON
 * (NULL when it does not exist) and every TrainedModel whose spec.inferenceService names it. The
 * shell should also pass TrainedModels that still carry the label inferenceservice=<isvc> after
 * a move (W7): they get TM_STATE_IGNORED and, not being in the desired set, their entry leaves
 * this models.json.
 *
 * Decisions:
 *  - memory admission per InferenceService (W2/W8): deleting TrainedModels still listed in
 *    models.json are counted first (they are still loaded); then valid, not-deleting models in
 *    priority order: those already holding serving.kserve.io/trainedmodel-allocated=<isvc>, then
 *    by creationTimestamp, then by name; first fit against the predictor's memory limit (exact;
 *    equality fits). 50 x 100Mi against 2000Mi admits exactly 20.
 *  - models.json (W1/W3/W4): an admitted, valid model of a multi-model parent is listed when the
 *    parent is ready, and stays listed while the parent is temporarily not ready (§9.9 X9). If
 *    the array would exceed the ConfigMap limit (1 MiB minus the other data keys), models already
 *    listed keep their place, then creationTimestamp/name order; the rest get Ready=False,
 *    reason ModelConfigFull. Entries sorted by modelName; entries of no current model are dropped;
 *    memory in canonical form ("+1G" is written "1G", W15).
 *  - conditions (§3): KServe's order ISR, IsMMS, Memory with its reasons; an invalid spec gives
 *    MemoryResourceAvailable=False reason InvalidSpec with a message naming the field; an
 *    admitted model not yet in the observed models.json has Ready=Unknown reason
 *    ModelConfigPending (W3: Ready is True only once models.json holds the entry). Transition
 *    times move only on real changes, so an unchanged world gives status_changed == false.
 *  - metadata: labels inferenceservice=<isvc> and allocated=<isvc> (only while admitted),
 *    finalizer trainedmodel.finalizer, a non-controller ownerReference to the InferenceService
 *    (W13; references to other InferenceServices are dropped, W7).
 *  - placement (issue 30, serving/spread.h): an InferenceService annotated
 *    modelplane.io/placement: spread is admitted by the placement planner instead (capacity
 *    summed over its replicas; MemoryResourceAvailable=False only for a model it places nowhere,
 *    with its shortfall as the message); the plan then also holds the writes of the replicas'
 *    assignment ConfigMaps (modelconfig-<isvc>-<pod>: the listed models each replica is
 *    assigned), where each model is placed (tm_plan.placement, for ModelLoaded), the
 *    InferenceService's status annotation, and modelconfig-<isvc>-0 carries the annotation
 *    modelplane.io/placement: spread (removed, with every assignment ConfigMap, when the
 *    InferenceService is no longer annotated). Without the annotation nothing of this exists
 *    and modelconfig-<isvc>-0 is byte-for-byte what it was.
 *  - deletion (W6): the finalizer goes once models.json (observed) does not list the model; a
 *    missing InferenceService or ConfigMap means there is nothing to remove. A TrainedModel
 *    whose parent is missing and that is not being deleted is deleted (§2.2 step 2).
 *  - without the finalizer (plan_input.no_finalizer, issue 27): none is added; a model gone
 *    from the input simply has no entry in the desired models.json (the level-based delete),
 *    and its observed entry keeps its memory counted until models.json no longer lists it, as
 *    a deleting model's does; a live model that still carries trainedmodel.finalizer (KServe's,
 *    an older modelplane's) loses it with its next metadata patch, or, when nothing else of its
 *    metadata changes, gets release_finalizer (the shell releases it later, paced). A model
 *    being deleted with the finalizer is released as above (W6), so switching strands nothing.
 *
 *  - the replicas' reports (issue 28; serving/replicas.h, plan_input.configmaps): each planned
 *    status gets ModelLoaded ("n/m replicas loaded", under placement "n/k copies loaded" over
 *    the replicas a model is assigned, spread_status_apply()), and Ready waits for a loaded
 *    copy with plan_input.ready_requires_loaded; status_changed is judged after that, so an
 *    unchanged world writes nothing. isvc_plan.next_stale says when a fresh report turns stale
 *    (the shell's requeue notices a dead agent without any event).
 *
 * The plan is the complete list of writes: the shell that applies it (the write order itself is
 * written once, in serving/reconciler.h) decides nothing again. Per TrainedModel:
 *  - metadata_patch with metadata_phase TM_METADATA_FIRST (a model not being deleted: labels,
 *    owner reference, its finalizer) is written before any ConfigMap write lists the model;
 *  - metadata_patch with TM_METADATA_FINALIZE (the finalizer's removal from a model being
 *    deleted that models.json no longer lists) after the ConfigMap write; the shell may hand it
 *    to its finalizer workers;
 *  - status when status_changed (never for a model being deleted), delete_object, and
 *    release_finalizer (a live model's leftover finalizer, paced by the shell).
 * Statuses, finalizer removals and deletes come from a second plan over the ConfigMap as
 * written, so that Ready and the removal reflect the write. A plan's event is emitted once the
 * write it describes succeeded (events of statuses: only when status_changed).
 */

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "util/macro.h"
#include "util/time-util.h"

struct spread_tm;
struct spread_write;

enum tm_state {
        TM_STATE_IGNORED,        /* not this InferenceService's (moved away, unreadable) */
        TM_STATE_READY,          /* listed in the observed models.json, all conditions True */
        TM_STATE_PENDING,        /* admitted; the desired models.json lists it, observed not yet */
        TM_STATE_WAITING_ISVC,   /* parent not ready (W5: a waiting state, not an error) */
        TM_STATE_WAITING_MMS,    /* parent not multi-model / no implementation */
        TM_STATE_WAITING_MEMORY, /* not enough memory */
        TM_STATE_DOES_NOT_FIT,   /* W4: models.json would be too large */
        TM_STATE_INVALID,        /* invalid spec (a False condition names the field) */
        TM_STATE_DELETING,       /* being deleted; the observed models.json still lists it */
        TM_STATE_FINALIZED,      /* being deleted; nothing left to remove, finalizer may go */
        TM_STATE_PARENT_MISSING, /* parent missing and not being deleted: delete the object */
        TM_STATE__MAX,
        TM_STATE__INVALID = -EINVAL,
};

const char *tm_state_to_string(enum tm_state s);
/* WAITING_*, DOES_NOT_FIT, INVALID: nothing to retry until something else changes. */
bool tm_state_is_waiting(enum tm_state s);

/* When the shell writes a tm_plan's metadata_patch (the decisions above). */
enum tm_metadata_phase {
        TM_METADATA_NONE,     /* no metadata_patch */
        TM_METADATA_FIRST,    /* before the ConfigMap write (a model not being deleted) */
        TM_METADATA_FINALIZE, /* after it: the finalizer's removal from a model being deleted */
};

struct tm_plan {
        char *name; /* owned; metadata.name ("" for an unreadable object) */
        enum tm_state state;
        bool admitted;            /* holds memory on the InferenceService */
        bool listed;              /* the desired models.json lists it */
        bool delete_object;       /* issue a DELETE for the TrainedModel */
        json_t *metadata_patch;   /* owned; JSON merge patch (labels, finalizers, ownerReferences,
                                   with metadata.resourceVersion as precondition, when the object
                                   had one: delete that key for an unconditional patch);
                                   NULL: no change */
        json_t *status;           /* owned reference; the desired .status; NULL: do not write
                                   * status. When !status_changed it may be the observed object
                                   * itself (shared with the input): copy it before editing */
        bool status_changed;      /* status differs from the observed .status: write it */
        bool release_finalizer;   /* no_finalizer: a live model still carries TM_FINALIZER and
                                   * nothing else of its metadata changes; the shell removes it
                                   * on its own, paced (tm_plan_release_finalizer()) */
        const char *event_type;   /* static "Normal"/"Warning", NULL: no event */
        const char *event_reason; /* static */
        char *event_message;      /* owned */
        struct spread_tm *placement; /* owned; under placement, where it is placed (for the
                                      * ModelLoaded merge, spread_status_apply()); else NULL */
        /* when metadata_patch is written (NONE exactly when it is NULL) */
        enum tm_metadata_phase metadata_phase;
};

struct isvc_plan {
        bool isvc_found;
        char *configmap_name;     /* owned; modelconfig-<isvc>-0 */
        char *models_json;        /* owned; desired bytes, NULL when no ConfigMap is wanted */
        json_t *configmap_create; /* owned; the ConfigMap to create, NULL: none */
        json_t *configmap_patch;  /* owned; merge patch of data["models.json"] with the observed
                                     resourceVersion as precondition; NULL: no write needed */
        size_t n_tms;
        struct tm_plan *tms; /* owned; parallel to plan_input.tms */
        /* placement (serving/spread.h); all empty without it */
        bool placement;                         /* the InferenceService is under placement */
        struct spread_write *assignment_writes; /* owned; creates, patches, deletes, in order */
        size_t n_assignment_writes;
        json_t *isvc_status_patch; /* owned; merge patch of the InferenceService's status (its
                                    * placement annotation); NULL: none */
        char *placement_summary;   /* owned; that annotation's value, NULL when off */
        size_t placement_moved;    /* copies this plan places on a replica that did not hold them */
        usec_t next_stale; /* when a fresh report turns stale (a ModelLoaded change without any
                            * event: requeue then); 0: none can */
};

struct plan_input {
        const char *isvc_name;    /* required */
        const json_t *isvc;       /* borrowed; NULL: the InferenceService does not exist */
        const json_t *configmap;  /* borrowed; NULL: the ConfigMap does not exist */
        const json_t *const *tms; /* borrowed */
        size_t n_tms;
        usec_t now; /* CLOCK_REALTIME, for lastTransitionTime */
        /* borrowed; the InferenceService's agent reports and assignment ConfigMaps (array; the
         * index REPLICAS_INDEX_ISVC): the reports give each status its ModelLoaded condition
         * (and placement its replicas; assignments are deleted when placement is switched
         * off); NULL: the shell reads no reports, no ModelLoaded is planned */
        const json_t *configmaps;
        bool ready_requires_loaded; /* --ready-requires-loaded (serving/replicas.h) */
        /* --trainedmodel-finalizer=false: no finalizer on live models (see the decisions above);
         * false is KServe's behaviour */
        bool no_finalizer;
};

void isvc_plan_release(struct isvc_plan *p);

static inline void isvc_plan_releasep(struct isvc_plan *p)
{
        isvc_plan_release(p);
}

/*
 * Computes the plan. Returns 0, -EINVAL for a missing isvc_name or an ISVC/ConfigMap that is
 * not a JSON object, -ENOMEM.
 */
_warn_unused_result_ int isvc_plan_compute(const struct plan_input *in, struct isvc_plan *ret);

/*
 * The plan for a TrainedModel without a usable spec.inferenceService (no parent to plan with):
 * all three conditions False, reason InvalidSpec, message naming the field; the parent labels
 * and InferenceService ownerReferences dropped (TM_METADATA_FIRST); when being deleted, the
 * finalizer goes (TM_METADATA_FINALIZE, no status). With @no_finalizer a live one that carries
 * TM_FINALIZER gets release_finalizer besides its patch.
 * Returns 0, -EINVAL when @tm is not a readable TrainedModel, -ENOMEM.
 */
_warn_unused_result_ int tm_plan_orphan(const json_t *tm, usec_t now, bool no_finalizer,
                                        struct tm_plan *ret);

void tm_plan_release(struct tm_plan *p);

/*
 * The finalizer workers' plan: the metadata patch that removes TM_FINALIZER from @tm (other
 * finalizers kept; its resourceVersion as precondition), in *ret (owned), when it may go: @tm is
 * being deleted, or @no_finalizer (a live model's leftover). *ret is NULL when @tm does not
 * carry it or it stays. Returns 0, -EINVAL when @tm is not a readable TrainedModel, -ENOMEM.
 */
_warn_unused_result_ int tm_plan_release_finalizer(const json_t *tm, bool no_finalizer,
                                                   json_t **ret);

/*
 * The one Normal Event of a models.json write (issue #12: the controller's own API writes during
 * churn): the plan's per-model Normal events (ModelAdded, ModelUpdated, ModelRemoved) summed up,
 * e.g. 'models.json of ConfigMap "modelconfig-a-0": added 2 ("m1", "m2"), removed 12 ("m3",
 * "m4", "m5", "m6", "m7" and 7 more)'. *ret_reason (static) is that reason when the write did one
 * kind only, "ModelConfigUpdated" otherwise; *ret_message is owned. No Event for a write whose
 * only changes drop the entries of TrainedModels being deleted (their delete is the user's own
 * act; KServe posts none either). Returns PLAN_EVENT_POST with both set; PLAN_EVENT_NONE (no
 * entry changed) or PLAN_EVENT_SKIPPED (only deleted models dropped) with both NULL; -ENOMEM.
 */
#define PLAN_EVENT_NAMES 5
enum {
        PLAN_EVENT_NONE = 0,
        PLAN_EVENT_POST = 1,
        PLAN_EVENT_SKIPPED = 2,
};
_warn_unused_result_ int isvc_plan_write_event(const struct isvc_plan *p, const char **ret_reason,
                                               char **ret_message);

/*
 * The plan as JSON, for golden tests and debug logs: {"isvcFound", "configMapName",
 * "modelsJson", "configMapCreate", "configMapPatch", "trainedModels": [{"name", "state",
 * "admitted", "listed", "deleteObject", "metadataPatch", "status", "statusChanged", "event"}]};
 * "releaseFinalizer": true only where set, "metadataPhase" ("first", "finalize") with a
 * metadataPatch, "nextStale" (RFC 3339) when set.
 * Returns: new reference; NULL on OOM.
 */
json_t *isvc_plan_to_json(const struct isvc_plan *p);
