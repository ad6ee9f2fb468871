/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

/*
 * Who may use the model registry and the catalog through the console (docs/ui.md,
 * "Authorization"), as upstream's BFF decides it: a user may when Kubernetes RBAC lets that user
 * `get` the upstream's Service in its namespace. Pure: the Service reference and its parsing, the
 * review body sent to the API server (a SubjectAccessReview with the proxy's user and groups, or a
 * SelfSubjectAccessReview made with the user's own bearer token), reading the answer, the refusal
 * message, and a small cache of decisions per identity and Service with the time passed in.
 */

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ui/auth.h"
#include "util/macro.h"
#include "util/time-util.h"

#define UI_K8S_NAME_MAX 63U /* a namespace or Service name: an RFC 1123 label */

/* The Service whose `get` permission grants access to an upstream. */
struct ui_service_ref {
        char ns[UI_K8S_NAME_MAX + 1];
        char name[UI_K8S_NAME_MAX + 1];
};

/* Parses "NAMESPACE/NAME" (each an RFC 1123 label). Returns 0 or -EINVAL. */
_warn_unused_result_ int ui_service_ref_parse(const char *s, struct ui_service_ref *ret);

/*
 * The Service behind an in-cluster URL: "http(s)://NAME.NAMESPACE.svc[.DOMAIN][:PORT][/...]", or
 * "http(s)://NAME[:PORT][/...]" in own_ns (the server's own namespace; NULL: not known). Returns 0,
 * or -ENOENT when the host is not a Service's cluster name (or url is NULL).
 */
_warn_unused_result_ int ui_service_ref_from_url(const char *url, const char *own_ns,
                                                 struct ui_service_ref *ret);

/*
 * The review that asks whether id may `get` the Service svc: a SubjectAccessReview carrying the
 * user and groups for the proxy and development modes (the server posts it with its own
 * credentials), a SelfSubjectAccessReview for bearer mode (posted with the user's token).
 * Returns: new reference; NULL on OOM.
 */
json_t *ui_access_review_body(const struct ui_identity *id, const struct ui_service_ref *svc);
/* The API server's path for that review. */
const char *ui_access_review_path(const struct ui_identity *id);
/* Whether the answer says status.allowed = true (anything else, NULL included, is a refusal). */
bool ui_access_review_allowed(const json_t *answer);

/*
 * The message of the 403 for a user whom RBAC does not let use what (e.g. "the model registry
 * \"modelplane\""): names the user, the permission and where to grant it.
 */
void ui_access_refusal(const char *user, const char *what, const struct ui_service_ref *svc,
                       char *msg, size_t len);

#define UI_ACCESS_KEY_SIZE 32U /* SHA-256 */

/*
 * The cache key of (identity, Service): a digest over the mode, the user, the groups in sorted
 * order, a bearer token (never kept itself) and the Service. Returns 0 or -ENOMEM.
 */
_warn_unused_result_ int ui_access_key(const struct ui_identity *id,
                                       const struct ui_service_ref *svc,
                                       uint8_t ret[UI_ACCESS_KEY_SIZE]);

/*
 * A bounded cache of decisions (set-associative: a full set drops its entry that expires first).
 * An allowed answer is kept for ttl_allow, a refusal for ttl_deny. Not thread-safe: the caller
 * holds its own lock around get and put.
 */
struct ui_access_cache;

_warn_unused_result_ int ui_access_cache_new(size_t capacity, usec_t ttl_allow, usec_t ttl_deny,
                                             struct ui_access_cache **ret);
struct ui_access_cache *ui_access_cache_free(struct ui_access_cache *c);
DEFINE_CLEANUP_FUNC(struct ui_access_cache *, ui_access_cache_free)

/* 1 allowed, 0 refused, -ENOENT when nothing unexpired is known at time now. */
int ui_access_cache_get(struct ui_access_cache *c, const uint8_t key[UI_ACCESS_KEY_SIZE],
                        usec_t now);
void ui_access_cache_put(struct ui_access_cache *c, const uint8_t key[UI_ACCESS_KEY_SIZE],
                         bool allowed, usec_t now);
