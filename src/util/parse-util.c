/* SPDX-License-Identifier: Apache-2.0 */
#include "util/parse-util.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

int safe_atou64(const char *s, uint64_t *ret)
{
        unsigned long long v;
        char *end = NULL;

        if (!s || !isdigit((unsigned char)s[0]))
                return -EINVAL;
        errno = 0;
        v = strtoull(s, &end, 10);
        if (errno == ERANGE)
                return -ERANGE;
        if (errno != 0 || !end || *end != '\0')
                return -EINVAL;
        *ret = (uint64_t)v;
        return 0;
}

int safe_atoi64(const char *s, int64_t *ret)
{
        long long v;
        char *end = NULL;

        if (!s || !(isdigit((unsigned char)s[0]) || (s[0] == '-' && isdigit((unsigned char)s[1]))))
                return -EINVAL;
        errno = 0;
        v = strtoll(s, &end, 10);
        if (errno == ERANGE)
                return -ERANGE;
        if (errno != 0 || !end || *end != '\0')
                return -EINVAL;
        *ret = (int64_t)v;
        return 0;
}

/* safe_atou64() bounded by max: -ERANGE above it. */
static int atou64_max(const char *s, uint64_t max, uint64_t *ret)
{
        int r = safe_atou64(s, ret);

        if (r < 0)
                return r;
        return *ret > max ? -ERANGE : 0;
}

int safe_atou32(const char *s, uint32_t *ret)
{
        uint64_t v;
        int r;

        r = atou64_max(s, UINT32_MAX, &v);
        if (r < 0)
                return r;
        *ret = (uint32_t)v;
        return 0;
}

int safe_atoi32(const char *s, int32_t *ret)
{
        int64_t v;
        int r;

        r = safe_atoi64(s, &v);
        if (r < 0)
                return r;
        if (v > INT32_MAX || v < INT32_MIN)
                return -ERANGE;
        *ret = (int32_t)v;
        return 0;
}

int safe_atou16(const char *s, uint16_t *ret)
{
        uint64_t v;
        int r;

        r = atou64_max(s, UINT16_MAX, &v);
        if (r < 0)
                return r;
        *ret = (uint16_t)v;
        return 0;
}

int parse_boolean(const char *s, bool *ret)
{
        static const char *const yes[] = { "1", "true", "yes", "y", "on" };
        static const char *const no[] = { "0", "false", "no", "n", "off" };

        if (!s)
                return -EINVAL;
        for (size_t i = 0; i < ELEMENTSOF(yes); i++)
                if (strcasecmp(s, yes[i]) == 0) {
                        *ret = true;
                        return 0;
                }
        for (size_t i = 0; i < ELEMENTSOF(no); i++)
                if (strcasecmp(s, no[i]) == 0) {
                        *ret = false;
                        return 0;
                }
        return -EINVAL;
}

int parse_duration_usec(const char *s, uint64_t *ret)
{
        static const struct {
                const char *suffix;
                uint64_t usec;
        } units[] = {
                { "us", 1ULL },       { "ms", 1000ULL },      { "s", 1000000ULL },
                { "m", 60000000ULL }, { "h", 3600000000ULL }, { "", 1000000ULL },
        };
        char digits[32];
        size_t n = 0;
        uint64_t v, out;
        int r;

        if (!s)
                return -EINVAL;
        while (isdigit((unsigned char)s[n]) && n < sizeof(digits) - 1)
                n++;
        if (n == 0 || n >= sizeof(digits) - 1)
                return -EINVAL;
        memcpy(digits, s, n);
        digits[n] = '\0';
        r = safe_atou64(digits, &v);
        if (r < 0)
                return r;
        for (size_t i = 0; i < ELEMENTSOF(units); i++)
                if (streq(s + n, units[i].suffix)) {
                        if (__builtin_mul_overflow(v, units[i].usec, &out))
                                return -ERANGE;
                        *ret = out;
                        return 0;
                }
        return -EINVAL;
}

int parse_go_duration_usec(const char *s, uint64_t *ret)
{
        static const struct {
                const char *unit;
                double usec;
        } units[] = {
                { "ns", 1e-3 }, { "us", 1 },  { "\xc2\xb5s", 1 }, { "\xce\xbcs", 1 },
                { "ms", 1e3 },  { "s", 1e6 }, { "m", 60e6 },      { "h", 3600e6 },
        };
        double total = 0;

        if (!s || !*s)
                return -EINVAL;
        if (streq(s, "0")) {
                *ret = 0;
                return 0;
        }
        while (*s) {
                char *end;
                double v;
                size_t best = 0, best_len = 0;

                if (!isdigit((unsigned char)*s) && *s != '.')
                        return -EINVAL;
                errno = 0;
                v = strtod(s, &end);
                if (errno != 0 || end == s)
                        return -EINVAL;
                s = end;
                for (size_t i = 0; i < ELEMENTSOF(units); i++) {
                        size_t l = strlen(units[i].unit);

                        if (strneq(s, units[i].unit, l) && l > best_len) {
                                best = i;
                                best_len = l;
                        }
                }
                if (best_len == 0)
                        return -EINVAL;
                total += v * units[best].usec;
                s += best_len;
        }
        if (!(total < 1.8e19))
                return -EINVAL;
        *ret = (uint64_t)total;
        return 0;
}
