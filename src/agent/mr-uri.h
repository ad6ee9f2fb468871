/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

/*
 * model-registry:// storage URIs (Kubeflow Model Registry's storage initializer, kubeflow/hub
 * cmd/csi), pure:
 *
 *   model-registry://MODEL                    the latest live version of MODEL
 *   model-registry://MODEL/VERSION            that version
 *   model-registry://HOST:PORT/MODEL          the latest version, from the registry at HOST:PORT
 *   model-registry://HOST[:PORT]/MODEL/VERSION
 *
 * With two segments the first is a host only when it has a port (":"), so "a.b/v1" is the model
 * "a.b", version "v1"; a host without a port needs the three-segment form. Segments are
 * percent-decoded ("%2F" is a '/' inside a name); empty segments, control characters and NUL are
 * refused, and the whole URI is at most MR_URI_MAX bytes.
 *
 * A query, as upstream's: "?namespace=NS" names the registry of the Kubernetes namespace NS
 * (mr_uri_namespace_url(): <service>.NS.<cluster domain>, the configured registry's port), NS
 * being letters, digits, '-' and '_'; refused with a host in the URI (the registry named twice).
 * Other query parameters are ignored, as upstream ignores them.
 */

#include <stdbool.h>
#include <stddef.h>

#include "util/macro.h"

#define MR_URI_SCHEME "model-registry://"
#define MR_URI_MAX    2048U

struct mr_uri {
        char *host;    /* owned; "host[:port]", NULL: the agent's configured registry */
        char *model;   /* owned */
        char *version; /* owned; NULL: the latest version that is not archived */
        char *ns;      /* owned; "?namespace=NS": the registry of namespace NS; NULL: none */
};

/* Whether uri starts with model-registry://. */
bool mr_uri_is(const char *uri);

/* Returns 0, -EINVAL with the reason in err (naming the URI's fault), -ENOMEM. */
_warn_unused_result_ int mr_uri_parse(const char *uri, struct mr_uri *ret, char *err, size_t len);
void mr_uri_release(struct mr_uri *u);

/*
 * The registry of namespace @ns: "<scheme>://<service>.<ns>.<domain>:<port>", the port that of
 * @base_url (the configured registry; 8080 when it names none), as upstream's storage initializer
 * builds it (MODEL_REGISTRY_SERVICE_NAME, MODEL_REGISTRY_CLUSTER_DOMAIN). Returns an owned
 * string, NULL on OOM.
 */
char *mr_uri_namespace_url(const char *scheme, const char *service, const char *ns,
                           const char *domain, const char *base_url);
