/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

/*
 * The registry's error detail: what went wrong (kind), the errno and the message the client
 * sees. Pure code (codec, kinds, the filterQuery resolution) fills it; the HTTP handlers turn
 * the kind into a status through http/errors only.
 */

#include "util/macro.h"

enum reg_error_kind {
        REG_ERR_INTERNAL,      /* a bug, OOM or a failed store call: 500 */
        REG_ERR_INVALID,       /* malformed parameter or body: 400 */
        REG_ERR_UNPROCESSABLE, /* a required field is missing or zero: 422 */
        REG_ERR_NOT_FOUND,     /* 404 */
        REG_ERR_CONFLICT,      /* uniqueness: 409 */
        REG_ERR_UNAVAILABLE,   /* the database is down or busy, retry: 503 */
        REG_ERR__MAX,
};

struct reg_error {
        enum reg_error_kind kind;
        int error; /* negative errno */
        char message[512];
};

/* Fills err and returns r (a negative errno), so callers can `return reg_error_set(...)`. */
int reg_error_set(struct reg_error *err, enum reg_error_kind kind, int r, const char *fmt, ...)
        _printf_(4, 5);
