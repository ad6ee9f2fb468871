/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

/* Small string helpers. */

#include "util/macro.h"

/*
 * Copies an optional string: *ret = NULL for s == NULL, else an owned copy. Returns 0 or
 * -ENOMEM (then *ret is NULL).
 */
_warn_unused_result_ int strdup_opt(const char *s, char **ret);

/* The value of one hexadecimal digit (either case), or -EINVAL. */
int unhexchar(char c);
