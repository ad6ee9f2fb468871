/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

/*
 * The per-pod model status object: ConfigMap "modelstatus-<pod>" in the pod's namespace,
 * labelled serving.kserve.io/inferenceservice=<isvc> and modelplane.io/model-status=agent, owned
 * by the Pod (so it goes when the pod goes), data as serving/report.h encodes it ("models.json"
 * = agent_status(), "pod", "heartbeat" (RFC 3339, this agent's clock), "heartbeatPeriodSeconds",
 * and for placement, docs/placement.md, "address" and "draining").
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

struct status_writer_config {
        const char *ns, *pod, *isvc; /* copied */
        usec_t interval;             /* coalescing; 0 = 500 ms */
        usec_t heartbeat;            /* 0 = 10 s; whole seconds (reporter_options) */
};

/* @client: taken over. Reads the Pod (its uid for the owner reference, its IP), then starts a
 * reporter writing to the ConfigMap. */
_warn_unused_result_ int status_writer_start(struct agent *a, struct kube_client *client,
                                             const struct status_writer_config *cfg,
                                             struct status_writer **ret);
/* Stops after one last write of a change. NULL-safe. */
struct status_writer *status_writer_stop(struct status_writer *w);
DEFINE_CLEANUP_FUNC(struct status_writer *, status_writer_stop)

/* The Pod's status.podIP as read at the start (borrowed; NULL: unknown). */
const char *status_writer_pod_ip(const struct status_writer *w);
/* data.address from now on (@address "host:port", copied), written at once. Thread-safe.
 * Returns 0 or -ENOMEM. */
_warn_unused_result_ int status_writer_set_address(struct status_writer *w, const char *address);
/* data.draining = "true" from now on, written at once. Thread-safe. */
void status_writer_set_draining(struct status_writer *w);

/*
 * The ConfigMap that holds the report @data (borrowed): what each write applies. @pod_uid may be
 * NULL (no owner reference: the controller does not count the report). Returns: new reference;
 * NULL on OOM.
 */
json_t *status_writer_object(const json_t *data, const char *ns, const char *pod, const char *isvc,
                             const char *pod_uid);
