/* SPDX-License-Identifier: Apache-2.0 */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "kube/status.h"

/* The table in status.h, row by row. */
Test(kube_status, errno_table)
{
        static const struct {
                int code;
                const char *reason;
                int want;
        } rows[] = {
                { 200, NULL, 0 },
                { 201, NULL, 0 },
                { 202, NULL, 0 },
                { 400, "BadRequest", -EINVAL },
                { 422, "Invalid", -EINVAL },
                { 401, "Unauthorized", -EACCES },
                { 403, "Forbidden", -EACCES },
                { 404, "NotFound", -ENOENT },
                { 409, "AlreadyExists", -EEXIST },
                { 409, "Conflict", -ESTALE },
                { 409, NULL, -ESTALE },
                { 410, "Gone", -ESTALE },
                { 410, "Expired", -ESTALE },
                { 413, "RequestEntityTooLarge", -E2BIG },
                { 429, "TooManyRequests", -EAGAIN },
                { 503, "ServiceUnavailable", -EAGAIN },
                { 504, "Timeout", -ETIMEDOUT },
                { 500, "InternalError", -EIO },
                { 502, NULL, -EIO },
                { 405, "MethodNotAllowed", -EINVAL },
                { 415, "UnsupportedMediaType", -EINVAL },
                { 0, NULL, -EIO },
                { 302, NULL, -EIO },
        };

        for (size_t i = 0; i < ELEMENTSOF(rows); i++)
                cr_assert_eq(kube_status_to_errno(rows[i].code, rows[i].reason), rows[i].want,
                             "HTTP %d %s: expected %d, got %d", rows[i].code,
                             rows[i].reason ? rows[i].reason : "(none)", rows[i].want,
                             kube_status_to_errno(rows[i].code, rows[i].reason));
}

Test(kube_status, decodes_metav1_status_body)
{
        static const char body[] =
                "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"metadata\":{},\"status\":\"Failure\","
                "\"message\":\"configmaps \\\"x\\\" not found\",\"reason\":\"NotFound\","
                "\"details\":{\"name\":\"x\",\"kind\":\"configmaps\"},\"code\":404}";
        struct kube_status st;

        cr_assert_eq(kube_status_from_response(404, body, strlen(body), &st), -ENOENT);
        cr_assert_eq(st.http_code, 404);
        cr_assert_str_eq(st.reason, "NotFound");
        cr_assert_str_eq(st.message, "configmaps \"x\" not found");
        cr_assert_eq(st.retry_after, 0);
}

Test(kube_status, already_exists_vs_conflict_comes_from_the_body)
{
        static const char exists[] =
                "{\"kind\":\"Status\",\"reason\":\"AlreadyExists\",\"code\":409}";
        static const char conflict[] = "{\"kind\":\"Status\",\"reason\":\"Conflict\",\"code\":409}";
        struct kube_status st;

        cr_assert_eq(kube_status_from_response(409, exists, strlen(exists), &st), -EEXIST);
        cr_assert_eq(kube_status_from_response(409, conflict, strlen(conflict), &st), -ESTALE);
}

Test(kube_status, retry_after_seconds_from_details)
{
        static const char body[] =
                "{\"kind\":\"Status\",\"reason\":\"TooManyRequests\","
                "\"message\":\"slow down\",\"details\":{\"retryAfterSeconds\":7},"
                "\"code\":429}";
        struct kube_status st;

        cr_assert_eq(kube_status_from_response(429, body, strlen(body), &st), -EAGAIN);
        cr_assert_eq(st.retry_after, 7);
}

Test(kube_status, non_status_bodies)
{
        struct kube_status st;
        static const char html[] = "<html>bad gateway</html>";
        static const char notstatus[] = "{\"kind\":\"ConfigMap\",\"reason\":\"NotFound\"}";

        cr_assert_eq(kube_status_from_response(502, html, strlen(html), &st), -EIO);
        cr_assert_str_eq(st.message, html, "a non-JSON body becomes the message");
        cr_assert_str_eq(st.reason, "");

        cr_assert_eq(kube_status_from_response(409, notstatus, strlen(notstatus), &st), -ESTALE,
                     "reason is only taken from a kind: Status body");
        cr_assert_str_eq(st.reason, "");

        cr_assert_eq(kube_status_from_response(500, NULL, 0, &st), -EIO);
        cr_assert_str_eq(st.message, "HTTP status 500");
        cr_assert_eq(kube_status_from_response(404, NULL, 0, NULL), -ENOENT, "ret may be NULL");
}

