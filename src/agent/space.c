/* SPDX-License-Identifier: Apache-2.0 */
#include "agent/space.h"

#include <errno.h>
#include <stdio.h>
#include <sys/statvfs.h>

#include "agent/integrity.h"

int space_available(const char *dir, uint64_t *ret)
{
        struct statvfs sv;

        if (statvfs(dir, &sv) < 0)
                return negative_errno();
        *ret = (uint64_t)sv.f_bavail * (uint64_t)sv.f_frsize;
        return 0;
}

int space_check(const char *dir, uint64_t need, char *reterr, size_t len)
{
        char a[SIZE_STRING_MAX], b[SIZE_STRING_MAX];
        uint64_t avail = 0;

        if (space_available(dir, &avail) < 0 || need <= avail)
                return 0;
        (void)snprintf(reterr, len, "not enough space in %s: %s needed, %s available", dir,
                       size_to_string(need, a), size_to_string(avail, b));
        return -ENOSPC;
}

int space_exhausted(const char *dir, uint64_t written, uint64_t expected, char *reterr, size_t len)
{
        char a[SIZE_STRING_MAX], b[SIZE_STRING_MAX];
        uint64_t avail = 0;

        /* what was free for this copy: what is left plus what it took */
        if (space_available(dir, &avail) < 0)
                avail = 0; /* only for the message */
        (void)snprintf(reterr, len, "not enough space in %s: %s%s needed, %s available", dir,
                       expected > written ? "" : "more than ",
                       size_to_string(expected > written ? expected : written, a),
                       size_to_string(avail + written, b));
        return -ENOSPC;
}
