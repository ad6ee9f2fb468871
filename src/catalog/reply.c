/* SPDX-License-Identifier: Apache-2.0 */
#include "catalog/reply.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "catalog/index.h"
#include "catalog/limits.h"
#include "catalog/sources.h"
#include "filterq/filterq.h"
#include "http/errors.h"
#include "util/parse-util.h"

int catalog__reply_error(struct http_resp *resp, unsigned status, const char *fmt, ...)
{
        char msg[1024];
        va_list ap;

        va_start(ap, fmt);
        if (vsnprintf(msg, sizeof(msg), fmt, ap) < 0)
                msg[0] = '\0'; /* an unprintable message: the status still says what happened */
        va_end(ap);
        http_resp_set_json(resp, status,
                           json_pack("{s:s, s:s}", "code", http_reason_phrase(status), "message",
                                     msg));
        return 0;
}

int catalog__reply_json(struct http_resp *resp, json_t *v)
{
        if (!v)
                return catalog__reply_error(resp, 500, "out of memory");
        http_resp_set_json(resp, 200, v);
        return 0;
}

/* Answers 200 with JSON text already serialized into text (copied). */
void catalog__reply_text_json(struct http_resp *resp, const struct buf *text)
{
        http_resp_set_text(resp, 200, NULL, buf_str(text));
}

/* Maps an internal failure to 500 with the upstream body (never logs: the caller's job). */
int catalog__reply_errno(struct http_resp *resp, int r)
{
        return catalog__reply_error(resp, 500, "internal error: %s",
                                    r == -ENOMEM ? "out of memory" : "failed");
}

/*
 * The answer for a failed listing: -EINVAL 400 with the index's message in err, -EDOM the type
 * mismatch, anything else 500.
 */
int catalog__reply_query_error(struct http_resp *resp, int r, const char *err)
{
        if (r == -EINVAL)
                return catalog__reply_error(resp, 400, "%s: bad request", err);
        if (r == -EDOM)
                return catalog__reply_error(resp, 400, CATALOG__TYPE_MISMATCH);
        return catalog__reply_errno(resp, r);
}

int catalog__parse_page(const struct http_req *req, struct catalog_page *page,
                        struct http_resp *resp)
{
        const char *ps = http_req_query(req, "pageSize");
        const char *so = http_req_query(req, "sortOrder");
        int32_t n;

        page->page_size = CATALOG_PAGE_SIZE_DEFAULT;
        if (ps && ps[0]) {
                if (safe_atoi32(ps, &n) < 0) {
                        catalog__reply_error(resp, 400,
                                             "invalid pageSize '%s': not a number: bad request",
                                             ps);
                        return -EINVAL;
                }
                if (n < 1) {
                        catalog__reply_error(
                                resp, 400, "invalid pageSize '%s': must be at least 1: bad request",
                                ps);
                        return -EINVAL;
                }
                page->page_size = (uint32_t)MIN((uint32_t)n, CATALOG_PAGE_SIZE_MAX);
        }
        page->desc = false;
        if (so && so[0]) {
                if (streq(so, "DESC"))
                        page->desc = true;
                else if (!streq(so, "ASC")) {
                        catalog__reply_error(
                                resp, 400,
                                "unsupported sort order '%s' (expected ASC or DESC): bad request",
                                so);
                        return -EINVAL;
                }
        }
        page->token = http_req_query(req, "nextPageToken");
        if (page->token && strlen(page->token) > CATALOG_TOKEN_MAX) {
                catalog__reply_error(resp, 400,
                                     "invalid nextPageToken: token too long: bad request");
                return -EINVAL;
        }
        return 0;
}

/* s[0..*len) without its leading and trailing blanks and tabs (*len updated). */
static const char *trim_blanks(const char *s, size_t *len)
{
        while (*len > 0 && (*s == ' ' || *s == '\t')) {
                s++;
                (*len)--;
        }
        while (*len > 0 && (s[*len - 1] == ' ' || s[*len - 1] == '\t'))
                (*len)--;
        return s;
}

/* Appends a copy of s[0..len) to the strv *v of n items. */
static int strv_push_n(char ***v, size_t *n, const char *s, size_t len)
{
        char **nv = reallocarray(*v, *n + 2, sizeof(**v));

        if (!nv)
                return -ENOMEM;
        *v = nv;
        nv[*n] = strndup(s, len);
        if (!nv[*n])
                return -ENOMEM;
        nv[++*n] = NULL;
        return 0;
}

/* Splits a comma-separated value into an owned strv of trimmed non-empty items. */
int catalog__split_csv(const char *s, char ***ret)
{
        CLEANUP(catalog_strv_freep) char **v = NULL;
        size_t n = 0;
        int r;

        v = calloc(1, sizeof(*v));
        if (!v)
                return -ENOMEM;
        while (s && *s) {
                const char *e = strchr(s, ',');
                size_t len = e ? (size_t)(e - s) : strlen(s);
                const char *b = trim_blanks(s, &len);

                if (len > 0) {
                        if (n >= (size_t)CATALOG_SOURCES_MAX * 4)
                                return -E2BIG;
                        r = strv_push_n(&v, &n, b, len);
                        if (r < 0)
                                return r;
                }
                s = e ? e + 1 : NULL;
        }
        *ret = TAKE_PTR(v);
        return 0;
}

/*
 * filterQuery text into *ret (NULL for none), with the type check of the model routes when
 * check_types. Answers 400 (500 for -ENOMEM) itself and returns < 0.
 */
int catalog__parse_filter(const char *fq, bool check_types, struct filterq_node **ret,
                          struct http_resp *resp)
{
        CLEANUP(filterq_freep) struct filterq_node *filter = NULL;
        char err[512];
        int r;

        r = filterq_parse(fq, &filter, err, sizeof(err));
        if (r == -ENOMEM) {
                catalog__reply_errno(resp, r);
                return r;
        }
        if (r < 0) {
                catalog__reply_error(resp, 400, "invalid filter query: %s: bad request", err);
                return -EINVAL;
        }
        if (check_types && catalog_filter_check_types(filter) == -EDOM) {
                catalog__reply_error(resp, 400, CATALOG__TYPE_MISMATCH);
                return -EINVAL;
        }
        *ret = TAKE_PTR(filter);
        return 0;
}
