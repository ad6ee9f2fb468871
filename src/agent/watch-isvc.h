/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

/*
 * The agent's API source (docs/agent.md "Desired set", docs/placement.md): the shared ConfigMap
 * followed by one watch (agent/watch-configmap.h, field selector metadata.name=<shared>), as
 * without placement; once that ConfigMap carries modelplane.io/placement: spread (and the pod
 * and its InferenceService are known), a second watch follows the InferenceService's ConfigMaps
 * (label selector serving.kserve.io/inferenceservice=<isvc>: this pod's assignment, the other
 * replicas' reports, the assignments). Both feed agent/routing.h. The second watch starts only
 * then, so an InferenceService without placement costs one watch per agent, as before; once
 * started it runs until the stop (the annotation may come back).
 *
 * The shared ConfigMap is watched by name rather than taken from the labelled set: KServe's own
 * controller, and a ConfigMap named by --configmap, do not carry that label.
 */

#include "agent/routing.h"
#include "kube/client.h"
#include "util/macro.h"

struct isvc_watch;

/*
 * @client: taken over. @ns, @shared (the shared ConfigMap's name), @isvc (NULL: no placement):
 * copied. @routing: borrowed, outlives the watch.
 */
_warn_unused_result_ int isvc_watch_start(struct routing *routing, struct kube_client *client,
                                          const char *ns, const char *shared, const char *isvc,
                                          struct isvc_watch **ret);
/* Stops both watches (no call into @routing after it returns). NULL-safe. */
struct isvc_watch *isvc_watch_stop(struct isvc_watch *w);
DEFINE_CLEANUP_FUNC(struct isvc_watch *, isvc_watch_stop)
