/* SPDX-License-Identifier: Apache-2.0 */
#include "kube/bucket.h"

void token_bucket_init(struct token_bucket *b, double qps, unsigned burst, usec_t now)
{
        b->qps = qps > 0 ? qps : 1.0;
        b->burst = burst > 0 ? (double)burst : 1.0;
        b->tokens = b->burst;
        b->last = now;
}

usec_t token_bucket_reserve(struct token_bucket *b, usec_t now)
{
        if (now > b->last) {
                b->tokens += (double)(now - b->last) / (double)USEC_PER_SEC * b->qps;
                if (b->tokens > b->burst)
                        b->tokens = b->burst;
                b->last = now;
        }
        b->tokens -= 1.0;
        if (b->tokens >= 0)
                return 0;
        /* round up: never wake before the token exists */
        return (usec_t)(-b->tokens / b->qps * (double)USEC_PER_SEC + 0.999);
}
