/* SPDX-License-Identifier: Apache-2.0 */
/* http/errors: the error-kind table, the reason phrases and the {code, message} body. */
#include <criterion/criterion.h>
#include <errno.h>
#include <jansson.h>

#include "http/errors.h"

static void assert_body(enum http_error_kind k, const char *code, const char *message)
{
        json_t *b = http_error_body(k, message);

        cr_assert_not_null(b);
        cr_assert_eq(json_object_size(b), 2);
        cr_assert_str_eq(json_string_value(json_object_get(b, "code")), code);
        cr_assert_str_eq(json_string_value(json_object_get(b, "message")), message);
        json_decref(b);
}

Test(errors, kinds_to_status_and_code)
{
        cr_assert_eq(http_error_status(HTTP_ERR_INVALID), 400);
        cr_assert_eq(http_error_status(HTTP_ERR_UNPROCESSABLE), 422);
        cr_assert_eq(http_error_status(HTTP_ERR_REQUIRED_FIELD), 422);
        cr_assert_eq(http_error_status(HTTP_ERR_NOT_FOUND), 404);
        cr_assert_eq(http_error_status(HTTP_ERR_METHOD), 405);
        cr_assert_eq(http_error_status(HTTP_ERR_CONFLICT), 409);
        cr_assert_eq(http_error_status(HTTP_ERR_TOO_LARGE), 413);
        cr_assert_eq(http_error_status(HTTP_ERR_UNAVAILABLE), 503);
        cr_assert_eq(http_error_status(HTTP_ERR_INTERNAL), 500);
        cr_assert_eq(http_error_status(HTTP_ERR__MAX), 500, "out of range is 500");

        assert_body(HTTP_ERR_INVALID, "Bad Request", "bad");
        assert_body(HTTP_ERR_UNPROCESSABLE, "Unprocessable Entity", "x");
        /* upstream's generated server: 422 for a zero required field, code "Bad Request" */
        assert_body(HTTP_ERR_REQUIRED_FIELD, "Bad Request", "required field 'name' is zero value.");
        assert_body(HTTP_ERR_NOT_FOUND, "Not Found", "");
        assert_body(HTTP_ERR_CONFLICT, "Conflict", "dup");
        assert_body(HTTP_ERR_TOO_LARGE, "Request Entity Too Large", "request body too large");
        assert_body(HTTP_ERR_UNAVAILABLE, "Service Unavailable", "down");
        assert_body(HTTP_ERR_INTERNAL, "Internal Server Error", "oops");
}

Test(errors, reason_phrases)
{
        cr_assert_str_eq(http_reason_phrase(400), "Bad Request");
        cr_assert_str_eq(http_reason_phrase(422), "Unprocessable Entity");
        cr_assert_str_eq(http_reason_phrase(405), "Method Not Allowed");
        cr_assert_str_eq(http_reason_phrase(299), "Internal Server Error");
        cr_assert_str_eq(http_status_text(204), "No Content");
        cr_assert_null(http_status_text(299));
}

Test(errors, errno_table)
{
        cr_assert_eq(http_error_kind_from_errno(-EINVAL), HTTP_ERR_INVALID);
        cr_assert_eq(http_error_kind_from_errno(-ENOENT), HTTP_ERR_NOT_FOUND);
        cr_assert_eq(http_error_kind_from_errno(-EEXIST), HTTP_ERR_CONFLICT);
        cr_assert_eq(http_error_kind_from_errno(-ESTALE), HTTP_ERR_CONFLICT);
        cr_assert_eq(http_error_kind_from_errno(-E2BIG), HTTP_ERR_TOO_LARGE);
        cr_assert_eq(http_error_kind_from_errno(-ECONNREFUSED), HTTP_ERR_UNAVAILABLE);
        cr_assert_eq(http_error_kind_from_errno(-ENOMEM), HTTP_ERR_INTERNAL);
        cr_assert_eq(http_error_kind_from_errno(-EIO), HTTP_ERR_INTERNAL);
}

/* A message that echoes client input cut mid-character (schemathesis found a 500 on stepIds:
 * "invalid step ID '\xce\xa9...'" cut at 31 bytes) still makes a body, with '?' for each stray byte. */
Test(errors, message_with_broken_utf8_is_scrubbed)
{
        json_t *b = http_error_body(HTTP_ERR_INVALID, "step '\xce\xa9\xe2\x89' x\xff\xc0\xaf");

        cr_assert_not_null(b, "a message with invalid UTF-8 made no body");
        cr_assert_str_eq(json_string_value(json_object_get(b, "message")), "step '\xce\xa9?"
                                                                           "?' x???");
        json_decref(b);
        assert_body(HTTP_ERR_INVALID, "Bad Request", "\xce\xa9\xe2\x89\x88 ok");
}
