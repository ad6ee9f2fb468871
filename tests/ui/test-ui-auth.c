/* SPDX-License-Identifier: Apache-2.0 */
/* Who is asking: CIDR trust (the ranges themselves: tests/unit/util/test-cidr.c), the proxy secret, bearer passthrough, dev user, CSRF. */
#include <arpa/inet.h>
#include <criterion/criterion.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>

#include "ui/auth.h"

static struct sockaddr_in v4(const char *a)
{
        struct sockaddr_in s = { .sin_family = AF_INET };

        cr_assert_eq(inet_pton(AF_INET, a, &s.sin_addr), 1);
        return s;
}

/*
 * The auth tests' fixture: a configuration trusting 127.0.0.0/8, a trusted and an untrusted
 * peer, and room for the decision's identity and message. Not copyable (the peers point into it).
 */
struct fixture {
        struct cidr lo;
        struct ui_auth_config cfg;
        struct sockaddr_in trusted_in, untrusted_in;
        const struct sockaddr *trusted, *untrusted; /* &trusted_in, &untrusted_in */
        struct ui_identity id;                      /* of the last DECIDE */
        char msg[512];                              /* its message */
};

static void setup(struct fixture *f, const char *secret, const char *dev)
{
        cr_assert_eq(cidr_parse("127.0.0.0/8", &f->lo), 0);
        f->cfg = (struct ui_auth_config){ .user_header = "kubeflow-userid",
                                          .groups_header = "kubeflow-groups",
                                          .trusted = &f->lo,
                                          .n_trusted = 1,
                                          .proxy_secret = secret,
                                          .dev_user = dev };
        f->trusted_in = v4("127.0.0.1");
        f->untrusted_in = v4("10.0.0.7");
        f->trusted = (const struct sockaddr *)&f->trusted_in;
        f->untrusted = (const struct sockaddr *)&f->untrusted_in;
}

/* ui_auth_decide() on fixture f for the request given as struct ui_auth_input initialisers. */
#define DECIDE(f, ...)                                                                        \
        ui_auth_decide(&(f)->cfg, &(struct ui_auth_input){ __VA_ARGS__ }, &(f)->id, (f)->msg, \
                       sizeof((f)->msg))

Test(auth, trusted_proxy_header)
{
        struct fixture f;

        setup(&f, NULL, NULL);
        cr_assert_eq(DECIDE(&f, .peer = f.trusted, .user = "alice", .groups = "team-a, ml ,,",
                            .authorization = "Bearer x"),
                     0);
        cr_assert_eq(f.id.mode, UI_AUTH_PROXY, "the trusted header wins over a bearer token");
        cr_assert_str_eq(f.id.user, "alice");
        cr_assert_eq(f.id.n_groups, 2);
        cr_assert_str_eq(f.id.groups[0], "team-a");
        cr_assert_str_eq(f.id.groups[1], "ml");
        cr_assert_null(f.id.token);
        ui_identity_done(&f.id);
}

Test(auth, untrusted_header_is_ignored)
{
        struct fixture f;

        setup(&f, NULL, "dev");
        cr_assert_eq(DECIDE(&f, .peer = f.untrusted, .user = "admin"), -EACCES,
                     "no dev fallback for a forged header");
        cr_assert(strstr(f.msg, "untrusted address 10.0.0.7"), "%s", f.msg);
        cr_assert(strstr(f.msg, "no identity"), "%s", f.msg);

        /* with a bearer token too, the token is used and the header is not */
        cr_assert_eq(DECIDE(&f, .peer = f.untrusted, .user = "admin",
                            .authorization = "Bearer tok123"),
                     0);
        cr_assert_eq(f.id.mode, UI_AUTH_BEARER);
        cr_assert_str_eq(f.id.user, "");
        cr_assert_str_eq(f.id.token, "tok123");
        ui_identity_done(&f.id);
}

Test(auth, proxy_secret)
{
        struct fixture f;

        setup(&f, "s3cret", NULL);
        cr_assert_eq(DECIDE(&f, .peer = f.untrusted, .user = "bob", .proxy_secret = "s3cret"), 0);
        cr_assert_eq(f.id.mode, UI_AUTH_PROXY);
        cr_assert_str_eq(f.id.user, "bob");
        ui_identity_done(&f.id);
        cr_assert_eq(DECIDE(&f, .peer = f.untrusted, .user = "bob", .proxy_secret = "s3cre"),
                     -EACCES);
        cr_assert(strstr(f.msg, "X-Proxy-Secret"), "%s", f.msg);
        cr_assert_eq(DECIDE(&f, .peer = f.untrusted, .user = "bob", .proxy_secret = "s3cret!"),
                     -EACCES);
}

Test(auth, nobody_gets_401_and_dev_user)
{
        struct fixture f;

        setup(&f, NULL, NULL);
        cr_assert_eq(DECIDE(&f, 0), -EACCES);
        cr_assert(strstr(f.msg, "Authorization: Bearer"), "%s", f.msg);
        cr_assert(strstr(f.msg, "kubeflow-userid"), "%s", f.msg);
        setup(&f, NULL, "dev");
        cr_assert_eq(DECIDE(&f, 0), 0);
        cr_assert_eq(f.id.mode, UI_AUTH_DEV);
        cr_assert_str_eq(f.id.user, "dev");
        ui_identity_done(&f.id);
}

