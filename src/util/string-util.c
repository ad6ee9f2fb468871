/* SPDX-License-Identifier: Apache-2.0 */
#include "util/string-util.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

int strdup_opt(const char *s, char **ret)
{
        *ret = NULL;
        if (!s)
                return 0;
        *ret = strdup(s);
        return *ret ? 0 : -ENOMEM;
}

int unhexchar(char c)
{
        if (c >= '0' && c <= '9')
                return c - '0';
        if (c >= 'a' && c <= 'f')
                return c - 'a' + 10;
        if (c >= 'A' && c <= 'F')
                return c - 'A' + 10;
        return -EINVAL;
}

size_t sorted_find(const void *base, size_t n, size_t size, const char *name, bool *ret_found)
{
        size_t lo = 0, hi = n;

        *ret_found = false;
        while (lo < hi) {
                size_t mid = lo + (hi - lo) / 2;
                int c = strcmp(*(const char *const *)((const char *)base + mid * size), name);

                if (c == 0) {
                        *ret_found = true;
                        return mid;
                }
                if (c < 0)
                        lo = mid + 1;
                else
                        hi = mid;
        }
        return lo;
}

static int decode(const char *s, size_t len, bool plus_is_space, char **ret)
{
        AUTOFREE char *out = malloc(len + 1);
        size_t j = 0;

        if (!out)
                return -ENOMEM;
        for (size_t i = 0; i < len; i++) {
                if (s[i] != '%') {
                        out[j++] = s[i];
                        if (plus_is_space && s[i] == '+')
                                out[j - 1] = ' ';
                        continue;
                }
                if (i + 2 >= len)
                        return -EINVAL;
                int hi = unhexchar(s[i + 1]), lo = unhexchar(s[i + 2]);
                if (hi < 0 || lo < 0 || (hi == 0 && lo == 0))
                        return -EINVAL;
                out[j++] = (char)(hi * 16 + lo);
                i += 2;
        }
        out[j] = '\0';
        *ret = TAKE_PTR(out);
        return 0;
}

int percent_decode(const char *s, size_t len, char **ret)
{
        return decode(s, len, false, ret);
}

int percent_decode_form(const char *s, size_t len, char **ret)
{
        return decode(s, len, true, ret);
}
