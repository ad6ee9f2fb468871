/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

/*
 * The S3 XML documents the agent reads (and Azure's List Blobs page, alike), without an XML library (pure): a ListObjectsV2
 * result (Contents/Key/Size, IsTruncated, NextContinuationToken) and an Error (Code, Message). Element
 * text is entity-decoded (&amp; &lt; &gt; &quot; &apos; and numeric references). Anything else in
 * the document is ignored.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/macro.h"

#define S3_LIST_KEYS_MAX 100000

#define S3_SIZE_UNKNOWN UINT64_MAX

/* keys[i] has sizes[i] bytes (S3_SIZE_UNKNOWN when the listing did not say) and, from GCS,
 * md5s[i], the base64 md5Hash (NULL when not given). */
struct s3_list {
        char **keys; /* owned */
        uint64_t *sizes;
        char **md5s; /* owned, entries may be NULL */
        size_t n_keys;
        bool truncated;
        char *next_token; /* owned, NULL if none */
};

void s3_list_release(struct s3_list *l);
/* Appends @key and @md5 (both taken over; freed on failure; @md5 may be NULL) of @size bytes.
 * Returns 0, -E2BIG beyond S3_LIST_KEYS_MAX, -ENOMEM. */
_warn_unused_result_ int s3_list_add(struct s3_list *l, char *key, uint64_t size, char *md5);

/* Appends the page in @xml (length @len) to @l. Returns 0, -EBADMSG, -E2BIG, -ENOMEM. */
_warn_unused_result_ int s3_list_parse(const char *xml, size_t len, struct s3_list *l);

/* Appends an Azure List Blobs page (EnumerationResults: Blobs/Blob/Name, Properties/
 * Content-Length and Content-MD5 (base64, into md5s), NextMarker: next_token, truncated when not
 * empty) to @l. Returns 0, -EBADMSG, -E2BIG, -ENOMEM. */
_warn_unused_result_ int azure_list_parse(const char *xml, size_t len, struct s3_list *l);

/*
 * "Code: Message" of an S3 error document into @buf (size @len); returns false when @xml is not
 * one (then @buf is untouched).
 */
bool s3_error_parse(const char *xml, size_t len, char *buf, size_t buf_len);
