/* SPDX-License-Identifier: Apache-2.0 */
/*
 * multipart/form-data as POST /sources/preview receives it (catalog/multipart.h): the input is
 * the Content-Type, a NUL, then the body (not NUL-terminated: the parser gets its length).
 * Invariants: a part found lies wholly inside the body; -ENOENT and -EINVAL are the only other
 * answers; asking twice gives the same view.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "catalog/multipart.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check(const char *ct, const char *body, size_t len, const char *name)
{
        const char *part = NULL, *again = NULL;
        size_t n = 0, n2 = 0;
        int r = catalog_multipart_find(ct, body, len, name, &part, &n);
        int r2 = catalog_multipart_find(ct, body, len, name, &again, &n2);

        if (r != r2)
                __builtin_trap();
        if (r == 0) {
                if (!part || part < body || n > len || (size_t)(part - body) > len - n)
                        __builtin_trap();
                if (again != part || n2 != n)
                        __builtin_trap();
        } else if (r != -ENOENT && r != -EINVAL) {
                __builtin_trap();
        }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        const uint8_t *nul = memchr(data, 0, size);
        size_t ct_len = nul ? (size_t)(nul - data) : size;
        char *ct = malloc(ct_len + 1);
        char *body;
        size_t len = nul ? size - ct_len - 1 : 0;

        if (!ct)
                return 0;
        memcpy(ct, data, ct_len);
        ct[ct_len] = 0;
        body = malloc(len ? len : 1); /* exact size: ASan sees any read past the body */
        if (body) {
                if (len)
                        memcpy(body, nul + 1, len);
                check(ct, body, len, "config");
                check(ct, body, len, "catalogData");
                free(body);
        }
        free(ct);
        return 0;
}
