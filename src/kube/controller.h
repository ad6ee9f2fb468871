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
 * "name"), never the event, and must be idempotent. It reads caches and writes to the API server.
 *
 * The runner logs (it is runtime, like the informer): one JSON line per error with controller,
 * object and reconcileID (a random UUID per reconcile call). Metrics (metrics.h) are updated when
 * a registry is given. Shutdown: controller_stop() makes workers stop taking keys, waits for
 * in-flight reconciles up to a timeout, and reports whether they all finished.
 */

#include <stdbool.h>

#include "kube/ratelimit.h"
#include "util/macro.h"
#include "util/time-util.h"

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

struct reconciler {
        const char *name; /* borrowed; the controller name (logs, metrics) */
        /* Level-based: gets only the key, never the event. Must be idempotent. */
        int (*reconcile)(void *userdata, const char *key, struct reconcile_result *ret);
        void *userdata;
};

struct controller_options {
        struct reconciler reconciler;
        unsigned workers;                          /* concurrent reconciles; 0 = 1 */
        const struct clock *clock;                 /* borrowed; NULL = monotonic */
        const struct ratelimiter_options *ratelimit; /* NULL = client-go defaults */
        struct metrics_registry *metrics;          /* borrowed, may be NULL */
};

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