Test(kube_status, long_messages_are_truncated_and_control_chars_replaced)
{
        char body[2048];
        struct kube_status st;
        int n;

        n = snprintf(body, sizeof(body),
                     "{\"kind\":\"Status\",\"reason\":\"Invalid\",\"message\":\"");
        for (int i = 0; i < 1500; i++)
                body[n++] = 'm';
        n += snprintf(body + n, sizeof(body) - (size_t)n, "\\n\"}");
        cr_assert_eq(kube_status_from_response(422, body, (size_t)n, &st), -EINVAL);
        cr_assert_eq(strlen(st.message), sizeof(st.message) - 1);

        cr_assert_eq(kube_status_from_response(400, "a\nb", 3, &st), -EINVAL);
        cr_assert_str_eq(st.message, "a b");
}

Test(kube_status, watch_error_event_object)
{
        json_t *o = json_loads("{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"metadata\":{},"
                               "\"status\":\"Failure\",\"message\":\"too old resource version: "
                               "123 (456)\",\"reason\":\"Expired\",\"code\":410}",
                               0, NULL);
        json_t *nocode = json_loads("{\"kind\":\"Status\",\"reason\":\"Gone\"}", 0, NULL);
        json_t *ok = json_loads("{\"kind\":\"Status\",\"code\":200}", 0, NULL);
        struct kube_status st;

        cr_assert_eq(kube_status_from_json(o, &st), -ESTALE);
        cr_assert_eq(st.http_code, 410);
        cr_assert_str_eq(st.reason, "Expired");
        cr_assert_str_eq(st.message, "too old resource version: 123 (456)");

        cr_assert_eq(kube_status_from_json(nocode, &st), -ESTALE,
                     "Gone without a code is still 410");
        cr_assert_eq(kube_status_from_json(ok, &st), -EIO, "an ERROR event is never success");
        cr_assert_eq(kube_status_from_json(NULL, &st), -EBADMSG);
        json_decref(o);
        json_decref(nocode);
        json_decref(ok);
}

Test(kube_status, as_the_common_error_detail)
{
        static const char body[] = "{\"kind\":\"Status\",\"code\":409,\"reason\":\"AlreadyExists\","
                                   "\"message\":\"trainedmodels \\\"m\\\" already exists\"}";
        struct kube_status st = { 0 };
        struct error_detail e = { 0 };

        cr_assert_eq(kube_status_from_response(409, body, strlen(body), &st), -EEXIST);
        cr_assert_eq(kube_status_to_error_detail(&st, &e), -EEXIST);
        cr_assert_eq(e.kind, ERROR_CONFLICT);
        cr_assert_eq(e.error, -EEXIST);
        cr_assert_eq(e.status, 409);
        cr_assert_str_eq(e.message, "trainedmodels \"m\" already exists");

        st = (struct kube_status){ .http_code = 0 };
        (void)snprintf(st.message, sizeof(st.message), "Connection refused");
        cr_assert_eq(kube_status_to_error_detail(&st, &e), -EIO);
        cr_assert_eq(e.kind, ERROR_UNAVAILABLE);
        cr_assert_eq(e.status, 0);
        cr_assert_str_eq(e.message, "Connection refused");

        st = (struct kube_status){ .http_code = 404 };
        cr_assert_eq(kube_status_to_error_detail(&st, &e), -ENOENT);
        cr_assert_eq(e.kind, ERROR_NOT_FOUND);
        st.http_code = 422;
        cr_assert_eq(kube_status_to_error_detail(&st, NULL), -EINVAL);
        cr_assert_eq(kube_status_to_error_detail(&st, &e), -EINVAL);
        cr_assert_eq(e.kind, ERROR_INVALID);
        st.http_code = 500;
        (void)kube_status_to_error_detail(&st, &e);
        cr_assert_eq(e.kind, ERROR_INTERNAL);
}
