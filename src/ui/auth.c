/* SPDX-License-Identifier: Apache-2.0 */
#include "ui/auth.h"

#include <arpa/inet.h>
#include <errno.h>
#include <gnutls/crypto.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "util/parse-util.h"

/*
 * The next item of the comma-separated list at *cursor, without the leading and trailing
 * characters of blanks: *ret_item and its length (0 for an empty item). *cursor moves past the
 * item's comma, to NULL after the last item.
 */
static size_t list_next(const char **cursor, const char *blanks, const char **ret_item)
{
        const char *p = *cursor;
        const char *e = strchr(p, ',');
        size_t n = e ? (size_t)(e - p) : strlen(p);

        while (n > 0 && strchr(blanks, *p)) {
                p++;
                n--;
        }
        while (n > 0 && strchr(blanks, p[n - 1]))
                n--;
        *cursor = e ? e + 1 : NULL;
        *ret_item = p;
        return n;
}

void ui_identity_done(struct ui_identity *id)
{
        if (!id)
                return;
        for (size_t i = 0; i < id->n_groups; i++)
                free(id->groups[i]);
        if (id->token) {
                explicit_bzero(id->token, strlen(id->token));
                free(id->token);
        }
        *id = (struct ui_identity){ 0 };
}

bool ui_secret_equal(const char *a, const char *b)
{
        size_t na, nb;
        unsigned char d = 0;

        if (!a || !b)
                return false;
        na = strlen(a);
        nb = strlen(b);
        for (size_t i = 0; i < nb; i++)
                d |= (unsigned char)(a[i % (na ? na : 1)] ^ b[i]);
        return na == nb && na > 0 && d == 0;
}

/* A user or group name: 1..UI_USER_MAX bytes, printable ASCII or UTF-8, no control characters. */
static bool name_ok(const char *s, size_t n)
{
        if (n == 0 || n > UI_USER_MAX)
                return false;
        for (size_t i = 0; i < n; i++)
                if ((unsigned char)s[i] < 0x20 || s[i] == 0x7f)
                        return false;
        return true;
}

/* Adds the group p (n bytes) from the groups header to id. */
static int add_group(struct ui_identity *id, const char *p, size_t n, char *msg, size_t len)
{
        if (id->n_groups >= UI_GROUPS_MAX) {
                (void)snprintf(msg, len, "more than %u groups in the groups header", UI_GROUPS_MAX);
                return -EINVAL;
        }
        if (n >= 7 && strneq(p, "system:", 7)) {
                (void)snprintf(msg, len, "the groups header names a reserved system: group");
                return -EINVAL;
        }
        if (!name_ok(p, n)) {
                (void)snprintf(msg, len,
                               "a group name in the groups header is longer than %u "
                               "bytes or has control characters",
                               UI_USER_MAX);
                return -EINVAL;
        }
        id->groups[id->n_groups] = strndup(p, n);
        if (!id->groups[id->n_groups])
                return -ENOMEM;
        id->n_groups++;
        return 0;
}

static int parse_groups(const char *list, struct ui_identity *id, char *msg, size_t len)
{
        const char *cur = list;

        while (cur && *cur) {
                const char *p;
                size_t n = list_next(&cur, " ", &p);
                int r;

                if (n == 0)
                        continue;
                r = add_group(id, p, n, msg, len);
                if (r < 0)
                        return r;
        }
        return 0;
}

static void peer_text(const struct sockaddr *sa, char *buf, size_t len)
{
        const void *a = NULL;

        if (sa && sa->sa_family == AF_INET)
                a = &((const struct sockaddr_in *)(const void *)sa)->sin_addr;
        else if (sa && sa->sa_family == AF_INET6)
                a = &((const struct sockaddr_in6 *)(const void *)sa)->sin6_addr;
        if (!a || !inet_ntop(sa->sa_family, a, buf, (socklen_t)len))
                (void)snprintf(buf, len, "an unknown address");
}

