/* SPDX-License-Identifier: Apache-2.0 */
#include "ui/static-path.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

int ui_static_path(const char *path, char *ret, size_t len)
{
        const char *seg;
        size_t n;

        if (!path || path[0] != '/')
                return -EINVAL;
        if (streq(path, "/"))
                path = "/index.html";
        n = strlen(path + 1);
        if (n >= len || n >= UI_STATIC_PATH_MAX)
                return -ENAMETOOLONG;
        for (const char *p = path; *p; p++)
                if ((unsigned char)*p < 0x20 || *p == 0x7f || *p == '\\')
                        return -EINVAL;
        seg = path + 1;
        for (;;) {
                const char *e = strchr(seg, '/');
                size_t sl = e ? (size_t)(e - seg) : strlen(seg);

                /* empty (//, trailing /), ".", ".." and hidden names never name a file */
                if (sl == 0 || seg[0] == '.')
                        return -EINVAL;
                if (!e)
                        break;
                seg = e + 1;
        }
        memcpy(ret, path + 1, n + 1);
        return 0;
}

static const struct {
        const char *ext;
        const char *type;
} types[] = {
        { "html", "text/html; charset=utf-8" },
        { "js", "text/javascript; charset=utf-8" },
        { "mjs", "text/javascript; charset=utf-8" },
        { "css", "text/css; charset=utf-8" },
        { "json", "application/json" },
        { "map", "application/json" },
        { "svg", "image/svg+xml" },
        { "png", "image/png" },
        { "jpg", "image/jpeg" },
        { "jpeg", "image/jpeg" },
        { "gif", "image/gif" },
        { "ico", "image/x-icon" },
        { "webp", "image/webp" },
        { "woff", "font/woff" },
        { "woff2", "font/woff2" },
        { "ttf", "font/ttf" },
        { "otf", "font/otf" },
        { "txt", "text/plain; charset=utf-8" },
        { "wasm", "application/wasm" },
};

static const char *last_segment(const char *rel)
{
        const char *s = strrchr(rel, '/');

        return s ? s + 1 : rel;
}

const char *ui_content_type(const char *name)
{
        const char *dot = strrchr(last_segment(name), '.');

        if (dot)
                for (size_t i = 0; i < ELEMENTSOF(types); i++)
                        if (strcasecmp(dot + 1, types[i].ext) == 0)
                                return types[i].type;
        return "application/octet-stream";
}

static bool hash_char(char c)
{
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
               c == '_';
}

bool ui_static_immutable(const char *rel)
{
        const char *name = last_segment(rel), *dot, *p;
        size_t n = 0;

        if (strneq(rel, "assets/", 7))
                return true;
        dot = strrchr(name, '.');
        if (!dot || dot == name)
                return false;
        /* walk back over the hash before the extension: stem-HASH.ext or stem.HASH.ext */
        for (p = dot; p > name && hash_char(p[-1]); p--)
                n++;
        return n >= 8 && p > name && (p[-1] == '-' || p[-1] == '.');
}

const char *ui_cache_control(const char *rel)
{
        return ui_static_immutable(rel) ? "public, max-age=31536000, immutable" : "no-cache";
}

bool ui_spa_fallback(const char *rel)
{
        return !strchr(last_segment(rel), '.');
}
