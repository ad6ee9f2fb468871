/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

/*
 * multipart/form-data (RFC 7578) as POST /sources/preview receives it: a pure parser over the
 * request body, no allocation. At most 64 parts are looked at; a boundary is 1 to 200 bytes.
 */

#include <stddef.h>

#include "util/macro.h"

/*
 * Finds the part named name in a multipart/form-data body (content_type carries the boundary).
 * Returns 0 with a borrowed view into body, -ENOENT when absent, -EINVAL when malformed.
 */
_warn_unused_result_ int catalog_multipart_find(const char *content_type, const char *body,
                                                size_t len, const char *name, const char **ret_data,
                                                size_t *ret_len);
