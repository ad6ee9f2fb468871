/* SPDX-License-Identifier: Apache-2.0 */
#include "agent/reflector.h"

#include <errno.h>
#include <string.h>

#include "agent/plan.h"

void reflector_init(struct reflector *rf, usec_t backoff_initial, usec_t backoff_max)
{
        *rf = (struct reflector){
                .backoff_initial = backoff_initial ? backoff_initial : REFLECTOR_BACKOFF_INITIAL,
                .backoff_max = backoff_max ? backoff_max : REFLECTOR_BACKOFF_MAX,
        };
}

struct reflector_step reflector_start(struct reflector *rf)
{
        rf->rv[0] = 0;
        return (struct reflector_step){ .op = REFLECTOR_LIST };
}

/* One more failure at @now: its backoff step. */
static usec_t failure_delay(struct reflector *rf, usec_t now, double random01)
{
        if (rf->last_failure != 0 && now > rf->last_failure &&
            now - rf->last_failure > REFLECTOR_BACKOFF_RESET)
                rf->failures = 0;
        rf->last_failure = now ? now : 1;
        rf->failures++;
        return backoff_delay(rf->failures, rf->backoff_initial, rf->backoff_max, random01);
}

static int set_rv(struct reflector *rf, const char *rv)
{
        size_t n = rv ? strlen(rv) : 0;

        if (n == 0 || n >= sizeof(rf->rv)) {
                rf->rv[0] = 0;
                return -E2BIG;
        }
        memcpy(rf->rv, rv, n + 1);
        return 0;
}

struct reflector_step reflector_listed(struct reflector *rf, int r, const char *rv, usec_t now,
                                       double random01)
{
        if (r >= 0 && set_rv(rf, rv) >= 0) {
                rf->observed = false;
                return (struct reflector_step){ .op = REFLECTOR_WATCH };
        }
        rf->rv[0] = 0;
        return (struct reflector_step){
                .op = REFLECTOR_LIST,
                .delay = failure_delay(rf, now, random01),
                .failed = true,
        };
}

int reflector_observed(struct reflector *rf, const char *rv)
{
        rf->observed = true;
        rf->expired_in_a_row = 0;
        return set_rv(rf, rv);
}

struct reflector_step reflector_watch_ended(struct reflector *rf, int r, usec_t ran, usec_t now,
                                            double random01)
{
        bool observed = rf->observed, established;

        rf->observed = false;
        if (observed)
                rf->failures = 0;
        if (r == -ESTALE) {
                rf->rv[0] = 0;
                if (rf->expired_in_a_row++ == 0)
                        return (struct reflector_step){ .op = REFLECTOR_LIST, .expired = true };
                return (struct reflector_step){
                        .op = REFLECTOR_LIST,
                        .delay = failure_delay(rf, now, random01),
                        .expired = true,
                };
        }
        rf->expired_in_a_row = 0;
        established = observed || ran >= REFLECTOR_WATCH_MIN;
        if (established && (r >= 0 || r == -EIO)) {
                /* It ran its course, or its stream was cut: go on from the last resourceVersion
                 * (it moves only with decoded events, so nothing is lost). An rv forgotten by
                 * reflector_observed() (too long) means a LIST. */
                if (r >= 0)
                        rf->failures = 0;
                return (struct reflector_step){ .op = rf->rv[0] ? REFLECTOR_WATCH
                                                                : REFLECTOR_LIST };
        }
        if (r >= 0)
                r = -EPROTO; /* ended at once with nothing observed */
        if (r != -ECONNREFUSED && r != -EAGAIN)
                rf->rv[0] = 0;
        return (struct reflector_step){
                .op = rf->rv[0] ? REFLECTOR_WATCH : REFLECTOR_LIST,
                .delay = failure_delay(rf, now, random01),
                .failed = true,
        };
}
