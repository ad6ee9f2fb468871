/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

/*
 * Reading a whole small file (a credential, a kubeconfig, a TLS certificate or key, a secret)
 * into memory, with a size limit the caller must choose. The one reader of the tree: the kube
 * configuration loader, the HTTP server's TLS files and the console's secret files use it.
 *
 * Behaviour:
 *  - the file is opened O_RDONLY | O_CLOEXEC | O_NOCTTY and read to its end (EINTR is retried);
 *    the limit is enforced on what is read, not on st_size, so a file that grows while it is
 *    read, or a pseudo-file whose st_size is 0, is still bounded;
 *  - with READ_FILE_REGULAR the file is opened O_NONBLOCK and checked on the open descriptor
 *    (fstat, no race with a rename between a stat and the open), so a FIFO or a device fails
 *    at once with -EINVAL instead of blocking in open(); without it a directory fails with the
 *    read's -EISDIR and a FIFO is read as any other file (open waits for a writer);
 *  - READ_FILE_SECRET wipes (explicit_bzero) every copy of the contents the reader lets go of:
 *    the buffer it outgrows, the buffer of a failed read. What it returns is the caller's to
 *    wipe.
 *
 * Errors (negative errno; nothing is written to the outputs on failure):
 *  -ENOENT, -EACCES, -EISDIR, ...  from open(), fstat() or read(), unchanged;
 *  -EINVAL   READ_FILE_REGULAR and the path is not a regular file; or max is over SIZE_MAX / 2;
 *  -EFBIG    the file holds more than max bytes;
 *  -EBADMSG  READ_FILE_REFUSE_NUL and the contents hold a NUL byte;
 *  -ENOMEM.
 * Callers that documented other codes before this module (the kube configuration's -E2BIG for
 * an oversized file) translate at their call site.
 */

#include <stdbool.h>
#include <stddef.h>
#include <sys/stat.h>

#include "util/macro.h"

enum {
        /* -EBADMSG when the contents hold a NUL byte (the result is then a plain C string). */
        READ_FILE_REFUSE_NUL = 1u << 0,
        /* -EINVAL unless the path names a regular file (symbolic links are followed). */
        READ_FILE_REGULAR = 1u << 1,
        /* Wipe the copies the reader discards (growth, failure); for keys and passwords. */
        READ_FILE_SECRET = 1u << 2,
};

/*
 * Reads the file at @path, of at most @max bytes, into *ret: an owned buffer of *ret_len bytes
 * followed by a NUL (an empty file gives "" and 0; free() it, after explicit_bzero() for a
 * secret). @ret_len may be NULL when the contents are a string (READ_FILE_REFUSE_NUL). When
 * @ret_st is set, it receives the fstat() of the open file: its identity (st_dev, st_ino) and
 * times are those of the bytes returned, even when the path is replaced meanwhile.
 * @flags: READ_FILE_* above.
 */
_warn_unused_result_ int read_file_bounded(const char *path, size_t max, unsigned flags, char **ret,
                                           size_t *ret_len, struct stat *ret_st);
/*
 * The same for a descriptor the caller opened (and still owns; it is not closed), read from its
 * current offset: e.g. a file opened with openat2(RESOLVE_BENEATH). With READ_FILE_REGULAR the
 * descriptor must be a regular file (-EINVAL); the caller chooses O_NONBLOCK at its open().
 * @ret_st receives its fstat(). Same errors as read_file_bounded(); -EINVAL also for fd < 0.
 */
_warn_unused_result_ int read_fd_bounded(int fd, size_t max, unsigned flags, char **ret,
                                         size_t *ret_len, struct stat *ret_st);

/*
 * Removes the tree at @path (nothing followed through symbolic links), or with @keep_top only
 * what is inside it. A path that does not exist is removed already (0). Thread-safe (nftw()
 * without FTW_CHDIR never changes the working directory). 0 or a negative errno.
 */
int remove_tree(const char *path, bool keep_top);

/*
 * A path named in a configuration file, made usable: path itself when it is absolute or dir is
 * NULL, else dir/path (dir: the file's directory). An owned string in *ret; -ENOMEM.
 */
_warn_unused_result_ int path_resolve(const char *dir, const char *path, char **ret);