static int bearer_token(const char *authorization, const char **ret, char *msg, size_t len)
{
        const char *t;

        if (strncasecmp(authorization, "Bearer ", 7) != 0) {
                (void)snprintf(msg, len, "the Authorization header is not \"Bearer <token>\"");
                return -EINVAL;
        }
        t = authorization + 7;
        while (*t == ' ')
                t++;
        if (!*t) {
                (void)snprintf(msg, len, "the Authorization header has an empty bearer token");
                return -EINVAL;
        }
        if (strlen(t) > UI_TOKEN_MAX) {
                (void)snprintf(msg, len, "the bearer token is longer than %zu bytes", UI_TOKEN_MAX);
                return -EINVAL;
        }
        for (const char *p = t; *p; p++)
                if ((unsigned char)*p <= 0x20 || *p == 0x7f) {
                        (void)snprintf(msg, len,
                                       "the bearer token has a space or control character");
                        return -EINVAL;
                }
        *ret = t;
        return 0;
}

static int set_user(struct ui_identity *id, const char *user, const char *header, char *msg,
                    size_t len)
{
        size_t n = strlen(user);

        if (!name_ok(user, n)) {
                (void)snprintf(msg, len,
                               "the %s header must be 1 to %u bytes without control characters",
                               header, UI_USER_MAX);
                return -EINVAL;
        }
        memcpy(id->user, user, n + 1);
        return 0;
}

/* A user header is believed from a trusted address or with the shared proxy secret. */
static bool proxy_trusted(const struct ui_auth_config *cfg, const struct ui_auth_input *in)
{
        return cidr_match(cfg->trusted, cfg->n_trusted, in->peer) ||
               (cfg->proxy_secret && ui_secret_equal(cfg->proxy_secret, in->proxy_secret));
}

/* The identity of a trusted proxy's user and groups headers. */
static int proxy_identity(const struct ui_auth_config *cfg, const struct ui_auth_input *in,
                          struct ui_identity *ret, char *msg, size_t msg_len)
{
        struct ui_identity id = { .mode = UI_AUTH_PROXY };
        int r;

        r = set_user(&id, in->user, cfg->user_header, msg, msg_len);
        /* Kubernetes' own identities are never taken from a header */
        if (r >= 0 && strneq(id.user, "system:", 7)) {
                (void)snprintf(msg, msg_len, "the %s header names a reserved system: user",
                               cfg->user_header);
                r = -EINVAL;
        }
        if (r >= 0 && in->groups)
                r = parse_groups(in->groups, &id, msg, msg_len);
        if (r < 0) {
                ui_identity_done(&id);
                return r;
        }
        *ret = id;
        return 0;
}

/* Why a user header was ignored, for the message of a refused request. */
static void untrusted_note(const struct ui_auth_config *cfg, const struct ui_auth_input *in,
                           char *buf, size_t len)
{
        char peer[INET6_ADDRSTRLEN + 1];

        peer_text(in->peer, peer, sizeof(peer));
        (void)snprintf(buf, len,
                       "%s header from untrusted address %s ignored (not in "
                       "--trusted-proxy%s); ",
                       cfg->user_header, peer,
                       cfg->proxy_secret ? ", no matching X-Proxy-Secret" : "");
}

int ui_auth_decide(const struct ui_auth_config *cfg, const struct ui_auth_input *in,
                   struct ui_identity *ret, char *msg, size_t msg_len)
{
        struct ui_identity id = { 0 };
        char ignored[256] = "";
        int r;

        msg[0] = '\0';
        if (in->user && proxy_trusted(cfg, in))
                return proxy_identity(cfg, in, ret, msg, msg_len);
        if (in->user)
                untrusted_note(cfg, in, ignored, sizeof(ignored));
        if (in->authorization) {
                const char *t;

                r = bearer_token(in->authorization, &t, msg, msg_len);
                if (r < 0)
                        return r;
                id.mode = UI_AUTH_BEARER;
                id.token = strdup(t);
                if (!id.token)
                        return -ENOMEM;
                *ret = id;
                return 0;
        }
        if (cfg->dev_user && !in->user) {
                id.mode = UI_AUTH_DEV;
                r = set_user(&id, cfg->dev_user, "--insecure-dev-user", msg, msg_len);
                if (r < 0)
                        return r;
                *ret = id;
                return 0;
        }
        (void)snprintf(msg, msg_len,
                       "%sno identity: send Authorization: Bearer <token>, or run behind an auth "
                       "proxy that sets %s",
                       ignored, cfg->user_header);
        return -EACCES;
}

