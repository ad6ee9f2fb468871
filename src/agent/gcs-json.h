/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

/*
 * The GCS JSON API documents the agent reads (pure): an objects list page
 * (GET storage/v1/b/<bucket>/o?prefix=: "items"[]."name", "size", "md5Hash", "nextPageToken") and an error
 * ({"error": {"code", "message"}}).
 */

#include <stdbool.h>
#include <stddef.h>

#include "agent/s3-xml.h"
#include "util/macro.h"

/* Appends the page's object names to @l; next_token/truncated from nextPageToken.
 * Returns 0, -EBADMSG (not an objects list), -E2BIG, -ENOMEM. */
_warn_unused_result_ int gcs_list_parse(const char *json, size_t len, struct s3_list *l);

/* "code: message" of a GCS error document into @buf; false when @json is not one. */
bool gcs_error_parse(const char *json, size_t len, char *buf, size_t buf_len);
