/* SPDX-License-Identifier: Apache-2.0 */
#include "util/error-detail.h"

#include <stdarg.h>
#include <stdio.h>

int error_detail_setv(struct error_detail *e, enum error_kind kind, int r, const char *field,
                      const char *fmt, va_list ap)
{
        if (!e)
                return r;
        e->kind = kind;
        e->error = r;
        if (field)
                (void)snprintf(e->field, sizeof(e->field), "%s", field);
        (void)vsnprintf(e->message, sizeof(e->message), fmt, ap);
        return r;
}

int error_detail_set(struct error_detail *e, enum error_kind kind, int r, const char *fmt, ...)
{
        va_list ap;

        va_start(ap, fmt);
        r = error_detail_setv(e, kind, r, NULL, fmt, ap);
        va_end(ap);
        return r;
}

int error_detail_set_field(struct error_detail *e, enum error_kind kind, int r, const char *field,
                           const char *fmt, ...)
{
        va_list ap;

        va_start(ap, fmt);
        r = error_detail_setv(e, kind, r, field ? field : "", fmt, ap);
        va_end(ap);
        return r;
}

int error_detail_set_at(struct error_detail *e, int r, const char *file, unsigned line,
                        const char *fmt, ...)
{
        va_list ap;

        if (!e)
                return r;
        (void)snprintf(e->file, sizeof(e->file), "%s", file ? file : "");
        e->line = line;
        e->column = 0;
        va_start(ap, fmt);
        r = error_detail_setv(e, ERROR_INVALID, r, NULL, fmt, ap);
        va_end(ap);
        return r;
}

const char *error_detail_format(const struct error_detail *e, char *buf, size_t n)
{
        if (e->line > 0)
                (void)snprintf(buf, n, "%s:%u: %s", e->file, e->line, e->message);
        else if (e->file[0])
                (void)snprintf(buf, n, "%s: %s", e->file, e->message);
        else
                (void)snprintf(buf, n, "%s", e->message);
        return buf;
}
