/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

/*
 * Time in microseconds, and the clock port: everything that waits or measures time takes a
 * struct clock so that tests can drive it without sleeping (rate limiters, backoff, requeues).
 */

#include <stdint.h>
#include <time.h>

#include "util/macro.h"

typedef uint64_t usec_t;

#define USEC_INFINITY   ((usec_t)UINT64_MAX)
#define USEC_PER_MSEC   ((usec_t)1000ULL)
#define USEC_PER_SEC    ((usec_t)1000000ULL)
#define USEC_PER_MINUTE (60ULL * USEC_PER_SEC)
#define NSEC_PER_USEC   ((uint64_t)1000ULL)

/* CLOCK_MONOTONIC / CLOCK_REALTIME in usec. */
usec_t now_monotonic(void);
usec_t now_realtime(void);

/* Formats a CLOCK_REALTIME usec value as RFC 3339 with second precision ("2026-01-02T03:04:05Z"). */
_warn_unused_result_ int format_rfc3339(usec_t t, char *buf, size_t len);
/* Formats a CLOCK_REALTIME usec value as a Kubernetes MicroTime ("2026-01-02T03:04:05.123456Z"). */
_warn_unused_result_ int format_micro_time(usec_t t, char *buf, size_t len);
/* Parses "YYYY-MM-DDTHH:MM:SS[.frac](Z|±hh:mm)". */
_warn_unused_result_ int parse_rfc3339(const char *s, usec_t *ret);

struct clock_ops {
        usec_t (*now)(void *userdata);
};

struct clock {
        const struct clock_ops *ops;
        void *userdata;
};

/* The real monotonic clock. */
extern const struct clock clock_monotonic;
/* The real wall clock (CLOCK_REALTIME): for comparing with timestamps of API objects. */
extern const struct clock clock_realtime;

static inline usec_t clock_now(const struct clock *c)
{
        return c->ops->now(c->userdata);
}

/* Converts an absolute CLOCK_REALTIME usec deadline to a timespec for pthread_cond_timedwait. */
struct timespec usec_to_timespec(usec_t u);
