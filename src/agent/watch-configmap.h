/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

/*
 * The API source: GET then WATCH (fieldSelector metadata.name=<name>) of the InferenceService's
 * ConfigMap "modelconfig-<isvc>-0", so a TrainedModel change reaches the agent as soon as the
 * controller writes it, instead of after the kubelet's sync period. On any error it marks the API
 * source unhealthy (the agent falls back to the mounted file), backs off (1 s doubling to 30 s)
 * and starts over; a 410 restarts from a fresh GET. A deleted ConfigMap is the empty list.
 * Needs get, list, watch on configmaps in the namespace (deploy/agent RBAC).
 */

#include "agent/agent.h"
#include "kube/client.h"
#include "util/macro.h"

struct cm_watch;

/* @client: taken over (the watch thread owns it). @ns, @name: copied. */
_warn_unused_result_ int cm_watch_start(struct agent *a, struct kube_client *client, const char *ns,
                                        const char *name, struct cm_watch **ret);
struct cm_watch *cm_watch_stop(struct cm_watch *w);
DEFINE_CLEANUP_FUNC(struct cm_watch *, cm_watch_stop)
