/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

/*
 * A token bucket with reservations (client-go's flowcontrol.NewTokenBucketRateLimiter): tokens
 * refill at qps up to burst; every request takes one token, and when none is left it reserves
 * the next one and is told how long to wait for it (the balance goes negative: the queue of
 * waiters ahead). Pure: the caller supplies "now" and does the locking and the sleeping.
 * Fields are private to bucket.c.
 */

#include "util/time-util.h"

struct token_bucket {
        double qps;    /* > 0 */
        double burst;  /* >= 1 */
        double tokens; /* may be negative: reserved tokens */
        usec_t last;   /* when tokens was last brought up to date */
};

/* Starts full at time now. qps <= 0 is treated as unlimited by kube_client, never passed here. */
void token_bucket_init(struct token_bucket *b, double qps, unsigned burst, usec_t now);

/* Takes one token at time now; returns how long the caller must wait before using it (0 if a
 * token was available). */
usec_t token_bucket_reserve(struct token_bucket *b, usec_t now);