const char *ui_auth_mode_name(enum ui_auth_mode mode)
{
        switch (mode) {
        case UI_AUTH_PROXY:
                return "proxy";
        case UI_AUTH_BEARER:
                return "bearer";
        case UI_AUTH_DEV:
                return "dev";
        }
        return "unknown";
}

int ui_csrf_token(const uint8_t key[UI_CSRF_KEY_SIZE], const struct ui_identity *id,
                  char ret[UI_CSRF_TOKEN_LEN + 1])
{
        static const char hex[] = "0123456789abcdef";
        gnutls_hmac_hd_t h;
        uint8_t digest[32];
        const char *mode = ui_auth_mode_name(id->mode);

        if (gnutls_hmac_init(&h, GNUTLS_MAC_SHA256, key, UI_CSRF_KEY_SIZE) < 0)
                return -ENOMEM;
        /* NUL-separated fields, so that no two identities hash the same bytes */
        (void)gnutls_hmac(h, mode, strlen(mode) + 1);
        (void)gnutls_hmac(h, id->user, strlen(id->user) + 1);
        for (size_t i = 0; i < id->n_groups; i++)
                (void)gnutls_hmac(h, id->groups[i], strlen(id->groups[i]) + 1);
        if (id->token)
                (void)gnutls_hmac(h, id->token, strlen(id->token) + 1);
        gnutls_hmac_deinit(h, digest);
        for (size_t i = 0; i < sizeof(digest); i++) {
                ret[2 * i] = hex[digest[i] >> 4];
                ret[2 * i + 1] = hex[digest[i] & 15];
        }
        ret[UI_CSRF_TOKEN_LEN] = '\0';
        explicit_bzero(digest, sizeof(digest));
        return 0;
}

bool ui_csrf_valid(const uint8_t key[UI_CSRF_KEY_SIZE], const struct ui_identity *id,
                   const char *presented)
{
        char want[UI_CSRF_TOKEN_LEN + 1];
        bool ok;

        if (!presented || ui_csrf_token(key, id, want) < 0)
                return false;
        ok = ui_secret_equal(want, presented);
        explicit_bzero(want, sizeof(want));
        return ok;
}

bool ui_method_writes(const char *method)
{
        return streq(method, "POST") || streq(method, "PUT") || streq(method, "PATCH") ||
               streq(method, "DELETE");
}

const char *ui_write_refusal(const char *content_type, bool has_body, const char *origin,
                             const char *host, unsigned *ret_status)
{
        if (origin) {
                const char *rest = NULL;

                if (strncasecmp(origin, "https://", 8) == 0)
                        rest = origin + 8;
                else if (strncasecmp(origin, "http://", 7) == 0)
                        rest = origin + 7;
                if (!rest || !host || strcasecmp(rest, host) != 0) {
                        *ret_status = 403;
                        return "cross-origin write refused: the Origin header does not match the "
                               "Host";
                }
        }
        if (has_body) {
                size_t n = strlen("application/json");

                if (!content_type || strncasecmp(content_type, "application/json", n) != 0 ||
                    (content_type[n] != '\0' && content_type[n] != ';' && content_type[n] != ' ')) {
                        *ret_status = 415;
                        return "writes must have Content-Type: application/json";
                }
        }
        return NULL;
}

int ui_csrf_key_from_secret(const void *secret, size_t len, uint8_t key[UI_CSRF_KEY_SIZE])
{
        return gnutls_hash_fast(GNUTLS_DIG_SHA256, secret, len, key) < 0 ? -EINVAL : 0;
}
