/* SPDX-License-Identifier: Apache-2.0 */
#include <criterion/criterion.h>

#include "../../fakes/fake-clock.h"
#include "kube/ratelimit.h"

Test(ratelimit, backoff_curve_pure)
{
        cr_assert_eq(ratelimit_backoff_delay(5000, 1000 * USEC_PER_SEC, 0), 5000);
        cr_assert_eq(ratelimit_backoff_delay(5000, 1000 * USEC_PER_SEC, 1), 10000);
        cr_assert_eq(ratelimit_backoff_delay(5000, 1000 * USEC_PER_SEC, 10), 5000ULL << 10);
        /* 5 ms * 2^17 = 655.36 s < 1000 s; 2^18 = 1310.72 s is capped */
        cr_assert_eq(ratelimit_backoff_delay(5000, 1000 * USEC_PER_SEC, 17), 5000ULL << 17);
        cr_assert_eq(ratelimit_backoff_delay(5000, 1000 * USEC_PER_SEC, 18), 1000 * USEC_PER_SEC);
        cr_assert_eq(ratelimit_backoff_delay(5000, 1000 * USEC_PER_SEC, 1000), 1000 * USEC_PER_SEC);
}

/* Default limiter, with bucket disabled: every failure of one key follows 5 ms * 2^n up to 1000 s. */
Test(ratelimit, per_item_curve_with_fake_clock)
{
        struct fake_clock fc;
        struct ratelimiter_options o = { .qps = -1 };
        usec_t d;

        fake_clock_init(&fc, 1000 * USEC_PER_SEC);
        o.clock = &fc.clock;
        CLEANUP(ratelimiter_freep) struct ratelimiter *rl = ratelimiter_new(&o);
        cr_assert_not_null(rl);
        for (unsigned i = 0; i < 25; i++) {
                usec_t want = MIN((usec_t)5000 << i, 1000 * USEC_PER_SEC);
                cr_assert_eq(ratelimiter_when(rl, "ns/a", &d), 0);
                cr_assert_eq(d, want, "failure %u: expected %llu, got %llu", i,
                             (unsigned long long)want, (unsigned long long)d);
                cr_assert_eq(ratelimiter_num_requeues(rl, "ns/a"), i + 1);
        }
        /* Another key has its own curve. */
        cr_assert_eq(ratelimiter_when(rl, "ns/b", &d), 0);
        cr_assert_eq(d, 5000);
        /* Forget resets. */
        ratelimiter_forget(rl, "ns/a");
        cr_assert_eq(ratelimiter_num_requeues(rl, "ns/a"), 0);
        cr_assert_eq(ratelimiter_when(rl, "ns/a", &d), 0);
        cr_assert_eq(d, 5000);
}

/* Token bucket: burst 100 free, then each token costs 100 ms at 10 qps; refills with time. */
Test(ratelimit, token_bucket)
{
        struct fake_clock fc;
        struct ratelimiter_options o = { 0 };
        usec_t d;
        char key[32];

        fake_clock_init(&fc, 5 * USEC_PER_SEC);
        o.clock = &fc.clock;
        CLEANUP(ratelimiter_freep) struct ratelimiter *rl = ratelimiter_new(&o);
        cr_assert_not_null(rl);
        /* 100 distinct keys: each first failure is 5 ms (per-item), bucket has tokens. */
        for (int i = 0; i < 100; i++) {
                (void)snprintf(key, sizeof(key), "k%d", i);
                cr_assert_eq(ratelimiter_when(rl, key, &d), 0);
                cr_assert_eq(d, 5000, "key %d: %llu", i, (unsigned long long)d);
        }
        /* The bucket is empty: the 101st reservation waits 100 ms, the 102nd 200 ms. */
        cr_assert_eq(ratelimiter_when(rl, "x1", &d), 0);
        cr_assert_eq(d, 100 * USEC_PER_MSEC);
        cr_assert_eq(ratelimiter_when(rl, "x2", &d), 0);
        cr_assert_eq(d, 200 * USEC_PER_MSEC);
        /* After 1 s, 10 tokens came back: we owe 2, so 8 are free, the 9th waits 100 ms. */
        fake_clock_advance(&fc, USEC_PER_SEC);
        for (int i = 0; i < 8; i++) {
                (void)snprintf(key, sizeof(key), "y%d", i);
                cr_assert_eq(ratelimiter_when(rl, key, &d), 0);
                cr_assert_eq(d, 5000, "y%d: %llu", i, (unsigned long long)d);
        }
        cr_assert_eq(ratelimiter_when(rl, "z", &d), 0);
        cr_assert_eq(d, 100 * USEC_PER_MSEC);
        /* The refill is capped at burst: after an hour exactly 100 are free again. */
        fake_clock_advance(&fc, 3600 * USEC_PER_SEC);
        for (int i = 0; i < 100; i++) {
                (void)snprintf(key, sizeof(key), "w%d", i);
                cr_assert_eq(ratelimiter_when(rl, key, &d), 0);
                cr_assert_eq(d, 5000);
        }
        cr_assert_eq(ratelimiter_when(rl, "w-last", &d), 0);
        cr_assert_eq(d, 100 * USEC_PER_MSEC);
}

/* max(): a key with a long backoff is not shortened by a full bucket, and vice versa. */
Test(ratelimit, max_of_both)
{
        struct fake_clock fc;
        struct ratelimiter_options o = {
                .base_delay = USEC_PER_SEC, .max_delay = 8 * USEC_PER_SEC, .qps = 1, .burst = 1
        };
        usec_t d;

        fake_clock_init(&fc, 0);
        o.clock = &fc.clock;
        CLEANUP(ratelimiter_freep) struct ratelimiter *rl = ratelimiter_new(&o);
        cr_assert_eq(ratelimiter_when(rl, "a", &d), 0);
        cr_assert_eq(d, USEC_PER_SEC); /* backoff 1 s, bucket 0 */
        cr_assert_eq(ratelimiter_when(rl, "b", &d), 0);
        cr_assert_eq(d, USEC_PER_SEC); /* backoff 1 s, bucket 1 s */
        cr_assert_eq(ratelimiter_when(rl, "c", &d), 0);
        cr_assert_eq(d, 2 * USEC_PER_SEC); /* backoff 1 s, bucket 2 s */
        cr_assert_eq(ratelimiter_when(rl, "a", &d), 0);
        cr_assert_eq(d, 3 * USEC_PER_SEC); /* backoff 2 s, bucket 3 s */
        cr_assert_eq(ratelimiter_when(rl, "a", &d), 0);
        cr_assert_eq(d, 4 * USEC_PER_SEC); /* backoff 4 s, bucket 4 s */
        cr_assert_eq(ratelimiter_when(rl, "a", &d), 0);
        cr_assert_eq(d, 8 * USEC_PER_SEC); /* backoff 8 s, bucket 5 s */
        cr_assert_eq(ratelimiter_when(rl, "a", &d), 0);
        cr_assert_eq(d, 8 * USEC_PER_SEC); /* capped 8 s, bucket 6 s */
}
