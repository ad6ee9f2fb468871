/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

/*
 * SERVING_READINESS_PROBE: the model server container's readinessProbe (a corev1.Probe as JSON)
 * that KServe's pod mutator hands to its agent. The agent answers its own readiness checks
 * (a request with "K-Network-Probe: queue", or a kube-probe/ User-Agent) by running it once:
 * httpGet (2xx/3xx within timeoutSeconds, default 1) or tcpSocket (connect). Named ports cannot
 * be resolved from inside the pod spec-less agent and mean the component port. Without the
 * variable the agent is ready whenever it runs (as KServe's agent is).
 */

#include <stdbool.h>
#include <stdint.h>

#include "util/macro.h"

enum probe_kind {
        PROBE_NONE,
        PROBE_HTTP,
        PROBE_TCP,
};

struct readiness_probe {
        enum probe_kind kind;
        char *url;      /* owned; http(s)://host:port/path */
        char **headers; /* owned; "Name: value", NULL-terminated, may be NULL */
        char *host;     /* owned; tcp host */
        uint16_t port;
        long timeout_sec;
};

/* Parses @json (NULL or "" = PROBE_NONE). Returns 0, -EINVAL with a message in @reterr. */
_warn_unused_result_ int readiness_probe_parse(const char *json, uint16_t component_port,
                                               struct readiness_probe *ret, char *reterr,
                                               size_t len_err);
void readiness_probe_release(struct readiness_probe *p);
/* Runs the probe once (thread-safe). */
bool readiness_probe_run(const struct readiness_probe *p);
