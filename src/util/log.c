/* SPDX-License-Identifier: Apache-2.0 */
#include "util/log.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/uio.h>
#include <time.h>

#include "util/buf.h"

/* The log configuration is the one piece of process-global mutable state (house style 5.6). */
static _Atomic int log_max_level = LOG_LEVEL_INFO;
static _Atomic int log_format_setting = LOG_FORMAT_JSON;
static _Atomic int log_fd = STDERR_FILENO;

/* A record longer than this is truncated; it bounds the memory one log call can take. */
#define LOG_RECORD_MAX ((size_t)64 * 1024)

static const char *const level_names[LOG_LEVEL__MAX] = {
        [LOG_LEVEL_DEBUG] = "debug",
        [LOG_LEVEL_INFO] = "info",
        [LOG_LEVEL_WARN] = "warn",
        [LOG_LEVEL_ERROR] = "error",
};

void log_set_max_level(enum log_level level)
{
        if (level >= 0 && level < LOG_LEVEL__MAX)
                atomic_store(&log_max_level, (int)level);
}

enum log_level log_get_max_level(void)
{
        return (enum log_level)atomic_load(&log_max_level);
}

void log_set_format(enum log_format format)
{
        atomic_store(&log_format_setting, (int)format);
}

void log_set_fd(int fd)
{
        atomic_store(&log_fd, fd);
}

enum log_level log_level_from_string(const char *s)
{
        if (!s)
                return LOG_LEVEL__INVALID;
        for (size_t i = 0; i < ELEMENTSOF(level_names); i++)
                if (streq(level_names[i], s))
                        return (enum log_level)i;
        if (streq(s, "warning"))
                return LOG_LEVEL_WARN;
        return LOG_LEVEL__INVALID;
}

const char *log_level_to_string(enum log_level level)
{
        if (level < 0 || level >= LOG_LEVEL__MAX)
                return NULL;
        return level_names[level];
}

const char *errno_to_string(int err)
{
        if (err < 0)
                err = -err;
        /* strerrorname_np and strerrordesc_np are thread-safe and return static strings. */
        const char *s = strerrordesc_np(err);
        return s ? s : "Unknown error";
}

static int append_field(struct buf *b, bool json, const char *key, const char *value)
{
        int r;

        if (!value)
                return 0;
        if (!json)
                return buf_printf(b, " %s=%s", key, value);
        r = buf_printf(b, ",\"%s\":", key);
        if (r < 0)
                return r;
        return buf_put_json_string(b, value, strlen(value));
}

int log_emitv(enum log_level level, int err, const struct log_fields *fields, const char *fmt,
              va_list ap)
{
        struct buf msg = BUF_INIT(LOG_RECORD_MAX), line = BUF_INIT(LOG_RECORD_MAX + 1024);
        bool json = atomic_load(&log_format_setting) == LOG_FORMAT_JSON;
        struct timespec ts;
        struct tm tm;
        char tsbuf[64];
        int saved_errno = errno;

        if ((int)level < atomic_load(&log_max_level))
                return err > 0 ? -err : err;

        if (err != 0)
                errno = err < 0 ? -err : err;
        (void)!buf_vprintf(&msg, fmt, ap); /* truncated records are still emitted */
        errno = saved_errno;

        (void)clock_gettime(CLOCK_REALTIME, &ts);
        (void)gmtime_r(&ts.tv_sec, &tm);
        (void)snprintf(tsbuf, sizeof(tsbuf), "%04d-%02d-%02dT%02d:%02d:%02d.%03ldZ",
                       tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min,
                       tm.tm_sec, ts.tv_nsec / 1000000);

        if (json) {
                (void)!buf_printf(&line,
                                  "{\"level\":\"%s\",\"ts\":\"%s\",\"msg\":", level_names[level],
                                  tsbuf);
                (void)!buf_put_json_string(&line, buf_str(&msg), strlen(buf_str(&msg)));
        } else
                (void)!buf_printf(&line, "%s %-5s %s", tsbuf, level_names[level], buf_str(&msg));
        if (fields) {
                (void)!append_field(&line, json, "controller", fields->controller);
                (void)!append_field(&line, json, "object", fields->object);
                (void)!append_field(&line, json, "reconcileID", fields->reconcile_id);
        }
        if (err != 0)
                (void)!append_field(&line, json, "error", errno_to_string(err));
        if (json)
                (void)!buf_putc(&line, '}');
        (void)!buf_putc(&line, '\n');

        (void)!write(atomic_load(&log_fd), buf_str(&line), line.len);
        buf_release(&msg);
        buf_release(&line);
        return err > 0 ? -err : err;
}

int log_emit(enum log_level level, int err, const struct log_fields *fields, const char *fmt, ...)
{
        va_list ap;
        int r;

        va_start(ap, fmt);
        r = log_emitv(level, err, fields, fmt, ap);
        va_end(ap);
        return r;
}
