/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The ui's pure parsers of request input: the input is split at NUL bytes into a path, a user
 * header, a groups header, an Authorization header, an If-None-Match, an Origin, a Content-Type
 * and a CIDR list. Each goes through what the server does with it (static path check, content
 * type and caching, the identity decision with a trusted loopback proxy, CSRF token and check,
 * ETag match, the write rules, CIDR parsing, the n/m parser) and the results are checked: a
 * resolved path never holds a ".." or hidden segment, an accepted identity has a user or a token,
 * a token always validates for its own identity.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ui/auth.h"
#include "ui/static-path.h"
#include "ui/views.h"

#define FIELDS 8

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        char *copy = malloc(size + 1), *f[FIELDS] = { 0 }, *p;
        char rel[UI_STATIC_PATH_MAX + 1], msg[512], token[UI_CSRF_TOKEN_LEN + 1];
        static const uint8_t key[UI_CSRF_KEY_SIZE] = { 7 };
        struct sockaddr_in peer = { .sin_family = AF_INET };
        struct cidr lo, *cidrs = NULL;
        struct ui_identity id;
        unsigned st, a, b;
        size_t n = 0, nc = 0;

        if (!copy)
                return 0;
        memcpy(copy, data, size);
        copy[size] = '\0';
        for (p = copy; n < FIELDS; n++) {
                f[n] = p;
                p = memchr(p, '\0', (size_t)(copy + size - p));
                if (!p || p >= copy + size)
                        break;
                p++;
        }

        if (ui_static_path(f[0], rel, sizeof(rel)) == 0) {
                if (strstr(rel, "/.") || rel[0] == '.' || strstr(rel, "//") || strchr(rel, '\\'))
                        abort();
                (void)ui_content_type(rel);
                (void)ui_cache_control(rel);
                (void)ui_spa_fallback(rel);
        }
        (void)inet_pton(AF_INET, "127.0.0.1", &peer.sin_addr);
        if (cidr_parse("127.0.0.0/8", &lo) < 0)
                abort();
        if (ui_auth_decide(&(struct ui_auth_config){ .user_header = "kubeflow-userid",
                                                     .groups_header = "kubeflow-groups",
                                                     .trusted = &lo,
                                                     .n_trusted = 1 },
                           &(struct ui_auth_input){ .peer = (struct sockaddr *)&peer,
                                                    .user = f[1],
                                                    .groups = f[2],
                                                    .authorization = f[3] },
                           &id, msg, sizeof(msg)) == 0) {
                if (!id.user[0] && !id.token)
                        abort();
                if (ui_csrf_token(key, &id, token) == 0 && !ui_csrf_valid(key, &id, token))
                        abort();
                ui_identity_done(&id);
        }
        if (f[4]) {
                char etag[UI_ETAG_SIZE];

                ui_etag(copy, size, etag);
                (void)ui_etag_match(f[4], etag);
        }
        (void)ui_write_refusal(f[6], true, f[5], "127.0.0.1:4000", &st);
        if (f[7] && cidr_list_parse(f[7], &cidrs, &nc) == 0) {
                (void)cidr_match(cidrs, nc, (struct sockaddr *)&peer);
                free(cidrs);
        }
        if (ui_parse_loaded(f[0], &a, &b) && a > b)
                abort();
        free(copy);
        return 0;
}
