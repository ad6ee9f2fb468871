/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

/*
 * modelplane ui's request handler (docs/ui.md): identity, CSRF, the /api/v1 routes forwarded to
 * the registry, the catalog and the Kubernetes API (as the user), the static frontend with its
 * single-page fallback, and the security headers on every answer. The I/O shell over the pure
 * modules auth, views and static-path. Thread-safe: upstream clients come from pools, one
 * client per request at a time.
 */

#include <stdbool.h>
#include <stdint.h>

#include "http/server.h"
#include "kube/config.h"
#include "ui/access.h"
#include "ui/auth.h"
#include "util/macro.h"

struct ui_config {
        const char *static_dir;    /* borrowed; NULL or without index.html = the built-in page */
        const char *registry_url;  /* borrowed; NULL = registry routes answer 503 */
        const char *registry_name; /* borrowed; "modelplane" */
        const char *catalog_url;   /* borrowed; NULL = catalog routes answer 503 */
        /* The Services whose `get` permission lets a user use the registry or the catalog
         * ("NAMESPACE/NAME", borrowed); NULL = the URL's in-cluster Service (a short host name
         * is a Service in kube->namespace), else the defaults UI_REGISTRY_SERVICE_DEFAULT and
         * UI_CATALOG_SERVICE_DEFAULT. */
        const char *registry_service, *catalog_service;
        /* Where further registries are discovered (docs/ui.md, "Several registries"; borrowed);
         * NULL = the namespace of the registry's Service. */
        const char *registry_namespace;
        bool registry_external;  /* their address from the external-address-rest annotation */
        bool skip_access_review; /* every signed-in user may use both (no review) */
        const char *ca_file;     /* borrowed; for https upstreams, may be NULL */
        /* The image of model transfer jobs' containers (`modelplane async-upload`; borrowed);
         * NULL = UI_TRANSFER_IMAGE_DEFAULT. */
        const char *transfer_image;
        long upstream_timeout_ms;       /* registry and catalog calls; 0 = 30 s */
        const struct kube_config *kube; /* borrowed for the call; NULL = deployment routes 503 */
        struct ui_auth_config auth; /* borrowed strings and arrays, kept for the server's life */
        uint8_t csrf_key[UI_CSRF_KEY_SIZE];
};

#define UI_REGISTRY_SERVICE_DEFAULT "kubeflow/model-registry-service"
#define UI_CATALOG_SERVICE_DEFAULT  "kubeflow/model-catalog"
#define UI_TRANSFER_IMAGE_DEFAULT   "modelplane:latest" /* as deploy/ runs modelplane */
#define UI_ACCESS_CACHE_SIZE        4096U
#define UI_ACCESS_TTL_ALLOW         (10 * USEC_PER_SEC)
#define UI_ACCESS_TTL_DENY          (2 * USEC_PER_SEC)

struct ui_server;

/*
 * The Service that grants access to an upstream: the explicit "NAMESPACE/NAME", else the one of an
 * in-cluster URL (a short name is in own_ns, the server's namespace; may be NULL), else def.
 * Returns 0 or -EINVAL (explicit is malformed).
 */
_warn_unused_result_ int ui_access_service(const char *explicit, const char *url,
                                           const char *own_ns, const char *def,
                                           struct ui_service_ref *ret);

_warn_unused_result_ int ui_server_new(const struct ui_config *cfg, struct ui_server **ret);
struct ui_server *ui_server_free(struct ui_server *s);
DEFINE_CLEANUP_FUNC(struct ui_server *, ui_server_free)

/* An http_handler_fn; userdata is the struct ui_server. */
int ui_server_handle(void *userdata, struct http_req *req, struct http_resp *resp);

/* True when the server found a built frontend (an index.html) to serve. */
bool ui_server_has_frontend(const struct ui_server *s);