Test(auth, malformed_headers)
{
        struct fixture f;
        char big[UI_USER_MAX + 2], *tok;

        setup(&f, NULL, NULL);
        memset(big, 'u', sizeof(big) - 1);
        big[sizeof(big) - 1] = '\0';
        cr_assert_eq(DECIDE(&f, .peer = f.trusted, .user = big), -EINVAL);
        cr_assert(strstr(f.msg, "kubeflow-userid"), "%s", f.msg);
        cr_assert_eq(DECIDE(&f, .peer = f.trusted, .user = ""), -EINVAL);
        cr_assert_eq(DECIDE(&f, .peer = f.trusted, .user = "a\tb"), -EINVAL);
        {
                char groups[40 * 3];
                size_t off = 0;

                for (int i = 0; i < 33; i++)
                        off += (size_t)snprintf(groups + off, sizeof(groups) - off, "g%d,", i);
                cr_assert_eq(DECIDE(&f, .peer = f.trusted, .user = "a", .groups = groups), -EINVAL);
                cr_assert(strstr(f.msg, "more than 32 groups"), "%s", f.msg);
        }
        cr_assert_eq(DECIDE(&f, .authorization = "Basic eA=="), -EINVAL);
        cr_assert(strstr(f.msg, "Bearer"), "%s", f.msg);
        cr_assert_eq(DECIDE(&f, .authorization = "Bearer  "), -EINVAL);
        cr_assert_eq(DECIDE(&f, .authorization = "Bearer a\rb"), -EINVAL);
        tok = malloc(UI_TOKEN_MAX + 16);
        cr_assert_not_null(tok);
        memcpy(tok, "Bearer ", 7);
        memset(tok + 7, 't', UI_TOKEN_MAX + 1);
        tok[7 + UI_TOKEN_MAX + 1] = '\0';
        cr_assert_eq(DECIDE(&f, .authorization = tok), -EINVAL);
        cr_assert(strstr(f.msg, "longer than"), "%s", f.msg);
        free(tok);
}

Test(csrf, token_is_bound_to_identity_and_key)
{
        uint8_t key[UI_CSRF_KEY_SIZE] = { 1, 2, 3 }, other[UI_CSRF_KEY_SIZE] = { 9 };
        struct ui_identity alice = { .mode = UI_AUTH_PROXY }, bob = { .mode = UI_AUTH_PROXY };
        struct ui_identity alice_dev = { .mode = UI_AUTH_DEV };
        char t[UI_CSRF_TOKEN_LEN + 1], t2[UI_CSRF_TOKEN_LEN + 1];

        (void)snprintf(alice.user, sizeof(alice.user), "alice");
        (void)snprintf(bob.user, sizeof(bob.user), "bob");
        (void)snprintf(alice_dev.user, sizeof(alice_dev.user), "alice");
        cr_assert_eq(ui_csrf_token(key, &alice, t), 0);
        cr_assert_eq(strlen(t), UI_CSRF_TOKEN_LEN);
        cr_assert_eq(ui_csrf_token(key, &alice, t2), 0);
        cr_assert_str_eq(t, t2, "stable for one identity");
        cr_assert(ui_csrf_valid(key, &alice, t));
        cr_assert_not(ui_csrf_valid(key, &bob, t), "another user's token");
        cr_assert_not(ui_csrf_valid(key, &alice_dev, t), "another mode");
        cr_assert_not(ui_csrf_valid(other, &alice, t), "another key");
        cr_assert_not(ui_csrf_valid(key, &alice, NULL));
        cr_assert_not(ui_csrf_valid(key, &alice, ""));
        t[10] ^= 1;
        cr_assert_not(ui_csrf_valid(key, &alice, t), "one flipped bit");
}

Test(csrf, write_rules)
{
        unsigned st = 0;

        cr_assert(ui_method_writes("POST") && ui_method_writes("PATCH") &&
                  ui_method_writes("PUT") && ui_method_writes("DELETE"));
        cr_assert_not(ui_method_writes("GET") || ui_method_writes("HEAD"));
        cr_assert_null(ui_write_refusal("application/json", true, NULL, "h:1", &st));
        cr_assert_null(ui_write_refusal("application/json; charset=utf-8", true, "http://h:1",
                                        "h:1", &st));
        cr_assert_null(ui_write_refusal(NULL, false, NULL, "h:1", &st));
        cr_assert_not_null(ui_write_refusal("text/plain", true, NULL, "h:1", &st));
        cr_assert_eq(st, 415);
        cr_assert_not_null(ui_write_refusal("application/jsonx", true, NULL, "h:1", &st));
        cr_assert_not_null(ui_write_refusal("application/json", true, "http://evil:1", "h:1", &st));
        cr_assert_eq(st, 403);
        cr_assert_not_null(ui_write_refusal("application/json", true, "null", "h:1", &st));
        cr_assert_not_null(ui_write_refusal("application/json", true, "http://h:1", NULL, &st));
}

Test(secret, constant_time_equal)
{
        cr_assert(ui_secret_equal("abc", "abc"));
        cr_assert_not(ui_secret_equal("abc", "abd"));
        cr_assert_not(ui_secret_equal("abc", "abcd"));
        cr_assert_not(ui_secret_equal("abcd", "abc"));
        cr_assert_not(ui_secret_equal("", ""));
        cr_assert_not(ui_secret_equal(NULL, "a"));
        cr_assert_not(ui_secret_equal("a", NULL));
}

Test(auth, system_identities_are_refused_from_the_header)
{
        struct fixture f;

        setup(&f, NULL, NULL);
        cr_assert_eq(DECIDE(&f, .peer = f.trusted, .user = "system:admin"), -EINVAL);
        cr_assert(strstr(f.msg, "reserved"), "%s", f.msg);
        cr_assert_eq(DECIDE(&f, .peer = f.trusted, .user = "alice", .groups = "a,system:masters"),
                     -EINVAL);
        cr_assert(strstr(f.msg, "reserved"), "%s", f.msg);
}
