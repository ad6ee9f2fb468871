/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

/* RS256 signatures of JWTs (RFC 7518 3.3: RSASSA-PKCS1-v1_5 with SHA-256) with a PEM private key,
 * through gnutls's private-key API. No I/O; in the shell because gnutls/abstract.h is. */

#include <stddef.h>

#include "util/macro.h"

/* "<@input>.<base64url signature>" into *ret (owned). Returns 0, -EINVAL (@pem is not an RSA
 * private key: the reason in @reterr), -EIO (signing failed), -ENOMEM. */
_warn_unused_result_ int jwt_sign_rs256(const char *pem, const char *input, char **ret,
                                        char *reterr, size_t len);
