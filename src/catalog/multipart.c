/* SPDX-License-Identifier: Apache-2.0 */
#include "catalog/multipart.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#define BOUNDARY_MAX 200U

static const char *memmem_str(const char *h, size_t hl, const char *n)
{
        return memmem(h, hl, n, strlen(n));
}

/* The "--<boundary>" delimiter of a multipart/form-data content type into delim. */
static int multipart_delimiter(const char *content_type, char *delim, size_t n)
{
        const char *b;
        size_t blen;

        if (!content_type || strncasecmp(content_type, "multipart/form-data", 19) != 0)
                return -EINVAL;
        b = strcasestr(content_type, "boundary=");
        if (!b)
                return -EINVAL;
        b += strlen("boundary=");
        blen = strcspn(b, ";");
        if (blen >= 2 && b[0] == '"' && b[blen - 1] == '"') {
                b++;
                blen -= 2;
        }
        if (blen == 0 || blen > BOUNDARY_MAX)
                return -EINVAL;
        (void)snprintf(delim, n, "--%.*s", (int)blen, b);
        return 0;
}

/* Whether the part headers [hdr, hdr_end) say name="<name>" (not the tail of filename="..."). */
static bool part_is_named(const char *hdr, const char *hdr_end, const char *name)
{
        char want[300];
        const char *h = hdr;
        size_t hl = (size_t)(hdr_end - hdr);

        (void)snprintf(want, sizeof(want), "name=\"%s\"", name);
        while (hl > 0) {
                const char *f = memmem_str(h, hl, want);

                if (!f)
                        return false;
                if (f == hdr || f[-1] == ' ' || f[-1] == ';' || f[-1] == '\t')
                        return true;
                hl -= (size_t)(f + 1 - h);
                h = f + 1;
        }
        return false;
}

int catalog_multipart_find(const char *content_type, const char *body, size_t len, const char *name,
                           const char **ret_data, size_t *ret_len)
{
        const char *p, *end = body + len;
        char delim[BOUNDARY_MAX + 3], crlf_delim[BOUNDARY_MAX + 5];
        int r;

        r = multipart_delimiter(content_type, delim, sizeof(delim));
        if (r < 0)
                return r;
        (void)snprintf(crlf_delim, sizeof(crlf_delim), "\r\n%s", delim);
        p = memmem_str(body, len, delim);
        for (unsigned parts = 0; p && parts < 64; parts++) {
                const char *hdr = p + strlen(delim), *hdr_end, *data, *next;

                if (end - hdr >= 2 && hdr[0] == '-' && hdr[1] == '-')
                        return -ENOENT; /* closing delimiter */
                hdr_end = memmem_str(hdr, (size_t)(end - hdr), "\r\n\r\n");
                if (!hdr_end)
                        return -EINVAL;
                data = hdr_end + 4;
                next = memmem_str(data, (size_t)(end - data), crlf_delim);
                if (!next)
                        return -EINVAL;
                if (part_is_named(hdr, hdr_end, name)) {
                        *ret_data = data;
                        *ret_len = (size_t)(next - data);
                        return 0;
                }
                p = next + 2;
        }
        return -ENOENT;
}
