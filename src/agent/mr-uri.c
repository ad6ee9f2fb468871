/* SPDX-License-Identifier: Apache-2.0 */
#include "agent/mr-uri.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/string-util.h"

#define SEGMENTS_MAX 3U

bool mr_uri_is(const char *uri)
{
        return uri && strncmp(uri, MR_URI_SCHEME, strlen(MR_URI_SCHEME)) == 0;
}

/* The percent-decoded copy of s[0..n); -EINVAL for a bad escape, a control character or NUL. */
static int decode(const char *s, size_t n, char **ret)
{
        AUTOFREE char *out = NULL;
        int r = percent_decode(s, n, &out);

        if (r < 0)
                return r;
        for (const unsigned char *c = (const unsigned char *)out; *c; c++)
                if (*c < 0x20 || *c == 0x7f)
                        return -EINVAL;
        *ret = TAKE_PTR(out);
        return 0;
}

void mr_uri_release(struct mr_uri *u)
{
        free(u->host);
        free(u->model);
        free(u->version);
        free(u->ns);
        *u = (struct mr_uri){ 0 };
}

static int fail(char *err, size_t len, const char *uri, const char *why)
{
        (void)snprintf(err, len,
                       "%.200s: %s (use model-registry://MODEL[/VERSION] or "
                       "model-registry://HOST:PORT/MODEL[/VERSION])",
                       uri, why);
        return -EINVAL;
}

static bool ns_char(char c)
{
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
               c == '-' || c == '_';
}

/* The query's namespace parameter (@q after the '?'), decoded and checked, into *@ret (NULL when
 * absent). Returns 0, -EINVAL, -ENOMEM. */
static int query_namespace(const char *uri, const char *q, char **ret, char *err, size_t len)
{
        *ret = NULL;
        while (*q) {
                size_t l = strcspn(q, "&");
                int r;

                if (l > 10 && strncmp(q, "namespace=", 10) == 0) {
                        free(*ret);
                        *ret = NULL;
                        r = decode(q + 10, l - 10, ret);
                        if (r == -ENOMEM)
                                return r;
                        for (const char *p = r == 0 ? *ret : ""; r == 0 && *p; p++)
                                if (!ns_char(*p))
                                        r = -EINVAL;
                        if (r < 0) {
                                free(*ret);
                                *ret = NULL;
                                return fail(err, len, uri,
                                            "the namespace parameter is not a namespace name");
                        }
                }
                q += l + (q[l] == '&');
        }
        return 0;
}

/* Whether the segments start with a registry host: three segments, or two with a port. */
static bool names_host(const char *const *seg, const size_t *seglen, size_t n)
{
        return n == 3 || (n == 2 && memchr(seg[0], ':', seglen[0]));
}

/* The path's segments (up to '?' or the end) into seg/seglen; *@ret_end: where the path ends. */
static int split_segments(const char *uri, const char **seg, size_t *seglen, size_t *ret_n,
                          const char **ret_end, char *err, size_t len)
{
        const char *p = uri + strlen(MR_URI_SCHEME);
        size_t n = 0;

        for (;;) {
                size_t l = strcspn(p, "/?");

                if (l == 0)
                        return fail(err, len, uri, "an empty segment");
                if (n == SEGMENTS_MAX)
                        return fail(err, len, uri, "more than three segments");
                seg[n] = p;
                seglen[n++] = l;
                if (p[l] != '/') {
                        *ret_end = p + l;
                        break;
                }
                p += l + 1;
        }
        *ret_n = n;
        return 0;
}

int mr_uri_parse(const char *uri, struct mr_uri *ret, char *err, size_t len)
{
        const char *seg[SEGMENTS_MAX], *end = NULL;
        size_t seglen[SEGMENTS_MAX], n = 0;
        struct mr_uri u = { 0 };
        char *dec[SEGMENTS_MAX] = { 0 };
        AUTOFREE char *ns = NULL;
        size_t first;
        int r;

        if (!mr_uri_is(uri))
                return fail(err, len, uri ? uri : "(null)", "not a model-registry:// URI");
        if (strlen(uri) > MR_URI_MAX)
                return fail(err, len, uri, "longer than 2048 bytes");
        r = split_segments(uri, seg, seglen, &n, &end, err, len);
        if (r == 0 && *end == '?')
                r = query_namespace(uri, end + 1, &ns, err, len);
        if (r < 0)
                return r;
        if (ns && names_host(seg, seglen, n))
                return fail(err, len, uri, "a registry host and a namespace parameter (name one)");
        for (size_t i = 0; i < n && r == 0; i++) {
                r = decode(seg[i], seglen[i], &dec[i]);
                if (r == -EINVAL)
                        (void)fail(err, len, uri, "a bad %-escape or a control character");
        }
        if (r == 0) {
                first = names_host(seg, seglen, n) ? 1 : 0;
                u.host = first ? TAKE_PTR(dec[0]) : NULL;
                u.model = TAKE_PTR(dec[first]);
                u.version = first + 1 < n ? TAKE_PTR(dec[first + 1]) : NULL;
                u.ns = TAKE_PTR(ns);
                *ret = u;
        }
        for (size_t i = 0; i < n; i++)
                free(dec[i]);
        return r;
}

char *mr_uri_namespace_url(const char *scheme, const char *service, const char *ns,
                           const char *domain, const char *base_url)
{
        const char *host = strstr(base_url, "://"), *end, *colon;
        const char *port = "8080";
        size_t port_len = 4;
        char *out;

        host = host ? host + 3 : base_url;
        end = host + strcspn(host, "/?#");
        colon = end;
        while (colon > host && colon[-1] >= '0' && colon[-1] <= '9')
                colon--;
        if (colon > host && colon < end && colon[-1] == ':' &&
            (host[0] != '[' || colon[-2] == ']')) {
                port = colon;
                port_len = (size_t)(end - colon);
        }
        if (asprintf(&out, "%s://%s.%s.%s:%.*s", scheme, service, ns, domain, (int)port_len, port) <
            0)
                return NULL;
        return out;
}
