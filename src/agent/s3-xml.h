/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

/*
 * The two S3 XML documents the agent reads, without an XML library (pure): a ListObjectsV2
 * result (Contents/Key, IsTruncated, NextContinuationToken) and an Error (Code, Message). Element
 * text is entity-decoded (&amp; &lt; &gt; &quot; &apos; and numeric references). Anything else in
 * the document is ignored.
 */

#include <stdbool.h>
#include <stddef.h>

#include "util/macro.h"

#define S3_LIST_KEYS_MAX 100000

struct s3_list {
        char **keys; /* owned */
        size_t n_keys;
        bool truncated;
        char *next_token; /* owned, NULL if none */
};

void s3_list_release(struct s3_list *l);
/* Appends @key (taken over; freed on failure). Returns 0, -E2BIG beyond S3_LIST_KEYS_MAX, -ENOMEM. */
_warn_unused_result_ int s3_list_add(struct s3_list *l, char *key);

/* Appends the page in @xml (length @len) to @l. Returns 0, -EBADMSG, -E2BIG, -ENOMEM. */
_warn_unused_result_ int s3_list_parse(const char *xml, size_t len, struct s3_list *l);

/*
 * "Code: Message" of an S3 error document into @buf (size @len); returns false when @xml is not
 * one (then @buf is untouched).
 */
bool s3_error_parse(const char *xml, size_t len, char *buf, size_t buf_len);
