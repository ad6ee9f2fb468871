/* SPDX-License-Identifier: Apache-2.0 */
/* The pure half of static serving: path checks, types, caching, SPA fallback. */
#include <criterion/criterion.h>
#include <errno.h>
#include <string.h>

#include "ui/static-path.h"

static int check(const char *path, char *out)
{
        return ui_static_path(path, out, UI_STATIC_PATH_MAX + 1);
}

Test(static_path, accepts_plain_paths)
{
        char rel[UI_STATIC_PATH_MAX + 1];

        cr_assert_eq(check("/", rel), 0);
        cr_assert_str_eq(rel, "index.html");
        cr_assert_eq(check("/assets/app-1234abcd.js", rel), 0);
        cr_assert_str_eq(rel, "assets/app-1234abcd.js");
        cr_assert_eq(check("/registered-models/3", rel), 0);
        cr_assert_str_eq(rel, "registered-models/3");
        cr_assert_eq(check("/a..b/c", rel), 0, "dots inside a name are fine");
}

Test(static_path, refuses_traversal_and_hidden)
{
        static const char *const bad[] = {
                "",          "assets/x.js", "/..",          "/../etc/passwd", "/assets/../../x",
                "/a/./b",    "/.",          "/.git/config", "/a//b",          "/a/",
                "/a\\..\\b", "/a\x01",      "/a\x7f",       "//etc/passwd",   "/.env",
        };
        char rel[UI_STATIC_PATH_MAX + 1];

        for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
                cr_assert_eq(check(bad[i], rel), -EINVAL, "'%s' must be refused", bad[i]);
        cr_assert_eq(ui_static_path(NULL, rel, sizeof(rel)), -EINVAL);
}

Test(static_path, length_limits)
{
        char rel[16], big[UI_STATIC_PATH_MAX + 8];

        cr_assert_eq(ui_static_path("/0123456789abcdef", rel, sizeof(rel)), -ENAMETOOLONG);
        memset(big, 'a', sizeof(big) - 1);
        big[0] = '/';
        big[sizeof(big) - 1] = '\0';
        {
                char out[sizeof(big)];

                cr_assert_eq(ui_static_path(big, out, sizeof(out)), -ENAMETOOLONG);
        }
}

Test(static_path, content_types)
{
        cr_assert_str_eq(ui_content_type("index.html"), "text/html; charset=utf-8");
        cr_assert_str_eq(ui_content_type("assets/app.JS"), "text/javascript; charset=utf-8");
        cr_assert_str_eq(ui_content_type("a/b.css"), "text/css; charset=utf-8");
        cr_assert_str_eq(ui_content_type("f.woff2"), "font/woff2");
        cr_assert_str_eq(ui_content_type("logo.svg"), "image/svg+xml");
        cr_assert_str_eq(ui_content_type("x.map"), "application/json");
        cr_assert_str_eq(ui_content_type("README"), "application/octet-stream");
        cr_assert_str_eq(ui_content_type("dir.js/file"), "application/octet-stream");
        cr_assert_str_eq(ui_content_type("x.exe"), "application/octet-stream");
}

Test(static_path, immutable_assets)
{
        cr_assert(ui_static_immutable("assets/anything.js"));
        cr_assert(ui_static_immutable("main-AB12CD34.js"));
        cr_assert(ui_static_immutable("chunk.1a2b3c4d5e.css"));
        cr_assert_not(ui_static_immutable("index.html"));
        cr_assert_not(ui_static_immutable("main-abc.js"), "a short suffix is no hash");
        cr_assert_not(ui_static_immutable("12345678.js"), "no stem");
        cr_assert_str_eq(ui_cache_control("index.html"), "no-cache");
        cr_assert_str_eq(ui_cache_control("assets/a.js"), "public, max-age=31536000, immutable");
}

Test(static_path, spa_fallback)
{
        cr_assert(ui_spa_fallback("registered-models/3"));
        cr_assert(ui_spa_fallback("catalog"));
        cr_assert_not(ui_spa_fallback("assets/missing.js"));
        cr_assert_not(ui_spa_fallback("favicon.ico"));
        cr_assert(ui_spa_fallback("v1.2/models"), "only the last segment counts");
}
