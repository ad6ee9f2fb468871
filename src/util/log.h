/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

/*
 * Structured logging. One line per record, JSON by default (zap's production encoder, which
 * controller-runtime managers emit): {"level","ts","msg", then the optional fields "controller",
 * "object", "reconcileID", "error"}. The level and format are the one piece of global mutable
 * state the house style allows. util/, json/, kube/ (except the runner) and store/ never log
 * above debug: they return errors and let the caller log once.
 *
 * Thread-safe: each record is formatted into a private buffer and written with one write(2).
 */

#include <stdarg.h>
#include <stdbool.h>

#include "util/macro.h"

enum log_level {
        LOG_LEVEL_DEBUG = 0,
        LOG_LEVEL_INFO = 1,
        LOG_LEVEL_WARN = 2,
        LOG_LEVEL_ERROR = 3,
        LOG_LEVEL__MAX,
        LOG_LEVEL__INVALID = -EINVAL,
};

enum log_format {
        LOG_FORMAT_JSON,
        LOG_FORMAT_TEXT,
};

/* Optional structured fields of one record; every member is borrowed and may be NULL. */
struct log_fields {
        const char *controller;
        const char *object;
        const char *reconcile_id;
};

void log_set_max_level(enum log_level level);
enum log_level log_get_max_level(void);
void log_set_format(enum log_format format);
/* Sends records to fd instead of stderr (tests). */
void log_set_fd(int fd);
enum log_level log_level_from_string(const char *s);
const char *log_level_to_string(enum log_level level);

/*
 * Emits a record when level is enabled. err, when non-zero, is a (negative or positive) errno
 * rendered into the "error" field; %m in fmt expands to it too. Returns -abs(err) so that callers
 * can log and return in one statement.
 */
int log_emit(enum log_level level, int err, const struct log_fields *fields, const char *fmt, ...)
        _printf_(4, 5);
int log_emitv(enum log_level level, int err, const struct log_fields *fields, const char *fmt,
              va_list ap) _printf_(4, 0);

#define log_debug(...)          log_emit(LOG_LEVEL_DEBUG, 0, NULL, __VA_ARGS__)
#define log_info(...)           log_emit(LOG_LEVEL_INFO, 0, NULL, __VA_ARGS__)
#define log_warn(...)           log_emit(LOG_LEVEL_WARN, 0, NULL, __VA_ARGS__)
#define log_error(...)          log_emit(LOG_LEVEL_ERROR, 0, NULL, __VA_ARGS__)
#define log_debug_errno(r, ...) log_emit(LOG_LEVEL_DEBUG, (r), NULL, __VA_ARGS__)
#define log_info_errno(r, ...)  log_emit(LOG_LEVEL_INFO, (r), NULL, __VA_ARGS__)
#define log_warn_errno(r, ...)  log_emit(LOG_LEVEL_WARN, (r), NULL, __VA_ARGS__)
#define log_error_errno(r, ...) log_emit(LOG_LEVEL_ERROR, (r), NULL, __VA_ARGS__)

/* Returns a static description of a negative or positive errno (thread-safe). */
const char *errno_to_string(int err);
