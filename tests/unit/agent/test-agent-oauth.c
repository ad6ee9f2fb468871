/* SPDX-License-Identifier: Apache-2.0 */
/* agent/oauth.h: service-account key files, the JWT's signing input, token answers and errors;
 * agent/jwt-sign.h: the RS256 signature (checked against the key's public half with gnutls). */
#include <criterion/criterion.h>
#include <gnutls/abstract.h>
#include <gnutls/gnutls.h>
#include <gnutls/x509.h>
#include <stdlib.h>
#include <string.h>

#include "agent/jwt-sign.h"
#include "agent/oauth.h"
#include "util/base64.h"

static char *b64url_decode(const char *s, size_t n, size_t *ret_len)
{
        char *t = calloc(n + 4, 1), *out = NULL;
        size_t k = n;

        cr_assert_not_null(t, "out of memory");
        memcpy(t, s, n);
        for (char *p = t; *p; p++)
                *p = *p == '-' ? '+' : *p == '_' ? '/' : *p;
        while (k % 4)
                t[k++] = '=';
        cr_assert_eq(base64_decode(t, &out, ret_len), 0, "%s", t);
        free(t);
        return out;
}

Test(oauth, key_file)
{
        struct sa_key k;
        char why[256];
        const char *doc =
                "{\"type\":\"service_account\",\"project_id\":\"p\",\"private_key_id\":"
                "\"k1\",\"private_key\":\"-----BEGIN PRIVATE KEY-----\\nAA\\n-----END "
                "PRIVATE KEY-----\\n\",\"client_email\":\"sa@p.iam.gserviceaccount.com\"}";

        cr_assert_eq(sa_key_parse(doc, strlen(doc), &k, why, sizeof(why)), 0, "%s", why);
        cr_assert_str_eq(k.client_email, "sa@p.iam.gserviceaccount.com");
        cr_assert_str_eq(k.private_key_id, "k1");
        cr_assert_str_eq(k.token_uri, GOOGLE_TOKEN_URI); /* the default */
        sa_key_release(&k);

        static const char *const bad[][2] = {
                { "", "not a JSON object" },
                { "{\"type\":\"authorized_user\"}", "not \"service_account\"" },
                { "{\"type\":\"service_account\",\"private_key\":\"x\"}", "client_email" },
                { "{\"type\":\"service_account\",\"client_email\":\"a\"}", "private_key" },
                { "{\"type\":\"service_account\",\"client_email\":\"a\",\"private_key\":"
                  "\"-----BEGIN PRIVATE KEY-----\",\"token_uri\":\"file:///etc/passwd\"}",
                  "token_uri" },
        };
        for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
                cr_assert_eq(sa_key_parse(bad[i][0], strlen(bad[i][0]), &k, why, sizeof(why)),
                             -EBADMSG, "%s", bad[i][0]);
                cr_assert(strstr(why, bad[i][1]), "'%s' does not say '%s'", why, bad[i][1]);
        }
}

