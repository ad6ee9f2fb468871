/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

/*
 * The one error-detail type (issue 28): what went wrong (kind), the negative errno, the message
 * the user sees, and where: the field, the file and line, or the HTTP status it came with. Pure
 * code fills it (the YAML reader, the JSON dispatch tables, the registry's codec); the edges turn
 * it into an answer (http/errors for the REST servers) or a log line.
 *
 * Every setter accepts e == NULL (the caller wants no detail) and returns r, so that callers can
 * write `return error_detail_set(e, ERROR_INVALID, -EINVAL, "...")`.
 */

#include <stdarg.h>
#include <stddef.h>

#include "util/macro.h"

enum error_kind {
        ERROR_INTERNAL,      /* a bug, OOM or a failed call below: 500 */
        ERROR_INVALID,       /* malformed input (parameter, body, file): 400 */
        ERROR_UNPROCESSABLE, /* a required field is missing or zero: 422 */
        ERROR_NOT_FOUND,     /* 404 */
        ERROR_CONFLICT,      /* uniqueness: 409 */
        ERROR_UNAVAILABLE,   /* the service below is down or busy, retry: 503 */
        ERROR__MAX,
};

struct error_detail {
        enum error_kind kind;
        int error;         /* negative errno; 0 when unset */
        int status;        /* the HTTP status the error came with (a client's answer); 0: none */
        unsigned line;     /* 1-based line in file; 0 when not tied to a line */
        unsigned column;   /* 1-based column of a syntax error; 0: none (not in the format) */
        char file[512];    /* the input's name ("" for none): a file, "kubeconfig" ... */
        char field[128];   /* the offending field ("" for the value itself) */
        char message[512]; /* human-readable reason */
};

/* Sets kind, error and the formatted message (file, line, field and status are kept). */
int error_detail_set(struct error_detail *e, enum error_kind kind, int r, const char *fmt, ...)
        _printf_(4, 5);
/* As error_detail_set(), naming field. */
int error_detail_set_field(struct error_detail *e, enum error_kind kind, int r, const char *field,
                           const char *fmt, ...) _printf_(5, 6);
/* The va_list form of both: field NULL keeps e's field. */
int error_detail_setv(struct error_detail *e, enum error_kind kind, int r, const char *field,
                      const char *fmt, va_list ap) _printf_(5, 0);
/* An error in an input file: kind ERROR_INVALID, error r, file (NULL: ""), line (0: none),
 * no column. */
int error_detail_set_at(struct error_detail *e, int r, const char *file, unsigned line,
                        const char *fmt, ...) _printf_(5, 6);

/* Formats "file:line: message", "file: message" or "message" into buf of size n; returns buf. */
const char *error_detail_format(const struct error_detail *e, char *buf, size_t n);
