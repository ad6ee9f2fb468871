/* SPDX-License-Identifier: Apache-2.0 */
#include "kube/status.h"

#include <stdio.h>
#include <string.h>

#include <jansson.h>

#include "json/json-util.h"

int kube_status_to_errno(int http_code, const char *reason)
{
        if (http_code >= 200 && http_code < 300)
                return 0;

        switch (http_code) {
        case 400:
        case 422:
                return -EINVAL;
        case 401:
        case 403:
                return -EACCES;
        case 404:
                return -ENOENT;
        case 409:
                if (reason && streq(reason, "AlreadyExists"))
                        return -EEXIST;
                return -ESTALE;
        case 410:
                return -ESTALE;
        case 413:
                return -E2BIG;
        case 429:
        case 503:
                return -EAGAIN;
        case 504:
                return -ETIMEDOUT;
        default:
                break;
        }

        /* Other 4xx (405 MethodNotAllowed, 406, 415 ...) are requests we should not have sent. */
        if (http_code >= 400 && http_code < 500)
                return -EINVAL;
        /* Other 5xx, 1xx/3xx and "no response" */
        return -EIO;
}

static enum error_kind status_kind(int http_code)
{
        switch (http_code) {
        case 400:
        case 422:
                return ERROR_INVALID;
        case 404:
                return ERROR_NOT_FOUND;
        case 409:
                return ERROR_CONFLICT;
        case 0:
        case 429:
        case 503:
        case 504:
                return ERROR_UNAVAILABLE;
        default:
                return ERROR_INTERNAL;
        }
}

int kube_status_to_error_detail(const struct kube_status *st, struct error_detail *ret)
{
        int r = kube_status_to_errno(st->http_code, st->reason);

        if (!ret)
                return r;
        *ret = (struct error_detail){ .status = st->http_code };
        return error_detail_set(ret, status_kind(st->http_code), r, "%s", st->message);
}

/* Copies s into dst (size n), truncating, replacing control characters with spaces. */
static void copy_text(char *dst, size_t n, const char *s, size_t len)
{
        size_t i;

        if (n == 0)
                return;
        for (i = 0; i < len && i + 1 < n && s[i] != '\0'; i++) {
                dst[i] = s[i];
                if ((unsigned char)s[i] < 0x20)
                        dst[i] = ' ';
        }
        dst[i] = '\0';
}

static void status_fill_from_json(const json_t *status, struct kube_status *ret)
{
        const char *s;
        json_t *v;

        s = json_string_value(json_object_get(status, "reason"));
        if (s)
                copy_text(ret->reason, sizeof(ret->reason), s, strlen(s));
        s = json_string_value(json_object_get(status, "message"));
        if (s)
                copy_text(ret->message, sizeof(ret->message), s, strlen(s));

        v = json_get_path(status, "details", "retryAfterSeconds", NULL);
        if (json_is_integer(v) && json_integer_value(v) > 0 && json_integer_value(v) < 86400)
                ret->retry_after = (unsigned)json_integer_value(v);
}

int kube_status_from_response(int http_code, const char *body, size_t len, struct kube_status *ret)
{
        json_auto_t *v = NULL;
        const char *kind;

        if (!ret)
                return kube_status_to_errno(http_code, NULL);

        *ret = (struct kube_status){ .http_code = http_code };

        if (body && len > 0 && json_parse_bounded(body, len, &v, /* reterr= */ NULL) >= 0)
                kind = json_string_value(json_object_get(v, "kind"));
        else
                kind = NULL;
        if (kind && streq(kind, "Status"))
                status_fill_from_json(v, ret);
        else if (body && len > 0)
                copy_text(ret->message, sizeof(ret->message), body, len);

        if (ret->message[0] == '\0')
                (void)snprintf(ret->message, sizeof(ret->message), "HTTP status %d", http_code);

        return kube_status_to_errno(http_code, ret->reason);
}

int kube_status_from_json(const json_t *status, struct kube_status *ret)
{
        struct kube_status st = { 0 };
        json_t *code;
        int r;

        if (!json_is_object(status)) {
                if (ret) {
                        *ret = (struct kube_status){ 0 };
                        (void)snprintf(ret->message, sizeof(ret->message),
                                       "watch error event without a Status object");
                }
                return -EBADMSG;
        }

        code = json_object_get(status, "code");
        if (json_is_integer(code) && json_integer_value(code) >= 100 &&
            json_integer_value(code) < 600)
                st.http_code = (int)json_integer_value(code);
        status_fill_from_json(status, &st);

        if (ret)
                *ret = st;
        if (st.http_code == 0)
                /* A Status without a code: client-go treats Expired/Gone reasons as 410 */
                return streq(st.reason, "Expired") || streq(st.reason, "Gone") ? -ESTALE : -EIO;
        /* An ERROR event is a failure even if its code says otherwise */
        r = kube_status_to_errno(st.http_code, st.reason);
        return r < 0 ? r : -EIO;
}
