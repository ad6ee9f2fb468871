/* SPDX-License-Identifier: Apache-2.0 */
#include "http/errors.h"

#include <errno.h>
#include <string.h>

#include "http/router.h"
#include "http/server.h"
#include "util/macro.h"

static const struct {
        unsigned status;
        unsigned code_status; /* the status whose reason phrase is the body's "code" */
} kinds[HTTP_ERR__MAX] = {
        [HTTP_ERR_INTERNAL] = { 500, 500 },      [HTTP_ERR_INVALID] = { 400, 400 },
        [HTTP_ERR_UNPROCESSABLE] = { 422, 422 }, [HTTP_ERR_REQUIRED_FIELD] = { 422, 400 },
        [HTTP_ERR_NOT_FOUND] = { 404, 404 },     [HTTP_ERR_METHOD] = { 405, 405 },
        [HTTP_ERR_CONFLICT] = { 409, 409 },      [HTTP_ERR_TOO_LARGE] = { 413, 413 },
        [HTTP_ERR_UNAVAILABLE] = { 503, 503 },
};

static const struct {
        unsigned status;
        const char *phrase;
} phrases[] = {
        { 100, "Continue" },
        { 200, "OK" },
        { 201, "Created" },
        { 202, "Accepted" },
        { 204, "No Content" },
        { 301, "Moved Permanently" },
        { 302, "Found" },
        { 303, "See Other" },
        { 304, "Not Modified" },
        { 307, "Temporary Redirect" },
        { 308, "Permanent Redirect" },
        { 400, "Bad Request" },
        { 401, "Unauthorized" },
        { 403, "Forbidden" },
        { 404, "Not Found" },
        { 405, "Method Not Allowed" },
        { 409, "Conflict" },
        { 413, "Request Entity Too Large" },
        { 414, "URI Too Long" },
        { 415, "Unsupported Media Type" },
        { 422, "Unprocessable Entity" },
        { 429, "Too Many Requests" },
        { 431, "Request Header Fields Too Large" },
        { 500, "Internal Server Error" },
        { 501, "Not Implemented" },
        { 503, "Service Unavailable" },
        { 505, "HTTP Version Not Supported" },
};

unsigned http_error_status(enum http_error_kind kind)
{
        if ((unsigned)kind >= HTTP_ERR__MAX)
                return 500;
        return kinds[kind].status;
}

const char *http_status_text(unsigned status)
{
        for (size_t i = 0; i < ELEMENTSOF(phrases); i++)
                if (phrases[i].status == status)
                        return phrases[i].phrase;
        return NULL;
}

const char *http_reason_phrase(unsigned status)
{
        const char *text = http_status_text(status);

        return text ? text : "Internal Server Error";
}

const char *http_error_code(enum http_error_kind kind)
{
        if ((unsigned)kind >= HTTP_ERR__MAX)
                return http_reason_phrase(500);
        return http_reason_phrase(kinds[kind].code_status);
}

enum http_error_kind http_error_kind_from_errno(int r)
{
        switch (r) {
        case -EINVAL:
                return HTTP_ERR_INVALID;
        case -ENOENT:
                return HTTP_ERR_NOT_FOUND;
        case -EEXIST:
        case -ESTALE:
                return HTTP_ERR_CONFLICT;
        case -E2BIG:
                return HTTP_ERR_TOO_LARGE;
        case -EAGAIN:
        case -EBUSY:
        case -ECONNREFUSED:
        case -ECONNRESET:
                return HTTP_ERR_UNAVAILABLE;
        default:
                return HTTP_ERR_INTERNAL;
        }
}

json_t *http_error_body(enum http_error_kind kind, const char *message)
{
        AUTOFREE char *scrubbed = NULL;

        /* a message may echo client input cut mid-character; JSON strings must be UTF-8 */
        if (message && !http_utf8_valid(message, strlen(message))) {
                scrubbed = http_utf8_scrub(message);
                if (!scrubbed)
                        return NULL;
                message = scrubbed;
        }
        return json_pack("{s:s, s:s}", "code", http_error_code(kind), "message",
                         message ? message : "");
}

void http_resp_set_error(struct http_resp *resp, enum http_error_kind kind, const char *message)
{
        json_t *body = http_error_body(kind, message);

        if (!body) {
                http_resp_set_text(resp, 500, "text/plain; charset=utf-8", "out of memory\n");
                return;
        }
        http_resp_set_json(resp, http_error_status(kind), body);
}
