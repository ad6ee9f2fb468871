/* SPDX-License-Identifier: Apache-2.0 */
#include "util/buf.h"

#include <errno.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

void buf_init(struct buf *b, size_t max)
{
        *b = BUF_INIT(max);
}

void buf_release(struct buf *b)
{
        free(b->p);
        b->p = NULL;
        b->len = 0;
        b->cap = 0;
}

void buf_reset(struct buf *b)
{
        b->len = 0;
        if (b->p)
                b->p[0] = '\0';
}

static int buf_reserve(struct buf *b, size_t extra)
{
        size_t need, cap;
        char *p;

        if (__builtin_add_overflow(b->len, extra, &need) || __builtin_add_overflow(need, 1, &need))
                return -E2BIG;
        if (need > b->max)
                return -E2BIG;
        if (need <= b->cap)
                return 0;
        cap = b->cap ? b->cap : 64;
        while (cap < need) {
                if (cap > SIZE_MAX / 2) {
                        cap = need;
                        break;
                }
                cap *= 2;
        }
        if (cap > b->max)
                cap = b->max;
        p = realloc(b->p, cap);
        if (!p)
                return -ENOMEM;
        b->p = p;
        b->cap = cap;
        return 0;
}

int buf_append(struct buf *b, const void *data, size_t len)
{
        int r;

        r = buf_reserve(b, len);
        if (r < 0)
                return r;
        if (len > 0)
                memcpy(b->p + b->len, data, len);
        b->len += len;
        b->p[b->len] = '\0';
        return 0;
}

int buf_puts(struct buf *b, const char *s)
{
        return buf_append(b, s, strlen(s));
}

int buf_putc(struct buf *b, char c)
{
        return buf_append(b, &c, 1);
}

static const char *json_short_escape(unsigned char c)
{
        switch (c) {
        case '"':
                return "\\\"";
        case '\\':
                return "\\\\";
        case '\b':
                return "\\b";
        case '\f':
                return "\\f";
        case '\n':
                return "\\n";
        case '\r':
                return "\\r";
        case '\t':
                return "\\t";
        default:
                return NULL;
        }
}

int buf_put_json_string(struct buf *b, const char *s, size_t len)
{
        size_t run = 0;
        int r = buf_putc(b, '"');

        for (size_t i = 0; i < len && r >= 0; i++) {
                unsigned char c = (unsigned char)s[i];
                const char *e;

                if (c >= 0x20 && c != '"' && c != '\\')
                        continue;
                r = buf_append(b, s + run, i - run);
                run = i + 1;
                if (r < 0)
                        break;
                e = json_short_escape(c);
                r = e ? buf_puts(b, e) : buf_printf(b, "\\u%04X", (unsigned)c);
        }
        if (r >= 0)
                r = buf_append(b, s + run, len - run);
        return r < 0 ? r : buf_putc(b, '"');
}

int buf_vprintf(struct buf *b, const char *fmt, va_list ap)
{
        va_list aq;
        int n, r;

        va_copy(aq, ap);
        n = vsnprintf(NULL, 0, fmt, aq);
        va_end(aq);
        if (n < 0)
                return -EINVAL;
        r = buf_reserve(b, (size_t)n);
        if (r < 0)
                return r;
        (void)vsnprintf(b->p + b->len, (size_t)n + 1, fmt, ap);
        b->len += (size_t)n;
        return 0;
}

int buf_printf(struct buf *b, const char *fmt, ...)
{
        va_list ap;
        int r;

        va_start(ap, fmt);
        r = buf_vprintf(b, fmt, ap);
        va_end(ap);
        return r;
}

char *buf_take(struct buf *b, size_t *ret_len)
{
        char *p;

        if (!b->p) {
                p = strdup("");
                if (!p)
                        return NULL;
        } else
                p = b->p;
        if (ret_len)
                *ret_len = b->len;
        b->p = NULL;
        b->len = 0;
        b->cap = 0;
        return p;
}

const char *buf_str(const struct buf *b)
{
        return b->p ? b->p : "";
}

size_t buf_write_cb(char *p, size_t size, size_t n, void *userdata)
{
        size_t len;

        if (__builtin_mul_overflow(size, n, &len))
                return 0;
        return buf_append(userdata, p, len) < 0 ? 0 : len;
}
