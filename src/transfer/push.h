/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

/*
 * An OCI distribution-spec client over libcurl (docs/transfer.md): one repository of one
 * registry; blobs checked (HEAD), mounted from another repository of the registry, uploaded
 * (POST then a monolithic PUT with ?digest=), fetched into a file (GET, digest and size
 * checked); manifests read and written.
 *
 * Authentication as registries ask for it: the first request goes without; a 401 with a
 * WWW-Authenticate challenge (transfer/oci.h) is answered with Basic credentials, or with a
 * token from the Bearer realm (GET realm?service=&scope=, with the credentials as Basic when
 * there are any, anonymous otherwise), which later requests carry. A second 401 is a refusal.
 *
 * TLS is verified unless the caller turns it off; then the registry is tried over https without
 * verification and, when it does not speak TLS, over plain http (as skopeo's --tls-verify=false
 * does). Transport errors, 429 and 5xx are retried (4 attempts, backoff from 500 ms).
 *
 * Errors: negative errno with the reason in a struct error_detail (.status: the registry's
 * answer): -EACCES (401/403; the message names the registry and repository and quotes the
 * registry's error), -ENOENT (404), -ECONNREFUSED, -EHOSTUNREACH, -ETIMEDOUT (unreachable),
 * -EIO (TLS: "TLS certificate verification failed" when the certificate was not trusted; other
 * statuses), -EBADMSG (an answer over its limit, a digest mismatch), -ENOMEM.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/error-detail.h"
#include "util/macro.h"

struct buf;
struct oci_client;

struct oci_client_config {
        const char *host;       /* "quay.io", "127.0.0.1:5000" (the API host); copied */
        const char *repository; /* "org/model"; copied */
        const char *username;   /* NULL: anonymous; copied */
        const char *password;   /* copied */
        bool tls_verify;
        bool pull_only;   /* a token scope of pull (a base image), else pull,push */
        long timeout_sec; /* a stall: less than 1 byte/s for this long; 0 = 30 */
};

_warn_unused_result_ int oci_client_new(const struct oci_client_config *cfg,
                                        struct oci_client **ret);
struct oci_client *oci_client_free(struct oci_client *c);
DEFINE_CLEANUP_FUNC(struct oci_client *, oci_client_free)

/* GET /v2/: the scheme (https, or http when TLS verification is off and the registry has no
 * TLS) and the registry's challenge. */
_warn_unused_result_ int oci_client_ping(struct oci_client *c, struct error_detail *e);

/* HEAD /v2/<repo>/blobs/<digest>: *ret true when the registry has it. */
_warn_unused_result_ int oci_blob_exists(struct oci_client *c, const char *digest, bool *ret,
                                         struct error_detail *e);

/* POST /v2/<repo>/blobs/uploads/?mount=<digest>&from=<repo>: *ret true when mounted. */
_warn_unused_result_ int oci_blob_mount(struct oci_client *c, const char *digest, const char *from,
                                        bool *ret, struct error_detail *e);

/* Uploads @size bytes of the file @fd (read from offset 0) as the blob @digest. */
_warn_unused_result_ int oci_blob_upload(struct oci_client *c, int fd, uint64_t size,
                                         const char *digest, struct error_detail *e);

/* GET the blob @digest into the file @fd (truncated first), at most @size bytes, its SHA-256
 * checked (-EBADMSG). */
_warn_unused_result_ int oci_blob_fetch(struct oci_client *c, const char *digest, uint64_t size,
                                        int fd, struct error_detail *e);

/* GET /v2/<repo>/manifests/<reference> (a tag or digest) into @body (its limit: at most
 * OCI_MANIFEST_MAX), the Content-Type into @ret_type (size 128). */
_warn_unused_result_ int oci_manifest_get(struct oci_client *c, const char *reference,
                                          struct buf *body, char ret_type[128],
                                          struct error_detail *e);

/* PUT /v2/<repo>/manifests/<reference> with @body of @media_type. */
_warn_unused_result_ int oci_manifest_put(struct oci_client *c, const char *reference,
                                          const char *media_type, const char *body, size_t len,
                                          struct error_detail *e);

/* The sha256 digest ("sha256:<hex>") of @len bytes at @data. */
void oci_sha256_digest(const void *data, size_t len, char ret[72]);
