/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

/*
 * modelplane ui's request handler (docs/ui.md): identity, CSRF, the /api/v1 routes forwarded to
 * the registry, the catalog and the Kubernetes API (as the user), the static frontend with its
 * single-page fallback, and the security headers on every answer. The I/O shell over the pure
 * modules auth, views and static-path. Thread-safe: upstream clients come from pools, one
 * client per request at a time.
 */

#include <stdint.h>

#include "http/server.h"
#include "kube/config.h"
#include "ui/auth.h"
#include "util/macro.h"

struct ui_config {
        const char *static_dir;    /* borrowed; NULL or without index.html = the built-in page */
        const char *registry_url;  /* borrowed; NULL = registry routes answer 503 */
        const char *registry_name; /* borrowed; "modelplane" */
        const char *catalog_url;   /* borrowed; NULL = catalog routes answer 503 */
        const char *ca_file;       /* borrowed; for https upstreams, may be NULL */
        long upstream_timeout_ms;  /* registry and catalog calls; 0 = 30 s */
        const struct kube_config *kube; /* borrowed for the call; NULL = deployment routes 503 */
        struct ui_auth_config auth; /* borrowed strings and arrays, kept for the server's life */
        uint8_t csrf_key[UI_CSRF_KEY_SIZE];
};

struct ui_server;

_warn_unused_result_ int ui_server_new(const struct ui_config *cfg, struct ui_server **ret);
struct ui_server *ui_server_free(struct ui_server *s);
DEFINE_CLEANUP_FUNC(struct ui_server *, ui_server_free)

/* An http_handler_fn; userdata is the struct ui_server. */
int ui_server_handle(void *userdata, struct http_req *req, struct http_resp *resp);

/* True when the server found a built frontend (an index.html) to serve. */
bool ui_server_has_frontend(const struct ui_server *s);
