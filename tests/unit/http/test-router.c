/* SPDX-License-Identifier: Apache-2.0 */
#include <criterion/criterion.h>
#include <string.h>

#include "http/router.h"

static int dummy(void *u, struct http_req *req, struct http_resp *resp)
{
        (void)u;
        (void)req;
        (void)resp;
        return 0;
}

static const struct http_route routes[] = {
        { "GET", "/api/v1/things", dummy, NULL },
        { "POST", "/api/v1/things", dummy, NULL },
        { "GET", "/api/v1/things/{id}", dummy, NULL },
        { "GET", "/api/v1/things/{id}/parts/{part}", dummy, NULL },
        { "GET", "/api/v1/sources/{source}/models/{name+}", dummy, NULL },
};

Test(router, exact_and_params)
{
        struct http_req req = { 0 };

        cr_assert_eq(http_route_match(routes, ELEMENTSOF(routes), "POST", "/api/v1/things", &req),
                     1);
        cr_assert_eq(http_route_match(routes, ELEMENTSOF(routes), "GET",
                                      "/api/v1/things/a%20b/parts/7", &req),
                     3);
        cr_assert_str_eq(http_req_param(&req, "id"), "a b");
        cr_assert_str_eq(http_req_param(&req, "part"), "7");
        cr_assert_null(http_req_param(&req, "missing"));
        http_req_params_release(&req);
}

Test(router, greedy_tail_keeps_slashes)
{
        struct http_req req = { 0 };

        cr_assert_eq(http_route_match(routes, ELEMENTSOF(routes), "GET",
                                      "/api/v1/sources/s1/models/org/model%2Fv2", &req),
                     4);
        cr_assert_str_eq(http_req_param(&req, "source"), "s1");
        cr_assert_str_eq(http_req_param(&req, "name"), "org/model/v2");
        http_req_params_release(&req);
}

Test(router, not_found_and_method_not_allowed)
{
        struct http_req req = { 0 };

        cr_assert_eq(http_route_match(routes, ELEMENTSOF(routes), "GET", "/api/v1/nothing", &req),
                     -ENOENT);
        cr_assert_eq(http_route_match(routes, ELEMENTSOF(routes), "DELETE", "/api/v1/things", &req),
                     -EOPNOTSUPP);
        cr_assert_eq(http_route_match(routes, ELEMENTSOF(routes), "GET", "/api/v1/things/", &req),
                     -ENOENT, "an empty segment is not an id");
        cr_assert_eq(http_route_match(routes, ELEMENTSOF(routes), "GET", "/api/v1/things/%zz",
                                      &req),
                     -EINVAL);
        cr_assert_eq(http_route_match(routes, ELEMENTSOF(routes), "GET", "/api/v1/things/%00",
                                      &req),
                     -EINVAL);
        cr_assert_eq(req.n_params, 0);
}

Test(router, utf8_validation)
{
        static const char *const good[] = {
                "", "abc", "caf\xc3\xa9", "\xe2\x82\xac", "\xf0\x9f\x98\x80", "\xf4\x8f\xbf\xbf"
        };
        static const char *const bad[] = {
                "\xff",             /* never in UTF-8 */
                "\xc0\xaf",         /* overlong '/' */
                "\xe0\x80\xaf",     /* overlong, three bytes */
                "\xed\xa0\x80",     /* a UTF-16 surrogate */
                "\xf4\x90\x80\x80", /* past U+10FFFF */
                "\xc3",             /* truncated */
                "\x80",             /* a lone continuation byte */
                "\xe2\x82",         /* truncated, three bytes */
        };

        for (size_t i = 0; i < ELEMENTSOF(good); i++)
                cr_assert(http_utf8_valid(good[i], strlen(good[i])), "good %zu", i);
        for (size_t i = 0; i < ELEMENTSOF(bad); i++)
                cr_assert_not(http_utf8_valid(bad[i], strlen(bad[i])), "bad %zu", i);
}
