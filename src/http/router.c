/* SPDX-License-Identifier: Apache-2.0 */
#include "http/router.h"

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "util/string-util.h"

/* Length of the well-formed UTF-8 sequence at p (at most avail bytes), or 0 when there is none. */
static size_t utf8_seq_len(const unsigned char *p, size_t avail)
{
        unsigned c = p[0], n;
        uint32_t cp;

        if (c < 0x80)
                return 1;
        if (c >= 0xc2 && c <= 0xdf) {
                n = 1;
                cp = c & 0x1f;
        } else if (c >= 0xe0 && c <= 0xef) {
                n = 2;
                cp = c & 0x0f;
        } else if (c >= 0xf0 && c <= 0xf4) {
                n = 3;
                cp = c & 0x07;
        } else
                return 0; /* continuation byte, overlong lead (c0, c1) or past f4 */
        if (avail - 1 < n)
                return 0;
        for (unsigned i = 1; i <= n; i++) {
                if ((p[i] & 0xc0) != 0x80)
                        return 0;
                cp = (cp << 6) | (p[i] & 0x3f);
        }
        if ((n == 2 && cp < 0x800) || (n == 3 && cp < 0x10000) || cp > 0x10ffff ||
            (cp >= 0xd800 && cp <= 0xdfff))
                return 0;
        return n + 1;
}

bool http_utf8_valid(const char *s, size_t len)
{
        const unsigned char *p = (const unsigned char *)s;

        for (size_t i = 0; i < len;) {
                size_t n = utf8_seq_len(p + i, len - i);

                if (n == 0)
                        return false;
                i += n;
        }
        return true;
}

char *http_utf8_scrub(const char *s)
{
        const unsigned char *p = (const unsigned char *)s;
        size_t len = strlen(s);
        char *out = malloc(len + 1);

        if (!out)
                return NULL;
        for (size_t i = 0; i < len;) {
                size_t n = utf8_seq_len(p + i, len - i);

                if (n == 0) {
                        out[i++] = '?';
                        continue;
                }
                memcpy(out + i, s + i, n);
                i += n;
        }
        out[len] = '\0';
        return out;
}

void http_req_params_release(struct http_req *req)
{
        for (size_t i = 0; i < req->n_params; i++)
                free(req->params[i].value);
        req->n_params = 0;
}

/* Next segment of *cur (after skipping one '/'); returns false at the end. */
static bool next_segment(const char **cur, const char **ret_start, size_t *ret_len)
{
        const char *p = *cur, *end;

        if (*p != '/')
                return false;
        p++;
        end = strchrnul(p, '/');
        *ret_start = p;
        *ret_len = (size_t)(end - p);
        *cur = end;
        return true;
}

/* Stores the decoded value[0..len) as the next capture, named after the pattern segment at ps. */
static int capture(struct http_param *params, size_t *n_params, const char *ps, const char *value,
                   size_t len)
{
        int r;

        if (*n_params >= HTTP_PARAMS_MAX)
                return -E2BIG;
        r = percent_decode(value, len, &params[*n_params].value);
        if (r < 0)
                return r;
        params[*n_params].name = ps + 1; /* not NUL-terminated: fixed by the caller */
        (*n_params)++;
        return 0;
}

/* Matches path against pattern; captures into params. Returns 1 match, 0 no match, <0 error. */
static int match_one(const char *pattern, const char *path, struct http_param *params,
                     size_t *n_params)
{
        const char *pc = pattern, *uc = path;
        const char *ps, *us;
        size_t pl, ul;
        int r;

        *n_params = 0;
        while (next_segment(&pc, &ps, &pl)) {
                if (pl >= 3 && ps[0] == '{' && ps[pl - 1] == '}' && ps[pl - 2] == '+') {
                        /* greedy tail: the rest of the path, at least one character */
                        if (*uc != '/' || uc[1] == '\0')
                                return 0;
                        r = capture(params, n_params, ps, uc + 1, strlen(uc + 1));
                        return r < 0 ? r : 1;
                }
                if (!next_segment(&uc, &us, &ul))
                        return 0;
                if (pl >= 2 && ps[0] == '{' && ps[pl - 1] == '}') {
                        if (ul == 0)
                                return 0;
                        r = capture(params, n_params, ps, us, ul);
                        if (r < 0)
                                return r;
                } else if (pl != ul || memcmp(ps, us, pl) != 0)
                        return 0;
        }
        return *uc == '\0' ? 1 : 0;
}

static void release_params(struct http_param *params, size_t n)
{
        for (size_t i = 0; i < n; i++) {
                free(params[i].value);
                params[i].value = NULL;
        }
}

int http_route_match(const struct http_route *table, size_t n, const char *method, const char *path,
                     struct http_req *req)
{
        struct http_param params[HTTP_PARAMS_MAX] = { 0 };
        bool path_matched = false;
        size_t n_params = 0;
        int r;

        for (size_t i = 0; i < n; i++) {
                r = match_one(table[i].pattern, path, params, &n_params);
                if (r < 0) {
                        release_params(params, n_params);
                        return r;
                }
                if (r == 0) {
                        release_params(params, n_params);
                        continue;
                }
                if (!streq(table[i].method, method)) {
                        path_matched = true;
                        release_params(params, n_params);
                        continue;
                }
                http_req_params_release(req);
                memcpy(req->params, params, sizeof(params));
                req->n_params = n_params;
                req->route_data = table[i].data;
                return (int)i;
        }
        return path_matched ? -EOPNOTSUPP : -ENOENT;
}

const char *http_req_param(const struct http_req *req, const char *name)
{
        size_t len = strlen(name);

        for (size_t i = 0; i < req->n_params; i++) {
                const char *pn = req->params[i].name;
                /* pattern names end at '}' or '+}' */
                if (strneq(pn, name, len) && (pn[len] == '}' || pn[len] == '+'))
                        return req->params[i].value;
        }
        return NULL;
}
