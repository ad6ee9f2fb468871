/* SPDX-License-Identifier: Apache-2.0 */
#include "kube/ratelimit.h"

#include <jansson.h>
#include <pthread.h>
#include <stdlib.h>

struct ratelimiter {
        pthread_mutex_t lock;
        struct ratelimiter_options opts;
        json_t *failures; /* owned; object key -> integer failure count */
        /* token bucket */
        double tokens;
        usec_t last; /* when tokens was last brought up to date */
        bool bucket_started;
};

usec_t ratelimit_backoff_delay(usec_t base, usec_t max, unsigned failures)
{
        usec_t d = base;

        /* Doubling saturates at max long before 64 bits overflow (max <= UINT64_MAX / 2). */
        for (unsigned i = 0; i < failures; i++) {
                if (d >= max || d > USEC_INFINITY / 2)
                        return max;
                d *= 2;
        }
        return MIN(d, max);
}

struct ratelimiter *ratelimiter_new(const struct ratelimiter_options *opts)
{
        struct ratelimiter *rl = calloc(1, sizeof(*rl));

        if (!rl)
                return NULL;
        if (opts)
                rl->opts = *opts;
        if (rl->opts.base_delay == 0)
                rl->opts.base_delay = RATELIMIT_BASE_DELAY_DEFAULT;
        if (rl->opts.max_delay == 0)
                rl->opts.max_delay = RATELIMIT_MAX_DELAY_DEFAULT;
        if (rl->opts.qps == 0)
                rl->opts.qps = RATELIMIT_QPS_DEFAULT;
        if (rl->opts.burst == 0)
                rl->opts.burst = RATELIMIT_BURST_DEFAULT;
        if (!rl->opts.clock)
                rl->opts.clock = &clock_monotonic;
        rl->failures = json_object();
        if (!rl->failures) {
                free(rl);
                return NULL;
        }
        rl->tokens = (double)rl->opts.burst;
        (void)pthread_mutex_init(&rl->lock, NULL);
        return rl;
}

struct ratelimiter *ratelimiter_free(struct ratelimiter *rl)
{
        if (!rl)
                return NULL;
        json_decref(rl->failures);
        (void)pthread_mutex_destroy(&rl->lock);
        free(rl);
        return NULL;
}

/* Takes one token; returns how long until it is actually available. Called locked. */
static usec_t bucket_reserve(struct ratelimiter *rl)
{
        usec_t now = clock_now(rl->opts.clock);
        double burst = (double)rl->opts.burst;

        if (rl->opts.qps < 0)
                return 0;
        if (!rl->bucket_started) {
                rl->bucket_started = true;
                rl->last = now;
        }
        if (now > rl->last) {
                rl->tokens += (double)(now - rl->last) / (double)USEC_PER_SEC * rl->opts.qps;
                if (rl->tokens > burst)
                        rl->tokens = burst;
                rl->last = now;
        }
        rl->tokens -= 1.0;
        if (rl->tokens >= 0)
                return 0;
        /* Round up so the token exists when the delay has elapsed. */
        double wait = -rl->tokens / rl->opts.qps * (double)USEC_PER_SEC;
        usec_t w = (usec_t)wait;
        if ((double)w < wait)
                w++;
        return w;
}

int ratelimiter_when(struct ratelimiter *rl, const char *key, usec_t *ret_delay)
{
        usec_t backoff, bucket;
        json_t *v;
        json_int_t n = 0;
        int r = 0;

        if (!rl || !key || !ret_delay)
                return -EINVAL;
        (void)pthread_mutex_lock(&rl->lock);
        v = json_object_get(rl->failures, key);
        if (v) {
                n = json_integer_value(v);
                if (json_integer_set(v, n + 1) < 0)
                        r = -ENOMEM;
        } else if (json_object_set_new_nocheck(rl->failures, key, json_integer(1)) < 0)
                r = -ENOMEM;
        if (r < 0) {
                (void)pthread_mutex_unlock(&rl->lock);
                return r;
        }
        backoff = ratelimit_backoff_delay(rl->opts.base_delay, rl->opts.max_delay,
                                          n > 64 ? 64U : (unsigned)n);
        bucket = bucket_reserve(rl);
        (void)pthread_mutex_unlock(&rl->lock);
        *ret_delay = MAX(backoff, bucket);
        return 0;
}

void ratelimiter_forget(struct ratelimiter *rl, const char *key)
{
        if (!rl || !key)
                return;
        (void)pthread_mutex_lock(&rl->lock);
        (void)json_object_del(rl->failures, key);
        (void)pthread_mutex_unlock(&rl->lock);
}

unsigned ratelimiter_num_requeues(struct ratelimiter *rl, const char *key)
{
        json_int_t n = 0;

        if (!rl || !key)
                return 0;
        (void)pthread_mutex_lock(&rl->lock);
        n = json_integer_value(json_object_get(rl->failures, key));
        (void)pthread_mutex_unlock(&rl->lock);
        return n < 0 ? 0 : (unsigned)n;
}
