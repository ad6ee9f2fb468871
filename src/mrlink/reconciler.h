/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

/*
 * The InferenceService <-> model registry controller's imperative shell (spec A.5-A.10; the
 * decisions are in plan.h). One reconcile per InferenceService key ("ns/name"), reading the
 * object from the InferenceService informer it shares with the TrainedModel controller (one
 * watch, one cache; it must keep metadata.finalizers, labels, annotations, uid,
 * deletionTimestamp, resourceVersion, spec.predictor.model.runtime and status.url):
 *
 *   1. no IS-id / RM-id label: nothing (a leftover finalizer of ours is removed);
 *   2. the registry's base URL: the URL annotation, else the Service (GET by NAME_LABEL, or the
 *      one labelled component=model-registry) in the NAMESPACE_LABEL / REGISTRIES_NAMESPACE
 *      namespace, read fresh from the API server;
 *   3. the finalizer (merge patch with resourceVersion precondition) before any registry write;
 *   4. serving environment found or created (the id is remembered per registry and namespace),
 *      inference-service record found or created as "<name>/<uid>", or fetched by the IS-id
 *      label and its customProperties.url patched to follow status.url;
 *   5. deleting: record PATCHed UNDEPLOYED, then the finalizer removed; when the registry's
 *      Service is gone the finalizer is removed at once with a Warning event, when the registry
 *      does not answer it is retried (growing delay) until the undeploy timeout has passed since
 *      deletion, then removed with a Warning event;
 *   6. the record's id written back as the IS-id label (merge patch of that one label).
 *
 * TrainedModels (a second reconciler on the same object, mrlink_reconciler_get_trainedmodels,
 * fed by the TrainedModel informer) with the RM-id label are recorded the same way, by the same
 * steps 2, 4 and 5, without a finalizer or a label of ours on them: the record "<name>/<uid>" in
 * the environment named after their namespace, with their InferenceService (spec.inferenceService)
 * as custom property trainedModelInferenceService and its runtime; it follows status.url, the
 * model version label and DEPLOYED while the TrainedModel lives. Its id is remembered; once the
 * TrainedModel is gone (DELETED event), lost its RM-id label or came back under another uid, that
 * record is PATCHed UNDEPLOYED (level-based, retried until the undeploy timeout).
 *
 * A reconcile whose inputs (plan.h mrlink_fingerprint) equal those of the last successful one
 * makes no call at all: resyncs and the controller's own label write cost nothing.
 * Registry errors are retried (the runner's rate limiter), never terminal; an ambiguous or
 * port-less registry Service is a Warning event naming the Services and a requeue after 5
 * minutes (no hot loop).
 */

#include <jansson.h>

#include "kube/api.h"
#include "kube/controller.h"
#include "kube/metrics.h"
#include "mrlink/config.h"
#include "util/macro.h"

struct cache;
struct mr_transport;
struct informer;

/* Emits a Kubernetes event about obj (borrowed); type "Normal" or "Warning". */
typedef void (*mrlink_event_fn)(void *userdata, const json_t *obj, const char *type,
                                const char *reason, const char *message);

struct mrlink_reconciler_options {
        const struct mrlink_config *config; /* borrowed */
        struct cache *inferenceservices;    /* borrowed; the shared InferenceService informer's */
        struct cache *trainedmodels;        /* borrowed, may be NULL: the TrainedModel informer's */
        const struct mr_transport *transport; /* borrowed, may be NULL (libcurl); tests */
        const char *token;      /* borrowed, may be NULL: static bearer token for the registry */
        const char *token_file; /* borrowed, may be NULL: re-read before registry calls; wins */
        mrlink_event_fn event;  /* may be NULL */
        void *event_userdata;
        /* borrowed, may be NULL: modelplane_mrlink_{registry_calls,registry_errors,isvc_writes,
         * skipped}_total counters (the stats below) */
        struct metrics_registry *metrics;
};

struct mrlink_reconciler;

_warn_unused_result_ int mrlink_reconciler_new(const struct mrlink_reconciler_options *opts,
                                               struct mrlink_reconciler **ret);
struct mrlink_reconciler *mrlink_reconciler_free(struct mrlink_reconciler *r);
DEFINE_CLEANUP_FUNC(struct mrlink_reconciler *, mrlink_reconciler_free)

/* The reconciler for controller_new() (name "inferenceservice", as upstream). */
struct reconciler mrlink_reconciler_get(struct mrlink_reconciler *r);

/* Adds a handler to the InferenceService informer (borrowed, before it starts) that enqueues
 * into c's queue only InferenceServices with the IS-id or RM-id label (or our finalizer). */
_warn_unused_result_ int mrlink_reconciler_watch(struct mrlink_reconciler *r,
                                                 struct informer *inferenceservices,
                                                 struct controller *c);

/* The TrainedModel reconciler (name "trainedmodel-registry"), for a second controller. */
struct reconciler mrlink_reconciler_get_trainedmodels(struct mrlink_reconciler *r);

/* Adds a handler to the TrainedModel informer (borrowed, before it starts) that enqueues into c's
 * queue TrainedModels with the RM-id label and those with a record to mark UNDEPLOYED. -EINVAL
 * without options.trainedmodels. */
_warn_unused_result_ int mrlink_reconciler_watch_trainedmodels(struct mrlink_reconciler *r,
                                                               struct informer *trainedmodels,
                                                               struct controller *c);

struct mrlink_reconciler_stats {
        unsigned long registry_calls;  /* HTTP calls to model registries */
        unsigned long registry_errors; /* of which failed */
        unsigned long isvc_writes;     /* finalizer and label patches */
        unsigned long skipped;         /* reconciles skipped by the fingerprint */
};
void mrlink_reconciler_get_stats(struct mrlink_reconciler *r, struct mrlink_reconciler_stats *ret);
