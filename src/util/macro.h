/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

/*
 * Basic macros used everywhere: cleanup attributes, ownership transfer, array sizes and the
 * compiler hints the house style asks for. Included (directly or through other util headers)
 * by every source file; banned.h comes last so that banned functions are compile errors.
 */

#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <unistd.h>

#define _warn_unused_result_ __attribute__((__warn_unused_result__))
#define _printf_(a, b)       __attribute__((__format__(printf, a, b)))
#define _noreturn_           __attribute__((__noreturn__))
#define _unused_             __attribute__((__unused__))
#define _likely_(x)          (__builtin_expect(!!(x), 1))
#define _unlikely_(x)        (__builtin_expect(!!(x), 0))

#define ELEMENTSOF(x) (sizeof(x) / sizeof((x)[0]))

#define CLEANUP(f) __attribute__((__cleanup__(f)))
#define AUTOFREE   CLEANUP(freep)
#define AUTOCLOSE  CLEANUP(closep)

/* Moves an owned pointer out of a variable, leaving NULL behind. */
#define TAKE_PTR(p)                         \
        __extension__({                     \
                __typeof__(p) *_pp_ = &(p); \
                __typeof__(p) _v_ = *_pp_;  \
                *_pp_ = NULL;               \
                _v_;                        \
        })

/* Moves an owned file descriptor out of a variable, leaving -EBADF behind. */
#define TAKE_FD(fd)                 \
        __extension__({             \
                int *_pfd_ = &(fd); \
                int _v_ = *_pfd_;   \
                *_pfd_ = -EBADF;    \
                _v_;                \
        })

/* Defines name##p(type *p), a cleanup function that calls func(*p) when *p is set. */
#define DEFINE_CLEANUP_FUNC(type, func)                                              \
        static inline void func##p(type *p) /* NOLINT(bugprone-macro-parentheses) */ \
        {                                                                            \
                if (*p)                                                              \
                        (void)func(*p);                                              \
        }

static inline void freep(void *p)
{
        free(*(void **)p);
}

static inline void closep(int *fd)
{
        if (*fd >= 0)
                (void)close(*fd);
}

/* Returns -errno of the last libc failure, never 0 (guards against a libc that forgot errno). */
static inline int negative_errno(void)
{
        int e = errno; /* read once: errno is a call, and the analyzer may not assume it stable */

        return e > 0 ? -e : -EIO;
}

#define MIN(a, b) ((a) < (b) ? (a) : (b))
#define MAX(a, b) ((a) > (b) ? (a) : (b))

#define streq(a, b)     (strcmp((a), (b)) == 0)
#define strneq(a, b, n) (strncmp((a), (b), (n)) == 0)

#include "util/banned.h"
