/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

/*
 * Resolving a model-registry:// URI (agent/mr-uri.h) to the storage URI of the model it names,
 * through the Model Registry REST API (v1alpha3), as Kubeflow's storage initializer does: the
 * registered model by name, the version by name (or the latest one that is not archived, by
 * creation time), then the version's newest model artifact that has a URI. Refused with a
 * message that says which: an unknown model or version, an archived model or version, a version
 * without a model artifact, an artifact URI that is itself model-registry://, or one outside the
 * allowed prefixes.
 *
 * The registry: the URI's HOST:PORT when it names one (with the configured scheme), else
 * base_url. The environment of upstream's storage initializer configures it:
 * MODEL_REGISTRY_BASE_URL (host:port or a URL; default localhost:8080), MODEL_REGISTRY_SCHEME
 * (default http), MODEL_REGISTRY_SERVICE_NAME (default model-registry-service) and
 * MODEL_REGISTRY_CLUSTER_DOMAIN (default svc.cluster.local) for a URI's "?namespace=NS"
 * (agent/mr-uri.h), ALLOWED_ARTIFACT_URI_PREFIXES (comma-separated; unset: any; modelplane's
 * addition), and MODEL_REGISTRY_TOKEN (a bearer token; modelplane's addition).
 */

#include <stddef.h>

#include "registry-client/client.h"
#include "util/macro.h"

#define MR_RESOLVE_PAGES_MAX 50U /* pages of 100 versions looked at for the latest live one */

struct mr_resolve_config {
        char *base_url;       /* owned; scheme://host:port */
        char *scheme;         /* owned; "http" or "https", for URIs that name a host */
        char *service_name;   /* owned; the registry's Service, for "?namespace=" */
        char *cluster_domain; /* owned; for "?namespace=" */
        char *token;          /* owned; may be NULL */
        char *ca_file;        /* owned; may be NULL */
        char **allowed;       /* owned; prefixes an artifact URI must start with; NULL: any */
        size_t n_allowed;
        long timeout_ms;                      /* per call; 0 = 30 s */
        const struct mr_transport *transport; /* borrowed; NULL: HTTP (registry-client/client.h) */
};

/* Fills c from the environment above. Returns 0, -ENOMEM. */
_warn_unused_result_ int mr_resolve_config_from_env(struct mr_resolve_config *c);
void mr_resolve_config_release(struct mr_resolve_config *c);

/*
 * Resolves uri. Returns 0 with *ret_uri (owned), or a negative errno with a message in err:
 * -EINVAL (malformed URI), -ENOENT (no such model, version or artifact), -EACCES (archived, or
 * an artifact URI outside the allowed prefixes), -ELOOP (the artifact is model-registry://
 * again), the registry client's errors for a registry that fails (-ECONNREFUSED, -EIO ...).
 */
_warn_unused_result_ int mr_resolve(const struct mr_resolve_config *c, const char *uri,
                                    char **ret_uri, char *err, size_t len);
