/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

/*
 * The Hugging Face Hub documents the agent reads (pure): a model's info at a revision
 * (GET /api/models/<repo>/revision/<rev>?blobs=true: "sha", the commit, and "siblings"[]
 * ."rfilename" and ."size") and an error ({"error": "message"}).
 */

#include <stdbool.h>
#include <stddef.h>

#include "agent/s3-xml.h"
#include "util/macro.h"

/* Appends the siblings' file names (and sizes, when given) to @l; *ret_sha gets the commit
 * (owned; NULL when the document has none). Returns 0, -EBADMSG, -E2BIG, -ENOMEM. */
_warn_unused_result_ int hf_model_info_parse(const char *json, size_t len, struct s3_list *l,
                                             char **ret_sha);

/* The hub's {"error": "message"} into @buf; false when @json is not one. */
bool hf_error_parse(const char *json, size_t len, char *buf, size_t buf_len);
