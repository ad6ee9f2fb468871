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
        char *out = malloc(n + 1), *o = out;

        if (!out)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++) {
                unsigned char c = (unsigned char)s[i];

                if (c == '%') {
                        int hi = i + 2 < n ? unhexchar(s[i + 1]) : -1;

                        if (hi < 0 || unhexchar(s[i + 2]) < 0) {
                                free(out);
                                return -EINVAL;
                        }
                        c = (unsigned char)(hi * 16 + unhexchar(s[i + 2]));
                        i += 2;
                }
                if (c < 0x20 || c == 0x7f) {
                        free(out);
                        return -EINVAL;
                }
                *o++ = (char)c;
        }
        *o = '\0';
        *ret = out;
        return 0;
}

void mr_uri_release(struct mr_uri *u)
{
        free(u->host);
        free(u->model);
        free(u->version);
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

int mr_uri_parse(const char *uri, struct mr_uri *ret, char *err, size_t len)
{
        const char *seg[SEGMENTS_MAX], *p;
        size_t seglen[SEGMENTS_MAX], n = 0;
        struct mr_uri u = { 0 };
        char *dec[SEGMENTS_MAX] = { 0 };
        size_t first = 0;
        int r = 0;

        if (!mr_uri_is(uri))
                return fail(err, len, uri ? uri : "(null)", "not a model-registry:// URI");
        if (strlen(uri) > MR_URI_MAX)
                return fail(err, len, uri, "longer than 2048 bytes");
        p = uri + strlen(MR_URI_SCHEME);
        for (;;) {
                size_t l = strcspn(p, "/");

                if (l == 0)
                        return fail(err, len, uri, "an empty segment");
                if (n == SEGMENTS_MAX)
                        return fail(err, len, uri, "more than three segments");
                seg[n] = p;
                seglen[n++] = l;
                if (!p[l])
                        break;
                p += l + 1;
        }
        for (size_t i = 0; i < n && r == 0; i++) {
                r = decode(seg[i], seglen[i], &dec[i]);
                if (r == -EINVAL)
                        (void)fail(err, len, uri, "a bad %-escape or a control character");
        }
        if (r == 0) {
                bool host = n == 3 || (n == 2 && memchr(seg[0], ':', seglen[0]));

                if (host) {
                        u.host = dec[0];
                        dec[0] = NULL;
                        first = 1;
                }
                u.model = dec[first];
                dec[first] = NULL;
                if (first + 1 < n) {
                        u.version = dec[first + 1];
                        dec[first + 1] = NULL;
                }
                *ret = u;
        }
        for (size_t i = 0; i < n; i++)
                free(dec[i]);
        return r;
}
