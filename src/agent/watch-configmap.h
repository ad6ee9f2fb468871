/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

/*
 * A set of ConfigMaps in one namespace (those a field or label selector picks) followed as
 * client-go's reflector follows a resource (agent/reflector.h decides every step): LIST with the
 * selector (a quorum read), then WATCH from the list's resourceVersion with bookmarks, so a
 * change reaches the agent as soon as it is written instead of after the kubelet's sync period.
 * The watch keeps the set (name -> object, without managedFields: a LIST replaces it whole, so
 * objects deleted while no watch ran go too; ADDED, MODIFIED and DELETED events update it) and
 * hands it to its sink after every LIST and event, with the resourceVersion as generation. A 410
 * (etcd compacted the resourceVersion, e.g. across an API server restart) relists at once and is
 * no failure; other errors back off with jitter (1 s doubling to 30 s) and are reported to the
 * sink's failed(). Needs list and watch on configmaps in the namespace (deploy/agent RBAC).
 *
 * Two are used (agent/watch-isvc.h): the shared ConfigMap "modelconfig-<isvc>-0" (field selector
 * metadata.name=...: a set of none or one) and, under placement, the InferenceService's
 * ConfigMaps (label selector serving.kserve.io/inferenceservice=<isvc>).
 */

#include <jansson.h>
#include <stdint.h>

#include "kube/client.h"
#include "util/macro.h"

struct cm_watch;

struct cm_watch_sink {
        /* The set after a LIST or an event: a JSON object name -> ConfigMap (borrowed; a
         * reference may be kept: the objects in it never change, the set itself does), as of
         * @generation (source_generation_from_rv() of the resourceVersion). Called from the
         * watch's thread. */
        void (*changed)(void *userdata, json_t *set, uint64_t generation);
        /* A LIST or WATCH failed (not a 410): the API did not answer. May be NULL. */
        void (*failed)(void *userdata);
        void *userdata;
};

struct cm_watch_config {
        const char *ns;             /* copied */
        const char *field_selector; /* copied; may be NULL */
        const char *label_selector; /* copied; may be NULL */
        const char *what;           /* copied; names the set in logs: "ConfigMap ns/name" */
        struct cm_watch_sink sink;
};

/* @client: taken over (the watch thread owns it). */
_warn_unused_result_ int cm_watch_start(struct kube_client *client,
                                        const struct cm_watch_config *cfg, struct cm_watch **ret);
/* Asks the watch to end without waiting for it (a watch stream notices within about a second:
 * cancel several, then stop each). NULL-safe. */
void cm_watch_cancel(struct cm_watch *w);
/* Cancels the watch and joins its thread: no sink call after it returns. NULL-safe. */
struct cm_watch *cm_watch_stop(struct cm_watch *w);
DEFINE_CLEANUP_FUNC(struct cm_watch *, cm_watch_stop)
