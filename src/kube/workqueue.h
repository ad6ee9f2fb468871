/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

/*
 * The work queue of a controller, with client-go's semantics (util/workqueue):
 *
 *  - fair: keys are handed out in the order they were added (FIFO);
 *  - stingy: a key is queued at most once (repeated adds collapse), and it is never handed to
 *    two workers at once: a key added while it is being processed is marked dirty and queued
 *    again when its worker calls workqueue_done();
 *  - delayed adds (workqueue_add_after): the earliest requested time wins;
 *  - rate-limited adds (workqueue_add_rate_limited) wait ratelimiter_when() (ratelimit.h);
 *    workqueue_forget() resets the key's backoff;
 *  - shutdown: further adds are ignored, delayed keys are dropped, keys already queued are still
 *    handed out ("drain"), then workqueue_get() returns -ESHUTDOWN.
 *
 * Keys are strings ("namespace/name"), copied by the queue. All functions are thread-safe.
 * Delays are measured with the clock port; a blocked workqueue_get() waits in real time for the
 * computed delay, so tests with a fake clock call workqueue_kick() after moving the clock.
 */

#include <stdbool.h>
#include <stddef.h>

#include "kube/ratelimit.h"
#include "util/macro.h"
#include "util/time-util.h"

struct metrics_registry;
struct workqueue;

struct workqueue_options {
        const char *name;                            /* borrowed; metrics label, may be NULL */
        const struct clock *clock;                   /* borrowed; NULL = monotonic */
        const struct ratelimiter_options *ratelimit; /* NULL = client-go defaults (same clock) */
        struct metrics_registry *metrics;            /* borrowed, may be NULL; must outlive queue */
};

_warn_unused_result_ int workqueue_new(const struct workqueue_options *opts,
                                       struct workqueue **ret);
/* Shuts down (without waiting) and frees; keys still held by workers become invalid. */
struct workqueue *workqueue_free(struct workqueue *q);
DEFINE_CLEANUP_FUNC(struct workqueue *, workqueue_free)

/* Queues key now. Returns 0 (also when it collapsed or the queue is shutting down) or -ENOMEM. */
_warn_unused_result_ int workqueue_add(struct workqueue *q, const char *key);
/* Queues key after delay (0 = now). An earlier pending time for the same key wins. */
_warn_unused_result_ int workqueue_add_after(struct workqueue *q, const char *key, usec_t delay);
/* Queues key after the rate limiter's delay for it, and counts a retry. */
_warn_unused_result_ int workqueue_add_rate_limited(struct workqueue *q, const char *key);
/* Resets the rate limiter's failures for key. */
void workqueue_forget(struct workqueue *q, const char *key);
unsigned workqueue_num_requeues(struct workqueue *q, const char *key);

/*
 * Blocks until a key is ready and returns it in *ret_key (owned by the caller; pass it back to
 * workqueue_done() and free it). Returns -ESHUTDOWN once the queue is shut down and empty.
 */
_warn_unused_result_ int workqueue_get(struct workqueue *q, char **ret_key);
/* As workqueue_get() without blocking: -EAGAIN when nothing is ready. */
_warn_unused_result_ int workqueue_try_get(struct workqueue *q, char **ret_key);
/* Marks key processed; a key re-added meanwhile is queued again. */
void workqueue_done(struct workqueue *q, const char *key);

/* Moves due delayed keys into the queue and wakes waiters (after a fake clock moved). */
void workqueue_kick(struct workqueue *q);

/* Stops accepting keys; waiters wake up. Queued keys are still handed out. */
void workqueue_shutdown(struct workqueue *q);
bool workqueue_is_shutting_down(struct workqueue *q);
/*
 * Shuts down, then waits (real time) until no key is being processed, at most timeout
 * (USEC_INFINITY = forever). Returns 0, or -ETIMEDOUT when keys are still in flight.
 */
_warn_unused_result_ int workqueue_shutdown_with_drain(struct workqueue *q, usec_t timeout);

/* Number of keys ready to be handed out (not counting delayed or in-flight ones). */
size_t workqueue_len(struct workqueue *q);
/* Number of keys waiting for their delay. */
size_t workqueue_delayed_len(struct workqueue *q);
/* Number of keys being processed right now. */
size_t workqueue_processing_len(struct workqueue *q);
