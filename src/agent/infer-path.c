/* SPDX-License-Identifier: Apache-2.0 */
#include "agent/infer-path.h"

#include <stdbool.h>
#include <string.h>

static bool has_prefix(const char *p, size_t len, const char *prefix)
{
        size_t n = strlen(prefix);

        return len >= n && memcmp(p, prefix, n) == 0;
}

/* The path of an absolute-form target: after "scheme://authority"; the target itself else. */
static size_t path_start(const char *t, size_t len)
{
        const char *sep = memchr(t, '/', len);
        size_t i;

        if (len > 0 && t[0] == '/')
                return 0;
        if (!sep || sep == t || sep[-1] != ':' || (size_t)(sep - t) + 1 >= len || sep[1] != '/')
                return len; /* neither origin nor absolute form */
        for (i = (size_t)(sep - t) + 2; i < len && t[i] != '/'; i++)
                ;
        return i;
}

size_t infer_path_model(const char *target, size_t len, char *name)
{
        size_t start = path_start(target, len), end, i;
        const char *p = target + start;
        bool v1;

        name[0] = '\0';
        len -= start;
        end = 0;
        while (end < len && p[end] != '?' && p[end] != '#')
                end++;
        v1 = has_prefix(p, end, "/v1/models/");
        if (!v1 && !has_prefix(p, end, "/v2/models/"))
                return 0;
        p += strlen("/v1/models/");
        end -= strlen("/v1/models/");
        for (i = 0; i < end && p[i] != '/' && !(v1 && p[i] == ':'); i++)
                if ((unsigned char)p[i] <= 0x20 || (unsigned char)p[i] >= 0x7f)
                        return 0;
        if (i == 0 || i > INFER_PATH_MODEL_MAX || (v1 && i < end && p[i] == '/'))
                return 0;
        memcpy(name, p, i);
        name[i] = '\0';
        return i;
}
