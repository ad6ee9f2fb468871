/* SPDX-License-Identifier: Apache-2.0 */
#include "registry/error.h"

#include <stdarg.h>
#include <stdio.h>

int reg_error_set(struct reg_error *err, enum reg_error_kind kind, int r, const char *fmt, ...)
{
        va_list ap;

        err->kind = kind;
        err->error = r;
        va_start(ap, fmt);
        (void)vsnprintf(err->message, sizeof(err->message), fmt, ap);
        va_end(ap);
        return r;
}
