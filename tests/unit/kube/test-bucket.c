/* SPDX-License-Identifier: Apache-2.0 */
#include <criterion/criterion.h>

#include "kube/bucket.h"

#define S(x) ((usec_t)((x) * (double)USEC_PER_SEC))

Test(token_bucket, burst_then_paced_reservations)
{
        struct token_bucket b;
        usec_t t0 = S(1000);

        token_bucket_init(&b, 10.0, 3, t0);
        cr_assert_eq(token_bucket_reserve(&b, t0), 0);
        cr_assert_eq(token_bucket_reserve(&b, t0), 0);
        cr_assert_eq(token_bucket_reserve(&b, t0), 0, "burst of 3 is free");
        cr_assert_eq(token_bucket_reserve(&b, t0), S(0.1), "4th waits one token at 10 qps");
        cr_assert_eq(token_bucket_reserve(&b, t0), S(0.2), "5th queues behind the 4th");
}

Test(token_bucket, refills_over_time_up_to_burst)
{
        struct token_bucket b;
        usec_t t = S(5);

        token_bucket_init(&b, 2.0, 2, t);
        cr_assert_eq(token_bucket_reserve(&b, t), 0);
        cr_assert_eq(token_bucket_reserve(&b, t), 0);
        cr_assert_eq(token_bucket_reserve(&b, t), S(0.5));
        /* one second later: +2 tokens, one of which pays the earlier reservation */
        cr_assert_eq(token_bucket_reserve(&b, t + S(1)), 0);
        cr_assert_eq(token_bucket_reserve(&b, t + S(1)), S(0.5));
        /* an hour idle refills only to burst */
        cr_assert_eq(token_bucket_reserve(&b, t + S(3600)), 0);
        cr_assert_eq(token_bucket_reserve(&b, t + S(3600)), 0);
        cr_assert_eq(token_bucket_reserve(&b, t + S(3600)), S(0.5));
}

Test(token_bucket, time_going_backwards_is_ignored)
{
        struct token_bucket b;

        token_bucket_init(&b, 1.0, 1, S(10));
        cr_assert_eq(token_bucket_reserve(&b, S(10)), 0);
        cr_assert_eq(token_bucket_reserve(&b, S(9)), S(1), "no refill from an earlier now");
}
