/* SPDX-License-Identifier: Apache-2.0 */
#include "agent/oauth.h"

#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "json/json-util.h"
#include "util/base64.h"

void sa_key_release(struct sa_key *k)
{
        free(k->client_email);
        free(k->private_key);
        free(k->private_key_id);
        free(k->token_uri);
        *k = (struct sa_key){ 0 };
}

static int bad(char *reterr, size_t len, const char *why)
{
        (void)snprintf(reterr, len, "%s", why);
        return -EBADMSG;
}

int sa_key_parse(const char *json, size_t len, struct sa_key *ret, char *reterr, size_t len_err)
{
        json_auto_t *doc = json_loadb(json, len, JSON_REJECT_DUPLICATES, NULL);
        const char *type, *email, *pem, *kid, *uri;
        struct sa_key k = { 0 };

        if (!json_is_object(doc))
                return bad(reterr, len_err, "not a JSON object");
        type = json_string_value(json_object_get(doc, "type"));
        email = json_string_value(json_object_get(doc, "client_email"));
        pem = json_string_value(json_object_get(doc, "private_key"));
        kid = json_string_value(json_object_get(doc, "private_key_id"));
        uri = json_string_value(json_object_get(doc, "token_uri"));
        if (!type || !streq(type, "service_account")) {
                (void)snprintf(reterr, len_err,
                               "\"type\" is \"%.64s\", not \"service_account\" (only "
                               "service-account keys are read)",
                               type ? type : "");
                return -EBADMSG;
        }
        if (!email || !*email)
                return bad(reterr, len_err, "no \"client_email\"");
        if (!pem || !strstr(pem, "PRIVATE KEY-----"))
                return bad(reterr, len_err, "no PEM \"private_key\"");
        if (uri && strncasecmp(uri, "https://", 8) != 0 && strncasecmp(uri, "http://", 7) != 0)
                return bad(reterr, len_err, "\"token_uri\" is not an http(s) URL");
        k.client_email = strdup(email);
        k.private_key = strdup(pem);
        k.private_key_id = kid && *kid ? strdup(kid) : NULL;
        k.token_uri = strdup(uri && *uri ? uri : GOOGLE_TOKEN_URI);
        if (!k.client_email || !k.private_key || !k.token_uri ||
            (kid && *kid && !k.private_key_id)) {
                sa_key_release(&k);
                return -ENOMEM;
        }
        *ret = k;
        return 0;
}

char *base64url_encode(const void *data, size_t n)
{
        char *s = base64_encode(data, n);

        if (!s)
                return NULL;
        for (char *p = s; *p; p++) {
                if (*p == '+')
                        *p = '-';
                else if (*p == '/')
                        *p = '_';
                else if (*p == '=')
                        *p = 0;
        }
        return s;
}

/* base64url of @j's compact JSON (keys in insertion order). */
static char *encode_json(const json_t *j)
{
        AUTOFREE char *text = json_dumps(j, JSON_COMPACT | JSON_PRESERVE_ORDER);

        return text ? base64url_encode(text, strlen(text)) : NULL;
}

int jwt_signing_input(const struct sa_key *k, const char *scope, int64_t iat, char **ret)
{
        json_auto_t *header = json_pack("{s:s, s:s}", "alg", "RS256", "typ", "JWT");
        json_auto_t *claims = json_pack("{s:s, s:s, s:s, s:I, s:I}", "iss", k->client_email,
                                        "scope", scope, "aud", k->token_uri, "iat", (json_int_t)iat,
                                        "exp", (json_int_t)iat + JWT_LIFETIME_SEC);
        AUTOFREE char *h = NULL, *c = NULL;

        if (!header || !claims)
                return -ENOMEM;
        if (k->private_key_id &&
            json_object_set_new(header, "kid", json_string(k->private_key_id)) < 0)
                return -ENOMEM;
        h = encode_json(header);
        c = encode_json(claims);
        if (!h || !c || asprintf(ret, "%s.%s", h, c) < 0)
                return -ENOMEM;
        return 0;
}

int oauth_token_parse(const char *json, size_t len, char **ret_token, uint64_t *ret_expires_in)
{
        json_auto_t *doc = json_loadb(json, len, 0, NULL);
        const char *tok = json_string_value(json_object_get(doc, "access_token"));
        const json_t *exp = json_object_get(doc, "expires_in");

        /* the token goes into a header line: printable ASCII only */
        if (!tok || !*tok || strlen(tok) > 8192)
                return -EBADMSG;
        for (const char *p = tok; *p; p++)
                if ((unsigned char)*p <= ' ' || (unsigned char)*p >= 0x7f)
                        return -EBADMSG;
        *ret_expires_in = json_is_integer(exp) && json_integer_value(exp) > 0
                                  ? (uint64_t)json_integer_value(exp)
                                  : JWT_LIFETIME_SEC;
        *ret_token = strdup(tok);
        return *ret_token ? 0 : -ENOMEM;
}

bool oauth_error_parse(const char *json, size_t len, char *buf, size_t buf_len)
{
        json_auto_t *doc = json_loadb(json, len, 0, NULL);
        const char *err = json_string_value(json_object_get(doc, "error"));
        const char *desc = json_string_value(json_object_get(doc, "error_description"));

        if (!err || !desc)
                return false;
        (void)snprintf(buf, buf_len, "%s: %s", err, desc);
        return true;
}
