/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

/*
 * The TrainedModel controller's imperative shell (house style 5.12): the only file of the serving
 * layer that does I/O. One reconcile per InferenceService key ("ns/isvc") — one writer per
 * InferenceService (W2): it reads the TrainedModels that name the InferenceService from the
 * informer cache, the InferenceService from its cache and the ConfigMap from the ConfigMap
 * informer's cache (with the answer of our own last write while the cache has not delivered it;
 * live from the API server when the cache does not hold it and after a 409), calls the pure planner (plan.h) and applies the plan in this order (the one
 * description of it; plan.h states what the order must guarantee):
 *
 *   1. metadata patches of TrainedModels that are not being deleted (finalizer, labels, owner
 *      reference) — the finalizer is on before the model is ever written to models.json;
 *   2. under placement (serving/spread.h), first the assignment ConfigMaps that changed
 *      (modelconfig-<isvc>-<pod>: create, unconditional merge patch or delete, concurrently);
 *      then the ConfigMap: create when missing (W3) or one merge patch of models.json with the
 *      observed resourceVersion as precondition; a 409 re-reads and re-plans at once (bounded);
 *   3. the planner again with the written ConfigMap (and the replicas' reports: ModelLoaded is
 *      the plan's), then status writes (only on change), finalizer removals of finalized
 *      TrainedModels, and deletes of TrainedModels whose parent is missing, as the plan says
 *      (plan.h: the shell decides nothing again); under placement, the InferenceService's status annotation (per pod: models
 *      and bytes assigned, capacity), only on change;
 *   4. events for what was written: one Normal Event per models.json write, on the
 *      InferenceService, naming how many models it added, updated and removed and the first few
 *      of each (reason ModelAdded, ModelUpdated or ModelRemoved when it did one kind only,
 *      ModelConfigUpdated otherwise), but none for a write that only drops the entries of
 *      TrainedModels being deleted (KServe posts none; issue #12); a Warning Event per
 *      TrainedModel whose status turned to a failure (InvalidSpec, ModelConfigFull), on that
 *      TrainedModel.
 *
 * A second controller, the orphan controller (tm_orphan_reconciler_get()), takes the keys
 * ("ns/name") of TrainedModels without a usable spec.inferenceService or parent label: their
 * conditions say InvalidSpec, parent labels and owner references go, and a finalizer of one being
 * deleted is removed.
 *
 * Both reconcile through ctx->api (kube/api.h) and read the caches given here; the runner
 * (kube/controller.h) gives each worker its client and holds keys back until the two informers
 * have synced (controller_options.wait_for), and logs the errors that the reconcile describes.
 */

#include <jansson.h>

#include "kube/api.h"
#include "kube/controller.h"
#include "util/macro.h"

struct cache;
struct informer;

#define TM_INDEX_ISVC "isvc"

extern const struct gvr gvr_trainedmodels;
extern const struct gvr gvr_inferenceservices;
extern const struct gvr gvr_configmaps;

/* Emits a Kubernetes event about obj (borrowed). type is "Normal" or "Warning". */
typedef void (*tm_event_fn)(void *userdata, const json_t *obj, const char *type, const char *reason,
                            const char *message);

struct tm_reconciler_options {
        struct cache *trainedmodels;     /* borrowed; must carry the index TM_INDEX_ISVC */
        struct cache *inferenceservices; /* borrowed */
        tm_event_fn event;               /* may be NULL */
        void *event_userdata;
        /* Time slice: TrainedModels whose status/finalizer one reconcile writes before the key
         * goes to the back of the queue; 0 = 2000. */
        unsigned writes_per_pass;
        /* The agents' per-pod reports (serving/replicas.h), with the index REPLICAS_INDEX_ISVC,
         * and the modelconfig ConfigMaps with their data (replicas_transform_configmap);
         * borrowed, may be NULL: no ModelLoaded condition, every ConfigMap read live. */
        struct cache *configmaps;
        bool ready_requires_loaded; /* Ready also needs >= 1 replica loaded (replicas.h) */
        /* Delete batching: a TrainedModel's delete that starts less than this after its
         * InferenceService's last ConfigMap write waits for the rest of it, so that deletes close
         * together leave models.json in one write. 0 = 1 s; USEC_INFINITY = none. */
        usec_t delete_batch_window;
        /* --trainedmodel-finalizer=false (issue 27; plan_input.no_finalizer): no finalizer on
         * TrainedModels; a model's entry leaves models.json in the first pass after the object
         * is gone (its DELETED event, batched as a delete's start is, or the relist after a
         * restart). The finalizer that KServe or an older modelplane left is removed: from a
         * model being deleted as before (the finalizer hand-off below), from a live one with its
         * next metadata patch or else through the release hand-off (paced). */
        bool no_finalizer;
        /* The wall clock, as the runner hands it to the reconciles (controller_options.wall_clock,
         * reconcile_now()), for what the informer handlers judge: the delete batching window
         * and a report's staleness; borrowed, NULL = clock_realtime. */
        const struct clock *clock;
};

struct tm_reconciler;

_warn_unused_result_ int tm_reconciler_new(const struct tm_reconciler_options *opts,
                                           struct tm_reconciler **ret);
