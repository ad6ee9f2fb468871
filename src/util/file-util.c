/* SPDX-License-Identifier: Apache-2.0 */
#include "util/file-util.h"

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Read size when st_size says nothing (a pipe, a pseudo-file). */
#define READ_FILE_CHUNK 4096

/* The buffer being filled: len bytes in p, cap allocated, one byte always kept for the NUL. */
struct contents {
        char *p;
        size_t len;
        size_t cap;
        bool secret;
};

static void contents_release(struct contents *c)
{
        if (c->p && c->secret)
                explicit_bzero(c->p, c->cap);
        free(c->p);
        c->p = NULL;
        c->len = c->cap = 0;
}

/* Moves to a buffer of cap bytes; malloc and copy (not realloc) so that a secret is wiped. */
static int contents_resize(struct contents *c, size_t cap)
{
        char *p = malloc(cap);

        if (!p)
                return -ENOMEM;
        if (c->len > 0)
                memcpy(p, c->p, c->len);
        if (c->p && c->secret)
                explicit_bzero(c->p, c->cap);
        free(c->p);
        c->p = p;
        c->cap = cap;
        return 0;
}

/*
 * The first allocation: room for the whole file and the read that sees its end when st_size is
 * known, one chunk otherwise; never more than the max + 1 bytes that prove a file too big, plus
 * the NUL.
 */
static size_t initial_cap(const struct stat *st, size_t max)
{
        size_t hint = READ_FILE_CHUNK;

        if (S_ISREG(st->st_mode) && st->st_size > 0 && (uintmax_t)st->st_size < (uintmax_t)max)
                hint = (size_t)st->st_size + 2;
        return MIN(hint, max + 2);
}

/* Reads fd to its end into c; -EFBIG as soon as more than max bytes arrived. */
static int read_all(int fd, size_t max, struct contents *c)
{
        for (;;) {
                ssize_t n;
                int r;

                if (c->len + 1 == c->cap) {
                        /* len <= max here, so cap <= max + 1 and the buffer can still grow. */
                        r = contents_resize(c, MIN(c->cap * 2, max + 2));
                        if (r < 0)
                                return r;
                }
                n = read(fd, c->p + c->len, c->cap - 1 - c->len);
                if (n < 0) {
                        if (errno == EINTR)
                                continue;
                        return negative_errno();
                }
                if (n == 0)
                        return 0;
                c->len += (size_t)n;
                if (c->len > max)
                        return -EFBIG;
        }
}

/* Opens path; with READ_FILE_REGULAR without blocking (read_fd_bounded() checks the type). */
static int open_checked(const char *path, unsigned flags)
{
        int oflags = O_RDONLY | O_CLOEXEC | O_NOCTTY;
        int fd;

        if (flags & READ_FILE_REGULAR)
                oflags |= O_NONBLOCK; /* a FIFO would wait for a writer in open() */
        /* O_NONBLOCK stays: it means nothing to a regular file's read() (open(2)). */
        fd = open(path, oflags);
        return fd < 0 ? negative_errno() : fd;
}

int read_fd_bounded(int fd, size_t max, unsigned flags, char **ret, size_t *ret_len,
                    struct stat *ret_st)
{
        struct contents c CLEANUP(contents_release) = { .secret = flags & READ_FILE_SECRET };
        struct stat st;
        int r;

        if (fd < 0 || !ret || max > SIZE_MAX / 2)
                return -EINVAL;
        if (fstat(fd, &st) < 0)
                return negative_errno();
        if ((flags & READ_FILE_REGULAR) && !S_ISREG(st.st_mode))
                return -EINVAL;
        r = contents_resize(&c, initial_cap(&st, max));
        if (r < 0)
                return r;
        r = read_all(fd, max, &c);
        if (r < 0)
                return r;
        if ((flags & READ_FILE_REFUSE_NUL) && memchr(c.p, '\0', c.len))
                return -EBADMSG;
        c.p[c.len] = '\0';
        if (ret_len)
                *ret_len = c.len;
        if (ret_st)
                *ret_st = st;
        *ret = TAKE_PTR(c.p);
        return 0;
}

int read_file_bounded(const char *path, size_t max, unsigned flags, char **ret, size_t *ret_len,
                      struct stat *ret_st)
{
        AUTOCLOSE int fd = -EBADF;

        if (!path || !ret || max > SIZE_MAX / 2)
                return -EINVAL;
        fd = open_checked(path, flags);
        if (fd < 0)
                return fd;
        return read_fd_bounded(fd, max, flags, ret, ret_len, ret_st);
}

static int remove_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
        (void)st;
        (void)ftw;
        if ((flag == FTW_DP ? rmdir(path) : unlink(path)) < 0 && errno != ENOENT)
                return -1;
        return 0;
}

static int remove_inside(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
        return ftw->level == 0 ? 0 : remove_one(path, st, flag, ftw);
}

int remove_tree(const char *path, bool keep_top)
{
        int (*fn)(const char *, const struct stat *, int, struct FTW *) = keep_top ? remove_inside
                                                                                   : remove_one;

        /* glibc's nftw() is thread-safe without FTW_CHDIR (it never changes the cwd) */
        if (nftw(path, fn, 16, FTW_DEPTH | FTW_PHYS) < 0 && /* NOLINT(concurrency-mt-unsafe) */
            errno != ENOENT)
                return negative_errno();
        return 0;
}

int path_resolve(const char *dir, const char *path, char **ret)
{
        char *p;

        if (path[0] == '/' || !dir)
                p = strdup(path);
        else if (asprintf(&p, "%s/%s", dir, path) < 0)
                p = NULL;
        if (!p)
                return -ENOMEM;
        *ret = p;
        return 0;
}
