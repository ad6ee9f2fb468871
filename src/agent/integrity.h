/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

/*
 * What the agent reads to decide that a download is whole (pure, no I/O): the MD5 a storage
 * service states for an object (an S3 ETag of a single-part object, a base64 Content-MD5 or GCS
 * md5Hash, GCS's x-goog-hash header), sizes given on the command line ("64Gi"), and sizes for
 * messages ("95.2 MiB").
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/macro.h"

#define MD5_SIZE        ((size_t)16)
#define MD5_HEX_SIZE    (2 * MD5_SIZE + 1)
#define SIZE_STRING_MAX 32

/*
 * An S3 ETag ("\"<32 hex digits>\"", quotes optional, a W/ prefix refused) is the MD5 of the body
 * for single-part objects; a multipart ETag ("<hex>-<parts>") or anything else returns false.
 * (SSE-KMS and SSE-C objects have ETags that are not MD5s: the caller skips those.)
 */
bool md5_from_etag(const char *s, size_t n, uint8_t ret[MD5_SIZE]);

/* The base64 of 16 bytes (Content-MD5, GCS md5Hash), surrounding blanks ignored; false otherwise. */
bool md5_from_base64(const char *s, size_t n, uint8_t ret[MD5_SIZE]);

/* GCS's "x-goog-hash: crc32c=...,md5=..." value (one or both parts); false without an md5 part. */
bool md5_from_goog_hash(const char *s, size_t n, uint8_t ret[MD5_SIZE]);

void md5_to_hex(const uint8_t md5[MD5_SIZE], char ret[MD5_HEX_SIZE]);

/*
 * A byte count: digits with an optional suffix Ki Mi Gi Ti Pi (powers of 1024) or k M G T P
 * (powers of 1000), as Kubernetes quantities spell them. Returns 0, -EINVAL, -ERANGE.
 */
_warn_unused_result_ int size_parse(const char *s, uint64_t *ret);

/* "812 B", "95.2 MiB", "1.5 GiB" into @buf (SIZE_STRING_MAX); returns @buf. */
const char *size_to_string(uint64_t n, char buf[SIZE_STRING_MAX]);
