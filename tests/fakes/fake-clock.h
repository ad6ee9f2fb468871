/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

/* A manual clock for tests: time only moves when the test calls fake_clock_advance(). */

#include <stdatomic.h>

#include "util/time-util.h"

struct fake_clock {
        _Atomic usec_t now;
        struct clock clock; /* pass &fc.clock wherever a const struct clock * is expected */
};

static inline usec_t fake_clock_now(void *userdata)
{
        struct fake_clock *fc = userdata;
        return atomic_load(&fc->now);
}

static const struct clock_ops fake_clock_ops = { .now = fake_clock_now };

static inline void fake_clock_init(struct fake_clock *fc, usec_t start)
{
        atomic_store(&fc->now, start);
        fc->clock = (struct clock){ .ops = &fake_clock_ops, .userdata = fc };
}

static inline void fake_clock_advance(struct fake_clock *fc, usec_t d)
{
        atomic_fetch_add(&fc->now, d);
}
