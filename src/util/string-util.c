/* SPDX-License-Identifier: Apache-2.0 */
#include "util/string-util.h"

#include <errno.h>
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
