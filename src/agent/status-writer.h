/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

/*
 * The per-pod model status object: ConfigMap "modelstatus-<pod>" in the pod's namespace,
 * labelled serving.kserve.io/inferenceservice=<isvc> and modelplane.io/model-status=agent, owned
 * by the Pod (so it goes when the pod goes), data as serving/report.h encodes it ("models.json"
 * = agent_status(), "pod", "heartbeat" (RFC 3339, this agent's clock), "heartbeatPeriodSeconds").
 * This is the real status sink of agent/reporter.h (the port; when a report is written, coalesced,
 * retried and refreshed by the heartbeat is the reporter's): each report is one server-side apply
 * (field manager modelplane-agent, forced). One object per replica: nothing is written into the
 * TrainedModels. Needs get on pods and create/patch on configmaps (deploy/agent/rbac.yaml).
 */

#include <jansson.h>

#include "agent/agent.h"
#include "kube/client.h"
#include "util/macro.h"
#include "util/time-util.h"

struct status_writer;

/* @client: taken over. @ns, @pod, @isvc: copied. @interval: 0 = 500 ms; @heartbeat: 0 = 10 s,
 * whole seconds (reporter_options). Reads the pod's uid (its owner reference), then starts a
 * reporter writing to the ConfigMap. */
_warn_unused_result_ int status_writer_start(struct agent *a, struct kube_client *client,
                                             const char *ns, const char *pod, const char *isvc,
                                             usec_t interval, usec_t heartbeat,
                                             struct status_writer **ret);
/* Stops after one last write of a change. NULL-safe. */
struct status_writer *status_writer_stop(struct status_writer *w);
DEFINE_CLEANUP_FUNC(struct status_writer *, status_writer_stop)

/*
 * The ConfigMap that holds the report @data (borrowed): what each write applies. @pod_uid may be
 * NULL (no owner reference: the controller does not count the report). Returns: new reference;
 * NULL on OOM.
 */
json_t *status_writer_object(const json_t *data, const char *ns, const char *pod, const char *isvc,
                             const char *pod_uid);
