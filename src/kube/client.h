/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

/*
 * A Kubernetes API client over libcurl that behaves like client-go: typed errors (status.h),
 * connection reuse, request timeouts, an optional client-side QPS limit, bearer tokens re-read
 * from a rotating file, TLS verification on unless the config says otherwise.
 *
 * Threads: a struct kube_client owns one CURL easy handle and must be used by one thread at a
 * time (libcurl's rule). kube_client_dup() makes another client for another thread; clones share
 * the configuration, the rate limiter, the current token and a CURLSH (DNS cache and TLS
 * sessions). Each handle keeps its own keep-alive connection (connections are not shared across
 * threads). Non-2xx answers are decoded in one place (status.h); a 401 with a token file re-reads
 * the file and retries once. Responses are capped (256 MiB), watch lines too (WATCH_LINE_MAX).
 *
 * Objects are jansson values. Every call taking json_t *obj borrows it; every ret_obj is a new
 * reference the caller owns. ret_obj may be NULL when the caller does not need the answer.
 * reterr may be NULL. Namespace NULL means cluster-scoped (or all namespaces for list/watch).
 */

#include <jansson.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "kube/api.h"
#include "kube/config.h"
#include "kube/status.h"
#include "kube/watch-stream.h"
#include "util/macro.h"
#include "util/time-util.h"

/* Called after every request of the client and its clones (from the calling thread): the HTTP
 * method and the response code, 0 when no response arrived. Must be thread-safe and quick. */
typedef void (*kube_request_observer_fn)(void *userdata, const char *method, int code);

/* Throttling (429 from API Priority and Fairness, 503 with Retry-After): defaults. */
#define KUBE_THROTTLE_RETRIES_DEFAULT  10U
#define KUBE_THROTTLE_WAIT_MAX_DEFAULT (10 * USEC_PER_SEC)
#define KUBE_THROTTLE_BACKOFF_BASE     (100 * USEC_PER_MSEC)

struct kube_client_options {
        double qps;     /* client-side rate limit, 0 = unlimited (the default, as
                                 * controller-runtime >= 0.21: the server's API Priority and
                                 * Fairness is the limit) */
        unsigned burst; /* token bucket size when qps > 0 */
        /* A 429, or a 503 with Retry-After, is resent after max(Retry-After, 100 ms * 2^n),
         * capped at throttle_wait_max, up to throttle_retries times (0 = 10, < 0 = never); then
         * the call returns -EAGAIN with st.retry_after, and the caller requeues. */
        int throttle_retries;
        usec_t throttle_wait_max;          /* 0 = 10 s */
        usec_t request_timeout;            /* per non-watch request; 0 = 30 s */
        const char *user_agent;            /* borrowed; default "modelplane/<version>" */
        kube_request_observer_fn observer; /* may be NULL (rest_client_requests_total) */
        void *observer_userdata;
};

struct kube_client;

_warn_unused_result_ int kube_client_new(const struct kube_config *cfg,
                                         const struct kube_client_options *opts,
                                         struct kube_client **ret);
_warn_unused_result_ int kube_client_dup(struct kube_client *c, struct kube_client **ret);
/* As kube_client_dup(), but the clone has its own client-side budget (qps 0 = unlimited) instead
 * of the shared one: for traffic that must neither wait for nor slow the others (Events). */
_warn_unused_result_ int kube_client_dup_budget(struct kube_client *c, double qps, unsigned burst,
                                                struct kube_client **ret);
struct kube_client *kube_client_free(struct kube_client *c);
DEFINE_CLEANUP_FUNC(struct kube_client *, kube_client_free)

/* struct gvr and the option types are in api.h (the port this client implements). */

_warn_unused_result_ int kube_get(struct kube_client *c, const struct gvr *r, const char *ns,
                                  const char *name, json_t **ret_obj, struct kube_status *reterr);
_warn_unused_result_ int kube_list(struct kube_client *c, const struct gvr *r, const char *ns,
                                   const struct kube_list_options *opts, json_t **ret_list,
                                   struct kube_status *reterr);
