/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

/*
 * The runner (controller-runtime's internal controller, kube-rs's applier): N worker threads
 * take keys from a work queue and call the reconciler, then apply its outcome:
 *
 *   returns >= 0, outcome DONE           -> forget(key)                       result=success
 *   returns >= 0, outcome REQUEUE_AFTER  -> forget(key); add_after(key, d)    result=requeue_after
 *   returns >= 0, outcome RETRY          -> add_rate_limited(key)             result=requeue
 *   returns >= 0, outcome TERMINAL       -> forget(key); error logged         result=error
 *   returns -EINVAL or -EACCES           -> as TERMINAL (bad spec / RBAC)     result=error
 *   returns any other negative errno     -> add_rate_limited(key), logged     result=error
 *
 * The reconcile contract is level-based: the reconciler gets only the key ("namespace/name" or
 * "name"), never the event, and must be idempotent. It reads caches and writes to the API server
 * through ctx->api (api.h), the port the runner hands it:
 *
 *   - client per worker: with controller_options.client, every worker thread reconciles with its
 *     own kube_client_dup() (libcurl: never one handle in two threads), made on its first
 *     reconcile and kept until the worker exits; with controller_options.api instead, every
 *     worker gets that one (thread-safe) port, e.g. the in-memory fake;
 *   - the cache-sync gate: while any informer of controller_options.wait_for has not synced its
 *     first list, keys are requeued after 200 ms without calling the reconciler (an object absent
 *     from an unsynced cache is unknown, not gone);
 *   - one log line per failure: the reconciler does not log its errors, it describes them with
 *     reconcile_errorf() and returns them; the runner logs the message once, with controller,
 *     object and reconcileID (a random UUID per reconcile call).
 *
 * Metrics (metrics.h) are updated when a registry is given. Shutdown: controller_stop() makes
 * workers stop taking keys, waits for in-flight reconciles up to a timeout, and reports whether
 * they all finished.
 */

#include <stdbool.h>

#include "kube/api.h"
#include "kube/ratelimit.h"
#include "util/log.h"
#include "util/macro.h"
#include "util/time-util.h"

struct informer;
struct kube_client;
struct metrics_registry;
struct workqueue;

enum reconcile_outcome {
        RECONCILE_DONE,          /* Forget(key); wait for the next event */
        RECONCILE_REQUEUE_AFTER, /* Forget(key); AddAfter(key, requeue_after) */
        RECONCILE_RETRY,         /* AddRateLimited(key): transient problem */
        RECONCILE_TERMINAL,      /* Forget(key); error recorded, not retried */
        RECONCILE_OUTCOME__MAX,
        RECONCILE_OUTCOME__INVALID = -EINVAL,
};

struct reconcile_result {
        enum reconcile_outcome outcome; /* preset to RECONCILE_DONE before each call */
        usec_t requeue_after;
};

static inline int reconcile_done(struct reconcile_result *ret)
{
        ret->outcome = RECONCILE_DONE;
        return 0;
}

static inline int reconcile_requeue_after(struct reconcile_result *ret, usec_t after)
{
        ret->outcome = RECONCILE_REQUEUE_AFTER;
        ret->requeue_after = after;
        return 0;
}

static inline int reconcile_retry(struct reconcile_result *ret)
{
        ret->outcome = RECONCILE_RETRY;
        return 0;
}

/* Records a terminal failure r (negative errno) and returns it. */
static inline int reconcile_terminal(struct reconcile_result *ret, int r)
{
        ret->outcome = RECONCILE_TERMINAL;
        return r;
}

/* What one reconcile call gets besides its key (kube-rs's Ctx). Valid during the call only. */
struct reconcile_ctx {
        void *userdata;               /* the reconciler's userdata (struct reconciler) */
        const struct kube_api *api;   /* borrowed; this worker's port; NULL without client/api */
        const struct clock *clock;    /* borrowed; wall clock (CLOCK_REALTIME or a test's) */
        const struct log_fields *log; /* borrowed; controller, object, reconcileID for the
                                       * reconciler's own info/debug lines */
        char *error;                  /* the runner's message buffer (reconcile_errorf) */
        size_t error_size;
        /* More ports of this worker, for concurrent writes within one reconcile
         * (reconcile_for_each()); each is used by one thread at a time. */
        const struct kube_api *fanout;
        size_t n_fanout;
};

