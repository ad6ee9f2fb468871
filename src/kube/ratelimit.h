/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

/*
 * The work queue's rate limiter, as client-go's DefaultControllerRateLimiter: the maximum of
 *  - a per-item exponential backoff: base * 2^failures(key), capped at max_delay, and
 *  - an overall token bucket (qps, burst) shared by all keys: a reservation that takes one
 *    token, whose delay is how long until that token exists (the bucket may go negative).
 *
 * Thread-safe. Time comes from the clock port so tests drive it without sleeping.
 */

#include <stdbool.h>

#include "util/macro.h"
#include "util/time-util.h"

#define RATELIMIT_BASE_DELAY_DEFAULT (5 * USEC_PER_MSEC)
#define RATELIMIT_MAX_DELAY_DEFAULT  (1000 * USEC_PER_SEC)
#define RATELIMIT_QPS_DEFAULT        10.0
#define RATELIMIT_BURST_DEFAULT      100U

struct ratelimiter_options {
        usec_t base_delay;         /* 0 = 5 ms */
        usec_t max_delay;          /* 0 = 1000 s */
        double qps;                /* 0 = 10; < 0 disables the bucket */
        unsigned burst;            /* 0 = 100 */
        const struct clock *clock; /* borrowed, must outlive the limiter; NULL = monotonic */
};

struct ratelimiter;

/* opts may be NULL (all defaults). Returns NULL only on OOM. */
struct ratelimiter *ratelimiter_new(const struct ratelimiter_options *opts);
struct ratelimiter *ratelimiter_free(struct ratelimiter *rl);
DEFINE_CLEANUP_FUNC(struct ratelimiter *, ratelimiter_free)

/*
 * Records one more failure of key and returns in *ret_delay how long to wait before retrying it:
 * max(per-item backoff, token-bucket reservation delay). Returns 0 or -ENOMEM.
 */
_warn_unused_result_ int ratelimiter_when(struct ratelimiter *rl, const char *key,
                                          usec_t *ret_delay);
/* Forgets the failures of key (its next backoff starts at base again). */
void ratelimiter_forget(struct ratelimiter *rl, const char *key);
/* Number of failures recorded for key since the last forget. */
unsigned ratelimiter_num_requeues(struct ratelimiter *rl, const char *key);

/* Exponential part only: base * 2^failures capped at max (pure; exposed for tests). */
usec_t ratelimit_backoff_delay(usec_t base, usec_t max, unsigned failures);
