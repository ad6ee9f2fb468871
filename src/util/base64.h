/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

/*
 * Standard base64 (RFC 4648 alphabet, '=' padding), as Go's base64.StdEncoding. Used for the
 * registry's and the catalog's page tokens and for MetadataStructValue bodies.
 */

#include <stddef.h>

#include "util/macro.h"

/* Returns an owned NUL-terminated string, NULL on OOM. */
char *base64_encode(const void *data, size_t len);

/*
 * Decodes s (padding required, no whitespace) into an owned buffer with a NUL after the last
 * byte; *ret_len (may be NULL) gets the decoded length. -EINVAL on bad input, -ENOMEM. *ret is
 * set only on success. The output may contain NUL bytes: callers that need a C string check
 * that strlen() equals *ret_len.
 */
_warn_unused_result_ int base64_decode(const char *s, char **ret, size_t *ret_len);