struct tm_reconciler *tm_reconciler_free(struct tm_reconciler *r);
DEFINE_CLEANUP_FUNC(struct tm_reconciler *, tm_reconciler_free)

/* The reconcilers to hand to controller_new(); userdata is r. "trainedmodel": one key per
 * InferenceService; "trainedmodel-orphan": one key per TrainedModel without a parent. */
struct reconciler tm_reconciler_get(struct tm_reconciler *r);
struct reconciler tm_orphan_reconciler_get(struct tm_reconciler *r);

/* Finalizer hand-off (issue #12, deletes): once models.json no longer lists a TrainedModel that
 * is being deleted, the InferenceService reconcile adds its key ("ns/name") to the queue of
 * finalizers (a controller running tm_finalizer_reconciler_get(), several workers) instead of
 * removing the finalizer itself, so that the next batch's models.json write does not wait for
 * this batch's finalizer removals. The finalizer reconcile removes the finalizer of a
 * TrainedModel still being deleted (a 404 is done; answers are own writes, so no stale second
 * attempt). Without a hand-off the InferenceService reconcile removes finalizers itself. */
void tm_reconciler_hand_off_finalizers(struct tm_reconciler *r, struct controller *finalizers);
struct reconciler tm_finalizer_reconciler_get(struct tm_reconciler *r);

/* Release hand-off (no_finalizer only): the keys of live TrainedModels that still carry
 * trainedmodel.finalizer and have no other metadata patch to carry its removal (and of live
 * orphans that carry it) go, once each while queued, to releases (a controller running
 * tm_release_reconciler_get(): the finalizer reconcile under its own name; one worker, rate
 * limit tm_release_pace), added rate-limited: a switch to no_finalizer releases a cluster's
 * TrainedModels at that pace, beside the user's writes rather than in front of them. Without a
 * hand-off the InferenceService reconcile releases them itself (time slice writes_per_pass). */
#define TM_RELEASE_PACE_QPS   20.0
#define TM_RELEASE_PACE_BURST 20U
extern const struct ratelimiter_options tm_release_pace;
void tm_reconciler_hand_off_releases(struct tm_reconciler *r, struct controller *releases);
struct reconciler tm_release_reconciler_get(struct tm_reconciler *r);

/* Index function for the TrainedModel cache: "ns/<spec.inferenceService>" and
 * "ns/<label inferenceservice>" (after a move, W7); no value (NULL) for an orphan. */
int tm_index_isvc(void *userdata, const json_t *obj, json_t **ret_values);

/* Wires the informers (borrowed; those whose caches r reads) to the controllers' queues (before
 * the informers start): TrainedModel changes map to their InferenceService keys (old and new;
 * a delete's start batched, a removal that changes nothing skipped: reconciler-watch.c),
 * InferenceService changes to their own key, and orphan TrainedModels to their own key in
 * orphan_controller's queue (may be NULL: orphans are then not reconciled). */
_warn_unused_result_ int tm_reconciler_watch(struct tm_reconciler *r,
                                             struct informer *trainedmodels,
                                             struct informer *inferenceservices,
                                             struct controller *isvc_controller,
                                             struct controller *orphan_controller);

/* Wires the ConfigMap informer (borrowed; selector REPLICAS_CONFIGMAP_SELECTOR, transform
 * replicas_transform_configmap, the cache given as options.configmaps) to isvc_controller's
 * queue: a report's change recounts its InferenceService, and a change of a modelconfig
 * ConfigMap (a hand edit) reconciles its InferenceService, which rewrites models.json when it
 * differs from what the controller would write (the echoes of its own writes enqueue nothing). */
_warn_unused_result_ int tm_reconciler_watch_configmaps(struct tm_reconciler *r,
                                                        struct informer *configmaps,
                                                        struct controller *isvc_controller);

/* Counters for benchmarks and tests. */
struct tm_reconciler_stats {
        unsigned long configmap_gets, configmap_writes, configmap_conflicts;
        unsigned long tm_metadata_writes, tm_status_writes, tm_deletes;
        unsigned long long configmap_bytes_written;
        unsigned long passes;             /* InferenceService reconciles run */
        unsigned long plans;              /* plans computed: 1 per pass that writes nothing, 2 when
                                       * the first plan's writes change the inputs, +1 per 409 */
        unsigned long passes_skipped;     /* changes that enqueued nothing (reconciler-watch.c) */
        unsigned long events_posted;      /* Normal Events handed to options.event */
        unsigned long events_skipped;     /* models.json writes that only dropped deleted models:
                                       * no Event (KServe posts none) */
        unsigned long assignment_writes;  /* placement: assignment ConfigMap creates, patches,
                                           * deletes */
        unsigned long placement_moved;    /* placement: copies placed on a replica that did not
                                           * hold them, by the plans written */
        unsigned long isvc_status_writes; /* placement: InferenceService status patches */
};
void tm_reconciler_get_stats(struct tm_reconciler *r, struct tm_reconciler_stats *ret);

/* Placement's last summary per InferenceService under placement, for the metrics:
 * {"ns/isvc": [{"pod","models","assigned","capacity","draining"?}]} (serving/spread.h).
 * Returns 0 with *ret a new reference, -ENOMEM. */
_warn_unused_result_ int tm_reconciler_placement_pods(struct tm_reconciler *r, json_t **ret);