_warn_unused_result_ int kube_create(struct kube_client *c, const struct gvr *r, const char *ns,
                                     const json_t *obj, const struct kube_write_options *opts,
                                     json_t **ret_obj, struct kube_status *reterr);
/* PUT; obj's metadata.resourceVersion is the precondition (409 -> -ESTALE when stale). */
_warn_unused_result_ int kube_update(struct kube_client *c, const struct gvr *r, const char *ns,
                                     const char *name, const json_t *obj,
                                     const struct kube_write_options *opts, json_t **ret_obj,
                                     struct kube_status *reterr);
_warn_unused_result_ int kube_patch(struct kube_client *c, const struct gvr *r, const char *ns,
                                    const char *name, enum kube_patch_type type,
                                    const json_t *patch, const struct kube_write_options *opts,
                                    json_t **ret_obj, struct kube_status *reterr);
_warn_unused_result_ int kube_delete(struct kube_client *c, const struct gvr *r, const char *ns,
                                     const char *name, const struct kube_delete_options *opts,
                                     json_t **ret_obj, struct kube_status *reterr);

/* Any other request: method, absolute API path with query, optional JSON body and content type. */
_warn_unused_result_ int kube_request(struct kube_client *c, const char *method, const char *path,
                                      const char *content_type, const json_t *body,
                                      json_t **ret_obj, struct kube_status *reterr);

/* Builds "/api/v1/namespaces/ns/pods/name" style paths into buf (size len). */
_warn_unused_result_ int kube_resource_path(const struct gvr *r, const char *ns, const char *name,
                                            const char *subresource, char *buf, size_t len);

/* Whether an answer is throttling that is retried (429, or 503 with Retry-After). Pure. */
bool kube_throttle_is_retryable(int http_code, unsigned retry_after);
/* The wait before retry number attempt (0-based): max(retry_after s, 100 ms * 2^attempt),
 * capped at cap. Pure. */
usec_t kube_throttle_delay(unsigned retry_after, unsigned attempt, usec_t cap);
/* Counters shared by the client and its clones: throttled answers received, and calls that
 * returned -EAGAIN because the retries ran out (the caller requeued). Either may be NULL. */
void kube_client_throttle_stats(const struct kube_client *c, unsigned long *ret_throttled,
                                unsigned long *ret_exhausted);
/*
 * Acting for someone else (a server that calls the API on a user's behalf: modelplane ui).
 * user set: every request carries "Impersonate-User: user" and one "Impersonate-Group" per
 * group, authenticated with the client's own credentials (which need the impersonate verb).
 * bearer set: every request authenticates with that token instead of the client's own; refused
 * with -EPERM when the client's configuration has a client certificate (the TLS connection would
 * authenticate as the certificate). Values with control characters, empty, or over the limits
 * are -EINVAL. NULL id restores the client's own identity. Strings are copied; affects this
 * client only, never its clones.
 */
#define KUBE_IDENTITY_VALUE_MAX  256U
#define KUBE_IDENTITY_GROUPS_MAX 32U
#define KUBE_IDENTITY_TOKEN_MAX  ((size_t)8 * 1024)
struct kube_identity {
        const char *user;          /* borrowed; NULL = no impersonation */
        const char *const *groups; /* borrowed */
        size_t n_groups;
        const char *bearer; /* borrowed; NULL = the client's own credentials */
};
_warn_unused_result_ int kube_client_set_identity(struct kube_client *c,
                                                  const struct kube_identity *id);

/* The port (api.h) over this client: userdata is c (borrowed), so the same one-thread rule holds. */
struct kube_api kube_client_api(struct kube_client *c);

/* The client's default namespace (context namespace, in-cluster namespace or "default");
 * borrowed, valid while the client lives. */
const char *kube_client_namespace(const struct kube_client *c);
/* The API server URL; borrowed, valid while the client lives. */
const char *kube_client_server(const struct kube_client *c);
