/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

/*
 * The API source: the InferenceService's ConfigMap "modelconfig-<isvc>-0" followed as client-go's
 * reflector follows a resource (agent/reflector.h decides every step): LIST with the field
 * selector metadata.name=<name>, then WATCH from the list's resourceVersion with bookmarks, so a
 * TrainedModel change reaches the agent as soon as the controller writes it instead of after the
 * kubelet's sync period. Every view goes to the agent with its resourceVersion as generation; a
 * missing or deleted ConfigMap is the empty list. A 410 (etcd compacted the resourceVersion, e.g.
 * across an API server restart) relists at once and is no failure; other errors back off with
 * jitter (1 s doubling to 30 s) and report SOURCE_API_FAILING, which only matters before the
 * first answer (the agent then uses the mounted file; once the API has answered it keeps the
 * API's last view, agent/source.h). Needs list and watch on configmaps in the namespace
 * (deploy/agent RBAC).
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
