/* SPDX-License-Identifier: Apache-2.0 */
#include "catalog/glob.h"

#include <ctype.h>
#include <string.h>

static int fold(char c)
{
        return tolower((unsigned char)c);
}

/*
 * Iterative wildcard match with single backtracking point: linear in practice and never
 * exponential, so hostile patterns cannot stall a request (O(len(p) * len(s)) worst case).
 */
bool catalog_glob_match(const char *pattern, const char *name)
{
        const char *p = pattern, *s = name;
        const char *star = NULL, *resume = NULL;

        if (!pattern || !name)
                return false;

        while (*s) {
                if (*p == '*') {
                        star = p++;
                        resume = s;
                } else if (*p && fold(*p) == fold(*s)) {
                        p++;
                        s++;
                } else if (star) {
                        p = star + 1;
                        s = ++resume;
                } else
                        return false;
        }
        while (*p == '*')
                p++;
        return *p == '\0';
}

int catalog_glob_validate(const char *pattern)
{
        if (!pattern)
                return -EINVAL;
        for (const char *c = pattern; *c; c++)
                if (!isspace((unsigned char)*c))
                        return 0;
        return -EINVAL;
}

bool catalog_glob_included(char *const *included, char *const *excluded, const char *name)
{
        if (excluded)
                for (char *const *e = excluded; *e; e++)
                        if (catalog_glob_match(*e, name))
                                return false;
        if (!included || !included[0])
                return true;
        for (char *const *i = included; *i; i++)
                if (catalog_glob_match(*i, name))
                        return true;
        return false;
}