Test(oauth, jwt_signing_input_and_signature)
{
        struct sa_key k = { .client_email = (char *)"sa@p.iam.gserviceaccount.com",
                            .private_key_id = (char *)"k1",
                            .token_uri = (char *)"https://oauth2.googleapis.com/token" };
        gnutls_x509_privkey_t xk;
        gnutls_datum_t pem = { 0 };
        char *in = NULL, *jwt = NULL, why[256] = "", *h, *c;
        size_t hl, cl;

        cr_assert_eq(jwt_signing_input(&k, GCS_READ_SCOPE, 1700000000, &in), 0);
        char *dot = strchr(in, '.');
        cr_assert_not_null(dot);
        h = b64url_decode(in, (size_t)(dot - in), &hl);
        c = b64url_decode(dot + 1, strlen(dot + 1), &cl);
        cr_assert_str_eq(h, "{\"alg\":\"RS256\",\"typ\":\"JWT\",\"kid\":\"k1\"}");
        cr_assert_str_eq(c, "{\"iss\":\"sa@p.iam.gserviceaccount.com\",\"scope\":"
                            "\"https://www.googleapis.com/auth/devstorage.read_only\",\"aud\":"
                            "\"https://oauth2.googleapis.com/token\",\"iat\":1700000000,\"exp\":"
                            "1700003600}");
        cr_assert_null(strpbrk(in, "+/="));
        free(h);
        free(c);

        /* a fresh RSA key: the signature verifies with its public half */
        cr_assert_eq(gnutls_x509_privkey_init(&xk), 0);
        cr_assert_eq(gnutls_x509_privkey_generate(xk, GNUTLS_PK_RSA, 2048, 0), 0);
        cr_assert_eq(gnutls_x509_privkey_export2_pkcs8(xk, GNUTLS_X509_FMT_PEM, NULL,
                                                       GNUTLS_PKCS_PLAIN, &pem),
                     0);
        char *pemz = strndup((const char *)pem.data, pem.size);
        cr_assert_not_null(pemz, "out of memory");
        cr_assert_eq(jwt_sign_rs256(pemz, in, &jwt, why, sizeof(why)), 0, "%s", why);
        cr_assert_eq(strncmp(jwt, in, strlen(in)), 0);
        cr_assert_eq(jwt[strlen(in)], '.');
        size_t sl;
        char *sig = b64url_decode(jwt + strlen(in) + 1, strlen(jwt + strlen(in) + 1), &sl);
        gnutls_pubkey_t pub;
        gnutls_privkey_t pk;
        gnutls_datum_t data = { (unsigned char *)in, (unsigned)strlen(in) };
        gnutls_datum_t sd = { (unsigned char *)sig, (unsigned)sl };
        cr_assert_eq(gnutls_privkey_init(&pk), 0);
        cr_assert_eq(gnutls_privkey_import_x509(pk, xk, 0), 0);
        cr_assert_eq(gnutls_pubkey_init(&pub), 0);
        cr_assert_eq(gnutls_pubkey_import_privkey(pub, pk, 0, 0), 0);
        cr_assert_eq(gnutls_pubkey_verify_data2(pub, GNUTLS_SIGN_RSA_SHA256, 0, &data, &sd), 0);
        /* a changed byte does not verify */
        in[3] ^= 1;
        cr_assert_lt(gnutls_pubkey_verify_data2(pub, GNUTLS_SIGN_RSA_SHA256, 0, &data, &sd), 0);
        gnutls_pubkey_deinit(pub);
        gnutls_privkey_deinit(pk);
        gnutls_x509_privkey_deinit(xk);
        gnutls_free(pem.data);
        free(sig);
        free(jwt);

        cr_assert_eq(
                jwt_sign_rs256("-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n", in,
                               &jwt, why, sizeof(why)),
                -EINVAL);
        cr_assert(strstr(why, "not a PEM private key"), "%s", why);
        free(pemz);
        free(in);
}

Test(oauth, token_answers)
{
        char *tok = NULL, buf[128];
        uint64_t exp = 0;
        const char *ok =
                "{\"access_token\":\"ya29.a0\",\"expires_in\":3599,\"token_type\":\"Bearer\"}";

        cr_assert_eq(oauth_token_parse(ok, strlen(ok), &tok, &exp), 0);
        cr_assert_str_eq(tok, "ya29.a0");
        cr_assert_eq(exp, 3599);
        free(tok);
        cr_assert_eq(oauth_token_parse("{\"access_token\":\"t\"}", 20, &tok, &exp), 0);
        cr_assert_eq(exp, JWT_LIFETIME_SEC);
        free(tok);
        /* no token, or one that would break the header line */
        cr_assert_eq(oauth_token_parse("{}", 2, &tok, &exp), -EBADMSG);
        cr_assert_eq(oauth_token_parse("{\"access_token\":\"a\\r\\nX: y\"}", 28, &tok, &exp),
                     -EBADMSG);
        cr_assert(oauth_error_parse("{\"error\":\"invalid_grant\",\"error_description\":\"Invalid "
                                    "JWT Signature.\"}",
                                    70, buf, sizeof(buf)));
        cr_assert_str_eq(buf, "invalid_grant: Invalid JWT Signature.");
        cr_assert(!oauth_error_parse("{\"error\":\"x\"}", 13, buf, sizeof(buf)));
}
