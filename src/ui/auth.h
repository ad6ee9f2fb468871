/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

/*
 * Who is asking (docs/ui.md, "Identity" and "CSRF"), decided from the request alone: pure, no
 * I/O. The auth-proxy header is believed only from a trusted proxy address or with the shared
 * secret; otherwise a bearer token is passed through; otherwise nobody (401), unless a
 * development user is configured. CSRF tokens are an HMAC-SHA256 of the identity under the
 * server's key.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
struct sockaddr; /* <sys/socket.h>; only pointers here */

#include "util/cidr.h"
#include "util/macro.h"

#define UI_USER_MAX       256U               /* bytes of a user or group name */
#define UI_GROUPS_MAX     32U                /* groups from the groups header */
#define UI_TOKEN_MAX      ((size_t)8 * 1024) /* bytes of a bearer token */
#define UI_CSRF_KEY_SIZE  32U
#define UI_CSRF_TOKEN_LEN 64U /* hex of an HMAC-SHA256 */

struct ui_auth_config {
        const char *user_header;    /* borrowed; "kubeflow-userid" */
        const char *groups_header;  /* borrowed; NULL = groups are not taken from the proxy */
        const struct cidr *trusted; /* borrowed; util/cidr.h */
        size_t n_trusted;
        const char *proxy_secret; /* borrowed; NULL = no shared secret */
        const char *dev_user;     /* borrowed; NULL = no anonymous access */
};

/* What the request carried (all borrowed; NULL when absent). */
struct ui_auth_input {
        const struct sockaddr *peer;
        const char *user;          /* the user header */
        const char *groups;        /* the groups header */
        const char *proxy_secret;  /* X-Proxy-Secret */
        const char *authorization; /* Authorization */
};

enum ui_auth_mode {
        UI_AUTH_PROXY,  /* trusted user header: impersonate */
        UI_AUTH_BEARER, /* token passthrough */
        UI_AUTH_DEV,    /* --insecure-dev-user: impersonate */
};

struct ui_identity {
        enum ui_auth_mode mode;
        char user[UI_USER_MAX + 1];  /* empty for bearer until the apiserver says who */
        char *groups[UI_GROUPS_MAX]; /* owned */
        size_t n_groups;
        char *token; /* owned; bearer mode */
};

void ui_identity_done(struct ui_identity *id);

/*
 * Decides the identity. Returns 0 with *ret filled (release with ui_identity_done()), -EACCES when
 * there is none (401; msg says what was missing or ignored), -EINVAL for a malformed header or a
 * proxy user or group starting with "system:" (400; msg names it).
 */
_warn_unused_result_ int ui_auth_decide(const struct ui_auth_config *cfg,
                                        const struct ui_auth_input *in, struct ui_identity *ret,
                                        char *msg, size_t msg_len);

/* The mode's name in /api/v1/user: "proxy", "bearer", "dev". */
const char *ui_auth_mode_name(enum ui_auth_mode mode);

/* The CSRF token of id under key, as UI_CSRF_TOKEN_LEN hex digits plus NUL. */
_warn_unused_result_ int ui_csrf_token(const uint8_t key[UI_CSRF_KEY_SIZE],
                                       const struct ui_identity *id,
                                       char ret[UI_CSRF_TOKEN_LEN + 1]);
/* Constant-time check of a presented token (NULL is false). */
bool ui_csrf_valid(const uint8_t key[UI_CSRF_KEY_SIZE], const struct ui_identity *id,
                   const char *presented);

/* True for the methods that change state (POST, PUT, PATCH, DELETE) and so need the token. */
bool ui_method_writes(const char *method);

/*
 * The other write rules: with a body, Content-Type must be application/json; an Origin header, when
 * present, must be http(s)://<host> for the request's Host. Returns NULL when the write may go on,
 * else the message of a 403 (Origin) or 415 (*ret_status says which).
 */
const char *ui_write_refusal(const char *content_type, bool has_body, const char *origin,
                             const char *host, unsigned *ret_status);

/* Constant-time string equality (for secrets); NULL equals nothing. */
bool ui_secret_equal(const char *a, const char *b);

/* Derives the CSRF key from a shared secret (SHA-256 of its bytes). */
_warn_unused_result_ int ui_csrf_key_from_secret(const void *secret, size_t len,
                                                 uint8_t key[UI_CSRF_KEY_SIZE]);
