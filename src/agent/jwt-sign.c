/* SPDX-License-Identifier: Apache-2.0 */
#include "agent/jwt-sign.h"

#include <errno.h>
#include <gnutls/abstract.h>
#include <gnutls/gnutls.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent/oauth.h"

static void privkey_freep(gnutls_privkey_t *k)
{
        if (*k)
                gnutls_privkey_deinit(*k);
}

int jwt_sign_rs256(const char *pem, const char *input, char **ret, char *reterr, size_t len)
{
        CLEANUP(privkey_freep) gnutls_privkey_t key = NULL;
        gnutls_datum_t data = { .data = (unsigned char *)(uintptr_t)pem,
                                .size = (unsigned)strlen(pem) };
        gnutls_datum_t msg = { .data = (unsigned char *)(uintptr_t)input,
                               .size = (unsigned)strlen(input) };
        gnutls_datum_t sig = { 0 };
        AUTOFREE char *b64 = NULL;
        int r;

        if (gnutls_privkey_init(&key) < 0)
                return -ENOMEM;
        r = gnutls_privkey_import_x509_raw(key, &data, GNUTLS_X509_FMT_PEM, NULL, 0);
        if (r < 0) {
                (void)snprintf(reterr, len, "the private_key is not a PEM private key: %s",
                               gnutls_strerror(r));
                return -EINVAL;
        }
        if (gnutls_privkey_get_pk_algorithm(key, NULL) != GNUTLS_PK_RSA) {
                (void)snprintf(reterr, len, "the private_key is not an RSA key (RS256 needs one)");
                return -EINVAL;
        }
        r = gnutls_privkey_sign_data2(key, GNUTLS_SIGN_RSA_SHA256, 0, &msg, &sig);
        if (r < 0) {
                (void)snprintf(reterr, len, "signing the JWT: %s", gnutls_strerror(r));
                return -EIO;
        }
        b64 = base64url_encode(sig.data, sig.size);
        gnutls_free(sig.data);
        if (!b64 || asprintf(ret, "%s.%s", input, b64) < 0)
                return -ENOMEM;
        return 0;
}
