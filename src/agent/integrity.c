/* SPDX-License-Identifier: Apache-2.0 */
#include "agent/integrity.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "util/base64.h"
#include "util/string-util.h"

static bool is_blank(char c)
{
        return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

/* @s/@n with blanks cut at both ends. */
static void trim(const char **s, size_t *n)
{
        while (*n > 0 && is_blank(**s)) {
                (*s)++;
                (*n)--;
        }
        while (*n > 0 && is_blank((*s)[*n - 1]))
                (*n)--;
}

bool md5_from_etag(const char *s, size_t n, uint8_t ret[MD5_SIZE])
{
        uint8_t md5[MD5_SIZE];

        trim(&s, &n);
        if (n >= 2 && s[0] == '"' && s[n - 1] == '"') {
                s++;
                n -= 2;
        }
        if (n != 2 * MD5_SIZE)
                return false;
        for (size_t i = 0; i < MD5_SIZE; i++) {
                int hi = unhexchar(s[2 * i]), lo = unhexchar(s[2 * i + 1]);
                if (hi < 0 || lo < 0)
                        return false;
                md5[i] = (uint8_t)(hi << 4 | lo);
        }
        memcpy(ret, md5, MD5_SIZE);
        return true;
}

bool md5_from_base64(const char *s, size_t n, uint8_t ret[MD5_SIZE])
{
        char text[25]; /* 16 bytes are 22 characters and "==" */
        AUTOFREE char *raw = NULL, *again = NULL;
        size_t len = 0;

        trim(&s, &n);
        while (n > 0 && s[n - 1] == '=')
                n--;
        if (n != 22)
                return false;
        /* util's decoder wants the standard alphabet and the padding: the URL-safe one maps */
        memcpy(text, s, n);
        for (size_t i = 0; i < n; i++) {
                if (text[i] == '-')
                        text[i] = '+';
                else if (text[i] == '_')
                        text[i] = '/';
        }
        memcpy(text + 22, "==", 3);
        if (base64_decode(text, &raw, &len) < 0 || len != MD5_SIZE)
                return false;
        /* canonical only: stray low bits in the last character would name the same sum twice */
        again = base64_encode(raw, MD5_SIZE);
        if (!again || strcmp(again, text) != 0)
                return false;
        memcpy(ret, raw, MD5_SIZE);
        return true;
}

bool md5_from_goog_hash(const char *s, size_t n, uint8_t ret[MD5_SIZE])
{
        const char *end = s + n;

        while (s < end) {
                const char *comma = memchr(s, ',', (size_t)(end - s));
                const char *part_end = comma ? comma : end;
                const char *p = s;
                size_t len;

                while (p < part_end && is_blank(*p))
                        p++;
                len = (size_t)(part_end - p);
                if (len > 4 && strncasecmp(p, "md5=", 4) == 0)
                        return md5_from_base64(p + 4, len - 4, ret);
                s = comma ? comma + 1 : end;
        }
        return false;
}

void md5_to_hex(const uint8_t md5[MD5_SIZE], char ret[MD5_HEX_SIZE])
{
        static const char hex[] = "0123456789abcdef";

        for (size_t i = 0; i < MD5_SIZE; i++) {
                ret[2 * i] = hex[md5[i] >> 4];
                ret[2 * i + 1] = hex[md5[i] & 15];
        }
        ret[2 * MD5_SIZE] = 0;
}

int size_parse(const char *s, uint64_t *ret)
{
        static const struct {
                const char *suffix;
                uint64_t mult;
        } units[] = {
                { "", 1 },
                { "k", 1000ULL },
                { "M", 1000ULL * 1000 },
                { "G", 1000ULL * 1000 * 1000 },
                { "T", 1000ULL * 1000 * 1000 * 1000 },
                { "P", 1000ULL * 1000 * 1000 * 1000 * 1000 },
                { "Ki", 1ULL << 10 },
                { "Mi", 1ULL << 20 },
                { "Gi", 1ULL << 30 },
                { "Ti", 1ULL << 40 },
                { "Pi", 1ULL << 50 },
        };
        uint64_t v = 0;
        const char *p = s;

        if (!s || *s < '0' || *s > '9')
                return -EINVAL;
        for (; *p >= '0' && *p <= '9'; p++) {
                if (v > (UINT64_MAX - 9) / 10)
                        return -ERANGE;
                v = v * 10 + (uint64_t)(*p - '0');
        }
        for (size_t i = 0; i < ELEMENTSOF(units); i++) {
                if (!streq(p, units[i].suffix))
                        continue;
                if (v > UINT64_MAX / units[i].mult)
                        return -ERANGE;
                *ret = v * units[i].mult;
                return 0;
        }
        return -EINVAL;
}

const char *size_to_string(uint64_t n, char buf[SIZE_STRING_MAX])
{
        static const char *const units[] = { "KiB", "MiB", "GiB", "TiB", "PiB", "EiB" };
        double v = (double)n;
        size_t u = 0;

        if (n < 1024) {
                (void)snprintf(buf, SIZE_STRING_MAX, "%llu B", (unsigned long long)n);
                return buf;
        }
        v /= 1024;
        while (v >= 1024 && u + 1 < ELEMENTSOF(units)) {
                v /= 1024;
                u++;
        }
        (void)snprintf(buf, SIZE_STRING_MAX, "%.1f %s", v, units[u]);
        return buf;
}
