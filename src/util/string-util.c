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
