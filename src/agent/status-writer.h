/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

/*
 * The per-pod model status object: ConfigMap "modelstatus-<pod>" in the pod's namespace,
 * labelled serving.kserve.io/inferenceservice=<isvc> and modelplane.io/model-status=agent, owned
 * by the Pod (so it goes when the pod goes), data "models.json" = agent_status(), "pod",
 * "heartbeat" (RFC 3339, this agent's clock) and "heartbeatPeriodSeconds".
 * Written by server-side apply (field manager modelplane-agent) at most once per @interval
 * however many models change meanwhile (coalesced), again after a failed write, and at least
 * once per @heartbeat even when nothing changed: the controller takes a report whose heartbeat
 * is several periods old for a dead agent (serving/replicas.h, "stale"). One object
 * per replica: nothing is written into the TrainedModels. Needs get on pods and create/patch on
 * configmaps (deploy/agent/rbac.yaml).
 */

#include "agent/agent.h"
#include "kube/client.h"
#include "util/macro.h"
#include "util/time-util.h"

struct status_writer;

/* @client: taken over. @ns, @pod, @isvc: copied. @interval: 0 = 500 ms; @heartbeat: 0 = 10 s,
 * whole seconds. */
_warn_unused_result_ int status_writer_start(struct agent *a, struct kube_client *client,
                                             const char *ns, const char *pod, const char *isvc,
                                             usec_t interval, usec_t heartbeat,
                                             struct status_writer **ret);
/* Stops after one last write of the current state. NULL-safe. */
struct status_writer *status_writer_stop(struct status_writer *w);
DEFINE_CLEANUP_FUNC(struct status_writer *, status_writer_stop)
