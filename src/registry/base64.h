/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

/* Standard base64 (RFC 4648 alphabet, '=' padding), as Go's base64.StdEncoding. */

#include <stddef.h>

#include "util/macro.h"

/* Returns an owned NUL-terminated string, NULL on OOM. */
char *base64_encode(const void *data, size_t len);
/* Decodes s (padding required, no whitespace) into an owned NUL-terminated buffer. -EINVAL. */
_warn_unused_result_ int base64_decode(const char *s, char **ret, size_t *ret_len);
