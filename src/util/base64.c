/* SPDX-License-Identifier: Apache-2.0 */
#include "util/base64.h"

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static const char alphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

char *base64_encode(const void *data, size_t len)
{
        const unsigned char *p = data;
        char *out, *o;

        if (len > SIZE_MAX / 2)
                return NULL;
        out = malloc((len + 2) / 3 * 4 + 1);
        if (!out)
                return NULL;
        o = out;
        for (size_t i = 0; i < len; i += 3) {
                uint32_t v = (uint32_t)p[i] << 16;
                size_t rem = len - i;

                if (rem > 1)
                        v |= (uint32_t)p[i + 1] << 8;
                if (rem > 2)
                        v |= p[i + 2];
                *o++ = alphabet[(v >> 18) & 63];
                *o++ = alphabet[(v >> 12) & 63];
                *o++ = (char)(rem > 1 ? alphabet[(v >> 6) & 63] : '=');
                *o++ = (char)(rem > 2 ? alphabet[v & 63] : '=');
        }
        *o = 0;
        return out;
}

static int value_of(char c)
{
        const char *p;

        if (c == 0)
                return -1;
        p = strchr(alphabet, c);
        return p ? (int)(p - alphabet) : -1;
}

int base64_decode(const char *s, char **ret, size_t *ret_len)
{
        size_t len = strlen(s), n = 0;
        unsigned char *out;

        if (len % 4 != 0)
                return -EINVAL;
        out = malloc(len / 4 * 3 + 1);
        if (!out)
                return -ENOMEM;
        for (size_t i = 0; i < len; i += 4) {
                int a = value_of(s[i]), b = value_of(s[i + 1]);
                int c = s[i + 2] == '=' ? -2 : value_of(s[i + 2]);
                int d = s[i + 3] == '=' ? -2 : value_of(s[i + 3]);
                bool last = i + 4 == len;

                if (a < 0 || b < 0 || c == -1 || d == -1 || (!last && (c < 0 || d < 0)) ||
                    (c == -2 && d != -2)) {
                        free(out);
                        return -EINVAL;
                }
                out[n++] = (unsigned char)((a << 2) | (b >> 4));
                if (c >= 0)
                        out[n++] = (unsigned char)(((b & 15) << 4) | (c >> 2));
                if (d >= 0)
                        out[n++] = (unsigned char)(((c & 3) << 6) | d);
        }
        out[n] = 0;
        *ret = (char *)out;
        if (ret_len)
                *ret_len = n;
        return 0;
}
