/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

/*
 * OAuth 2.0 pieces for storage credentials (pure): a Google service-account key file, the
 * RS256 JWT's signing input (RFC 7519, Google's "JWT bearer" grant, RFC 7523), the token
 * endpoint's answer and its error document. Signing the JWT is the shell's (agent/gcs-auth.h:
 * gnutls's private-key API).
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/macro.h"

#define GCS_READ_SCOPE   "https://www.googleapis.com/auth/devstorage.read_only"
#define GCS_WRITE_SCOPE  "https://www.googleapis.com/auth/devstorage.read_write"
#define GOOGLE_TOKEN_URI "https://oauth2.googleapis.com/token"
#define JWT_BEARER_GRANT "urn:ietf:params:oauth:grant-type:jwt-bearer"
#define JWT_LIFETIME_SEC 3600

/* The fields of a service-account key file ("type": "service_account") the exchange needs. */
struct sa_key {
        char *client_email;   /* owned: the JWT's iss */
        char *private_key;    /* owned: PEM (PKCS#8) */
        char *private_key_id; /* owned, may be NULL: the JWT header's kid */
        char *token_uri; /* owned: the JWT's aud and where it is exchanged (default Google's) */
};

void sa_key_release(struct sa_key *k);

/* Returns 0, -EBADMSG with the reason in @reterr (not JSON, another "type", a field missing,
 * a token_uri that is not http(s)), -ENOMEM. */
_warn_unused_result_ int sa_key_parse(const char *json, size_t len, struct sa_key *ret,
                                      char *reterr, size_t len_err);

/* base64url(header) "." base64url(claims) of the key's JWT for @scope, issued at @iat. Returns
 * 0 with an owned string, -ENOMEM. */
_warn_unused_result_ int jwt_signing_input(const struct sa_key *k, const char *scope, int64_t iat,
                                           char **ret);

/* base64url without padding of @n bytes. NULL on OOM. */
char *base64url_encode(const void *data, size_t n);

/* The token endpoint's answer: "access_token" (owned) and "expires_in" seconds (3600 when not
 * given). Returns 0, -EBADMSG, -ENOMEM. */
_warn_unused_result_ int oauth_token_parse(const char *json, size_t len, char **ret_token,
                                           uint64_t *ret_expires_in);

/* "error: error_description" of an OAuth error answer (RFC 6749 5.2); false when @json is not
 * one with a description. */
bool oauth_error_parse(const char *json, size_t len, char *buf, size_t buf_len);
