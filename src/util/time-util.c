/* SPDX-License-Identifier: Apache-2.0 */
#include "util/time-util.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

static usec_t clock_usec(clockid_t id)
{
        struct timespec ts;

        (void)clock_gettime(id, &ts);
        return (usec_t)ts.tv_sec * USEC_PER_SEC + (usec_t)ts.tv_nsec / NSEC_PER_USEC;
}

usec_t now_monotonic(void)
{
        return clock_usec(CLOCK_MONOTONIC);
}

usec_t now_realtime(void)
{
        return clock_usec(CLOCK_REALTIME);
}

static usec_t monotonic_now(void *userdata)
{
        (void)userdata;
        return now_monotonic();
}

static const struct clock_ops monotonic_ops = { .now = monotonic_now };
const struct clock clock_monotonic = { .ops = &monotonic_ops, .userdata = NULL };

static usec_t realtime_now(void *userdata)
{
        (void)userdata;
        return now_realtime();
}

static const struct clock_ops realtime_ops = { .now = realtime_now };
const struct clock clock_realtime = { .ops = &realtime_ops, .userdata = NULL };

struct timespec usec_to_timespec(usec_t u)
{
        return (struct timespec){ .tv_sec = (time_t)(u / USEC_PER_SEC),
                                  .tv_nsec = (long)((u % USEC_PER_SEC) * NSEC_PER_USEC) };
}

/* RFC 3339 in UTC, with microseconds when micro. */
static int format_utc(usec_t t, bool micro, char *buf, size_t len)
{
        time_t sec = (time_t)(t / USEC_PER_SEC);
        struct tm tm;
        int n;

        if (!gmtime_r(&sec, &tm))
                return -EINVAL;
        if (micro)
                n = snprintf(buf, len, "%04d-%02d-%02dT%02d:%02d:%02d.%06uZ", tm.tm_year + 1900,
                             tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
                             (unsigned)(t % USEC_PER_SEC));
        else
                n = snprintf(buf, len, "%04d-%02d-%02dT%02d:%02d:%02dZ", tm.tm_year + 1900,
                             tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec);
        if (n < 0 || (size_t)n >= len)
                return -ENOBUFS;
        return 0;
}

int format_rfc3339(usec_t t, char *buf, size_t len)
{
        return format_utc(t, false, buf, len);
}

int format_micro_time(usec_t t, char *buf, size_t len)
{
        return format_utc(t, true, buf, len);
}

/* Two ASCII digits (the hh and mm of a UTC offset). */
static int two_digits(const char *p, int *ret)
{
        if (p[0] < '0' || p[0] > '9' || p[1] < '0' || p[1] > '9')
                return -EINVAL;
        *ret = (p[0] - '0') * 10 + (p[1] - '0');
        return 0;
}

int parse_rfc3339(const char *s, usec_t *ret)
{
        struct tm tm = { 0 };
        const char *p;
        usec_t frac = 0, scale = USEC_PER_SEC;
        long offset = 0;
        time_t t;

        if (!s)
                return -EINVAL;
        p = strptime(s, "%Y-%m-%dT%H:%M:%S", &tm);
        if (!p)
                return -EINVAL;
        if (*p == '.') {
                p++;
                if (*p < '0' || *p > '9')
                        return -EINVAL;
                for (; *p >= '0' && *p <= '9'; p++)
                        if (scale > 1) {
                                scale /= 10;
                                frac += (usec_t)(*p - '0') * scale;
                        }
        }
        if (*p == 'Z' || *p == 'z')
                p++;
        else if (*p == '+' || *p == '-') {
                int hh, mm;
                if (two_digits(p + 1, &hh) < 0 || p[3] != ':' || two_digits(p + 4, &mm) < 0)
                        return -EINVAL;
                offset = (hh * 60L + mm) * 60L * (*p == '-' ? -1 : 1);
                p += 6;
        } else
                return -EINVAL;
        if (*p != '\0')
                return -EINVAL;
        t = timegm(&tm);
        if (t == (time_t)-1 || t - offset < 0)
                return -ERANGE;
        *ret = (usec_t)(t - offset) * USEC_PER_SEC + frac;
        return 0;
}
