/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

/*
 * Free space on the model volume (statvfs), and the one message a full volume gives:
 * "not enough space in DIR: 160.0 MiB needed, 95.2 MiB available".
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/macro.h"

/* Bytes an unprivileged writer may still use in the file system of @dir (f_bavail). */
_warn_unused_result_ int space_available(const char *dir, uint64_t *ret);

/* 0 when @need bytes fit in @dir's file system; else -ENOSPC and the message in @reterr. A
 * failing statvfs() is not an answer: 0 (the writes themselves are checked). */
_warn_unused_result_ int space_check(const char *dir, uint64_t need, char *reterr, size_t len);

/* For a write that failed with ENOSPC/EDQUOT after @written bytes of @expected (0: unknown):
 * the message in @reterr; returns -ENOSPC. */
int space_exhausted(const char *dir, uint64_t written, uint64_t expected, char *reterr, size_t len);

static inline bool errno_is_space(int r)
{
        return r == -ENOSPC || r == -EDQUOT;
}