/* Level-based: gets only the key, never the event. Must be idempotent. */
typedef int reconcile_fn(const struct reconcile_ctx *ctx, const char *key,
                         struct reconcile_result *ret);

/*
 * Describes the failure r (negative errno) that the reconcile is about to return, for the one
 * log line the runner writes, and returns r. The first message of a call wins (the reconciler
 * returns its first error); later calls only return r.
 */
int reconcile_errorf(const struct reconcile_ctx *ctx, int r, const char *fmt, ...) _printf_(3, 4);

/*
 * Concurrent writes within one reconcile (issue #12): calls fn(item_ctx, i, userdata) for every i
 * in [0, n), on up to 1 + ctx->n_fanout threads (the caller's included), each with its own port
 * (item_ctx->api: ctx->api or one of ctx->fanout) and its own error buffer. Every item runs even
 * when others fail; returns 0 or the failure of the lowest failing index, whose message becomes
 * ctx's (reconcile_errorf). fn must be safe against the other items running at the same time.
 * With no fanout, or n < 2, the items run in order on the caller's thread.
 */
typedef int reconcile_item_fn(const struct reconcile_ctx *ctx, size_t i, void *userdata);
int reconcile_for_each(const struct reconcile_ctx *ctx, size_t n, reconcile_item_fn *fn,
                       void *userdata);

/* Wall time now (usec, CLOCK_REALTIME or the test's clock): clock_now(ctx->clock). */
static inline usec_t reconcile_now(const struct reconcile_ctx *ctx)
{
        return clock_now(ctx->clock);
}

struct reconciler {
        const char *name; /* borrowed; the controller name (logs, metrics) */
        reconcile_fn *reconcile;
        void *userdata; /* ctx->userdata */
};

struct controller_options {
        struct reconciler reconciler;
        unsigned workers;               /* concurrent reconciles; 0 = 1 */
        const struct clock *clock;      /* borrowed; queue, metrics; NULL = monotonic */
        const struct clock *wall_clock; /* borrowed; ctx->clock; NULL = CLOCK_REALTIME */
        const struct ratelimiter_options *ratelimit; /* NULL = client-go defaults */
        struct metrics_registry *metrics;            /* borrowed, may be NULL */
        /* The port of ctx->api: one kube_client_dup() of client per worker, or else api (borrowed,
         * shared by the workers, so thread-safe), or else none. */
        struct kube_client *client; /* borrowed, may be NULL */
        const struct kube_api *api; /* borrowed, may be NULL */
        /* ctx->n_fanout: ports per worker beyond its own for reconcile_for_each() (more clones of
         * client, or api again); 0 = none, at most CONTROLLER_FANOUT_MAX. */
        unsigned write_fanout;
        /* The cache-sync gate: these informers (borrowed) must have synced before a reconcile. */
        struct informer *const *wait_for;
        size_t n_wait_for;
};

#define CONTROLLER_FANOUT_MAX 64

struct controller;

_warn_unused_result_ int controller_new(const struct controller_options *opts,
                                        struct controller **ret);
/* Stops (waiting without limit for in-flight reconciles) and frees. */
struct controller *controller_free(struct controller *c);
DEFINE_CLEANUP_FUNC(struct controller *, controller_free)

/* The controller's work queue (borrowed): event handlers add keys to it. */
struct workqueue *controller_queue(struct controller *c);
/* Shorthand for workqueue_add(controller_queue(c), key). */
_warn_unused_result_ int controller_enqueue(struct controller *c, const char *key);

/* Starts the workers. -EALREADY when started. */
_warn_unused_result_ int controller_start(struct controller *c);
/*
 * Graceful shutdown: the queue stops accepting keys, workers stop taking keys, in-flight
 * reconciles get up to timeout (USEC_INFINITY = forever). Returns 0 when every worker has
 * exited, -ETIMEDOUT otherwise (controller_free() then waits for them).
 */
_warn_unused_result_ int controller_stop(struct controller *c, usec_t timeout);

/* Number of reconciles running right now. */
unsigned controller_active_workers(struct controller *c);

/* Errors the runner treats as terminal: -EINVAL, -EACCES. */
bool reconcile_error_is_terminal(int r);
