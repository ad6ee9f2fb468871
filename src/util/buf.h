/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

/*
 * struct buf: a growing byte buffer with a mandatory size cap (curl's dynbuf with "toobig").
 *
 * Invariants:
 *  - p is NULL (nothing appended yet) or points at len bytes followed by a NUL;
 *  - len < max; an append that would reach max fails with -E2BIG and leaves the buffer unchanged;
 *  - a failed append (-E2BIG, -ENOMEM) leaves the contents valid; the caller still releases them.
 */

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>

#include "util/macro.h"

struct buf {
        char *p;    /* owned; NUL-terminated when non-NULL */
        size_t len; /* bytes used, excluding the NUL */
        size_t cap; /* bytes allocated */
        size_t max; /* hard limit on len + 1 */
};

#define BUF_INIT(limit) ((struct buf){ .p = NULL, .len = 0, .cap = 0, .max = (limit) })

void buf_init(struct buf *b, size_t max);
/* Frees the contents; the buffer may be buf_init()ed again. */
void buf_release(struct buf *b);
/* Empties the buffer but keeps its allocation and limit. */
void buf_reset(struct buf *b);

_warn_unused_result_ int buf_append(struct buf *b, const void *data, size_t len);
_warn_unused_result_ int buf_puts(struct buf *b, const char *s);
_warn_unused_result_ int buf_putc(struct buf *b, char c);
_warn_unused_result_ int buf_printf(struct buf *b, const char *fmt, ...) _printf_(2, 3);
/* A write callback of the shape libcurl's CURLOPT_WRITEFUNCTION takes: appends size * n bytes of p
 * to the struct buf at userdata; returns 0 (libcurl then fails the transfer with
 * CURLE_WRITE_ERROR) past the buffer's cap or on OOM, else size * n. */
size_t buf_write_cb(char *p, size_t size, size_t n, void *userdata);
_warn_unused_result_ int buf_vprintf(struct buf *b, const char *fmt, va_list ap) _printf_(2, 0);
/*
 * Appends the len bytes at s as a quoted JSON string, escaped as jansson's json_dumps() does:
 * \" \\ \b \f \n \r \t, other bytes below 0x20 (NUL included) as \u00XX; every other byte as is.
 */
_warn_unused_result_ int buf_put_json_string(struct buf *b, const char *s, size_t len);

/*
 * Moves the contents out: returns an owned NUL-terminated string (an empty string when nothing was
 * appended), NULL on OOM. Stores the length in *ret_len when ret_len is set. The buffer is reset.
 */
char *buf_take(struct buf *b, size_t *ret_len);

/* Returns the contents as a NUL-terminated string, borrowed; "" when empty. */
const char *buf_str(const struct buf *b);

static inline void buf_releasep(struct buf *b)
{
        buf_release(b);
}
